"""The history store's tables (SQLAlchemy Core), shared by the migrations' target and the queries.

Migrations under ``migrations/versions`` are the truth for what a database holds; this module
mirrors the newest revision (``HEAD``) so queries can be written against it.
"""
from __future__ import annotations

import sqlalchemy as sa

from . import HEAD  # noqa: F401  - the newest migration revision (declared without SQLAlchemy in __init__)

metadata = sa.MetaData()

snapshots = sa.Table(
    "snapshots", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uid", sa.String(36), nullable=False, unique=True),  # the document's own id (uuid4)
    sa.Column("created_at", sa.String(32), nullable=False),  # ISO 8601 UTC, sortable as text
    sa.Column("label", sa.String(200), nullable=True),
    sa.Column("host", sa.String(255), nullable=False, server_default=""),
    sa.Column("python", sa.String(1000), nullable=False, server_default=""),  # interpreter examined
    sa.Column("score", sa.Integer, nullable=True),
    sa.Column("schema_version", sa.Integer, nullable=False),
    sa.Column("digest", sa.String(80), nullable=False),  # sha256 of the document's canonical body
    sa.Column("good", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("good_at", sa.String(32), nullable=True),  # when it was marked good (latest mark wins)
    sa.Column("summary", sa.Text, nullable=False, server_default="{}"),  # JSON: key versions for `history`
    sa.Column("doc", sa.Text, nullable=False),  # the whole snapshot document (JSON, redacted)
)
sa.Index("ix_snapshots_created", snapshots.c.created_at)
sa.Index("ix_snapshots_label", snapshots.c.label)

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uid", sa.String(36), nullable=False, unique=True),
    sa.Column("kind", sa.String(40), nullable=False),  # validate | bench | rollback-verify | ...
    sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("snapshots.id", ondelete="SET NULL"), nullable=True),
    sa.Column("started_at", sa.String(32), nullable=False),
    sa.Column("finished_at", sa.String(32), nullable=True),
    sa.Column("status", sa.String(20), nullable=False, server_default="ok"),  # ok | failed | error | ...
    sa.Column("level", sa.String(40), nullable=True),  # e.g. quick | standard | full
    sa.Column("host", sa.String(255), nullable=False, server_default=""),
    sa.Column("summary", sa.Text, nullable=False, server_default="{}"),  # JSON object
    sa.Column("results", sa.Text, nullable=False, server_default="[]"),  # JSON: per-case results
    sa.Column("meta", sa.Text, nullable=False, server_default="{}"),  # JSON object
)
sa.Index("ix_runs_kind_snapshot", runs.c.kind, runs.c.snapshot_id)
sa.Index("ix_runs_started", runs.c.started_at)
