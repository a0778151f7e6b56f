"""Which command's output would settle a diagnosis the pasted text cannot decide (pure; data below).

An error message names a symptom; what decides between its causes is usually a pair of versions (the
framework's HIP/CUDA against the system's ROCm/driver), the GPU, the device nodes or the installed
packages.  When the text holds the error but not those facts, ``diagnose`` says which one or two
commands to run on the machine and paste: saying which component disagrees with which starts with
asking for the versions.  A diagnosis already decided by a fact (a failed check that explains the
error) needs nothing more.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from gpuvet.model import Facts

# cause -> fact tables that decide between its readings, most decisive first
DECIDES: dict[str, tuple[str, ...]] = {
    "runtime-mismatch": ("framework_builds", "runtimes"),
    "driver-too-old": ("framework_builds", "drivers"),
    "math-library-unsupported": ("framework_builds", "runtimes", "gpu_devices"),
    "memory-allocator": ("framework_builds", "runtimes"),
    "kernel-cache-db": ("framework_builds", "runtimes"),
    "other": ("framework_builds", "runtimes"),
    "prerelease-regression": ("framework_builds", "runtimes"),
    "hardware-fault": ("drivers", "gpu_devices"),
    "gpu-arch-unsupported": ("gpu_devices", "framework_builds"),
    "device-access": ("device_nodes", "gpu_devices"),
    "extension-abi": ("framework_builds", "packages"),
    "companion-mismatch": ("packages", "framework_builds"),
    "cpu-only-build": ("framework_builds",),
    "wrong-vendor-build": ("framework_builds", "gpu_devices"),
    "toolchain": ("compilers", "framework_builds"),
    "collective-comm": ("framework_builds", "env_vars"),
}

# (table, vendor) -> (command to paste, what its output shows); vendor "" when the text names none
COMMANDS: dict[tuple[str, str], tuple[str, str]] = {
    ("framework_builds", "amd"): ('python -c "import torch; print(torch.__version__, torch.version.hip)"',
                                  "the framework build and the HIP it was built with"),
    ("framework_builds", "nvidia"): ('python -c "import torch; print(torch.__version__, torch.version.cuda)"',
                                     "the framework build and the CUDA it was built with"),
    ("framework_builds", ""): ("python -m torch.utils.collect_env", "the framework build, GPU, driver and runtime"),
    ("runtimes", "amd"): ("cat /opt/rocm/.info/version", "the system ROCm release"),
    ("runtimes", "nvidia"): ("nvidia-smi", "the driver and the newest CUDA it supports"),
    ("runtimes", ""): ("python -m torch.utils.collect_env", "the framework build, GPU, driver and runtime"),
    ("drivers", "amd"): ("dkms status", "the amdgpu kernel driver installed"),
    ("drivers", "nvidia"): ("nvidia-smi", "the driver and the newest CUDA it supports"),
    ("drivers", ""): ("python -m torch.utils.collect_env", "the framework build, GPU, driver and runtime"),
    ("gpu_devices", "amd"): ('rocminfo | grep -E "Marketing Name|Name: +gfx"', "the GPU and its gfx target"),
    ("gpu_devices", "nvidia"): ("nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv",
                                "the GPU, its compute capability and the driver"),
    ("gpu_devices", ""): ("python -m torch.utils.collect_env", "the framework build, GPU, driver and runtime"),
    ("device_nodes", "amd"): ("ls -l /dev/kfd /dev/dri/render*; id", "the device nodes and the user's groups"),
    ("device_nodes", "nvidia"): ("ls -l /dev/nvidia*; id", "the device nodes and the user's groups"),
    ("device_nodes", ""): ("ls -l /dev/kfd /dev/dri /dev/nvidia*; id", "the device nodes and the user's groups"),
    ("packages", ""): ("pip list", "the installed packages and their versions"),
    ("compilers", "amd"): ("hipcc --version", "the HIP compiler and the ROCm tree it belongs to"),
    ("compilers", "nvidia"): ("nvcc --version; gcc --version", "the CUDA toolkit and the host compiler"),
    ("compilers", ""): ("nvcc --version; hipcc --version; gcc --version", "the GPU and host compilers"),
    ("env_vars", ""): ("env | grep -E '^(HSA_|HIP_|ROCR_|ROCM|CUDA|NCCL|RCCL|PYTORCH_|LD_LIBRARY_PATH)'",
                       "the variables that steer the GPU stack"),
}


def vendor_of(facts: Facts, hints: Iterable[str]) -> str:
    hs = set(hints)
    builds = facts.table("framework_builds")
    if any(b.get("variant") == "rocm" or b.get("hip") for b in builds) or "rocm-build" in hs:
        return "amd"
    if any(b.get("variant") == "cuda" or b.get("cuda") for b in builds) or "cuda-build" in hs:
        return "nvidia"
    if "amd-gpu" in hs or ("amd" in hs and "nvidia" not in hs):
        return "amd"
    if "nvidia-gpu" in hs or ("nvidia" in hs and "amd" not in hs):
        return "nvidia"
    return ""


def _shown(facts: Facts, table: str, vendor: str) -> bool:
    rows = facts.table(table)
    if table == "framework_builds":
        return any(r.get("version") for r in rows)
    if table == "runtimes":
        if vendor == "amd":
            return any(r.get("vendor") == "amd" and r.get("name") in ("rocm", "hip-runtime")
                       and r.get("origin") != "framework-build" for r in rows)
        if vendor == "nvidia":
            return bool(facts.table("drivers")) or any(r.get("vendor") == "nvidia" for r in rows)
    if table == "drivers" and vendor:
        return any(r.get("vendor") == vendor for r in rows)
    if table == "gpu_devices" and vendor:
        return any(r.get("vendor") == vendor for r in rows)
    return bool(rows)


def commands_to_settle(cause: str, facts: Facts, hints: Iterable[str], decided: bool = False,
                       limit: int = 2) -> list[dict[str, Any]]:
    """At most ``limit`` commands whose output would settle ``cause`` (none when a fact decided it)."""
    if decided or cause not in DECIDES:
        return []
    vendor = vendor_of(facts, hints)
    missing = [t for t in DECIDES[cause] if not _shown(facts, t, vendor)]
    out: list[dict[str, Any]] = []
    for t in missing:
        cmd, shows = COMMANDS.get((t, vendor)) or COMMANDS[(t, "")]
        if any(o["command"] == cmd for o in out):
            continue
        out.append({"command": cmd, "shows": shows, "table": t})
        if len(out) >= limit:
            break
    return out


def settle_text(cmds: Sequence[dict[str, Any]]) -> str:
    if not cmds:
        return ""
    parts = [f"`{c['command']}` ({c['shows']})" for c in cmds]
    return "To settle it, run on the machine and paste: " + " and ".join(parts)
