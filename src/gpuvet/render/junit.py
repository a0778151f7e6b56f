"""JUnit XML for CI test reports, in the terminal's layout (render/terminal.py).

The verdict is the suite's first property (and its system-out); one testcase per check that ran: a
failure element for each failed, unacknowledged finding of warning severity or worse, a passing case
(with the note in system-out) for information findings, a skipped case for an acknowledged one; the
checks that could not run are collapsed into one skipped testcase per reason (naming their codes and
the command that would supply the facts); checks for a vendor the facts rule out are left out."""
from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from gpuvet.model import Finding, Outcome, Report, Severity

from .terminal import is_ranked, order_failed, unknown_lines, verdict_text


def _body(f: Finding) -> str:
    return "\n".join([f.title, f.why] + [e.text for e in f.evidence] + [x.text for x in f.fixes])


def render_junit(report: Report, **_: Any) -> str:
    cls = quoteattr("gpuvet." + report.command)
    usable = report.extra.get("usable")
    verdict = report.extra.get("verdict")
    head = usable.get("text", "") if usable else (f"Verdict: {verdict_text(report)}" if verdict else "")
    ran = order_failed(report.findings, is_ranked(report)) + [f for f in report.findings if f.outcome is Outcome.PASSED]
    unknown = [f for f in report.findings if f.outcome is Outcome.UNKNOWN]
    reasons = unknown_lines(report, unknown) if unknown else []
    cases: list[str] = []
    fails = skips = 0
    for f in ran:
        name = quoteattr(f"{f.code} {f.name}")
        cases.append(f"  <testcase classname={cls} name={name}>")
        if f.outcome is Outcome.FAILED and f.acknowledged:
            skips += 1
            cases.append(f"    <skipped message={quoteattr(f'acknowledged: {f.acknowledged}')}/>")
        elif f.outcome is Outcome.FAILED and f.severity > Severity.INFO:
            fails += 1
            cases.append(f"    <failure type={quoteattr(f.severity.name.lower())} message={quoteattr(f.title)}>"
                         f"{escape(_body(f))}</failure>")
        elif f.outcome is Outcome.FAILED:  # information: reported, not a failure
            cases.append(f"    <system-out>{escape('information: ' + _body(f))}</system-out>")
        cases.append("  </testcase>")
    for line in reasons:
        text = line[2:] if line.startswith("? ") else line
        skips += 1
        cases.append(f"  <testcase classname={cls} name={quoteattr('could not check: ' + text.split(':')[0])}>")
        cases.append(f"    <skipped message={quoteattr(text)}/>")
        cases.append("  </testcase>")
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuite name={quoteattr("gpuvet " + report.command)} tests="{len(ran) + len(reasons)}" '
           f'failures="{fails}" errors="0" skipped="{skips}">']
    props = []
    if head:
        props.append(f'<property name="verdict" value={quoteattr(head)}/>')
    if usable:
        props.append(f'<property name="usable" value={quoteattr(str(usable.get("state", "")))}/>')
    if report.score is not None:
        props.append(f'<property name="score" value="{report.score}"/>')
    if props:
        out.append("  <properties>" + "".join(props) + "</properties>")
    out += cases
    if head:
        out.append(f"  <system-out>{escape(head)}</system-out>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
