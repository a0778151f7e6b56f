"""Probes: AMD ROCm stack (amdgpu/ROCk kernel driver, KFD topology, ROCm trees and distro packages,
HIP runtime, rocminfo, hipconfig/hipcc, rocm-smi/amd-smi, MIOpen and its databases).

Pure parse functions (``parse_*``) turn a tool's text into rows; they are also used for pasted text.
Live probes read files first (sysfs, /opt/rocm*/.info/version, /var/lib/dpkg/status, library file
names) and run commands only with a short time-out, through :class:`~gpuvet.probes.system.System`.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from packaging.version import InvalidVersion, Version

from gpuvet.model import Row, row

from .base import Probe, ProbeFailed
from .system import System

CMD_TIMEOUT = 2.5
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_GFX_NAME = re.compile(r"\bgfx([0-9a-f]{3,6})\b", re.I)


# ---------------------------------------------------------------------------------------------------
# small helpers
def _clean(text: str) -> str:
    return _ANSI.sub("", text or "").replace("\r", "")


def gfx_from_target_version(value: int | str | None) -> str | None:
    """KFD ``gfx_target_version`` (major*10000 + minor*100 + stepping, e.g. 90010) -> 'gfx90a'.

    The minor version and stepping are written as hexadecimal digits in the target name:
    90010 -> gfx90a, 90402 -> gfx942, 100300 -> gfx1030, 110001 -> gfx1101.  0 (a CPU node) -> None.
    """
    try:
        v = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    if v <= 0:
        return None
    major, minor, step = v // 10000, (v // 100) % 100, v % 100
    if minor > 15 or step > 15 or major <= 0:
        return None
    return f"gfx{major}{minor:x}{step:x}"




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


def _arch(text: str | None) -> str | None:
    if not text:
        return None
    m = _GFX_NAME.search(text)
    return ("gfx" + m.group(1).lower()) if m else None


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


def _fmt_bytes_mib(n: int | None) -> int | None:
    return None if n is None else int(n // (1024 * 1024))


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


def parse_rocminfo(text: str, source: str) -> list[Row]:
    """rocminfo output -> hsa-runtime version, GPU agents and the ROCk module line."""
    t = _clean(text)
    rows: list[Row] = []
    if re.search(r"ROCk module is NOT loaded", t):
        return []
    rows.extend(parse_rock_module(t, source))
    m = re.search(r"^\s*Runtime Version:\s*(\S+)", t, re.M)
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
        dtype = re.search(r"^\s*Device Type:\s*(\S+)", block, re.M)
        name = re.match(r"^\s*Name:\s*(.+?)\s*$", lines_[0])
        mkt = re.search(r"^\s*Marketing Name:[ \t]*(.*?)\s*$", block, re.M)
        isa = re.search(r"amdgcn-amd-amdhsa--(gfx[0-9a-f]+)", block)
        node = re.search(r"^\s*Node:\s*(\d+)", block, re.M)
        mem = None
        pool = re.search(r"Segment:\s*GLOBAL; FLAGS: COARSE GRAINED\s*\n\s*Size:\s*(\d+)\(0x[0-9a-f]+\)\s*KB",
                         block, re.I)
        if pool:
            mem = int(pool.group(1)) // 1024
        bdf = re.search(r"^\s*BDFID:\s*(\d+)", block, re.M)
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


# ---------------------------------------------------------------------------------------------------
# hipconfig / hipcc
_NVCC_REL = re.compile(r"Cuda compilation tools, release (\d+\.\d+)")


def _platform_from_text(t: str) -> str | None:
    m = re.search(r"^HIP_PLATFORM\s*:\s*(\S+)", t, re.M)
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
    rocm_path = re.search(r"^ROCM_PATH\s*:\s*(\S+)", t, re.M)
    rows = [row("compilers", source, name="hipconfig", version=version, platform=platform,
                cuda_version=cuda.group(1) if cuda else None)]
    if rocm_path:
        mv = re.search(r"rocm-(\d+\.\d+(?:\.\d+)?)", rocm_path.group(1))
        if mv:
            rows.append(row("runtimes", source, vendor="amd", name="rocm", version=mv.group(1),
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
    m = re.search(r"^Driver version:\s*(\S+)", t, re.M)
    if m:
        ver = m.group(1)
        # the inbox driver reports the kernel release (6.10.0-061000rc1-generic)
        inbox = bool(re.search(r"\d+\.\d+\.\d+-", ver)) or "generic" in ver
        rows.append(row("drivers", source, vendor="amd", component="kernel-module", version=ver,
                        flavor="inbox" if inbox else "dkms"))
    gpus: dict[int, dict] = {}
    for g, key, val in re.findall(r"^GPU\[(\d+)\]\s*:\s*([^:\n]+?):\s*(.*?)\s*$", t, re.M):
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
        rows.append(row("runtimes", source, vendor="amd", name="rocm", version=m.group(1),
                        origin="pasted" if source.startswith("<") else "system"))
    m = re.search(r"amdgpu version:\s*([0-9][0-9.]*)", t)
    if m:
        rows.append(row("drivers", source, vendor="amd", component="kernel-module", version=m.group(1),
                        flavor="dkms"))
    blocks = re.split(r"^GPU:\s*(\d+)\s*$", t, flags=re.M)
    for i in range(1, len(blocks) - 1, 2):
        idx, body = int(blocks[i]), blocks[i + 1]
        name = re.search(r"^\s*MARKET_NAME:\s*(.*?)\s*$", body, re.M)
        tgv = re.search(r"^\s*TARGET_GRAPHICS_VERSION:\s*(\S+)", body, re.M)
        bdf = re.search(r"^\s*BDF:\s*(\S+)", body, re.M)
        size = re.search(r"^\s*VRAM:\s*\n(?:\s+\w+:.*\n)*?\s+SIZE:\s*(\d+)\s*MB", body, re.M)
        drv = re.search(r"^\s*DRIVER:\s*\n\s+NAME:\s*amdgpu\s*\n\s+VERSION:\s*(\S+)", body, re.M)
        if drv and not any(r.table == "drivers" for r in rows):
            rows.append(row("drivers", source, vendor="amd", component="kernel-module",
                            version=drv.group(1), flavor="dkms"))
        rows.append(row("gpu_devices", source, vendor="amd", index=idx,
                        name=name.group(1) if name and name.group(1) else None,
                        arch=_arch(tgv.group(1)) if tgv else None,
                        memory_mib=int(size.group(1)) if size else None,
                        pci_bus=bdf.group(1) if bdf else None))
    return rows


# ---------------------------------------------------------------------------------------------------
# dpkg status (read directly, no dpkg-query spawn)
AMD_DPKG = re.compile(r"^(hipcc|libamdhip64-\d+|libamdhip64-dev|rocminfo|rocm-smi|rocm-core|"
                      r"libmiopen\S*|miopen-hip\S*|librocblas\S*|rocblas\S*|libhsa-runtime64-\d+|"
                      r"amdgpu-dkms|rocm-hip-runtime|hip-runtime-amd)$")


def parse_dpkg_status(text: str) -> dict[str, str]:
    """/var/lib/dpkg/status -> {package: version} for installed AMD GPU packages."""
    out: dict[str, str] = {}
    for para in (text or "").split("\n\n"):
        pkg = re.search(r"^Package:\s*(\S+)", para, re.M)
        ver = re.search(r"^Version:\s*(\S+)", para, re.M)
        st = re.search(r"^Status:\s*(.+)$", para, re.M)
        if not pkg or not ver or not AMD_DPKG.match(pkg.group(1)):
            continue
        if st and "installed" not in st.group(1).split()[-1:]:
            continue
        out[pkg.group(1)] = ver.group(1)
    return out


def parse_dpkg_list(text: str) -> dict[str, str]:
    """'ii name version' lines (dpkg -l / dpkg-query output users paste) -> {package: version}."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^ii\s+(\S+?)(?::\w+)?\s+(\S+)", text or "", re.M):
        if AMD_DPKG.match(m.group(1)):
            out[m.group(1)] = m.group(2)
    return out


def upstream_version(deb_version: str) -> str:
    """Debian version -> upstream: '5.2.3-8' -> '5.2.3', '1:6.8.5.60200-2009582.24.04' -> '6.8.5.60200',
    '6.1.0.60100-82~22.04' -> '6.1.0.60100', '5.2.3+dfsg-1' -> '5.2.3'."""
    v = deb_version.split(":", 1)[-1]
    v = v.rsplit("-", 1)[0] if "-" in v else v
    return re.split(r"[+~]", v)[0]


def dpkg_rows(pkgs: dict[str, str], source: str) -> list[Row]:
    rows: list[Row] = []
    core = pkgs.get("rocm-core")
    hip = next((v for k, v in sorted(pkgs.items()) if re.match(r"libamdhip64-\d+$", k)), None)
    if core:
        up = upstream_version(core)
        rel = ".".join(up.split(".")[:3])
        rows.append(row("runtimes", source, vendor="amd", name="rocm", version=rel, path="/opt/rocm",
                        origin="system"))
    elif hip:  # Debian/Ubuntu's own ROCm packages under /usr
        rows.append(row("runtimes", source, vendor="amd", name="rocm", version=upstream_version(hip),
                        path="/usr", origin="system"))
    hiprt = pkgs.get("hip-runtime-amd")  # AMD's packages: 6.0.32831.60002-115~22.04 -> HIP 6.0.32831
    if hiprt:
        up = upstream_version(hiprt)
        rows.append(row("runtimes", source, vendor="amd", name="hip-runtime", version=".".join(up.split(".")[:3]),
                        path="hip-runtime-amd (package)", origin="system"))
    for name, lib in (("miopen", r"(libmiopen|miopen-hip)"), ("rocblas", r"(librocblas|rocblas)")):
        for k, v in sorted(pkgs.items()):
            if re.match(lib, k) and not k.endswith("-dev") and not k.endswith("-doc"):
                up = upstream_version(v)
                parts = up.split(".")
                if len(parts) == 4 and len(parts[3]) == 5:  # AMD's 3.00.0.60002: drop the ROCm build
                    up = ".".join(parts[:3])
                rows.append(row("libraries", source, name=name, version=up, path=k, origin="system"))
                break
    return rows


def parse_dpkg(text: str, source: str) -> list[Row]:
    """Installed AMD GPU packages, from ``dpkg -l`` lines ('ii  rocm-core  6.0.2.60002-115~22.04 ...')
    or /var/lib/dpkg/status paragraphs: the ROCm release (rocm-core, or Debian's libamdhip64-N), the
    HIP runtime (hip-runtime-amd), MIOpen and rocBLAS packages, and the amdgpu-dkms driver package
    (a drivers row with flavor 'dkms-package': installed, not necessarily loaded)."""
    pkgs = parse_dpkg_status(text) if re.search(r"^Package:", text or "", re.M) else parse_dpkg_list(text)
    rows = dpkg_rows(pkgs, source)
    if "amdgpu-dkms" in pkgs:
        rows.append(row("drivers", f"{source} (amdgpu-dkms)", vendor="amd", component="kernel-module",
                        version=upstream_version(pkgs["amdgpu-dkms"]), flavor="dkms-package"))
    return rows


def amdgpu_dkms_version(pkgs: dict[str, str]) -> tuple[str, str | None] | None:
    """amdgpu-dkms '1:6.8.5.60200-2009582.24.04' -> ('6.8.5', '6.2.0'); from ROCm 7 on the build
    field names the AMD GPU driver release ('1:6.16.13.30300100-...') -> ('6.16.13', None)."""
    v = pkgs.get("amdgpu-dkms")
    if not v:
        return None
    up = upstream_version(v)
    m = re.match(r"(\d+\.\d+\.\d+)\.(\d+)$", up)
    if not m:
        return (up, None)
    build = m.group(2)
    rel = None
    if len(build) == 5:  # 60200 -> 6.2.0, 50500 -> 5.5.0
        n = int(build)
        rel = f"{n // 10000}.{(n // 100) % 100}.{n % 100}"
    return (m.group(1), rel)


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
        kv = dict(re.findall(r"^(\w+)\s+(\S+)", props, re.M))
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
            bkv = dict(re.findall(r"^(\w+)\s+(\S+)", bp, re.M))
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
    """AMD display-class PCI functions (vendor 0x1002, class 0x03xxxx): GPUs whether or not a driver
    is bound.  Rows carry no arch; ``name`` says 'AMD GPU <device id>'."""
    rows: list[Row] = []
    for dev in system.glob("/sys/bus/pci/devices/*"):
        vendor = (system.read_text(f"{dev}/vendor", limit=32) or "").strip().lower()
        if vendor != "0x1002":
            continue
        cls = (system.read_text(f"{dev}/class", limit=32) or "").strip().lower()
        if not cls.startswith("0x03"):
            continue
        did = (system.read_text(f"{dev}/device", limit=32) or "").strip().lower()
        rows.append(row("gpu_devices", f"{dev}/class", vendor="amd", index=len(rows),
                        name=f"AMD GPU [1002:{did[2:] if did.startswith('0x') else did}] (PCI)",
                        pci_bus=os.path.basename(dev)))
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


LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/aarch64-linux-gnu")
_HIPLIB = re.compile(r"^libamdhip64\.so\.(\d+\.\d+\.\d+)$")
_MIOPENLIB = re.compile(r"^libMIOpen\.so\.(\d+)\.(\d+)\.(\d+)$")


def miopen_version_from_soname(name: str) -> str | None:
    """libMIOpen.so.1.0.60100 -> 'rocm-6.1.0'.  AMD's ROCm packages name the file
    1.0.<ROCm build number> (/opt/rocm-6.2.1/lib/libMIOpen.so.1.0.60201, /opt/rocm-6.4.4/lib/
    libMIOpen.so.1.0.60404), so the last field is the ROCm release it shipped with, not MIOpen's
    own version (3.1.0 in ROCm 6.1); that one comes from include/miopen/version.h."""
    m = _MIOPENLIB.match(name)
    if not m:
        return None
    build = m.group(3)
    if len(build) == 5:
        n = int(build)
        return f"rocm-{n // 10000}.{(n // 100) % 100}.{n % 100}"
    return ".".join(m.groups())


def parse_miopen_version_h(text: str) -> str | None:
    vals = {}
    for k in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"#define\s+MIOPEN_VERSION_{k}\s+(\d+)", text or "")
        if not m:
            return None
        vals[k] = m.group(1)
    return f"{vals['MAJOR']}.{vals['MINOR']}.{vals['PATCH']}"


def _rocm_trees(system: System) -> list[str]:
    trees = [p for p in system.glob("/opt/rocm-*") if re.search(r"/opt/rocm-\d", p)]
    if system.exists("/opt/rocm"):
        trees.append("/opt/rocm")
    rp = system.environ.get("ROCM_PATH")
    if rp and rp.rstrip("/") not in trees and system.exists(rp):
        trees.append(rp.rstrip("/"))
    return trees


def _hip_runtime_rows(system: System, libdir: str, seen: set[str]) -> list[Row]:
    """runtimes + libraries rows for each libamdhip64.so.X.Y.Z in libdir not already seen (by real path)."""
    out: list[Row] = []
    for fn in system.listdir(libdir):
        m = _HIPLIB.match(fn)
        real = system.realpath(f"{libdir}/{fn}")
        if m and real not in seen:
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


def probe_amdgpu_dkms(system: System) -> Iterable[Row]:
    """The amdgpu-dkms package (installed, not necessarily loaded): a drivers row with flavor
    'dkms-package' so checks can tell 'installed' from 'loaded'.  Its version is the package's
    upstream version, e.g. '6.8.5.60200' (driver 6.8.5 built for ROCm 6.2.0)."""
    status = system.read_text("/var/lib/dpkg/status", limit=64 * 1024 * 1024)
    if not status:
        return []
    return [r for r in parse_dpkg(status, "/var/lib/dpkg/status") if r.table == "drivers"]


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


def _no_amd_gpu(system: System) -> bool:
    """True only when the PCI bus is readable and has no AMD display device (then "no AMD GPU" is a
    fact, not a guess); False when it has one or cannot be read."""
    return bool(system.glob("/sys/bus/pci/devices/*")) and not _pci_amd_gpus(system)


def _find_tool(system: System, name: str) -> str | None:
    exe = system.which(name)
    if exe:
        return exe
    for tree in _rocm_trees(system):
        if system.exists(f"{tree}/bin/{name}"):
            return f"{tree}/bin/{name}"
    return None


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


def _writable(system: System, path: str) -> bool:
    """Writable if it exists and is writable, or can be created (nearest existing parent writable)."""
    p = path.rstrip("/") or "/"
    if system.exists(p):
        return system.access(p, os.W_OK)
    parent = os.path.dirname(p)
    while parent and parent != "/" and not system.exists(parent):
        parent = os.path.dirname(parent)
    return system.access(parent or "/", os.W_OK)


def _count(system: System, path: str, limit: int = 1000) -> int | None:
    if not system.is_dir(path):
        return None
    return min(len(system.listdir(path)), limit)


def probe_miopen_caches(system: System) -> Iterable[Row]:
    env = system.environ
    home = env.get("HOME") or "~"
    rows: list[Row] = []
    seen: set[str] = set()
    for tree in _rocm_trees(system):
        db = f"{tree}/share/miopen/db"
        real = system.realpath(db)
        if real in seen:
            continue
        has_miopen = system.exists(f"{tree}/share/miopen") or any(
            _MIOPENLIB.match(f) for f in system.listdir(f"{tree}/lib"))
        if not has_miopen:
            continue
        seen.add(real)
        rows.append(row("kernel_caches", db, name="miopen-system-db", path=db, exists=system.is_dir(db),
                        writable=False, files=_count(system, db)))
    user_db = env.get("MIOPEN_USER_DB_PATH") or f"{home}/.config/miopen/"
    cache = env.get("MIOPEN_CUSTOM_CACHE_DIR") or f"{home}/.cache/miopen/"
    for name, path, var in (("miopen-user-db", user_db, "MIOPEN_USER_DB_PATH"),
                            ("miopen-cache", cache, "MIOPEN_CUSTOM_CACHE_DIR")):
        src = f"${var}" if env.get(var) else f"{path} (default)"
        rows.append(row("kernel_caches", src, name=name, path=path, exists=system.is_dir(path),
                        writable=_writable(system, path), files=_count(system, path)))
    return rows


PROBES: list[Probe] = [
    Probe("amd-kernel-driver", ("drivers", "gpu_devices"), probe_kernel_driver,
          "amdgpu module version (/sys/module/amdgpu/version); AMD PCI display devices when there is no KFD"),
    Probe("amd-dkms-package", ("drivers",), probe_amdgpu_dkms, "amdgpu-dkms package in /var/lib/dpkg/status"),
    Probe("amd-rocm-install", ("runtimes", "libraries"), probe_rocm_install,
          "/opt/rocm*/.info/version, libamdhip64.so.X.Y.Z, libMIOpen, /var/lib/dpkg/status"),
    Probe("amd-rocminfo", ("runtimes", "gpu_devices", "drivers"), probe_rocminfo,
          "KFD topology (/sys/class/kfd/kfd/topology/nodes) and rocminfo"),
    Probe("amd-hipconfig", ("compilers",), probe_hipconfig, "hipconfig --full"),
    Probe("amd-hipcc", ("compilers",), probe_hipcc, "hipcc --version"),
    Probe("amd-smi", ("drivers", "runtimes"), probe_smi, "amd-smi / rocm-smi driver and ROCm versions (only with a KFD GPU)"),
    Probe("amd-miopen-caches", ("kernel_caches",), probe_miopen_caches,
          "MIOpen system db, user db (MIOPEN_USER_DB_PATH), cache (MIOPEN_CUSTOM_CACHE_DIR)"),
]
