#!/usr/bin/env bash
# gpuvet validate --case distributed on the one-GPU H200, in one script (device tool: run from the repo
# root; the same .whl/ convention as validate.sh).  Writes JSON + text under $OUT/distributed, packs them as
# $OUT/h200-distributed.tgz and prints a summary last.
#   world1     : world size 1 through NCCL, every collective 1 KiB .. 1 GiB, 100 checked + 100 timed iterations
#   shared-gpu : two ranks on the one GPU (--world-size 2): expected the VAL013 "two ranks share one GPU" finding
#   p2p-env    : world size 1 with NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=nosuch0: VAL013 each
#   text       : the shared-GPU run again as a user reads it (--verbose)
# plus the raw topology tools, so a capture of `nvidia-smi topo -m` exists for the parser.
# NVLink multicast stays off everywhere (NCCL_NVLS_ENABLE=0; the runner sets it for every rank as well).
set -u
export PYTHONUNBUFFERED=1 NO_COLOR=1 COLUMNS=140
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/src
else
  export PYTHONPATH=$PWD/src
fi
D=$OUT/distributed; mkdir -p $D
G="python3 -m gpuvet"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())";
  nproc; uname -r; } > $D/machine.txt 2>&1
timeout 20 nvidia-smi topo -m > $D/nvidia-smi-topo-m.txt 2>&1
timeout 20 nvidia-smi topo -p2p r > $D/nvidia-smi-topo-p2p-r.txt 2>&1
ls /sys/class/net > $D/interfaces.txt 2>&1
step() {  # step NAME ARGS...: run gpuvet, keep stdout/stderr, record rc and wall seconds
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 500 $G "$@" > $D/$name.out 2> $D/$name.err
  local rc=$?
  printf '%-11s rc=%-3s wall=%6.1fs  gpuvet %s\n' "$name" "$rc" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")" "$*" >> $D/steps.txt
}
step world1     validate --case distributed --no-save --format json -o $D/world1.json
step shared-gpu validate --case distributed --world-size 2 --no-save --format json -o $D/shared-gpu.json
NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=nosuch0 \
step p2p-env    validate --case distributed --no-save --case-timeout 120 --format json -o $D/p2p-env.json
step text       validate --case distributed --world-size 2 --no-save --verbose
python3 - "$D" > $D/summary.txt 2>&1 <<'PY'
import json, os, sys
D = sys.argv[1]
for name in ("world1", "shared-gpu", "p2p-env"):
    p = os.path.join(D, name + ".json")
    try:
        doc = json.load(open(p))
    except (OSError, ValueError) as exc:
        print(name, "missing/unreadable", exc); continue
    v = doc.get("validate", {})
    for c in v.get("cases", []):
        info = c.get("info", {})
        print(f"== {name}: {c['case']} {c['status']} {c.get('elapsed_s')} s backend {info.get('backend')} "
              f"world {info.get('world_size')} nccl {info.get('nccl_version')} {c.get('error', '')[:200]}")
        for r in (c.get("tables", {}).get("collectives", {}) or {}).get("rows", []):
            print("   %-15s %11d B  %4d it  %10.2f us  algbw %8.2f GB/s  busbw %8.2f GB/s  wrong %d" % tuple(r[:2] + r[3:]))
        for n in c.get("notes", []):
            print("   note:", n[:200])
    for f in doc.get("findings", []):
        print(f"   {f['code']} {f['outcome']:7} {f['title'][:160]}")
    topo = (v.get("distributed") or {}).get("topology") or {}
    print("   topology:", {k: topo.get(k) for k in ("gpus", "links")}, "nvidia-smi:", (topo.get("nvidia_smi_topo") or {}).get("status"))
PY
tar czf $OUT/h200-distributed.tgz -C $OUT distributed
cat $D/steps.txt; head -c 9000 $D/summary.txt
