"""Terminal output with Rich: the stack at a glance, then what disagrees and how to fix it."""
from __future__ import annotations

import io
from typing import Any

from gpuvet.model import Outcome, Report, Severity

from .stack import stack_lines

STYLE = {Severity.CRITICAL: "bold red", Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
VERDICT_TEXT = {"works": "WORKS", "breaks": "BREAKS", "unknown": "UNKNOWN (the knowledge base does not know enough)"}
MARK = {Outcome.FAILED: "✗", Outcome.UNKNOWN: "?", Outcome.PASSED: "✓", Outcome.SKIPPED: "-"}


def render_terminal(report: Report, color: bool = False, width: int = 100, verbose: bool = False,
                    **_: Any) -> str:
    from .listing import TEXT_VIEWS

    if report.command in TEXT_VIEWS:  # a document command (rules, kb info, recommend): its own view
        return TEXT_VIEWS[report.command](report)
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, no_color=not color, width=width, highlight=False,
                  emoji=False, soft_wrap=False)
    verdict = report.extra.get("verdict")
    if verdict:
        vstyle = {"works": "bold green", "breaks": "bold red"}.get(verdict, "bold yellow")
        head = Text("Verdict: ", style="bold")
        head.append(VERDICT_TEXT.get(verdict, verdict), style=vstyle)
        con.print(head)
        for why in report.extra.get("verdict_reasons", [])[:8]:
            con.print(Text(f"  - {why}"))
        for src in report.extra.get("sources", [])[:6]:
            con.print(Text(f"  source: {src}", style="dim"))
        con.print()
    if report.facts is not None:
        lines = stack_lines(report.facts)
        if lines:
            t = Table(title="Stack", title_justify="left", show_edge=False, pad_edge=False, expand=False)
            for col in ("layer", "component", "version", "read from"):
                t.add_column(col, overflow="fold")
            for a, b, c, d in lines:
                t.add_row(a, b, c, d)
            con.print(t)
            con.print()
    shown = [f for f in report.findings if verbose or f.outcome in (Outcome.FAILED, Outcome.UNKNOWN)]
    if shown:
        con.print(Text("Findings", style="bold"))
    for f in shown:
        style = STYLE[f.severity] if f.outcome is Outcome.FAILED else "dim"
        head = Text(f"{MARK[f.outcome]} {f.code} {f.name} [{f.severity.name.lower()}]", style=style)
        if f.acknowledged:
            head.append(f"  (acknowledged: {f.acknowledged})", style="dim")
        con.print(head)
        con.print(Text("  " + f.title))
        if f.why:
            con.print(Text("  why: " + f.why, style="dim"))
        for e in f.evidence[:8]:
            where = f"line {e.line}: " if e.line else ""
            src = f"  ({e.source})" if e.source and not e.line else ""
            con.print(Text(f"  · {where}{e.text}{src}"))
        for x in f.fixes:
            cmd = f"  $ {x.command}" if x.command else ""
            con.print(Text(f"  fix [{x.applicability.value}]: {x.text}{cmd}", style="green"))
    passed = sum(1 for f in report.findings if f.outcome is Outcome.PASSED)
    skipped = sum(1 for f in report.findings if f.outcome is Outcome.SKIPPED)
    failed = sum(1 for f in report.findings if f.outcome is Outcome.FAILED)
    unknown = sum(1 for f in report.findings if f.outcome is Outcome.UNKNOWN)
    if report.score is not None:
        con.print()
        sc = report.score
        style = "bold green" if sc >= 90 else ("bold yellow" if sc >= 60 else "bold red")
        line = Text("Health score: ", style="bold")
        line.append(f"{sc}/100", style=style)
        line.append(f"   {failed} failed · {unknown} unknown · {passed} passed · {skipped} not applicable")
        con.print(line)
        for d in report.deductions:
            con.print(Text(f"  −{d.points:<3} {d.code:8} {d.reason}", style="dim"))
    kb = report.meta.get("kb")
    if kb:
        el = report.meta.get("elapsed_s")
        tail = f" · {el:.2f}s" if isinstance(el, (int, float)) else ""
        con.print(Text(f"gpuvet {report.meta.get('gpuvet_version')} · KB {kb.get('version')}{tail}", style="dim"))
    return buf.getvalue()
