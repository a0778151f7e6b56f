"""The version report (``gpuvet report``): the stack, its findings and the changes since the good
snapshot, as Markdown and as a self-contained HTML page.  ``Report -> str``, like every renderer:
the report's ``extra`` holds ``since`` (the snapshot compared with), ``changes`` (from the diff) and
``distributions`` (the framework's Python distributions with their origins)."""
from __future__ import annotations

import html
from typing import Any

from gpuvet.model import Outcome, Report

from .stack import stack_lines

SEV_ORDER = ("critical", "error", "warning", "info")


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _head(report: Report) -> dict[str, Any]:
    e = report.extra
    failed = [f for f in report.findings if f.outcome is Outcome.FAILED and not f.acknowledged]
    return {"host": e.get("host", ""), "taken": e.get("taken_at", ""), "score": report.score, "failed": failed,
            "unknown": [f for f in report.findings if f.outcome is Outcome.UNKNOWN],
            "since": e.get("since"), "changes": e.get("changes") or [], "dists": e.get("distributions") or []}


def render_report_markdown(report: Report, **_: Any) -> str:
    h = _head(report)
    out = [f"# gpuvet version report: {h['host']}", "",
           f"Taken {h['taken']} · health score **{h['score']}/100** · {len(h['failed'])} failing, "
           f"{len(h['unknown'])} could not be checked", ""]
    if report.facts is not None:
        out += ["## Stack", "", "| layer | component | version | read from |", "|---|---|---|---|"]
        out += [f"| {_md(a)} | {_md(b)} | {_md(c)} | {_md(d)} |" for a, b, c, d in stack_lines(report.facts)]
        out.append("")
    out += ["## Findings", ""]
    if not h["failed"] and not h["unknown"]:
        out.append("No problems found.")
    for f in h["failed"] + h["unknown"]:
        out.append(f"- **{f.code}** {f.name} ({f.severity.name.lower()}, {f.outcome.value}): {_md(f.title)}")
        for x in f.fixes[:2]:
            out.append(f"  - fix: {_md(x.text)}" + (f" `{_md(x.command)}`" if x.command else ""))
    out.append("")
    since = h["since"]
    out += ["## Changes since the good snapshot", ""]
    if not since:
        out.append("No snapshot is marked good yet (`gpuvet snapshot --mark-good`).")
    else:
        out.append(f"Compared with {_md(since.get('ref'))} of {since.get('created_at', '')[:19]}.")
        out.append("")
        if not h["changes"]:
            out.append("Nothing changed.")
        else:
            out += ["| what | before | after | category | findings |", "|---|---|---|---|---|"]
            for c in h["changes"]:
                links = ", ".join([f"{x} now fails" for x in c["caused"]] + [f"{x} cleared" for x in c["cleared"]])
                out.append(f"| {_md(c['subject'])} | {_md(c['before'] or '(absent)')} | {_md(c['after'] or '(absent)')} "
                           f"| {c['category']} | {_md(links)} |")
    out.append("")
    if h["dists"]:
        out += ["## Framework packages", "", "| package | version | origin | installer |", "|---|---|---|---|"]
        for d in h["dists"]:
            url = (d.get("direct_url") or {}).get("url", "")
            out.append(f"| {_md(d['name'])} | {_md(d['version'])} | {_md(d.get('origin', ''))}{' ' + _md(url) if url else ''} "
                       f"| {_md(d.get('installer', ''))} |")
        out.append("")
    kb = report.meta.get("kb") or {}
    out.append(f"<sub>gpuvet {report.meta.get('gpuvet_version', '')} · KB {kb.get('version', '')} ({kb.get('date', '')})</sub>")
    return "\n".join(out).rstrip() + "\n"


CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:1040px;margin:0 auto;padding:28px 32px 48px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 10px;border-bottom:1px solid #dde1e7;padding-bottom:4px}
.sub{color:#5b6475;margin:0 0 18px}
.cards{display:flex;gap:14px;flex-wrap:wrap}.card{background:#fff;border:1px solid #dde1e7;border-radius:10px;padding:12px 18px;min-width:150px}
.card b{display:block;font-size:26px}.card span{color:#5b6475;font-size:13px}
.ok b{color:#1a7f37}.warn b{color:#9a6700}.bad b{color:#cf222e}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e7;border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #eef0f3;vertical-align:top;font-size:14px}
th{background:#f0f2f5;font-weight:600}td.src{color:#5b6475;font-size:12px;word-break:break-all}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef0f3;padding:1px 4px;border-radius:4px}
.f{background:#fff;border:1px solid #dde1e7;border-left:5px solid #8c959f;border-radius:8px;padding:10px 14px;margin:10px 0}
.f.critical,.f.error{border-left-color:#cf222e}.f.warning{border-left-color:#d4a72c}.f.info{border-left-color:#0969da}
.f.unknown{border-left-color:#8c959f}.f h3{margin:0 0 4px;font-size:15px}.f p{margin:4px 0}
.tag{display:inline-block;font-size:12px;padding:0 7px;border-radius:10px;background:#eef0f3;margin-left:6px}
.fails{color:#cf222e;font-weight:600}.clears{color:#1a7f37;font-weight:600}
footer{margin-top:36px;color:#8c959f;font-size:12px}
"""


def render_report_html(report: Report, **_: Any) -> str:
    e = html.escape
    h = _head(report)
    score = h["score"] if h["score"] is not None else 0
    cls = "ok" if score >= 90 else "warn" if score >= 60 else "bad"
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width'>"
             f"<title>gpuvet report: {e(h['host'])}</title><style>{CSS}</style></head><body><main>",
             f"<h1>gpuvet version report: {e(h['host'])}</h1><p class=sub>Taken {e(h['taken'])}</p>",
             "<div class=cards>",
             f"<div class='card {cls}'><b>{score}/100</b><span>health score</span></div>",
             f"<div class='card {'bad' if h['failed'] else 'ok'}'><b>{len(h['failed'])}</b><span>failing findings</span></div>",
             f"<div class='card {'warn' if h['unknown'] else 'ok'}'><b>{len(h['unknown'])}</b><span>could not be checked</span></div>",
             f"<div class='card {'warn' if h['changes'] else 'ok'}'><b>{len(h['changes'])}</b><span>changes since good</span></div>",
             "</div>"]
    if report.facts is not None:
        parts.append("<h2>Stack</h2><table><tr><th>layer</th><th>component</th><th>version</th><th>read from</th></tr>")
        for a, b, c, d in stack_lines(report.facts):
            parts.append(f"<tr><td>{e(a)}</td><td>{e(b)}</td><td><code>{e(c)}</code></td><td class=src>{e(d)}</td></tr>")
        parts.append("</table>")
    parts.append("<h2>Findings</h2>")
    if not h["failed"] and not h["unknown"]:
        parts.append("<p>No problems found.</p>")
    for f in h["failed"] + h["unknown"]:
        kind = f.severity.name.lower() if f.outcome is Outcome.FAILED else "unknown"
        parts.append(f"<div class='f {kind}'><h3><code>{e(f.code)}</code> {e(f.name)}<span class=tag>{e(kind)}</span></h3>"
                     f"<p>{e(f.title)}</p>" + (f"<p><i>Why it matters:</i> {e(f.why)}</p>" if f.why else ""))
        for x in f.fixes[:2]:
            parts.append(f"<p><i>Fix:</i> {e(x.text)}" + (f" <code>{e(x.command)}</code>" if x.command else "") +
                         f"<span class=tag>{e(x.applicability.value)}</span></p>")
        parts.append("</div>")
    parts.append("<h2>Changes since the good snapshot</h2>")
    since = h["since"]
    if not since:
        parts.append("<p>No snapshot is marked good yet (<code>gpuvet snapshot --mark-good</code>).</p>")
    elif not h["changes"]:
        parts.append(f"<p>Nothing changed since {e(str(since.get('ref')))} of {e(since.get('created_at', '')[:19])}.</p>")
    else:
        parts.append(f"<p>Compared with {e(str(since.get('ref')))} of {e(since.get('created_at', '')[:19])}, "
                     "most dangerous first.</p>")
        parts.append("<table><tr><th>what</th><th>before</th><th>after</th><th>category</th><th>findings</th></tr>")
        for c in h["changes"]:
            links = "".join(f"<div class=fails>{e(x)} now fails</div>" for x in c["caused"]) + \
                "".join(f"<div class=clears>{e(x)} cleared</div>" for x in c["cleared"])
            parts.append(f"<tr><td>{e(c['subject'])}</td><td><code>{e(c['before'] or '(absent)')}</code></td>"
                         f"<td><code>{e(c['after'] or '(absent)')}</code></td><td>{e(c['category'])}</td><td>{links}</td></tr>")
        parts.append("</table>")
    if h["dists"]:
        parts.append("<h2>Framework packages</h2><table><tr><th>package</th><th>version</th><th>origin</th><th>installer</th></tr>")
        for d in h["dists"]:
            url = (d.get("direct_url") or {}).get("url", "")
            parts.append(f"<tr><td>{e(d['name'])}</td><td><code>{e(d['version'])}</code></td>"
                         f"<td>{e(d.get('origin', ''))}{' <span class=src>' + e(url) + '</span>' if url else ''}</td>"
                         f"<td>{e(d.get('installer', ''))}</td></tr>")
        parts.append("</table>")
    kb = report.meta.get("kb") or {}
    parts.append(f"<footer>gpuvet {e(str(report.meta.get('gpuvet_version', '')))} · knowledge base "
                 f"{e(str(kb.get('version', '')))} ({e(str(kb.get('date', '')))})</footer></main></body></html>\n")
    return "".join(parts)
