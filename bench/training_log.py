#!/usr/bin/env python3
"""A realistic training log built from real captured lines, for prefilter and stdin speed measurements.

The lines come from the logs users posted (the ``inputs.log`` of the tuning cases: dev, heldout, new..new6 and
new7/tuning; never a frozen half) and from this project's own captured runs (tests/fixtures/real/**/output.log).
Only *chatter* is kept: lines of a run that is going on (progress bars, loss and step lines, logging INFO and
WARNING lines, NCCL INFO, framework warnings), not error lines (``logs/fallback.is_error_line``).  The log is those
lines drawn at random (seeded) with every run of digits replaced by random digits of the same length, so no two
steps read alike, then one real failure at the end (a CUDA OOM, as torch prints it).

usage: bench/training_log.py OUT [--size-mib 4] [--seed 7]   (prints: lines, distinct source lines, bytes)
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHATTER = re.compile(r"it/s\b|s/it\b|\bloss\b|\bstep\b|\bepoch\b|\bINFO\b|\bWARNING\b|\bWarning\b|NCCL INFO|%\||"
                     r"\bwarn\b|\blr\b|\btokens?/s\b|\bsamples?/s\b|\bDEBUG\b|\bI\d{4} |\bW\d{4} ", re.I)
FAILURE = ("Traceback (most recent call last):\n"
           '  File "train.py", line 812, in <module>\n'
           "    loss.backward()\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of "
           "79.10 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.88 GiB memory in "
           "use. Of the allocated memory 71.02 GiB is allocated by PyTorch, and 5.34 GiB is reserved by PyTorch but "
           "unallocated.\n")


def case_files() -> list[Path]:
    out = sorted((ROOT.parent / "shared" / "benchmarks" / "incidents" / "dev").glob("*.yaml"))
    for d in sorted(HERE.glob("incidents-*")):
        for p in sorted(d.rglob("*.yaml")):
            rel = p.relative_to(d).parts
            if "frozen" in rel and d.name in ("incidents-new8", "incidents-new9"):
                continue  # not to be read (new8/frozen: fresh checks; new9/frozen: HELD_OUT)
            out.append(p)
    return out


def chatter_lines() -> list[str]:
    import yaml

    from gpuvet.logs.fallback import is_error_line
    from gpuvet.logs.normalize import normalize

    seen: dict[str, None] = {}
    texts: list[str] = []
    for p in case_files():
        try:
            doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        except Exception:
            continue
        log = ((doc or {}).get("inputs") or {}).get("log") if isinstance(doc, dict) else None
        if isinstance(log, str):
            texts.append(log)
    for p in sorted((ROOT / "tests" / "fixtures" / "real").rglob("output.log")):
        texts.append(p.read_text(encoding="utf-8", errors="replace"))
    for text in texts:
        for line in text.splitlines():
            if 12 <= len(line) <= 400 and CHATTER.search(line) and not is_error_line(normalize(line)):
                seen.setdefault(line, None)
    return list(seen)


def make(out: Path, size: int, seed: int = 7) -> tuple[int, int, int]:
    lines = chatter_lines()
    rnd = random.Random(seed)
    digits = re.compile(r"[0-9]+")

    def vary(m: re.Match[str]) -> str:
        s = m.group(0)
        return "".join(rnd.choice("0123456789") for _ in s)

    n = written = 0
    with open(out, "w", encoding="utf-8") as fh:
        while written < size:
            line = digits.sub(vary, rnd.choice(lines)) + "\n"
            fh.write(line)
            written += len(line.encode())
            n += 1
        fh.write(FAILURE)
    return n + FAILURE.count("\n"), len(lines), out.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--size-mib", type=float, default=4)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    n, distinct, size = make(a.out, int(a.size_mib * 2**20), a.seed)
    print(f"{a.out}: {n} lines from {distinct} distinct captured lines, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
