"""JSON output: a versioned, documented document (docs/report-schema.json)."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

from gpuvet.model import Report

SCHEMA_ID = "https://gpuvet.dev/schema/report/1"
SCHEMA_VERSION = 1


def report_dict(report: Report) -> dict[str, Any]:
    counts = Counter(f.outcome.value for f in report.findings)
    doc: dict[str, Any] = {
        "$schema": SCHEMA_ID,
        "schema_version": SCHEMA_VERSION,
        "command": report.command,
        "meta": report.meta,
        "score": report.score,
        "deductions": [{"code": d.code, "points": d.points, "reason": d.reason} for d in report.deductions],
        "summary": {k: counts.get(k, 0) for k in ("failed", "unknown", "passed", "skipped")},
        "findings": [f.to_dict() for f in report.findings],
    }
    if report.header is not None:
        doc["header"] = report.header.to_dict()
    doc.update(report.extra)
    if report.facts is not None:
        doc["facts"] = report.facts.to_dict()
        doc["probe_errors"] = [e.to_dict() for e in report.facts.errors]
    return doc


def render_json(report: Report, **_: Any) -> str:
    from .listing import JSON_DOCUMENTS, document_json

    if report.command in JSON_DOCUMENTS:  # rules, rule, kb info: the document itself
        return document_json(report)
    return json.dumps(report_dict(report), indent=2, sort_keys=False, default=str) + "\n"
