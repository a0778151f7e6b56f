"""The engine: facts + checks + KB + user policy -> Report (with the health score).

User policy (select / ignore, severity overrides, acknowledged findings, --fail-on) is applied here,
never inside a rule.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from gpuvet import __version__
from gpuvet.checks.base import Check, Context, Fail, Pass, Skip, Unknown
from gpuvet.model import (
    Deduction,
    Evidence,
    ExitCode,
    Facts,
    Finding,
    Outcome,
    Report,
    Severity,
)

REPORT_SCHEMA = "https://gpuvet.dev/schema/report/1"
REPORT_SCHEMA_VERSION = 1

# Points a failed finding costs, by severity; an unknown costs a little (could not check is never
# healthy) with a cap so a machine with no GPU tools is not scored 0 for what it lacks.
POINTS = {Severity.CRITICAL: 40, Severity.ERROR: 20, Severity.WARNING: 8, Severity.INFO: 0}
UNKNOWN_POINTS, UNKNOWN_CAP = 2, 10


@dataclass
class Policy:
    select: tuple[str, ...] = ()  # code prefixes to run (empty: all)
    ignore: tuple[str, ...] = ()  # code prefixes to drop
    severity: dict[str, Severity] = field(default_factory=dict)  # code -> severity override
    acknowledged: dict[str, str] = field(default_factory=dict)  # code -> reason
    fail_on: Severity = Severity.ERROR

    def wants(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)


def run_checks(facts: Facts, checks: Sequence[Check], kb: Any, policy: Policy | None = None,
               options: dict[str, Any] | None = None) -> list[Finding]:
    policy = policy or Policy()
    ctx = Context(facts, kb, dict(options or {}))
    findings: list[Finding] = []
    for chk in checks:
        if not policy.wants(chk.code):
            continue
        findings.extend(_apply_policy(f, policy) for f in _run_one(chk, ctx))
    return findings


def _run_one(chk: Check, ctx: Context) -> Iterable[Finding]:
    missing = [t for t in chk.tables if ctx.facts.status(t) in ("error", "missing")]
    if missing:
        errs = [e for t in missing for e in ctx.facts.table_errors(t)]
        why = "; ".join(dict.fromkeys(e.message for e in errs)) or f"not collected: {', '.join(missing)}"
        yield _finding(chk, Outcome.UNKNOWN, f"could not check: {why}", evidence=[Evidence(why)])
        return
    try:
        results = list(chk.func(ctx))
    except Exception as exc:  # a bug in one rule must not sink the report
        yield _finding(chk, Outcome.UNKNOWN, f"could not check: internal error {type(exc).__name__}: {exc}")
        return
    fails = [r for r in results if isinstance(r, Fail)]
    if fails:
        for r in fails:
            yield _finding(chk, Outcome.FAILED, r.title, r.why, r.evidence, r.fixes, r.severity)
        return
    unknowns = [r for r in results if isinstance(r, Unknown)]
    if unknowns:
        u = unknowns[0]
        yield _finding(chk, Outcome.UNKNOWN, f"could not check: {u.reason}", evidence=u.evidence)
        return
    skips = [r for r in results if isinstance(r, Skip)]
    if skips and not any(isinstance(r, Pass) for r in results):
        # "not here" cannot be told from "could not look" when a probe of a needed table failed:
        # nvcc hanging is not "no nvcc"
        errs = [e for t in chk.tables for e in ctx.facts.table_errors(t)]
        if errs:
            why = "; ".join(dict.fromkeys(e.message for e in errs))
            yield _finding(chk, Outcome.UNKNOWN, f"could not check: {why} ({skips[0].reason})",
                           evidence=[Evidence(why)])
            return
        yield _finding(chk, Outcome.SKIPPED, skips[0].reason)
        return
    passes = [r for r in results if isinstance(r, Pass)]
    title = passes[0].title if passes and passes[0].title else "no problem found"
    yield _finding(chk, Outcome.PASSED, title, evidence=passes[0].evidence if passes else ())


def _finding(chk: Check, outcome: Outcome, title: str, why: str = "", evidence=(), fixes=(),
             severity: Severity | None = None) -> Finding:
    return Finding(code=chk.code, name=chk.name, severity=severity or chk.severity, outcome=outcome,
                   title=title, why=why, evidence=tuple(evidence), fixes=tuple(fixes), cause=chk.cause,
                   component=chk.component)


def _apply_policy(f: Finding, policy: Policy) -> Finding:
    from dataclasses import replace

    if f.code in policy.severity:
        f = replace(f, severity=policy.severity[f.code])
    if f.code in policy.acknowledged and f.failed:
        f = replace(f, acknowledged=policy.acknowledged[f.code])
    return f


def score(findings: Sequence[Finding]) -> tuple[int, list[Deduction]]:
    deductions: list[Deduction] = []
    for f in findings:
        if f.failed and not f.acknowledged and POINTS[f.severity]:
            deductions.append(Deduction(f.code, POINTS[f.severity], f.title))
    unknown = [f for f in findings if f.outcome is Outcome.UNKNOWN]
    if unknown:
        pts = min(UNKNOWN_CAP, UNKNOWN_POINTS * len(unknown))
        deductions.append(Deduction("unknown", pts, f"{len(unknown)} check(s) could not run"))
    return max(0, 100 - sum(d.points for d in deductions)), deductions


def build_report(command: str, facts: Facts, findings: list[Finding], kb: Any,
                 started: float | None = None, **meta: Any) -> Report:
    order = {Outcome.FAILED: 0, Outcome.UNKNOWN: 1, Outcome.PASSED: 2, Outcome.SKIPPED: 3}
    findings = sorted(findings, key=lambda f: (order[f.outcome], -int(f.severity), f.code))
    sc, deductions = score(findings)
    m: dict[str, Any] = {"gpuvet_version": __version__, "kb": kb.stamp() if kb is not None else None,
                         "facts_origin": facts.origin}
    if started is not None:
        m["elapsed_s"] = round(time.monotonic() - started, 3)
    m.update(meta)
    return Report(command=command, findings=findings, facts=facts, score=sc, deductions=deductions, meta=m)


def exit_code(report: Report, fail_on: Severity) -> ExitCode:
    return ExitCode.FINDINGS if any(f.severity >= fail_on for f in report.failed()) else ExitCode.OK
