"""Probes: rocm-smi and amd-smi: driver and ROCm versions, GPU targets.

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import re
from typing import Iterable

from gpuvet.model import Row, row

from .amd_common import CMD_TIMEOUT, _arch, _clean, _find_tool, _fmt_bytes_mib
from .base import Probe, ProbeFailed
from .kfd import _kfd_gpus
from .system import System


def _rocm_smi_gfx(text: str) -> str | None:
    """rocm-smi prints 'GFX Version: gfx11003' for gfx1103 (the number major*1000 + minor*100 +
    stepping after 'gfx'); amd-smi prints the real name (gfx942).  Real target names have three
    characters after 'gfx', or four starting with 1 (gfx1030, gfx1151)."""
    m = re.search(r"gfx([0-9a-f]+)", text, re.I)
    if not m:
        return None
    tail = m.group(1).lower()
    if len(tail) == 3 or (len(tail) == 4 and tail[0] == "1"):
        return "gfx" + tail
    if tail.isdigit():
        v = int(tail)
        major, minor, step = v // 1000, (v // 100) % 10, v % 100
        if major and step <= 15:
            return f"gfx{major}{minor:x}{step:x}"
    return None


# ---------------------------------------------------------------------------------------------------
# rocm-smi / amd-smi
def parse_rocm_smi(text: str, source: str) -> list[Row]:
    """rocm-smi output (concise table, ``-i``, ``-a``, ``--showdriverversion``,
    ``--showmeminfo vram``) -> the driver version and the GPUs it names.  An error ('Driver not
    initialized (amdgpu not found in modules)') gives no rows."""
    t = _clean(text)
    if re.search(r"Driver not initialized|amdgpu not found in modules|No AMD GPUs specified", t):
        return []
    rows: list[Row] = []
    m = re.search(r"^Driver version:[ \t]*(\S+)", t, re.M)
    if m:
        ver = m.group(1)
        # the inbox driver reports the kernel release (6.10.0-061000rc1-generic)
        inbox = bool(re.search(r"\d+\.\d+\.\d+-", ver)) or "generic" in ver
        rows.append(row("drivers", source, vendor="amd", component="kernel-module", version=ver,
                        flavor="inbox" if inbox else "dkms"))
    gpus: dict[int, dict] = {}
    for g, key, val in re.findall(r"^GPU\[(\d+)\][ \t]*:[ \t]*([^:\n \t][^:\n]*?):[ \t]*(.*?)[ \t\r]*$", t, re.M):
        d = gpus.setdefault(int(g), {})
        key = key.strip()
        if key in ("Device Name", "Card Series") and "name" not in d and val:
            d["name"] = val.strip()
        elif key == "GFX Version":
            d["arch"] = _rocm_smi_gfx(val)
        elif key == "PCI Bus":
            d["pci_bus"] = val.strip()
        elif key.startswith("VRAM Total Memory (B)"):
            try:
                d["memory_mib"] = _fmt_bytes_mib(int(val))
            except ValueError:
                pass
    # the ROCm 6 concise table: 'Device  Node  IDs ... ' rows, then the model name on the next line
    # in the ROCm 6.0 layout ('0  [0x74a1 : 0x00] ... \n        AMD Instinct MI300X')
    lines = t.splitlines()
    for i, ln in enumerate(lines):
        mm = re.match(r"^(\d+)\s+\[0x[0-9a-f]+\s*:\s*0x[0-9a-f]+\]", ln)
        if mm and i + 1 < len(lines):
            nxt = lines[i + 1].strip()
            if nxt and not nxt.startswith("=") and not re.match(r"^\d+\s", nxt):
                gpus.setdefault(int(mm.group(1)), {}).setdefault("name", nxt)
        mm2 = re.match(r"^(\d+)\s+\d+\s+0x[0-9a-f]+,\s+\d+\s", ln)
        if mm2:
            gpus.setdefault(int(mm2.group(1)), {})
    for idx in sorted(gpus):
        d = gpus[idx]
        rows.append(row("gpu_devices", source, vendor="amd", index=idx, name=d.get("name"),
                        arch=d.get("arch"), memory_mib=d.get("memory_mib"), pci_bus=d.get("pci_bus")))
    return rows


def parse_amd_smi(text: str, source: str) -> list[Row]:
    """amd-smi output: ``amd-smi version`` ('... | ROCm version: 6.3.3 | amdgpu version: 6.16.6')
    -> runtimes rocm / drivers rows; ``amd-smi static`` / ``list`` 'GPU: N' blocks -> gpu_devices
    (MARKET_NAME, TARGET_GRAPHICS_VERSION, BDF, VRAM SIZE)."""
    t = _clean(text)
    if re.search(r"Driver not initialized|amdgpu not found in modules|AMDSMI_STATUS_DRIVER_NOT_LOADED", t):
        return []
    rows: list[Row] = []
    m = re.search(r"ROCm version:\s*([0-9][0-9.]*)", t)
    if m:
        # where it was read: the line of a longer paste (a report quotes both versions with their lines)
        where = (f"{source} line {t.count(chr(10), 0, m.start()) + 1} (amd-smi version: ROCm version: {m.group(1)})"
                 if "\n" in t.strip() else source)
        rows.append(row("runtimes", where, vendor="amd", name="rocm", version=m.group(1),
                        origin="pasted" if source.startswith("<") else "system"))
    m = re.search(r"amdgpu version:\s*([0-9][0-9.]*)", t)
    if m:
        rows.append(row("drivers", source, vendor="amd", component="kernel-module", version=m.group(1),
                        flavor="dkms"))
    blocks = re.split(r"^GPU:[ \t]*(\d+)[ \t\r]*$", t, flags=re.M)
    for i in range(1, len(blocks) - 1, 2):
        idx, body = int(blocks[i]), blocks[i + 1]
        name = re.search(r"^[ \t]*MARKET_NAME:[ \t]*(.*?)[ \t\r]*$", body, re.M)
        tgv = re.search(r"^[ \t]*TARGET_GRAPHICS_VERSION:[ \t]*(\S+)", body, re.M)
        bdf = re.search(r"^[ \t]*BDF:[ \t]*(\S+)", body, re.M)
        size = re.search(r"^[ \t]*VRAM:[ \t\r]*\n(?:[ \t]+\w+:.*\n)*?[ \t]+SIZE:[ \t]*(\d+)[ \t]*MB", body, re.M)
        drv = re.search(r"^[ \t]*DRIVER:[ \t\r]*\n[ \t]+NAME:[ \t]*amdgpu[ \t\r]*\n[ \t]+VERSION:[ \t]*(\S+)", body, re.M)
        if drv and not any(r.table == "drivers" for r in rows):
            rows.append(row("drivers", source, vendor="amd", component="kernel-module",
                            version=drv.group(1), flavor="dkms"))
        rows.append(row("gpu_devices", source, vendor="amd", index=idx,
                        name=name.group(1) if name and name.group(1) else None,
                        arch=_arch(tgv.group(1)) if tgv else None,
                        memory_mib=int(size.group(1)) if size else None,
                        pci_bus=bdf.group(1) if bdf else None))
    return rows


def probe_smi(system: System) -> Iterable[Row]:
    """amd-smi, else rocm-smi -- only when KFD shows a GPU (rocm-smi is a Python tool)."""
    if not _kfd_gpus(system):
        return []
    amd = _find_tool(system, "amd-smi")
    if amd:
        out = []
        for args in (["version"], ["static", "--asic", "--bus", "--vram", "--driver"]):
            res = system.run([amd, *args], timeout=CMD_TIMEOUT)
            if res.ok:
                out.append(res.stdout)
        if out:
            return [r for r in parse_amd_smi("\n".join(out), f"{amd} version/static") if r.table != "gpu_devices"]
    smi = _find_tool(system, "rocm-smi")
    if smi:
        res = system.run([smi, "--showdriverversion", "-i"], timeout=CMD_TIMEOUT)
        if res.ok:
            return [r for r in parse_rocm_smi(res.output, f"{smi} --showdriverversion")
                    if r.table != "gpu_devices"]
        raise ProbeFailed(res.describe(), "timeout" if res.error == "timeout" else "error")
    return []


PROBES: list[Probe] = [
    Probe("amd-smi", ("drivers", "runtimes"), probe_smi, "amd-smi / rocm-smi driver and ROCm versions (only with a KFD GPU)"),
]
