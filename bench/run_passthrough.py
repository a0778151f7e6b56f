"""`gpuvet run` against the bare command, in the same run: pass-through throughput and overhead on a
log-heavy job.

    python bench/run_passthrough.py [--mb 512] [--lines 1000000] [--repeat 3] [--out bench/results]

* throughput: a child writes ``--mb`` MiB to stdout in 64 KiB blocks; the bench reads it from a pipe
  (bare: the child's pipe; wrapped: gpuvet run's stdout) and discards it.  MB/s = bytes / wall time.
* log-heavy job: a child prints ``--lines`` short training-log lines (``print`` per step, as training
  scripts do) with a little arithmetic per step; overhead = (wrapped - bare) / bare wall time.

Both run ``--repeat`` times, alternating bare and wrapped; the medians are reported.  Results (JSON and
Markdown, with the machine) go to ``--out``.  The child exits 0, so no bundle or diagnosis is made: this
measures the pass-through itself (gpuvet's start-up included).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable

WRITER = """import os, sys
block = (b"x" * 127 + b"\\n") * 512  # 64 KiB of 128-byte lines
n = int(sys.argv[1]) * 16
w = sys.stdout.buffer.raw.write if hasattr(sys.stdout.buffer, "raw") else sys.stdout.buffer.write
for _ in range(n):
    view = memoryview(block)
    while view:
        view = view[w(view):]
"""

LOGGER = """import sys
n = int(sys.argv[1])
acc = 0.0
for step in range(n):
    acc += (step % 97) * 1e-3
    print(f"[rank0] step {step} | loss {2.5 - acc / (step + 1):.4f} | lr 3.0e-04 | tok/s {12000 + step % 500}")
"""


def _time(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert p.stdout is not None
    total = 0
    while True:
        chunk = p.stdout.read1(1 << 20) if hasattr(p.stdout, "read1") else p.stdout.read(1 << 20)
        if not chunk:
            break
        total += len(chunk)
    rc = p.wait()
    took = time.perf_counter() - t
    if rc != 0:
        raise SystemExit(f"{argv[:4]}... exited {rc}")
    return took, total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=512)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--name", default="")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    gpuvet = [PY, "-m", "gpuvet", "run", "--no-here", "--"]
    cases = {"throughput": [PY, "-c", WRITER, str(a.mb)], "log_heavy": [PY, "-c", LOGGER, str(a.lines)]}
    res: dict[str, dict] = {}
    for name, argv in cases.items():
        bare, wrapped, nbytes = [], [], 0
        for _ in range(a.repeat):
            t, nbytes = _time(argv, env)
            bare.append(t)
            t, n2 = _time(gpuvet + argv, env)
            wrapped.append(t)
            assert n2 == nbytes, (name, n2, nbytes)  # every byte passed through
        b, w = statistics.median(bare), statistics.median(wrapped)
        res[name] = {"bytes": nbytes, "bare_s": [round(x, 3) for x in bare], "gpuvet_s": [round(x, 3) for x in wrapped],
                     "bare_median_s": round(b, 3), "gpuvet_median_s": round(w, 3),
                     "bare_mb_s": round(nbytes / 2**20 / b, 1), "gpuvet_mb_s": round(nbytes / 2**20 / w, 1),
                     "overhead_pct": round(100 * (w - b) / b, 1)}
        print(f"{name}: bare {b:.2f}s, gpuvet run {w:.2f}s ({res[name]['gpuvet_mb_s']} MB/s vs "
              f"{res[name]['bare_mb_s']} MB/s bare; overhead {res[name]['overhead_pct']}%)", flush=True)
    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine(),
               "load_avg_at_end": [round(x, 2) for x in os.getloadavg()]}
    doc = {"machine": machine, "params": {"mb": a.mb, "lines": a.lines, "repeat": a.repeat}, "results": res,
           "goal": {"throughput_mb_s": 100, "log_heavy_overhead_pct": 10}}
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "run_passthrough" + (f"-{a.name}" if a.name else ""))
    with open(stem + ".json", "w") as fh:
        json.dump(doc, fh, indent=2)
    t, l = res["throughput"], res["log_heavy"]
    with open(stem + ".md", "w") as fh:
        fh.write(f"# gpuvet run pass-through ({machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']})\n\n"
                 f"Medians of {a.repeat} alternating runs; load average at the end {machine['load_avg_at_end']}.\n\n"
                 "| case | bare | under `gpuvet run` | |\n|---|---|---|---|\n"
                 f"| {a.mb} MiB in 64 KiB blocks | {t['bare_median_s']} s ({t['bare_mb_s']} MB/s) | "
                 f"{t['gpuvet_median_s']} s ({t['gpuvet_mb_s']} MB/s) | goal >= 100 MB/s |\n"
                 f"| {a.lines:,} log lines ({l['bytes'] / 2**20:.0f} MiB) | {l['bare_median_s']} s | {l['gpuvet_median_s']} s | "
                 f"overhead {l['overhead_pct']}% (goal < 10%) |\n")
    print(f"wrote {stem}.json and {stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
