"""The vocabulary of causes and components: declared once, read by everything else.

The KB's JSON Schemas (``kb.schemas``), the log signatures (``logs.signatures``), the ranker's fix texts
(``logs.rank``), the check registry's validation (``checks.registry``) and the tests all read these
tuples; nothing else spells the list out.  Meanings: ../shared/benchmarks/incidents/CASE_FORMAT.md.
"""
from __future__ import annotations

from .record import record


@record(frozen=True)
class Cause:
    """A root cause of the taxonomy, its meaning and its generic fix."""

    name: str
    meaning: str
    fix: str  # the generic fix ``diagnose`` shows when a reading names this cause without its own fix
    # the command that fix starts with (drawn on its own "$" line): what to run next, or whose output to paste,
    # on either vendor's machine; "<your command>" stands for the failing job's command line
    command: str = ""


@record(frozen=True)
class Component:
    """A stack component of the taxonomy and its meaning."""

    name: str
    meaning: str


CAUSE_TABLE: tuple[Cause, ...] = (
    Cause('gpu-arch-unsupported',
          "the framework/library build has no kernels for this GPU's architecture (gfx / sm)",
          "Install a framework/library build whose GPU targets include this GPU (or build for it); on ROCm a supported HSA_OVERRIDE_GFX_VERSION can work. The GPU targets the build carries, to compare with the GPU's gfx / sm:",
          'python -c "import torch; print(torch.cuda.get_arch_list())"'),
    Cause('driver-too-old',
          'kernel driver older than what the user-space runtime / framework build needs',
          'Upgrade the GPU kernel driver to one that supports the runtime the framework was built with, or install a build for an older runtime; the newest build this driver runs, with its install command:',
          'gpuvet recommend'),
    Cause('runtime-mismatch',
          'two versions of the user-space runtime or its libraries mixed on one load path (system ROCm/CUDA vs the one bundled in the wheel, LD_LIBRARY_PATH, conda + pip)',
          'Make one runtime release win the loader path: remove stray CUDA/ROCm directories from LD_LIBRARY_PATH and install libraries matching the framework build. Which runtime and library copies the framework loads:',
          'gpuvet check --select RTM --select BLD --select LIB'),
    Cause('cpu-only-build',
          'a CPU-only framework build was installed where a GPU build was expected',
          "Install the GPU build of the framework from the vendor's index (e.g. --index-url https://download.pytorch.org/whl/cu124 or .../rocm6.2); the build for this driver and GPU, with its install command:",
          'gpuvet recommend'),
    Cause('wrong-vendor-build',
          'a CUDA build on an AMD machine, a ROCm build on an NVIDIA machine',
          "Install the build for this machine's GPU vendor (ROCm wheels on AMD, CUDA wheels on NVIDIA), for the framework and its companions; the build for this GPU, with its install command:",
          'gpuvet recommend'),
    Cause('device-access',
          'GPU exists but the process cannot reach it: permissions (/dev/kfd, render/video group), container without devices, *_VISIBLE_DEVICES, WSL',
          'Give the process the GPU: driver loaded, device nodes readable (render/video groups), container started with the GPU, *_VISIBLE_DEVICES correct. The device nodes and your groups:',
          'ls -l /dev/kfd /dev/dri/render* /dev/nvidia*; id'),
    Cause('companion-mismatch',
          'a companion package (torchvision, torchaudio, triton, xformers, ...) built for a different framework version',
          'Reinstall the companion packages (torchvision, torchaudio, triton, xformers, ...) at the versions made for the installed framework, from the same index; which ones disagree, with their versions:',
          'gpuvet check --select PKG'),
    Cause('extension-abi',
          "a compiled extension (flash-attn, apex, bitsandbytes, own C++/CUDA op) built against another framework/toolkit version, or toolkit version differs from the framework's when compiling",
          'Rebuild or reinstall the compiled extension for the installed framework and CUDA/ROCm version; which extensions were built against what:',
          'gpuvet check --select EXT'),
    Cause('prerelease-regression',
          'a bug in a nightly / pre-release build; stable works',
          'Go back to the previous nightly or the latest stable release until a fixed build is published; the stable build for this machine, with its install command:',
          'gpuvet recommend'),
    Cause('math-library-unsupported',
          'BLAS/DNN library (rocBLAS, hipBLASLt, cuBLAS, MIOpen, cuDNN) rejects the op/dtype/arch: *_STATUS_NOT_SUPPORTED and similar',
          "Avoid the unsupported op/dtype/backend (or disable that backend), or use a math-library release that supports it on this GPU; rerun once with synchronous launches and the libraries' logging to see the call it rejects:",
          'gpuvet run --debug -- <your command>'),
    Cause('kernel-cache-db',
          'MIOpen / cuDNN / kernel cache or perf database missing, unwritable or stale',
          'Clear the kernel cache/database and point it at a writable local directory (MIOPEN_USER_DB_PATH, TRITON_CACHE_DIR, CUDA_CACHE_PATH); for one run, fresh ones:',
          'export MIOPEN_USER_DB_PATH=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d) CUDA_CACHE_PATH=$(mktemp -d)'),
    Cause('memory-allocator',
          'out-of-memory or allocator behaviour (fragmentation, alloc conf, oversubscription)',
          'Reduce memory use (batch size, precision, checkpointing) or free memory held by other processes; revisit PYTORCH_*_ALLOC_CONF. The free and total GPU memory before the job starts:',
          'python -c "import torch; print(torch.cuda.mem_get_info())"'),
    Cause('collective-comm',
          'NCCL / RCCL failures (version, topology, P2P, network)',
          "Rerun with NCCL_DEBUG=INFO; check the container's /dev/shm and IPC settings, network interfaces and the NCCL/RCCL version:",
          'NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET gpuvet run -- <your command>'),
    Cause('toolchain',
          'compiler toolchain problem (nvcc/hipcc vs host gcc, triton/inductor compile, missing headers)',
          "Install a compiler toolchain matching the framework's CUDA/ROCm version and make the build use it (CUDA_HOME, ROCM_PATH, CC/CXX); the build's and the compilers' versions:",
          'gpuvet check --select EXT --select RTM'),
    Cause('hardware-fault',
          'Xid, ECC, GPU fell off the bus, thermal, power',
          "Drain the node, reset the GPU, run the vendor's diagnostics and contact the vendor if it recurs; the driver's own fault reports:",
          'sudo dmesg -T | grep -iE "xid|nvrm|amdgpu|ecc" | tail -n 50'),
    Cause('other',
          'a stack problem that fits none of the above',
          "Rerun with the vendor's synchronous/debug switches to locate the failing call:",
          'gpuvet run --debug -- <your command>'),
)

COMPONENT_TABLE: tuple[Component, ...] = (
    Component("driver", "the GPU kernel driver (nvidia.ko, amdgpu/ROCk) and its user-space part"),
    Component("runtime", "the user-space GPU runtime (CUDA runtime, HIP/ROCm) and its libraries"),
    Component("framework-build", "the framework build itself (torch, jax, tensorflow wheel or source build)"),
    Component("companion-package", "a package built for a framework release (torchvision, triton, xformers ...)"),
    Component("extension", "a compiled extension and the toolchain that builds it"),
    Component("system-library", "a system library (glibc, MIOpen/cuDNN databases, BLAS libraries)"),
    Component("config-env", "configuration: environment variables, device visibility, permissions"),
    Component("container", "the container runtime and how the GPU is passed in"),
    Component("hardware", "the GPU, its memory, bus, power and thermals"),
    Component("user-code", "the workload itself: code, data, model settings"),
)

CAUSES: tuple[str, ...] = tuple(c.name for c in CAUSE_TABLE)
COMPONENTS: tuple[str, ...] = tuple(c.name for c in COMPONENT_TABLE)
NO_CAUSE = "none"  # a benchmark label / signature cause: not a stack problem, diagnose blames nothing
LABELS: tuple[str, ...] = CAUSES + (NO_CAUSE,)
# the generic fix as diagnose shows it: its text ending "...: COMMAND" (the renderers draw the command on its own
# line; app.diagnose gives the fix that command); CAUSE_COMMAND by the fix text, for that
CAUSE_FIX: dict[str, str] = {c.name: f"{c.fix} {c.command}".strip() for c in CAUSE_TABLE}
CAUSE_COMMAND: dict[str, str] = {f"{c.fix} {c.command}".strip(): c.command for c in CAUSE_TABLE if c.command}


def is_cause(name: str, allow_none: bool = False) -> bool:
    return name in CAUSES or (allow_none and name == NO_CAUSE)


def is_component(name: str) -> bool:
    return name in COMPONENTS
