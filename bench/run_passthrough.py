"""`gpuvet run` against the bare command, in the same run: pass-through throughput, overhead on log-heavy
jobs (writing to /dev/null and to a regular file), and the CPU time gpuvet itself spends.

    python bench/run_passthrough.py --quick --name h200   # the closing-run command (50.0 s on the H200 with 3 repeats
                                                          # of every row; est. ~62 s with 7 of the block-buffered rows)
    python bench/run_passthrough.py [--mb 512] [--lines 1000000] [--repeat 5] [--log-repeat 9] [--out bench/results] [--name X]
    python bench/run_passthrough.py --quick --compare ../other-checkout/src   # A/B: the other's `gpuvet run` too

Cases (each child exits 0, so no bundle or diagnosis is made: this measures the pass-through itself, gpuvet's
start-up included; with the default 8M --log-cap every case overflows the cap, so the middle goes through
grep as in a real long job):

* ``throughput``: a child writes ``--mb`` MiB to stdout in 64 KiB blocks.  MB/s = bytes / wall time.
* ``log_stdout``: ``--lines`` short training-log lines written with ``sys.stdout.write`` and a little
  arithmetic per step; stdout block-buffered (PYTHONUNBUFFERED removed from the job's environment), as a
  training script's prints to a pipe or a file.
* ``log_stderr``: the same lines to stderr, which Python line-buffers: one write(2) per line, as ``logging``
  (stderr by default), ``print(flush=True)``, ``python -u`` and C programs' stderr do.  The hard case.
* ``startup``: ``gpuvet run -- true``: the fixed cost of the wrapper.

Sinks.  Where the output goes decides what the bare command costs, so the log cases run with two sinks, the
bare command and ``gpuvet run`` always writing to the same one:
``null``: /dev/null, where a write(2) costs next to nothing: a floor no real job runs at, and no wrapper can
match on a job that writes line by line, because the job's writes then go into a pipe (its per-write cost is
the ``cmd | cat`` row's).  ``file``: a regular file (truncated before every run), where a batch job's log
goes (``> train.log``, Slurm's --output, nohup): there the job under ``gpuvet run`` writes straight into the file
too (gpuvet reads it back), so its own cost is the bare job's.  The ``| cat > /dev/null`` row runs the job once into the
cheapest pipe reader, for what any pipe costs.

Bare and wrapped runs alternate, ``--repeat`` times (``--log-repeat``, default at least 7, for the block-buffered log
rows: short runs, where 3 repeats gave -27.7 % and +20.8 % for the same row on the same machine); medians are
reported, and the spread of each wrapped run's overhead against the bare run just before it, and the best runs'
overhead (the fastest wrapped run against the fastest bare run: where a machine's speed jumps between runs, as the
H200 VM's did between 0.7 s and 1.4 s for the same bare job, a median of a few runs follows how many landed slow).  overhead = (wrapped -
bare) / bare wall time.  CPU seconds come from wait4() of the process tree; the job reports its own CPU (getrusage at its
end), so the tree's CPU splits into the job's and gpuvet's (gpuvet's Python process plus its grep prefilter
of the middle).  The machine, CPU count and load average (before and after) are printed and recorded: on a
loaded machine the runs compete for the cores with everyone else, and the wall times say more about the load
than about gpuvet; the CPU times are the numbers to compare there.

gpuvet is imported from this checkout's ``src``.  Its modules are byte-compiled first (``compileall``, into
``src/gpuvet/**/__pycache__``, git-ignored), as an installed package is: with PYTHONDONTWRITEBYTECODE set, every
wrapped run would otherwise compile gpuvet's source again, which no installed gpuvet does.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
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

LOGGER = """import os, resource, sys
n = int(sys.argv[1])
w = (sys.stderr if sys.argv[2] == "stderr" else sys.stdout).write
acc = 0.0
for step in range(n):
    acc += (step % 97) * 1e-3
    w(f"[rank0] step {step} | loss {2.5 - acc / (step + 1):.4f} | lr 3.0e-04 | tok/s {12000 + step % 500}\\n")
sys.stdout.flush()
sys.stderr.flush()
ru = resource.getrusage(resource.RUSAGE_SELF)
with open(sys.argv[3], "a") as fh:
    fh.write(f"{ru.ru_utime + ru.ru_stime}\\n")
"""


def _run(argv: list[str], env: dict[str, str], stderr_too: bool, sink: str = os.devnull,
         count: bool = False) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the whole tree, bytes read).  Timed runs write to ``sink`` (/dev/null or a
    regular file, truncated first); ``count`` reads the output from a pipe instead and counts it."""
    t = time.perf_counter()
    with open(sink, "wb") as out_f:
        out: Any = subprocess.PIPE if count else out_f
        err: Any = (subprocess.STDOUT if count else out_f) if stderr_too else subprocess.DEVNULL
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


def _job_cpu(path: str) -> float:
    """The CPU the job reported at its end (and forget it, for the next run)."""
    try:
        with open(path) as fh:
            vals = [float(x) for x in fh.read().split()]
        os.unlink(path)
        return vals[-1] if vals else 0.0
    except (OSError, ValueError):
        return 0.0


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def _spread(xs: list[float]) -> dict[str, float]:
    """min, quartiles, median and max of ``xs`` (percentages), rounded."""
    if not xs:
        return {}
    ys = sorted(xs)
    q = statistics.quantiles(ys, n=4, method="inclusive") if len(ys) > 1 else [ys[0]] * 3
    return {"min": round(ys[0], 1), "q1": round(q[0], 1), "median": round(q[1], 1), "q3": round(q[2], 1),
            "max": round(ys[-1], 1)}


def _job_start_delay(cmd: list[str], env: dict[str, str], reps: int) -> float:
    """Median milliseconds from starting ``cmd + ['date', '+%s%N']`` to the moment ``date`` reads the clock."""
    xs = []
    for _ in range(reps):
        t0 = time.time_ns()
        out = subprocess.run(cmd + ["date", "+%s%N"], capture_output=True, text=True, env=env).stdout
        try:
            xs.append((int(out.split()[0]) - t0) / 1e6)
        except (ValueError, IndexError):
            continue
    return round(_med(xs), 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="256 MiB, 1,000,000 lines, 3 repeats (7 for the block-buffered log rows)")
    ap.add_argument("--mb", type=int, default=512)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--log-repeat", type=int, default=0,
                    help="repeats of the block-buffered log rows (short runs, so the noisiest: default max(7, --repeat))")
    ap.add_argument("--cases", default="", help="comma-separated subset of throughput,log_stdout,log_stderr,startup")
    ap.add_argument("--compare", default="", metavar="SRC",
                    help="another checkout's src/ (e.g. main's): its `gpuvet run` alternates with this one's in the "
                         "log and startup rows (an A/B under the same load)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--name", default="", help="suffix of the result files (run_passthrough-NAME.json/.md)")
    ap.add_argument("--note", default="", help="a line for the Markdown (e.g. what else was running)")
    a = ap.parse_args()
    if a.quick:
        a.mb, a.lines, a.repeat = 256, 1_000_000, 3
    a.log_repeat = a.log_repeat or max(7, a.repeat)
    src = os.path.join(ROOT, "src")
    compileall.compile_dir(os.path.join(src, "gpuvet"), quiet=1)
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    job_env = dict(env)
    job_env.pop("PYTHONUNBUFFERED", None)  # log_stdout: block-buffered, as documented (the VM's shell sets it)
    other_env: dict[str, str] = {}
    if a.compare:
        other = os.path.abspath(a.compare)
        compileall.compile_dir(os.path.join(other, "gpuvet"), quiet=1)
        other_env = dict(os.environ, PYTHONPATH=other + os.pathsep + os.environ.get("PYTHONPATH", ""))
    gpuvet = [PY, "-m", "gpuvet", "run", "--no-here", "--"]
    tmp = tempfile.mkdtemp(prefix="gpuvet-bench-")
    sink_file = os.path.join(tmp, "sink.log")
    cpu_file = os.path.join(tmp, "job-cpu.txt")
    cases = {"throughput": ([PY, "-c", WRITER, str(a.mb)], False, ["null"]),
             "log_stdout": ([PY, "-c", LOGGER, str(a.lines), "stdout", cpu_file], False, ["null", "file"]),
             "log_stderr": ([PY, "-c", LOGGER, str(a.lines), "stderr", cpu_file], True, ["null", "file"]),
             "startup": (["true"], False, ["null"])}
    if a.cases:
        cases = {k: v for k, v in cases.items() if k in a.cases.split(",")}
    load_before = _load()
    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine(), "load_avg_before": load_before}
    print(f"machine: {machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']}; "
          f"load average {load_before}", flush=True)
    t_all = time.perf_counter()
    res: dict[str, dict] = {}
    try:
        for name, (argv, both, sinks) in cases.items():
            e = job_env if name.startswith("log") else env
            nbytes = _run(argv, e, both, count=True)[2]
            n2 = _run(gpuvet + argv, e, both, count=True)[2]
            assert n2 == nbytes, (name, n2, nbytes)  # every byte passed through
            _job_cpu(cpu_file)
            r: dict[str, Any] = {"bytes": nbytes}
            reps = {"log_stdout": a.log_repeat, "startup": 3 * a.repeat}.get(name, a.repeat)
            compare = bool(other_env) and name != "throughput"
            for sink in sinks:
                path = os.devnull if sink == "null" else sink_file
                bare, wrapped, bare_cpu, wrapped_cpu, bare_job, wrapped_job, others = [], [], [], [], [], [], []
                for _rep in range(reps):
                    t, c, _n = _run(argv, e, both, path)
                    bare.append(t)
                    bare_cpu.append(c)
                    bare_job.append(_job_cpu(cpu_file))
                    t, c, _n = _run(gpuvet + argv, e, both, path)
                    wrapped.append(t)
                    wrapped_cpu.append(c)
                    wrapped_job.append(_job_cpu(cpu_file))
                    if compare:
                        oe = dict(other_env)
                        if name.startswith("log"):
                            oe.pop("PYTHONUNBUFFERED", None)
                        others.append(_run(gpuvet + argv, oe, both, path)[0])
                        _job_cpu(cpu_file)
                b, w = _med(bare), _med(wrapped)
                s: dict[str, Any] = {
                    "repeats": reps,
                    "bare_s": [round(x, 3) for x in bare], "gpuvet_s": [round(x, 3) for x in wrapped],
                    "bare_cpu_s": [round(x, 3) for x in bare_cpu], "gpuvet_tree_cpu_s": [round(x, 3) for x in wrapped_cpu],
                    "bare_median_s": round(b, 3), "gpuvet_median_s": round(w, 3),
                    "overhead_pct": round(100 * (w - b) / b, 1) if b else None,
                    # the fastest run of each against the other's: on a machine whose speed jumps between runs (the
                    # H200 VM's bare job took 0.69 s or 1.44 s, its own user time doubling) the medians of a few
                    # runs follow how many landed slow; the best runs are where neither was slowed
                    "overhead_best_pct": round(100 * (min(wrapped) - min(bare)) / min(bare), 1) if min(bare) else None,
                    # each wrapped run against the bare run just before it: how far one pair can stray
                    "paired_overhead_pct": _spread([100 * (wi - bi) / bi for bi, wi in zip(bare, wrapped) if bi]),
                    # the tree's CPU beyond the bare tree's: gpuvet + grep + the job's extra cost of a pipe
                    "extra_cpu_s": round(_med(wrapped_cpu) - _med(bare_cpu), 3)}
                if compare:
                    o = _med(others)
                    s.update({"other_s": [round(x, 3) for x in others], "other_median_s": round(o, 3),
                              "other_overhead_pct": round(100 * (o - b) / b, 1) if b else None,
                              "other_overhead_best_pct": round(100 * (min(others) - min(bare)) / min(bare), 1)
                              if others and min(bare) else None,
                              "other_paired_overhead_pct": _spread([100 * (oi - bi) / bi
                                                                    for bi, oi in zip(bare, others) if bi])})
                if name.startswith("log"):
                    own = [tc - jc for tc, jc in zip(wrapped_cpu, wrapped_job)]
                    s.update({"bare_job_cpu_s": round(_med(bare_job), 3), "wrapped_job_cpu_s": round(_med(wrapped_job), 3),
                              "gpuvet_own_cpu_s": round(_med(own), 3)})  # gpuvet's process + its grep
                elif name == "startup":
                    s["gpuvet_own_cpu_s"] = round(_med(wrapped_cpu) - _med(bare_cpu), 3)
                    # how much later the job itself starts under gpuvet: its head start over gpuvet's start-up
                    s["job_start_ms"] = {"bare": _job_start_delay([], env, reps),
                                         "gpuvet": _job_start_delay(gpuvet, env, reps)}
                    if compare:
                        s["job_start_ms"]["other"] = _job_start_delay(gpuvet, other_env, reps)
                else:
                    s["gpuvet_own_cpu_s"] = s["extra_cpu_s"]
                r[sink] = s
            if name.startswith("log"):  # the job into the cheapest pipe reader (once: it is slow)
                pipe_argv = ["sh", "-c", '"$@" %s| cat > /dev/null' % ("2>&1 " if both else ""), "sh", *argv]
                t, c, _n = _run(pipe_argv, e, False)
                r["piped"] = {"wall_s": round(t, 3), "tree_cpu_s": round(c, 3), "job_cpu_s": round(_job_cpu(cpu_file), 3)}
            head = r[sinks[0]]
            r.update({k: head[k] for k in ("bare_median_s", "gpuvet_median_s", "overhead_pct", "gpuvet_own_cpu_s")})
            if nbytes:
                mb = nbytes / 1e6
                r.update({"bare_mb_s": round(mb / head["bare_median_s"], 1), "gpuvet_mb_s": round(mb / head["gpuvet_median_s"], 1),
                          "gpuvet_cpu_s_per_100mb": round(head["gpuvet_own_cpu_s"] / mb * 100, 3)})
            if name == "throughput":
                print(f"throughput: {nbytes / 1e6:.0f} MB; bare {head['bare_median_s']:.2f}s, gpuvet run "
                      f"{head['gpuvet_median_s']:.2f}s: {r['gpuvet_mb_s']} MB/s; gpuvet's CPU {head['gpuvet_own_cpu_s']:.2f}s "
                      f"({r['gpuvet_cpu_s_per_100mb']} s per 100 MB)", flush=True)
            elif name == "startup":
                print(f"startup: bare {head['bare_median_s']:.3f}s, gpuvet run {head['gpuvet_median_s']:.3f}s; "
                      f"gpuvet's CPU {head['gpuvet_own_cpu_s']:.3f}s; the job starts after {head['job_start_ms']} ms"
                      + (f"; the other src: {head['other_median_s']:.3f}s" if "other_median_s" in head else ""),
                      flush=True)
            else:
                for sink in sinks:
                    s = r[sink]
                    sp = s["paired_overhead_pct"]
                    print(f"{name} -> {sink}: {nbytes / 1e6:.0f} MB; bare {s['bare_median_s']:.2f}s, gpuvet run "
                          f"{s['gpuvet_median_s']:.2f}s (overhead {s['overhead_pct']}%, best runs {s['overhead_best_pct']}%, "
                          f"pairs {sp.get('min')}..{sp.get('max')}%, "
                          f"{s['repeats']} runs); CPU: job {s['bare_job_cpu_s']:.2f}s bare / {s['wrapped_job_cpu_s']:.2f}s "
                          f"wrapped, gpuvet+grep {s['gpuvet_own_cpu_s']:.2f}s"
                          + (f"; the other src: {s['other_median_s']:.2f}s ({s['other_overhead_pct']}%)"
                             if "other_median_s" in s else ""), flush=True)
                pr = r["piped"]
                print(f"{name} | cat: {pr['wall_s']:.2f}s, job CPU {pr['job_cpu_s']:.2f}s", flush=True)
            res[name] = r
    finally:
        for p in (sink_file, cpu_file):
            try:
                os.unlink(p)
            except OSError:
                pass
        os.rmdir(tmp)
    machine["load_avg_after"] = _load()
    doc = {"machine": machine, "params": {"mb": a.mb, "lines": a.lines, "repeat": a.repeat, "quick": a.quick,
                                          "log_repeat": a.log_repeat, "compare": a.compare, "cases": a.cases},
           "seconds": round(time.perf_counter() - t_all, 1), "results": res, "note": a.note,
           "goal": {"throughput_mb_s": 100, "log_heavy_overhead_pct": 10}}
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "run_passthrough" + (f"-{a.name}" if a.name else ""))
    with open(stem + ".json", "w") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    with open(stem + ".md", "w") as fh:
        fh.write(_markdown(doc, a))
    print(f"wrote {stem}.json and {stem}.md ({doc['seconds']} s)")
    return 0


def _markdown(doc: dict, a: argparse.Namespace) -> str:
    m, res = doc["machine"], doc["results"]
    other = bool(a.compare)
    rows = []
    if "throughput" in res:
        t = res["throughput"]
        rows.append(f"| {a.mb} MiB in 64 KiB blocks, stdout | /dev/null | {t['bare_median_s']} s | {t['gpuvet_median_s']} s "
                    f"(**{t['gpuvet_mb_s']} MB/s**) | | | {t['gpuvet_own_cpu_s']} s ({t['gpuvet_cpu_s_per_100mb']} s / 100 MB) | "
                    + ("| " if other else "") + ">= 100 MB/s |")
    for name, what in (("log_stdout", "stdout, block-buffered"), ("log_stderr", "stderr, one write per line")):
        if name not in res:
            continue
        r = res[name]
        for sink, label in (("null", "/dev/null"), ("file", "a file")):
            s = r[sink]
            sp = s["paired_overhead_pct"]
            o = (f"{s['other_median_s']} s ({s['other_overhead_pct']}%; best runs {s.get('other_overhead_best_pct')}%) | "
                 if other else "")
            rows.append(f"| {a.lines:,} log lines ({r['bytes'] / 1e6:.0f} MB), {what} | {label} | {s['bare_median_s']} s | "
                        f"{s['gpuvet_median_s']} s (**{s['overhead_pct']}%**; best runs {s.get('overhead_best_pct')}%) | "
                        f"{s['repeats']}: {sp.get('min')} / "
                        f"{sp.get('q1')} / {sp.get('median')} / {sp.get('q3')} / {sp.get('max')}% | {s['bare_job_cpu_s']} / "
                        f"{s['wrapped_job_cpu_s']} s | {s['gpuvet_own_cpu_s']} s | {o}< 10% |")
        pr = r["piped"]
        rows.append(f"| the same, `cmd \\| cat > /dev/null` | a pipe | | {pr['wall_s']} s | | {pr['job_cpu_s']} s | | "
                    + ("| " if other else "") + "|")
    if "startup" in res:
        st = res["startup"]["null"]
        js = st.get("job_start_ms", {})
        o = (f"{st['other_median_s']} s, the job starts after {js.get('other')} ms | " if other else "")
        rows.append(f"| `gpuvet run -- true`; `date` as the job: when it starts (ms after the launch) | | "
                    f"{st['bare_median_s']} s; {js.get('bare')} ms | {st['gpuvet_median_s']} s; {js.get('gpuvet')} ms | | | "
                    f"{st['gpuvet_own_cpu_s']} s | {o}|")
    head = ("| case | sink (bare and wrapped alike) | bare | under `gpuvet run` | runs: each wrapped run against the bare "
            "run before it, min / q1 / median / q3 / max | job's CPU, bare / wrapped | gpuvet's CPU (its process + grep) | "
            + (f"under `{a.compare}` (A/B) | " if other else "") + "goal |\n|" + "---|" * (9 if other else 8) + "\n")
    return (f"# gpuvet run pass-through ({m['platform']}, {m['cpus']} CPUs, Python {m['python']})\n\n"
            f"`python bench/run_passthrough.py{' --quick' if a.quick else ''}`: medians of {a.repeat} alternating "
            f"bare/wrapped runs ({a.log_repeat} for the block-buffered log rows), {doc['seconds']} s in all.  Load average "
            f"before {m['load_avg_before']}, after {m['load_avg_after']}.{(' ' + a.note) if a.note else ''}\n\n"
            + head + "\n".join(rows) + "\n\n"
            "The overhead is the wrapped runs' median against the bare runs' median; the runs column gives the spread "
            "of the overhead of each wrapped run against the bare run just before it.  The job's CPU is what it reported "
            "itself (getrusage at its end): under `gpuvet run` it writes into a pipe instead of /dev/null (which costs it "
            "more), and straight into the file sink, as bare (gpuvet reads the file back).  gpuvet's CPU = the wrapped tree's CPU minus the job's (for the "
            "blocks and `true`: minus the bare tree's).\n")


if __name__ == "__main__":
    sys.exit(main())
