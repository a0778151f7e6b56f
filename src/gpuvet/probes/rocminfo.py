"""Probes: rocminfo and the HSA agents it lists (GPU targets, ROCk module, runtime version).

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import re
from typing import Iterable

from gpuvet.model import Row, row

from .amd_common import CMD_TIMEOUT, _arch, _clean, _find_tool
from .base import Probe, ProbeFailed
from .kfd import _kfd_nodes, _no_amd_gpu, parse_rock_module
from .system import System


# ---------------------------------------------------------------------------------------------------
# rocminfo
def rocminfo_error(text: str) -> str | None:
    """The reason rocminfo gave for failing (None when its output looks healthy)."""
    t = _clean(text)
    for pat in (r"ROCk module is NOT loaded[^\n]*", r"HSA Error:\s*Incompatible kernel and userspace[^\n]*",
                r"Unable to open /dev/kfd[^\n]*",
                r"Failed to get user name to check for video group membership[^\n]*",
                r"hsa api call failure[^\n]*", r"HSA_STATUS_ERROR[^\n]*"):
        m = re.search(pat, t, re.I)
        if m:
            return m.group(0).strip()
    if "HSA Agents" not in t and "Runtime Version" not in t:
        lines = [ln.strip() for ln in t.splitlines() if ln.strip() and not ln.startswith("exit=")]
        return lines[-1][:200] if lines else "rocminfo printed nothing"
    return None


def parse_rocminfo(text: str, source: str) -> list[Row]:
    """rocminfo output -> hsa-runtime version, GPU agents and the ROCk module line."""
    t = _clean(text)
    rows: list[Row] = []
    if re.search(r"ROCk module is NOT loaded", t):
        return []
    rows.extend(parse_rock_module(t, source))
    m = re.search(r"^[ \t]*Runtime Version:[ \t]*(\S+)", t, re.M)
    if m:
        rows.append(row("runtimes", source, vendor="amd", name="hsa-runtime", version=m.group(1),
                        origin="pasted" if source.startswith("<") else "system"))
    for idx, a in enumerate(a for a in _rocminfo_agents(t) if a["type"] == "GPU"):
        rows.append(row("gpu_devices", source, vendor="amd", index=idx, name=a["name"], arch=a["arch"],
                        memory_mib=a["memory_mib"], pci_bus=a["pci_bus"]))
    return rows


def _rocminfo_agents(t: str) -> list[dict]:
    """rocminfo's agents: each begins with its agent-level "Name:" line (at the indentation of
    "Device Type:"); banners ("*******  Agent N") vary and users elide parts of the output ("[...]")."""
    lines = t.splitlines()
    dt_indent = [len(m.group(1)) for m in (re.match(r"^(\s*)Device Type:", ln) for ln in lines) if m]
    if not dt_indent:
        return []
    base = min(dt_indent)
    chunks: list[list[str]] = []
    for ln in lines:
        m = re.match(r"^(\s*)Name:\s", ln)
        if m and len(m.group(1)) == base:
            chunks.append([])
        if chunks:
            chunks[-1].append(ln)
    agents = []
    for lines_ in chunks:
        block = "\n".join(lines_)
        dtype = re.search(r"^[ \t]*Device Type:[ \t]*(\S+)", block, re.M)
        name = re.match(r"^\s*Name:\s*(.+?)\s*$", lines_[0])
        mkt = re.search(r"^[ \t]*Marketing Name:[ \t]*(.*?)[ \t\r]*$", block, re.M)
        isa = re.search(r"amdgcn-amd-amdhsa--(gfx[0-9a-f]+)", block)
        node = re.search(r"^[ \t]*Node:[ \t]*(\d+)", block, re.M)
        mem = None
        pool = re.search(r"Segment:\s*GLOBAL; FLAGS: COARSE GRAINED\s*\n\s*Size:\s*(\d+)\(0x[0-9a-f]+\)\s*KB",
                         block, re.I)
        if pool:
            mem = int(pool.group(1)) // 1024
        bdf = re.search(r"^[ \t]*BDFID:[ \t]*(\d+)", block, re.M)
        pci = None
        if bdf:
            b = int(bdf.group(1))
            pci = f"{(b >> 8) & 0xff:02x}:{(b >> 3) & 0x1f:02x}.{b & 0x7:x}"
        agents.append({
            "type": dtype.group(1).upper() if dtype else "",
            "name": (mkt.group(1) if mkt and mkt.group(1) else (name.group(1) if name else "")),
            "arch": _arch(name.group(1) if name else None) or (isa.group(1) if isa else None),
            "node": int(node.group(1)) if node else None, "memory_mib": mem, "pci_bus": pci})
    return agents


def probe_rocminfo(system: System) -> Iterable[Row]:
    """GPUs from the KFD topology (the real gfx target, whatever HSA_OVERRIDE_GFX_VERSION says) named
    by rocminfo's agents; rocminfo's runtime and ROCk lines.  Without rocminfo, the KFD GPUs alone;
    rocminfo failing with no KFD GPU is this probe's error."""
    kfd = _kfd_nodes(system)
    exe = _find_tool(system, "rocminfo")
    if not exe:
        if kfd:
            return [r for _, r in kfd]
        if _no_amd_gpu(system):
            return []
        raise ProbeFailed("rocminfo: not installed", "missing", ("gpu_devices",))
    res = system.run([exe], timeout=CMD_TIMEOUT)
    text = res.output if not res.error else ""
    rows = parse_rocminfo(text, "rocminfo") if text else []
    err = rocminfo_error(text) if text else None
    if kfd:
        # one row per KFD GPU: rocminfo's agent on the same node gives the marketing name
        agents = {a["node"]: a for a in _rocminfo_agents(_clean(text)) if a["type"] == "GPU"}
        out = [r for r in rows if r.table != "gpu_devices"]
        for node, r in kfd:
            a = agents.get(node)
            vals = dict(r.values)
            if a:
                vals.update(name=a["name"] or vals.get("name"), memory_mib=vals.get("memory_mib") or a["memory_mib"])
            out.append(Row("gpu_devices", vals, r.source + (" + rocminfo" if a else "")))
        return out
    failed = res.error or (err and not any(r.table == "gpu_devices" for r in rows)) \
        or (res.returncode not in (0, None) and not rows)
    if failed and _no_amd_gpu(system):
        # rocminfo fails the same way on every machine without an AMD GPU; the PCI bus says there is none
        return [r for r in rows if r.table != "gpu_devices"]
    if res.error == "timeout":
        raise ProbeFailed(f"`{exe}` timed out after {CMD_TIMEOUT:.1f}s", "timeout", ("gpu_devices",))
    if res.error:
        raise ProbeFailed(res.describe(), "missing" if res.error == "missing" else "error", ("gpu_devices",))
    if err and not any(r.table == "gpu_devices" for r in rows):
        raise ProbeFailed(f"rocminfo: {err}", "error", ("gpu_devices",))
    if res.returncode not in (0, None) and not rows:
        raise ProbeFailed(res.describe(), "error", ("gpu_devices",))
    return rows


PROBES: list[Probe] = [
    Probe("amd-rocminfo", ("runtimes", "gpu_devices", "drivers"), probe_rocminfo,
          "KFD topology (/sys/class/kfd/kfd/topology/nodes) and rocminfo"),
]
