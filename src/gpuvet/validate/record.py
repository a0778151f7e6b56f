"""The run record: one validation or bench run as plain data (what the store keeps and HTML shows)."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

SCHEMA = "gpuvet-validate/1"
BAD = ("failed", "error", "crashed", "timeout", "framework-error", "framework-timeout")


def summary(cases: list[dict[str, Any]]) -> dict[str, Any]:
    c = Counter(r["status"] for r in cases)
    return {"cases": len(cases), **dict(sorted(c.items())),
            "checks": sum(len(r.get("checks") or []) for r in cases),
            "checks_failed": sum(1 for r in cases for ch in (r.get("checks") or []) if not ch.get("ok"))}


def status(cases: list[dict[str, Any]]) -> str:
    return "failed" if any(r["status"] in BAD for r in cases) else "ok"


def from_report_json(text: str, origin: str) -> dict[str, Any]:
    """A run record from a saved ``--format json`` report (its ``validate`` key) or a bare record."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{origin}: not JSON ({exc})") from None
    if isinstance(doc, dict) and isinstance(doc.get("validate"), dict):
        doc = doc["validate"]
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise ValueError(f"{origin}: not a gpuvet validate/bench report (no 'cases')")
    return doc


def from_store(rec: Any) -> dict[str, Any]:
    """A run record from a store RunRecord."""
    meta = dict(rec.meta or {})
    return {"schema": SCHEMA, "kind": rec.kind, "level": rec.level, "run_id": rec.id, "snapshot_id": rec.snapshot_id,
            "started_at": rec.started_at, "finished_at": rec.finished_at, "host": rec.host,
            "cases": list(rec.results or []), **{k: v for k, v in meta.items() if k not in ("cases",)}}
