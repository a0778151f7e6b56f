"""GPU architecture helpers shared by the rule modules (pure)."""
from __future__ import annotations

import re
from typing import Any

from gpuvet.model import Row
from gpuvet.model.arch import normalise_arch

__all__ = ["gpu_arch", "normalise_arch"]


def _norm_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


def gpu_arch(r: Row, kb: Any = None) -> str | None:
    """The architecture of a gpu_devices row: its own ``arch`` or ``compute_capability`` column,
    else the knowledge base's ``gpu_models`` table looked up by the printed name."""
    arch = normalise_arch(r.get("arch")) or normalise_arch(r.get("compute_capability"))
    if arch:
        return arch
    name = r.get("name")
    if not name or kb is None:
        return None
    arch = normalise_arch(name)  # "AMD Radeon RX 7900 XTX (gfx1100)"
    if arch:
        return arch
    wanted = _norm_name(name)
    best: tuple[int, str] | None = None
    for entry in kb.table("gpu_models"):
        for alias in entry.get("names", []):
            a = _norm_name(alias)
            if a and (wanted == a or wanted.endswith(" " + a) or wanted.startswith(a + " ")
                      or f" {a} " in f" {wanted} "):
                if best is None or len(a) > best[0]:
                    best = (len(a), entry.get("arch"))
    return best[1] if best else None
