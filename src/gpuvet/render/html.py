"""HTML output: one self-contained page (inline CSS and SVG, no scripts, nothing fetched).

For validate / bench reports it draws what people would rather look at than read: the memory curve of
each training-step stage, per-operator times against the baseline, the stability matrix as a heat map,
throughput against the GPU's expected peak.  Every other report gets its findings table.
"""
from __future__ import annotations

import html
from typing import Any, Iterable

from gpuvet.model import Outcome, Report

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2430;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
.meta{color:#5a6475;margin-bottom:12px} table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #dde2ea;padding:3px 8px;text-align:left;vertical-align:top} th{background:#f3f5f8}
.failed{color:#b3261e;font-weight:600}.passed{color:#1b7f3b}.unknown{color:#8a6d00}.skipped{color:#6b7280}
.ok{color:#1b7f3b}.bad{color:#b3261e;font-weight:600}.warn{color:#8a6d00}
.grid{display:flex;flex-wrap:wrap;gap:14px} .card{border:1px solid #dde2ea;border-radius:6px;padding:8px}
.small{font-size:12px;color:#5a6475} code{background:#f3f5f8;padding:0 3px;border-radius:3px}
"""
PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"]


def e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def render_html(report: Report, **_: Any) -> str:
    rec = report.extra.get("validate")
    title = f"gpuvet {report.command}"
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(title)}</title><style>{CSS}</style></head><body>"]
    out.append(f"<h1>{e(title)}</h1>")
    out.append(f"<div class=meta>{e(_meta_line(report, rec))}</div>")
    out.append(_summary(report))
    if rec:
        out += _validate_sections(rec)
    out.append(_findings(report))
    out.append(f"<p class=small>gpuvet {e(report.meta.get('gpuvet_version', ''))} · KB "
               f"{e((report.meta.get('kb') or {}).get('version', ''))}</p></body></html>")
    return "\n".join(out) + "\n"


def _meta_line(report: Report, rec: dict | None) -> str:
    parts = []
    if rec:
        fw = rec.get("framework") or {}
        parts += [f"level {rec.get('level')}", f"host {rec.get('host', '')}",
                  f"torch {fw.get('torch', '?')} ({fw.get('backend', '?')})", f"device {fw.get('device_name', '?')}",
                  f"started {rec.get('started_at', '')}", f"{rec.get('elapsed_s', 0):.1f} s"]
        if rec.get("run_id"):
            parts.append(f"run {rec['run_id']}")
    return " · ".join(str(p) for p in parts)


def _summary(report: Report) -> str:
    counts = {o: sum(1 for f in report.findings if f.outcome is o) for o in Outcome}
    cells = " ".join(f"<span class={o.value}>{counts[o]} {o.value}</span> ·" for o in Outcome).rstrip(" ·")
    score = f"score {report.score}/100 · " if report.score is not None else ""
    return f"<p><b>{e(score)}</b>{cells}</p>"


def _findings(report: Report) -> str:
    rows = []
    for f in report.findings:
        ev = "<br>".join(e(x.text) for x in f.evidence[:4])
        rows.append(f"<tr><td>{e(f.code)}</td><td class={f.outcome.value}>{e(f.outcome.value)}</td>"
                    f"<td>{e(f.severity.name.lower())}</td><td>{e(f.title)}<div class=small>{ev}</div></td></tr>")
    return ("<h2>Findings</h2><table><tr><th>code</th><th>outcome</th><th>severity</th><th>finding</th></tr>"
            + "".join(rows) + "</table>")


def _validate_sections(rec: dict) -> list[str]:
    out: list[str] = []
    cases = rec.get("cases") or []
    out.append("<h2>Cases</h2><table><tr><th>case</th><th>level</th><th>status</th><th>checks</th><th>worst error / tol</th><th>seconds</th></tr>")
    for c in cases:
        checks = c.get("checks") or []
        ran = [x for x in checks if not x.get("skipped")]
        bad = sum(1 for x in ran if not x.get("ok"))
        ratios = [(x["err"] / x["tol"], x) for x in ran if x.get("tol") and isinstance(x.get("err"), (int, float))]
        worst = max(ratios, key=lambda t: t[0])[1] if ratios else None
        w = f"{worst['name']} {worst.get('dtype', '')}: {worst['err']:.2g} / {worst['tol']:g}" if worst else ""
        cls = "ok" if c["status"] == "ok" else ("warn" if c["status"] == "unsupported" else "bad")
        err = f"<div class=small>{e(c.get('error', '')[:200])}</div>" if c.get("error") else ""
        out.append(f"<tr><td>{e(c['case'])}</td><td>{e(c.get('level', ''))}</td><td class={cls}>{e(c['status'])}{err}</td>"
                   f"<td>{len(ran) - bad}/{len(ran)}</td><td>{e(w)}</td><td>{c.get('elapsed_s', 0):.2f}</td></tr>")
    out.append("</table>")
    curves = [(c["case"], name, pts) for c in cases for name, pts in (c.get("curves") or {}).items() if pts]
    if curves:
        out.append("<h2>Memory curves</h2><div class=grid>")
        for case, name, pts in curves:
            series = {"allocated": [(float(p[0]), float(p[1]) / 2**20) for p in pts]}
            xl = "iteration" if name == "leak" else "seconds since stage start"
            out.append(f"<div class=card>{line_chart(series, f'{case} · {name}', xl, 'MiB')}</div>")
        out.append("</div>")
    base = rec.get("baseline") or {}
    rows = [r for r in base.get("rows", []) if r.get("metric") != "(status)"]
    timed = [(c["case"], n, m) for c in cases for n, m in (c.get("metrics") or {}).items() if m.get("unit") == "ms"]
    if rows:
        out.append(f"<h2>Against the baseline ({e(base.get('ref', ''))})</h2>")
        out.append(bar_chart([(f"{r['case']} · {r['metric']}", r["base"], r["new"], r["verdict"]) for r in rows[:40]],
                             "baseline vs now (relative to the baseline)"))
        out.append("<table><tr><th>case</th><th>metric</th><th>baseline</th><th>now</th><th>delta</th><th>noise band</th><th>verdict</th></tr>")
        for r in rows:
            cls = {"regression": "bad", "improvement": "ok"}.get(r["verdict"], "")
            out.append(f"<tr><td>{e(r['case'])}</td><td>{e(r['metric'])}</td><td>{r['base']:.4g} {e(r.get('unit', ''))}</td>"
                       f"<td>{r['new']:.4g}</td><td>{r['delta'] * 100:+.1f}%</td><td>±{r['band'] * 100:.0f}%</td>"
                       f"<td class={cls}>{e(r['verdict'])}</td></tr>")
        out.append("</table>")
    elif timed:
        out.append("<h2>Per-operator times</h2>")
        out.append(bar_chart([(f"{c} · {n}", None, m["value"], "") for c, n, m in timed[:40]], "median ms (no baseline)"))
    for c in cases:
        tab = (c.get("tables") or {}).get("stability")
        if tab:
            out.append("<h2>Stability matrix</h2>" + heatmap(tab))
    peaks = rec.get("peaks") or []
    if peaks:
        out.append("<h2>Against the GPU's expected peak</h2><table><tr><th>metric</th><th>measured</th><th>reference</th><th>fraction</th><th>source</th></tr>")
        for p in peaks:
            frac = p.get("fraction")
            bar = (f"<svg width=120 height=10><rect width=120 height=10 fill='#eef1f5'/><rect width={min(120, 120 * frac):.0f} "
                   f"height=10 fill='{'#16a34a' if frac >= 0.5 else '#dc2626'}'/></svg> {frac * 100:.0f}%") if frac else ""
            ref = f"{p['reference']:g} ({e(p.get('reference_kind', ''))})" if p.get("reference") else "no KB entry for this GPU"
            out.append(f"<tr><td>{e(p['metric'])}</td><td>{p['value']:.4g} {e(p.get('unit', ''))}</td><td>{ref}</td>"
                       f"<td>{bar}</td><td class=small>{e(p.get('source') or '')}</td></tr>")
        out.append("</table>")
    return out


# ---------------------------------------------------------------------------------------------- SVG
def line_chart(series: dict[str, list[tuple[float, float]]], title: str, xlabel: str, ylabel: str,
               w: int = 420, h: int = 220) -> str:
    pts_all = [p for s in series.values() for p in s]
    if not pts_all:
        return ""
    x0, x1 = min(p[0] for p in pts_all), max(p[0] for p in pts_all)
    y0, y1 = min(p[1] for p in pts_all), max(p[1] for p in pts_all)
    if x1 == x0:
        x1 = x0 + 1
    pad = (y1 - y0) * 0.1 or max(abs(y1) * 0.05, 1.0)
    y0, y1 = y0 - pad, y1 + pad
    L, R, T, B = 70, 10, 24, 36
    sx = lambda x: L + (x - x0) / (x1 - x0) * (w - L - R)  # noqa: E731
    sy = lambda y: h - B - (y - y0) / (y1 - y0) * (h - T - B)  # noqa: E731
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width={w} height={h} role=img aria-label='{e(title)}'>",
           f"<text x={L} y=15 font-size=13 font-weight=600>{e(title)}</text>",
           f"<line x1={L} y1={h - B} x2={w - R} y2={h - B} stroke='#98a2b3'/><line x1={L} y1={T} x2={L} y2={h - B} stroke='#98a2b3'/>"]
    import math

    digits = max(0, min(6, 2 - int(math.floor(math.log10(max(y1 - y0, 1e-12))))))
    for i in range(5):
        yv = y0 + (y1 - y0) * i / 4
        out.append(f"<text x={L - 4} y={sy(yv) + 4:.1f} font-size=10 text-anchor=end fill='#5a6475'>{yv:,.{digits}f}</text>"
                   f"<line x1={L} y1={sy(yv):.1f} x2={w - R} y2={sy(yv):.1f} stroke='#eef1f5'/>")
    for xv in (x0, (x0 + x1) / 2, x1):
        out.append(f"<text x={sx(xv):.1f} y={h - B + 14} font-size=10 text-anchor=middle fill='#5a6475'>{xv:.3g}</text>")
    out.append(f"<text x={(L + w - R) / 2:.0f} y={h - 6} font-size=11 text-anchor=middle>{e(xlabel)}</text>")
    out.append(f"<text x=12 y={(T + h - B) / 2:.0f} font-size=11 text-anchor=middle transform='rotate(-90 12 {(T + h - B) / 2:.0f})'>{e(ylabel)}</text>")
    for k, (name, pts) in enumerate(series.items()):
        col = PALETTE[k % len(PALETTE)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f"<polyline fill=none stroke='{col}' stroke-width=2 points='{path}'/>")
        for x, y in pts[:: max(1, len(pts) // 40)]:
            out.append(f"<circle cx={sx(x):.1f} cy={sy(y):.1f} r=2.5 fill='{col}'/>")
    out.append("</svg>")
    return "".join(out)


def bar_chart(items: Iterable[tuple[str, float | None, float, str]], title: str, w: int = 760) -> str:
    items = list(items)
    if not items:
        return ""
    row, L = 20, 300
    h = 30 + row * len(items)
    rel = any(b for _, b, _, _ in items)
    vals = [(n / b if b else 0) if rel else n for _, b, n, _ in items]
    vmax = max([*vals, 1.0 if rel else 0.0]) or 1.0
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width={w} height={h} role=img aria-label='{e(title)}'>",
           f"<text x=4 y=15 font-size=13 font-weight=600>{e(title)}</text>"]
    span = w - L - 190  # room for the value label after the longest bar
    for i, ((label, b, n, verdict), v) in enumerate(zip(items, vals)):
        y = 26 + i * row
        col = {"regression": "#dc2626", "improvement": "#16a34a"}.get(verdict, "#2563eb")
        out.append(f"<text x={L - 6} y={y + 12} font-size=11 text-anchor=end>{e(label[:48])}</text>")
        out.append(f"<rect x={L} y={y} width={max(1, v / vmax * span):.1f} height={row - 6} fill='{col}'/>")
        txt = f"{v:.2f}x ({n:.4g} vs {b:.4g})" if rel and b else f"{n:.4g}"
        out.append(f"<text x={L + max(1, v / vmax * span) + 4:.1f} y={y + 12} font-size=10 fill='#374151'>{e(txt)}</text>")
    if rel:
        x = L + 1.0 / vmax * span
        out.append(f"<line x1={x:.1f} y1=22 x2={x:.1f} y2={h - 2} stroke='#111827' stroke-dasharray='3,3'/>")
    out.append("</svg>")
    return "".join(out)


def heatmap(tab: dict) -> str:
    rows, cols, cells = tab["rows"], tab["cols"], tab["cells"]
    cw, ch, L, T = 72, 30, 60, 40
    w, h = max(420, L + cw * len(cols) + 10), T + ch * len(rows) + 30
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width={w} height={h} role=img aria-label='stability matrix'>",
           "<text x=4 y=15 font-size=13 font-weight=600>success rate per cell (batch size x dtype)</text>"]
    for j, c in enumerate(cols):
        out.append(f"<text x={L + j * cw + cw / 2:.0f} y={T - 6} font-size=11 text-anchor=middle>batch {e(c)}</text>")
    for i, r in enumerate(rows):
        out.append(f"<text x={L - 6} y={T + i * ch + ch / 2 + 4:.0f} font-size=11 text-anchor=end>{e(r)}</text>")
        for j, c in enumerate(cols):
            cell = cells.get(f"{r}/{c}")
            if cell is None:
                continue
            rate = cell["rate"]
            red, green = int(220 * (1 - rate) + 22 * rate), int(38 * (1 - rate) + 163 * rate)
            out.append(f"<rect x={L + j * cw} y={T + i * ch} width={cw - 2} height={ch - 2} fill='rgb({red},{green},74)'/>")
            out.append(f"<text x={L + j * cw + cw / 2:.0f} y={T + i * ch + ch / 2 + 4:.0f} font-size=11 fill='#fff' "
                       f"text-anchor=middle>{cell['ok']}/{cell['runs']}</text>")
    out.append("</svg>")
    return "".join(out)
