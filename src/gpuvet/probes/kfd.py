"""Probes: The amdgpu/ROCk kernel driver: /sys/module/amdgpu/version, the KFD topology, AMD PCI display devices.

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from gpuvet.model import Row, row

from .amd_common import _clean, gfx_from_target_version
from .base import Probe
from .system import System


def parse_rock_module(text: str, source: str) -> list[Row]:
    """'ROCk module version 6.7.0 is loaded' (or 'ROCk module is loaded') -> a drivers row."""
    t = _clean(text)
    m = re.search(r"ROCk module version\s+(\S+)\s+is loaded", t)
    if m:
        return [row("drivers", source, vendor="amd", component="kernel-module", version=m.group(1),
                    flavor="dkms")]
    if re.search(r"ROCk module is loaded", t):
        # older rocminfo (and newer ones without /sys/module/amdgpu/version) print no version
        return [row("drivers", source, vendor="amd", component="kernel-module", version="")]
    return []


# ---------------------------------------------------------------------------------------------------
# live probes
def _kfd_gpus(system: System) -> list[Row]:
    return [r for _, r in _kfd_nodes(system)]


def _kfd_nodes(system: System) -> list[tuple[int, Row]]:
    """(KFD node id, gpu_devices row) for every GPU node of the KFD topology (files only)."""
    base = "/sys/class/kfd/kfd/topology/nodes"
    rows: list[tuple[int, Row]] = []
    idx = 0
    nodes = sorted(system.listdir(base), key=lambda n: int(n) if n.isdigit() else 1 << 30)
    for n in nodes:
        props = system.read_text(f"{base}/{n}/properties", limit=65536)
        if not props:
            continue
        kv = dict(re.findall(r"^(\w+)[ \t]+(\S+)", props, re.M))
        arch = gfx_from_target_version(kv.get("gfx_target_version"))
        if not arch:
            continue  # a CPU node (gfx_target_version 0)
        name = (system.read_text(f"{base}/{n}/name", limit=256) or "").strip() or None
        if name and name.lower() == "ip discovery":  # the KFD's placeholder for IP-discovery ASICs
            name = None
        pci = None
        loc = kv.get("location_id")
        if loc and loc.isdigit():
            b = int(loc)
            dom = int(kv.get("domain", "0") or 0)
            pci = f"{dom:04x}:{(b >> 8) & 0xff:02x}:{(b >> 3) & 0x1f:02x}.{b & 0x7:x}"
        mem = None
        total = 0
        for bank in system.listdir(f"{base}/{n}/mem_banks"):
            bp = system.read_text(f"{base}/{n}/mem_banks/{bank}/properties", limit=4096) or ""
            bkv = dict(re.findall(r"^(\w+)[ \t]+(\S+)", bp, re.M))
            if bkv.get("heap_type") in ("1", "2"):  # frame buffer (public / private)
                try:
                    total += int(bkv.get("size_in_bytes", "0"))
                except ValueError:
                    pass
        if total:
            mem = total // (1024 * 1024)
        rows.append((int(n) if n.isdigit() else -1,
                     row("gpu_devices", f"{base}/{n}/properties", vendor="amd", index=idx, name=name,
                         arch=arch, memory_mib=mem, pci_bus=pci)))
        idx += 1
    return rows


def _pci_amd_gpus(system: System) -> list[Row]:
    """AMD GPU PCI functions (vendor 0x1002; class 0x03xxxx display, or 0x12xxxx processing accelerator as
    the Instinct MI300X/MI325X report themselves: lspci "Processing accelerators [1200]", seen in
    https://github.com/apache/cloudstack/issues/11701 and https://github.com/ROCm/ROCm/issues/4454): GPUs
    whether or not a driver is bound.  Rows carry no arch; ``name`` says 'AMD GPU <device id>'."""
    rows: list[Row] = []
    for dev in system.glob("/sys/bus/pci/devices/*"):
        vendor = (system.read_text(f"{dev}/vendor", limit=32) or "").strip().lower()
        if vendor != "0x1002":
            continue
        cls = (system.read_text(f"{dev}/class", limit=32) or "").strip().lower()
        if not cls.startswith(("0x03", "0x12")):
            continue
        did = (system.read_text(f"{dev}/device", limit=32) or "").strip().lower()
        rows.append(row("gpu_devices", f"{dev}/class", vendor="amd", index=len(rows),
                        name=f"AMD GPU [1002:{did[2:] if did.startswith('0x') else did}] (PCI)",
                        pci_bus=os.path.basename(dev)))
    return rows


# lspci lines of AMD GPUs: 'lspci', 'lspci -nn', 'lspci | grep -i vga' as pasted into bug reports.
# Vendor 1002 is AMD's GPU division ("[AMD/ATI]"); AMD's CPU-side functions are 1022 ("[AMD]").
LSPCI_AMD_GPU = re.compile(
    r"^[ \t]*(?:[0-9a-f]{4}:)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])[ \t]+"
    r"(?:VGA compatible controller|Display controller|3D controller|Processing accelerators)(?:[ \t]*\[[0-9a-f]{4}\])?:"
    r"[ \t]*(?P<rest>.*(?:\[AMD/ATI\]|\[1002:[0-9a-f]{4}\]).*?)[ \t]*$", re.M | re.I)


def parse_lspci(text: str, source: str) -> list[Row]:
    """AMD GPUs in lspci output (display-class or processing-accelerator functions of vendor 1002), as
    the live probe reads them from /sys/bus/pci: present on the bus, whether or not a driver is bound.
    '03:00.0 Display controller [0380]: Advanced Micro Devices, Inc. [AMD/ATI] Aldebaran/MI200
    [Instinct MI210] [1002:740f] (rev 02)' -> name 'Aldebaran/MI200 [Instinct MI210] [1002:740f]'."""
    rows: list[Row] = []
    for m in LSPCI_AMD_GPU.finditer(_clean(text)):
        rest = re.sub(r"\s*\(rev [0-9a-f]+\)\s*$", "", m.group("rest"), flags=re.I)
        name = re.sub(r"^.*?\[AMD/ATI\]\s*", "", rest).strip() or rest.strip()
        rows.append(row("gpu_devices", f"{source} (lspci {m.group(1)})", vendor="amd", index=len(rows),
                        name=f"AMD {name} (PCI)" if not name.upper().startswith("AMD") else f"{name} (PCI)",
                        pci_bus=m.group(1)))
    return rows


def probe_kernel_driver(system: System) -> Iterable[Row]:
    """amdgpu kernel module (files only); without a KFD topology, the AMD GPUs on the PCI bus."""
    rows: list[Row] = []
    ver = system.read_text("/sys/module/amdgpu/version", limit=256)
    if ver and ver.strip():
        rows.append(row("drivers", "/sys/module/amdgpu/version", vendor="amd", component="kernel-module",
                        version=ver.strip(), flavor="dkms"))
    elif system.exists("/sys/module/amdgpu"):
        krel = (system.read_text("/proc/sys/kernel/osrelease", limit=256) or "").strip()
        rows.append(row("drivers", "/sys/module/amdgpu", vendor="amd", component="kernel-module",
                        version=krel, flavor="inbox"))
    if not system.exists("/sys/class/kfd/kfd/topology/nodes"):
        rows.extend(_pci_amd_gpus(system))  # no KFD: GPUs on the bus with no compute driver
    return rows


def _no_amd_gpu(system: System) -> bool:
    """True only when the PCI bus is readable and has no AMD GPU function (then "no AMD GPU" is a
    fact, not a guess); False when it has one or cannot be read."""
    return bool(system.glob("/sys/bus/pci/devices/*")) and not _pci_amd_gpus(system)


PROBES: list[Probe] = [
    Probe("amd-kernel-driver", ("drivers", "gpu_devices"), probe_kernel_driver,
          "amdgpu module version (/sys/module/amdgpu/version); AMD GPU PCI functions when there is no KFD"),
]
