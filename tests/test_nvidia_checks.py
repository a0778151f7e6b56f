"""Each NVIDIA check with only that rule enabled, on the real knowledge base: cases that fire (error
and warning variants) and cases that don't; the real H200 and Debian CPU captures end to end; the
cuda_toolkits KB table against its schema."""
from __future__ import annotations

import json
from importlib import resources

import pytest
import yaml
from conftest import fixture_text, make_facts

from gpuvet import kb as KB
from gpuvet.app.engine import run_checks
from gpuvet.checks.base import DOC_HEADINGS
from gpuvet.checks.drv import (
    driver_too_old_for_cuda_toolkit,
    driver_too_old_for_framework_cuda,
    nvidia_driver_not_responding,
    nvidia_kernel_module_differs_from_user_space_driver,
)
from gpuvet.checks.ext import nvcc_cannot_target_gpu, nvcc_cuda_differs_from_framework
from gpuvet.model import Outcome, ProbeError, Severity, row
from gpuvet.probes import nvidia as N

NVIDIA_CHECKS = [driver_too_old_for_framework_cuda, driver_too_old_for_cuda_toolkit, nvcc_cuda_differs_from_framework, nvidia_kernel_module_differs_from_user_space_driver, nvidia_driver_not_responding, nvcc_cannot_target_gpu]  # the rules of the former checks/nvidia.py

H200 = "real/h200-cuda13/"
DEB = "real/debian12-cpu-rocm52/"


facts = make_facts


def run(check, f):
    return run_checks(f, [check], KB.load())


def outcome(check, f):
    found = run(check, f)
    return [(x.outcome, x.severity) for x in found]


def user(version, cuda=None):
    vals = {"vendor": "nvidia", "component": "user-space", "version": version}
    if cuda:
        vals["cuda_version"] = cuda
    return row("drivers", "nvidia-smi", **vals)


def kmod(version):
    return row("drivers", "/proc/driver/nvidia/version", vendor="nvidia", component="kernel-module", version=version)


def torch(cuda, version="2.x"):
    return row("framework_builds", "torch/version.py", name="torch", version=version, cuda=cuda, variant="cuda")


def nvcc(cuda, version=None, path="/usr/local/cuda/bin/nvcc"):
    return row("compilers", f"{path} --version", name="nvcc", version=version or cuda + ".0", cuda_version=cuda, path=path)


FAILED_ERR = (Outcome.FAILED, Severity.ERROR)
FAILED_WARN = (Outcome.FAILED, Severity.WARNING)
PASSED = (Outcome.PASSED, Severity.ERROR)
SKIPPED = (Outcome.SKIPPED, Severity.ERROR)
UNKNOWN = (Outcome.UNKNOWN, Severity.ERROR)


# ---------------------------------------------------------------------------------------------------
# declarations

def test_declarations():
    codes = [c.code for c in NVIDIA_CHECKS]
    assert len(set(codes)) == len(codes)
    for c in NVIDIA_CHECKS:
        assert 1 <= int(c.code[-3:]) <= 19
        secs = c.sections()
        for h in DOC_HEADINGS:
            assert secs.get(h), (c.code, h)
        assert c.component in ("driver", "extension")


# ---------------------------------------------------------------------------------------------------
# DRV001 driver vs the framework build's CUDA

@pytest.mark.parametrize("drv,build,expect", [
    (user("580.159.04", "13.0"), "13.0", PASSED),               # the H200
    (user("580.159.04", "13.0"), "12.8", PASSED),               # newer driver runs older builds
    (user("550.54.14", "12.4"), "12.8", FAILED_WARN),           # minor-version compatibility
    (user("470.82.01", "11.4"), "12.4", FAILED_ERR),            # older major
    (user("550.54.14", "12.4"), "13.0", FAILED_ERR),            # 13.x needs a 580 driver
    (kmod("470.82.01"), "12.1", FAILED_ERR),                    # CUDA derived from the KB
    (kmod("535.104.05"), "12.2", PASSED),                       # 12.2 Update 2's own driver
    (kmod("535.54.03"), "12.4", FAILED_WARN),
    (kmod("450.51.06"), "11.8", FAILED_ERR),                    # below 11.x's minor-compat floor 450.80.02
    (kmod("450.80.02"), "11.8", FAILED_WARN),
    # before CUDA 11 (Table 3's older rows): no minor-version compatibility, and an old driver is not "CUDA 0.0"
    (kmod("390.48"), "8.0", PASSED),                            # a CUDA 9.1-level driver runs a CUDA 8.0 build
    (kmod("410.104"), "10.1", FAILED_ERR),                      # 10.1 needs 418.39: no 10.x minor compatibility
    (kmod("418.39"), "10.1", PASSED),
    (kmod("375.82"), "9.1", FAILED_ERR),
])
def test_drv001(drv, build, expect):
    assert outcome(driver_too_old_for_framework_cuda, facts(drv, torch(build))) == [expect]


def test_drv001_fix_names_minimum_driver_from_kb():
    [f] = run(driver_too_old_for_framework_cuda, facts(user("470.82.01", "11.4"), torch("12.4", "2.5.1+cu124")))
    assert "550.54.14" in f.title and "525.60.13" in f.title
    assert any("550.54.14" in x.text and x.needs_reboot for x in f.fixes)
    assert any(x.applicability.value == "safe" for x in f.fixes)
    assert f.cause == "driver-too-old" and f.component == "driver"


def test_drv001_skips_and_unknowns():
    # CPU build, no CUDA: skip
    cpu = row("framework_builds", "t", name="torch", version="2.13.0+cpu", cuda="", variant="cpu")
    assert outcome(driver_too_old_for_framework_cuda, facts(cpu, user("580.159.04", "13.0"))) == [SKIPPED]
    # a CUDA build on a machine without any NVIDIA driver: skip here (other rules speak of it)
    assert outcome(driver_too_old_for_framework_cuda, facts(torch("13.0"), probed=("drivers",))) == [SKIPPED]
    # the driver probe failed: unknown
    err = ProbeError("nvidia-driver", ("drivers", "gpu_devices"), "Failed to initialize NVML: Unknown Error")
    assert outcome(driver_too_old_for_framework_cuda, facts(torch("13.0"), errors=[err])) == [UNKNOWN]
    # framework builds never collected: unknown
    assert outcome(driver_too_old_for_framework_cuda, facts(user("580.159.04", "13.0"))) == [UNKNOWN]
    # a driver newer than anything the KB lists: passes
    assert outcome(driver_too_old_for_framework_cuda, facts(kmod("999.1"), torch("13.0"))) == [PASSED]


# ---------------------------------------------------------------------------------------------------
# DRV002 driver vs the CUDA toolkit

@pytest.mark.parametrize("drv,tool,expect", [
    (user("580.159.04", "13.0"), nvcc("13.0", "13.0.88"), PASSED),
    (user("535.104.05", "12.2"), nvcc("12.8"), FAILED_WARN),
    (user("550.54.14", "12.4"), nvcc("13.0", "13.0.88"), FAILED_ERR),
    (user("550.54.14", "12.4"), row("runtimes", "/usr/local/cuda/version.json", vendor="nvidia", name="cuda-toolkit",
                                    version="12.8.1", path="/usr/local/cuda/version.json"), FAILED_WARN),
])
def test_drv002(drv, tool, expect):
    assert outcome(driver_too_old_for_cuda_toolkit, facts(drv, tool, probed=("compilers", "runtimes"))) == [expect]


def test_drv002_no_toolkit_or_no_driver():
    # the Debian CPU machine: nvcc 13.0 but no NVIDIA driver -> skipped
    assert outcome(driver_too_old_for_cuda_toolkit, facts(nvcc("13.0"), probed=("drivers",))) == [SKIPPED]
    assert outcome(driver_too_old_for_cuda_toolkit, facts(user("580.159.04", "13.0"), probed=("compilers", "runtimes"))) == [SKIPPED]
    err = ProbeError("nvidia-nvcc", ("compilers",), "`nvcc --version` timed out", "timeout")
    assert outcome(driver_too_old_for_cuda_toolkit, facts(user("580.159.04", "13.0"), errors=[err])) == [UNKNOWN]


# ---------------------------------------------------------------------------------------------------
# EXT003 nvcc vs the framework's CUDA

@pytest.mark.parametrize("tool,build,expect", [
    (nvcc("13.0", "13.0.88"), "13.0", PASSED),
    (nvcc("12.6"), "12.4", FAILED_WARN),
    (nvcc("11.8"), "12.4", FAILED_ERR),
    (nvcc("13.0", "13.0.88"), "12.8", FAILED_ERR),
])
def test_ext003(tool, build, expect):
    assert outcome(nvcc_cuda_differs_from_framework, facts(tool, torch(build))) == [expect]


def test_ext003_skips():
    cpu = row("framework_builds", "t", name="torch", version="2.13.0+cpu", cuda="", variant="cpu")
    assert outcome(nvcc_cuda_differs_from_framework, facts(nvcc("13.0"), cpu)) == [SKIPPED]
    assert outcome(nvcc_cuda_differs_from_framework, facts(torch("13.0"), probed=("compilers",))) == [SKIPPED]
    [f] = run(nvcc_cuda_differs_from_framework, facts(nvcc("11.8"), torch("12.4")))
    assert f.cause == "extension-abi" and f.component == "extension" and "/usr/local/cuda/bin/nvcc" in f.title


# ---------------------------------------------------------------------------------------------------
# DRV004 kernel module vs user-space driver

def test_drv004_fires_on_version_difference():
    [f] = run(nvidia_kernel_module_differs_from_user_space_driver, facts(kmod("550.54.14"), user("550.90.07", "12.4")))
    assert f.outcome is Outcome.FAILED and "550.54.14" in f.title and "550.90.07" in f.title
    assert all(x.applicability.value == "display-only" for x in f.fixes)


def test_drv004_fires_on_nvidia_smi_mismatch_message():
    err = ProbeError("nvidia-driver", ("drivers", "gpu_devices"),
                     "NVML: RM has detected an NVML/RM version mismatch.; Failed to initialize NVML: Driver/library "
                     "version mismatch NVML library version: 580.95")
    [f] = run(nvidia_kernel_module_differs_from_user_space_driver, facts(kmod("580.82.07"), errors=[err]))
    assert f.outcome is Outcome.FAILED
    assert "580.82.07" in f.title and "580.95" in f.title


def test_drv004_pasted_nvidia_smi_error():
    # a pasted report: the parser records nvidia-smi's message as a failure of the drivers table
    err = ProbeError("pasted", ("drivers", "gpu_devices"),
                     "Failed to initialize NVML: Driver/library version mismatch NVML library version: 580.95")
    [f] = run(nvidia_kernel_module_differs_from_user_space_driver, facts(kmod("580.82.07"), errors=[err]))
    assert f.outcome is Outcome.FAILED and "580.95" in f.title


def test_drv004_passes_and_skips():
    assert outcome(nvidia_kernel_module_differs_from_user_space_driver, facts(kmod("580.159.04"), user("580.159.04", "13.0"))) == [PASSED]
    assert outcome(nvidia_kernel_module_differs_from_user_space_driver, facts(probed=("drivers",))) == [SKIPPED]
    assert outcome(nvidia_kernel_module_differs_from_user_space_driver, facts(user("580.159.04", "13.0"))) == [SKIPPED]  # pasted nvidia-smi only
    err = ProbeError("nvidia-driver", ("drivers", "gpu_devices"), "Failed to initialize NVML: Unknown Error")
    assert outcome(nvidia_kernel_module_differs_from_user_space_driver, facts(kmod("580.159.04"), errors=[err])) == [UNKNOWN]


# ---------------------------------------------------------------------------------------------------
# DRV005 driver not responding

@pytest.mark.parametrize("message,fix_word", [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "modprobe"),
    ("Failed to initialize NVML: Unknown Error", "container"),
    ("NVML: NVML Shared Library Not Found; nvidia-smi: not installed", "--gpus"),
])
def test_drv005_fires(message, fix_word):
    err = ProbeError("nvidia-driver", ("drivers", "gpu_devices"), message)
    [f] = run(nvidia_driver_not_responding, facts(kmod("580.159.04"), errors=[err]))
    assert f.outcome is Outcome.FAILED and message in f.title
    # only the user-space side missing (a container without --gpus) is a warning; a broken driver an error
    assert f.severity is (Severity.WARNING if "not installed" in message else Severity.ERROR)
    assert any(fix_word in (x.text + (x.command or "")) for x in f.fixes)


def test_drv005_gpu_without_module():
    err = ProbeError("nvidia-kernel-module", ("drivers",),
                     "NVIDIA GPU on the PCI bus (0000:00:06.0) but no NVIDIA kernel module is loaded")
    [f] = run(nvidia_driver_not_responding, facts(errors=[err]))
    assert f.outcome is Outcome.FAILED and "modprobe" in f.fixes[0].command


def test_drv005_passes_skips_and_leaves_mismatch_to_drv004():
    assert outcome(nvidia_driver_not_responding, facts(kmod("580.159.04"), user("580.159.04", "13.0"))) == [PASSED]
    assert outcome(nvidia_driver_not_responding, facts(probed=("drivers",))) == [SKIPPED]
    err = ProbeError("nvidia-driver", ("drivers",), "Failed to initialize NVML: Driver/library version mismatch")
    assert outcome(nvidia_driver_not_responding, facts(kmod("580.82.07"), errors=[err])) == [SKIPPED]


# ---------------------------------------------------------------------------------------------------
# the real machines end to end (parsers -> checks)

def test_h200_capture_passes_every_nvidia_check():
    rows = (N.parse_proc_version(fixture_text(H200 + "proc-driver-nvidia-version.txt"), "proc")
            + N.parse_nvidia_smi(fixture_text(H200 + "nvidia-smi.txt"), "nvidia-smi")
            + N.parse_nvcc(fixture_text(H200 + "nvcc.txt"), "nvcc", "/usr/local/cuda/bin/nvcc")
            + [torch("13.0", "2.11.0+cu130")])
    found = run_checks(facts(*rows, probed=("runtimes",)), NVIDIA_CHECKS, KB.load())
    assert {x.code: x.outcome for x in found} == {c.code: Outcome.PASSED for c in NVIDIA_CHECKS}


def test_debian_cpu_capture_skips():
    rows = N.parse_nvcc(fixture_text(DEB + "nvcc.txt"), "nvcc", "/usr/local/bin/nvcc")
    rows += N.parse_proc_version(fixture_text(DEB + "proc-driver-nvidia-version.txt"), "proc")
    rows += N.parse_nvidia_smi(fixture_text(DEB + "nvidia-smi.txt"), "nvidia-smi")
    cpu = row("framework_builds", "t", name="torch", version="2.13.0+cpu", cuda="", variant="cpu")
    found = run_checks(facts(*rows, cpu, probed=("drivers", "gpu_devices", "runtimes")), NVIDIA_CHECKS, KB.load())
    assert {x.outcome for x in found} == {Outcome.SKIPPED}


# ---------------------------------------------------------------------------------------------------
# the knowledge base table

def _schema():
    return json.loads((resources.files("gpuvet.kb") / "schemas" / "cuda_toolkits.schema.json").read_text())


def test_cuda_toolkits_matches_schema():
    import jsonschema

    doc = yaml.safe_load((resources.files("gpuvet.kb") / "data" / "cuda_toolkits.yaml").read_text())
    jsonschema.Draft202012Validator(_schema(), format_checker=jsonschema.FormatChecker()).validate(doc)
    assert set(_schema()["properties"]["entries"]["items"]["required"]) == {"cuda", "min_driver_linux", "source"}
    with pytest.raises(jsonschema.ValidationError):
        bad = {"table": "cuda_toolkits", "entries": [{"cuda": "12.4", "min_driver_linux": "550.54.14"}]}
        jsonschema.Draft202012Validator(_schema()).validate(bad)


def test_cuda_toolkits_content():
    from packaging.version import Version

    entries = KB.load().table("cuda_toolkits")
    by = {e["cuda"]: e for e in entries}
    assert len(by) == len(entries)
    assert by["12.4"]["min_driver_linux"] == "550.54.14" and by["12.4.1"]["min_driver_linux"] == "550.54.15"
    assert by["13.0"]["min_driver_linux"] == "580.65.06"
    assert by["11.8"]["minor_compat_min_driver_linux"] == "450.80.02"
    # every release 11.0 .. 13.2 (GA) is there
    for mm in ["11.0", "11.1", "11.2", "11.3", "11.4", "11.5", "11.6", "11.7", "11.8", "12.0", "12.1", "12.2", "12.3",
               "12.4", "12.5", "12.6", "12.8", "12.9", "13.0", "13.1", "13.2"]:
        assert mm in by, mm
    # a newer release never needs an older driver
    ordered = sorted(entries, key=lambda e: Version(e["cuda"]))
    drivers = [Version(e["min_driver_linux"]) for e in ordered]
    assert drivers == sorted(drivers)
    assert all(e["source"].startswith("https://docs.nvidia.com/") for e in entries)


# ---------------------------------------------------------------------------------------------------
# builds that name only a CUDA major (jaxlib's cuda13 plugin, as the H200's gpuvet check shows)

def test_major_only_build_cuda():
    jax = row("framework_builds", "t", name="jaxlib", version="0.11.2", cuda="13", variant="cuda")
    assert outcome(driver_too_old_for_framework_cuda, facts(user("580.159.04", "13.0"), jax)) == [PASSED]
    assert outcome(driver_too_old_for_framework_cuda, facts(user("575.57.08", "12.9"), jax)) == [FAILED_ERR]
    assert outcome(nvcc_cuda_differs_from_framework, facts(nvcc("13.0", "13.0.88"), jax)) == [PASSED]
    assert outcome(nvcc_cuda_differs_from_framework, facts(nvcc("12.8"), jax)) == [FAILED_ERR]
    # a major-only build does not change how the next build is judged
    found = outcome(nvcc_cuda_differs_from_framework, facts(nvcc("12.6"), row("framework_builds", "t", name="jaxlib",
                                                                               version="0.5", cuda="12"), torch("12.4")))
    assert found == [FAILED_WARN]


def test_h200_gpuvet_check_json_capture():
    """`gpuvet check --format json` run on the real H200: the NVIDIA facts and the NVIDIA checks."""
    doc = json.loads(fixture_text("nvidia/h200-device/gpuvet-check.json"))
    fx = doc["facts"]
    assert {(d["component"], d["version"]) for d in fx["drivers"]} == {("user-space", "580.159.04"),
                                                                      ("kernel-module", "580.159.04")}
    assert [d.get("cuda_version") for d in fx["drivers"] if d["component"] == "user-space"] == ["13.0"]
    [gpu] = fx["gpu_devices"]
    assert (gpu["name"], gpu["arch"], gpu["memory_mib"], gpu["source"]) == ("NVIDIA H200", "sm_90", 143771, "NVML")
    assert [c["version"] for c in fx["compilers"] if c["name"] == "nvcc"] == ["13.0.88"]
    torch_row = next(b for b in fx["framework_builds"] if b["name"] == "torch")
    assert torch_row["cuda"] == "13.0" and "sm_90" in torch_row["targets"]
    got = {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] in {c.code for c in NVIDIA_CHECKS}}
    assert got == {c.code: "passed" for c in NVIDIA_CHECKS}
    assert [r["version"] for r in fx["runtimes"] if r["name"] == "cuda-toolkit"] == ["13.0"]
    assert doc["probe_errors"] == []
    # and the same facts, re-read, pass the checks of this tree
    rows = [row(t, d.pop("source"), **d) for t in ("drivers", "gpu_devices", "compilers", "runtimes", "framework_builds")
            for d in (dict(x) for x in fx.get(t, []))]
    found = run_checks(facts(*rows, probed=("runtimes",)), NVIDIA_CHECKS, KB.load())
    assert {x.code: x.outcome for x in found} == {c.code: Outcome.PASSED for c in NVIDIA_CHECKS}


# ---------------------------------------------------------------------------------------------------
# EXT006 nvcc vs the GPU's architecture

def ngpu(name, cc=None, index=0):
    vals = {"vendor": "nvidia", "index": index, "name": name}
    if cc:
        vals.update(compute_capability=cc, arch="sm_" + cc.replace(".", ""))
    return row("gpu_devices", "nvidia-smi", **vals)


@pytest.mark.parametrize("tool,gpu,expect", [
    (nvcc("13.0", "13.0.88"), ngpu("NVIDIA H200", "9.0"), PASSED),
    (nvcc("13.0", "13.0.88"), ngpu("Tesla V100-SXM2-16GB", "7.0"), FAILED_ERR),
    (nvcc("13.1"), ngpu("NVIDIA GeForce GTX 1080", "6.1"), FAILED_ERR),
    (nvcc("13.0"), ngpu("NVIDIA T4", "7.5"), PASSED),
    (nvcc("13.0"), ngpu("NVIDIA RTX PRO 6000 Blackwell", "12.0"), PASSED),
    (nvcc("12.8"), ngpu("Tesla V100-SXM2-16GB", "7.0"), SKIPPED),   # no floor recorded for 12.x
])
def test_ext006(tool, gpu, expect):
    assert outcome(nvcc_cannot_target_gpu, facts(tool, gpu)) == [expect]


def test_ext006_skips_and_unknown():
    assert outcome(nvcc_cannot_target_gpu, facts(nvcc("13.0"), probed=("gpu_devices",))) == [SKIPPED]
    assert outcome(nvcc_cannot_target_gpu, facts(ngpu("NVIDIA H200", "9.0"), probed=("compilers",))) == [SKIPPED]
    # a GPU whose architecture nothing tells (no compute capability, name unknown to the KB)
    assert outcome(nvcc_cannot_target_gpu, facts(nvcc("13.0"), ngpu("Mystery GPU"))) == [UNKNOWN]
    [f] = run(nvcc_cannot_target_gpu, facts(nvcc("13.0"), ngpu("Tesla V100-SXM2-16GB", "7.0")))
    assert f.cause == "gpu-arch-unsupported" and "sm_70" in f.title
