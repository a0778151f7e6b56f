"""Pasted reports go through the same parsers as live probes (real captured outputs)."""
import pytest

from gpuvet.probes.pasted import parse_report
from conftest import fixture_text


def test_collect_env_h200():
    facts = parse_report(fixture_text("real/h200-cuda13/collect_env.txt"), "collect_env.txt")
    torch = facts.first("framework_builds", name="torch")
    assert torch["version"] == "2.11.0+cu130"
    assert torch["cuda"] == "13.0" and torch["hip"] == "" and torch["variant"] == "cuda"
    assert torch["channel"] == "stable" and torch["debug"] is False
    assert facts.first("drivers", vendor="nvidia")["version"] == "580.159.04"
    gpu = facts.first("gpu_devices")
    assert gpu["name"] == "NVIDIA H200" and gpu["vendor"] == "nvidia" and gpu["index"] == 0
    nvcc = facts.first("compilers", name="nvcc")
    assert nvcc["version"] == "13.0.88" and nvcc["cuda_version"] == "13.0"
    cudnn = {c["origin"]: c for c in facts.where("libraries", name="cudnn")}
    # collect_env's guess is the system copy; torch loads the pip wheel's through its RPATH
    assert cudnn["system"]["version"] == "9.14.0" and cudnn["system"]["selected"] is False
    assert cudnn["pip"]["version"] == "9.19.0.56" and cudnn["pip"]["selected"] is True
    pk = {r["name"]: r["version"] for r in facts.table("packages")}
    assert pk["torch"] == "2.11.0" and pk["nvidia-cudnn-cu13"] == "9.19.0.56" and pk["triton"] == "3.6.0"
    osr = facts.first("os_info")
    assert osr["glibc"] == "2.39" and osr["python"] == "3.12.3" and osr["name"] == "Ubuntu 24.04.3 LTS"


def test_collect_env_cpu_build():
    facts = parse_report(fixture_text("real/debian12-cpu-rocm52/collect_env-torch2.13-cpu.txt"))
    torch = facts.first("framework_builds", name="torch")
    assert torch["version"] == "2.13.0+cpu" and torch["variant"] == "cpu" and torch["cuda"] == ""
    assert facts.table("gpu_devices") == []
    assert facts.table("drivers") == []
    assert facts.first("compilers", name="nvcc")["cuda_version"] == "13.0"


def test_rocm_collect_env_snippet_and_pip_freeze():
    text = """PyTorch version: 2.2.0.dev20231010+rocm5.7
Is debug build: False
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: 5.7.31921-d1770ee1b

OS: Ubuntu 22.04.3 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Libc version: glibc-2.35

Python version: 3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: Could not collect
GPU models and configuration: AMD Instinct MI210 (gfx90a:sramecc+:xnack-)
Nvidia driver version: Could not collect
cuDNN version: Could not collect
HIP runtime version: 5.7.31921
MIOpen runtime version: 2.20.0

Versions of relevant libraries:
[pip3] pytorch-triton-rocm==2.1.0+dafe145982
[pip3] torch==2.2.0.dev20231010+rocm5.7
[conda] Could not collect

xformers==0.0.22
"""
    facts = parse_report(text)
    t = facts.first("framework_builds")
    assert t["channel"] == "nightly" and t["variant"] == "rocm" and t["hip"].startswith("5.7.31921")
    g = facts.first("gpu_devices")
    assert g["vendor"] == "amd" and g["arch"] == "gfx90a" and g["name"] == "AMD Instinct MI210"
    assert facts.first("libraries", name="miopen")["version"] == "2.20.0"
    names = {r["name"] for r in facts.table("packages")}
    assert {"pytorch-triton-rocm", "torch", "xformers"} <= names
    assert facts.table("drivers") == []
    assert [r["name"] for r in facts.table("compilers")] == ["gcc"]


def test_pip_list_format():
    text = "Package    Version\n---------- ---------\ntorch      2.1.2+cu121\ntorchvision 0.16.2\n\nsome log line\n"
    facts = parse_report(text)
    assert {(r["name"], r["version"]) for r in facts.table("packages")} == {("torch", "2.1.2+cu121"), ("torchvision", "0.16.2")}


def test_nothing_recognised():
    with pytest.raises(ValueError, match="no recognisable tool output"):
        parse_report("hello\nworld\n", "x.txt")


def test_truncated_collect_env_keeps_what_it_has():
    text = fixture_text("real/h200-cuda13/collect_env.txt")
    cut = text[: text.index("Nvidia driver version")]
    facts = parse_report(cut)
    assert facts.first("framework_builds")["version"] == "2.11.0+cu130"
    assert facts.table("drivers") == []


def test_pasted_tool_failures_become_probe_errors():
    facts = parse_report("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n")
    assert facts.status("drivers") == "error"
    assert "mismatch" in facts.table_errors("drivers")[0].message


ROCK_NOT_LOADED = "real/debian12-cpu-rocm52/rocminfo.txt"  # real rocminfo: "ROCk module is NOT loaded"
LSPCI_VEGA = "amd/pasted/lspci-grep-vga-vega10.txt"  # real `lspci | grep -i vga` of a Vega 10 (issue paste)


def test_lspci_lines_give_amd_gpus_and_nothing_else():
    from gpuvet.probes.kfd import parse_lspci

    rows = parse_lspci(fixture_text(LSPCI_VEGA), "<p>")
    assert [(r["vendor"], r["pci_bus"], r["name"]) for r in rows] == [("amd", "0b:00.0", "AMD Device 687f (PCI)")]
    nn = ("03:00.0 Display controller [0380]: Advanced Micro Devices, Inc. [AMD/ATI] Aldebaran/MI200 "
          "[Instinct MI210] [1002:740f] (rev 02)\n"
          "00:00.0 Host bridge [0600]: Advanced Micro Devices, Inc. [AMD] Starship/Matisse Root Complex [1022:1480]\n"
          "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n")
    rows = parse_lspci(nn, "<p>")
    assert len(rows) == 1 and "Instinct MI210" in rows[0]["name"] and rows[0]["pci_bus"] == "03:00.0"


@pytest.mark.parametrize("argv", [["check", "--from", "R", "--from", "L"], ["diagnose", "BOTH"]])
def test_rock_module_not_loaded_with_an_amd_gpu_in_lspci_is_a_failed_driver_finding(argv, tmp_path):
    import json

    from conftest import FIXTURES, run_cli

    both = tmp_path / "both.txt"
    both.write_text(fixture_text(ROCK_NOT_LOADED) + fixture_text(LSPCI_VEGA))
    sub = {"R": str(FIXTURES / ROCK_NOT_LOADED), "L": str(FIXTURES / LSPCI_VEGA), "BOTH": str(both)}
    r = run_cli([sub.get(a, a) for a in argv] + ["--format", "json"])
    assert r.code == 1, r.err
    doc = json.loads(r.out)
    if argv[0] == "check":
        drv = next(f for f in doc["findings"] if f["code"] == "DRV026")
        assert drv["outcome"] == "failed" and "amdgpu kernel module is not loaded" in drv["title"]
        assert doc["usable"]["state"] == "no"
    else:
        top = doc["diagnoses"][0]
        assert top["component"] == "driver" and "DRV026" in json.dumps(top)


def test_rock_module_not_loaded_alone_does_not_claim_a_gpu():
    import json

    from conftest import FIXTURES, run_cli

    r = run_cli(["check", "--from", str(FIXTURES / ROCK_NOT_LOADED), "--format", "json"])
    drv = next(f for f in json.loads(r.out)["findings"] if f["code"] == "DRV026")
    assert drv["outcome"] != "failed"
