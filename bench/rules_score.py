#!/usr/bin/env python3
"""Rules-only and rules+shipped-model score of the tuning incidents, per case, for before/after comparisons (issue 9).

``rules``: signatures, facts, vocabulary fallback and tentative readings, no learned model (``rank(learned=None)``);
``model``: the same with the shipped learned model (tuned-on wherever the model was trained on the case).
``--platform rocm`` keeps one platform; ``--ids FILE`` keeps the case ids listed in FILE (one a line: the fresh cases
of a landing); ``--json OUT`` writes every case's ranking.  bench/incidents-new9/frozen is refused (incident_cv).

    .venv/bin/python bench/rules_score.py [--platform rocm] [--ids FILE] [--json OUT] [--misses] DIR ...
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import incident_cv as cv  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--platform")
    ap.add_argument("--ids")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--misses", action="store_true", help="print each rules top-1 miss")
    a = ap.parse_args(argv)
    from gpuvet.logs.rank import rank

    keep = set(Path(a.ids).read_text().split()) if a.ids else None
    rows = []
    for case in cv.load_cases(a.dirs):
        if a.platform and case.get("platform") != a.platform:
            continue
        if keep is not None and case["id"] not in keep:
            continue
        scan, fs = cv.analyse(case)
        truth = case["label"]["cause"]
        r = [d.cause for d in rank(scan, fs, learned=None)]
        m = [d.cause for d in rank(scan, fs)]
        rows.append({"id": case["id"], "platform": case.get("platform"), "truth": truth, "rules": r[:3],
                     "model": m[:3], "rules_hit": cv.hit(truth, r), "model_hit": cv.hit(truth, m)})
    n = len(rows)
    if not n:
        print("no cases")
        return 1
    for key in ("rules", "model"):
        t1 = sum(x[f"{key}_hit"][0] for x in rows)
        t3 = sum(x[f"{key}_hit"][1] for x in rows)
        silent = sum(1 for x in rows if not x[key] and x["truth"] != "none")
        print(f"{key:6s} cases {n}  top-1 {t1} ({t1 / n:.1%})  top-3 {t3} ({t3 / n:.1%})  silent on a stack case {silent}")
    per = defaultdict(lambda: [0, 0, 0, 0, 0])
    for x in rows:
        p = per[x["truth"]]
        p[0] += x["rules_hit"][0]
        p[1] += x["rules_hit"][1]
        p[2] += x["model_hit"][0]
        p[3] += x["model_hit"][1]
        p[4] += 1
    print(f"    {'cause':26s} rules t1/t3   model t1/t3   of")
    for c, (a1, a3, b1, b3, k) in sorted(per.items()):
        print(f"    {c:26s} {a1:4d} /{a3:4d}   {b1:4d} /{b3:4d}   {k:4d}")
    if a.misses:
        for x in rows:
            if not x["rules_hit"][0]:
                print(f"  MISS {x['id']:12s} {x['truth']:24s} rules={x['rules']} model={x['model']}")
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
