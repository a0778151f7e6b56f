"""One explicit, sorted registry of every check (nothing registers itself on import).

Rules are grouped on one axis: the stack layer their code prefix names, one module per prefix
(``drv``, ``rtm``, ``bld``, ``pkg``, ``ext``, ``lib``, ``env``, ``ctr``; ``hw``, ``log``, ``val`` when
they have checks).  A rule's function name is its kebab-case name in snake case.  Helpers shared by
several layers live in ``common`` and ``gpu``.
"""
from __future__ import annotations

import functools

from .base import Check


@functools.lru_cache(maxsize=1)
def _all() -> tuple[Check, ...]:
    from . import bld, ctr, drv, env, ext, lib, pkg, rtm

    checks: list[Check] = []
    for mod in (drv, rtm, bld, pkg, ext, lib, env, ctr):
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
