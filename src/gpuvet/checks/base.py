"""How a check is declared, and what it yields.

A check is a pure function ``(ctx) -> Iterable[Result]`` wrapped in a ``Check`` declaration with a
permanent code, a kebab-case problem name, a default severity, the fact tables it needs, the cause and
component from the taxonomy, and a docstring with the fixed headings::

    What it does / Why is this bad? / Example / Fix / References

Yield ``Fail(...)`` for each problem found, ``Unknown(reason)`` when the facts cannot decide, ``Skip``
when the rule does not apply here; yielding nothing means the check passed.  The engine turns these
into ``Finding``s and applies user policy; a check never looks at policy or touches the machine.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import field
from typing import Any, Callable, Iterable, Sequence

from gpuvet.model import Applicability, Evidence, Facts, Fix, Row, Severity
from gpuvet.model.record import record

DOC_HEADINGS = ("What it does", "Why is this bad?", "Example", "Fix", "References")
CODE_RE = re.compile(r"^(DRV|RTM|BLD|PKG|EXT|LIB|ENV|CTR|HW|LOG|VAL)\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@record(frozen=True)
class Fail:
    """A check's verdict: the problem is present (title, why, evidence, fixes)."""

    title: str
    why: str = ""
    evidence: Sequence[Evidence] = ()
    fixes: Sequence[Fix] = ()
    severity: Severity | None = None  # override the check's default (e.g. a warning variant)


@record(frozen=True)
class Unknown:
    """A check's verdict: the facts it needs are missing, so it could not check."""

    reason: str
    evidence: Sequence[Evidence] = ()


@record(frozen=True)
class Skip:
    """A check's verdict: it does not apply to this stack."""

    reason: str


@record(frozen=True)
class Pass:
    """A check's verdict: checked, and nothing is wrong."""

    title: str = ""
    evidence: Sequence[Evidence] = ()


Result = Fail | Unknown | Skip | Pass


@record
class Context:
    """What a check reads: the facts, the knowledge base and the run's options."""

    facts: Facts
    kb: Any  # gpuvet.kb.KB
    options: dict[str, Any] = field(default_factory=dict)


@record(frozen=True)
class Check:
    """One declared check: its permanent code, name, severity, tables and documentation."""

    code: str
    name: str
    severity: Severity
    tables: tuple[str, ...]
    func: Callable[[Context], Iterable[Result]]
    cause: str
    component: str
    doc: str
    vendor: str = ""  # "amd" | "nvidia" for a rule about one vendor's stack; "" for any

    def sections(self) -> dict[str, str]:
        return parse_doc(self.doc)

    @property
    def summary(self) -> str:
        return " ".join(self.sections().get("What it does", "").split("\n\n")[0].split())


def check(*, code: str, name: str, severity: Severity | str, tables: Sequence[str], cause: str,
          component: str, vendor: str = "") -> Callable[[Callable[[Context], Iterable[Result]]], Check]:
    """Declare a check.  Registration is explicit (``checks.registry.ALL``), never on import.
    ``vendor``: the GPU vendor whose stack the rule is about (its unknowns are "not applicable" on a
    machine whose GPUs are all of the other vendor)."""
    if vendor not in ("", "amd", "nvidia"):
        raise ValueError(f"{code}: vendor must be '', 'amd' or 'nvidia', not {vendor!r}")

    def wrap(func: Callable[[Context], Iterable[Result]]) -> Check:
        sev = Severity.parse(severity) if isinstance(severity, str) else severity
        return Check(code, name, sev, tuple(tables), func, cause, component, inspect.getdoc(func) or "", vendor)

    return wrap


def parse_doc(doc: str) -> dict[str, str]:
    """Split a check docstring into its fixed headings (lines ending with ':' or '?' alone)."""
    out: dict[str, str] = {}
    current: str | None = None
    buf: list[str] = []
    for line in doc.splitlines():
        stripped = line.strip()
        head = stripped.rstrip(":")
        if head in DOC_HEADINGS and (stripped.endswith(":") or stripped == "Why is this bad?"):
            if current is not None:
                out[current] = "\n".join(buf).strip()
            current, buf = head, []
        elif current is not None:
            buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf).strip()
    return out


# -- small helpers used by the rule modules ----------------------------------------------------------
def ev(r: Row | None, text: str) -> Evidence:
    return Evidence(text, source=r.source if r is not None else "")


def fix(text: str, command: str | None = None, *, safe: bool = False, root: bool = False,
        reboot: bool = False) -> Fix:
    if reboot or (root and not safe):
        appl = Applicability.DISPLAY_ONLY if reboot else Applicability.UNSAFE
    else:
        appl = Applicability.SAFE if safe else Applicability.UNSAFE
    return Fix(text, appl, command, needs_root=root, needs_reboot=reboot)
