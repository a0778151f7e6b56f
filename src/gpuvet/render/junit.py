"""JUnit XML: one testcase per check, a failure element for each failed finding (for CI)."""
from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from gpuvet.model import Outcome, Report


def render_junit(report: Report, **_: Any) -> str:
    fails = sum(1 for f in report.findings if f.outcome is Outcome.FAILED and not f.acknowledged)
    skips = sum(1 for f in report.findings if f.outcome in (Outcome.SKIPPED, Outcome.UNKNOWN) or f.acknowledged)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuite name={quoteattr("gpuvet " + report.command)} tests="{len(report.findings)}" '
           f'failures="{fails}" errors="0" skipped="{skips}">']
    if report.extra.get("verdict"):
        out.append(f'  <properties><property name="verdict" value={quoteattr(str(report.extra["verdict"]))}/></properties>')
    for f in report.findings:
        name = quoteattr(f"{f.code} {f.name}")
        out.append(f'  <testcase classname={quoteattr("gpuvet." + report.command)} name={name}>')
        body = "\n".join([f.title, f.why] + [e.text for e in f.evidence] + [x.text for x in f.fixes])
        if f.outcome is Outcome.FAILED and not f.acknowledged:
            out.append(f'    <failure type={quoteattr(f.severity.name.lower())} message={quoteattr(f.title)}>{escape(body)}</failure>')
        elif f.outcome in (Outcome.SKIPPED, Outcome.UNKNOWN) or f.acknowledged:
            msg = f.acknowledged and f"acknowledged: {f.acknowledged}" or f.title
            out.append(f'    <skipped message={quoteattr(msg)}/>')
        out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
