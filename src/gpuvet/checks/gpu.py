"""GPU architecture helpers shared by the rule modules (pure)."""
from __future__ import annotations

import re
from typing import Any

from gpuvet.model import Row

_GFX = re.compile(r"\b(gfx[0-9a-f]{3,5})\b", re.I)
_SM = re.compile(r"\bsm_?(\d{2,3})([af]?)\b", re.I)


def normalise_arch(text: str | None) -> str | None:
    """'gfx90a:sramecc+:xnack-' -> 'gfx90a'; 'sm_90a' -> 'sm_90a'; '9.0' -> 'sm_90'."""
    if not text:
        return None
    t = str(text).strip()
    m = _GFX.search(t)
    if m:
        return m.group(1).lower()
    m = _SM.search(t)
    if m:
        return f"sm_{m.group(1)}{m.group(2).lower()}"
    m = re.fullmatch(r"(\d+)\.(\d+)", t)
    if m:
        return f"sm_{m.group(1)}{m.group(2)}"
    return None


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
