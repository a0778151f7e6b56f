"""The KB-backed checks (codes 100-119), each run alone on small fact sets: cases that fire and cases
that don't, plus the real H200 capture end to end."""
from __future__ import annotations

import pytest
from conftest import REAL, run_cli

from gpuvet import kb as KB
from gpuvet.app.engine import run_checks
from gpuvet.checks.base import DOC_HEADINGS
from gpuvet.checks.bld import (
    gpu_target_missing_from_official_wheel,
    known_broken_combination,
    python_outside_build_range,
)
from gpuvet.checks.ext import (
    extension_built_for_other_torch,
    host_compiler_too_new_for_nvcc,
)
from gpuvet.checks.lib import glibc_older_than_wheel_needs
from gpuvet.checks.pkg import (
    companion_built_for_other_torch,
    numpy2_with_torch_built_for_numpy1,
)
from gpuvet.model import Facts, Outcome, ProbeError, Severity, row

COMPAT_CHECKS = [companion_built_for_other_torch, extension_built_for_other_torch, gpu_target_missing_from_official_wheel, python_outside_build_range, host_compiler_too_new_for_nvcc, numpy2_with_torch_built_for_numpy1, known_broken_combination, glibc_older_than_wheel_needs]  # the rules of the former checks/compat.py

S = "test"


def facts(*rows, probed=()):
    f = Facts()
    f.add(rows)
    f.mark(*probed)
    return f


def run(check, f):
    return run_checks(f, [check], KB.load())


def outcomes(check, f):
    return [x.outcome for x in run(check, f)]


def torch_build(version, cuda="", hip="", variant="cuda", targets=()):
    return row("framework_builds", S, name="torch", version=version, cuda=cuda, hip=hip, debug=False,
               git_version="", channel="stable", targets=list(targets), targets_source="", variant=variant, path="")


def pkg(name, version, requires=()):
    return row("packages", S, name=name, version=version, location="/site", requires=list(requires))


def gpu(name="", arch="", vendor="nvidia", cc=""):
    return row("gpu_devices", S, vendor=vendor, index=0, name=name, arch=arch, compute_capability=cc,
               memory_mib=None, pci_bus="")


def os_info(python="", glibc=""):
    return row("os_info", S, name="", kernel="", arch="x86_64", glibc=glibc, python=python)


@pytest.mark.parametrize("chk", COMPAT_CHECKS, ids=lambda c: c.code)
def test_declaration_and_docs(chk):
    n = int(chk.code[3:])
    assert 100 <= n <= 119
    assert list(chk.sections()) == list(DOC_HEADINGS), chk.code
    assert all(chk.sections().values())
    assert "http" in chk.sections()["References"]


# -- PKG100 companion-built-for-other-torch -----------------------------------------------------------
def test_pkg100_fires_on_triton_of_another_release():
    # coreweave/ml-containers#64: torch 2.2 with triton 2.3.0
    f = facts(torch_build("2.2.2+cu121", "12.1"), pkg("torch", "2.2.2+cu121"), pkg("triton", "2.3.0"))
    found = run(companion_built_for_other_torch, f)
    assert [x.outcome for x in found] == [Outcome.FAILED]
    assert "triton 2.3.0" in found[0].title and "2.2.0" in found[0].title
    # the fix does what it says: it installs triton 2.2.0 and nothing else (never torch, torchvision)
    assert found[0].fixes[0].command == "pip install triton==2.2.0"
    assert "triton 2.2.0" in found[0].fixes[0].text


def test_pkg100_fires_on_torchvision_requires_dist():
    f = facts(torch_build("2.3.1+cu121", "12.1"), pkg("torchvision", "0.19.0", ["torch==2.4.0", "numpy"]))
    found = run(companion_built_for_other_torch, f)
    assert found[0].outcome is Outcome.FAILED and "requires torch==2.4.0" in found[0].title


def test_pkg100_passes_on_matching_companions_h200():
    f = facts(torch_build("2.11.0+cu130", "13.0"), pkg("torchvision", "0.26.0"), pkg("torchaudio", "2.11.0"),
              pkg("triton", "3.6.0"))
    assert outcomes(companion_built_for_other_torch, f) == [Outcome.PASSED]


def test_pkg100_local_versions_and_patch_releases_match():
    f = facts(torch_build("2.0.1+cu118", "11.8"), pkg("torchvision", "0.15.2+cu118", ["torch==2.0.1"]),
              pkg("torchaudio", "2.0.1"))  # 2.0.x companions: any patch of the minor
    assert outcomes(companion_built_for_other_torch, f) == [Outcome.PASSED]


def test_pkg100_unknown_for_a_release_the_kb_lacks_and_skip_without_companions():
    assert outcomes(companion_built_for_other_torch, facts(torch_build("2.99.0"), pkg("torchvision", "0.114.0"))) == [Outcome.UNKNOWN]
    assert outcomes(companion_built_for_other_torch, facts(torch_build("2.8.0+cu128"), pkg("numpy", "2.1.0"))) == [Outcome.SKIPPED]
    assert outcomes(companion_built_for_other_torch, facts(pkg("torchvision", "0.20.0"))) == [Outcome.SKIPPED]


# -- EXT101 extension-built-for-other-torch -----------------------------------------------------------
def test_ext101_fires_on_requires_dist_pin():
    f = facts(torch_build("2.1.0+cu121"), pkg("xformers", "0.0.20", ["torch==2.0.1", "numpy"]))
    found = run(extension_built_for_other_torch, f)
    assert found[0].outcome is Outcome.FAILED and "xformers 0.0.20" in found[0].title


def test_ext101_fires_from_kb_when_metadata_not_read():
    f = facts(torch_build("2.5.1+cu124"), pkg("vllm", "0.8.0"))
    found = run(extension_built_for_other_torch, f)
    assert found[0].outcome is Outcome.FAILED and "torch==2.6.0" in found[0].title


def test_ext101_passes_and_skips():
    assert outcomes(extension_built_for_other_torch,
                    facts(torch_build("2.0.1+cu118"), pkg("xformers", "0.0.20", ["torch==2.0.1"]))) == [Outcome.PASSED]
    assert outcomes(extension_built_for_other_torch,
                    facts(torch_build("2.11.0+cu130"), pkg("xformers", "0.0.34"))) == [Outcome.PASSED]  # stable ABI
    assert outcomes(extension_built_for_other_torch, facts(torch_build("2.8.0"), pkg("einops", "0.8.0"))) == [Outcome.SKIPPED]


# -- BLD102 gpu-target-missing-from-official-wheel ------------------------------------------------------
def test_bld102_fires_on_blackwell_with_cu126_line():
    f = facts(torch_build("2.6.0+cu126", "12.6"), gpu("NVIDIA GeForce RTX 5090"))
    found = run(gpu_target_missing_from_official_wheel, f)
    assert found[0].outcome is Outcome.FAILED and found[0].severity is Severity.CRITICAL
    assert "sm_120" in found[0].title
    assert "cu1" in found[0].fixes[0].command  # names a line that carries sm_120


def test_bld102_fires_on_rdna1_with_rocm62():
    # pytorch/pytorch#132570: the first ROCm 6.2 wheels had no gfx1010 code
    f = facts(torch_build("2.5.1+rocm6.2", hip="6.2.41133", variant="rocm"), gpu("AMD Radeon RX 5700 XT", vendor="amd"))
    assert outcomes(gpu_target_missing_from_official_wheel, f) == [Outcome.FAILED]


def test_bld102_binary_compatibility_passes():
    # sm_89 runs the sm_80/sm_86 cubins of the cu124 line
    f = facts(torch_build("2.4.1+cu124", "12.4"), gpu("NVIDIA L4"))
    assert outcomes(gpu_target_missing_from_official_wheel, f) == [Outcome.PASSED]


def test_bld102_skips_when_targets_were_read_and_unknown_without_arch_list():
    f = facts(torch_build("2.6.0+cu126", "12.6", targets=["sm_90"]), gpu("NVIDIA H100 80GB HBM3"))
    assert outcomes(gpu_target_missing_from_official_wheel, f) == [Outcome.SKIPPED]
    f = facts(torch_build("2.9.1+rocm6.4", hip="6.4", variant="rocm"), gpu("AMD Instinct MI300X", vendor="amd"))
    assert outcomes(gpu_target_missing_from_official_wheel, f) == [Outcome.UNKNOWN]
    f = facts(torch_build("2.8.0+cpu", variant="cpu"), gpu("NVIDIA H200"))
    assert outcomes(gpu_target_missing_from_official_wheel, f) == [Outcome.SKIPPED]


def test_bld102_unknown_when_gpu_table_failed():
    f = facts(torch_build("2.6.0+cu126", "12.6"))
    f.fail(ProbeError("nvidia.smi", ("gpu_devices",), "nvidia-smi timed out", "timeout"))
    assert outcomes(gpu_target_missing_from_official_wheel, f) == [Outcome.UNKNOWN]


# -- BLD103 python-outside-build-range -----------------------------------------------------------------
def test_bld103_fires_and_passes():
    assert outcomes(python_outside_build_range, facts(torch_build("2.0.1+cu118"), os_info("3.12.1"))) == [Outcome.FAILED]
    assert outcomes(python_outside_build_range, facts(torch_build("2.9.1+cu128"), os_info("3.9.18"))) == [Outcome.FAILED]
    assert outcomes(python_outside_build_range, facts(torch_build("2.9.1+cu128"), os_info("3.14.0"))) == [Outcome.PASSED]
    assert outcomes(python_outside_build_range, facts(torch_build("2.99.0"), os_info("3.12"))) == [Outcome.UNKNOWN]


def test_bld103_fix_names_an_older_release():
    found = run(python_outside_build_range, facts(torch_build("2.9.0"), os_info("3.9")))
    assert any(fx.command == "pip install torch==2.8.0" for fx in found[0].fixes)


# -- EXT104 host-compiler-too-new-for-nvcc --------------------------------------------------------------
def comp(name, version, cuda=""):
    return row("compilers", S, name=name, version=version, platform="", cuda_version=cuda, path="")


def test_ext104_fires_and_passes():
    f = facts(comp("nvcc", "12.1.105", "12.1"), comp("gcc", "13.2.0"))
    found = run(host_compiler_too_new_for_nvcc, f)
    assert found[0].outcome is Outcome.FAILED and "gcc <= 12" in found[0].title
    assert outcomes(host_compiler_too_new_for_nvcc, facts(comp("nvcc", "13.0.88", "13.0"), comp("gcc", "13.3.0"))) == [Outcome.PASSED]
    assert outcomes(host_compiler_too_new_for_nvcc, facts(comp("nvcc", "12.8.93", "12.8"), comp("clang", "20.1.0"))) == [Outcome.FAILED]


def test_ext104_skips_without_nvcc_or_host_compiler():
    assert outcomes(host_compiler_too_new_for_nvcc, facts(comp("gcc", "14.1"))) == [Outcome.SKIPPED]
    assert outcomes(host_compiler_too_new_for_nvcc, facts(comp("nvcc", "12.1.105", "12.1"))) == [Outcome.SKIPPED]
    assert outcomes(host_compiler_too_new_for_nvcc, facts(comp("nvcc", "10.2.89", "10.2"), comp("gcc", "8"))) == [Outcome.UNKNOWN]


# -- PKG105 numpy2-with-torch-built-for-numpy1 ------------------------------------------------------------
def test_pkg105_fires_and_passes():
    assert outcomes(numpy2_with_torch_built_for_numpy1, facts(torch_build("2.1.2+cu121"), pkg("numpy", "2.0.1"))) == [Outcome.FAILED]
    assert outcomes(numpy2_with_torch_built_for_numpy1, facts(torch_build("2.1.2+cu121"), pkg("numpy", "1.26.4"))) == [Outcome.PASSED]
    assert outcomes(numpy2_with_torch_built_for_numpy1, facts(torch_build("2.11.0+cu130"), pkg("numpy", "2.5.2"))) == [Outcome.PASSED]
    assert outcomes(numpy2_with_torch_built_for_numpy1, facts(torch_build("2.1.2"), probed=("packages",))) == [Outcome.SKIPPED]


# -- BLD106 known-broken-combination ---------------------------------------------------------------------
def test_bld106_fires_on_flash_attn_built_for_newer_torch():
    # Dao-AILab/flash-attention#950
    f = facts(torch_build("2.1.2+cu121", "12.1"), pkg("flash-attn", "2.5.8"), gpu("NVIDIA A100-SXM4-80GB"))
    found = run(known_broken_combination, f)
    assert found[0].outcome is Outcome.FAILED and "flash-attention/issues/950" in found[0].why


def test_bld106_fires_on_nightly_rocm_gfx900():
    f = facts(torch_build("2.12.0.dev20260301+rocm7.2", hip="7.2", variant="rocm"), gpu("Radeon RX Vega 56", vendor="amd"))
    assert outcomes(known_broken_combination, f) == [Outcome.FAILED]


def test_bld106_passes_and_unknown():
    f = facts(torch_build("2.12.1+rocm7.2", hip="7.2", variant="rocm"), gpu("AMD Instinct MI210", vendor="amd"))
    assert outcomes(known_broken_combination, f) == [Outcome.PASSED]
    # the torch 2.13.0+rocm7.2 CPU-compile regression needs to know whether a GPU is there
    assert outcomes(known_broken_combination, facts(torch_build("2.13.0+rocm7.2", hip="7.2", variant="rocm"))) == [Outcome.UNKNOWN]
    f = facts(torch_build("2.13.0+rocm7.2", hip="7.2", variant="rocm"), probed=("gpu_devices",))
    assert outcomes(known_broken_combination, f) == [Outcome.FAILED]


# -- LIB107 glibc-older-than-wheel-needs -------------------------------------------------------------------
def test_lib107_fires_and_passes():
    assert outcomes(glibc_older_than_wheel_needs, facts(torch_build("2.7.1+cu126"), os_info(glibc="2.17"))) == [Outcome.FAILED]
    assert outcomes(glibc_older_than_wheel_needs, facts(torch_build("2.5.1+cu124"), os_info(glibc="2.17"))) == [Outcome.PASSED]
    assert outcomes(glibc_older_than_wheel_needs, facts(torch_build("2.11.0+cu130"), os_info(glibc="2.39"))) == [Outcome.PASSED]
    assert outcomes(glibc_older_than_wheel_needs, facts(torch_build("2.11.0+cu130"), os_info(python="3.12"))) == [Outcome.SKIPPED]


# -- the real H200 capture ------------------------------------------------------------------------------
def test_real_h200_collect_env():
    r = run_cli(["check", "--from", str(REAL / "h200-cuda13" / "collect_env.txt"), "--format", "json",
                 "--select", "PKG1", "--select", "EXT1", "--select", "BLD1", "--select", "LIB1"])
    by = {f["code"]: f for f in r.json()["findings"]}
    assert by["PKG100"]["outcome"] == "passed"  # torch 2.11.0, torchvision 0.26.0, torchaudio 2.11.0, triton 3.6.0
    assert by["PKG105"]["outcome"] == "passed"  # numpy 2.5.2 with torch 2.11
    assert by["BLD103"]["outcome"] == "passed"  # Python 3.12
    assert by["LIB107"]["outcome"] == "passed"  # glibc 2.39 >= 2.28
    assert by["BLD106"]["outcome"] == "passed"


def test_bld103_described_stack_without_python_is_not_a_gap():
    f = facts(torch_build("2.5.1+cu124"), os_info(glibc="2.17"))
    assert outcomes(python_outside_build_range, f) == [Outcome.UNKNOWN]  # live: Python should have been read
    f.origin = "described"
    assert outcomes(python_outside_build_range, f) == [Outcome.SKIPPED]


def test_bld106_rocm64_rocblas_without_gfx906():
    # ROCm/legacy-rocm-build#4625
    f = facts(torch_build("2.11.0+rocm7.2", hip="7.2", variant="rocm"), gpu("AMD Instinct MI50", vendor="amd"))
    assert outcomes(known_broken_combination, f) == [Outcome.FAILED]
    f = facts(torch_build("2.9.1+rocm6.3", hip="6.3", variant="rocm"), gpu("AMD Instinct MI50", vendor="amd"))
    assert outcomes(known_broken_combination, f) == [Outcome.PASSED]


def test_pkg100_nightly_is_not_judged_by_release_pins():
    # a torch nightly ships with the pytorch-triton-rocm build of its own date, not the release's pin
    f = facts(torch_build("2.2.0.dev20231010+rocm5.7", hip="5.7.31921", variant="rocm"),
              pkg("pytorch-triton-rocm", "2.1.0+dafe145982"))
    assert outcomes(companion_built_for_other_torch, f) == [Outcome.PASSED]
    # but a companion whose own metadata pins another torch still fires
    f = facts(torch_build("2.5.0.dev20240901+cu121", "12.1"), pkg("torchvision", "0.19.0", ["torch==2.4.0"]))
    assert outcomes(companion_built_for_other_torch, f) == [Outcome.FAILED]
