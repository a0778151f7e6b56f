"""GPU architecture names: pure helpers shared by probes, the KB, checks and logs (all import model).

One place decodes HSA_OVERRIDE_GFX_VERSION and normalises target names, so a probe, a check and the
knowledge base cannot disagree about what 'gfx90a', 'sm_90a' or '10.3.0' means."""
from __future__ import annotations

import re

_GFX = re.compile(r"\b(gfx[0-9a-f]{3,5})\b", re.I)
_SM = re.compile(r"\bsm_?(\d{2,3})([af]?)\b", re.I)
_OVERRIDE = re.compile(r"\s*(\d{1,2})\.(\d{1,2})\.(\d{1,2})\s*")


def gfx_from_override(value: str | None) -> str | None:
    """HSA_OVERRIDE_GFX_VERSION 'X.Y.Z' (decimal fields) -> 'gfxXyz' (Y and Z as hex digits), or None
    when malformed: '10.3.0' -> gfx1030, '9.0.10' -> gfx90a, '11.0.0' -> gfx1100."""
    if value is None:
        return None
    m = _OVERRIDE.fullmatch(str(value))
    if not m:
        return None
    major, minor, step = (int(g) for g in m.groups())
    if major == 0 or minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def normalise_arch(text: str | None) -> str | None:
    """'gfx90a:sramecc+:xnack-' -> 'gfx90a'; 'sm_90a' / 'sm90a' -> 'sm_90a'; '9.0' -> 'sm_90'; a name
    with a target inside ('AMD Radeon RX 7900 XTX (gfx1100)') -> that target; else None."""
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
