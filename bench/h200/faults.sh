#!/usr/bin/env bash
# The faults of issue 10, made on the NVIDIA H200 machine the way users make them, each under
# `gpuvet check` (JSON + exit status) and `gpuvet run -- <the failing program>` (diagnosis + bundle),
# plus the healthy machine first.  Everything goes under $OUT/faults (packed as $OUT/faults.tgz) and a
# one-screen $OUT/faults-summary.txt.  Run from the repository root (device tool: carry [".dev-h10"],
# `cd .dev-h10`, wheels in .whl/).  Needs: python3 with torch (CUDA), nvcc, ninja; no network.
#
#   healthy   nothing changed                                  -> score 100, exit 0
#   preload   LD_PRELOAD=<system libcudnn.so.9> (9.14)         -> BLD049, cuDNN older than the build
#   ldpath    LD_LIBRARY_PATH=/lib/x86_64-linux-gnu first      -> BLD048, cuDNN sub-libraries of 9.14
#   archlist  TORCH_CUDA_ARCH_LIST=8.0, a JIT extension        -> ENV066 (and EXT007 for what it built)
#   sm80ext   that sm_80-only extension loaded on sm_90        -> EXT007, names the .so and sm_80
#   cc        CC=/nonexistent/gcc with torch.compile           -> ENV065, names CC
set -u
OUT=${OUT:-/tmp/out}
D=$OUT/faults
mkdir -p "$D/progs"
export PYTHONUNBUFFERED=1 NO_COLOR=1 COLUMNS=140
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD/src
SYSLIB=/lib/x86_64-linux-gnu
EXT=/tmp/h10-torch-extensions        # the JIT builds of this script (TORCH_EXTENSIONS_DIR)
: > "$D/rc.txt"

# -- the failing programs ------------------------------------------------------------------------------
cat > "$D/progs/conv.py" <<'EOF'
# a convolution through cuDNN on the GPU
import torch
x = torch.randn(8, 3, 64, 64, device="cuda")
w = torch.randn(16, 3, 3, 3, device="cuda")
print(torch.backends.cudnn.version(), torch.nn.functional.conv2d(x, w).sum().item())
EOF
cat > "$D/progs/build_ext.py" <<'EOF'
# build a CUDA extension with torch.utils.cpp_extension (arch list from TORCH_CUDA_ARCH_LIST) and call it
import os, torch
from torch.utils.cpp_extension import load_inline
cuda = r"""
__global__ void add_one(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
torch::Tensor add1(torch::Tensor x) {
  add_one<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel());
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "CUDA error: ", cudaGetErrorString(err));
  return x;
}
"""
mod = load_inline(name="h10_sm80_ext", cpp_sources="torch::Tensor add1(torch::Tensor x);", cuda_sources=cuda,
                  functions=["add1"], extra_include_paths=[], verbose=False)
print("built", mod.__file__, "TORCH_CUDA_ARCH_LIST=", os.environ.get("TORCH_CUDA_ARCH_LIST"))
print(mod.add1(torch.zeros(1024, device="cuda")).sum().item())
EOF
cat > "$D/progs/use_ext.py" <<'EOF'
# import the already-built extension straight from its .so (no rebuild) and call its kernel
import glob, importlib.util, os, torch
so = sorted(glob.glob(os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "**", "h10_sm80_ext*.so"), recursive=True))[-1]
spec = importlib.util.spec_from_file_location("h10_sm80_ext", so)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(mod.add1(torch.zeros(1024, device="cuda")).sum().item())
EOF
cat > "$D/progs/compile.py" <<'EOF'
# torch.compile on the GPU: Inductor generates a Triton kernel, Triton builds its launcher with CC
import torch
@torch.compile
def f(x):
    return torch.sin(x) * 2 + x
print(f(torch.randn(4096, device="cuda")).sum().item())
EOF

# -- one scenario: check (json, terminal) and run ------------------------------------------------------
scenario() {  # name, program ('' for none), then env assignments
  local name=$1 prog=$2; shift 2
  mkdir -p "$D/$name"
  env "$@" python3 -m gpuvet check --format json -o "$D/$name/check.json" 2> "$D/$name/check.err"
  echo "$name check rc=$?" >> "$D/rc.txt"
  env "$@" python3 -m gpuvet check > "$D/$name/check.txt" 2>&1
  if [ -n "$prog" ]; then
    env "$@" timeout 400 python3 -m gpuvet run --timeout 300 --bundle "$D/$name/bundle" -- python3 "$D/progs/$prog" \
      > "$D/$name/run.txt" 2>&1
    echo "$name run rc=$?" >> "$D/rc.txt"
  fi
}

{ nvidia-smi -L; python3 --version; python3 -c "import torch; print(torch.__version__, torch.backends.cudnn.version())";
  ls -l $SYSLIB/libcudnn.so.9* $SYSLIB/libcudnn_graph.so.9*; nproc; command -v gcc g++ cc c++ nvcc; echo "CC=${CC-unset} CXX=${CXX-unset}";
  python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"; } > "$D/machine.txt" 2>&1
CUDNN_LIB=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/nvidia/cudnn/lib
{ for f in $CUDNN_LIB/libcudnn.so.9 $SYSLIB/libcudnn.so.9; do echo "== $f"; readelf -d "$f" | grep -E "RPATH|RUNPATH|SONAME|NEEDED"; done; } \
  > "$D/cudnn-dynamic.txt" 2>&1

t0=$(date +%s)
scenario healthy conv.py
scenario preload conv.py LD_PRELOAD=$SYSLIB/libcudnn.so.9
scenario ldpath conv.py LD_LIBRARY_PATH=$SYSLIB:${LD_LIBRARY_PATH:-}
# the real loader's view of the ldpath fault, for comparison with gpuvet's model
LD_LIBRARY_PATH=$SYSLIB:${LD_LIBRARY_PATH:-} python3 -c "
import torch, re
x = torch.randn(2, 3, 8, 8, device='cuda'); w = torch.randn(4, 3, 3, 3, device='cuda')
try:
    torch.nn.functional.conv2d(x, w)
except Exception as e:
    print('conv2d failed:', str(e).splitlines()[0][:300])
print('\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn' in l})))
" > "$D/ldpath/proc-maps.txt" 2>&1
scenario cc compile.py CC=/nonexistent/gcc TRITON_CACHE_DIR=/tmp/h10-triton-fresh TORCHINDUCTOR_CACHE_DIR=/tmp/h10-inductor-fresh
scenario archlist build_ext.py TORCH_CUDA_ARCH_LIST=8.0 TORCH_EXTENSIONS_DIR=$EXT
# the same setting alone, without the built extension in view
mkdir -p "$D/archlist-only"
TORCH_CUDA_ARCH_LIST=8.0 python3 -m gpuvet check --format json -o "$D/archlist-only/check.json" 2> "$D/archlist-only/check.err"
echo "archlist-only check rc=$?" >> "$D/rc.txt"
scenario sm80ext use_ext.py TORCH_EXTENSIONS_DIR=$EXT
find $EXT -name "*.so" -exec sh -c 'echo "== $1"; cuobjdump --list-elf "$1" 2>&1 | head -5' _ {} \; > "$D/sm80ext/cuobjdump.txt" 2>&1
t1=$(date +%s)
echo "scenarios took $((t1 - t0)) s" >> "$D/rc.txt"

# speed with the extension scan in (cold cache first, then warm runs)
rm -rf ~/.cache/gpuvet/elf
[ -z "${FAULTS_NO_SPEED:-}" ] && timeout 200 python3 bench/check_speed.py --runs 3 --label h200-h10 --python python3 > "$D/check_speed.txt" 2>&1
cp bench/results/check_speed-h200-h10.* "$D/" 2>/dev/null
timeout 60 python3 bench/profile_check.py > "$D/profile_check.txt" 2>&1

python3 bench/h200/faults_summary.py "$D" > "$OUT/faults-summary.txt" 2>&1
tar czf "$OUT/faults.tgz" -C "$OUT" faults
cat "$OUT/faults-summary.txt"
