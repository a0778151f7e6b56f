"""Pasted text -> facts: split what users paste into bug threads into the tools' outputs and run
the same parsers a live probe uses. (placeholder)"""
from __future__ import annotations

from gpuvet.model import Facts


def parse_report(text: str, source: str = "<pasted>") -> Facts:
    raise ValueError(f"{source}: no recognisable tool output")
