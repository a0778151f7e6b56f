"""Compare two runs (a baseline and a new one): per-case deltas against a noise band.

The noise band comes from the repeated timings inside each run (every timed metric carries its samples):
a change is a regression only when it is larger than the spread of both runs added together, and never
below ``MIN_BAND`` (10 %): the band is ``SPREAD_K`` (3) times the two runs' spreads added, because
run-to-run noise is wider than the spread inside one run.  A metric without samples gets ``SINGLE_BAND``.  A correctness failure in the
new run is always a regression, whatever the timings say.
"""
from __future__ import annotations

import statistics
from typing import Any

from gpuvet.model import Evidence, Finding, Outcome

from .findings import finding

MIN_BAND = 0.10
SPREAD_K = 3.0
# on the CPU (CI's small runs on shared cores) a change of less than this many units is scheduler noise: one
# preemption costs a time slice of a few ms, so a CPU timing of about a millisecond can double from one run to the
# next with nothing changed (seen on the 2-CPU VM: 0.54 -> 0.76 ms under load 13; 0.546 -> 1.052 ms in a CI run,
# day 7, when the floor was 0.5 ms)
CPU_ABS_FLOOR = {"ms": 2.0, "us": 50.0}
RUNS_K = 1.5  # the spread of the medians of earlier runs on the same stack, when there are some
SINGLE_BAND = 0.25
BAD = ("failed", "error", "crashed", "timeout", "framework-error", "framework-timeout")


def _spread(m: dict[str, Any]) -> tuple[float, float, float]:
    """(median, relative half-spread below, relative half-spread above) of a metric."""
    med = float(m.get("value") or 0.0)
    s = sorted(float(x) for x in (m.get("samples") or []) if x == x)
    if len(s) < 3 or med == 0:
        return med, SINGLE_BAND / 2, SINGLE_BAND / 2
    med = statistics.median(s)
    lo = s[max(0, int(round(0.1 * (len(s) - 1))))]
    hi = s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]
    return med, (med - lo) / abs(med), (hi - med) / abs(med)


def compare_metric(base: dict[str, Any], new: dict[str, Any], history: list[float] | None = None,
                   abs_floor: float | None = None) -> dict[str, Any]:
    """``history``: this metric's medians in earlier runs on the same stack (the baseline's siblings);
    their spread widens the band, so run-to-run noise measured on this machine is never a regression."""
    bmed, blo, bhi = _spread(base)
    nmed, nlo, nhi = _spread(new)
    higher = (new.get("better") or base.get("better")) == "higher"
    delta = (nmed - bmed) / abs(bmed) if bmed else 0.0
    # worse direction: base's spread on the worse side plus new's spread on the better side, times
    # SPREAD_K (run-to-run noise is wider than the spread inside one run), never under MIN_BAND
    band = max(MIN_BAND, SPREAD_K * ((bhi + nlo) if not higher else (blo + nhi)))
    runs_spread = None
    vals = [v for v in (history or []) if isinstance(v, (int, float))] + [bmed]
    if len(vals) >= 2 and statistics.median(vals):
        med = statistics.median(vals)
        runs_spread = (max(vals) - min(vals)) / abs(med)
        band = max(band, RUNS_K * runs_spread)
    worse = -delta if higher else delta
    verdict = "regression" if worse > band else ("improvement" if -worse > band else "noise")
    if abs_floor is not None and abs(nmed - bmed) < abs_floor:
        verdict = "noise"  # under the timer's resolution on this device
    out = {"base": bmed, "new": nmed, "unit": new.get("unit") or base.get("unit"), "delta": delta, "band": band,
           "better": "higher" if higher else "lower", "verdict": verdict}
    if runs_spread is not None:
        out["runs"] = len(vals)
        out["runs_spread"] = runs_spread
    return out


def compare_runs(base: dict[str, Any], new: dict[str, Any],
                 history: list[dict[str, Any]] | None = None) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Rows (one per case metric and one per case status) and the findings they make.  ``history``:
    earlier run records on the baseline's stack; their medians give the run-to-run noise band."""
    bcases = {c["case"]: c for c in base.get("cases", [])}
    on_cpu = (new.get("framework") or {}).get("device") == "cpu"
    past: dict[tuple[str, str], list[float]] = {}
    for run in history or []:
        for c in run.get("cases", []):
            for mname, m in (c.get("metrics") or {}).items():
                if isinstance(m.get("value"), (int, float)):
                    past.setdefault((c["case"], mname), []).append(float(m["value"]))
    rows: list[dict[str, Any]] = []
    findings: list[Finding] = []
    for nc in new.get("cases", []):
        name = nc["case"]
        bc = bcases.get(name)
        bstatus = bc["status"] if bc else None
        rows.append({"case": name, "metric": "(status)", "base": bstatus, "new": nc["status"],
                     "verdict": "regression" if nc["status"] in BAD else "same" if bstatus == nc["status"] else "changed"})
        if nc["status"] in BAD:
            also = " (it failed in the baseline too)" if bstatus in BAD else \
                (" (passed in the baseline)" if bstatus else " (not in the baseline)")
            findings.append(finding("VAL012", Outcome.FAILED, f"{name}: {nc['status']} now{also}",
                                    evidence=[Evidence(nc.get("error") or _first_failed(nc), source=name)]))
        if not bc:
            continue
        regressed = []
        for mname, nm in (nc.get("metrics") or {}).items():
            bm = (bc.get("metrics") or {}).get(mname)
            if not bm or bm.get("value") is None or nm.get("value") is None:
                continue
            floor = CPU_ABS_FLOOR.get(nm.get("unit", "")) if on_cpu else None
            r = compare_metric(bm, nm, past.get((name, mname)), floor)
            rows.append({"case": name, "metric": mname, **r})
            if r["verdict"] == "regression":
                regressed.append((mname, r))
        for mname, r in regressed:
            findings.append(finding(
                "VAL010", Outcome.FAILED,
                f"{name}: {mname} {_fmt(r['base'])} -> {_fmt(r['new'])} {r['unit']} ({r['delta'] * 100:+.1f}%, "
                f"noise band ±{r['band'] * 100:.0f}%)",
                evidence=[Evidence(f"baseline median {_fmt(r['base'])} {r['unit']}, now {_fmt(r['new'])} {r['unit']}; "
                                   f"{r['better']} is better", source=name)]))
        if not regressed and nc["status"] not in BAD and any(r["case"] == name and "band" in r for r in rows):
            findings.append(finding("VAL010", Outcome.PASSED, f"{name}: every timing within the noise band of the baseline"))
    return rows, findings


def _first_failed(case: dict[str, Any]) -> str:
    for c in case.get("checks", []):
        if not c.get("ok"):
            return f"{c['name']}: {c.get('detail') or c.get('err')}"
    return case.get("status", "")


def _fmt(x: float) -> str:
    return f"{x:.4g}"
