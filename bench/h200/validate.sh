#!/usr/bin/env bash
# gpuvet validate / bench on the H200, in one script (device tool: run from the repo root with the
# wheels of SQLAlchemy, alembic and Mako in .whl/).  Writes JSON + HTML under $OUT/validate and packs them
# as $OUT/h200-validate.tgz; prints a summary last.
#   quick (timed, import included) · quick again against the first (identical stack) · standard ·
#   full's own cases (leak loop, stability matrix, collective) · bench (allocator, launch, cold start,
#   matmul TFLOP/s, bandwidth vs the KB's peaks) · fault injection · a slowed case against its baseline.
set -u
export PYTHONUNBUFFERED=1 NO_COLOR=1 COLUMNS=140
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/src
else
  export PYTHONPATH=$PWD/src
fi
export GPUVET_DB=/tmp/gpuvet-h200.sqlite
D=$OUT/validate; mkdir -p $D
G="python3 -m gpuvet"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv;
  python3 --version; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())";
  nproc; uname -r; } > $D/machine.txt 2>&1
step() {  # step NAME ARGS...: run gpuvet, keep stdout/stderr, record rc and wall seconds
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 420 $G "$@" > $D/$name.out 2> $D/$name.err
  local rc=$?
  printf '%-14s rc=%-3s wall=%6.1fs  gpuvet %s\n' "$name" "$rc" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")" "$*" >> $D/steps.txt
}
if [ -z "${ONLY:-}" ]; then  # ONLY=plugin runs just the pytest plugin part
step quick       validate --level quick --format json -o $D/quick.json --html $D/quick.html
step quick-text  validate --against latest --level quick --verbose --no-save
step standard    validate --level standard --format json -o $D/standard.json --html $D/standard.html
step full-own    validate --case leak_loop --case stability --case collective --format json -o $D/full.json --html $D/full.html
step bench       bench --format json -o $D/bench.json --html $D/bench.html
step faults      validate --case kernels --case matmul_ref --inject segfault,abort,hang,wrong,leak --format json -o $D/faults.json
step base        validate --case matmul --case bench_launch --format json -o $D/base.json
step same        validate --case matmul --case bench_launch --against latest --format json -o $D/same.json --html $D/same.html
step slowed      validate --case matmul --case bench_launch --inject sleep:matmul=0.01 --against $D/base.json --no-save --format json -o $D/slowed.json --html $D/slowed.html
step ops-from    validate --ops-from tests/fixtures/scan_project --no-save --format json -o $D/ops-from.json
step scan        scan tests/fixtures/scan_project --python python3 --format json -o $D/scan.json
fi
# the pytest plugin: gpuvet's quick cases as tests of a team's suite, a gpu-marked test, the stack fixture
T=/tmp/team-tests; mkdir -p $T
printf 'import pytest\n@pytest.mark.gpu\ndef test_gpu_stack(gpuvet_stack):\n    assert gpuvet_stack.has_gpu, gpuvet_stack\n    print(gpuvet_stack)\n' > $T/test_team.py
# -p only where the entry point is not already visible (an installed gpuvet, or an egg-info on the path)
P="-p gpuvet.cli.pytest_plugin"
python3 -c "import importlib.metadata as m, sys; sys.exit(0 if any(e.name == 'gpuvet' for e in m.entry_points(group='pytest11')) else 1)" && P=""
( cd $T && timeout 300 python3 -m pytest $P -p no:cacheprovider --gpuvet-level quick -q -rA -s . ) > $D/pytest-plugin.txt 2>&1
echo "pytest-plugin  rc=$?" >> $D/steps.txt
python3 - "$D" > $D/summary.txt 2>&1 <<'PY'
import json, os, sys
D = sys.argv[1]
for name in ("quick", "standard", "full", "bench", "faults", "same", "slowed"):
    p = os.path.join(D, name + ".json")
    if not os.path.exists(p):
        print(name, "missing"); continue
    try:
        doc = json.load(open(p))
    except ValueError as exc:
        print(name, "unreadable", exc); continue
    v = doc.get("validate", {})
    fw = v.get("framework", {})
    print(f"== {name}: {v.get('elapsed_s')} s, {fw.get('device_name')} torch {fw.get('torch')}, import {fw.get('import_s')} s, init {fw.get('init_s')} s, workers {v.get('workers_started')}")
    for c in v.get("cases", []):
        bad = [x for x in c.get("checks", []) if not x.get("ok")]
        print(f"   {c['case']:16} {c['status']:12} {c.get('elapsed_s', 0):7.2f}s checks {len(c.get('checks', []))} failed {len(bad)} {c.get('error', '')[:100]}")
        for x in bad[:4]:
            print("      ", x.get("name"), x.get("dtype", ""), x.get("err"), x.get("tol"), x.get("detail", "")[:120])
    for f in doc.get("findings", []):
        if f["outcome"] == "failed" or f["code"] in ("VAL010", "VAL011"):
            print(f"   {f['code']} {f['outcome']:7} {f['title'][:150]}")
    for r in v.get("peaks", []):
        print(f"   peak {r['metric']:22} {r['value']:9.4g} {r.get('unit')} ref {r.get('reference')} ({r.get('reference_kind')})")
PY
tar czf $OUT/h200-validate.tgz -C $OUT validate
cat $D/steps.txt; cat $D/summary.txt | head -c 9000
