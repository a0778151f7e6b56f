#!/usr/bin/env python3
"""In-process score of the non-AMD tuning incidents (platform != rocm), rules alone and with the shipped model.

The same pipeline and metric as bench/tuning_score.py (incident_cv.analyse / hit), run once per case and ranked
twice: ``rules`` (signatures, facts, vocabulary fallback; learned=None) and ``shipped`` (with the packaged learned
model, which was trained on these very cases: optimistic).  Both are tuned-on numbers: the signatures were written
from these cases too.  ``--compare OLD.json`` prints the cases whose rules-only top-1 changed.
bench/incidents-new6/frozen is refused (incident_cv.load_cases).

    .venv/bin/python bench/nonamd_score.py [--json OUT] [--compare OLD.json] [--platform cuda] [--src TREE/src] [DIR ...]

``--src`` scores another tree's code (a checkout of main for a before/after): incident_cv puts this tree's src/
first on sys.path, so PYTHONPATH alone does not reach it.
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
    ap.add_argument("--compare")
    ap.add_argument("--platform", default="!rocm", help="platform to keep; '!rocm' (default) keeps all but ROCm")
    ap.add_argument("--src", help="the src/ directory of the tree to score (default: this one)")
    args = ap.parse_args(argv)
    if args.src:
        for m in [m for m in sys.modules if m == "gpuvet" or m.startswith("gpuvet.")]:
            del sys.modules[m]
        sys.path.insert(0, str(Path(args.src).resolve()))
    dirs = args.dirs or [str(ROOT / d) for d in tf.TUNING_DIRS if (ROOT / d).is_dir()]
    import gpuvet
    from gpuvet.logs.rank import rank

    print(f"scoring {Path(gpuvet.__file__).parent}")

    def keep(p):
        return p != "rocm" if args.platform == "!rocm" else p == args.platform

    rows = []
    for case in cv.load_cases(dirs):
        if not keep(case.get("platform")):
            continue
        scan, fs = cv.analyse(case)
        r = {"id": case["id"], "set": cv._set_name(case["_file"]), "platform": case.get("platform"),
             "truth": case["label"]["cause"]}
        for mode, learned in (("rules", None), ("shipped", "shipped")):
            causes = [d.cause for d in rank(scan, fs, learned=learned)]
            h1, h3 = cv.hit(r["truth"], causes)
            r[mode] = {"predicted": causes[:3], "top1": h1, "top3": h3}
        rows.append(r)
    n = len(rows)
    for mode in ("rules", "shipped"):
        t1 = sum(r[mode]["top1"] for r in rows)
        t3 = sum(r[mode]["top3"] for r in rows)
        nd = sum(1 for r in rows if not r[mode]["predicted"] and r["truth"] != "none")
        nr = [r for r in rows if r["truth"] == "none"]
        print(f"{mode:8s} cases {n}  top-1 {t1 / n:.1%} ({t1})  top-3 {t3 / n:.1%} ({t3})  no diagnosis {nd}  "
              f"none right {sum(r[mode]['top1'] for r in nr)}/{len(nr)}")
    per = defaultdict(lambda: [0, 0, 0, 0, 0])
    for r in rows:
        p = per[r["truth"]]
        p[0] += r["rules"]["top1"]
        p[1] += r["rules"]["top3"]
        p[2] += r["shipped"]["top1"]
        p[3] += r["shipped"]["top3"]
        p[4] += 1
    print(f"    {'cause':26s} rules t1/t3   shipped t1/t3   of")
    for c, (a, b, s1, s3, k) in sorted(per.items()):
        print(f"    {c:26s} {a:4d} /{b:4d}     {s1:4d} /{s3:4d}     {k:4d}")
    if args.compare:
        old = {r["id"]: r for r in json.loads(Path(args.compare).read_text())["cases"]}
        for r in rows:
            o = old.get(r["id"])
            if o is None:
                continue
            for mode in ("rules", "shipped"):
                if o[mode]["top1"] != r[mode]["top1"] or o[mode]["top3"] != r[mode]["top3"]:
                    sign = "+" if (r[mode]["top1"], r[mode]["top3"]) > (o[mode]["top1"], o[mode]["top3"]) else "-"
                    print(f"  {sign} {mode:7s} {r['id']:14s} {r['truth']:24s} {o[mode]['predicted']} -> "
                          f"{r[mode]['predicted']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"cases": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
