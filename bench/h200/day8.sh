#!/usr/bin/env bash
# Day 8's device runs (carry [".whl"], the dependencies' wheels for the image's Python 3.12):
#   OUT=$OUT timeout 590 bash bench/h200/day8.sh passthrough
#       issue 7: bench/run_passthrough.py on the code as landed, with longer log rows than --quick (more interleaved
#       sets, so the rows day 6 could not tell get narrower intervals), plus the log_long row (4,000,000 lines)
#   OUT=$OUT timeout 590 bash bench/h200/day8.sh all
#       both in one call when device time is short: the pass-through rows at --quick's length, then the final part
#   OUT=$OUT timeout 560 bash bench/h200/day8.sh final
#       gpuvet check on the healthy machine (80 columns, JSON), the GPU tests, gpuvet run's pipe and robustness tests
#       and the founding-form tests under the image's Python, bench/check_speed.py against collect_env
# Everything goes to $OUT/day8-MODE/ and $OUT/summary.txt.
set -u
MODE=${1:-final}
export PYTHONUNBUFFERED=1 NO_COLOR=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src
export GPUVET_DB=/tmp/gpuvet-day8.sqlite
D=$OUT/day8-$MODE; mkdir -p "$D"
S=$OUT/summary.txt
t() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(t) - $1}"; }
{ date -u; git log --oneline -1 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 --version; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; nproc; uptime; } > "$D/machine.txt" 2>&1
cat "$D/machine.txt" > "$S"
if [ "$MODE" != final ]; then
  if [ "$MODE" = all ]; then ROWS=(--long-lines 4000000); NOTE="device machine, idle, day 8 (--quick rows)"
  else ROWS=(--row-seconds 45 --long-lines 4000000 --long-row-seconds 100); NOTE="device machine, idle, day 8 (longer log rows than --quick)"; fi
  t0=$(t); timeout 330 python3 bench/run_passthrough.py --quick "${ROWS[@]}" \
    --name day8 --out "$D" --note "$NOTE" > "$D/run_passthrough.txt" 2>&1
  echo "run_passthrough rc=$? wall=$(since "$t0")s" >> "$S"
  cat "$D/run_passthrough-day8.md" >> "$S" 2>/dev/null || tail -30 "$D/run_passthrough.txt" >> "$S"
fi
if [ "$MODE" != passthrough ]; then
  t0=$(t); COLUMNS=80 python3 -m gpuvet check > "$D/check-80.txt" 2>&1; echo "check (80 cols) rc=$? wall=$(since "$t0")s" >> "$S"
  python3 -m gpuvet check --format json -o "$D/check.json" > /dev/null 2>&1; echo "check json rc=$?" >> "$S"
  python3 -c "import json; d=json.load(open('$D/check.json')); print('score', d.get('score'), 'failed', [f['code'] for f in d['findings'] if f['outcome']=='failed'])" >> "$S" 2>&1
  t0=$(t); timeout 170 python3 -m pytest -q -p no:cacheprovider -rs tests/test_gpu_live.py tests/test_run_pipe.py \
    tests/test_founding_forms_day7.py tests/test_run_robust.py tests/test_founding_incident.py > "$D/pytest.txt" 2>&1
  echo "pytest (GPU, run pipe and robustness, founding forms) rc=$? wall=$(since "$t0")s" >> "$S"
  tail -8 "$D/pytest.txt" >> "$S"
  timeout 70 python3 bench/check_speed.py --runs 3 --label device-day8 --python python3 > "$D/check_speed.txt" 2>&1
  tail -12 "$D/check_speed.txt" >> "$S"
  cp bench/results/check_speed-device-day8.* "$D/" 2>/dev/null
fi
cat "$S"
