"""One explicit, sorted registry of every check (nothing registers itself on import).

Modules group rules by the part of the stack whose facts they read: ``nvidia`` (driver, CUDA
runtime, nvcc), ``amd`` (amdgpu/ROCk, ROCm, HIP, hipcc, MIOpen), ``build`` (framework build, GPU
targets, loaded libraries), ``host`` (device access, environment, containers, packages) and
``compat`` (rules that reason with the knowledge base's release tables).
"""
from __future__ import annotations

import functools

from .base import Check


@functools.lru_cache(maxsize=1)
def _all() -> tuple[Check, ...]:
    from . import amd, build, compat, h10new, host, nvidia

    checks: list[Check] = []
    for mod in (amd, build, compat, h10new, host, nvidia):
        checks.extend(mod.CHECKS)
    codes = [c.code for c in checks]
    dupes = {c for c in codes if codes.count(c) > 1}
    if dupes:
        raise RuntimeError(f"duplicate check codes: {sorted(dupes)}")
    return tuple(sorted(checks, key=lambda c: c.code))


def all_checks() -> list[Check]:
    return list(_all())


def get(code: str) -> Check | None:
    for c in _all():
        if c.code == code.upper() or c.name == code.lower():
            return c
    return None
