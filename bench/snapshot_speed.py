"""`gpuvet snapshot` beside `gpuvet check`: wall and CPU time of each, alternated, N runs, medians.

usage: python bench/snapshot_speed.py [N] [--python PATH]   (writes Markdown to stdout)
The snapshot is stored in a fresh SQLite history in a temporary XDG data directory (its first run
creates the schema, so it is reported separately)."""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 7
    extra = sys.argv[sys.argv.index("--python"):][:2] if "--python" in sys.argv else []
    gpuvet = [sys.executable, "-m", "gpuvet"]
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "XDG_DATA_HOME": d, "NO_COLOR": "1"}
        first = timed(gpuvet + ["snapshot", *extra], env)
        rows = {"check": [], "snapshot (stored)": [], "snapshot --no-store": []}
        for _ in range(n):
            rows["check"].append(timed(gpuvet + ["check", "--format", "json", "--fail-on", "never", *extra], env))
            rows["snapshot (stored)"].append(timed(gpuvet + ["snapshot", *extra], env))
            rows["snapshot --no-store"].append(timed(gpuvet + ["snapshot", "--no-store", "--format", "json", *extra], env))
    load = os.getloadavg()
    print(f"# gpuvet snapshot beside gpuvet check\n\n{n} alternated runs each, medians; machine: {os.cpu_count()} CPUs, "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} during the run; Python {sys.version.split()[0]}.\n")
    print("| command | wall (s) | CPU (s) |\n|---|---|---|")
    med = {}
    for k, v in rows.items():
        med[k] = (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        print(f"| `gpuvet {k}` | {med[k][0]:.2f} | {med[k][1]:.2f} |")
    print(f"| `gpuvet snapshot` (first: creates the database) | {first[0]:.2f} | {first[1]:.2f} |")
    dw = med["snapshot (stored)"][0] - med["check"][0]
    dc = med["snapshot (stored)"][1] - med["check"][1]
    print(f"\nA stored snapshot costs {dw:+.2f} s wall and {dc:+.2f} s CPU beside `check`.")


if __name__ == "__main__":
    main()
