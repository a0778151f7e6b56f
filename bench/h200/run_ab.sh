#!/usr/bin/env bash
# One H200 measurement of `gpuvet run` (issue 7), A/B: this tree against BASE (the code before the change,
# another checkout's src/), alternating under the same load.  Run from this tree's root on the device machine,
# with main's wheels in ../.whl (device tool: carry [".whl", ".dev-<you>", ".dev-<you>base"]):
#   bash bench/h200/run_ab.sh ../.dev-<you>base/src
# Writes under $OUT/ab: the bench (bench.txt, run_passthrough-h200-ab.{md,json}), the failure path's wall time,
# the job's CPU under different pipe readers (pipes.txt), the GIL hand-off (gil.txt), tests/test_run*.py under
# the machine's Python.  Every step has a time-out; the whole stays under 4 minutes.
set -u
BASE=${1:?usage: run_ab.sh BASE_SRC}
LINES=${LINES:-1000000}  # smaller (and BENCH="--mb 8 --lines 20000", NO_WHL=1) for a dry run elsewhere
BENCH=${BENCH:---quick}
export NO_COLOR=1
[ -n "${NO_WHL:-}" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
D=$OUT/ab; mkdir -p $D
{ date -u; nproc; python3 --version; uptime; echo "pipe-max-size $(cat /proc/sys/fs/pipe-max-size) uid $(id -u)"; } > $D/machine.txt 2>&1
t() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(t) - $1}"; }
S=$D/summary.txt; cat $D/machine.txt > $S
# 1. the bench, with BASE's `gpuvet run` as a third run of every log and start-up repeat (~80 s)
t0=$(t); timeout 140 python3 bench/run_passthrough.py $BENCH --name h200-ab --out $D --compare "$BASE" \
  --note "idle H200, A/B: this change against $BASE" > $D/bench.txt 2>&1; echo "bench rc=$? wall=$(since $t0)s" >> $S
cat $D/run_passthrough-h200-ab.md >> $S 2>/dev/null
# 2. a failed job after 1,000,000 log lines: the wall time from the job's end to gpuvet's (bundle + diagnosis)
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
for rep in 1 2; do for src in "$BASE" "$PWD/src"; do for here in --no-here --here; do
  rm -rf /tmp/fb; s=$(t)
  PYTHONPATH=$src:/tmp/site timeout 30 python3 -m gpuvet run $here --bundle /tmp/fb -- python3 /tmp/failjob.py $LINES > /dev/null 2>/tmp/fb.err
  rc=$?; e=$(t)
  echo "failure path $src $here: rc=$rc total $(awk "BEGIN{printf \"%.2f\", $e - $s}") s, after the job's end $(awk "BEGIN{printf \"%.2f\", $e - $(cat /tmp/failjob.end)}") s; $(ls /tmp/fb | tr '\n' ' ')" >> $D/failure.txt
done; done; done
echo "failure path wall=$(since $t0)s" >> $S; cat $D/failure.txt >> $S
# 3. the run tests under this machine's Python
t0=$(t); PYTHONPATH=/tmp/site:$PWD/src timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_run_start.py \
  tests/test_run_fast.py tests/test_run_cmd.py tests/test_run_robust.py tests/test_run_pipe.py > $D/pytest-run.txt 2>&1
echo "pytest run tests rc=$? wall=$(since $t0)s: $(tail -1 $D/pytest-run.txt)" >> $S
# 4. what a pipe reader's strategy costs the job (its own CPU), and the GIL hand-off under a CPU-bound thread
t0=$(t); REPS=3 timeout 25 python3 bench/h200/pipe_reader.py $LINES > $D/pipes.txt 2>&1; echo "pipes rc=$? wall=$(since $t0)s" >> $S
cat $D/pipes.txt >> $S
for iv in 0.005 0.0005 0.005 0.0005; do timeout 5 python3 bench/h200/gil_handoff.py $iv; done > $D/gil.txt 2>&1
cat $D/gil.txt >> $S
# 5. the interpreter's own start-up, which no `gpuvet run` can overlap (site's .pth hooks included)
python3 - > $D/startup.txt 2>&1 <<'EOF'
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
uptime >> $S
cat $S
