"""Probes: MIOpen: its version (soname, version.h) and its databases and caches.

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from gpuvet.model import Row, row

from .amd_common import _rocm_trees
from .base import Probe
from .system import System

_MIOPENLIB = re.compile(r"^libMIOpen\.so\.(\d+)\.(\d+)\.(\d+)$")


def miopen_version_from_soname(name: str) -> str | None:
    """libMIOpen.so.1.0.60100 -> 'rocm-6.1.0'.  AMD's ROCm packages name the file
    1.0.<ROCm build number> (/opt/rocm-6.2.1/lib/libMIOpen.so.1.0.60201, /opt/rocm-6.4.4/lib/
    libMIOpen.so.1.0.60404), so the last field is the ROCm release it shipped with, not MIOpen's
    own version (3.1.0 in ROCm 6.1); that one comes from include/miopen/version.h."""
    m = _MIOPENLIB.match(name)
    if not m:
        return None
    build = m.group(3)
    if len(build) == 5:
        n = int(build)
        return f"rocm-{n // 10000}.{(n // 100) % 100}.{n % 100}"
    return ".".join(m.groups())


def parse_miopen_version_h(text: str) -> str | None:
    vals = {}
    for k in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"#define\s+MIOPEN_VERSION_{k}\s+(\d+)", text or "")
        if not m:
            return None
        vals[k] = m.group(1)
    return f"{vals['MAJOR']}.{vals['MINOR']}.{vals['PATCH']}"


def _writable(system: System, path: str) -> bool:
    """Writable if it exists and is writable, or can be created (nearest existing parent writable)."""
    p = path.rstrip("/") or "/"
    if system.exists(p):
        return system.access(p, os.W_OK)
    parent = os.path.dirname(p)
    while parent and parent != "/" and not system.exists(parent):
        parent = os.path.dirname(parent)
    return system.access(parent or "/", os.W_OK)


def _count(system: System, path: str, limit: int = 1000) -> int | None:
    if not system.is_dir(path):
        return None
    return min(len(system.listdir(path)), limit)


def probe_miopen_caches(system: System) -> Iterable[Row]:
    env = system.environ
    home = env.get("HOME") or "~"
    rows: list[Row] = []
    seen: set[str] = set()
    for tree in _rocm_trees(system):
        db = f"{tree}/share/miopen/db"
        real = system.realpath(db)
        if real in seen:
            continue
        has_miopen = system.exists(f"{tree}/share/miopen") or any(
            _MIOPENLIB.match(f) for f in system.listdir(f"{tree}/lib"))
        if not has_miopen:
            continue
        seen.add(real)
        rows.append(row("kernel_caches", db, name="miopen-system-db", path=db, exists=system.is_dir(db),
                        writable=False, files=_count(system, db)))
    user_db = env.get("MIOPEN_USER_DB_PATH") or f"{home}/.config/miopen/"
    cache = env.get("MIOPEN_CUSTOM_CACHE_DIR") or f"{home}/.cache/miopen/"
    for name, path, var in (("miopen-user-db", user_db, "MIOPEN_USER_DB_PATH"),
                            ("miopen-cache", cache, "MIOPEN_CUSTOM_CACHE_DIR")):
        src = f"${var}" if env.get(var) else f"{path} (default)"
        rows.append(row("kernel_caches", src, name=name, path=path, exists=system.is_dir(path),
                        writable=_writable(system, path), files=_count(system, path)))
    return rows


PROBES: list[Probe] = [
    Probe("amd-miopen-caches", ("kernel_caches",), probe_miopen_caches,
          "MIOpen system db, user db (MIOPEN_USER_DB_PATH), cache (MIOPEN_CUSTOM_CACHE_DIR)"),
]
