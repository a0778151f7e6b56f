"""Representative failures written from the stack's own message formats (not the benchmark's texts):
each must rank the expected cause first (or blame nothing for user-code errors)."""
import pytest

from gpuvet.app.diagnose import diagnose_text
from gpuvet.logs.rank import blames_nothing

CASES = [
    ("gpu-arch-unsupported", """\
PyTorch version: 2.3.1+rocm6.0
ROCM used to build PyTorch: 6.0.32830
GPU models and configuration: AMD Radeon RX 6600 (gfx1032)
rocBLAS error: Cannot read /venv/lib/python3.10/site-packages/torch/lib/rocblas/library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1032
Aborted (core dumped)
"""),
    ("driver-too-old", """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.199.02   Driver Version: 470.199.02   CUDA Version: 11.4     |
torch 2.4.0+cu121
RuntimeError: The NVIDIA driver on your system is too old (found version 11040).
"""),
    ("wrong-vendor-build", """\
GPU: AMD Radeon RX 7800 XT
>>> import torch; torch.zeros(1).cuda()
AssertionError: Torch not compiled with CUDA enabled
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver
"""),
    ("device-access", """\
$ rocminfo
ROCk module is loaded
Unable to open /dev/kfd read-write: Permission denied
user is not member of "render" group
"""),
    ("companion-mismatch", """\
  File "/venv/lib/python3.11/site-packages/torchvision/ops/boxes.py", line 41, in nms
    return torch.ops.torchvision.nms(boxes, scores, iou_threshold)
RuntimeError: operator torchvision::nms does not exist
"""),
    ("extension-abi", """\
  File "/venv/lib/python3.10/site-packages/apex/__init__.py", line 13, in <module>
ImportError: /venv/lib/python3.10/site-packages/fused_layer_norm_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE
"""),
    ("kernel-cache-db", """\
MIOpen(HIP): Warning [SQLiteBase] /MIOpen/src/include/miopen/sqlite_db.hpp:180: Internal error while accessing SQLite database: locking protocol
MIOpen(HIP): Error [Prepare] /MIOpen/src/sqlite_db.cpp:227: Internal error while accessing SQLite database: database is locked
"""),
    ("collective-comm", """\
[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800443 milliseconds before timing out.
"""),
    ("hardware-fault", """\
[Tue Jun  4 03:12:44 2024] NVRM: GPU at PCI:0000:ca:00: GPU-1a2b3c4d
[Tue Jun  4 03:12:44 2024] NVRM: Xid (PCI:0000:ca:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
RuntimeError: CUDA error: unspecified launch failure
"""),
    ("toolchain", """\
/usr/local/cuda-11.8/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported!
ninja: build stopped: subcommand failed.
"""),
    ("math-library-unsupported", """\
RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, stridea, b, CUDA_R_16BF, ldb, strideb, &fbeta, c, CUDA_R_16BF, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`
"""),
    ("memory-allocator", """\
torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 63.98 GiB of which 312.00 MiB is free. Of the allocated memory 40.12 GiB is allocated by PyTorch, and 22.80 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.
"""),
    ("prerelease-regression", """\
pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu128
torch 2.8.0.dev20250415+cu128
ImportError: libcusparseLt.so.0: cannot open shared object file: No such file or directory
"""),
    ("runtime-mismatch", """\
Failed to initialize NVML: Driver/library version mismatch
NVML library version: 550.90
"""),
    ("cpu-only-build", """\
WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.4.1+cu121 with CUDA 1201 (you have 2.4.1+cpu)
"""),
]

NEGATIVES = [
    "RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 1\n"
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (16x768 and 512x10)\n",
    "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [12,0,0], thread: [64,0,0] "
    "Assertion `srcIndex < srcSelectDimSize` failed.\nRuntimeError: CUDA error: device-side assert triggered\n",
    "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.\n",
    "ValueError: Expected input batch_size (32) to match target batch_size (16).\n",
]


@pytest.mark.parametrize("cause,text", CASES, ids=[c for c, _ in CASES])
def test_expected_cause_first(cause, text):
    diags = diagnose_text(text, "case").extra["diagnoses"]
    assert diags and diags[0]["cause"] == cause, [(d["cause"], d["confidence"]) for d in diags]
    assert diags[0]["evidence"] and diags[0]["fix"]


@pytest.mark.parametrize("text", NEGATIVES)
def test_user_code_blames_nothing(text):
    assert blames_nothing(diagnose_text(text, "neg").extra["diagnoses"])


def test_fact_from_text_explains_generic_symptom():
    """nvidia-smi's driver CUDA level and a cu121 torch in the text let the checks settle a bare
    'is_available() False': a driver too old for the build."""
    text = ("| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n"
            "torch                    2.3.0+cu121\n>>> torch.cuda.is_available()\nFalse\n")
    d = diagnose_text(text, "t").extra["diagnoses"]
    assert d[0]["cause"] == "driver-too-old"
