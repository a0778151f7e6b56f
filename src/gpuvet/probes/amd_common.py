"""Probes: Helpers shared by the AMD probe modules (ANSI clean-up, gfx target names, time-out, library dirs).

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import re

from .system import System

CMD_TIMEOUT = 2.5


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


_GFX_NAME = re.compile(r"\bgfx([0-9a-f]{3,6})\b", re.I)


# ---------------------------------------------------------------------------------------------------
# small helpers
def _clean(text: str) -> str:
    return _ANSI.sub("", text or "").replace("\r", "")


def gfx_from_target_version(value: int | str | None) -> str | None:
    """KFD ``gfx_target_version`` (major*10000 + minor*100 + stepping, e.g. 90010) -> 'gfx90a'.

    The minor version and stepping are written as hexadecimal digits in the target name:
    90010 -> gfx90a, 90402 -> gfx942, 100300 -> gfx1030, 110001 -> gfx1101.  0 (a CPU node) -> None.
    """
    try:
        v = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    if v <= 0:
        return None
    major, minor, step = v // 10000, (v // 100) % 100, v % 100
    if minor > 15 or step > 15 or major <= 0:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def _arch(text: str | None) -> str | None:
    if not text:
        return None
    m = _GFX_NAME.search(text)
    return ("gfx" + m.group(1).lower()) if m else None


def _fmt_bytes_mib(n: int | None) -> int | None:
    return None if n is None else int(n // (1024 * 1024))


LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/aarch64-linux-gnu")


def _rocm_trees(system: System) -> list[str]:
    trees = [p for p in system.glob("/opt/rocm-*") if re.search(r"/opt/rocm-\d", p)]
    if system.exists("/opt/rocm"):
        trees.append("/opt/rocm")
    rp = system.environ.get("ROCM_PATH")
    if rp and rp.rstrip("/") not in trees and system.exists(rp):
        trees.append(rp.rstrip("/"))
    return trees


def _find_tool(system: System, name: str) -> str | None:
    exe = system.which(name)
    if exe:
        return exe
    for tree in _rocm_trees(system):
        if system.exists(f"{tree}/bin/{name}"):
            return f"{tree}/bin/{name}"
    return None
