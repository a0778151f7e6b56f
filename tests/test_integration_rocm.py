"""Integration: the live AMD probes against this machine's real Debian ROCm 5.2 user space (Debian's
rocminfo, hipcc, libamdhip64-5, rocm-smi packages; no AMD GPU, no ROCk module), then the AMD checks.
Skipped where those packages are not installed (``.ci/run`` installs them)."""
from __future__ import annotations

import glob
import os
import shutil

import pytest

from gpuvet import kb as KB
from gpuvet.app.engine import run_checks
from gpuvet.checks.drv import amd_kernel_driver_too_old, amdgpu_driver_not_loaded
from gpuvet.checks.env import hsa_override_gfx_version
from gpuvet.checks.lib import miopen_db_unusable
from gpuvet.checks.rtm import (
    framework_hip_differs_from_rocm,
    hipcc_hip_differs_from_runtime,
    hipcc_wrong_platform,
    rocm_default_tree_mismatch,
)
from gpuvet.model import Outcome
from gpuvet.probes.base import run_probes
from gpuvet.probes.kfd import _no_amd_gpu
from gpuvet.probes.registry import group_probes
from gpuvet.probes.system import System

AMD_PROBES = group_probes("amd")  # every ROCm-stack probe module

AMD_CHECKS = [amd_kernel_driver_too_old, framework_hip_differs_from_rocm, hipcc_hip_differs_from_runtime, hipcc_wrong_platform, hsa_override_gfx_version, miopen_db_unusable, amdgpu_driver_not_loaded, rocm_default_tree_mismatch]  # the rules of the former checks/amd.py

LIB = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not (shutil.which("rocminfo") and shutil.which("hipcc") and os.path.exists(LIB)),
                       reason="Debian's ROCm 5.2 packages (rocminfo hipcc libamdhip64-5) are not installed"),
]


def _has_amd_gpu() -> bool:
    return os.path.exists("/dev/kfd") or bool(glob.glob("/sys/class/kfd/kfd/topology/nodes/*"))


@pytest.fixture(scope="module")
def live():
    if _has_amd_gpu():
        pytest.skip("this machine has an AMD GPU / KFD: the test describes the GPU-less Debian machine")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIP_", "HSA_", "ROCM_"))}
    return run_probes(System(environ=env), AMD_PROBES, deadline=10.0)


def test_finds_hip_52_runtime_and_packages(live):
    rts = [r for r in live.table("runtimes") if r.get("vendor") == "amd"]
    hip = [r for r in rts if r.get("name") == "hip-runtime"]
    assert any(r.get("version") == "5.2.21153" and r.get("path") == LIB for r in hip), hip
    rocm = [r for r in rts if r.get("name") == "rocm"]
    assert any(r.get("version") == "5.2.3" and r.get("path") == "/usr" for r in rocm), rocm  # dpkg 5.2.3-8


def test_hipconfig_and_hipcc_resolve_to_nvidia_with_cuda_13(live):
    comps = {c.get("name"): c for c in live.table("compilers")}
    assert set(comps) >= {"hipcc", "hipconfig"}
    for c in comps.values():
        assert c.get("version") == "5.2.21153-0"
    if shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
        for c in comps.values():
            assert c.get("platform") == "nvidia" and c.get("cuda_version") == "13.0", dict(c.values)


def test_rocminfo_fails_as_an_error_row_and_no_amd_gpu(live):
    errs = [e for e in live.errors if e.probe == "amd-rocminfo"]
    if _no_amd_gpu(System()):
        # the PCI bus is readable and has no AMD display device: "no AMD GPU" is a fact, and rocminfo's
        # "ROCk module is NOT loaded" is what it prints on every such machine
        assert errs == [] and live.status("gpu_devices") in ("empty", "ok")
    else:
        assert len(errs) == 1 and errs[0].kind == "error" and errs[0].tables == ("gpu_devices",)
        assert "ROCk module is NOT loaded" in errs[0].message
    assert not [g for g in live.table("gpu_devices") if g.get("vendor") == "amd"]
    assert not [d for d in live.table("drivers") if d.get("vendor") == "amd"]


def test_gpu_needing_checks_never_pass(live):
    findings = {f.code: f for f in run_checks(live, AMD_CHECKS, KB.load())}
    for code in ("DRV020", "RTM023", "DRV026"):
        assert findings[code].outcome in (Outcome.UNKNOWN, Outcome.SKIPPED), (code, findings[code].title)
    if not _no_amd_gpu(System()):
        assert findings["RTM023"].outcome is Outcome.UNKNOWN
    # what can be checked without a GPU is checked: hipcc's HIP matches the installed runtime
    assert findings["RTM022"].outcome is Outcome.PASSED


def test_probes_are_fast(live):
    import time

    t = time.monotonic()
    run_probes(System(), AMD_PROBES, deadline=10.0)
    assert time.monotonic() - t < 3.0
