"""Probes: host (placeholder, filled in by its owner)."""
from __future__ import annotations

PROBES: list = []
