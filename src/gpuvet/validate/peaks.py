"""Measured throughput and bandwidth against the GPU model's expected peaks (KB table gpu_peaks)."""
from __future__ import annotations

import re
from typing import Any

from gpuvet.model import Evidence, Finding, Outcome

from .findings import finding

FAR_BELOW = 0.5  # under half the reference is "far below"
METRICS = {"bandwidth-copy": "bandwidth_tbs"}
METRICS.update({f"matmul-tflops-{d}": d for d in ("fp32", "tf32", "fp16", "bf16", "fp8")})


def match_model(device_name: str, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    best, best_len = None, 0
    for e in entries:
        for n in e["names"]:
            if re.search(rf"(?<![A-Za-z0-9]){re.escape(n)}(?![A-Za-z0-9])", device_name, re.I) and len(n) > best_len:
                best, best_len = e, len(n)
    return best


def peak_rows(cases: list[dict[str, Any]], device_name: str | None, entries: list[dict[str, Any]]):
    """(rows, findings): one row per bench metric with its reference; VAL011 where far below."""
    rows: list[dict[str, Any]] = []
    findings: list[Finding] = []
    model = match_model(device_name or "", entries) if device_name and device_name != "cpu" else None
    for case in cases:
        for name, m in (case.get("metrics") or {}).items():
            key = METRICS.get(name)
            if key is None or m.get("value") is None:
                continue
            row = {"case": case["case"], "metric": name, "value": m["value"], "unit": m.get("unit")}
            if model is None:
                row["reference"] = None
                rows.append(row)
                continue
            measured = (model.get("measured") or {}).get(key)
            spec = (model.get("spec") or {}).get(key)
            ref, what = (measured, "measured ceiling") if measured else (spec, "vendor peak")
            row.update(spec=spec, measured_ceiling=measured, reference=ref, reference_kind=what,
                       fraction=(m["value"] / ref) if ref else None, source=model.get("source"))
            rows.append(row)
            if not ref:
                continue
            frac = m["value"] / ref
            title = (f"{case['case']}: {name} {m['value']:.4g} {m.get('unit')} is {frac * 100:.0f}% of the "
                     f"{model['names'][0]} {what} ({ref:g})")
            ev = [Evidence(f"vendor peak {spec:g}" if spec else "vendor peak not in the KB", source=model.get("source", "")),
                  Evidence(f"measured ceiling {measured:g}: {model.get('measured_note', '')}" if measured else
                           "no measured ceiling in the KB for this model", source="kb gpu_peaks")]
            findings.append(finding("VAL011", Outcome.FAILED if frac < FAR_BELOW else Outcome.PASSED, title, evidence=ev))
    return rows, findings
