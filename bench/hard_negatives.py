#!/usr/bin/env python3
"""Hard negatives: does `gpuvet diagnose` blame the stack only when there is a stack problem?

Data: ../shared/benchmarks/external/pytracebert-wang-fse23-tracebacks/templates_fine_tuning.csv (732 Stack
Overflow tracebacks, label 1 = compatibility issue, Wang et al. FSE'23 via PyTraceBERT).  The GPU-related rows
are selected as the dataset README describes: the traceback mentions CUDA/cuDNN/cuBLAS/NCCL/libcudart/NVIDIA/GPU
(85 rows, 13 positives).  Each row's traceback (frames joined by [SEP]) is diagnosed in-process.

A second scoring uses bench/hard_negatives_review.csv: 17 label-0 rows whose error is plainly a GPU stack
problem (a missing CUDA runtime library the framework was built for, a CPU-only torch, no driver DLL, an NCCL
system error), reviewed one by one with the reason written down; every other row keeps the dataset's label.

"Stack problem" predicted = the top diagnosis exists and its component is not user-code (a capacity
out-of-memory is reported as memory-allocator / user-code: the workload, not the stack).

Reports precision / recall against the dataset labels, and lists every disagreement so a reader can judge
them: the dataset's label is "compatibility issue between components" (Wang et al.), which is narrower than
"stack problem" (e.g. a missing libcublas.so is labelled 1 in one post and 0 in another).

usage: bench/hard_negatives.py [--data DIR] [--out bench/results/hard_negatives.md]
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parent.parent / "shared/benchmarks/external/pytracebert-wang-fse23-tracebacks"
GPU_RE = re.compile(r"cuda|cudnn|cublas|nccl|libcudart|nvidia|gpu", re.I)


def load_rows(data: Path) -> list[dict]:
    with open(data / "templates_fine_tuning.csv", encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if GPU_RE.search(r["Templates"])]


def to_text(template: str) -> str:
    return "Traceback (most recent call last):\n" + "\n".join(p.strip() for p in template.split("[SEP]")) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "hard_negatives.md")
    ap.add_argument("--json", type=Path, default=HERE / "results" / "hard_negatives.json")
    args = ap.parse_args()
    if not (args.data / "templates_fine_tuning.csv").exists():
        print(f"dataset not found under {args.data}", file=sys.stderr)
        return 2
    from gpuvet.app.diagnose import diagnose_text

    rows = load_rows(args.data)
    review = {}
    rv = HERE / "hard_negatives_review.csv"
    if rv.exists():
        with open(rv, encoding="utf-8", newline="") as fh:
            review = {r["eventId"]: r for r in csv.DictReader(fh)}
    tp = fp = fn = tn = 0
    rtp = rfp = rfn = rtn = 0
    out_rows = []
    for r in rows:
        rep = diagnose_text(to_text(r["Templates"]), f"so-{r['post_id']}")
        diags = rep.extra["diagnoses"]
        stack = bool(diags) and diags[0]["component"] != "user-code"
        truth = r["label"].strip() == "1"
        tp += stack and truth
        fp += stack and not truth
        fn += (not stack) and truth
        tn += (not stack) and not truth
        eid = r.get("eventId", "")
        rtruth = review[eid]["stack_problem"] == "1" if eid in review else truth
        rtp += stack and rtruth
        rfp += stack and not rtruth
        rfn += (not stack) and rtruth
        rtn += (not stack) and not rtruth
        last = r["Templates"].split("[SEP]")[-1].strip()[:160]
        out_rows.append({"eventId": eid, "post_id": r["post_id"], "label": int(truth), "reviewed": int(rtruth),
                         "stack": stack,
                         "top": (diags[0]["cause"] + "/" + diags[0]["component"]) if diags else "-", "error": last})
    n = len(rows)
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    neg = tn + fp
    rprec = rtp / (rtp + rfp) if rtp + rfp else 1.0
    rrec = rtp / (rtp + rfn) if rtp + rfn else 0.0
    lines = [
        "# Hard negatives: PyTraceBERT / Wang et al. FSE'23 GPU tracebacks",
        "",
        f"GPU rows: {n} (positives {tp + fn}, negatives {neg}); command: `python3 bench/hard_negatives.py`",
        "",
        f"- stack problem predicted: {tp + fp}  (true positives {tp}, false positives {fp})",
        f"- **precision {prec:.3f}**, recall {rec:.3f}",
        f"- negatives left alone (no stack blame): {tn}/{neg} = {tn / neg if neg else 0:.3f}",
        "",
        f"With the reviewed labels (bench/hard_negatives_review.csv, {len(review)} label-0 rows that are plainly stack",
        f"problems; positives {rtp + rfn}, negatives {rtn + rfp}):",
        "",
        f"- stack problem predicted: {rtp + rfp}  (true positives {rtp}, false positives {rfp})",
        f"- **precision {rprec:.3f}**, recall {rrec:.3f}",
        f"- user-code negatives left alone: {rtn}/{rtn + rfp} = {rtn / (rtn + rfp) if rtn + rfp else 0:.3f}",
        "",
        "Every row where the prediction disagrees with the dataset label (reviewed = the label used in the second scoring):",
        "",
        "| event | post | label | reviewed | gpuvet top diagnosis | last traceback line |",
        "|---|---|---|---|---|---|",
    ]
    for o in out_rows:
        if o["stack"] != bool(o["label"]) or o["stack"] != bool(o["reviewed"]):
            err = o["error"].replace("|", "\\|")
            lines.append(f"| {o['eventId']} | {o['post_id']} | {o['label']} | {o['reviewed']} | {o['top']} | {err} |")
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.json.write_text(json.dumps({"precision": prec, "recall": rec, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
                                     "reviewed": {"precision": rprec, "recall": rrec, "tp": rtp, "fp": rfp,
                                                  "fn": rfn, "tn": rtn},
                                     "rows": out_rows}, indent=1), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
