"""Every captured real output that is a tool's text goes through the pasted-report parser and gives
the facts it really shows (the per-tool parsers have their own detailed tests)."""
import pytest

from conftest import REAL, fixture_text
from gpuvet.probes.pasted import parse_report


def facts_of(*names):
    text = "\n".join((REAL / n).read_text() for n in names)
    return parse_report(text, "+".join(names))


def test_h200_os_and_devices_listing():
    f = facts_of("h200-cuda13/os.txt")
    osr = f.first("os_info")
    assert osr["name"] == "Ubuntu 24.04.3 LTS" and osr["kernel"] == "6.18.44-fc-v657-gpu" and osr["arch"] == "x86_64"
    assert {r["path"]: r["exists"] for r in f.table("device_nodes")} == {"/dev/dri": False}


def test_debian_dev_nodes_missing():
    f = facts_of("debian12-cpu-rocm52/dev-nodes.txt")
    assert {r["path"] for r in f.table("device_nodes") if r["exists"] is False} == {"/dev/kfd", "/dev/dri"}


def test_debian_library_listing_gives_hip_runtime():
    f = facts_of("debian12-cpu-rocm52/gpu-libs-ls.txt")
    assert f.first("runtimes", name="hip-runtime")["version"] == "5.2.21153"
    assert f.first("libraries", name="amdhip64")["version"] == "5.2.21153"


def test_h200_dist_info_listing():
    f = facts_of("h200-cuda13/torch_dist.txt")
    pk = {r["name"]: r["version"] for r in f.table("packages")}
    assert pk["nvidia-cudnn-cu13"] == "9.19.0.56" and pk["torch"] == "2.11.0" and pk["triton"] == "3.6.0"


def test_h200_whole_bug_report_concatenated():
    """collect_env + nvidia-smi + nvcc + the procfs version, pasted one after another."""
    f = facts_of("h200-cuda13/collect_env.txt", "h200-cuda13/nvidia-smi.txt", "h200-cuda13/nvcc.txt",
                 "h200-cuda13/proc-driver-nvidia-version.txt")
    drv = {r["component"]: r["version"] for r in f.table("drivers")}
    assert drv == {"user-space": "580.159.04", "kernel-module": "580.159.04"}
    assert f.first("drivers", component="user-space")["cuda_version"] == "13.0"
    assert len(f.table("gpu_devices")) == 1 and f.first("gpu_devices")["memory_mib"] == 143771
    assert f.first("framework_builds")["cuda"] == "13.0"


def test_debian_whole_report_concatenated():
    f = facts_of("debian12-cpu-rocm52/collect_env-torch2.13-cpu.txt", "debian12-cpu-rocm52/rocminfo.txt",
                 "debian12-cpu-rocm52/hipconfig-full.txt", "debian12-cpu-rocm52/nvidia-smi.txt")
    assert f.first("framework_builds")["variant"] == "cpu"
    assert f.first("compilers", name="hipconfig")["platform"] == "nvidia"
    assert f.status("gpu_devices") == "error"  # rocminfo failed: GPUs unknown, not "none"
    assert "ROCk module is NOT loaded" in f.table_errors("gpu_devices")[0].message


@pytest.mark.parametrize("name", sorted(p.relative_to(REAL).as_posix() for p in REAL.glob("*/*.txt")))
def test_every_fixture_parses_without_error(name):
    text = fixture_text(f"real/{name}")
    try:
        f = parse_report(text, name)
    except ValueError:
        return  # nothing a tool printed that we read (e.g. `nvidia-smi: command not found`): refused cleanly
    assert not [e for e in f.errors if e.probe.startswith("pasted.parse")], f.errors
