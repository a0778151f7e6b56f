"""NVIDIA probes: the pure parsers on real captured outputs, the live probes through FakeSystem
(missing tools, failing and hanging nvidia-smi, NVML injected or failing), and the real nvcc here."""
from __future__ import annotations

import ast
import os
import shutil

import pytest

from gpuvet.probes import nvidia as N
from gpuvet.probes.base import ProbeFailed, run_probes
from gpuvet.probes.system import CommandResult, System
from fakes import FakeSystem

from conftest import fixture_text

H200 = "real/h200-cuda13/"
DEB = "real/debian12-cpu-rocm52/"
DEV = "nvidia/h200-device/"
QUERY = " ".join(N.QUERY_ARGV)


def vals(rows, table=None):
    return [dict(r.values) for r in rows if table is None or r.table == table]


# ---------------------------------------------------------------------------------------------------
# parsers on real outputs

def test_proc_version_h200_open_module():
    rows = N.parse_proc_version(fixture_text(H200 + "proc-driver-nvidia-version.txt"), "proc")
    assert vals(rows) == [{"vendor": "nvidia", "component": "kernel-module", "version": "580.159.04", "flavor": "open"}]
    assert rows[0].source == "proc"


def test_proc_version_device_capture_and_proprietary_line():
    assert vals(N.parse_proc_version(fixture_text(DEV + "proc-driver-nvidia-version.txt"), "p"))[0]["version"] == "580.159.04"
    # the proprietary module's banner (format as the driver prints it)
    line = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
    assert vals(N.parse_proc_version(line, "p")) == [
        {"vendor": "nvidia", "component": "kernel-module", "version": "535.129.03", "flavor": "proprietary"}]


def test_proc_version_missing_file_gives_nothing():
    assert N.parse_proc_version(fixture_text(DEB + "proc-driver-nvidia-version.txt"), "p") == []
    assert N.parse_proc_version("", "p") == []


def test_nvidia_smi_table_h200():
    rows = N.parse_nvidia_smi(fixture_text(H200 + "nvidia-smi.txt"), "nvidia-smi")
    assert vals(rows, "drivers") == [{"vendor": "nvidia", "component": "user-space", "version": "580.159.04",
                                      "cuda_version": "13.0"}]
    assert vals(rows, "gpu_devices") == [{"vendor": "nvidia", "index": 0, "name": "NVIDIA H200", "memory_mib": 143771,
                                          "pci_bus": "00000000:00:06.0"}]


def test_nvidia_smi_q_h200():
    rows = N.parse_nvidia_smi(fixture_text(H200 + "nvidia-smi-q.txt"), "nvidia-smi -q")
    assert vals(rows, "drivers") == [{"vendor": "nvidia", "component": "user-space", "version": "580.159.04",
                                      "cuda_version": "13.0"}]
    gpus = vals(rows, "gpu_devices")
    assert gpus == [{"vendor": "nvidia", "index": 0, "name": "NVIDIA H200", "memory_mib": 143771,
                     "pci_bus": "00000000:00:06.0"}]


@pytest.mark.parametrize("name", ["smi-query-noheader.txt", "smi-query-header.txt"])
def test_nvidia_smi_csv_device_captures(name):
    rows = N.parse_nvidia_smi(fixture_text(DEV + name), QUERY)
    assert vals(rows, "drivers") == [{"vendor": "nvidia", "component": "user-space", "version": "580.159.04"}]
    assert vals(rows, "gpu_devices") == [{"vendor": "nvidia", "index": 0, "name": "NVIDIA H200", "memory_mib": 143771,
                                          "pci_bus": "00000000:00:06.0", "compute_capability": "9.0", "arch": "sm_90"}]


def test_nvidia_smi_csv_nounits_and_reordered_header():
    text = "name, pci.bus_id, memory.total [MiB], compute_cap, index, driver_version\nNVIDIA H200, 00000000:00:06.0, 143771, 9.0, 3, 580.159.04\n"
    gpus = vals(N.parse_nvidia_smi(text, "x"), "gpu_devices")
    assert gpus[0]["index"] == 3 and gpus[0]["memory_mib"] == 143771 and gpus[0]["arch"] == "sm_90"


def test_nvidia_smi_missing_on_debian():
    text = fixture_text(DEB + "nvidia-smi.txt")
    assert N.parse_nvidia_smi(text, "x") == []
    assert "nvidia-smi: command not found" in N.nvidia_smi_error(text)


@pytest.mark.parametrize("text,expect", [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n", "couldn't communicate with the NVIDIA driver"),
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.95\n",
     "Failed to initialize NVML: Driver/library version mismatch NVML library version: 580.95"),
    ("Failed to initialize NVML: Unknown Error\n", "Failed to initialize NVML: Unknown Error"),
    ("No devices were found\n", "No devices were found"),
])
def test_nvidia_smi_error_messages(text, expect):
    assert expect in N.nvidia_smi_error(text)
    assert N.parse_nvidia_smi(text, "x") == []


def test_nvidia_smi_error_none_on_good_output():
    assert N.nvidia_smi_error(fixture_text(H200 + "nvidia-smi.txt")) is None
    assert N.nvidia_smi_error(fixture_text(H200 + "nvidia-smi-q.txt")) is None


@pytest.mark.parametrize("rel", [H200 + "nvcc.txt", DEB + "nvcc.txt", DEB + "hipcc-version.txt"])
def test_nvcc_real(rel):
    rows = N.parse_nvcc(fixture_text(rel), "nvcc --version", "/usr/local/cuda/bin/nvcc")
    assert vals(rows) == [{"name": "nvcc", "version": "13.0.88", "cuda_version": "13.0", "platform": "nvidia",
                           "path": "/usr/local/cuda/bin/nvcc"}]


def test_nvcc_garbage():
    assert N.parse_nvcc("bash: nvcc: command not found", "x") == []


def test_cuda_version_json_and_txt():
    js = '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}'
    assert vals(N.parse_cuda_version_json(js, "v", "/usr/local/cuda/version.json")) == [
        {"vendor": "nvidia", "name": "cuda-toolkit", "version": "12.4.1", "path": "/usr/local/cuda/version.json",
         "origin": "system"}]
    assert vals(N.parse_cuda_version_json("CUDA Version 11.8.89\n", "v", "/usr/local/cuda/version.txt"))[0]["version"] == "11.8.89"
    assert N.parse_cuda_version_json("{not json", "v", "p") == []
    assert N.parse_cuda_version_json('{"cuda": {}}', "v", "p") == []


# ---------------------------------------------------------------------------------------------------
# NVML answer -> rows (the H200's real answers)

def _captured_nvml() -> dict:
    for line in fixture_text(DEV + "live-probe.txt").splitlines():
        if line.startswith("nvml_query "):
            return ast.literal_eval(line.split(" ", 2)[2])
    raise AssertionError("no nvml_query line in the capture")


def test_nvml_rows_from_h200_capture():
    info = _captured_nvml()
    rows = N.nvml_rows(info)
    assert vals(rows, "drivers") == [{"vendor": "nvidia", "component": "user-space", "version": "580.159.04",
                                      "cuda_version": "13.0"}]
    assert vals(rows, "gpu_devices") == [{"vendor": "nvidia", "index": 0, "name": "NVIDIA H200", "memory_mib": 143771,
                                          "pci_bus": "00000000:00:06.0", "compute_capability": "9.0", "arch": "sm_90"}]


def test_nvml_rows_from_h200_nvml_txt():
    # tests/fixtures/real/h200-cuda13/nvml.txt: "580.159.04 13000" then "NVIDIA H200 (9, 0)"
    first, second = fixture_text(H200 + "nvml.txt").splitlines()[:2]
    driver, cuda = first.split()
    name, cc = second.rsplit(" (", 1)
    info = {"driver": driver, "cuda": int(cuda),
            "devices": [{"index": 0, "name": name, "cc": tuple(int(x) for x in cc.rstrip(")").split(", "))}]}
    rows = N.nvml_rows(info)
    assert rows[0].values["cuda_version"] == "13.0"
    assert rows[1].values["arch"] == "sm_90" and rows[1].values["compute_capability"] == "9.0"


# ---------------------------------------------------------------------------------------------------
# live probes through FakeSystem

def h200_system(**kw) -> FakeSystem:
    cmds = {QUERY: fixture_text(DEV + "smi-query-noheader.txt").replace("exit=0\n", ""),
            "nvidia-smi": fixture_text(H200 + "nvidia-smi.txt")}
    cmds.update(kw.pop("commands", {}))
    files = {N.PROC_VERSION: fixture_text(H200 + "proc-driver-nvidia-version.txt"), N.NVIDIACTL: ""}
    files.update(kw.pop("files", {}))
    return FakeSystem(commands=cmds, files=files, **kw)


def test_probe_driver_via_nvidia_smi():
    rows = N.probe_driver(h200_system())
    assert vals(rows, "drivers") == [{"vendor": "nvidia", "component": "user-space", "version": "580.159.04",
                                      "cuda_version": "13.0"}]
    assert vals(rows, "gpu_devices")[0]["arch"] == "sm_90"


def test_probe_driver_never_touches_real_nvml_off_the_real_root(monkeypatch, tmp_path):
    import gpuvet.probes.system as S

    def boom():
        raise AssertionError("real NVML called")
    monkeypatch.setattr(S, "nvml_query", boom)
    assert N.probe_driver(h200_system())  # nvidia-smi path, NVML untouched
    # a real System over another root (captured files) never asks the machine's NVML either
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text(fixture_text(H200 + "proc-driver-nvidia-version.txt"))
    assert System(environ={"PATH": ""}, root=str(tmp_path)).nvml() is None
    with pytest.raises(ProbeFailed, match="nvidia-smi: not installed"):
        N.probe_driver(System(environ={"PATH": ""}, root=str(tmp_path)))


def test_probe_driver_prefers_nvml():
    sysm = h200_system(commands={QUERY: CommandResult((), None, error="timeout")}, nvml_answer=_captured_nvml())
    rows = N.probe_driver(sysm)
    assert {r.source for r in rows} == {"NVML"} and sysm.nvml_calls == 1
    assert vals(rows, "drivers")[0]["cuda_version"] == "13.0"
    assert vals(rows, "gpu_devices")[0]["arch"] == "sm_90"


def test_probe_driver_nvml_fails_falls_back_to_nvidia_smi():
    rows = N.probe_driver(h200_system(nvml_answer=RuntimeError("Uninitialized")))
    assert vals(rows, "drivers")[0]["version"] == "580.159.04"
    assert "nvidia-smi" in rows[0].source


def test_probe_driver_nvml_and_nvidia_smi_failing_names_both():
    t = CommandResult((), None, error="timeout")
    sysm = h200_system(commands={QUERY: t, "nvidia-smi": t}, nvml_answer=RuntimeError("Driver Not Loaded"))
    with pytest.raises(ProbeFailed) as exc:
        N.probe_driver(sysm)
    assert "NVML: Driver Not Loaded" in str(exc.value) and exc.value.kind == "timeout"


def test_probe_driver_nvml_without_binding_or_driver_version():
    no_binding = h200_system(nvml_answer=ImportError("No module named 'pynvml'"))
    assert vals(N.probe_driver(no_binding), "drivers")[0]["version"] == "580.159.04"  # nvidia-smi answers
    t = CommandResult((), None, error="missing")
    empty = h200_system(commands={QUERY: t, "nvidia-smi": t}, nvml_answer={"driver": None, "devices": []},
                        executables={"nvidia-smi": "/usr/bin/nvidia-smi"})
    with pytest.raises(ProbeFailed, match="NVML returned no driver version"):
        N.probe_driver(empty)


def test_probe_driver_asks_nvml_only_with_a_kernel_module():
    sysm = FakeSystem(nvml_answer=_captured_nvml())  # no /proc/driver/nvidia, no /dev/nvidiactl
    assert N.probe_driver(sysm) == [] and getattr(sysm, "nvml_calls", 0) == 0


def test_probe_driver_old_nvidia_smi_without_compute_cap_uses_plain_report():
    bad = CommandResult((), 2, 'Field "compute_cap" is not a valid field to query.\n', "")
    rows = N.probe_driver(h200_system(commands={QUERY: bad}))
    assert vals(rows, "drivers")[0]["cuda_version"] == "13.0"
    assert vals(rows, "gpu_devices")[0]["name"] == "NVIDIA H200"
    assert rows[0].source == "nvidia-smi"


def test_probe_driver_no_nvidia_at_all_is_empty():
    assert N.probe_driver(FakeSystem()) == []
    assert N.probe_driver(FakeSystem(nvml_answer=RuntimeError("NVML Shared Library Not Found"))) == []


@pytest.mark.parametrize("message", [
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
    "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.95\n",
])
def test_probe_driver_failing_nvidia_smi_raises_with_its_message(message):
    res = CommandResult((), 9 if "communicate" in message else 18, message, "")
    sysm = h200_system(commands={QUERY: res, "nvidia-smi": res})
    with pytest.raises(ProbeFailed) as exc:
        N.probe_driver(sysm)
    assert message.splitlines()[0].split(".")[0] in str(exc.value)


def test_probe_driver_timeout_is_a_timeout():
    t = CommandResult((), None, error="timeout")
    with pytest.raises(ProbeFailed) as exc:
        N.probe_driver(h200_system(commands={QUERY: t, "nvidia-smi": t}))
    assert exc.value.kind == "timeout"
    assert "timed out" in str(exc.value)


def test_probe_driver_module_without_tools_fails():
    sysm = FakeSystem(files={N.PROC_VERSION: fixture_text(H200 + "proc-driver-nvidia-version.txt")})
    with pytest.raises(ProbeFailed, match="nvidia-smi: not installed"):
        N.probe_driver(sysm)


def test_probe_kernel_module_proc_sys_and_pci():
    assert vals(N.probe_kernel_module(h200_system()))[0]["flavor"] == "open"
    sysm = FakeSystem(files={N.SYS_MODULE_VERSION: fixture_text(DEV + "sys-module-nvidia-version.txt")})
    assert vals(N.probe_kernel_module(sysm)) == [{"vendor": "nvidia", "component": "kernel-module", "version": "580.159.04"}]
    assert N.probe_kernel_module(FakeSystem()) == []
    # the H200's PCI function (vendor 0x10de, class 0x030200) with no module loaded
    pci = {"/sys/bus/pci/devices/0000:00:06.0/vendor": "0x10de\n", "/sys/bus/pci/devices/0000:00:06.0/class": "0x030200\n",
           "/sys/bus/pci/devices/0000:00:01.0/vendor": "0x8086\n", "/sys/bus/pci/devices/0000:00:01.0/class": "0x060000\n"}
    with pytest.raises(ProbeFailed, match="0000:00:06.0"):
        N.probe_kernel_module(FakeSystem(files=pci))


def test_probe_nvcc_path_cuda_home_and_default():
    out = fixture_text(H200 + "nvcc.txt")
    s = FakeSystem(commands={"nvcc --version": out})
    assert vals(N.probe_nvcc(s))[0]["path"] == "/usr/bin/nvcc"
    s = FakeSystem(commands={"/opt/cuda-13/bin/nvcc --version": out, "nvcc --version": out},
                   files={"/opt/cuda-13/bin/nvcc": ""}, env={"CUDA_HOME": "/opt/cuda-13"})
    assert vals(N.probe_nvcc(s))[0]["path"] == "/opt/cuda-13/bin/nvcc"
    s = FakeSystem(commands={"/usr/local/cuda/bin/nvcc --version": out}, files={"/usr/local/cuda/bin/nvcc": ""},
                   executables={})
    s.which = lambda name: None  # not on PATH
    assert vals(N.probe_nvcc(s))[0]["cuda_version"] == "13.0"
    assert N.probe_nvcc(FakeSystem()) == []


def test_probe_nvcc_failing():
    s = FakeSystem(commands={"nvcc --version": CommandResult((), None, error="timeout")})
    with pytest.raises(ProbeFailed) as exc:
        N.probe_nvcc(s)
    assert exc.value.kind == "timeout"
    s = FakeSystem(commands={"nvcc --version": "something else\n"})
    with pytest.raises(ProbeFailed, match="no CUDA release"):
        N.probe_nvcc(s)


def test_probe_toolkit_version_json_under_cuda_home():
    js = '{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}'
    s = FakeSystem(files={"/opt/cuda/version.json": js, "/usr/local/cuda/version.txt": "CUDA Version 11.8.89\n"},
                   env={"CUDA_HOME": "/opt/cuda"})
    assert [r.values["version"] for r in N.probe_toolkit(s)] == ["12.8.1", "11.8.89"]
    assert N.probe_toolkit(FakeSystem()) == []


def test_probe_toolkit_header_fallback():
    # CUDA 13 installs (the H200's, this machine's) have no version.json: the runtime header says 13.0
    hdr = "#if !defined(__CUDA_RUNTIME_API_H__)\n#define __CUDA_RUNTIME_API_H__\n#define CUDART_VERSION  12080\n"
    s = FakeSystem(files={"/usr/local/cuda/include/cuda_runtime_api.h": hdr})
    assert vals(N.probe_toolkit(s)) == [{"vendor": "nvidia", "name": "cuda-toolkit", "version": "12.8",
                                         "path": "/usr/local/cuda/include/cuda_runtime_api.h", "origin": "system"}]
    assert N.parse_cudart_header("#define CUDART_VERSION_MAJOR 1\n", "x", "p") == []


def test_all_probes_on_the_debian_cpu_machine():
    s = FakeSystem(commands={"nvcc --version": fixture_text(DEB + "nvcc.txt"),
                             "nvidia-smi": CommandResult((), None, error="missing")})
    facts = run_probes(s, N.PROBES, deadline=3)
    assert facts.status("drivers") == "empty"
    assert facts.status("gpu_devices") == "empty"
    assert facts.first("compilers", name="nvcc").values["version"] == "13.0.88"
    assert not facts.errors


def test_all_probes_on_the_h200():
    s = h200_system(commands={"nvcc --version": fixture_text(H200 + "nvcc.txt")})
    facts = run_probes(s, N.PROBES, deadline=3)
    assert facts.first("drivers", component="kernel-module").values["version"] == "580.159.04"
    assert facts.first("drivers", component="user-space").values["cuda_version"] == "13.0"
    assert facts.first("gpu_devices").values["memory_mib"] == 143771
    assert not facts.errors


# ---------------------------------------------------------------------------------------------------
# the real tools of this machine

@pytest.mark.integration
def test_real_nvcc_here():
    if not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")):
        pytest.skip("no nvcc on this machine")
    rows = N.probe_nvcc(System())
    assert rows and rows[0].values["name"] == "nvcc"
    assert rows[0].values["cuda_version"].split(".")[0].isdigit()
    if shutil.which("nvcc") == "/usr/local/bin/nvcc":  # the CPU machines here carry CUDA 13.0's nvcc
        assert rows[0].values["cuda_version"] == "13.0"
        assert rows[0].values["path"] == "/usr/local/bin/nvcc"


@pytest.mark.integration
def test_real_toolkit_here():
    if not os.path.exists("/usr/local/cuda/include/cuda_runtime_api.h") and not os.path.exists("/usr/local/cuda/version.json"):
        pytest.skip("no CUDA toolkit at /usr/local/cuda")
    rows = N.probe_toolkit(System(environ={}))
    assert rows and rows[0].values["name"] == "cuda-toolkit"
    assert rows[0].values["version"].split(".")[0].isdigit()


@pytest.mark.integration
def test_real_machine_without_nvidia_driver_is_empty():
    if os.path.exists(N.PROC_VERSION) or os.path.exists(N.NVIDIACTL) or shutil.which("nvidia-smi"):
        pytest.skip("this machine has an NVIDIA driver")
    assert N.probe_driver(System()) == []
