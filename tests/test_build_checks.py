"""checks/bld.py (the former checks/build.py): every check with cases that fire and cases that don't."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuvet import kb as kbmod
from gpuvet.app.engine import run_checks
from gpuvet.checks.base import DOC_HEADINGS
from gpuvet.checks.bld import (
    cpu_only_build_with_gpu,
    framework_runtime_differs_from_system,
    framework_runtime_mismatch,
    gpu_arch_not_in_build,
    gpu_library_loaded_twice,
    gpu_library_shadowed_copy,
    prerelease_framework,
    wrong_vendor_build,
)
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.model.arch import gfx_from_override

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

BUILD_CHECKS = [gpu_arch_not_in_build, cpu_only_build_with_gpu, wrong_vendor_build, prerelease_framework, gpu_library_loaded_twice, gpu_library_shadowed_copy, framework_runtime_mismatch, framework_runtime_differs_from_system]  # the rules of the former checks/build.py

SITE = "/v/lib/python3.12/site-packages"
ALL_TABLES = ("framework_builds", "gpu_devices", "libraries", "shared_libraries", "env_vars", "runtimes")


def torch(version="2.11.0+cu130", cuda="13.0", hip="", variant="cuda", channel="stable",
          targets=("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"), name="torch", src="x"):
    return row("framework_builds", "version.py", name=name, version=version, cuda=cuda, hip=hip, debug=False,
               git_version="", channel=channel, targets=list(targets), targets_source=src, variant=variant,
               path=f"{SITE}/torch")


def gpu(vendor="nvidia", arch="sm_90", name="NVIDIA H200", index=0):
    return row("gpu_devices", "nvidia-smi", vendor=vendor, index=index, name=name, arch=arch)


def lib(name, version, path, selected, origin="pip", requested_by=f"{SITE}/torch/lib/libtorch_cuda.so"):
    return row("libraries", "loader", name=name, version=version, path=path, origin=origin, selected=selected,
               requested_by=requested_by)


def env(name, value):
    return row("env_vars", "environ", name=name, value=value)


def facts(*rows):
    f = Facts()
    f.add(rows)
    f.mark(*ALL_TABLES)
    return f


def run(check, f):
    return run_checks(f, [check], kbmod.load())


def outcome(check, f):
    res = run(check, f)
    return [x.outcome for x in res], res


def test_docstrings_and_codes():
    codes = [c.code for c in BUILD_CHECKS]
    assert codes == sorted(codes) and all(40 <= int(c[3:]) <= 59 for c in codes)
    for c in BUILD_CHECKS:
        assert set(c.sections()) == set(DOC_HEADINGS), c.code
        assert c.component in ("framework-build", "system-library", "runtime")


# -- BLD040 ------------------------------------------------------------------------------------------
def test_arch_h200_passes():
    outs, res = outcome(gpu_arch_not_in_build, facts(torch(), gpu()))
    assert outs == [Outcome.PASSED] and "sm_90" in res[0].title


def test_arch_rtx5090_on_cu118_fails():
    f = facts(torch("2.7.1+cu118", "11.8", targets=("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")),
              gpu(arch="sm_120", name="NVIDIA GeForce RTX 5090"))
    outs, res = outcome(gpu_arch_not_in_build, f)
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.ERROR
    assert res[0].cause == "gpu-arch-unsupported" and "sm_120" in res[0].title


@pytest.mark.parametrize("targets,device,expect", [
    (("sm_80",), "sm_86", Outcome.PASSED),  # same major, higher minor
    (("sm_86",), "sm_80", Outcome.FAILED),  # lower minor: no
    (("sm_90",), "sm_100", Outcome.FAILED),  # never across majors
    (("sm_90a",), "sm_90", Outcome.PASSED),
    (("sm_90a",), "sm_100", Outcome.FAILED),  # arch-specific: exactly that arch
    (("sm_100f",), "sm_103", Outcome.PASSED),  # family-specific: the family
    (("sm_100a",), "sm_103", Outcome.FAILED),
])
def test_arch_cuda_rules(targets, device, expect):
    outs, _ = outcome(gpu_arch_not_in_build, facts(torch(targets=targets), gpu(arch=device)))
    assert outs == [expect]


def test_arch_ptx_only_is_a_warning():
    outs, res = outcome(gpu_arch_not_in_build,
                        facts(torch(targets=("sm_80", "sm_90", "compute_90")), gpu(arch="sm_120")))
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.WARNING and "PTX" in res[0].title


def test_arch_from_compute_capability_column():
    g = row("gpu_devices", "nvml", vendor="nvidia", index=0, name="NVIDIA H200", compute_capability="9.0")
    outs, _ = outcome(gpu_arch_not_in_build, facts(torch(), g))
    assert outs == [Outcome.PASSED]


def test_arch_amd_exact_match_and_override():
    rocm = torch("2.5.1+rocm6.2", "", "6.2.41133", "rocm", targets=("gfx900", "gfx906", "gfx908", "gfx90a",
                                                                     "gfx942", "gfx1030", "gfx1100"))
    outs, res = outcome(gpu_arch_not_in_build, facts(rocm, gpu("amd", "gfx1031", "AMD Radeon RX 6700 XT")))
    assert outs == [Outcome.FAILED]
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in (x.command or "") for x in res[0].fixes)
    outs, res = outcome(gpu_arch_not_in_build, facts(rocm, gpu("amd", "gfx1031", "AMD Radeon RX 6700 XT"),
                                                           env("HSA_OVERRIDE_GFX_VERSION", "10.3.0")))
    assert outs == [Outcome.PASSED] and "gfx1030" in res[0].title and "HSA_OVERRIDE_GFX_VERSION" in res[0].title
    outs, _ = outcome(gpu_arch_not_in_build, facts(rocm, gpu("amd", "gfx1101", "AMD Radeon RX 7800 XT")))
    assert outs == [Outcome.FAILED]  # a gfx1100 build does not run on gfx1101
    outs, _ = outcome(gpu_arch_not_in_build, facts(rocm, gpu("amd", "gfx90a", "AMD Instinct MI210")))
    assert outs == [Outcome.PASSED]
    # an override that names a target the build lacks still fails, and says so
    outs, res = outcome(gpu_arch_not_in_build, facts(rocm, gpu("amd", "gfx1031"),
                                                           env("HSA_OVERRIDE_GFX_VERSION", "11.0.1")))
    assert outs == [Outcome.FAILED] and "gfx1101" in res[0].title


def test_gfx_from_override_as_build_uses_it():
    assert gfx_from_override("11.0.0") == "gfx1100"
    assert gfx_from_override("10.3.0") == "gfx1030"
    assert gfx_from_override("9.4.2") == "gfx942"
    assert gfx_from_override("9.0.10") == "gfx90a"
    assert gfx_from_override("banana") is None


def test_arch_unknown_targets_and_no_gpu():
    outs, _ = outcome(gpu_arch_not_in_build, facts(torch(targets=(), src="could not read x: y"), gpu()))
    assert outs == [Outcome.UNKNOWN]
    outs, _ = outcome(gpu_arch_not_in_build, facts(torch(targets=(), src=""), gpu()))
    assert outs == [Outcome.SKIPPED]  # pasted: nobody read the libraries (BLD102 uses the KB)
    outs, _ = outcome(gpu_arch_not_in_build, facts(torch()))
    assert outs == [Outcome.SKIPPED]
    f = Facts()
    f.add([torch()])
    f.mark("framework_builds")
    outs, _ = outcome(gpu_arch_not_in_build, f)  # gpu_devices never collected
    assert outs == [Outcome.UNKNOWN]


# -- BLD041 / BLD042 / BLD043 -------------------------------------------------------------------------
def test_cpu_only_build():
    cpu = torch("2.13.0+cpu", "", variant="cpu", targets=())
    outs, res = outcome(cpu_only_build_with_gpu, facts(cpu, gpu()))
    assert outs == [Outcome.FAILED] and res[0].cause == "cpu-only-build"
    assert "download.pytorch.org/whl/cu130" in (res[0].fixes[0].command or "")
    assert outcome(cpu_only_build_with_gpu, facts(cpu))[0] == [Outcome.SKIPPED]
    assert outcome(cpu_only_build_with_gpu, facts(torch(), gpu()))[0] == [Outcome.PASSED]


def test_wrong_vendor_build():
    outs, res = outcome(wrong_vendor_build, facts(torch(), gpu("amd", "gfx90a", "AMD Instinct MI210")))
    assert outs == [Outcome.FAILED] and res[0].cause == "wrong-vendor-build"
    rocm = torch("2.5.1+rocm6.2", "", "6.2", "rocm", targets=("gfx90a",))
    assert outcome(wrong_vendor_build, facts(rocm, gpu()))[0] == [Outcome.FAILED]
    assert outcome(wrong_vendor_build, facts(torch(), gpu(), gpu("amd", "gfx90a", index=1)))[0] == [Outcome.PASSED]
    assert outcome(wrong_vendor_build, facts(torch(), gpu()))[0] == [Outcome.PASSED]


def test_prerelease():
    outs, res = outcome(prerelease_framework, facts(torch("2.6.0.dev20241101+cu124", "12.4", channel="nightly")))
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.WARNING
    assert outcome(prerelease_framework, facts(torch()))[0] == [Outcome.PASSED]
    assert outcome(prerelease_framework, facts(torch("2.6.0a0+ecf3bae40a.nv25.01", channel="source")))[0] == [
        Outcome.PASSED]


# -- BLD044 / BLD045 ---------------------------------------------------------------------------------
def test_loaded_twice():
    f = facts(lib("cudart", "13.0.96", f"{SITE}/nvidia/cu13/lib/libcudart.so.13", True),
              lib("cudart", "12.4.127", "/usr/local/cuda-12.4/lib64/libcudart.so.12", True, "system",
                  f"{SITE}/torch/lib/libcaffe2_nvrtc.so"))
    outs, res = outcome(gpu_library_loaded_twice, f)
    assert outs == [Outcome.FAILED] and res[0].component == "system-library"
    f = facts(lib("cudart", "13.0.96", f"{SITE}/nvidia/cu13/lib/libcudart.so.13", True),
              lib("cudart", "13.0.96", "/usr/local/cuda/lib64/libcudart.so.13", False, "system"))
    assert outcome(gpu_library_loaded_twice, f)[0] == [Outcome.PASSED]
    assert outcome(gpu_library_loaded_twice, facts(torch()))[0] == [Outcome.SKIPPED]


def test_shadowed_copy():
    f = facts(lib("cudnn", "9.19.0.56", f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9", True),
              lib("cudnn", "9.14.0", "/lib/x86_64-linux-gnu/libcudnn.so.9", False, "system"))
    outs, res = outcome(gpu_library_shadowed_copy, f)
    # a copy nothing loads is information: reported, never a deduction
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.INFO
    assert "libtorch_cuda.so loads 9.19.0.56" in res[0].title
    assert "not loaded: 9.14.0 at /lib/x86_64-linux-gnu/libcudnn.so.9" in res[0].title
    f = facts(lib("cudnn", "9.19.0.56", f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9", True),
              lib("cudnn", "9.19.0", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", False, "system"),
              lib("cublas", "13.1.0.3", f"{SITE}/nvidia/cu13/lib/libcublas.so.13", True),
              lib("cublas", "13", "/usr/local/cuda/lib64/libcublas.so.13", False, "system"))
    assert outcome(gpu_library_shadowed_copy, f)[0] == [Outcome.PASSED]


def test_shadowed_copy_pointed_at_by_ld_library_path():
    f = facts(lib("nccl", "2.28.9", f"{SITE}/nvidia/nccl/lib/libnccl.so.2", True),
              lib("nccl", "2.21.5", "/opt/nccl/lib/libnccl.so.2", False, "system"),
              env("LD_LIBRARY_PATH", "/opt/nccl/lib"))
    outs, res = outcome(gpu_library_shadowed_copy, f)
    assert outs == [Outcome.FAILED] and "LD_LIBRARY_PATH" in res[0].why


# -- BLD046 / BLD047 ---------------------------------------------------------------------------------
def test_runtime_mismatch_via_ld_library_path():
    f = facts(torch(), lib("cudart", "12.4.127", "/usr/local/cuda-12.4/lib64/libcudart.so.12", True, "system"),
              row("shared_libraries", "loader", soname="libcudart.so.12", path="/usr/local/cuda-12.4/lib64/libcudart.so.12",
                  via="ld_library_path", requested_by="libtorch_cuda.so", others=[]))
    outs, res = outcome(framework_runtime_mismatch, f)
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.ERROR
    assert "via ld_library_path" in res[0].title and res[0].fixes[0].command == "unset LD_LIBRARY_PATH"


def test_runtime_matches_or_older_minor():
    f = facts(torch(), lib("cudart", "13.0.96", f"{SITE}/nvidia/cu13/lib/libcudart.so.13", True))
    assert outcome(framework_runtime_mismatch, f)[0] == [Outcome.PASSED]
    f = facts(torch("2.12.0+cu131", "13.1"), lib("cudart", "13.0.96", "/usr/lib/libcudart.so.13", True, "system"))
    outs, res = outcome(framework_runtime_mismatch, f)
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.WARNING


def test_hip_runtime_mismatch():
    rocm = torch("2.5.1+rocm6.2", "", "6.2.41133-dd7f95766", "rocm", targets=("gfx90a",))
    f = facts(rocm, lib("amdhip64", "6.0.60002", "/opt/rocm-6.0.2/lib/libamdhip64.so", True, "system"))
    assert outcome(framework_runtime_mismatch, f)[0] == [Outcome.FAILED]
    f = facts(rocm, lib("amdhip64", "6.2.41133", f"{SITE}/torch/lib/libamdhip64.so", True, "framework-bundled"))
    assert outcome(framework_runtime_mismatch, f)[0] == [Outcome.PASSED]
    f = facts(rocm, lib("amdhip64", "", f"{SITE}/torch/lib/libamdhip64.so", True, "framework-bundled"))
    assert outcome(framework_runtime_mismatch, f)[0] == [Outcome.PASSED]
    f = facts(rocm)
    assert outcome(framework_runtime_mismatch, f)[0] == [Outcome.UNKNOWN]


def test_framework_vs_system_runtime():
    rt = row("runtimes", "nvcc", vendor="nvidia", name="cuda-toolkit", version="12.4", path="/usr/local/cuda",
             origin="system")
    f = facts(torch("2.7.0+cu128", "12.8"), rt, lib("cudart", "12.8.90", f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12", True))
    outs, res = outcome(framework_runtime_differs_from_system, f)
    assert outs == [Outcome.FAILED] and res[0].severity == Severity.INFO
    assert "uses its own pip runtime 12.8.90" in res[0].title
    rt13 = row("runtimes", "nvcc", vendor="nvidia", name="cuda-toolkit", version="13.0.88", path="/usr/local/cuda",
               origin="system")
    assert outcome(framework_runtime_differs_from_system, facts(torch(), rt13))[0] == [Outcome.PASSED]
    assert outcome(framework_runtime_differs_from_system, facts(torch()))[0] == [Outcome.SKIPPED]
    amd = row("runtimes", "rocminfo", vendor="amd", name="rocm", version="6.4.1", path="/opt/rocm", origin="system")
    rocm = torch("2.5.1+rocm6.2", "", "6.2.41133-dd7f95766", "rocm", targets=("gfx90a",))
    # ROCm builds are RTM021's (an error there): BLD047 does not report the same thing again as info
    assert outcome(framework_runtime_differs_from_system, facts(rocm, amd))[0] == [Outcome.SKIPPED]
    from gpuvet.checks.registry import get
    assert outcome(get("RTM021"), facts(rocm, amd))[0] == [Outcome.FAILED]


# -- the H200, probe to findings ------------------------------------------------------------------------
@pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")
def test_h200_end_to_end(tmp_path):
    from gpuvet.probes import elf, framework

    elf.clear_cache()
    fake = elfbuild.h200_system(tmp_path)
    f = Facts()
    f.add(framework._probe(fake))
    f.add([gpu(), row("runtimes", "nvcc", vendor="nvidia", name="cuda-toolkit", version="13.0.88",
                      path="/usr/local/cuda", origin="system"),
           env("LD_LIBRARY_PATH", fake.environ["LD_LIBRARY_PATH"])])
    f.mark(*ALL_TABLES)
    res = {}
    for c in BUILD_CHECKS:
        res.setdefault(c.code, []).extend(run(c, f))
    assert [x.outcome for x in res["BLD040"]] == [Outcome.PASSED]
    for code in ("BLD041", "BLD042", "BLD043", "BLD044", "BLD046", "BLD047"):
        assert all(x.outcome in (Outcome.PASSED, Outcome.SKIPPED) for x in res[code]), (code, res[code])
    shadow = [x.title for x in res["BLD045"] if x.outcome is Outcome.FAILED]
    assert any(t.startswith("cuDNN:") and "loads 9.19.0.56" in t and "9.14.0 at /lib/x86_64-linux-gnu/libcudnn.so.9" in t
               for t in shadow), shadow
    assert any(t.startswith("NCCL:") and "2.28.9" in t and "2.28.3" in t for t in shadow)
    assert not any(t.startswith(("CUDA runtime:", "cuBLAS")) for t in shadow)
    elf.clear_cache()
