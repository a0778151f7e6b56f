"""SARIF 2.1.0 (the OASIS static-analysis format GitHub code scanning and most CI dashboards read):
one run, the rules that produced results, one result per failed finding, with its evidence file and
line when the finding points into one (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html)."""
from __future__ import annotations

import json
from typing import Any

from gpuvet.model import Outcome, Report, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.CRITICAL: "error", Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _location(report: Report, f) -> dict[str, Any] | None:
    path = report.meta.get("input") or ""
    line = next((e.line for e in f.evidence if e.line), None)
    if not path:
        path = next((e.source.split(" (")[0] for e in f.evidence if e.source.startswith("/")), "")
    if not path or path.startswith("<"):
        return None
    loc: dict[str, Any] = {"artifactLocation": {"uri": path.lstrip("./") if not path.startswith("/") else
                                                 "file://" + path}}
    if line:
        loc["region"] = {"startLine": int(line)}
    return {"physicalLocation": loc}


def render_sarif(report: Report, **_: Any) -> str:
    failed = [f for f in report.findings if f.outcome is Outcome.FAILED]
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for f in failed:
        if f.code not in rules:
            rules[f.code] = {"id": f.code, "name": f.name,
                             "shortDescription": {"text": f.name.replace("-", " ")},
                             "defaultConfiguration": {"level": LEVEL[f.severity]},
                             "properties": {"cause": f.cause, "component": f.component}}
        res: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": list(rules).index(f.code),
            "level": LEVEL[f.severity],
            "message": {"text": f.title + (f" ({f.why})" if f.why else "")},
            "properties": {"severity": f.severity.name.lower(),
                           "evidence": [e.text for e in f.evidence],
                           "fixes": [x.to_dict() for x in f.fixes]},
        }
        if f.acknowledged:
            res["suppressions"] = [{"kind": "external", "justification": f.acknowledged}]
        loc = _location(report, f)
        if loc:
            res["locations"] = [loc]
        results.append(res)
    kb = report.meta.get("kb") or {}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "gpuvet", "version": str(report.meta.get("gpuvet_version") or ""),
                            "rules": list(rules.values())}},
        "results": results,
        "properties": {"command": report.command, "score": report.score, "kb_version": kb.get("version"),
                       "coverage": report.meta.get("coverage"), "usable": report.extra.get("usable")},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, default=str) + "\n"
