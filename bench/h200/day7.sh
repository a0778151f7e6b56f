#!/usr/bin/env bash
# Day 7's closing H200 run (one device call, after the last change; carry [".whl"], the wheels built by
# `pip wheel --no-deps -w .whl .`):
#   1. gpuvet check on the healthy machine (80 columns, JSON: score, failed findings)
#   2. issue 7: bench/run_passthrough.py --quick plus the log_long row (4,000,000 lines), on the code as landed
#   3. the GPU tests, gpuvet run's pipe tests and today's founding-form tests under the image's Python (3.12)
#   4. bench/check_speed.py against collect_env
# Everything goes to $OUT/day7/ and $OUT/summary.txt.
set -u
export PYTHONUNBUFFERED=1 NO_COLOR=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src
export GPUVET_DB=/tmp/gpuvet-day7.sqlite
D=$OUT/day7; mkdir -p $D
S=$OUT/summary.txt
t() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(t) - $1}"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; python3 --version;
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; nproc; uptime; } > $D/machine.txt 2>&1
cat $D/machine.txt > $S
# 1
t0=$(t); COLUMNS=80 python3 -m gpuvet check > $D/check-80.txt 2>&1; echo "check (80 cols) rc=$? wall=$(since $t0)s" >> $S
python3 -m gpuvet check --format json -o $D/check.json > /dev/null 2>&1; echo "check json rc=$?" >> $S
python3 -c "import json; d=json.load(open('$D/check.json')); print('score', d.get('score'), 'failed', [f['code'] for f in d['findings'] if f['outcome']=='failed'])" >> $S 2>&1
# 2
t0=$(t); timeout 300 python3 bench/run_passthrough.py --quick --long-lines 4000000 --name h200-day7 --out $D \
  --note "idle H200, day 7 closing run" > $D/run_passthrough.txt 2>&1
echo "run_passthrough rc=$? wall=$(since $t0)s" >> $S
cat $D/run_passthrough-h200-day7.md >> $S 2>/dev/null || tail -30 $D/run_passthrough.txt >> $S
# 3
t0=$(t); timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/test_gpu_live.py tests/test_run_pipe.py \
  tests/test_founding_forms_day7.py tests/test_run_robust.py > $D/pytest.txt 2>&1
echo "pytest (GPU, run pipe, founding forms) rc=$? wall=$(since $t0)s" >> $S
tail -6 $D/pytest.txt >> $S
# 4
timeout 80 python3 bench/check_speed.py --runs 3 --label h200-day7 --python python3 > $D/check_speed.txt 2>&1
tail -12 $D/check_speed.txt >> $S
cp bench/results/check_speed-h200-day7.* $D/ 2>/dev/null
cat $S
