"""AMD probes: parsers on real captured outputs (Debian 12's ROCm 5.2 packages on a machine without
an AMD GPU, public rocminfo / hipconfig / rocm-smi / amd-smi captures), live probes on a FakeSystem."""
from __future__ import annotations

import pytest
from conftest import fixture_text
from packaging.version import Version

from gpuvet.model.arch import gfx_from_override
from gpuvet.probes.amd_common import gfx_from_target_version
from gpuvet.probes.base import ProbeFailed, run_probes
from gpuvet.probes.dpkg import (
    amdgpu_dkms_version,
    dpkg_rows,
    parse_dpkg,
    parse_dpkg_list,
    probe_amdgpu_dkms,
    upstream_version,
)
from gpuvet.probes.hip import (
    hip_version,
    parse_hipcc_version,
    parse_hipconfig,
    probe_rocm_install,
)
from gpuvet.probes.kfd import parse_rock_module, probe_kernel_driver
from gpuvet.probes.miopen import (
    miopen_version_from_soname,
    parse_miopen_version_h,
    probe_miopen_caches,
)
from gpuvet.probes.registry import group_probes
from gpuvet.probes.rocm_smi import parse_amd_smi, parse_rocm_smi, probe_smi
from gpuvet.probes.rocminfo import parse_rocminfo, probe_rocminfo, rocminfo_error
from gpuvet.probes.system import CommandResult
from fakes import FakeSystem

AMD_PROBES = group_probes("amd")  # every ROCm-stack probe module

DEB = "real/debian12-cpu-rocm52/"


def t(rows, table):
    return [dict(r.values) for r in rows if r.table == table]


def strip_exit(text: str) -> tuple[str, int]:
    """The Debian captures end with an 'exit=N' line the capture script added."""
    lines = text.splitlines()
    code = 0
    if lines and lines[-1].startswith("exit="):
        code = int(lines[-1].split("=", 1)[1])
        lines = lines[:-1]
    return "\n".join(lines) + "\n", code


# -- Debian 12, ROCm 5.2.3, no AMD GPU, no ROCk module ------------------------------------------------
def test_rocminfo_without_rock_module_gives_no_rows_and_says_why():
    text, code = strip_exit(fixture_text(DEB + "rocminfo.txt"))
    assert code == 1
    assert parse_rocminfo(text, "rocminfo") == []
    assert rocminfo_error(text) == "ROCk module is NOT loaded, possibly no GPU devices"


def test_rocm_smi_without_driver_gives_no_rows():
    text, _ = strip_exit(fixture_text(DEB + "rocm-smi.txt"))
    assert parse_rocm_smi(text, "rocm-smi") == []
    assert parse_amd_smi(text, "rocm-smi") == []


def test_hipconfig_full_on_debian_resolves_to_nvidia():
    rows = parse_hipconfig(fixture_text(DEB + "hipconfig-full.txt"), "hipconfig --full")
    assert t(rows, "compilers") == [{"name": "hipconfig", "version": "5.2.21153-0", "platform": "nvidia",
                                     "cuda_version": "13.0"}]
    assert t(rows, "runtimes") == []  # ROCM_PATH /usr names no release
    assert hip_version(fixture_text(DEB + "hipconfig-full.txt")) == Version("5.2.21153")


def test_hipconfig_version_alone():
    text = fixture_text(DEB + "hipconfig-version.txt")
    assert text == "5.2.21153-0"  # no newline: hipconfig --version prints none
    rows = parse_hipconfig(text, "hipconfig --version")
    assert t(rows, "compilers") == [{"name": "hipconfig", "version": "5.2.21153-0", "platform": None,
                                     "cuda_version": None}]
    assert hip_version(text) == Version("5.2.21153")


def test_hipcc_version_prints_nvccs_banner():
    rows = parse_hipcc_version(fixture_text(DEB + "hipcc-version.txt"), "hipcc --version")
    assert t(rows, "compilers") == [{"name": "hipcc", "version": "5.2.21153-0", "platform": "nvidia",
                                     "cuda_version": "13.0"}]


def test_dpkg_list_of_debian_rocm_packages():
    pkgs = parse_dpkg_list(fixture_text(DEB + "dpkg-gpu-packages.txt"))
    assert pkgs["libamdhip64-5"] == "5.2.3-8" and pkgs["hipcc"] == "5.2.3-8" and pkgs["rocminfo"] == "5.2.3-2"
    assert "libdrm-amdgpu1" not in pkgs
    rows = dpkg_rows(pkgs, "dpkg")
    assert t(rows, "runtimes") == [{"vendor": "amd", "name": "rocm", "version": "5.2.3", "path": "/usr",
                                    "origin": "system"}]


# -- public captures ---------------------------------------------------------------------------------
def test_rocminfo_mi210():
    rows = parse_rocminfo(fixture_text("amd/rocminfo-4xmi210-rocm624.txt"), "rocminfo")
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module", "version": "6.10.5",
                                   "flavor": "dkms"}]
    assert t(rows, "runtimes") == [{"vendor": "amd", "name": "hsa-runtime", "version": "1.14", "origin": "system"}]
    gpus = t(rows, "gpu_devices")
    assert [(g["index"], g["name"], g["arch"]) for g in gpus] == [(0, "AMD Instinct MI210", "gfx90a"),
                                                                 (1, "AMD Instinct MI210", "gfx90a")]
    assert gpus[0]["memory_mib"] == 67092480 // 1024  # 64 GiB HBM2e, the coarse-grained pool
    assert gpus[0]["pci_bus"] == "e3:00.0"  # BDFID 58112


def test_rocminfo_mi300x_with_elided_banners():
    rows = parse_rocminfo(fixture_text("amd/rocminfo-mi300x.txt"), "rocminfo")
    gpus = t(rows, "gpu_devices")
    assert [(g["name"], g["arch"]) for g in gpus] == [("AMD Instinct MI300X", "gfx942")]
    assert gpus[0]["memory_mib"] == 201310208 // 1024
    # "ROCk module is loaded" without a version: a driver row with no version
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module", "version": ""}]


def test_rocminfo_rx7900xtx():
    rows = parse_rocminfo(fixture_text("amd/rocminfo-rx7900xtx-rocm602.txt"), "rocminfo")
    gpus = t(rows, "gpu_devices")
    assert [(g["name"], g["arch"], g["pci_bus"]) for g in gpus] == [("Radeon RX 7900 XTX", "gfx1100", "03:00.0")]
    assert rocminfo_error(fixture_text("amd/rocminfo-rx7900xtx-rocm602.txt")) is None


def test_rock_module_line_alone():
    rows = parse_rock_module("ROCk module version 6.7.0 is loaded\n", "<pasted>")
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module", "version": "6.7.0", "flavor": "dkms"}]
    assert parse_rock_module("\x1b[31mROCk module is NOT loaded, possibly no GPU devices\x1b[0m", "x") == []


def test_hipconfig_rocm611_on_amd():
    text = fixture_text("amd/hipconfig-full-rocm611.txt")
    rows = parse_hipconfig(text, "<pasted>")
    assert t(rows, "compilers") == [{"name": "hipconfig", "version": "6.1.40092-038397aaa", "platform": "amd",
                                     "cuda_version": None}]
    assert t(rows, "runtimes") == [{"vendor": "amd", "name": "rocm", "version": "6.1.1", "path": "/opt/rocm-6.1.1",
                                    "origin": "pasted"}]
    assert hip_version(text) == Version("6.1.40092")
    assert parse_hipcc_version(text, "x") == []  # hipconfig's banner is not hipcc --version output


def test_rocm_smi_concise_8xmi300x():
    gpus = t(parse_rocm_smi(fixture_text("amd/rocm-smi-8xmi300x.txt"), "rocm-smi"), "gpu_devices")
    assert [g["index"] for g in gpus] == list(range(8))
    assert {g["name"] for g in gpus} == {"AMD Instinct MI300X"}


def test_rocm_smi_inbox_driver_and_gfx_version():
    rows = parse_rocm_smi(fixture_text("amd/rocm-smi-a-excerpt-gfx1103-rocm611.txt"), "rocm-smi -a")
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module",
                                   "version": "6.10.0-061000rc1-generic", "flavor": "inbox"}]
    gpus = t(rows, "gpu_devices")
    assert [(g["name"], g["arch"]) for g in gpus] == [("Phoenix1", "gfx1103")]  # 'GFX Version: gfx11003'


def test_amd_smi_version_and_rocm_smi_mi300a():
    text = fixture_text("amd/amd-smi-rocm-smi-mi300a-rocm633.txt")
    assert t(parse_amd_smi(text, "amd-smi"), "runtimes") == [
        {"vendor": "amd", "name": "rocm", "version": "6.3.3", "origin": "system"}]
    gpus = t(parse_rocm_smi(text, "rocm-smi"), "gpu_devices")
    assert [(g["index"], g["name"], g["memory_mib"]) for g in gpus] == [(0, "AMD Instinct MI300A", 100742320128 >> 20)]


@pytest.mark.parametrize("value,gfx", [(90010, "gfx90a"), (90402, "gfx942"), (90008, "gfx908"), (100300, "gfx1030"),
                                       (110001, "gfx1101"), (110501, "gfx1151"), (120001, "gfx1201"), (0, None),
                                       ("junk", None)])
def test_gfx_from_kfd_target_version(value, gfx):
    assert gfx_from_target_version(value) == gfx


@pytest.mark.parametrize("value,gfx", [("10.3.0", "gfx1030"), ("9.0.10", "gfx90a"), ("11.0.0", "gfx1100"),
                                       ("9.4.2", "gfx942"), ("gfx1030", None), ("10.3", None), ("", None)])
def test_gfx_from_override(value, gfx):
    assert gfx_from_override(value) == gfx


def test_amdgpu_dkms_package_versions():
    # package versions as printed in public threads: amdgpu-dkms 1:6.8.5.60200-2009582.24.04 (ROCm 6.2),
    # 1:6.10.5.60300-2084815.22.04 (ROCm 6.3), 1:6.16.13.30300100-2303411.24.04 (AMD GPU driver 30.30.1)
    assert amdgpu_dkms_version({"amdgpu-dkms": "1:6.8.5.60200-2009582.24.04"}) == ("6.8.5", "6.2.0")
    assert amdgpu_dkms_version({"amdgpu-dkms": "1:6.10.5.60300-2084815.22.04"}) == ("6.10.5", "6.3.0")
    assert amdgpu_dkms_version({"amdgpu-dkms": "1:6.16.13.30300100-2303411.24.04"}) == ("6.16.13", None)
    assert amdgpu_dkms_version({}) is None


def test_miopen_soname_and_header():
    assert miopen_version_from_soname("libMIOpen.so.1.0.60201") == "rocm-6.2.1"
    assert miopen_version_from_soname("libMIOpen.so") is None
    hdr = "#define MIOPEN_VERSION_MAJOR 3\n#define MIOPEN_VERSION_MINOR 1\n#define MIOPEN_VERSION_PATCH 0\n"
    assert parse_miopen_version_h(hdr) == "3.1.0"


# -- live probes on a FakeSystem ---------------------------------------------------------------------
# The sysfs trees below are constructed inputs in the kernel's file layout, not captures.
def kfd_files(nodes: dict[int, int]) -> dict[str, str]:
    base = "/sys/class/kfd/kfd/topology/nodes"
    files = {}
    for n, gtv in nodes.items():
        files[f"{base}/{n}/properties"] = f"cpu_cores_count 0\nsimd_count 416\ngfx_target_version {gtv}\nlocation_id 58112\ndomain 0\n"
        files[f"{base}/{n}/name"] = "" if gtv == 0 else "gfx90a\n"
    return files


def debian_system(**extra) -> FakeSystem:
    rocminfo, code = strip_exit(fixture_text(DEB + "rocminfo.txt"))
    return FakeSystem(
        commands={"rocminfo": CommandResult(("rocminfo",), code, rocminfo, ""),
                  "hipconfig --full": fixture_text(DEB + "hipconfig-full.txt"),
                  "hipcc --version": fixture_text(DEB + "hipcc-version.txt"),
                  **extra.pop("commands", {})},
        files={"/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153": b"\x7fELF",
               "/var/lib/dpkg/status": "Package: libamdhip64-5\nStatus: install ok installed\nVersion: 5.2.3-8\n\n"
                                       "Package: hipcc\nStatus: install ok installed\nVersion: 5.2.3-8\n",
               **extra.pop("files", {})},
        env={"HOME": "/home/user", **extra.pop("env", {})}, **extra)


def test_live_probes_on_debian_like_system():
    facts = run_probes(debian_system(), AMD_PROBES)
    rts = t(facts.rows, "runtimes")
    assert {"vendor": "amd", "name": "hip-runtime", "version": "5.2.21153",
            "path": "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153", "origin": "system"} in rts
    assert {"vendor": "amd", "name": "rocm", "version": "5.2.3", "path": "/usr", "origin": "system"} in rts
    comps = {c["name"]: c for c in t(facts.rows, "compilers")}
    assert comps["hipcc"]["platform"] == comps["hipconfig"]["platform"] == "nvidia"
    assert comps["hipcc"]["path"] == "/usr/bin/hipcc"
    errs = {e.probe: e for e in facts.errors}
    assert errs["amd-rocminfo"].message == "rocminfo: ROCk module is NOT loaded, possibly no GPU devices"
    assert not t(facts.rows, "gpu_devices") and facts.status("gpu_devices") == "error"
    assert errs["amd-rocminfo"].tables == ("gpu_devices",)
    assert facts.status("drivers") == "empty"  # rocminfo's failure says nothing about drivers


def _pci(vendor: str, cls: str) -> dict:
    return {"/sys/bus/pci/devices/0000:03:00.0/vendor": vendor + "\n",
            "/sys/bus/pci/devices/0000:03:00.0/class": cls + "\n",
            "/sys/bus/pci/devices/0000:03:00.0/device": "0x740f\n"}


def test_rocminfo_failure_without_amd_gpu_on_pci_is_no_gpu():
    facts = run_probes(debian_system(files=_pci("0x8086", "0x020000")), AMD_PROBES)
    assert "amd-rocminfo" not in {e.probe for e in facts.errors}
    assert facts.status("gpu_devices") == "empty"


def test_rocminfo_failure_with_amd_gpu_on_pci_is_an_error():
    facts = run_probes(debian_system(files=_pci("0x1002", "0x038000")), AMD_PROBES)
    assert {e.probe for e in facts.errors} >= {"amd-rocminfo"}
    assert [g["name"] for g in t(facts.rows, "gpu_devices")] == ["AMD GPU [1002:740f] (PCI)"]


def test_instinct_mi300_processing_accelerator_class_is_an_amd_gpu():
    """MI300X / MI325X sit on the bus as class 0x1200 ("Processing accelerators"), not display class 0x03."""
    facts = run_probes(debian_system(files={**_pci("0x1002", "0x120000"),
                                            "/sys/bus/pci/devices/0000:03:00.0/device": "0x74a1\n"}), AMD_PROBES)
    assert {e.probe for e in facts.errors} >= {"amd-rocminfo"}
    assert [g["name"] for g in t(facts.rows, "gpu_devices")] == ["AMD GPU [1002:74a1] (PCI)"]
    # an AMD PCI bridge (class 0x0604, vendor 1002 on MI300 boards) is not a GPU
    facts = run_probes(debian_system(files=_pci("0x1002", "0x060400")), AMD_PROBES)
    assert facts.status("gpu_devices") == "empty"


def test_rocminfo_missing_is_a_missing_error():
    with pytest.raises(ProbeFailed) as e:
        list(probe_rocminfo(FakeSystem()))
    assert e.value.kind == "missing"


def test_module_version_and_no_kfd_rows_from_the_driver_probe():
    files = {**kfd_files({0: 0, 1: 90010, 2: 90010}), "/sys/module/amdgpu/version": "6.10.5\n"}
    rows = list(probe_kernel_driver(FakeSystem(files=files)))
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module", "version": "6.10.5", "flavor": "dkms"}]
    assert t(rows, "gpu_devices") == []  # KFD GPUs come from the rocminfo probe, once


def test_kfd_gpus_named_by_rocminfo():
    files = kfd_files({0: 0, 1: 90010, 2: 90010})
    s = FakeSystem(files=files, commands={"rocminfo": fixture_text("amd/rocminfo-4xmi210-rocm624.txt")})
    rows = list(probe_rocminfo(s))
    gpus = t(rows, "gpu_devices")
    assert [(g["index"], g["name"], g["arch"], g["pci_bus"]) for g in gpus] == [
        (0, "AMD Instinct MI210", "gfx90a", "0000:e3:00.0"), (1, "AMD Instinct MI210", "gfx90a", "0000:e3:00.0")]
    assert t(rows, "drivers")[0]["version"] == "6.10.5"


def test_kfd_gives_the_real_target_under_an_override():
    # rocminfo reports the overridden ISA when HSA_OVERRIDE_GFX_VERSION is set; KFD keeps the real one
    # (here: KFD node 1 says gfx1031 while rocminfo's agent on node 1 reports gfx1100)
    s = FakeSystem(files=kfd_files({0: 0, 1: 100301}),
                   commands={"rocminfo": fixture_text("amd/rocminfo-rx7900xtx-rocm602.txt")})
    gpus = t(probe_rocminfo(s), "gpu_devices")
    assert [(g["name"], g["arch"]) for g in gpus] == [("Radeon RX 7900 XTX", "gfx1031")]


def test_kfd_without_rocminfo_and_rocminfo_failing_with_kfd():
    s = FakeSystem(files=kfd_files({0: 0, 1: 110003}))
    assert [g["arch"] for g in t(probe_rocminfo(s), "gpu_devices")] == ["gfx1103"]
    text, code = strip_exit(fixture_text(DEB + "rocminfo.txt"))
    s = FakeSystem(files=kfd_files({0: 0, 1: 110003}), commands={"rocminfo": CommandResult(("rocminfo",), code, text, "")})
    assert [g["arch"] for g in t(probe_rocminfo(s), "gpu_devices")] == ["gfx1103"]


def test_inbox_amdgpu_without_version_file():
    files = {"/sys/module/amdgpu/initstate": "live\n", "/proc/sys/kernel/osrelease": "6.8.0-49-generic\n"}
    rows = list(probe_kernel_driver(FakeSystem(files=files)))
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module", "version": "6.8.0-49-generic",
                                   "flavor": "inbox"}]


def test_amd_gpu_on_pci_without_driver():
    files = {"/sys/bus/pci/devices/0000:03:00.0/vendor": "0x1002\n", "/sys/bus/pci/devices/0000:03:00.0/class": "0x038000\n",
             "/sys/bus/pci/devices/0000:03:00.0/device": "0x740f\n",
             "/sys/bus/pci/devices/0000:00:01.0/vendor": "0x1022\n", "/sys/bus/pci/devices/0000:00:01.0/class": "0x060000\n"}
    rows = list(probe_kernel_driver(FakeSystem(files=files)))
    assert t(rows, "drivers") == []
    assert [(g["pci_bus"], g["name"]) for g in t(rows, "gpu_devices")] == [("0000:03:00.0", "AMD GPU [1002:740f] (PCI)")]


def test_several_rocm_trees_and_default():
    files = {"/opt/rocm-6.1.0/.info/version": "6.1.0-82\n", "/opt/rocm-6.2.4/.info/version": "6.2.4-139\n",
             "/opt/rocm/.info/version": "6.1.0-82\n", "/opt/rocm-6.2.4/lib/libamdhip64.so.6.2.60204": b"",
             "/opt/rocm-6.1.0/lib/libMIOpen.so.1.0.60100": b"",
             "/opt/rocm-6.1.0/include/miopen/version.h": "#define MIOPEN_VERSION_MAJOR 3\n#define MIOPEN_VERSION_MINOR 1\n"
                                                          "#define MIOPEN_VERSION_PATCH 0\n"}
    rows = list(probe_rocm_install(FakeSystem(files=files)))
    rocm = sorted((r["path"], r["version"]) for r in t(rows, "runtimes") if r["name"] == "rocm")
    assert rocm == [("/opt/rocm", "6.1.0"), ("/opt/rocm-6.1.0", "6.1.0"), ("/opt/rocm-6.2.4", "6.2.4")]
    hip = [r for r in t(rows, "runtimes") if r["name"] == "hip-runtime"]
    assert [(r["version"], r["path"]) for r in hip] == [("6.2.60204", "/opt/rocm-6.2.4/lib/libamdhip64.so.6.2.60204")]
    assert [(r["name"], r["version"]) for r in t(rows, "libraries") if r["name"] == "miopen"] == [("miopen", "3.1.0")]


def test_smi_only_runs_with_a_kfd_gpu():
    sysfs = FakeSystem(commands={"rocm-smi --showdriverversion -i": "should not run"})  # no KFD GPU
    assert list(probe_smi(sysfs)) == []
    smi = fixture_text("amd/rocm-smi-a-excerpt-gfx1103-rocm611.txt")
    s2 = FakeSystem(commands={"rocm-smi --showdriverversion -i": smi}, files=kfd_files({1: 110003}))
    rows = list(probe_smi(s2))
    assert t(rows, "drivers")[0]["flavor"] == "inbox" and t(rows, "gpu_devices") == []


def test_miopen_cache_rows():
    s = FakeSystem(env={"HOME": "/home/u", "MIOPEN_USER_DB_PATH": "/ro/db"},
                   files={"/home/u/.cache/miopen/x.ukdb": "", "/ro/db/a": "", "/opt/rocm/share/miopen/db/gfx90a.db": "",
                          "/opt/rocm/.info/version": "6.2.4-139\n"},
                   denied={"/ro/db"})
    rows = {r["name"]: r for r in t(probe_miopen_caches(s), "kernel_caches")}
    assert rows["miopen-system-db"]["exists"] is True and rows["miopen-system-db"]["files"] == 1
    assert rows["miopen-user-db"]["path"] == "/ro/db" and rows["miopen-user-db"]["writable"] is False
    assert rows["miopen-cache"]["path"] == "/home/u/.cache/miopen/" and rows["miopen-cache"]["writable"] is True


def test_upstream_versions():
    assert upstream_version("5.2.3-8") == "5.2.3"
    assert upstream_version("1:6.8.5.60200-2009582.24.04") == "6.8.5.60200"
    assert upstream_version("5.2.3+dfsg-1") == "5.2.3"


def test_amd_smi_static_list_and_version():
    rows = parse_amd_smi(fixture_text("amd/amd-smi-static-asic-mi308x.txt"), "amd-smi static")
    assert [(g["index"], g["name"], g["arch"]) for g in t(rows, "gpu_devices")] == [(0, "MI308X", "gfx942")]
    rows = parse_amd_smi(fixture_text("amd/amd-smi-list-2gpu.txt"), "amd-smi list")
    assert [(g["index"], g["pci_bus"]) for g in t(rows, "gpu_devices")] == [(0, "0000:23:00.0"), (1, "0000:26:00.0")]
    rows = parse_amd_smi(fixture_text("amd/amd-smi-version-rocm610.txt"), "amd-smi version")
    assert t(rows, "runtimes") == [{"vendor": "amd", "name": "rocm", "version": "6.1.0", "origin": "system"}]
    assert t(rows, "gpu_devices") == []


def test_parse_dpkg_list_and_status():
    rows = parse_dpkg(fixture_text(DEB + "dpkg-gpu-packages.txt"), "dpkg -l")
    assert t(rows, "runtimes") == [{"vendor": "amd", "name": "rocm", "version": "5.2.3", "path": "/usr", "origin": "system"}]
    assert t(rows, "drivers") == []
    # package versions as AMD's repositories name them (seen in public threads); paragraphs constructed
    status = ("Package: rocm-core\nStatus: install ok installed\nVersion: 6.0.2.60002-115~22.04\n\n"
              "Package: hip-runtime-amd\nStatus: install ok installed\nVersion: 6.0.32831.60002-115~22.04\n\n"
              "Package: miopen-hip\nStatus: install ok installed\nVersion: 3.00.0.60002-115~22.04\n\n"
              "Package: amdgpu-dkms\nStatus: install ok installed\nVersion: 1:6.8.5.60200-2009582.24.04\n\n"
              "Package: rocblas\nStatus: deinstall ok config-files\nVersion: 4.0.0.60002-115~22.04\n")
    rows = parse_dpkg(status, "/var/lib/dpkg/status")
    rts = {r["name"]: r["version"] for r in t(rows, "runtimes")}
    assert rts == {"rocm": "6.0.2", "hip-runtime": "6.0.32831"}
    assert [(r["name"], r["version"]) for r in t(rows, "libraries")] == [("miopen", "3.00.0")]
    assert t(rows, "drivers") == [{"vendor": "amd", "component": "kernel-module", "version": "6.8.5.60200",
                                   "flavor": "dkms-package"}]
    live = list(probe_amdgpu_dkms(FakeSystem(files={"/var/lib/dpkg/status": status})))
    assert [r["version"] for r in live] == ["6.8.5.60200"]
