"""Alembic migrations of the history store (run programmatically by ``gpuvet.store``)."""
