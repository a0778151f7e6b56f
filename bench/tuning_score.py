#!/usr/bin/env python3
"""In-process score of the shipped diagnosis (signatures, facts, the shipped learned model) on the tuning incidents.

The same pipeline and metric as ``../shared/benchmarks/score_incidents.py`` with ``gpuvet diagnose --format json``
(scan -> facts -> checks -> rank, env text then log), without a process per case, so both trees of a
before/after comparison can be scored in a minute on a loaded machine.  The shipped model was trained on these
very cases: the numbers are tuned-on (optimistic); bench/incident_cv.py gives the grouped cross-validation
estimate.  bench/incidents-new9/frozen is refused (incident_cv.load_cases).

    .venv/bin/python bench/tuning_score.py [--json OUT] [--src TREE/src] [--platform P] [--rules]
                                           [--compare OLD.json] [DIR ...]

``--src DIR`` scores another tree's code (the src/ of a checkout of main, for a before/after): incident_cv puts
this tree's src/ first on sys.path when imported, so PYTHONPATH alone does not reach another tree (day 5,
d11c).  ``--platform`` keeps the cases of one platform (``rocm``, ``cuda``, ...; ``!rocm`` keeps all but ROCm).
``--rules`` ranks each case a second time without the learned model (signatures, facts, vocabulary fallback:
``learned=None``) and reports both (what bench/nonamd_score.py did, before it was folded in here).
``--compare OLD.json`` (a ``--json`` of an earlier run) lists the cases whose top-1 / top-3 changed.
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


def use_src(src: str) -> Path:
    """Make ``import gpuvet`` load the tree at ``src`` (a ``.../src`` directory): the gpuvet modules already
    imported (through train_fallback / incident_cv) are dropped and ``src`` goes first on sys.path.
    Returns the package directory, so the caller can say which code it scores."""
    path = Path(src).resolve()
    if not (path / "gpuvet" / "__init__.py").is_file():
        raise SystemExit(f"--src {src}: no gpuvet package there (give the src/ directory of a checkout)")
    for name in [m for m in sys.modules if m == "gpuvet" or m.startswith("gpuvet.")]:
        del sys.modules[name]
    sys.path.insert(0, str(path))
    import gpuvet

    return Path(gpuvet.__file__).resolve().parent


def _keep(platform: str | None, want: str | None) -> bool:
    if not want:
        return True
    return platform != want[1:] if want.startswith("!") else platform == want


def _line(label: str, s: dict) -> str:
    plats = "".join(f"  {p} {s[p]['top1']:.1%}/{s[p]['top3']:.1%}" for p in ("rocm", "cuda") if p in s)
    return (f"{label}cases {s['cases']}  top-1 {s['top1']:.1%}  top-3 {s['top3']:.1%}{plats}  no diagnosis "
            f"{s['no_diagnosis']}  none right {s['none_right']}  cause-balanced {s['macro_top1']:.1%}/{s['macro_top3']:.1%}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--src", help="the src/ directory of the tree whose code is scored (default: this tree's)")
    ap.add_argument("--platform", help="keep one platform's cases (rocm, cuda, ...); '!rocm' keeps all but ROCm")
    ap.add_argument("--rules", action="store_true", help="also rank without the learned model and report both")
    ap.add_argument("--compare", help="a --json of an earlier run: list the cases whose top-1/top-3 changed")
    args = ap.parse_args(argv)
    if args.src:
        print(f"scoring {use_src(args.src)}")
    dirs = args.dirs or [str(ROOT / d) for d in tf.TUNING_DIRS if (ROOT / d).is_dir()]
    from gpuvet.logs.rank import rank

    modes = [("shipped", "shipped")] + ([("rules", None)] if args.rules else [])
    rows = []
    for case in cv.load_cases(dirs):
        if not _keep(case.get("platform"), args.platform):
            continue
        scan, fs = cv.analyse(case)
        row = {"id": case["id"], "set": cv._set_name(case["_file"]), "platform": case.get("platform"),
               "truth": case["label"]["cause"]}
        for mode, learned in modes:
            causes = [d.cause for d in (rank(scan, fs) if learned == "shipped" else rank(scan, fs, learned=None))]
            h1, h3 = cv.hit(case["label"]["cause"], causes)
            if mode == "shipped":  # the row's own keys, as before --rules existed
                row.update(predicted=causes[:3], top1=h1, top3=h3)
            else:
                row[mode] = {"predicted": causes[:3], "top1": h1, "top3": h3}
        rows.append(row)
    if not rows:
        raise SystemExit("no cases (check the directories and --platform)")
    s = cv.summarise(rows)
    print(_line("", s))
    summary: dict = {"summary": s}
    if args.rules:
        rules_rows = [dict(r, **r["rules"]) for r in rows]
        summary["summary_rules"] = cv.summarise(rules_rows)
        print(_line("rules alone: ", summary["summary_rules"]))
    per = defaultdict(lambda: [0, 0, 0, 0, 0])
    for r in rows:
        p = per[r["truth"]]
        p[0] += r["top1"]
        p[1] += r["top3"]
        p[2] += 1
        if args.rules:
            p[3] += r["rules"]["top1"]
            p[4] += r["rules"]["top3"]
    for c, (a, b, n, ra, rb) in sorted(per.items()):
        print(f"    {c:26s} {a:3d} / {b:3d} of {n:3d}" + (f"    rules alone {ra:3d} / {rb:3d}" if args.rules else ""))
    if args.compare:
        old = {r["id"]: r for r in json.loads(Path(args.compare).read_text())["cases"]}
        for r in rows:
            o = old.get(r["id"])
            for mode, _ in modes:
                new_r = r if mode == "shipped" else r[mode]
                old_r = o if (o is None or mode == "shipped") else o.get(mode)
                if old_r is None or "top1" not in old_r:
                    continue
                if (old_r["top1"], old_r["top3"]) != (new_r["top1"], new_r["top3"]):
                    sign = "+" if (new_r["top1"], new_r["top3"]) > (old_r["top1"], old_r["top3"]) else "-"
                    print(f"  {sign} {mode:7s} {r['id']:14s} {r['truth']:24s} {old_r['predicted']} -> "
                          f"{new_r['predicted']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({**summary, "cases": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
