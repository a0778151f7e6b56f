"""Initial schema: snapshots and runs (validation / bench / rollback-verify runs tied to a snapshot).

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uid", sa.String(36), nullable=False, unique=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("label", sa.String(200), nullable=True),
        sa.Column("host", sa.String(255), nullable=False, server_default=""),
        sa.Column("python", sa.String(1000), nullable=False, server_default=""),
        sa.Column("score", sa.Integer, nullable=True),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("digest", sa.String(80), nullable=False),
        sa.Column("good", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("good_at", sa.String(32), nullable=True),
        sa.Column("summary", sa.Text, nullable=False, server_default="{}"),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index("ix_snapshots_created", "snapshots", ["created_at"])
    op.create_index("ix_snapshots_label", "snapshots", ["label"])
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uid", sa.String(36), nullable=False, unique=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("snapshots.id", ondelete="SET NULL"), nullable=True),
        sa.Column("started_at", sa.String(32), nullable=False),
        sa.Column("finished_at", sa.String(32), nullable=True),
        sa.Column("status", sa.String(20), nullable=False, server_default="ok"),
        sa.Column("level", sa.String(40), nullable=True),
        sa.Column("host", sa.String(255), nullable=False, server_default=""),
        sa.Column("summary", sa.Text, nullable=False, server_default="{}"),
        sa.Column("results", sa.Text, nullable=False, server_default="[]"),
        sa.Column("meta", sa.Text, nullable=False, server_default="{}"),
    )
    op.create_index("ix_runs_kind_snapshot", "runs", ["kind", "snapshot_id"])
    op.create_index("ix_runs_started", "runs", ["started_at"])


def downgrade() -> None:
    op.drop_table("runs")
    op.drop_table("snapshots")
