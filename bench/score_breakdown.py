#!/usr/bin/env python3
"""Per-platform and per-cause breakdown of a ../shared/benchmarks/score_incidents.py result.

usage: python3 bench/score_breakdown.py SCORE.json CASE_DIR [CASE_DIR ...] [--md OUT.md]

score_incidents.py's --json output holds, per case id, the labelled cause, gpuvet's ranked causes and whether
top-1 / top-3 were right; it does not know the platform. This joins that with the cases' `platform` field and
prints top-1 / top-3 overall, per platform and per cause (recall), and the cases that got no diagnosis.
Nothing here runs gpuvet: it only re-reads a score that was already taken.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import yaml


def pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("score")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--md", help="also write the tables as Markdown here")
    a = ap.parse_args(argv)
    try:
        score = json.loads(Path(a.score).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"score_breakdown: cannot read {a.score}: {exc}", file=sys.stderr)
        return 2
    platform: dict[str, str] = {}
    for d in a.dirs:
        for p in sorted(Path(d).glob("*.yaml")):
            case = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
            platform[str(case.get("id"))] = str(case.get("platform") or "unknown")
    groups: dict[str, dict[str, list]] = {"platform": defaultdict(list), "cause": defaultdict(list)}
    rows = score.get("cases", [])
    for c in rows:
        groups["platform"][platform.get(c["id"], "unknown")].append(c)
        groups["cause"][c["truth"]].append(c)
    causes = groups["cause"]
    # cause-balanced (macro) recall: the mean of the per-cause recalls (`none` counted as a cause), the nearer proxy of
    # a judged set that holds every cause at a similar rate (bench/incident_cv.py prints the same number)
    macro1 = sum(sum(c["top1"] for c in cs) / len(cs) for cs in causes.values()) / len(causes) if causes else 0.0
    macro3 = sum(sum(c["top3"] for c in cs) / len(cs) for cs in causes.values()) / len(causes) if causes else 0.0
    lines = [f"cases: {len(rows)}   top-1: {pct(sum(c['top1'] for c in rows), len(rows))}   "
             f"top-3: {pct(sum(c['top3'] for c in rows), len(rows))}   "
             f"no diagnosis on a stack case: {sum(1 for c in rows if not c.get('predicted') and c['truth'] != 'none')}   "
             f"cause-balanced top-1 / top-3: {100 * macro1:.1f}% / {100 * macro3:.1f}% ({len(causes)} causes)", ""]
    for axis in ("platform", "cause"):
        lines += [f"| {axis} | cases | top-1 | top-3 |", "|---|---:|---:|---:|"]
        for key in sorted(groups[axis]):
            cs = groups[axis][key]
            t1, t3 = sum(c["top1"] for c in cs), sum(c["top3"] for c in cs)
            lines.append(f"| {key} | {len(cs)} | {t1}/{len(cs)} ({pct(t1, len(cs))}) | {t3}/{len(cs)} ({pct(t3, len(cs))}) |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.md:
        Path(a.md).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
