"""Checks: amd (placeholder, filled in by its owner)."""
from __future__ import annotations

CHECKS: list = []
