"""Markdown output, for pasting into a bug report or a CI summary."""
from __future__ import annotations

from typing import Any

from gpuvet.model import Outcome, Report

from .stack import stack_lines

ICON = {Outcome.FAILED: "❌", Outcome.UNKNOWN: "❔", Outcome.PASSED: "✅", Outcome.SKIPPED: "➖"}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report, verbose: bool = False, **_: Any) -> str:
    out = [f"# gpuvet {report.command}", ""]
    verdict = report.extra.get("verdict")
    if verdict:
        out += [f"**Verdict: {verdict.upper()}**", ""]
        out += [f"- {_cell(w)}" for w in report.extra.get("verdict_reasons", [])]
        out += [f"- source: {s}" for s in report.extra.get("sources", [])]
        out.append("")
    if report.score is not None:
        out.append(f"**Health score: {report.score}/100**")
        out.append("")
        for d in report.deductions:
            out.append(f"- −{d.points} `{d.code}` {_cell(d.reason)}")
        out.append("")
    if report.facts is not None:
        lines = stack_lines(report.facts)
        if lines:
            out += ["## Stack", "", "| layer | component | version | read from |", "|---|---|---|---|"]
            out += [f"| {_cell(a)} | {_cell(b)} | {_cell(c)} | {_cell(d)} |" for a, b, c, d in lines]
            out.append("")
    shown = [f for f in report.findings if verbose or f.outcome in (Outcome.FAILED, Outcome.UNKNOWN)]
    out += ["## Findings", ""]
    if not shown:
        out.append("No problems found.")
    for f in shown:
        ack = f" (acknowledged: {f.acknowledged})" if f.acknowledged else ""
        out.append(f"### {ICON[f.outcome]} `{f.code}` {f.name} — {f.severity.name.lower()}{ack}")
        out.append("")
        out.append(_cell(f.title))
        if f.why:
            out += ["", f"*Why it matters:* {_cell(f.why)}"]
        if f.evidence:
            out += ["", "*Evidence:*"]
            for e in f.evidence:
                where = f" (line {e.line})" if e.line else (f" ({e.source})" if e.source else "")
                out.append(f"- `{_cell(e.text)}`{where}")
        if f.fixes:
            out += ["", "*Fix:*"]
            for x in f.fixes:
                cmd = f": `{x.command}`" if x.command else ""
                out.append(f"- {_cell(x.text)}{cmd} [{x.applicability.value}]")
        out.append("")
    kb = report.meta.get("kb")
    if kb:
        out.append(f"<sub>gpuvet {report.meta.get('gpuvet_version')} · KB {kb.get('version')} ({kb.get('date')})</sub>")
    return "\n".join(out).rstrip() + "\n"
