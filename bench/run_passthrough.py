"""`gpuvet run` against the bare command, in the same run: pass-through throughput, overhead on log-heavy
jobs (writing to /dev/null and to a regular file), and the CPU time gpuvet itself spends, with a verdict per row
that a noisy machine cannot fake.

    python bench/run_passthrough.py --quick --name h200   # the closing-run command (est. ~150-170 s on the H200)
    python bench/run_passthrough.py [--mb 512] [--lines 1000000] [--pairs 21] [--row-seconds 60] [--out DIR] [--name X]
    python bench/run_passthrough.py --quick --compare ../other-checkout/src   # A/B: the other's `gpuvet run` as an arm too
    python bench/run_passthrough.py --quick --long-lines 4000000   # and a longer job (est. +70-80 s on the H200: 2 arms)

Cases (each child exits 0, so no bundle or diagnosis is made: this measures the pass-through itself, gpuvet's
start-up included; with the default 8M --log-cap every log case overflows the cap, so the middle goes through
grep as in a real long job):

* ``throughput``: a child writes ``--mb`` MiB to stdout in 64 KiB blocks.  MB/s = bytes / wall time.
* ``log_stdout``: ``--lines`` short training-log lines written with ``sys.stdout.write`` and a little
  arithmetic per step; stdout block-buffered (PYTHONUNBUFFERED removed from the job's environment), as a
  training script's prints to a pipe or a file.
* ``log_stderr``: the same lines to stderr, which Python line-buffers: one write(2) per line, as ``logging``
  (stderr by default), ``print(flush=True)``, ``python -u`` and C programs' stderr do.  The hard case.
* ``log_long`` (``--long-lines N``, off by default): the ``log_stdout`` job at a greater length (4,000,000 lines: ~5 s
  on the H200; 10,000,000: ~12 s; a training job logging per step runs minutes), where a fixed start-up cost (the
  interpreter's ~70 ms there) weighs less; bare and gpuvet only (``--long-floor``: the floor arm too).  The short rows
  stay the worst case.
* ``startup``: ``gpuvet run -- true``, and when the job starts (``date`` as the job) against the interpreter's
  own start (``python -c pass``, ``python -S -c pass``): the wrapper's fixed cost and how much of it is Python's.

Sinks: the bare command and ``gpuvet run`` always write to the same one.  ``null``: /dev/null, where a write(2)
costs next to nothing (no wrapper that captures the output can give the job that: its writes go into a pipe; the
``cat`` arm, ``cmd | cat > /dev/null``, is what the cheapest pipe reader costs).  ``file``: a regular file (truncated
before every run), where a batch job's log goes: there the job under ``gpuvet run`` writes straight into the file too.

The *pipe floor* arm of the /dev/null rows (``setsid job | python -S -c FLOOR``) is the same job into the cheapest pipe
reader there is: a loop that reads as gpuvet's pump does (a 1 MiB pipe, 4 ms of gathering after a small read) and does
nothing else, the job in a session of its own as under ``gpuvet run``.  What the job pays for writing into a pipe
instead of /dev/null, which any capture of its output (``| cat``, ``| tee``, Slurm) makes it pay; ``gpuvet run``
beyond the floor is gpuvet's own.

*What the overhead is made of*: the job stamps the clock at its first and last statement, the bench at the launch and
after the wait, so each run's wall splits into *start* (the launch to the job's first statement: the wrapper's start-up,
then the job's own interpreter), *during* (the job's run) and *end* (the job's last statement to the wrapper's exit:
the job's own exit, then the wrapper's end); per set against the bare run, the three add up to the wall overhead.

The measurement (why it looks like this: the H200 VM's bare job took 0.69-0.72 s in some runs and 1.30-1.44 s in
others for identical work, its own user time doubling, so a median of a few alternating runs followed how many
runs landed slow):

* **Pairs.**  Every log row is ``--pairs`` interleaved sets of its arms (bare, gpuvet, the ``cat`` arm in the
  /dev/null rows, the other tree with ``--compare``), each set run back to back in a random order (seeded,
  ``--seed``), after one warm-up run of each arm.  A row stops adding sets after ``--row-seconds`` (never below
  ``MIN_PAIRS``), so the whole has a bounded run time on a slow machine.  The overhead is computed per set (each arm
  against the bare run of the same set) and summarised by its median with a distribution-free confidence interval
  (order statistics of the binomial: the interval holds the median with >= 95 % probability, its real coverage given).
* **Sessions.**  Every arm starts in a session of its own (``gpuvet run`` starts its job in one): with the
  scheduler's autogroups a session is a group with its own share of the CPUs, and a loaded machine gave the wrapped
  job more CPU than a bare one left in this script's session.
* **Pinned CPUs.**  With 3 or more CPUs the job runs on one CPU of its own (``taskset``: the same CPU, bare and
  wrapped), and gpuvet (with its grep) and this script on the others (up to two): the job's CPU is not shared with
  its wrapper, as on a real machine with spare cores.  With 2 CPUs the job gets one and everything else the other.
  ``--cpus none`` turns pinning off.
* **The slow mode.**  Before every set, between its arms and after it, a calibrated spin (fixed Python work, its CPU
  time) runs on the job's CPU.  A spin more than ``SLOW_RATIO`` times the fastest one seen is the slow mode.  A set
  whose spins disagree (one arm may have run in the other mode) is *mixed*: it is reported and left out of the verdict.
* **CPU time.**  The whole tree's user+sys CPU (wait4: gpuvet, its grep and the job) against the bare job's, per set.
  The job's own CPU (getrusage at its end, user and system apart) shows what the sink costs the job itself.
* **Speed-free overhead.**  The slow mode scales a run's wall and its job's CPU alike, and on the H200 it flipped
  within single runs, so even same-speed sets swung by tens of percent.  Per set, (wall / the job's CPU) wrapped
  against bare is the wall beyond the job's own work, which holds still; into a file (the job's system calls are the
  bare job's) that is the overhead; into /dev/null the job's extra CPU in the pipe multiplies in, measured as
  (1 + sys / user) wrapped against bare (its Python work, user time, is the same in both arms).  This is the
  verdict to read; the plain wall interval is given beside it.
* **Verdict** per row, from the wall-time interval: *met* (its upper end under 10 %), *not met* (its lower end over
  10 %), else *cannot tell* (the interval straddles 10 %, or fewer than ``MIN_PAIRS`` sets).

The machine, CPU count and load average (before and after) are recorded.  gpuvet is imported from this checkout's
``src``; its modules are byte-compiled first (``compileall``, into ``src/gpuvet/**/__pycache__``, git-ignored), as an
installed package is.
"""
from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETSID = "setsid " if shutil.which("setsid") else ""
PY = sys.executable
GOAL_PCT = 10.0
MIN_PAIRS = 6  # the fewest sets whose order-statistic interval reaches 95 % (n=6: the min and max, 96.9 %)
SLOW_RATIO = 1.5  # a spin this many times the fastest one: the slow mode (it was ~2x on the H200 VM)
SPIN_N = 60_000  # the spin's fixed work (~3 ms on a 2020s core, ~5 ms on the VM), run twice: the faster counts

WRITER = """import os, sys
block = (b"x" * 127 + b"\\n") * 512  # 64 KiB of 128-byte lines
for _ in range(int(sys.argv[1]) * 16):
    view = memoryview(block)
    while view:
        view = view[os.write(1, view):]
"""

LOGGER = """import os, resource, sys, time
t0 = time.time_ns()  # its first statement: how long after the launch the job itself began
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
    fh.write(f"{ru.ru_utime} {ru.ru_stime} {t0} {time.time_ns()}\\n")
"""

# the pipe floor: the same job into the cheapest pipe reader there is, one that reads the way gpuvet's pump does (a
# 1 MiB pipe, 1 MiB reads, 4 ms of gathering after a small read) and does nothing else with the bytes.  What any
# capture of the output costs the job (its writes go into a pipe, not /dev/null), without gpuvet's own work
FLOOR = """import os, select, time
try:
    import fcntl
    fcntl.fcntl(0, 1031, 1 << 20)
except OSError:
    pass
buf = bytearray(1 << 20)
po = select.poll()
po.register(0, select.POLLIN)
while True:
    po.poll()
    n = os.readv(0, (buf,))
    if not n:
        break
    if n < 65536:
        time.sleep(0.004)
"""


# ----------------------------------------------------------------------------------------- statistics
def median_ci(xs: list[float], conf: float = 0.95) -> dict[str, Any]:
    """The median of ``xs`` and a distribution-free interval for it: the k-th smallest and k-th largest values,
    k the largest with P(Binomial(n, 1/2) < k) <= (1 - conf) / 2 (the sign test's interval).  ``coverage`` is the
    interval's real probability of holding the median (>= conf; None when n is too small for any: then the
    interval is the whole range and says nothing)."""
    ys = sorted(xs)
    n = len(ys)
    if not n:
        return {"n": 0, "median": None, "lo": None, "hi": None, "coverage": None}
    tail = (1 - conf) / 2
    k, cum = 0, 0.0
    while k < n // 2:
        nxt = cum + math.comb(n, k) / 2 ** n  # P(X <= k)
        if nxt > tail:
            break
        cum = nxt
        k += 1
    # k values on each side may be left out: the interval is ys[k - 1] .. ys[n - k] (1-based k-th order statistics)
    if k == 0:
        return {"n": n, "median": statistics.median(ys), "lo": ys[0], "hi": ys[-1], "coverage": None}
    return {"n": n, "median": statistics.median(ys), "lo": ys[k - 1], "hi": ys[n - k], "coverage": round(1 - 2 * cum, 3)}


def verdict(ci: dict[str, Any], goal: float = GOAL_PCT) -> str:
    """met / not met / cannot tell, for an overhead interval (percent) against ``goal``."""
    if ci.get("coverage") is None or ci["n"] < MIN_PAIRS:
        return "cannot tell"
    if ci["hi"] < goal:
        return "met"
    if ci["lo"] > goal:
        return "not met"
    return "cannot tell"


def _r(ci: dict[str, Any], nd: int = 1) -> dict[str, Any]:
    return {k: (round(v, nd) if isinstance(v, float) and k in ("median", "lo", "hi") else v) for k, v in ci.items()}


def _fmt_ci(ci: dict[str, Any] | None, unit: str = "%") -> str:
    if not ci or ci.get("median") is None:
        return ""
    if ci.get("coverage") is None:
        return f"{ci['median']:.1f}{unit} (n={ci['n']}, too few for an interval)"
    return f"{ci['median']:.1f}{unit} [{ci['lo']:.1f}, {ci['hi']:.1f}]"


# ----------------------------------------------------------------------------------------- running
def _run(argv: list[str], env: dict[str, str], stderr_too: bool, sink: str = os.devnull,
         count: bool = False, stamps: dict[str, int] | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the whole tree, bytes read).  Timed runs write to ``sink`` (/dev/null or a
    regular file, truncated first); ``count`` reads the output from a pipe instead and counts it.  ``stamps``: gets
    the launch and the end (``time.time_ns``, the clock the job's own time stamps use)."""
    with open(sink, "wb") as out_f:
        out: Any = subprocess.PIPE if count else out_f
        err: Any = (subprocess.STDOUT if count else out_f) if stderr_too else subprocess.DEVNULL
        # a session of its own, bare or wrapped: with the scheduler's autogroups (Linux's default) a new session is a
        # new group with its own fair share of the CPUs, and `gpuvet run` starts its job in one; a bare job left in
        # this script's session would share its group's one share with everything else here (on a loaded machine the
        # wrapped job then ran 40% faster than the bare one)
        t = time.time_ns()
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)
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
        t_end = time.time_ns()
    if stamps is not None:
        stamps.update(launch=t, end=t_end)
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise SystemExit(f"{argv[:6]}... exited {rc}")
    return (t_end - t) / 1e9, ru.ru_utime + ru.ru_stime, total


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _job_cpu(path: str, stamps: dict[str, int] | None = None) -> dict[str, float]:
    """The CPU the job reported at its end: user and system seconds (and forget it, for the next run).  With the
    run's ``stamps`` (launch, end) and the job's own (its first and last statement): where the run's wall went,
    ``start`` (launch to the job's first statement: the wrapper's start-up and the job's interpreter), ``span`` (the
    job's own run) and ``end`` (its last statement to the wrapper's exit: the job's exit and the wrapper's end)."""
    try:
        with open(path) as fh:
            vals = [float(x) for x in fh.read().split()]
        os.unlink(path)
    except (OSError, ValueError):
        vals = []
    if len(vals) < 2:
        return {"job_cpu": 0.0, "job_user": 0.0, "job_sys": 0.0}
    out = {"job_cpu": vals[0] + vals[1], "job_user": vals[0], "job_sys": vals[1]}
    if len(vals) >= 4 and stamps:
        t0, t1 = int(vals[2]), int(vals[3])
        out.update(start=(t0 - stamps["launch"]) / 1e9, span=(t1 - t0) / 1e9, end=(stamps["end"] - t1) / 1e9)
    return out


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


class Pinning:
    """Which CPUs the job, and everything else (gpuvet, its grep, this script), run on; None: not pinned."""

    def __init__(self, spec: str):
        self.job: set[int] | None = None
        self.rest: set[int] | None = None
        self.taskset = shutil.which("taskset")
        try:
            allowed = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            allowed = []
        if spec == "none" or len(allowed) < 2 or not self.taskset:
            self.why = ("off (--cpus none)" if spec == "none" else "off: fewer than 2 CPUs" if len(allowed) < 2
                        else "off: no taskset")
            return
        if spec == "auto":
            self.job = {allowed[-1]}
            self.rest = set(allowed[-3:-1]) if len(allowed) >= 3 else {allowed[0]}
        else:  # "J:R,R"
            j, _, r = spec.partition(":")
            self.job = {int(x) for x in j.split(",")}
            self.rest = {int(x) for x in r.split(",")} if r else set(allowed) - self.job
        self.why = f"job on CPU {sorted(self.job)}, gpuvet + grep + this script on {sorted(self.rest)}"
        os.sched_setaffinity(0, self.rest)  # children (gpuvet, its job's taskset, cat) start there

    def job_argv(self, argv: list[str]) -> list[str]:
        if self.job is None:
            return argv
        assert self.taskset is not None
        return [self.taskset, "-c", ",".join(map(str, sorted(self.job))), *argv]

    def spin(self) -> float:
        """The CPU seconds of a fixed piece of work on the job's CPU (all CPUs when not pinned)."""
        if self.job is not None:
            os.sched_setaffinity(0, self.job)
        try:
            took = []
            for _ in range(2):  # the faster of two: an interrupt or a preemption's cold cache slows one
                t = time.thread_time()
                x = 0
                for i in range(SPIN_N):
                    x += i * i
                took.append(time.thread_time() - t)
            return min(took)
        finally:
            if self.rest is not None:
                os.sched_setaffinity(0, self.rest)


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


def _interp_start(env: dict[str, str], reps: int) -> dict[str, float]:
    """Median milliseconds from launching ``python -c`` (with site, and ``-S``: no site, no .pth files run) to its
    first statement reading the clock: the part of ``gpuvet run``'s job-start delay that is the interpreter's."""
    res = {}
    code = "import time; print(time.time_ns())"
    for label, args in (("python", ["-c", code]), ("python -S", ["-S", "-c", code])):
        xs = []
        for _ in range(reps):
            t0 = time.time_ns()
            out = subprocess.run([PY, *args], env=env, capture_output=True, text=True).stdout
            try:
                xs.append((int(out.split()[0]) - t0) / 1e6)
            except (ValueError, IndexError):
                continue
        res[label] = round(_med(xs), 1)
    return res


def _pairs(arms: dict[str, list[str]], envs: dict[str, dict[str, str]], both: bool, path: str, cpu_file: str,
           pin: Pinning, rng: random.Random, max_pairs: int, row_seconds: float, spins_seen: list[float],
           warm_up: bool = True) -> dict:
    """Run the interleaved sets of ``arms`` (name -> argv) for one row; their per-set numbers and summaries."""
    for name, argv in arms.items() if warm_up else ():  # warm-up: caches, the page cache of the interpreter and of gpuvet
        _run(argv, envs[name], both, path)
        _job_cpu(cpu_file)
    spins_seen.extend(pin.spin() for _ in range(3))
    sets: list[dict[str, Any]] = []
    t_row = time.perf_counter()
    while len(sets) < max_pairs and (len(sets) < MIN_PAIRS or time.perf_counter() - t_row < row_seconds):
        order = list(arms)
        rng.shuffle(order)
        one: dict[str, Any] = {"order": order, "spins": [pin.spin()]}
        for name in order:
            stamps: dict[str, int] = {}
            wall, tree, _n = _run(arms[name], envs[name], both, path, stamps=stamps)
            one[name] = {"wall": wall, "tree_cpu": tree, **_job_cpu(cpu_file, stamps)}
            one["spins"].append(pin.spin())
        spins_seen.extend(one["spins"])
        sets.append(one)
    best = min(spins_seen)
    for one in sets:
        slow = [sp > SLOW_RATIO * best for sp in one["spins"]]
        one["mode"] = "mixed" if any(slow) and not all(slow) else "slow" if all(slow) else "fast"
    return {"sets": sets, "seconds": round(time.perf_counter() - t_row, 1), "spin_best_s": best}


def _summarise(row: dict, arms: list[str]) -> dict[str, Any]:
    """Per-set overheads of each arm against the bare run of its set, over the sets not in mixed mode."""
    sets = row["sets"]
    used = [s for s in sets if s["mode"] != "mixed"]
    basis = "sets not mixed"
    if len(used) < MIN_PAIRS:  # a loaded machine whose speed drifts rather than jumps: every set, said so
        used, basis = sets, f"every set (only {len(used)} not mixed)"
    out: dict[str, Any] = {"sets": len(sets), "used": len(used), "mixed": sum(s["mode"] == "mixed" for s in sets),
                           "slow": sum(s["mode"] == "slow" for s in sets), "basis": basis, "seconds": row["seconds"]}
    bare_wall = [s["bare"]["wall"] for s in used]
    out["bare_median_s"] = round(_med(bare_wall), 3)
    out["bare_job_cpu_s"] = round(_med([s["bare"]["job_cpu"] for s in used]), 3)
    out["bare_tree_cpu_s"] = round(_med([s["bare"]["tree_cpu"] for s in used]), 3)
    for arm in arms:
        if arm == "bare":
            continue
        wall = [100 * (s[arm]["wall"] - s["bare"]["wall"]) / s["bare"]["wall"] for s in used]
        cpu = [100 * (s[arm]["tree_cpu"] - s["bare"]["tree_cpu"]) / s["bare"]["tree_cpu"] for s in used]
        job = [s[arm]["job_cpu"] - s["bare"]["job_cpu"] for s in used]
        own = [s[arm]["tree_cpu"] - s[arm]["job_cpu"] for s in used]  # gpuvet + grep (cat + sh for the cat arm)
        wci = _r(median_ci(wall))
        a: dict[str, Any] = {
            "median_s": round(_med([s[arm]["wall"] for s in used]), 3),
            "wall_overhead_pct": wci, "verdict": verdict(wci),
            "cpu_overhead_pct": _r(median_ci(cpu)),
            "job_cpu_s": round(_med([s[arm]["job_cpu"] for s in used]), 3),
            "job_cpu_extra_s": _r(median_ci(job), 3),
            "own_cpu_s": round(_med(own), 3),
            # every set, mixed ones included (what the verdict would be without the mode check)
            "wall_overhead_all_pct": _r(median_ci([100 * (s[arm]["wall"] - s["bare"]["wall"]) / s["bare"]["wall"]
                                                   for s in sets])),
        }
        # speed-free: the wall beyond the job's own CPU, per set ((wall / job CPU) wrapped against bare).  The machine's
        # speed scales a run's wall and its job's CPU alike (the slow mode doubled both), so this ratio holds still when
        # the speed flips within a set, where the plain wall ratio swings by tens of percent
        beyond = _r(median_ci([100 * ((s[arm]["wall"] / s[arm]["job_cpu"]) / (s["bare"]["wall"] / s["bare"]["job_cpu"]) - 1)
                               for s in sets if s[arm]["job_cpu"] > 0 and s["bare"]["job_cpu"] > 0]))
        if all(s[k].get("job_user", 0) > 0 for s in sets for k in (arm, "bare")):
            # the job's extra CPU, speed-free: its Python work (user time) is the same in both arms, and what a sink
            # costs it is system time, so (1 + sys / user) wrapped against bare (one run's own ratio: a speed
            # change scales both its parts); every set
            ratio = _r(median_ci([100 * ((1 + s[arm]["job_sys"] / s[arm]["job_user"])
                                         / (1 + s["bare"]["job_sys"] / s["bare"]["job_user"]) - 1) for s in sets]))
        else:  # an older result without the split: sets of one speed
            ratio = _r(median_ci([100 * (s[arm]["job_cpu"] / s["bare"]["job_cpu"] - 1) for s in used if s["bare"]["job_cpu"] > 0]))
        a["beyond_job_pct"], a["job_cpu_ratio_pct"] = beyond, ratio
        a["speed_free"] = _speed_free(beyond, ratio, row.get("sink", ""))
        a["parts"] = _parts(used, arm)
        out[arm] = a
    if "other" in arms and "gpuvet" in arms:  # the A/B: this tree against the other, per set
        d = [100 * (s["gpuvet"]["wall"] - s["other"]["wall"]) / s["bare"]["wall"] for s in used]
        out["gpuvet_minus_other_pct"] = _r(median_ci(d))
    return out


def _parts(sets: list[dict[str, Any]], arm: str) -> dict[str, Any]:
    """What the wall overhead of ``arm`` is made of, per set against its bare run (the job's own time stamps, its
    first and last statement): ``start`` (ms: the wrapper's start-up before the job's, e.g. gpuvet's interpreter, its
    imports and the spawn), ``during`` (the job's own run, longer or shorter: the sink's cost to the job's writes, a
    full pipe, CPU contention), ``end`` (ms: from the job's last statement to the wrapper's exit), each also in % of the
    bare run's wall; the three add up to the wall overhead of the set."""
    xs = [s for s in sets if "start" in s[arm] and "start" in s["bare"]]
    if not xs:
        return {}
    out: dict[str, Any] = {"n": len(xs)}
    for part in ("start", "span", "end"):
        key = "during" if part == "span" else part
        out[key + "_ms"] = _r(median_ci([1000 * (s[arm][part] - s["bare"][part]) for s in xs]))
        out[key + "_pct"] = _r(median_ci([100 * (s[arm][part] - s["bare"][part]) / s["bare"]["wall"] for s in xs]))
    out["bare_start_ms"] = round(1000 * _med([s["bare"]["start"] for s in xs]), 1)
    out["bare_end_ms"] = round(1000 * _med([s["bare"]["end"] for s in xs]), 1)
    return out


def _speed_free(beyond: dict[str, Any], ratio: dict[str, Any], sink: str) -> dict[str, Any]:
    """The overhead as (1 + the wall beyond the job's CPU) x (1 + the job's extra CPU) - 1, and its verdict.  Into a
    file the job makes the bare job's own system calls (it writes straight into the file), so its CPU is the bare
    job's and the first factor is the overhead (the job-CPU column shows how close the measured CPU came); into
    /dev/null it writes into a pipe instead, which costs it more (system time: ``job_cpu_ratio_pct`` is its
    (1 + sys / user) against the bare job's): both factors count, each interval's ends multiplied (both intervals
    hold: >= 90 %)."""
    if beyond.get("coverage") is None:
        return {"verdict": "cannot tell", "how": "too few sets"}
    if sink == "file":
        return {"lo": beyond["lo"], "hi": beyond["hi"], "median": beyond["median"], "n": beyond["n"],
                "coverage": beyond["coverage"], "verdict": verdict(beyond),
                "how": "the wall beyond the job's CPU (the job's system calls are the bare job's)"}
    if ratio.get("coverage") is None:
        return {"verdict": "cannot tell", "how": "too few sets of one speed for the job's CPU"}
    lo = ((1 + beyond["lo"] / 100) * (1 + ratio["lo"] / 100) - 1) * 100
    hi = ((1 + beyond["hi"] / 100) * (1 + ratio["hi"] / 100) - 1) * 100
    med = ((1 + beyond["median"] / 100) * (1 + ratio["median"] / 100) - 1) * 100
    v = "met" if hi < GOAL_PCT else "not met" if lo > GOAL_PCT else "cannot tell"
    return {"lo": round(lo, 1), "hi": round(hi, 1), "median": round(med, 1), "n": beyond["n"],
            "coverage": round(beyond["coverage"] + ratio["coverage"] - 1, 3), "verdict": v,
            "how": "the wall beyond the job's CPU x the job's extra CPU in the pipe"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="256 MiB, 1,000,000 lines, up to 21 sets a log row within 20 s (33 s for the per-line rows), the pipe "
                         "floor arm but no `| cat` arm (--cat adds it): ~160 s on the H200 (day 6's closing run: 158 s "
                         "with the cat arm, before the floor arm)")
    ap.add_argument("--mb", type=int, default=512)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5, help="runs of the throughput and start-up rows")
    ap.add_argument("--pairs", type=int, default=25, help="at most this many interleaved sets per log row")
    ap.add_argument("--row-seconds", type=float, default=60.0,
                    help="a log row stops adding sets after this long (at least %d sets)" % MIN_PAIRS)
    ap.add_argument("--stderr-row-seconds", type=float, default=0.0,
                    help="the same for the per-line (stderr) rows (default: --row-seconds x 5/3)")
    ap.add_argument("--cpus", default="auto", help="auto, none, or JOB:REST (CPU lists, e.g. 15:13,14)")
    ap.add_argument("--seed", type=int, default=7, help="of the random order of the arms in each set")
    ap.add_argument("--no-cat", action="store_true", help="no `| cat` arm in the /dev/null rows")
    ap.add_argument("--cat", action="store_true", help="with --quick: the `| cat` arm too")
    ap.add_argument("--no-floor", action="store_true",
                    help="no pipe-floor arm (the job into the cheapest pipe reader) in the /dev/null rows")
    ap.add_argument("--long-lines", type=int, default=0,
                    help="add the log_long row: a longer job, this many block-buffered lines (4000000: ~5 s a run on "
                         "the H200, ~70-80 s for its 6 sets of bare and gpuvet); 0: none")
    ap.add_argument("--long-sinks", default="null", help="the log_long row's sinks: null, file or null,file")
    ap.add_argument("--long-floor", action="store_true",
                    help="the pipe floor arm in the log_long row too (the 1M-line block-buffered row has it)")
    ap.add_argument("--sinks", default="null,file", help="the 1M-line rows' sinks: null, file or null,file")
    ap.add_argument("--long-row-seconds", type=float, default=0.0,
                    help="the log_long row stops adding sets after this long (at least %d sets)" % MIN_PAIRS)
    ap.add_argument("--cases", default="",
                    help="comma-separated subset of throughput,log_stdout,log_stderr,log_long,startup, run in that order")
    ap.add_argument("--compare", default="", metavar="SRC",
                    help="another checkout's src/ (e.g. main's): its `gpuvet run` is one more arm of every log set "
                         "and start-up repeat (an A/B under the same load)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--name", default="", help="suffix of the result files (run_passthrough-NAME.json/.md)")
    ap.add_argument("--note", default="", help="a line for the Markdown (e.g. what else was running)")
    ap.add_argument("--resummarise", metavar="JSON", default="",
                    help="no runs: recompute the summaries and the Markdown from an earlier result's raw sets (this "
                         "version's statistics), into --out/run_passthrough-NAME.*")
    a = ap.parse_args()
    if a.resummarise:
        return resummarise(a.resummarise, a.out, a.name, a.note)
    if a.quick:
        a.mb, a.lines, a.repeat, a.pairs, a.row_seconds = 256, 1_000_000, 3, 21, 20.0
        # the floor arm is the cheaper reference (cat, woken by every write, is dearer than any reader need be: day
        # 6's closing run has its numbers); one arm fewer keeps the closing run in final.sh's time-out
        a.no_cat = a.no_cat or not a.cat
    a.stderr_row_seconds = a.stderr_row_seconds or a.row_seconds * 5 / 3
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
    load_before = _load()
    pin = Pinning(a.cpus)
    rng = random.Random(a.seed)
    short_sinks = [x for x in a.sinks.split(",") if x in ("null", "file")] or ["null", "file"]
    cases = {"throughput": ([PY, "-c", WRITER, str(a.mb)], False, ["null"]),
             "log_stdout": ([PY, "-c", LOGGER, str(a.lines), "stdout", cpu_file], False, short_sinks),
             "log_stderr": ([PY, "-c", LOGGER, str(a.lines), "stderr", cpu_file], True, short_sinks),
             "startup": (["true"], False, ["null"])}
    if a.long_lines > 0:  # before the start-up row, after the short ones (a run cut short still has those)
        cases = {k: v for k, v in cases.items() if k != "startup"}
        cases["log_long"] = ([PY, "-c", LOGGER, str(a.long_lines), "stdout", cpu_file], False,
                             [x for x in a.long_sinks.split(",") if x in ("null", "file")] or ["null"])
        cases["startup"] = (["true"], False, ["null"])
    if a.cases:  # in the order given (e.g. the long row first, where a time limit may cut a run short)
        cases = {k: cases[k] for k in a.cases.split(",") if k in cases}
    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine(), "load_avg_before": load_before,
               "pinning": pin.why}
    print(f"machine: {machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']}; "
          f"load average {load_before}; pinning {pin.why}", flush=True)
    # a time-out's SIGTERM (final.sh runs this under `timeout`): leave through the finally below (no temp files left)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    t_all = time.perf_counter()
    res: dict[str, dict] = {}
    spins: list[float] = []
    stem = os.path.join(a.out, "run_passthrough" + (f"-{a.name}" if a.name else ""))

    def save(final: bool = False) -> None:
        """Write the JSON and Markdown of what is measured so far (after every row: a run cut short by a time-out
        still leaves its finished rows)."""
        machine["load_avg_after"] = _load()
        machine["spin_s"] = {"best": round(min(spins), 5) if spins else None,
                             "median": round(_med(spins), 5) if spins else None, "count": len(spins)}
        doc = {"machine": machine, "params": {"mb": a.mb, "lines": a.lines, "repeat": a.repeat, "quick": a.quick,
                                              "pairs": a.pairs, "row_seconds": a.row_seconds,
                                              "stderr_row_seconds": a.stderr_row_seconds, "seed": a.seed,
                                              "compare": a.compare, "cases": a.cases, "cpus": a.cpus,
                                              "long_lines": a.long_lines, "long_sinks": a.long_sinks, "sinks": a.sinks,
                                              "long_row_seconds": a.long_row_seconds},
               "seconds": round(time.perf_counter() - t_all, 1), "results": res, "note": a.note, "complete": final,
               "goal": {"throughput_mb_s": 100, "log_heavy_overhead_pct": GOAL_PCT}}
        os.makedirs(a.out, exist_ok=True)
        with open(stem + ".json", "w") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        with open(stem + ".md", "w") as fh:
            fh.write(markdown(doc))
        if final:
            print(f"wrote {stem}.json and {stem}.md ({doc['seconds']} s)")

    try:
        for name, (argv, both, sinks) in cases.items():
            e = job_env if name.startswith("log") else env
            nbytes = _run(argv, e, both, count=True)[2]
            n2 = _run(gpuvet + argv, e, both, count=True)[2]
            assert n2 == nbytes, (name, n2, nbytes)  # every byte passed through
            _job_cpu(cpu_file)
            r: dict[str, Any] = {"bytes": nbytes}
            if name.startswith("log"):
                oe = dict(other_env)
                oe.pop("PYTHONUNBUFFERED", None)
                job = pin.job_argv(argv)
                for sink in sinks:
                    path = os.devnull if sink == "null" else sink_file
                    arms = {"bare": job, "gpuvet": gpuvet + job}
                    envs = {"bare": e, "gpuvet": e, "cat": e, "other": oe, "floor": dict(e, FLOOR=FLOOR)}
                    if sink == "null" and not a.no_cat and name != "log_long":
                        arms["cat"] = ["sh", "-c", '"$@" %s| cat > /dev/null' % ("2>&1 " if both else ""), "sh", *job]
                    if sink == "null" and not a.no_floor and (name != "log_long" or a.long_floor):
                        # the job in a session (a scheduler group) of its own, as under `gpuvet run`, the reader in the arm's
                        arms["floor"] = ["sh", "-c", '%s"$@" %s| "$0" -S -c "$FLOOR"' % (SETSID, "2>&1 " if both else ""),
                                         PY, *job]
                    if a.compare:
                        arms["other"] = gpuvet + job
                    secs = {"log_stderr": a.stderr_row_seconds, "log_long": a.long_row_seconds}.get(name, a.row_seconds)
                    # the long row's two counting runs above were its warm-up
                    row = _pairs(arms, envs, both, path, cpu_file, pin, rng, a.pairs, secs, spins,
                                 warm_up=name != "log_long" or sink != sinks[0])
                    row["sink"] = sink
                    s = _summarise(row, list(arms))
                    s["raw"] = [{k: ({kk: round(vv, 4) for kk, vv in v.items()} if isinstance(v, dict) else
                                     [round(x, 5) for x in v] if k == "spins" else v)
                                 for k, v in one.items()} for one in row["sets"]]
                    r[sink] = s
                    res[name] = r
                    save()
                    g = s["gpuvet"]
                    print(f"{name} -> {sink}: {nbytes / 1e6:.0f} MB, {s['used']} of {s['sets']} sets used "
                          f"({s['mixed']} mixed, {s['slow']} slow) in {s['seconds']} s; bare {s['bare_median_s']:.3f}s; "
                          f"gpuvet wall {_fmt_ci(g['wall_overhead_pct'])} -> {g['verdict']}; tree CPU "
                          f"{_fmt_ci(g['cpu_overhead_pct'])}; job CPU {s['bare_job_cpu_s']:.3f} / {g['job_cpu_s']:.3f} s"
                          + "".join(f"; {arm} wall {_fmt_ci(s[arm]['wall_overhead_pct'])}" for arm in ("cat", "floor", "other")
                                    if arm in s)
                          + "".join(f"; {arm}: start {_fmt_ci(s[arm]['parts'].get('start_ms'), ' ms')}, during "
                                    f"{_fmt_ci(s[arm]['parts'].get('during_pct'))}, end {_fmt_ci(s[arm]['parts'].get('end_ms'), ' ms')}"
                                    for arm in ("gpuvet", "floor") if s.get(arm, {}).get("parts")), flush=True)
                r["gpuvet_own_cpu_s"] = r[sinks[0]]["gpuvet"]["own_cpu_s"]
                r["gpuvet_cpu_s_per_100mb"] = round(r["gpuvet_own_cpu_s"] / (nbytes / 1e6) * 100, 3) if nbytes else None
            else:
                reps = 3 * a.repeat if name == "startup" else a.repeat
                bare, wrapped, bare_cpu, wrapped_cpu, others = [], [], [], [], []
                for _rep in range(reps):
                    t, c, _n = _run(argv, e, both)
                    bare.append(t)
                    bare_cpu.append(c)
                    t, c, _n = _run(gpuvet + argv, e, both)
                    wrapped.append(t)
                    wrapped_cpu.append(c)
                    if a.compare and name == "startup":
                        others.append(_run(gpuvet + argv, other_env, both)[0])
                b, w = _med(bare), _med(wrapped)
                r.update({"repeats": reps, "bare_s": [round(x, 3) for x in bare], "gpuvet_s": [round(x, 3) for x in wrapped],
                          "bare_median_s": round(b, 3), "gpuvet_median_s": round(w, 3),
                          "gpuvet_own_cpu_s": round(_med(wrapped_cpu) - _med(bare_cpu), 3)})
                if name == "throughput":
                    mb = nbytes / 1e6
                    r.update({"bare_mb_s": round(mb / b, 1), "gpuvet_mb_s": round(mb / w, 1),
                              "gpuvet_cpu_s_per_100mb": round(r["gpuvet_own_cpu_s"] / mb * 100, 3)})
                    print(f"throughput: {mb:.0f} MB; bare {b:.2f}s, gpuvet run {w:.2f}s: {r['gpuvet_mb_s']} MB/s; "
                          f"gpuvet's CPU {r['gpuvet_own_cpu_s']:.2f}s ({r['gpuvet_cpu_s_per_100mb']} s per 100 MB)", flush=True)
                else:
                    # how much later the job itself starts under gpuvet, and how much of that is the interpreter's start
                    r["job_start_ms"] = {"bare": _job_start_delay([], env, reps), "gpuvet": _job_start_delay(gpuvet, env, reps)}
                    if a.compare:
                        r["job_start_ms"]["other"] = _job_start_delay(gpuvet, other_env, reps)
                        r["other_median_s"] = round(_med(others), 3)
                    r["interpreter_ms"] = _interp_start(env, reps)
                    print(f"startup: bare {b:.3f}s, gpuvet run {w:.3f}s; gpuvet's CPU {r['gpuvet_own_cpu_s']:.3f}s; the job "
                          f"starts after {r['job_start_ms']} ms; the interpreter alone {r['interpreter_ms']} ms", flush=True)
            res[name] = r
            save()
    finally:
        for p in (sink_file, cpu_file):
            try:
                os.unlink(p)
            except OSError:
                pass
        os.rmdir(tmp)
    save(True)
    return 0


def resummarise(path: str, out: str, name: str, note: str) -> int:
    """Recompute every log row's summary from its raw sets (the slow mode against the fastest spin of the whole run)."""
    with open(path) as fh:
        doc = json.load(fh)
    rows = [(r, sink) for key, r in doc["results"].items() if key.startswith("log") for sink in ("null", "file") if sink in r]
    best = min(sp for r, sink in rows for one in r[sink]["raw"] for sp in one["spins"])
    for r, sink in rows:
        old = r[sink]
        for one in old["raw"]:
            slow = [sp > SLOW_RATIO * best for sp in one["spins"]]
            one["mode"] = "mixed" if any(slow) and not all(slow) else "slow" if all(slow) else "fast"
        arms = ["bare"] + sorted(k for k in old["raw"][0]["order"] if k != "bare")
        new = _summarise({"sets": old["raw"], "seconds": old["seconds"], "sink": sink, "spin_best_s": best}, arms)
        new["raw"] = old["raw"]
        r[sink] = new
    doc["note"] = (doc.get("note", "") + " " + note).strip()
    doc["resummarised_from"] = os.path.basename(path)
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, "run_passthrough" + (f"-{name}" if name else ""))
    with open(stem + ".json", "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    with open(stem + ".md", "w") as fh:
        fh.write(markdown(doc))
    print(f"wrote {stem}.json and {stem}.md")
    return 0


def markdown(doc: dict) -> str:
    m, res, p = doc["machine"], doc["results"], doc["params"]
    other = bool(p.get("compare"))
    rows = []
    parts_rows = []
    for name, what in (("log_stdout", "stdout, block-buffered"), ("log_stderr", "stderr, one write per line"),
                       ("log_long", "stdout, block-buffered, **realistic length**")):
        if name not in res:
            continue
        r = res[name]
        n_lines = p.get("long_lines") if name == "log_long" else p["lines"]
        for sink, label in (("null", "/dev/null"), ("file", "a file")):
            s = r.get(sink)
            if not s:
                continue
            g = s["gpuvet"]
            extra = []
            if "cat" in s:
                c = s["cat"]
                extra.append(f"`\\| cat`: wall {_fmt_ci(c['wall_overhead_pct'])}, speed-free {_fmt_ci(c.get('speed_free'))}, "
                             f"the job's extra CPU {_fmt_ci(c.get('job_cpu_ratio_pct'))}")
            if "floor" in s:
                f = s["floor"]
                extra.append(f"pipe floor: wall {_fmt_ci(f['wall_overhead_pct'])}, speed-free {_fmt_ci(f.get('speed_free'))}, "
                             f"the job's extra CPU {_fmt_ci(f.get('job_cpu_ratio_pct'))}")
            if "other" in s:
                o = s["other"]
                extra.append(f"other tree: wall {_fmt_ci(o['wall_overhead_pct'])}, speed-free {_fmt_ci(o.get('speed_free'))} "
                             f"({o.get('speed_free', {}).get('verdict')}); this minus other (wall, per set) "
                             f"{_fmt_ci(s.get('gpuvet_minus_other_pct'))}")
            sf = g.get("speed_free", {})
            sf_txt = (f"**{_fmt_ci(sf)}** ({sf['verdict']})" if sf.get("median") is not None else sf.get("verdict", ""))
            rows.append(
                f"| {n_lines:,} lines ({r['bytes'] / 1e6:.0f} MB), {what} | {label} | {s['used']} of {s['sets']} "
                f"({s['mixed']} mixed, {s['slow']} slow{'' if s.get('basis', 'sets not mixed') == 'sets not mixed' else '; mixed kept: too few others'}) | "
                f"{s['bare_median_s']} s | {g['median_s']} s | "
                f"{_fmt_ci(g['wall_overhead_pct'])} ({g['verdict']}) | {sf_txt} | {_fmt_ci(g.get('beyond_job_pct'))} | "
                f"{_fmt_ci(g.get('job_cpu_ratio_pct'))} | {_fmt_ci(g['cpu_overhead_pct'])} | "
                f"{s['bare_job_cpu_s']} / {g['job_cpu_s']} s | {g['own_cpu_s']} s | {'; '.join(extra)} |")
            for arm, arm_label in (("gpuvet", "`gpuvet run`"), ("floor", "pipe floor"), ("cat", "`\\| cat`")):
                pt = s.get(arm, {}).get("parts")
                if not pt:
                    continue
                parts_rows.append(
                    f"| {n_lines:,} lines, {what} | {label} | {arm_label} | {_fmt_ci(s[arm]['wall_overhead_pct'])} | "
                    f"{_fmt_ci(pt['start_ms'], ' ms')} ({_fmt_ci(pt['start_pct'])}) | {_fmt_ci(pt['during_pct'])} | "
                    f"{_fmt_ci(pt['end_ms'], ' ms')} ({_fmt_ci(pt['end_pct'])}) | {_fmt_ci(s[arm].get('job_cpu_ratio_pct'))} | "
                    f"{pt['bare_start_ms']} / {pt['bare_end_ms']} ms |")
    head = ("| case | sink (bare and wrapped alike) | sets used (of run) | bare, median | `gpuvet run`, median | "
            "wall overhead per set: median [95% interval] (verdict) | **speed-free overhead** (verdict, < 10%) | "
            "wall beyond the job's CPU, per set | the job's extra CPU, per set | tree CPU overhead per set | job's CPU "
            "bare / wrapped | gpuvet's own CPU (+ grep) | other arms |\n|" + "---|" * 13 + "\n")
    lines = [f"# gpuvet run pass-through ({m['platform']}, {m['cpus']} CPUs, Python {m['python']})\n",
             f"`python bench/run_passthrough.py{' --quick' if p.get('quick') else ''}"
             f"{' --compare ' + p['compare'] if other else ''}`: {doc['seconds']} s in all.  Load average before "
             f"{m['load_avg_before']}, after {m['load_avg_after']}.  Pinning: {m.get('pinning')}.  "
             f"Calibration spin on the job's CPU: best {m['spin_s']['best']} s, median {m['spin_s']['median']} s "
             f"({m['spin_s']['count']} spins).{(' ' + doc['note']) if doc.get('note') else ''}"
             + ("" if doc.get("complete", True) else "  **Incomplete: cut short after the rows below.**") + "\n"]
    if "throughput" in res:
        t = res["throughput"]
        lines.append(f"Pass-through: {p['mb']} MiB in 64 KiB blocks to /dev/null: bare {t['bare_median_s']} s, `gpuvet run` "
                     f"{t['gpuvet_median_s']} s: **{t['gpuvet_mb_s']} MB/s** (goal >= 100 MB/s: "
                     f"{'met' if t['gpuvet_mb_s'] >= 100 else 'not met'}); gpuvet's CPU {t['gpuvet_own_cpu_s']} s "
                     f"({t['gpuvet_cpu_s_per_100mb']} s / 100 MB); medians of {t['repeats']}.\n")
    if rows:
        lines.append(head + "\n".join(rows) + "\n")
    if parts_rows:
        lines.append(
            "What the wall overhead is made of, per set against its bare run, from the job's own time stamps (its first "
            "and last statement): *start*, the launch to the job's first statement beyond the bare job's (the wrapper's "
            "start-up: its interpreter, its imports, the spawn); *during*, the job's own run beyond the bare job's (what "
            "the sink costs its writes, a full pipe, contention), in % of the bare wall; *end*, the job's last statement to "
            "the wrapper's exit beyond the bare job's. The three add up to the set's wall overhead; medians [95%].\n\n"
            "| case | sink | arm | wall overhead | start, ms (% of bare wall) | during, % of bare wall | end, ms (%) | "
            "the job's extra CPU (sys/user) | bare job: start / end |\n|" + "---|" * 9 + "\n" + "\n".join(parts_rows) + "\n")
    if "startup" in res:
        st = res["startup"]
        js, it = st.get("job_start_ms", {}), st.get("interpreter_ms", {})
        lines.append(f"Start-up: `gpuvet run -- true` {st['gpuvet_median_s']} s (bare `true` {st['bare_median_s']} s), "
                     f"gpuvet's CPU {st['gpuvet_own_cpu_s']} s"
                     + (f", the other tree {st['other_median_s']} s" if "other_median_s" in st else "")
                     + f".  `date` as the job starts {js.get('gpuvet')} ms after the launch (bare {js.get('bare')} ms"
                     + (f", the other tree {js.get('other')} ms" if "other" in js else "")
                     + f"); an interpreter reaches its first statement after {it.get('python')} ms (`python -c`), "
                     f"{it.get('python -S')} ms with `-S` (the difference is site: the .pth files of site-packages): the "
                     "rest of the delay is gpuvet's own (its imports before the spawn, the spawn).\n")
    lines.append(
        "How to read it: each set runs its arms (bare, `gpuvet run`, and the others named) back to back in a random "
        "order; the overhead of a set is its arm's wall (or whole-tree CPU) time against the bare run of the same set. "
        "The interval is distribution-free (order statistics: it holds the median with >= 95% probability). A spin "
        f"(fixed work on the job's CPU, its CPU time) over {SLOW_RATIO}x the fastest one seen is in the slow mode; a set is "
        "*mixed* when its spins before, between and after its runs are in different modes (the machine changed speed "
        "during it): mixed sets are left out of the numbers and counted (unless fewer "
        f"than {MIN_PAIRS} others are left: then every set counts, and the row says so); *slow* "
        "sets ran wholly in the slow mode (kept: both arms alike). Verdict: met when the interval's upper end is under "
        "10%, not met when its lower end is over 10%, otherwise cannot tell. *Pipe floor*: the same job into the "
        "cheapest pipe reader (it reads as gpuvet's pump does and keeps nothing; the job in a session of its own): what any "
        "capture of the output costs the job. *Speed-free*: the machine's speed scales a "
        "run's wall and its job's CPU alike, so the wall beyond the job's CPU ((wall / job CPU) wrapped against bare, per "
        "set, every set) holds still where the plain wall ratio swings; into a file the job makes the bare job's own "
        "system calls, so that is the overhead; into /dev/null the job writes into a pipe instead, so its extra CPU "
        "multiplies in: its system time against its user time (its Python work, the same in both arms), (1 + sys / user) "
        "wrapped against bare, per set; each interval's ends multiplied (both intervals hold: >= 90%). The job's CPU is what it reported itself "
        "(getrusage at its end): under `gpuvet run` it writes into a pipe instead of /dev/null (which costs it more), and "
        "straight into the file sink, as bare. gpuvet's own CPU = the wrapped tree's CPU minus the job's.\n")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
