"""Alembic environment: always handed a live connection by ``gpuvet.store.migrate``."""
from __future__ import annotations

from alembic import context

from gpuvet.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - gpuvet never runs alembic without a connection
    raise RuntimeError("gpuvet's migrations run only through gpuvet.store")
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
