"""One explicit, sorted registry of every check (nothing registers itself on import).

Rules are grouped on one axis: the stack layer their code prefix names, one module per prefix
(``drv``, ``rtm``, ``bld``, ``pkg``, ``ext``, ``lib``, ``env``, ``ctr``; ``hw``, ``log``, ``val`` when
they have checks).  A rule's function name is its kebab-case name in snake case.  Helpers shared by
several layers live in ``common`` and ``gpu``.
"""
from __future__ import annotations

import functools

from gpuvet.model.errors import GpuvetError
from gpuvet.model.facts import TABLES
from gpuvet.model.findings import ExitCode
from gpuvet.model.taxonomy import CAUSES, COMPONENTS

from .base import CODE_RE, DOC_HEADINGS, NAME_RE, Check

# Codes that were renamed or merged: old code -> the code that now covers it (ruff's rule_redirects).
# A code is never reused; `gpuvet rule OLD`, --select/--ignore and acknowledgements follow the redirect.
REDIRECTS: dict[str, str] = {}


class RuleError(GpuvetError):
    """A rule declaration that breaks the registry's contract (a gpuvet bug, found when it is loaded)."""

    def __init__(self, message: str):
        super().__init__(message, ExitCode.INTERNAL)


def validate(chk: Check) -> list[str]:
    """What is wrong with one rule's declaration (empty: nothing): code and name patterns, cause and
    component in the taxonomy, tables that exist, every docstring heading present and filled, the function
    named after the rule and living in the module of its code prefix."""
    problems = []
    if not CODE_RE.match(chk.code):
        problems.append(f"code {chk.code!r} is not PREFIX + 3 digits")
    if not NAME_RE.match(chk.name):
        problems.append(f"name {chk.name!r} is not kebab-case")
    if chk.cause not in CAUSES:
        problems.append(f"cause {chk.cause!r} is not in the taxonomy")
    if chk.component not in COMPONENTS:
        problems.append(f"component {chk.component!r} is not in the taxonomy")
    for table in chk.tables:
        if table not in TABLES:
            problems.append(f"table {table!r} is not a declared fact table")
    sections = chk.sections()
    for head in DOC_HEADINGS:
        if not sections.get(head, "").strip():
            problems.append(f"docstring heading {head!r} missing or empty")
    func = getattr(chk.func, "__name__", "")
    if func != chk.name.replace("-", "_"):
        problems.append(f"function {func!r} is not named after the rule ({chk.name.replace('-', '_')})")
    module = getattr(chk.func, "__module__", "").rpartition(".")[2]
    if module != chk.code[:-3].lower():
        problems.append(f"lives in checks/{module}.py, not checks/{chk.code[:-3].lower()}.py")
    if chk.code in REDIRECTS:
        problems.append(f"code {chk.code} was redirected to {REDIRECTS[chk.code]}: codes are never reused")
    return problems


@functools.lru_cache(maxsize=1)
def _all() -> tuple[Check, ...]:
    from . import bld, ctr, drv, env, ext, lib, pkg, rtm

    checks: list[Check] = []
    for mod in (drv, rtm, bld, pkg, ext, lib, env, ctr):
        checks.extend(mod.CHECKS)
    codes = [c.code for c in checks]
    dupes = {c for c in codes if codes.count(c) > 1}
    if dupes:
        raise RuleError(f"duplicate check codes: {sorted(dupes)}")
    names = [c.name for c in checks]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise RuleError(f"duplicate check names: {sorted(dupes)}")
    bad = [f"{c.code}: {p}" for c in checks for p in validate(c)]
    if bad:
        raise RuleError("invalid rule declarations: " + "; ".join(bad))
    return tuple(sorted(checks, key=lambda c: c.code))


def all_checks() -> list[Check]:
    return list(_all())


def resolve(code: str) -> str:
    """The code a (possibly renamed) code stands for now."""
    code = code.upper()
    seen = set()
    while code in REDIRECTS and code not in seen:
        seen.add(code)
        code = REDIRECTS[code]
    return code


def get(code: str) -> Check | None:
    """A check by code (following redirects) or by name."""
    want = resolve(code)
    for c in _all():
        if c.code == want or c.name == code.lower():
            return c
    return None
