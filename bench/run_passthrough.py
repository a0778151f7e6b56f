"""`gpuvet run` against the bare command, in the same run: pass-through throughput, overhead on log-heavy
jobs, and gpuvet's own CPU time per 100 MB.

    python bench/run_passthrough.py --quick          # ~60-80 s on an idle machine (the closing-run command)
    python bench/run_passthrough.py [--mb 512] [--lines 1000000] [--repeat 5] [--out bench/results] [--name X]

Cases (each child exits 0, so no bundle or diagnosis is made: this measures the pass-through itself, gpuvet's
start-up included; with the default 8M --log-cap every case overflows the cap, so the middle goes through
grep as in a real long job):

* ``throughput``: a child writes ``--mb`` MiB to stdout in 64 KiB blocks.  MB/s = bytes / wall time.
* ``log_stdout``: ``--lines`` short training-log lines with ``print`` (block-buffered stdout, as a training
  script's prints to a pipe) and a little arithmetic per step.
* ``log_stderr``: the same lines written to stderr, which Python line-buffers: one write(2) per line, as
  ``logging`` (stderr by default) and C programs do.
* ``startup``: ``gpuvet run -- true``: the fixed cost of the wrapper.

For the log cases the same job also runs (once) as ``cmd | cat > /dev/null``: what the cheapest pipe reader
costs (the job's writes into a pipe, cat's reads), so gpuvet's cost beyond any pipe can be read off.

Timed runs write to /dev/null (bare: the child itself; wrapped: gpuvet, which reads the child's pipes), so
no reader of the bench's competes with the job and the bare command runs at its fastest; one extra run of
each reads the output from a pipe and checks that every byte passed through.  Bare and wrapped runs
alternate, ``--repeat`` times; medians are reported.
overhead = (wrapped - bare) / bare wall time.  CPU seconds come from wait4() of the process tree (children
included: gpuvet's own CPU = the wrapped tree's CPU minus the bare tree's, so grep's share of the middle is
counted as gpuvet's).  The load average is read before and after: on a loaded machine the two runs compete
for the cores with everyone else, and the wall-time numbers say more about the load than about gpuvet.
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
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable

WRITER = """import os, sys
block = (b"x" * 127 + b"\\n") * 512  # 64 KiB of 128-byte lines
for _ in range(int(sys.argv[1]) * 16):
    view = memoryview(block)
    while view:
        view = view[os.write(1, view):]
"""

LOGGER = """import sys
n = int(sys.argv[1])
w = (sys.stderr if sys.argv[2] == "stderr" else sys.stdout).write
acc = 0.0
for step in range(n):
    acc += (step % 97) * 1e-3
    w(f"[rank0] step {step} | loss {2.5 - acc / (step + 1):.4f} | lr 3.0e-04 | tok/s {12000 + step % 500}\\n")
"""


def _run(argv: list[str], env: dict[str, str], stderr_too: bool, count: bool = False) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the whole tree, bytes read).  Timed runs write to /dev/null (so no reader
    of ours competes with the job: the bare command at its fastest); ``count`` reads the output from a pipe
    instead and counts it."""
    t = time.perf_counter()
    with open(os.devnull, "wb") as null:
        out: Any = subprocess.PIPE if count else null
        err: Any = (subprocess.STDOUT if count else null) if stderr_too else subprocess.DEVNULL
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        total = 0
        if count:
            assert p.stdout is not None
            fd = p.stdout.fileno()
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                total += len(chunk)
            p.stdout.close()
        _, status, ru = os.wait4(p.pid, 0)
    took = time.perf_counter() - t
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise SystemExit(f"{argv[:6]}... exited {rc}")
    return took, ru.ru_utime + ru.ru_stime, total


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="256 MiB, 1,000,000 lines, 3 repeats")
    ap.add_argument("--mb", type=int, default=512)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--name", default="", help="suffix of the result files (run_passthrough-NAME.json/.md)")
    ap.add_argument("--note", default="", help="a line for the Markdown (e.g. what else was running)")
    a = ap.parse_args()
    if a.quick:
        a.mb, a.lines, a.repeat = 256, 1_000_000, 3
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    gpuvet = [PY, "-m", "gpuvet", "run", "--no-here", "--"]
    cases = {"throughput": ([PY, "-c", WRITER, str(a.mb)], False),
             "log_stdout": ([PY, "-c", LOGGER, str(a.lines), "stdout"], False),
             "log_stderr": ([PY, "-c", LOGGER, str(a.lines), "stderr"], True),
             "startup": (["true"], False)}
    load_before = _load()
    t_all = time.perf_counter()
    res: dict[str, dict] = {}
    for name, (argv, both) in cases.items():
        bare, wrapped, bare_cpu, wrapped_cpu, piped, piped_cpu = [], [], [], [], [], []
        pipe_argv = ["sh", "-c", '"$@" %s| cat > /dev/null' % ("2>&1 " if both else ""), "sh", *argv]
        nbytes = _run(argv, env, both, count=True)[2]
        n2 = _run(gpuvet + argv, env, both, count=True)[2]
        assert n2 == nbytes, (name, n2, nbytes)  # every byte passed through
        for rep in range(a.repeat if name != "startup" else 2 * a.repeat):
            t, c, _n = _run(argv, env, both)
            bare.append(t)
            bare_cpu.append(c)
            t, c, _n = _run(gpuvet + argv, env, both)
            wrapped.append(t)
            wrapped_cpu.append(c)
            if name.startswith("log") and rep == 0:  # the job into the cheapest pipe reader (once: it is slow)
                t, c, _n = _run(pipe_argv, env, False)
                piped.append(t)
                piped_cpu.append(c)
        b, w = statistics.median(bare), statistics.median(wrapped)
        own_cpu = statistics.median(wrapped_cpu) - statistics.median(bare_cpu)
        r = {"bytes": nbytes, "bare_s": [round(x, 3) for x in bare], "gpuvet_s": [round(x, 3) for x in wrapped],
             "bare_cpu_s": [round(x, 3) for x in bare_cpu], "gpuvet_tree_cpu_s": [round(x, 3) for x in wrapped_cpu],
             "bare_median_s": round(b, 3), "gpuvet_median_s": round(w, 3), "overhead_pct": round(100 * (w - b) / b, 1),
             "gpuvet_own_cpu_s": round(own_cpu, 3)}
        if piped:
            pc = statistics.median(piped_cpu) - statistics.median(bare_cpu)
            r.update({"piped_s": [round(x, 3) for x in piped], "piped_median_s": round(statistics.median(piped), 3),
                      "piped_tree_cpu_s": [round(x, 3) for x in piped_cpu], "pipe_cpu_s": round(pc, 3),
                      "gpuvet_beyond_pipe_cpu_s": round(own_cpu - pc, 3)})
        if nbytes:
            mb = nbytes / 1e6
            r.update({"bare_mb_s": round(mb / b, 1), "gpuvet_mb_s": round(mb / w, 1),
                      "gpuvet_cpu_s_per_100mb": round(own_cpu / mb * 100, 3)})
            how = (f"{r['gpuvet_mb_s']} MB/s through gpuvet" if name == "throughput" else
                   f"overhead {r['overhead_pct']}%")
            extra = (f"; `| cat` alone {r['piped_median_s']:.2f}s, {r['pipe_cpu_s']:.2f}s CPU: gpuvet beyond a plain "
                     f"pipe {r['gpuvet_beyond_pipe_cpu_s']:.2f}s" if piped else "")
            print(f"{name}: {mb:.0f} MB; bare {b:.2f}s, gpuvet run {w:.2f}s ({how}); gpuvet's CPU {own_cpu:.2f}s "
                  f"({r['gpuvet_cpu_s_per_100mb']} s per 100 MB){extra}", flush=True)
        else:
            print(f"{name}: bare {b:.3f}s, gpuvet run {w:.3f}s; gpuvet's CPU {own_cpu:.3f}s", flush=True)
        res[name] = r
    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine(), "load_avg_before": load_before,
               "load_avg_after": _load()}
    doc = {"machine": machine, "params": {"mb": a.mb, "lines": a.lines, "repeat": a.repeat, "quick": a.quick},
           "seconds": round(time.perf_counter() - t_all, 1), "results": res, "note": a.note,
           "goal": {"throughput_mb_s": 100, "log_heavy_overhead_pct": 10}}
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "run_passthrough" + (f"-{a.name}" if a.name else ""))
    with open(stem + ".json", "w") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    t, lo, le, st = res["throughput"], res["log_stdout"], res["log_stderr"], res["startup"]
    with open(stem + ".md", "w") as fh:
        fh.write(f"# gpuvet run pass-through ({machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']})\n\n"
                 f"`python bench/run_passthrough.py{' --quick' if a.quick else ''}`: medians of {a.repeat} alternating "
                 f"bare/wrapped runs, {doc['seconds']} s in all.  Load average before {load_before}, after "
                 f"{machine['load_avg_after']}.{(' ' + a.note) if a.note else ''}\n\n"
                 "| case | bare | under `gpuvet run` | gpuvet's own CPU | `cmd \\| cat` (CPU beyond bare) | goal |\n"
                 "|---|---|---|---|---|---|\n"
                 f"| {a.mb} MiB in 64 KiB blocks | {t['bare_median_s']} s (to /dev/null) | "
                 f"{t['gpuvet_median_s']} s (**{t['gpuvet_mb_s']} MB/s**) | {t['gpuvet_own_cpu_s']} s "
                 f"({t['gpuvet_cpu_s_per_100mb']} s / 100 MB) | | >= 100 MB/s |\n"
                 f"| {a.lines:,} log lines, stdout ({lo['bytes'] / 1e6:.0f} MB) | {lo['bare_median_s']} s | "
                 f"{lo['gpuvet_median_s']} s (**{lo['overhead_pct']}%**) | {lo['gpuvet_own_cpu_s']} s "
                 f"({lo['gpuvet_cpu_s_per_100mb']} s / 100 MB) | {lo['piped_median_s']} s ({lo['pipe_cpu_s']} s) | < 10% |\n"
                 f"| {a.lines:,} log lines, stderr, one write per line | {le['bare_median_s']} s | "
                 f"{le['gpuvet_median_s']} s (**{le['overhead_pct']}%**) | {le['gpuvet_own_cpu_s']} s "
                 f"({le['gpuvet_cpu_s_per_100mb']} s / 100 MB) | {le['piped_median_s']} s ({le['pipe_cpu_s']} s) | < 10% |\n"
                 f"| `gpuvet run -- true` | {st['bare_median_s']} s | {st['gpuvet_median_s']} s | "
                 f"{st['gpuvet_own_cpu_s']} s | | |\n\n"
                 "gpuvet's own CPU = CPU of the wrapped process tree minus the bare one (wait4): grep's scan of the "
                 "omitted middle counts as gpuvet's, and so does the job's own extra cost of writing into a pipe "
                 "instead of /dev/null, which the `cmd | cat > /dev/null` column shows on its own.\n")
    print(f"wrote {stem}.json and {stem}.md ({doc['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
