"""AMD checks: each rule with cases that fire and cases that don't, one rule enabled at a time.
Facts come from the real captures' parsers where a capture exists, else small fact sets."""
from __future__ import annotations

import pytest
from conftest import fixture_text, make_facts

from gpuvet import kb as KB
from gpuvet.app.engine import run_checks
from gpuvet.checks.base import DOC_HEADINGS
from gpuvet.checks.common import amd_gpu_state
from gpuvet.checks.drv import amd_kernel_driver_too_old, amdgpu_driver_not_loaded
from gpuvet.checks.env import hsa_override_gfx_version
from gpuvet.checks.lib import miopen_db_unusable
from gpuvet.checks.rtm import (
    framework_hip_differs_from_rocm,
    hipcc_hip_differs_from_runtime,
    hipcc_wrong_platform,
    rocm_default_tree_mismatch,
)
from gpuvet.model import Facts, Outcome, ProbeError, Severity, row
from gpuvet.probes.hip import parse_hipcc_version, parse_hipconfig
from gpuvet.probes.rocm_smi import parse_rocm_smi
from gpuvet.probes.rocminfo import parse_rocminfo, rocminfo_error

AMD_CHECKS = [amd_kernel_driver_too_old, framework_hip_differs_from_rocm, hipcc_hip_differs_from_runtime, hipcc_wrong_platform, hsa_override_gfx_version, miopen_db_unusable, amdgpu_driver_not_loaded, rocm_default_tree_mismatch]  # the rules of the former checks/amd.py


facts = make_facts


def run(check, f):
    return run_checks(f, [check], KB.load())


def outcome(check, f):
    got = run(check, f)
    assert got, check.code
    return got[0].outcome if all(x.outcome == got[0].outcome for x in got) else [x.outcome for x in got]


def rocm(version, path="/opt/rocm", origin="system"):
    return row("runtimes", "t", vendor="amd", name="rocm", version=version, path=path, origin=origin)


def hiprt(version, path):
    return row("runtimes", "t", vendor="amd", name="hip-runtime", version=version, path=path, origin="system")


def torch(hip, version="2.2.0.dev20231010+rocm5.7"):
    return row("framework_builds", "torch/version.py", name="torch", version=version, hip=hip, variant="rocm",
               channel="nightly")


def bundled_hip(version="5.7.31921"):
    return row("libraries", "elf", name="amdhip64", version=version, origin="framework-bundled", selected=True,
               path="/venv/lib/python3.10/site-packages/torch/lib/libamdhip64.so")


def env(name, value):
    return row("env_vars", "environ", name=name, value=value)


def gpu(name, arch, index=0):
    return row("gpu_devices", "rocminfo", vendor="amd", index=index, name=name, arch=arch)


ROCMINFO_ERR = ProbeError("amd-rocminfo", ("runtimes", "gpu_devices", "drivers"),
                          "rocminfo: ROCk module is NOT loaded, possibly no GPU devices", "error")


def test_every_check_is_documented_and_in_range():
    for c in AMD_CHECKS:
        assert 20 <= int(c.code[3:]) <= 39
        secs = c.sections()
        assert all(secs.get(h) for h in DOC_HEADINGS), c.code


# -- DRV020 ------------------------------------------------------------------------------------------
def drv(version, flavor="dkms"):
    return row("drivers", "/sys/module/amdgpu/version", vendor="amd", component="kernel-module", version=version,
               flavor=flavor)


def dkms_pkg(version):
    return row("drivers", "dpkg", vendor="amd", component="kernel-module", version=version, flavor="dkms-package")


def test_drv020_user_space_newer_than_tested_fires():
    # ROCm 6.0.0's KMD is tested with 5.6.x-6.2.x; ROCm 6.3.3 user space is newer
    f = facts(drv("6.3.6"), dkms_pkg("6.3.6.60000"), rocm("6.3.3"))
    got = run(amd_kernel_driver_too_old, f)
    assert got[0].outcome is Outcome.FAILED and "older than system ROCm 6.3.3" in got[0].title


def test_drv020_framework_hip_newer_than_tested_fires():
    f = facts(drv("6.3.6"), dkms_pkg("6.3.6.60000"), rocm("6.0.0"), torch("6.3.42131", "2.7.0+rocm6.3"))
    got = run(amd_kernel_driver_too_old, f)
    assert [g.outcome for g in got] == [Outcome.FAILED] and "HIP 6.3.42131" in got[0].title


def test_drv020_older_user_space_is_a_warning():
    f = facts(drv("6.10.5"), dkms_pkg("6.10.5.60300"), rocm("5.7.1"))
    got = run(amd_kernel_driver_too_old, f)
    assert got[0].outcome is Outcome.FAILED and got[0].severity is Severity.WARNING


def test_drv020_tested_combination_passes():
    f = facts(drv("6.8.5"), dkms_pkg("6.8.5.60200"), rocm("6.2.4"), torch("6.2.41133", "2.5.1+rocm6.2"))
    assert outcome(amd_kernel_driver_too_old, f) is Outcome.PASSED


def test_drv020_unknown_release_inbox_and_no_driver():
    f = facts(drv("6.7.0"), rocm("6.2.4"))  # no package record, not in the KB: which ROCm it came with is unknown
    assert outcome(amd_kernel_driver_too_old, f) is Outcome.UNKNOWN
    f = facts(*parse_rocm_smi(fixture_text("amd/rocm-smi-a-excerpt-gfx1103-rocm611.txt"), "rocm-smi"), rocm("6.1.1"))
    assert outcome(amd_kernel_driver_too_old, f) is Outcome.UNKNOWN  # the kernel's own amdgpu
    f = facts(rocm("5.2.3", "/usr"), probed=("drivers",))
    assert outcome(amd_kernel_driver_too_old, f) is Outcome.SKIPPED
    f = facts(rocm("5.2.3", "/usr"), errors=[ROCMINFO_ERR])
    assert outcome(amd_kernel_driver_too_old, f) is Outcome.UNKNOWN


def test_drv020_rocminfo_without_version_is_unknown():
    f = facts(*parse_rocminfo(fixture_text("amd/rocminfo-mi300x.txt"), "rocminfo"), rocm("6.2.0"))
    assert outcome(amd_kernel_driver_too_old, f) is Outcome.UNKNOWN


# -- RTM021 ------------------------------------------------------------------------------------------
def test_rtm021_the_motivating_incident_fires():
    # torch nightly built with HIP 5.7 on an MI210 machine whose ROCm is 5.6.1
    f = facts(torch("5.7.31921-d1770ee1b"), rocm("5.6.1"), bundled_hip(),
              *parse_rocminfo(fixture_text("amd/rocminfo-4xmi210-rocm624.txt"), "rocminfo"))
    got = run(framework_hip_differs_from_rocm, f)
    assert [g.outcome for g in got] == [Outcome.FAILED]
    assert got[0].severity is Severity.ERROR
    assert "HIP 5.7.31921-d1770ee1b" in got[0].title and "5.6.1" in got[0].title
    assert "its own framework-bundled HIP runtime" in got[0].title
    assert any("rocm5.6" in (x.text or "") for x in got[0].fixes)


def test_rtm021_system_hip_loaded_says_so():
    lib = row("libraries", "elf", name="amdhip64", version="5.6.31062", origin="system", selected=True,
              path="/opt/rocm-5.6.1/lib/libamdhip64.so.5")
    got = run(framework_hip_differs_from_rocm, facts(torch("5.7.31921"), rocm("5.6.1"), lib))
    assert got[0].outcome is Outcome.FAILED and "loads the system HIP runtime" in got[0].title


def test_rtm021_same_release_passes_and_no_hip_build_skips():
    assert outcome(framework_hip_differs_from_rocm,
                   facts(torch("6.2.41133", "2.5.1+rocm6.2"), rocm("6.2.4"))) is Outcome.PASSED
    assert outcome(framework_hip_differs_from_rocm, facts(
        row("framework_builds", "x", name="torch", version="2.13.0+cpu", variant="cpu"), rocm("5.2.3", "/usr"))) \
        is Outcome.SKIPPED
    assert outcome(framework_hip_differs_from_rocm, facts(torch("5.7.31921"), probed=("runtimes",))) is Outcome.SKIPPED


def test_rtm021_compares_with_the_hip_runtime_when_no_release_is_known():
    f = facts(torch("6.0.32830"), hiprt("5.2.21153", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153"))
    assert outcome(framework_hip_differs_from_rocm, f) is Outcome.FAILED


# -- RTM022 ------------------------------------------------------------------------------------------
DEB = "real/debian12-cpu-rocm52/"


def debian_compilers():
    rows = [*parse_hipconfig(fixture_text(DEB + "hipconfig-full.txt"), "hipconfig --full"),
            *parse_hipcc_version(fixture_text(DEB + "hipcc-version.txt"), "hipcc --version")]
    return [row(r.table, r.source, **{**r.values, "path": f"/usr/bin/{r['name']}"}) for r in rows]


def test_rtm022_debian_hipcc_matches_its_runtime():
    f = facts(*debian_compilers(), hiprt("5.2.21153", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153"))
    assert outcome(hipcc_hip_differs_from_runtime, f) is Outcome.PASSED


def test_rtm022_hipcc_of_another_tree_fires():
    hipcc = row("compilers", "hipcc --version", name="hipcc", version="6.1.40091-a8dbc0c19", platform="amd",
                path="/opt/rocm-6.1.0/bin/hipcc")
    f = facts(hipcc, hiprt("5.7.31921", "/opt/rocm-5.7.1/lib/libamdhip64.so.5.7.31921"))
    got = run(hipcc_hip_differs_from_runtime, f)
    assert got[0].outcome is Outcome.FAILED and "5.7.31921" in got[0].title


def test_rtm022_hipcc_and_hipconfig_disagree():
    a = row("compilers", "x", name="hipcc", version="6.1.40091", platform="amd", path="/opt/rocm-6.1.0/bin/hipcc")
    b = row("compilers", "y", name="hipconfig", version="6.2.41133", platform="amd", path="/opt/rocm-6.2.0/bin/hipconfig")
    got = run(hipcc_hip_differs_from_runtime, facts(a, b, hiprt("6.1.60100", "/opt/rocm-6.1.0/lib/libamdhip64.so.6.1.60100")))
    assert got[0].outcome is Outcome.FAILED and "hipconfig 6.2.41133" in got[0].title


def test_rtm022_skips_without_hipcc():
    assert outcome(hipcc_hip_differs_from_runtime, facts(hiprt("5.2.21153", "/usr/lib/x"), probed=("compilers",))) \
        is Outcome.SKIPPED


# -- RTM023 ------------------------------------------------------------------------------------------
def test_rtm023_nvidia_platform_on_an_amd_machine_fires():
    f = facts(*debian_compilers(), *parse_rocminfo(fixture_text("amd/rocminfo-4xmi210-rocm624.txt"), "rocminfo"))
    got = run(hipcc_wrong_platform, f)
    assert got[0].outcome is Outcome.FAILED and "AMD Instinct MI210" in got[0].title


def test_rtm023_unknown_when_rocminfo_failed_on_debian():
    f = facts(*debian_compilers(), errors=[ROCMINFO_ERR])
    got = run(hipcc_wrong_platform, f)
    assert {g.outcome for g in got} == {Outcome.UNKNOWN}
    assert "ROCk module is NOT loaded" in got[0].title


def test_rtm023_correct_platforms_pass_and_amd_on_nvidia_fires():
    amdc = parse_hipconfig(fixture_text("amd/hipconfig-full-rocm611.txt"), "hipconfig")
    f = facts(*amdc, gpu("AMD Radeon Graphics", "gfx1103"))
    assert outcome(hipcc_wrong_platform, f) is Outcome.PASSED
    nv = row("gpu_devices", "nvidia-smi", vendor="nvidia", index=0, name="NVIDIA H200", compute_capability="9.0")
    assert outcome(hipcc_wrong_platform, facts(*amdc, nv)) is Outcome.FAILED
    assert outcome(hipcc_wrong_platform, facts(*debian_compilers(), nv)) is Outcome.PASSED
    assert outcome(hipcc_wrong_platform, facts(*debian_compilers(), probed=("gpu_devices",))) is Outcome.SKIPPED


# -- ENV024 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,gpu_row,expect,sev", [
    ("10.3.0", gpu("AMD Radeon RX 6700 XT", "gfx1031"), Outcome.PASSED, None),          # known working
    ("11.0.2", gpu("AMD Radeon Graphics", "gfx1103"), Outcome.FAILED, Severity.ERROR),  # known failing
    ("11.0.0", gpu("AMD Instinct MI210", "gfx90a"), Outcome.FAILED, Severity.ERROR),    # another generation
    ("9.4.2", gpu("AMD Instinct MI210", "gfx90a"), Outcome.FAILED, Severity.WARNING),   # natively supported
    ("gfx1030", gpu("AMD Radeon RX 6700 XT", "gfx1031"), Outcome.FAILED, Severity.ERROR),  # malformed
    ("9.0.10", gpu("AMD Instinct MI210", "gfx90a"), Outcome.PASSED, None),              # its own target
    ("10.3.0", gpu("AMD Radeon RX 6600", "gfx1032"), Outcome.UNKNOWN, None),            # no record
])
def test_env024_hsa_override(value, gpu_row, expect, sev):
    got = run(hsa_override_gfx_version, facts(env("HSA_OVERRIDE_GFX_VERSION", value), gpu_row))
    assert got[0].outcome is expect, got[0].title
    if sev is not None:
        assert got[0].severity is sev


def test_env024_unset_passes_even_without_gpu_facts():
    f = facts(env("PATH", "/usr/bin"), errors=[ROCMINFO_ERR])
    assert outcome(hsa_override_gfx_version, f) is Outcome.PASSED


def test_env024_set_but_gpu_unknown_is_unknown():
    f = facts(env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), errors=[ROCMINFO_ERR])
    assert outcome(hsa_override_gfx_version, f) is Outcome.UNKNOWN


def test_env024_per_device_variant_and_real_capture():
    gpus = parse_rocminfo(fixture_text("amd/rocminfo-rx7900xtx-rocm602.txt"), "rocminfo")
    f = facts(env("HSA_OVERRIDE_GFX_VERSION_0", "10.3.0"), *gpus)
    got = run(hsa_override_gfx_version, f)
    assert got[0].outcome is Outcome.FAILED and "gfx1100" in got[0].title


# -- LIB025 ------------------------------------------------------------------------------------------
def cache(name, path, exists=True, writable=True):
    return row("kernel_caches", "t", name=name, path=path, exists=exists, writable=writable)


def test_lib025_readonly_cache_fires():
    f = facts(torch("6.2.41133", "2.5.1+rocm6.2"), cache("miopen-user-db", "/home/u/.config/miopen/", False, False),
              cache("miopen-cache", "/home/u/.cache/miopen/"))
    got = run(miopen_db_unusable, f)
    assert got[0].outcome is Outcome.FAILED and got[0].severity is Severity.ERROR
    assert "MIOPEN_USER_DB_PATH" in (got[0].fixes[0].command or "")


def test_lib025_missing_system_db_warns():
    lib = row("libraries", "t", name="miopen", version="3.2.0", origin="system", path="/opt/rocm/lib/libMIOpen.so.1")
    f = facts(lib, cache("miopen-system-db", "/opt/rocm/share/miopen/db", False, False),
              cache("miopen-user-db", "/h/.config/miopen/"), cache("miopen-cache", "/h/.cache/miopen/"))
    got = run(miopen_db_unusable, f)
    assert got[0].outcome is Outcome.FAILED and got[0].severity is Severity.WARNING


def test_lib025_passes_and_skips():
    ok = [cache("miopen-user-db", "/h/.config/miopen/", False, True), cache("miopen-cache", "/h/.cache/miopen/")]
    assert outcome(miopen_db_unusable, facts(torch("6.2.41133"), *ok)) is Outcome.PASSED
    ro = cache("miopen-user-db", "/ro", True, False)
    assert outcome(miopen_db_unusable, facts(ro)) is Outcome.SKIPPED  # no MIOpen user on this machine


# -- DRV026 ------------------------------------------------------------------------------------------
def pci_gpu():
    return row("gpu_devices", "/sys/bus/pci/devices/0000:03:00.0/class", vendor="amd", index=0,
               name="AMD GPU [1002:740f] (PCI)", pci_bus="0000:03:00.0")


def test_drv026_gpu_without_module_fires():
    f = facts(pci_gpu(), rocm("6.2.3"), errors=[ROCMINFO_ERR])
    got = run(amdgpu_driver_not_loaded, f)
    assert got[0].outcome is Outcome.FAILED
    assert any("ROCk module is NOT loaded" in e.text for e in got[0].evidence)


def test_drv026_loaded_passes_no_gpu_skips_unknown_when_not_known():
    f = facts(*parse_rocminfo(fixture_text("amd/rocminfo-4xmi210-rocm624.txt"), "rocminfo"), rocm("6.2.4"))
    assert outcome(amdgpu_driver_not_loaded, f) is Outcome.PASSED
    assert outcome(amdgpu_driver_not_loaded, facts(rocm("6.2.4"), probed=("gpu_devices",))) is Outcome.SKIPPED
    assert outcome(amdgpu_driver_not_loaded, facts(rocm("5.2.3", "/usr"), errors=[ROCMINFO_ERR])) is Outcome.UNKNOWN
    assert outcome(amdgpu_driver_not_loaded, facts(pci_gpu(), probed=("runtimes",))) is Outcome.SKIPPED  # no ROCm


# -- RTM027 ------------------------------------------------------------------------------------------
def trees(default="6.1.0"):
    return [rocm(default, "/opt/rocm"), rocm("6.1.0", "/opt/rocm-6.1.0"), rocm("6.2.4", "/opt/rocm-6.2.4")]


def test_rtm027_opt_rocm_points_at_another_release_fires():
    got = run(rocm_default_tree_mismatch, facts(*trees("6.1.0"), torch("6.2.41133", "2.5.1+rocm6.2")))
    assert got[0].outcome is Outcome.FAILED and "/opt/rocm-6.2.4" in got[0].title


def test_rtm027_rocm_path_disagrees_fires():
    got = run(rocm_default_tree_mismatch, facts(*trees("6.1.0"), env("ROCM_PATH", "/opt/rocm-6.2.4")))
    assert got[0].outcome is Outcome.FAILED and "ROCM_PATH" in got[0].title


def test_rtm027_passes_and_skips():
    assert outcome(rocm_default_tree_mismatch, facts(*trees("6.2.4"), torch("6.2.41133"))) is Outcome.PASSED
    assert outcome(rocm_default_tree_mismatch, facts(rocm("6.2.4"), rocm("6.2.4", "/opt/rocm-6.2.4"))) is Outcome.SKIPPED


# -- helpers -----------------------------------------------------------------------------------------
def test_amd_gpu_state():
    assert amd_gpu_state(facts(gpu("MI210", "gfx90a")))[0] == "yes"
    assert amd_gpu_state(facts(probed=("gpu_devices",)))[0] == "no"
    assert amd_gpu_state(facts(errors=[ROCMINFO_ERR]))[0] == "unknown"
    missing = ProbeError("amd-rocminfo", ("gpu_devices",), "rocminfo: not installed", "missing")
    nv = row("gpu_devices", "nvidia-smi", vendor="nvidia", index=0, name="NVIDIA H200")
    assert amd_gpu_state(facts(nv, errors=[missing]))[0] == "no"
    assert amd_gpu_state(Facts())[0] == "unknown"


def test_drv020_driver_version_from_rocminfo_via_kb():
    # rocminfo "ROCk module version 6.10.5 is loaded" = ROCm 6.3's driver (KB), tested with 6.1.x-6.4.x
    rows = parse_rocminfo(fixture_text("amd/rocminfo-4xmi210-rocm624.txt"), "rocminfo")
    assert outcome(amd_kernel_driver_too_old, facts(*rows, rocm("6.2.4"))) is Outcome.PASSED
    got = run(amd_kernel_driver_too_old, facts(*rows, rocm("5.6.1"), torch("5.7.31921")))
    assert {g.outcome for g in got} == {Outcome.FAILED} and all(g.severity is Severity.WARNING for g in got)


def test_drv020_incompatible_kernel_and_userspace_from_rocminfo():
    # verbatim lines of a rocminfo run on Fedora 33 with ROCm 4.1 (public incident, benchmark case rocm-0036)
    text = ("ROCk module is loaded\n"
            "HSA Error:  Incompatible kernel and userspace, Vega 20 [Radeon VII] disabled. Upgrade amdgpu.\n")
    assert rocminfo_error(text) == "HSA Error:  Incompatible kernel and userspace, Vega 20 [Radeon VII] disabled. Upgrade amdgpu."
    f = facts(*parse_rocminfo(text, "<pasted>"), rocm("4.1.0"),
              errors=[ProbeError("pasted.rocminfo", ("gpu_devices",), rocminfo_error(text))])
    got = run(amd_kernel_driver_too_old, f)
    assert got[0].outcome is Outcome.FAILED and "incompatible" in got[0].title


def test_env024_pasted_rocminfo_shows_the_overridden_target():
    # rocminfo run with the override reports gfx1030 for an RX 6700 XT: the model name gives gfx1031
    f = facts(env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), gpu("AMD Radeon RX 6700 XT", "gfx1030"))
    got = run(hsa_override_gfx_version, f)
    assert got[0].outcome is Outcome.PASSED and "gfx1031 -> gfx1030" in got[0].title
    f = facts(env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), gpu("AMD Radeon Graphics", "gfx1030"))
    assert outcome(hsa_override_gfx_version, f) is Outcome.UNKNOWN
    kfd = row("gpu_devices", "/sys/class/kfd/kfd/topology/nodes/1/properties", vendor="amd", index=0, name=None,
              arch="gfx1030")
    assert outcome(hsa_override_gfx_version, facts(env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), kfd)) is Outcome.PASSED
