"""Topology facts and misconfiguration findings for the ``distributed`` case (gpuvet's own process: no torch).

- ``topology()``: ``nvidia-smi topo -m`` and ``rocm-smi --showtopo`` (each with a time-out; a missing or hung
  tool is recorded, never raised), the host's network interfaces, and the GPU-pair link matrix parsed from
  ``nvidia-smi topo -m``.
- ``findings()``: the case result (every rank's device facts, gathered before any collective) + topology +
  the ranks' environment -> VAL013 findings for the misconfigurations that make collectives slow or hang
  (P2P disabled, ``NCCL_P2P_DISABLE`` / ``NCCL_SHM_DISABLE`` set, ``NCCL_SOCKET_IFNAME`` naming no interface,
  two ranks on one GPU, ``CUDA_VISIBLE_DEVICES`` hiding GPUs from some ranks) and VAL014 when the largest
  all-reduce's bus bandwidth is far below what the links between the GPUs carry.

Bus bandwidth is nccl-tests' (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
algbw = bytes / time; busbw = algbw x 2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter,
1 for broadcast, so it is comparable with the link bandwidth whatever the number of ranks.
``NCCL_SOCKET_IFNAME`` syntax per NCCL's environment documentation
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html): comma-separated prefixes, ``=`` for
exact names, a leading ``^`` to exclude.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any, Mapping

from gpuvet.model import Evidence, Finding, Fix, Outcome, Severity
from gpuvet.model.redact import redact_text

TOOL_TIMEOUT_S = 10.0
# NVLink generations 2 to 4 carry 25 GB/s per link and direction; busbw is unidirectional (nccl-tests)
NVLINK_GBPS_PER_LINK = 25.0
LOW_FRACTION = 0.5  # busbw below half of the links' bandwidth at the largest size: flagged
TRUE = ("1", "true", "yes", "on")


def _run(argv: list[str], environ: dict[str, str]) -> dict[str, Any]:
    exe = shutil.which(argv[0], path=environ.get("PATH", os.defpath))
    if not exe:
        return {"command": " ".join(argv), "status": "missing"}
    try:
        p = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                           stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return {"command": " ".join(argv), "status": "timeout", "timeout_s": TOOL_TIMEOUT_S}
    except OSError as exc:
        return {"command": " ".join(argv), "status": "error", "error": str(exc)}
    return {"command": " ".join(argv), "status": "ok" if p.returncode == 0 else "error", "returncode": p.returncode,
            "output": redact_text(p.stdout)[-20000:], "stderr": redact_text(p.stderr)[-2000:]}


def interfaces() -> list[str]:
    try:
        return sorted(os.listdir("/sys/class/net"))
    except OSError:
        import socket

        try:
            return sorted(name for _, name in socket.if_nameindex())
        except OSError:
            return []


def parse_nvidia_topo(text: str) -> dict[str, Any]:
    """``nvidia-smi topo -m``'s matrix -> {"gpus": ["GPU0", ...], "links": {"GPU0-GPU1": "NV18", ...}}."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    header = next((ln for ln in lines if re.match(r"^\s+GPU0\b", ln)), None)
    if header is None:
        return {"gpus": [], "links": {}}
    cols = header.split()
    ngpu = sum(1 for c in cols if re.fullmatch(r"GPU\d+", c))
    gpus, links = [], {}
    for ln in lines:
        m = re.match(r"^(GPU\d+)\s+(.*)$", ln)
        if not m:
            continue
        gpus.append(m.group(1))
        cells = m.group(2).split()
        for j in range(min(ngpu, len(cells))):
            if cols[j] != m.group(1):
                links[f"{m.group(1)}-{cols[j]}"] = cells[j]
    return {"gpus": gpus, "links": links}


def topology(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    environ = dict(os.environ if environ is None else environ)
    topo: dict[str, Any] = {"interfaces": interfaces()}
    nv = _run(["nvidia-smi", "topo", "-m"], environ)
    topo["nvidia_smi_topo"] = nv
    if nv.get("status") == "ok":
        topo.update(parse_nvidia_topo(nv.get("output", "")))
    rocm = _run(["rocm-smi", "--showtopo"], environ)
    topo["rocm_smi_topo"] = rocm
    if rocm.get("status") == "ok" and not topo.get("gpus"):
        topo["gpus"] = sorted(set(re.findall(r"^GPU\[(\d+)\]", rocm.get("output", ""), re.M)), key=int)
    return topo


def socket_ifname_unmatched(value: str, names: list[str]) -> list[str]:
    """The entries of NCCL_SOCKET_IFNAME that select no interface present (empty when it selects one)."""
    v = value.strip()
    exclude = v.startswith("^")
    if exclude:
        v = v[1:]
    exact = v.startswith("=")
    if exact:
        v = v[1:]
    entries = [e.split(":")[0] for e in v.split(",") if e.strip()]

    def hits(e: str) -> list[str]:
        return [n for n in names if (n == e if exact else n.startswith(e))]

    if exclude:  # everything excluded is a misconfiguration too: nothing left to use
        left = [n for n in names if not any(n in hits(e) for e in entries)]
        return [] if left else entries
    if any(hits(e) for e in entries):
        return []
    return entries


def _finding(code: str, title: str, why: str, evidence: list[str], fixes: list[str],
             severity: Severity | None = None) -> Finding:
    from gpuvet.validate.findings import finding

    return finding(code, Outcome.FAILED, title, evidence=[Evidence(e, source="distributed") for e in evidence],
                   fixes=[Fix(f) for f in fixes], why=why, severity=severity, cause="collective-comm")


def findings(result: dict[str, Any], topo: dict[str, Any], environ: Mapping[str, str]) -> list[Finding]:
    info = result.get("info") or {}
    ranks: list[dict[str, Any]] = info.get("ranks") or []
    env = dict(environ)
    if ranks and ranks[0].get("nccl_env") is not None:  # what the ranks really saw
        env = {k: v for k, v in env.items() if not k.startswith("NCCL_")}
        env.update(ranks[0]["nccl_env"])
    gpu = info.get("backend") == "nccl"
    out: list[Finding] = []
    for var, what in (("NCCL_P2P_DISABLE", "direct GPU-to-GPU (NVLink/PCIe peer) transfers"),
                      ("NCCL_SHM_DISABLE", "shared-memory transfers between processes")):
        if str(env.get(var, "")).strip().lower() in TRUE:
            out.append(_finding("VAL013", f"{var}={env[var]} is set: NCCL/RCCL may not use {what}",
                                f"With {var} set, NCCL/RCCL routes that traffic through a slower path (host "
                                "memory or the network): collectives run, far slower than the links allow.",
                                [f"{var}={env[var]} in the ranks' environment"],
                                [f"Unset {var} unless a known hardware or driver bug needs it (then record why)."]))
    ifname = env.get("NCCL_SOCKET_IFNAME")
    names = topo.get("interfaces") or []
    if ifname and names:
        missing = socket_ifname_unmatched(ifname, names)
        if missing:
            out.append(_finding("VAL013", f"NCCL_SOCKET_IFNAME={ifname} selects no network interface of this host",
                                "NCCL/RCCL bootstraps over the interfaces NCCL_SOCKET_IFNAME selects; when it selects "
                                "none, initialisation fails ('no socket interface found') or hangs.",
                                [f"NCCL_SOCKET_IFNAME={ifname}", f"interfaces present: {', '.join(names)}"],
                                ["Name an interface that exists (`ip -br link`), a prefix of one, or unset it."],
                                severity=Severity.ERROR))
    if gpu and ranks:
        owners: dict[str, list[int]] = {}
        for i, r in enumerate(ranks):
            key = str(r.get("uuid") or (r.get("host"), r.get("pci_bus_id"), r.get("device")))
            owners.setdefault(key, []).append(i)
        shared = {k: v for k, v in owners.items() if len(v) > 1}
        if shared or info.get("shared_gpu"):
            ev = [f"ranks {', '.join(map(str, v))} on GPU {k}" for k, v in shared.items()]
            if info.get("shared_gpu_error"):
                ev.append(f"NCCL: {info['shared_gpu_error'].splitlines()[0][:300]}")
            out.append(_finding("VAL013", f"{len(ranks)} ranks on {len(owners)} GPU(s): two ranks share one GPU",
                                "NCCL/RCCL needs one GPU per rank: it refuses a duplicate GPU or, on older versions, "
                                "hangs or crawls.", ev,
                                ["Start one rank per GPU (WORLD_SIZE <= the GPUs each rank sees) and set each "
                                 "rank's device from LOCAL_RANK (`torch.cuda.set_device(local_rank)`)."],
                                severity=Severity.ERROR))
        counts = {r.get("device_count") for r in ranks}
        vis = {r.get("CUDA_VISIBLE_DEVICES") for r in ranks}
        host_gpus = len(topo.get("gpus") or [])
        seen = min((c for c in counts if c is not None), default=0)
        if len(counts) > 1 or len(vis) > 1 or (host_gpus and seen < host_gpus):
            ev = [f"rank {i}: CUDA_VISIBLE_DEVICES={r.get('CUDA_VISIBLE_DEVICES')!s}, sees {r.get('device_count')} GPU(s)"
                  for i, r in enumerate(ranks)]
            if host_gpus:
                ev.append(f"the host has {host_gpus} GPU(s) (nvidia-smi topo -m / rocm-smi --showtopo)")
            out.append(_finding("VAL013", "CUDA_VISIBLE_DEVICES hides GPUs from some ranks",
                                "Ranks that see different or fewer GPUs than the host has pick devices by an index "
                                "that means something else in each rank, and P2P between hidden GPUs is impossible.",
                                ev, ["Give every rank the same device list (or none) and select the GPU by "
                                     "LOCAL_RANK; a launcher that sets one GPU per rank must set it for all ranks."]))
        p2p = ranks[0].get("p2p") or []
        no = [(i, j) for i in range(len(p2p)) for j in range(len(p2p)) if i < j and not (p2p[i][j] and p2p[j][i])]
        if no:
            out.append(_finding("VAL013", f"P2P access is disabled between {len(no)} GPU pair(s)",
                                "Without peer access NCCL/RCCL stages GPU-to-GPU traffic through host memory: "
                                "correct, much slower (IOMMU/ACS settings, a virtual machine, or the driver).",
                                [f"GPU {i} <-> GPU {j}: no peer access (torch.cuda.can_device_access_peer)"
                                 for i, j in no[:8]],
                                ["Check ACS/IOMMU settings (`nvidia-smi topo -p2p r`, `lspci -vvv | grep ACSCtl`) "
                                 "and that the GPUs are not split across virtual machines."]))
    bw = bandwidth_finding(result, topo)
    if bw:
        out.append(bw)
    return out


def expected_busbw(topo: dict[str, Any], world: int) -> tuple[float | None, str]:
    """The slowest link between the GPUs used (GPU0..GPU{world-1}), as GB/s, where the topology says."""
    links = topo.get("links") or {}
    nv = []
    for i in range(world):
        for j in range(world):
            if i != j:
                cell = links.get(f"GPU{i}-GPU{j}")
                if cell is None:
                    return None, "link unknown"
                m = re.fullmatch(r"NV(\d+)", cell)
                if not m:
                    return None, f"GPU{i}-GPU{j} over {cell} (PCIe/host: no fixed expectation)"
                nv.append(int(m.group(1)))
    if not nv:
        return None, "one rank"
    return min(nv) * NVLINK_GBPS_PER_LINK, f"NV{min(nv)} x {NVLINK_GBPS_PER_LINK:g} GB/s per link and direction"


def bandwidth_finding(result: dict[str, Any], topo: dict[str, Any]) -> Finding | None:
    table = (result.get("tables") or {}).get("collectives") or {}
    rows = [r for r in table.get("rows") or [] if r[0] == "all_reduce"]
    world = (result.get("info") or {}).get("world_size") or 1
    if not rows or world < 2 or result.get("status") != "ok":
        return None
    exp, how = expected_busbw(topo, world)
    result.setdefault("info", {})["expected_busbw_GBps"] = exp
    result["info"]["expected_busbw_basis"] = how
    big = rows[-1]
    if exp is None or big[6] >= LOW_FRACTION * exp:
        return None
    return _finding("VAL014", f"all-reduce bus bandwidth {big[6]:.1f} GB/s at {big[1]} B is below "
                              f"{LOW_FRACTION:.0%} of the links' {exp:.0f} GB/s",
                    "busbw (nccl-tests' definition) should approach the bandwidth of the slowest link between the "
                    "GPUs at large sizes; far below it, traffic takes a slower path or a link is degraded.",
                    [f"{how}", f"measured busbw {big[6]:.1f} GB/s, algbw {big[5]:.1f} GB/s, {world} ranks"],
                    ["Re-run with NCCL_DEBUG=INFO and read which transport NCCL chose (P2P/SHM/NET); check "
                     "`nvidia-smi nvlink -s` for links down."], severity=Severity.WARNING)


def with_debug_lines(f: Finding, result: dict[str, Any], lines: int = 15) -> Finding:
    """A hang's finding with NCCL/RCCL's debug lines (NCCL_DEBUG=INFO) and the re-run advice."""
    import dataclasses

    log = (result.get("log") or "").splitlines()
    nccl = [ln for ln in log if re.search(r"\bNCCL (INFO|WARN)|\bRCCL\b", ln)][-lines:]
    ev = list(f.evidence) + [Evidence(ln[:300], source="NCCL_DEBUG=INFO") for ln in nccl]
    hung = (result.get("info") or {}).get("hung")
    if hung:
        ev.insert(0, Evidence(f"hung in: {hung}", source="distributed"))
    fixes = list(f.fixes) + [Fix("Re-run with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,P2P,NET gpuvet validate "
                                 "--case distributed` (the ranks inherit it) and read the transport and the last "
                                 "collective each rank entered.")]
    return dataclasses.replace(f, evidence=tuple(ev), fixes=tuple(fixes))
