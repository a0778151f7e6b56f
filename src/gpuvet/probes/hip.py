"""Probes: HIP tools and the ROCm install: hipconfig, hipcc, /opt/rocm*/.info/version, libamdhip64.so.X.Y.Z.

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from packaging.version import InvalidVersion, Version

from gpuvet.model import Row, row

from .amd_common import CMD_TIMEOUT, LIB_DIRS, _clean, _find_tool, _rocm_trees
from .base import Probe, ProbeFailed
from .dpkg import parse_dpkg
from .miopen import miopen_version_from_soname, parse_miopen_version_h
from .system import System

_HIPVER = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:[-.]([0-9a-f]+))?")


def hip_version(text: str | None) -> Version | None:
    """The HIP version in ``hipconfig --version`` / ``hipcc --version`` / ``HIP version  : ...`` text,
    or a bare version string: '5.2.21153-0' -> Version('5.2.21153'), '6.1.40092-038397aaa' ->
    Version('6.1.40092'), torch's '5.7.31921-d1770ee1b' -> Version('5.7.31921')."""
    if not text:
        return None
    t = _clean(str(text))
    m = re.search(r"HIP version\s*:\s*(\S+)", t)
    cand = m.group(1) if m else t.strip().split()[0] if t.strip() else ""
    m2 = _HIPVER.match(cand)
    if not m2:
        return None
    try:
        return Version(".".join(m2.group(1, 2, 3)))
    except InvalidVersion:  # pragma: no cover - the regex only lets digits through
        return None


# ---------------------------------------------------------------------------------------------------
# hipconfig / hipcc
_NVCC_REL = re.compile(r"Cuda compilation tools, release (\d+\.\d+)")


def _platform_from_text(t: str) -> str | None:
    m = re.search(r"^HIP_PLATFORM[ \t]*:[ \t]*(\S+)", t, re.M)
    if m:
        p = m.group(1).lower()
        return {"hcc": "amd", "nvcc": "nvidia"}.get(p, p)
    if re.search(r"(AMD clang version|HIP_COMPILER\s*:\s*clang|HIP_RUNTIME\s*:\s*rocclr)", t):
        return "amd"
    if re.search(r"nvcc: NVIDIA|HIP_COMPILER\s*:\s*nvcc|HIP_RUNTIME\s*:\s*cuda", t):
        return "nvidia"
    return None


def parse_hipconfig(text: str, source: str) -> list[Row]:
    """``hipconfig --full`` (or ``hipconfig``) and ``hipconfig --version`` -> a compilers row named
    hipconfig (HIP version as printed, platform, the wrapped nvcc's CUDA release) and, when
    ``ROCM_PATH`` names a versioned tree (/opt/rocm-6.1.1), a runtimes row for that ROCm release."""
    t = _clean(text).strip()
    if not t:
        return []
    m = re.search(r"HIP version\s*:\s*(\S+)", t)
    version = m.group(1) if m else None
    if version is None:
        first = t.splitlines()[0].strip()
        if re.fullmatch(r"\d+\.\d+\.\d+(?:[-.][0-9A-Za-z]+)*", first):  # hipconfig --version
            version = first
    if version is None:
        return []
    platform = _platform_from_text(t)
    cuda = _NVCC_REL.search(t)
    rocm_path = re.search(r"^ROCM_PATH[ \t]*:[ \t]*(\S+)", t, re.M)
    rows = [row("compilers", source, name="hipconfig", version=version, platform=platform,
                cuda_version=cuda.group(1) if cuda else None)]
    if rocm_path:
        mv = re.search(r"rocm-(\d+\.\d+(?:\.\d+)?)", rocm_path.group(1))
        if mv:
            # pasted text: say where the tree was read (the live probe's source is the command itself)
            n = next((i for i, ln in enumerate(text.splitlines(), 1) if ln.lstrip().startswith("ROCM_PATH")), 0)
            where = (source if source.endswith(" --full") or not n else
                     f"{source} line {n} (hipconfig: ROCM_PATH : {rocm_path.group(1)})")
            rows.append(row("runtimes", where, vendor="amd", name="rocm", version=mv.group(1),
                            path=rocm_path.group(1).rstrip("/"),
                            origin="pasted" if source.startswith("<") else "system"))
    return rows


def parse_hipcc_version(text: str, source: str) -> list[Row]:
    """``hipcc --version``: 'HIP version: X' then AMD clang's banner (platform amd) or nvcc's
    (platform nvidia, cuda_version = nvcc's release)."""
    t = _clean(text).strip()
    m = re.search(r"^HIP version: (\S+)", t, re.M)  # hipconfig's banner is 'HIP version  : '
    if not m:
        return []
    cuda = _NVCC_REL.search(t)
    if cuda or "nvcc: NVIDIA" in t:
        platform = "nvidia"
    elif re.search(r"(AMD clang version|clang version .*roc-|AMD LLVM|amdgcn)", t):
        platform = "amd"
    else:
        platform = None
    return [row("compilers", source, name="hipcc", version=m.group(1), platform=platform,
                cuda_version=cuda.group(1) if cuda else None)]


_HIPLIB = re.compile(r"^libamdhip64\.so\.(\d+\.\d+\.\d+)$")


def _hip_runtime_rows(system: System, libdir: str, seen: set[str]) -> list[Row]:
    """runtimes + libraries rows for each libamdhip64.so.X.Y.Z in libdir not already seen (by real path)."""
    out: list[Row] = []
    for fn in system.listdir(libdir):
        m = _HIPLIB.match(fn)
        if not m:  # a system library directory holds thousands of files: resolve only the matches
            continue
        real = system.realpath(f"{libdir}/{fn}")
        if real not in seen:
            seen.add(real)
            out.append(row("runtimes", f"{libdir}/{fn}", vendor="amd", name="hip-runtime",
                           version=m.group(1), path=f"{libdir}/{fn}", origin="system"))
            out.append(row("libraries", f"{libdir}/{fn}", name="amdhip64", version=m.group(1),
                           path=f"{libdir}/{fn}", origin="system"))
    return out


def probe_rocm_install(system: System) -> Iterable[Row]:
    """ROCm releases installed (/opt/rocm*, distro packages), the HIP runtime library, MIOpen."""
    rows: list[Row] = []
    seen_hip: set[str] = set()
    for tree in _rocm_trees(system):
        info = system.read_text(f"{tree}/.info/version", limit=256)
        ver = None
        if info and info.strip():
            ver = info.strip().split("-")[0]
        else:
            m = re.search(r"rocm-(\d+\.\d+(?:\.\d+)?)$", tree)
            ver = m.group(1) if m else None
        if tree == "/opt/rocm":
            target = system.realpath("/opt/rocm") if system.readlink("/opt/rocm") else None
            src = f"{tree}/.info/version" + (f" (/opt/rocm -> {target})" if target and target != tree else "")
        else:
            src = f"{tree}/.info/version" if info else tree
        if ver:
            rows.append(row("runtimes", src, vendor="amd", name="rocm", version=ver, path=tree, origin="system"))
        for libdir in (f"{tree}/lib", f"{tree}/hip/lib"):
            rows.extend(_hip_runtime_rows(system, libdir, seen_hip))
            for fn in system.listdir(libdir):
                mv = miopen_version_from_soname(fn)
                if mv:
                    hdr = system.read_text(f"{tree}/include/miopen/version.h", limit=65536)
                    own = parse_miopen_version_h(hdr) if hdr else None
                    rows.append(row("libraries", f"{libdir}/{fn}", name="miopen", version=own or mv,
                                    path=f"{libdir}/{fn}", origin="system"))
    for libdir in LIB_DIRS:
        rows.extend(_hip_runtime_rows(system, libdir, seen_hip))
    status = system.read_text("/var/lib/dpkg/status", limit=64 * 1024 * 1024)
    if status:
        have_rocm = {r["path"] for r in rows if r.table == "runtimes" and r["name"] == "rocm"}
        for r in parse_dpkg(status, "/var/lib/dpkg/status"):
            if r.table == "drivers" or (r.table == "runtimes" and r["path"] in have_rocm):
                continue  # the amdgpu-dkms package row comes from its own probe
            rows.append(r)
    return rows


def probe_hipconfig(system: System) -> Iterable[Row]:
    exe = _find_tool(system, "hipconfig")
    if not exe:
        return []
    res = system.run([exe, "--full"], timeout=CMD_TIMEOUT)
    if res.error != "timeout" and (not res.ok or "HIP version" not in res.stdout):
        res2 = system.run([exe, "--version"], timeout=CMD_TIMEOUT)
        if res2.ok:
            res = res2
    if not res.ok:
        raise ProbeFailed(res.describe(), "timeout" if res.error == "timeout" else "error")
    rows = parse_hipconfig(res.stdout, f"{exe} --full")
    return [Row(r.table, {**r.values, "path": exe} if r.table == "compilers" else r.values, r.source)
            for r in rows]


def probe_hipcc(system: System) -> Iterable[Row]:
    """hipcc's HIP version and platform.  hipcc and hipconfig in one bin directory come from one
    package and read the same version file and platform settings, so there hipconfig's answer is used
    for hipcc instead of spawning a second Perl script (that each run nvcc --version again)."""
    exe = _find_tool(system, "hipcc")
    if not exe:
        return []
    cfg = _find_tool(system, "hipconfig")
    if cfg and os.path.dirname(cfg) == os.path.dirname(exe) and not system.environ.get("GPUVET_RUN_HIPCC"):
        res = system.run([cfg, "--full"], timeout=CMD_TIMEOUT)
        if res.ok and "HIP version" in res.stdout:
            return [Row("compilers", {**r.values, "name": "hipcc", "path": exe},
                        f"{cfg} --full (hipcc in the same directory)")
                    for r in parse_hipconfig(res.stdout, f"{cfg} --full") if r.table == "compilers"]
    res = system.run([exe, "--version"], timeout=CMD_TIMEOUT)
    if not res.ok:
        raise ProbeFailed(res.describe(), "timeout" if res.error == "timeout" else "error")
    return [Row(r.table, {**r.values, "path": exe}, r.source)
            for r in parse_hipcc_version(res.output, f"{exe} --version")]


PROBES: list[Probe] = [
    Probe("amd-rocm-install", ("runtimes", "libraries"), probe_rocm_install,
          "/opt/rocm*/.info/version, libamdhip64.so.X.Y.Z, libMIOpen, /var/lib/dpkg/status"),
    Probe("amd-hipconfig", ("compilers",), probe_hipconfig, "hipconfig --full"),
    Probe("amd-hipcc", ("compilers",), probe_hipcc, "hipcc --version"),
]
