"""Markdown output, for pasting into a bug report or a CI summary.

The terminal's layout (render/terminal.py): the verdict first, then the failed findings with their
fixes (glyph by severity: an information note is not drawn as a failure), the checks that could not
run collapsed to one line per reason with the command that would supply the facts, the stack (every
row with ``--stack`` or ``--verbose``, each with where it was read), and the score of what was checked.  Checks for a
vendor the facts rule out (not applicable) are left out; ``--verbose`` lists what passed as well."""
from __future__ import annotations

from typing import Any

from gpuvet.model import Outcome, Report, Severity

from .stack import stack_lines
from .terminal import is_ranked, order_failed, short_stack, tally, unknown_lines, verdict_text

ICON = {Outcome.FAILED: "❌", Outcome.UNKNOWN: "❔", Outcome.PASSED: "✅", Outcome.SKIPPED: "➖"}
SEV_ICON = {Severity.CRITICAL: "❌", Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report, verbose: bool = False, stack: bool = False, **_: Any) -> str:
    out = [f"# gpuvet {report.command}", ""]
    usable = report.extra.get("usable")
    verdict = report.extra.get("verdict")
    if usable:
        out += [f"**{_cell(usable.get('text', ''))}**", ""]
    elif verdict:
        out += [f"**Verdict: {_cell(verdict_text(report))}**", ""]
        out += [f"- {_cell(w)}" for w in report.extra.get("verdict_reasons", [])]
        out += [f"- source: {_cell(s)}" for s in report.extra.get("sources", [])]
        out.append("")
    for i in report.meta.get("inputs") or []:
        if not i.get("recognised"):
            out += [f"> ⚠️ `{_cell(i.get('source'))}`: {_cell(i.get('note') or 'not recognised')}; left out", ""]
    failed = order_failed(report.findings, is_ranked(report))
    if failed:
        out += [f"## Findings ({len(failed)})", ""]
    elif report.findings and report.command not in ("diagnose", "run"):
        out += ["No problems found in what could be checked.", ""]
    for f in failed:
        icon = "☑️" if f.acknowledged else SEV_ICON[f.severity]
        ack = f" (acknowledged: {_cell(f.acknowledged)})" if f.acknowledged else ""
        out += [f"### {icon} `{f.code}` {f.name} — {f.severity.name.lower()}{ack}", "", _cell(f.title)]
        if f.why:
            out += ["", f"*Why it matters:* {_cell(f.why)}"]
        if f.evidence:
            out += ["", "*Evidence:*"]
            for e in f.evidence:
                where = f" (line {e.line})" if e.line else (f" ({_cell(e.source)})" if e.source else "")
                out.append(f"- `{_cell(e.text)}`{where}")
        if f.fixes:
            out += ["", "*Fix:*"]
            for x in f.fixes:
                tag = x.applicability.value + (", root" if x.needs_root else "") + (", reboot" if x.needs_reboot else "")
                cmd = f": `{x.command}`" if x.command and x.command not in x.text else ""
                out.append(f"- {_cell(x.text)}{cmd} [{tag}]")
        out.append("")
    diags = report.extra.get("diagnoses") or []
    signals = [] if diags and diags[0].get("cause") != "none" else \
        [s for s in report.extra.get("user_code_signals") or [] if isinstance(s, dict)]
    if signals:  # diagnose, run: what the text shows when no stack cause is blamed (the terminal's "●" lines)
        out += ["## What the text shows: your code or data, not the stack", ""]
        for sig in signals:
            out += [f"### `{_cell(sig.get('signature', ''))}` {_cell(sig.get('title', ''))}", ""]
            if sig.get("meaning"):
                out += [_cell(sig["meaning"]), ""]
            out += [f"- `{_cell(e.get('text'))}` (line {e.get('line')})" for e in (sig.get("evidence") or [])[:4]]
            out.append("")
    notes = [n for n in report.extra.get("notes") or [] if isinstance(n, dict)]
    if notes:  # diagnose: what the facts explain without being a cause
        out += ["## Notes", ""]
        out += [f"- ℹ️ `{_cell(n.get('code', ''))}` {_cell(n.get('title', ''))}" +
                (f" *{_cell(n['why'])}*" if n.get("why") else "") for n in notes]
        out.append("")
    unknown = [f for f in report.findings if f.outcome is Outcome.UNKNOWN]
    if unknown:
        out += ["## Could not check", ""]
        if verbose:
            out += [f"- ❔ `{f.code}` {f.name}: {_cell(f.title)}" for f in unknown]
        else:
            out += [f"- ❔ {_cell(line[2:] if line.startswith('? ') else line)}" for line in unknown_lines(report, unknown)]
        out.append("")
    if verbose:
        rest = [f for f in report.findings if f.outcome in (Outcome.PASSED, Outcome.SKIPPED)]
        if rest:
            out += ["## Passed and not applicable", ""]
            out += [f"- {ICON[f.outcome]} `{f.code}` {f.name}: {_cell(f.title)}" for f in rest]
            out.append("")
    if report.facts is not None and not report.extra.get("hide_stack"):
        lines = stack_lines(report.facts)
        short = lines if stack or verbose else short_stack(lines)
        if short:
            hidden = len(lines) - len(short)
            more = f" ({hidden} more rows with `--stack`)" if hidden else ""
            lines = short
            out += [f"## Stack{more}", "", "| layer | component | version | read from |", "|---|---|---|---|"]
            out += [f"| {_cell(a)} | {_cell(b)} | {_cell(c)} | {_cell(d)} |" for a, b, c, d in lines]
            out.append("")
    if report.score is not None and not verdict:
        checked = sum(1 for f in report.findings if f.outcome in (Outcome.PASSED, Outcome.FAILED))
        if checked:
            out.append(f"**Score {report.score}/100** on {checked} checks: " + " · ".join(tally(report.findings)))
        else:
            out.append("**Score: none**: nothing could be checked")
        out.append("")
        for d in report.deductions:
            out.append(f"- −{d.points} `{d.code}` {_cell(d.reason)}")
        if report.deductions:
            out.append("")
    kb = report.meta.get("kb")
    if kb:
        out.append(f"<sub>gpuvet {report.meta.get('gpuvet_version')} · KB {kb.get('version')} ({kb.get('date')})</sub>")
    return "\n".join(out).rstrip() + "\n"
