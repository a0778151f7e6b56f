#!/usr/bin/env bash
# Day 9's device run (carry [".whl"], the dependencies' wheels for the image's Python 3.12), issue 7:
#   OUT=$OUT timeout 590 bash bench/h200/day9.sh all
#       the pass-through rows day 8 could not tell (the short jobs into /dev/null), long and repeated enough to decide,
#       then the final part; ~5.5-6 min on 16 cores (day 8's `all`: 320 s)
#   OUT=$OUT timeout 590 bash bench/h200/day9.sh passthrough
#       the same rows with more sets, plus the 4M-line realistic row (day 8: met, 3.9%) again
#   OUT=$OUT timeout 560 bash bench/h200/day9.sh final
#       gpuvet check on the healthy machine (80 columns, JSON), the GPU tests (tests/test_gpu_live.py), gpuvet run's pipe
#       and robustness tests, the founding-incident tests, day 9's diagnose and run-middle tests, bench/check_speed.py
#   OUT=/tmp/x bash bench/h200/day9.sh dry
#       this script's every step at toy sizes on any machine (no GPU: the GPU tests skip; no .whl/: the current Python's
#       packages), so that a typo cannot cost a device call
# Why the short rows could not tell on day 8: 6 sets each (20 s a row), whose order-statistic interval is the min and
# max of the sets; and a fixed ~60-77 ms start that is 3-5% of a 1.3-2.4 s job.  Here the block-buffered row runs
# 2,000,000 lines (~2.7 s bare on the H100: the start is ~2.4% of it) and both rows run up to 25 sets (a 95% interval
# from inner order statistics, narrower than min..max); the sinks of day 8's met rows (a file) are left out.
# Everything goes to $OUT/day9-MODE/ and $OUT/summary.txt.
set -u
MODE=${1:-final}
export PYTHONUNBUFFERED=1 NO_COLOR=1
if [ "$MODE" = dry ]; then
  PY=${PY:-python3}
else
  PY=python3
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/src
fi
export GPUVET_DB=/tmp/gpuvet-day9-$$.sqlite
D=$OUT/day9-$MODE; mkdir -p "$D"
S=$OUT/summary.txt
t() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(t) - $1}"; }
# the tree that ran (the device copy's .git can be stale: day 8's printed an older commit): a digest of src/ and bench/
# that `find src bench -name '*.py' -o -name '*.sh' | LC_ALL=C sort | xargs cat | sha256sum` reproduces on a checkout
TREE=$(find src bench -name '*.py' -o -name '*.sh' | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
{ date -u; echo "mode $MODE, tree digest $TREE"; git log --oneline -1 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
  $PY --version; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
  nproc; uptime; } > "$D/machine.txt" 2>&1
cat "$D/machine.txt" > "$S"

passthrough() {  # $1: seconds for the block-buffered row, $2: for the per-line row, $3: the 4M-line row (0: none)
  local common=(--mb 256 --repeat 3 --pairs 25 --no-cat --sinks null --out "$D")
  local t0
  t0=$(t); timeout $(( $1 + 60 )) $PY bench/run_passthrough.py "${common[@]}" --cases log_stdout --lines "$LINES_OUT" \
    --row-seconds "$1" --name day9-stdout --note "device, day 9: block-buffered into /dev/null, $LINES_OUT lines" \
    > "$D/run_passthrough-stdout.txt" 2>&1
  echo "run_passthrough (block-buffered, /dev/null, $LINES_OUT lines) rc=$? wall=$(since "$t0")s" >> "$S"
  t0=$(t); timeout $(( $2 + 60 )) $PY bench/run_passthrough.py "${common[@]}" --cases log_stderr --lines "$LINES_ERR" \
    --row-seconds "$2" --stderr-row-seconds "$2" --name day9-stderr \
    --note "device, day 9: one write per line into /dev/null, $LINES_ERR lines" > "$D/run_passthrough-stderr.txt" 2>&1
  echo "run_passthrough (one write per line, /dev/null, $LINES_ERR lines) rc=$? wall=$(since "$t0")s" >> "$S"
  local rest=throughput,startup
  [ "$3" != 0 ] && rest=log_long,throughput,startup
  t0=$(t); timeout $(( ${3:-0} + 90 )) $PY bench/run_passthrough.py "${common[@]}" --cases "$rest" --lines "$LINES_ERR" \
    --long-lines "$LINES_LONG" --long-row-seconds "$3" --name day9-rest --note "device, day 9: throughput, start-up" \
    > "$D/run_passthrough-rest.txt" 2>&1
  echo "run_passthrough ($rest) rc=$? wall=$(since "$t0")s" >> "$S"
  for x in stdout stderr rest; do  # the Markdown into the summary (the device tool may leave the result files out)
    cat "$D/run_passthrough-day9-$x.md" >> "$S" 2>/dev/null || tail -20 "$D/run_passthrough-$x.txt" >> "$S"
  done
}

LINES_OUT=2000000; LINES_ERR=1000000; LINES_LONG=4000000
case "$MODE" in
  all) passthrough 100 120 0 ;;
  passthrough) passthrough 150 200 100 ;;
  dry) LINES_OUT=20000; LINES_ERR=20000; LINES_LONG=40000; passthrough 2 2 2 ;;
esac

if [ "$MODE" != passthrough ]; then
  t0=$(t); COLUMNS=80 $PY -m gpuvet check > "$D/check-80.txt" 2>&1; echo "check (80 cols) rc=$? wall=$(since "$t0")s" >> "$S"
  $PY -m gpuvet check --format json -o "$D/check.json" > /dev/null 2>&1; echo "check json rc=$?" >> "$S"
  $PY -c "import json; d=json.load(open('$D/check.json')); print('score', d.get('score'), 'failed', [f['code'] for f in d['findings'] if f['outcome']=='failed'])" >> "$S" 2>&1
  TESTS=(tests/test_gpu_live.py tests/test_run_pipe.py tests/test_founding_forms_day7.py tests/test_run_robust.py
         tests/test_founding_incident.py tests/test_grep_prefilter_paths.py tests/test_detector_gates_day9.py
         tests/test_run_diag_bound.py)
  [ -f tests/test_run_middle_day9.py ] && TESTS+=(tests/test_run_middle_day9.py)
  t0=$(t); timeout 200 $PY -m pytest -q -p no:cacheprovider -rs "${TESTS[@]}" > "$D/pytest.txt" 2>&1
  echo "pytest (GPU, run pipe/robustness/middle, founding, diagnose paths) rc=$? wall=$(since "$t0")s" >> "$S"
  tail -10 "$D/pytest.txt" >> "$S"
  RUNS=3; [ "$MODE" = dry ] && RUNS=1
  timeout 70 $PY bench/check_speed.py --runs $RUNS --label device-day9 --python $PY > "$D/check_speed.txt" 2>&1
  echo "check_speed rc=$?" >> "$S"
  tail -6 "$D/check_speed.txt" >> "$S"
  cp bench/results/check_speed-device-day9.* "$D/" 2>/dev/null
  [ "$MODE" = dry ] && rm -f bench/results/check_speed-device-day9.*  # a dry run leaves no result in the tree
fi
rm -f "$GPUVET_DB"
cat "$S"
