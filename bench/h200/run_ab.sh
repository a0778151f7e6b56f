#!/usr/bin/env bash
# One H200 measurement of `gpuvet run` (issue 7), A/B: this tree against BASE (the code before the change, another
# checkout's src/), under the same load; without BASE, this tree alone.  Run from this tree's root on the device
# machine, with the dependencies' wheels in $WHL (default ../.whl; device tool: carry [".whl", ".dev-<you>",
# ".dev-<you>base"]):
#   NAME=<you> bash bench/h200/run_ab.sh ../.dev-<you>base/src
#   NAME=<you> WHL=../.whl-<you> BENCH="... --long-lines 8000000" bash bench/h200/run_ab.sh     # no A/B (day 7, r13)
# (day 4 ran it as run_ab.sh, day 5 as its copy run_r11.sh; both are this script now, with parameters.)
# Writes $OUT/$NAME: summary.txt, machine.txt and one file per step.  STEPS picks the steps (default all but the
# slow diagnostics "contention pipes gil"):
#   bench      bench/run_passthrough.py $BENCH --compare BASE (the other tree as one more arm of every set)
#   failure    a job failing after $LINES log lines, into /dev/null and into a file: the job's end to gpuvet's exit
#   tests      tests/test_run*.py under this machine's Python ($TESTS: other pytest arguments)
#   startup    the interpreter's own start-up (python -c pass / -S / -I) and what site imports
#   venv       the README's install path: gpuvet's wheel ($WHEEL, e.g. built by `pip wheel --no-deps .`) alone in a
#              fresh venv; when the job starts under its `gpuvet` console script, against this tree's `python3 -m gpuvet`
#   contention the bench's job's CPU beside grep (plain, nice +10), into `| cat`, into a file
#   pipes      a pipe reader's strategies (bench/h200/pipe_reader.py)      gil   the GIL hand-off (gil_handoff.py)
# Every step has a time-out; the default steps stay under 4 minutes.  For a dry run elsewhere:
#   NO_WHL=1 LINES=20000 BENCH="--mb 8 --lines 20000 --pairs 6 --row-seconds 0" bash bench/h200/run_ab.sh BASE_SRC
set -u
BASE=${1:-}
[ -z "$BASE" ] || BASE=$(cd "$BASE" && pwd) || exit 1
WHL=${WHL:-../.whl}
NAME=${NAME:-ab}
LINES=${LINES:-1000000}
BENCH=${BENCH:---quick}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-220}
STEPS=" ${STEPS:-bench failure tests startup} "
export LINES NO_COLOR=1
D=$OUT/$NAME; mkdir -p $D
t() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(t) - $1}"; }
want() { case "$STEPS" in *" $1 "*) return 0;; esac; return 1; }
S=$D/summary.txt
t0=$(t)
[ -n "${NO_WHL:-}" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $WHL/*.whl > $D/pip.txt 2>&1 || exit 1
export PYTHONPATH=/tmp/site
{ date -u; nproc; python3 --version; uptime; echo "pipe-max-size $(cat /proc/sys/fs/pipe-max-size) uid $(id -u)"
  lscpu | grep -E "^(Model name|Thread|Core|Socket|NUMA node\(s\))"; echo "wheels $(since $t0)s"; } > $D/machine.txt 2>&1
cat $D/machine.txt > $S
if want bench; then
  t0=$(t); timeout $BENCH_TIMEOUT python3 bench/run_passthrough.py $BENCH --name h200-$NAME --out $D ${BASE:+--compare "$BASE"} \
    --note "idle H200, ${BASE:+A/B: $NAME against $BASE}${BASE:-$NAME, no A/B}" > $D/bench.txt 2>&1
  echo "bench rc=$? wall=$(since $t0)s" >> $S; cat $D/run_passthrough-h200-$NAME.md >> $S 2>/dev/null
fi
if want failure; then
  cat > /tmp/failjob.py <<'EOF'
import sys, time
w = sys.stdout.write
acc = 0.0
for step in range(int(sys.argv[1])):
    acc += (step % 97) * 1e-3
    w(f"[rank0] step {step} | loss {2.5 - acc / (step + 1):.4f} | lr 3.0e-04 | tok/s {12000 + step % 500}\n")
sys.stdout.flush()
sys.stderr.write("RuntimeError: CUDA error: out of memory\n")
open("/tmp/failjob.end", "w").write(str(time.time()))
sys.exit(1)
EOF
  t0=$(t)
  for src in $BASE "$PWD/src"; do for sink in /dev/null /tmp/failsink.log; do
    rm -rf /tmp/fb; s=$(t)
    PYTHONPATH=$src:/tmp/site timeout 30 python3 -m gpuvet run --no-here --bundle /tmp/fb -- python3 /tmp/failjob.py $LINES > $sink 2>/tmp/fb.err
    rc=$?; e=$(t)
    echo "failure path $src > $sink: rc=$rc total $(awk "BEGIN{printf \"%.2f\", $e - $s}") s, after the job's end $(awk "BEGIN{printf \"%.2f\", $e - $(cat /tmp/failjob.end)}") s; $(ls /tmp/fb | tr '\n' ' '); $(python3 -c "import json; d=json.load(open('/tmp/fb/diagnosis.json')); print(d['diagnoses'][0]['cause'] if d['diagnoses'] else None, d['run']['output_bytes'])" 2>&1)" >> $D/failure.txt
  done; done
  echo "failure path wall=$(since $t0)s" >> $S; cat $D/failure.txt >> $S
fi
if want tests; then
  t0=$(t); PYTHONPATH=/tmp/site:$PWD/src timeout ${TESTS_TIMEOUT:-60} python3 -m pytest -q -p no:cacheprovider ${TESTS:-tests/test_run_start.py \
    tests/test_run_fast.py tests/test_run_cmd.py tests/test_run_robust.py tests/test_run_pipe.py tests/test_run_file.py} > $D/pytest-run.txt 2>&1
  echo "pytest run tests rc=$? wall=$(since $t0)s: $(tail -1 $D/pytest-run.txt)" >> $S
fi
if want startup; then
  timeout 30 python3 - > $D/startup.txt 2>&1 <<'EOF'
import statistics, subprocess, sys, time
for args in (["-c", "pass"], ["-S", "-c", "pass"], ["-I", "-c", "pass"]):
    xs = []
    for _ in range(15):
        t = time.perf_counter(); subprocess.run([sys.executable, *args]); xs.append(time.perf_counter() - t)
    print(f"python3 {' '.join(args)}: median {statistics.median(xs) * 1e3:.1f} ms, min {min(xs) * 1e3:.1f} ms")
p = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
rows = [ln.split("|") for ln in p.stderr.splitlines()[1:] if ln.count("|") == 2]
for r in sorted(rows, key=lambda r: -int(r[1]))[:8]:
    print("importtime cumulative", r[1].strip(), "us", r[2].rstrip())
EOF
  cat $D/startup.txt >> $S
fi
if want venv && [ -n "${WHEEL:-}" ]; then
  t0=$(t); { python3 -m venv /tmp/rv && /tmp/rv/bin/pip install -q --no-index --no-deps "$WHEEL"; } > $D/venv.txt 2>&1
  echo "venv rc=$? wall=$(since $t0)s" >> $D/venv.txt
  timeout 40 python3 - >> $D/venv.txt 2>&1 <<'EOF'
import os, statistics, subprocess, sys, time
def first(argv, reps=15, env=None):
    xs = []
    for _ in range(reps):
        t0 = time.time_ns()
        out = subprocess.run(argv, capture_output=True, text=True, env=env).stdout
        try:
            xs.append((int(out.split()[0]) - t0) / 1e6)
        except (ValueError, IndexError):
            pass
    return f"median {statistics.median(xs):.1f} ms, min {min(xs):.1f} ms ({len(xs)} runs)" if xs else "no output"
clock = ["-c", "import time; print(time.time_ns())"]
plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
print("venv python reaches its first statement:", first(["/tmp/rv/bin/python", *clock], env=plain))
print("venv python -S reaches its first statement:", first(["/tmp/rv/bin/python", "-S", *clock], env=plain))
print("venv `gpuvet run -- date`: the job starts after", first(["/tmp/rv/bin/gpuvet", "run", "--no-here", "--", "date", "+%s%N"], env=plain))
p = subprocess.run(["/tmp/rv/bin/python", "-X", "importtime", "/tmp/rv/bin/gpuvet", "run", "--no-here", "--", "true"],
                   capture_output=True, text=True, env=plain)
rows = [ln.split("|") for ln in p.stderr.splitlines() if ln.count("|") == 2 and not ln.split("|")[2].startswith("  ")]
print("venv console script, top-level imports (cumulative us; `re` is pip's script template's):",
      ", ".join(f"{r[2].strip()} {r[1].strip()}" for r in rows if r[2].strip() in ("site", "re", "gpuvet.cli.fast", "gpuvet.app.run_start", "gpuvet.app.run")))
print("system python3 reaches its first statement:", first([sys.executable, *clock]))
env = dict(os.environ, PYTHONPATH="src:" + os.environ.get("PYTHONPATH", ""))
print("system `python3 -m gpuvet run -- date` (this tree, as the bench runs it): the job starts after",
      first([sys.executable, "-m", "gpuvet", "run", "--no-here", "--", "date", "+%s%N"], env=env))
EOF
  cat $D/venv.txt >> $S
fi
if want contention; then
  t0=$(t); timeout 25 python3 - > $D/contention.txt 2>&1 <<'EOF'
import os, resource, statistics, subprocess, sys, time
sys.path.insert(0, "src")
from gpuvet.app.run import middle_patterns
pf = "/tmp/pats.txt"; open(pf, "w").write("\n".join(middle_patterns()) + "\n")
big = "/tmp/big.log"
with open(big, "w") as fh:
    for i in range(int(os.environ["LINES"])):
        fh.write(f"[rank0] step {i} | loss 2.5 | lr 3.0e-04 | tok/s {12000 + i % 500}\n")
JOB = ("import resource, sys\nw = sys.stdout.write\nacc = 0.0\nfor step in range(" + os.environ["LINES"] + "):\n"
       "    acc += (step % 97) * 1e-3\n    w(f'[rank0] step {step} | loss {2.5 - acc / (step + 1):.4f} | lr 3.0e-04 | tok/s {12000 + step % 500}\\n')\n"
       "sys.stdout.flush()\nru = resource.getrusage(resource.RUSAGE_SELF)\nsys.stderr.write(f'{ru.ru_utime + ru.ru_stime}\\n')\n")
env = dict(os.environ); env.pop("PYTHONUNBUFFERED", None)
def job(shell_tail="> /dev/null", burner=None):
    b = subprocess.Popen(["sh", "-c", f"{burner} while :; do LC_ALL=C grep -a -n -E -f {pf} {big} > /dev/null; done"],
                         start_new_session=True) if burner is not None else None
    time.sleep(0.05 if b else 0)
    t = time.perf_counter()
    p = subprocess.run(["sh", "-c", f'"$@" {shell_tail}', "sh", sys.executable, "-c", JOB], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if b:
        os.killpg(b.pid, 9)
        b.wait()
    return wall, float(p.stderr.split()[-1])
V = {"bare > /dev/null": lambda: job(), "> /dev/null, grep busy": lambda: job(burner=""),
     "> /dev/null, grep busy nice 10": lambda: job(burner="renice -n 10 $$ > /dev/null;"),
     "| cat > /dev/null": lambda: job("| cat > /dev/null"), "> file": lambda: job("> /tmp/c.log")}
res = {k: [] for k in V}
for _ in range(3):
    for k, f in V.items():
        res[k].append(f())
for k, xs in res.items():
    print(f"{k:34s} job CPU median {statistics.median(x[1] for x in xs):.3f} s, wall {statistics.median(x[0] for x in xs):.3f} s  ({' '.join('%.2f' % x[1] for x in xs)})")
print("load", os.getloadavg())
EOF
  echo "contention rc=$? wall=$(since $t0)s" >> $S; cat $D/contention.txt >> $S
fi
if want pipes; then
  t0=$(t); REPS=3 timeout 25 python3 bench/h200/pipe_reader.py $LINES > $D/pipes.txt 2>&1; echo "pipes rc=$? wall=$(since $t0)s" >> $S
  cat $D/pipes.txt >> $S
fi
if want gil; then
  for iv in 0.005 0.0005 0.005 0.0005; do timeout 5 python3 bench/h200/gil_handoff.py $iv; done > $D/gil.txt 2>&1
  cat $D/gil.txt >> $S
fi
uptime >> $S
cat $S
