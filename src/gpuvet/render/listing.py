"""Text views of the document commands (``rules``, ``rule``, ``kb info``, ``recommend``): each takes the
Report the use case returned and gives the text ``--format terminal`` prints."""
from __future__ import annotations

import json
from typing import Any, Callable

from gpuvet.model import Report


def rule_page(d: dict[str, Any]) -> str:
    """A check's page as text (also the body of docs/rules/CODE.md); ``d`` as ``app.rules.rule_dict``."""
    out = [f"{d['code']} {d['name']}", "",
           f"Severity: {d['severity']} · cause: {d['cause']} · component: {d['component']} · "
           f"facts: {', '.join(d['tables'])}", ""]
    for head, body in d["sections"].items():
        out.append(head if head.endswith("?") else f"{head}:")
        out.extend("  " + line if line.strip() else "" for line in body.splitlines())
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _document(report: Report) -> dict[str, Any]:
    if report.document is None:
        raise ValueError(f"the {report.command} report carries no document")
    return report.document


def rules_text(report: Report) -> str:
    doc = _document(report)
    checks, sigs = doc["checks"], doc["signatures"]
    width = max((len(c["name"]) for c in checks), default=10)
    lines = [f"{len(checks)} checks (gpuvet rule CODE for one check's documentation)", ""]
    for c in checks:
        summary = " ".join(c["summary"].split())
        if len(summary) > 90:
            summary = summary[:87] + "..."
        lines.append(f"{c['code']}  {c['name']:<{width}}  {c['severity']:<8}  {summary}")
    if sigs:
        lines += ["", f"{len(sigs)} log signatures (kb/data/signatures.yaml)", ""]
        for s in sigs:
            lines.append(f"{s['id']}  {s['cause']}  {s['summary'][:90]}")
    return "\n".join(lines) + "\n"


def rule_text(report: Report) -> str:
    if report.meta.get("kind") == "check":
        return rule_page(_document(report))
    return signature_page(_document(report))


def _plain(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {_plain(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return " and ".join(_plain(x) for x in v)
    return str(v)


def signature_page(d: dict[str, Any]) -> str:
    """A log signature as a person reads it: title, what it means, the fix, the patterns and examples
    as lists, the other readings in words (never Python reprs)."""
    out = [f"{d.get('id', '?')} {d.get('name', '')}".rstrip(), "", str(d.get("title", "")).strip()]
    out.append(f"cause: {d.get('cause', '')} ({d.get('component', '')}), weight {d.get('weight', '')}")
    for key, head in (("meaning", "What it means"), ("fix", "Fix")):
        if d.get(key):
            out += ["", f"{head}:", f"  {d[key]}"]
    if d.get("patterns"):
        out += ["", "Matches (regular expressions):"] + [f"  {p}" for p in d["patterns"]]
    others = list(d.get("alternatives") or []) + list(d.get("resolve") or [])
    if others:
        out += ["", "Other readings:"]
        for a in others:
            when = f" when {_plain(a['when'])}" if a.get("when") else ""
            note = f": {a['note']}" if a.get("note") else ""
            out.append(f"  - {a.get('cause', '?')} ({a.get('component', '?')}, weight {a.get('weight', '?')}){when}{note}")
    ex = d.get("examples") or {}
    for key, head in (("match", "Example lines it matches:"), ("no_match", "Example lines it does not match:")):
        if ex.get(key):
            out += ["", head] + [f"  {x}" for x in ex[key]]
    refs = [d["source"]] if d.get("source") else []
    refs += [r for r in d.get("references") or [] if r not in refs]
    if refs:
        out += ["", "References:"] + [f"  {r}" for r in refs]
    shown = {"id", "name", "title", "cause", "component", "weight", "meaning", "fix", "patterns", "alternatives",
             "resolve", "examples", "source", "references"}
    rest = {k: v for k, v in d.items() if k not in shown and v not in (None, "", [], {})}
    if rest:
        out += [""] + [f"{k}: {_plain(v)}" for k, v in rest.items()]
    return "\n".join(out) + "\n"


def kb_info_text(report: Report) -> str:
    doc = _document(report)
    out = [f"gpuvet knowledge base {doc['version']} ({doc['date']})", ""]
    for name, info in doc["tables"].items():
        out.append(f"{name}: {info['entries']} entries")
        for key, val in info.items():
            if key in ("entries", "description"):
                continue
            if isinstance(val, dict):
                val = "; ".join(f"{k2}: {', '.join(map(str, v2)) if isinstance(v2, list) else v2}" for k2, v2 in val.items())
            elif isinstance(val, list):
                val = ", ".join(map(str, val))
            out.append(f"  {key}: {val}")
    return "\n".join(out) + "\n"


def recommend_text(report: Report) -> str:
    result = report.extra
    lines: list[str] = []
    m = result["machine"]
    gpus = ", ".join(f"{g['name']} ({g['arch']})" for g in m["gpus"]) or "no GPU"
    drv = f"driver {m['driver']} (CUDA {m['driver_cuda'] or '?'})" if m["driver"] else "driver: not known"
    lines.append(f"Machine: {gpus}; {drv}; Python {m['python'] or '?'}; glibc {m['glibc'] or '?'}")
    rec = result["recommendation"]
    if rec is None:
        lines.append("No torch build in the knowledge base is known to work here.")
    else:
        lines.append(f"Recommended: torch {rec['torch']} ({rec['variant']})")
        lines.append(f"  {rec['install']}")
        if rec.get("note"):
            lines.append(f"  note: {rec['note']}")
        lines.append(f"  source: {rec['source']}")
    for alt in result["alternatives"]:
        lines.append(f"Also works: torch {alt['torch']} ({alt['variant']}): {alt['install']}")
    inst = result.get("installed")
    if inst:
        state = "works with this machine" if inst["fits"] else "does not fit: " + "; ".join(inst["why"])
        lines.append(f"Installed: torch {inst['torch']} ({inst['variant']}) {state}")
    for s in result["skipped_newer"][:6]:
        lines.append(f"Skipped newer: torch {s['torch']} ({s['variant']}): {'; '.join(s['why'])}")
    for n in result["notes"]:
        lines.append(f"Note: {n}")
    return "\n".join(lines) + "\n"


# command -> its terminal view; commands not here are finding reports (render.terminal's table)
TEXT_VIEWS: dict[str, Callable[[Report], str]] = {
    "rules": rules_text, "rule": rule_text, "kb-info": kb_info_text, "recommend": recommend_text,
}
# commands whose JSON is the document itself (not the report envelope)
JSON_DOCUMENTS = ("rules", "rule", "kb-info")


def document_json(report: Report) -> str:
    default = str if report.command == "rule" or report.command == "kb-info" else None
    return json.dumps(_document(report), indent=2, default=default) + "\n"
