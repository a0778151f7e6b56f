#!/usr/bin/env bash
# The lead's closing H200 run: every GPU proof of this session's issues in one device call, after the last
# change.  Run from the repository root with the wheels in .whl/ (device tool: carry [".whl"]).
#   1. healthy machine: gpuvet check (terminal at 80 columns, JSON), recommend        -> score 100, exit 0
#   2. issue 10's faults (bench/h200/faults.sh)                                      -> a named finding each
#   3. validate quick (timed) and fault injection (issue 13)
#   4. issue 14 on one GPU (bench/h200/distributed.sh when present)
#   5. the whole test suite under Python 3.12, GPU tests included
#   6. bench/check_speed.py against collect_env; 7. bench/run_passthrough.py --quick (issue 7)
#   (5. the suite runs last: it is the longest step)
# Packs everything as $OUT/final.tgz and prints a summary.  FINAL_SKIP="faults distributed" leaves those steps out
# (the device tool allows 600 s a call; the whole script is close to it).
set -u
export PYTHONUNBUFFERED=1 NO_COLOR=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src
export GPUVET_DB=/tmp/gpuvet-final.sqlite
D=$OUT/final; mkdir -p $D
S=$D/summary.txt
t() { date +%s.%N; }
pack() { tar czf $OUT/final.tgz -C $OUT final 2>/dev/null; cp $S $OUT/summary.txt 2>/dev/null; }
since() { awk "BEGIN{printf \"%.1f\", $(t) - $1}"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; python3 --version;
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; nproc; } > $D/machine.txt 2>&1
cat $D/machine.txt > $S
# 1. healthy machine
t0=$(t); COLUMNS=80 python3 -m gpuvet check > $D/check-80.txt 2>&1; echo "check (80 cols) rc=$? wall=$(since $t0)s" >> $S
python3 -m gpuvet check --format json -o $D/check.json > /dev/null 2>&1; echo "check json rc=$?" >> $S
python3 -c "import json; d=json.load(open('$D/check.json')); print('score', d.get('score'), 'failed', [f['code'] for f in d['findings'] if f['outcome']=='failed'])" >> $S 2>&1
# issue 10 (h10): ROCm kernel-file rules silent on NVIDIA, compiler range rule live on the real gcc and torch
python3 -c "import json; d=json.load(open('$D/check.json')); print('issue10 h10:', [(f['code'], f['outcome'], f['title'][:110]) for f in d['findings'] if f['code'] in ('LIB026','LIB027','BLD050','ENV067')])" >> $S 2>&1
HIP_CLANG_PATH=/nonexistent/llvm/bin python3 -m gpuvet check --select ENV065 --select ENV067 --format json -o $D/check-hipclang.json > /dev/null 2>&1; echo "check HIP_CLANG_PATH=/nonexistent rc=$? (1 expected)" >> $S
python3 -c "import json; d=json.load(open('$D/check-hipclang.json')); print('  ', [(f['code'], f['outcome'], f['title'][:110]) for f in d['findings'] if f['outcome']=='failed'])" >> $S 2>&1
COLUMNS=140 python3 -m gpuvet recommend > $D/recommend.txt 2>&1; echo "recommend rc=$?" >> $S
# 2. issue 10's faults
skip() { case " ${FINAL_SKIP:-} " in *" $1 "*) echo "$1: skipped (FINAL_SKIP)" >> $S; return 0;; esac; return 1; }
skip faults || { t0=$(t); OUT=$D timeout 200 bash bench/h200/faults.sh > $D/faults-log.txt 2>&1; echo "faults.sh rc=$? wall=$(since $t0)s" >> $S; }
cat $D/faults-summary.txt >> $S 2>/dev/null; pack
# 3. validate quick + fault injection
t0=$(t); timeout 120 python3 -m gpuvet validate --level quick --format json -o $D/quick.json > $D/quick.out 2> $D/quick.err
echo "validate quick rc=$? wall=$(since $t0)s" >> $S
t0=$(t); timeout 120 python3 -m gpuvet validate --case kernels --inject segfault,hang,wrong,leak --no-save --format json -o $D/inject.json > $D/inject.out 2> $D/inject.err
echo "validate inject rc=$? wall=$(since $t0)s" >> $S
python3 - $D >> $S 2>&1 <<'PY'
import json, sys
for name in ("quick", "inject"):
    try:
        doc = json.load(open(f"{sys.argv[1]}/{name}.json"))
    except Exception as exc:
        print(name, "unreadable:", exc); continue
    for c in doc.get("validate", {}).get("cases", []):
        print(f"  {name:6} {c['case']:16} {c['status']:10} {c.get('elapsed_s', 0):6.2f}s")
    print("  findings failed:", sorted({f["code"] for f in doc.get("findings", []) if f["outcome"] == "failed"}))
PY
pack
# 4. issue 14 on one GPU
if [ -f bench/h200/distributed.sh ] && ! skip distributed; then
  t0=$(t); OUT=$D timeout 120 bash bench/h200/distributed.sh > $D/distributed-log.txt 2>&1; echo "distributed.sh rc=$? wall=$(since $t0)s" >> $S
  tail -30 $D/distributed-log.txt >> $S
fi
pack
# 6. speed
timeout 80 python3 bench/check_speed.py --runs 3 --label h200 --python python3 > $D/check_speed.txt 2>&1
tail -12 $D/check_speed.txt >> $S
cp bench/results/check_speed-h200.* $D/ 2>/dev/null
pack
# 7. issue 7: gpuvet run as a pipe, on an idle 16-core machine
t0=$(t); timeout 225 python3 bench/run_passthrough.py --quick --name h200 --note "idle H200, closing run" > $D/run_passthrough.txt 2>&1
echo "run_passthrough rc=$? wall=$(since $t0)s" >> $S
cat bench/results/run_passthrough-h200.md >> $S 2>/dev/null; cp bench/results/run_passthrough-h200.* $D/ 2>/dev/null
pack
# 5. the whole suite under Python 3.12 (GPU tests included)
t0=$(t); timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests > $D/pytest-all.txt 2>&1; echo "pytest all rc=$? wall=$(since $t0)s" >> $S
tail -15 $D/pytest-all.txt >> $S
grep -E "test_gpu_live" $D/pytest-all.txt | head >> $S
pack
cat $S
