#!/usr/bin/env python3
"""In-process score of the shipped diagnosis (signatures, facts, the shipped learned model) on the tuning incidents.

The same pipeline and metric as ``../shared/benchmarks/score_incidents.py`` with ``gpuvet diagnose --format json``
(scan -> facts -> checks -> rank, env text then log), without a process per case, so both trees of a
before/after comparison can be scored in a minute on a loaded machine (``PYTHONPATH=<other tree>/src`` scores
another tree's code).  The shipped model was trained on these very cases: the numbers are tuned-on
(optimistic); bench/incident_cv.py gives the grouped cross-validation estimate.
bench/incidents-new6/frozen is refused (incident_cv.load_cases).

    .venv/bin/python bench/tuning_score.py [--json OUT] [DIR ...]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import incident_cv as cv  # noqa: E402
import train_fallback as tf  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args(argv)
    dirs = args.dirs or [str(ROOT / d) for d in tf.TUNING_DIRS if (ROOT / d).is_dir()]
    from gpuvet.logs.rank import rank

    rows = []
    for case in cv.load_cases(dirs):
        scan, fs = cv.analyse(case)
        causes = [d.cause for d in rank(scan, fs)]
        h1, h3 = cv.hit(case["label"]["cause"], causes)
        rows.append({"id": case["id"], "set": cv._set_name(case["_file"]), "platform": case.get("platform"),
                     "truth": case["label"]["cause"], "predicted": causes[:3], "top1": h1, "top3": h3})
    s = cv.summarise(rows)
    print(f"cases {s['cases']}  top-1 {s['top1']:.1%}  top-3 {s['top3']:.1%}  rocm {s['rocm']['top1']:.1%}/"
          f"{s['rocm']['top3']:.1%}  cuda {s['cuda']['top1']:.1%}/{s['cuda']['top3']:.1%}  no diagnosis "
          f"{s['no_diagnosis']}  none right {s['none_right']}")
    per = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        per[r["truth"]][0] += r["top1"]
        per[r["truth"]][1] += r["top3"]
        per[r["truth"]][2] += 1
    for c, (a, b, n) in sorted(per.items()):
        print(f"    {c:26s} {a:3d} / {b:3d} of {n:3d}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"summary": s, "cases": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
