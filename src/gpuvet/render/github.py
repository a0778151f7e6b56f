"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per failed
finding (https://docs.github.com/actions/reference/workflow-commands-for-github-actions), and one
notice with the verdict and the score, so a CI run shows gpuvet's findings on the summary page."""
from __future__ import annotations

from typing import Any

from gpuvet.model import Outcome, Report, Severity

LEVEL = {Severity.CRITICAL: "error", Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _location(report: Report, f) -> str:
    """``file=...,line=...`` when the finding points into an input file (a log or a pasted report)."""
    path = report.meta.get("input") or ""
    if not path and report.facts is not None and getattr(report.facts, "origin", "") == "pasted":
        path = next((e.source for e in f.evidence if e.source), "")
    if not path or path.startswith("<"):
        return ""
    line = next((e.line for e in f.evidence if e.line), None)
    return f"file={_prop(path)}" + (f",line={line}" if line else "")


def render_github(report: Report, **_: Any) -> str:
    out: list[str] = []
    for f in report.findings:
        if f.outcome is not Outcome.FAILED or f.acknowledged:
            continue
        loc = _location(report, f)
        props = ",".join(p for p in (loc, f"title={_prop(f'gpuvet {f.code} {f.name}')}") if p)
        body = f.title
        fixes = [x.text + (f": {x.command}" if x.command and x.command not in x.text else "") for x in f.fixes]
        if fixes:
            body += "\nfix: " + "\nfix: ".join(fixes)
        out.append(f"::{LEVEL[f.severity]} {props}::{_data(body)}")
    summary = []
    usable = report.extra.get("usable")
    if usable:
        summary.append(usable.get("text", ""))
    elif isinstance(report.extra.get("verdict"), str):
        summary.append(f"verdict: {report.extra['verdict']}")
    if report.score is not None:
        cov = report.meta.get("coverage") or {}
        if cov.get("checked") == 0:
            summary.append("nothing could be checked")
        else:
            n = cov.get("checked", "?")
            summary.append(f"score {report.score}/100 on {n} check{'' if n == 1 else 's'}"
                           + (f", {cov['unchecked']} could not be checked" if cov.get("unchecked") else ""))
    if summary:
        out.append(f"::notice title=gpuvet {report.command}::{_data('; '.join(summary))}")
    return "".join(line + "\n" for line in out)
