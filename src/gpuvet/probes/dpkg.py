"""Probes: Debian package database (/var/lib/dpkg/status, dpkg -l): AMD/ROCm packages and their upstream versions.

Pure ``parse_*`` functions turn a tool's text into rows (also used for pasted text); live
probes read files first and run commands only with a short time-out, through ``System``.
"""
from __future__ import annotations

import re
from typing import Iterable

from gpuvet.model import Row, row

from .base import Probe
from .system import System
from ..model.lazyre import lazy

# ---------------------------------------------------------------------------------------------------
# dpkg status (read directly, no dpkg-query spawn)
AMD_DPKG = lazy(r"^(hipcc|libamdhip64-\d+|libamdhip64-dev|rocminfo|rocm-smi|rocm-core|"
                      r"libmiopen\S*|miopen-hip\S*|librocblas\S*|rocblas\S*|libhsa-runtime64-\d+|"
                      r"amdgpu-dkms|rocm-hip-runtime|hip-runtime-amd)$")


def parse_dpkg_status(text: str) -> dict[str, str]:
    """/var/lib/dpkg/status -> {package: version} for installed AMD GPU packages."""
    out: dict[str, str] = {}
    text = "\n" + (text or "")
    # one scan for the Package lines (a status file holds thousands of paragraphs); only the few
    # paragraphs of AMD GPU packages are looked into
    at = text.find("\nPackage:")
    while at >= 0:
        nxt = text.find("\nPackage:", at + 9)
        line_end = text.find("\n", at + 9)
        name = text[at + 9:line_end if line_end >= 0 else len(text)].strip()
        if AMD_DPKG.match(name):
            start = text.rfind("\n\n", 0, at + 1)
            end = text.find("\n\n", at + 1)
            para = text[start + 1 if start >= 0 else 0:end if end >= 0 else len(text)]
            ver = re.search(r"^Version:[ \t]*(\S+)", para, re.M)
            st = re.search(r"^Status:[ \t]*(.+)$", para, re.M)
            if ver and not (st and "installed" not in st.group(1).split()[-1:]):
                out[name] = ver.group(1)
        at = nxt
    return out


def parse_dpkg_list(text: str) -> dict[str, str]:
    """'ii name version' lines (dpkg -l / dpkg-query output users paste) -> {package: version}."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^ii[ \t]+(\S+?)(?::\w+)?[ \t]+(\S+)", text or "", re.M):
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


def probe_amdgpu_dkms(system: System) -> Iterable[Row]:
    """The amdgpu-dkms package (installed, not necessarily loaded): a drivers row with flavor
    'dkms-package' so checks can tell 'installed' from 'loaded'.  Its version is the package's
    upstream version, e.g. '6.8.5.60200' (driver 6.8.5 built for ROCm 6.2.0)."""
    status = system.read_text("/var/lib/dpkg/status", limit=64 * 1024 * 1024)
    if not status:
        return []
    return [r for r in parse_dpkg(status, "/var/lib/dpkg/status") if r.table == "drivers"]


PROBES: list[Probe] = [
    Probe("amd-dkms-package", ("drivers",), probe_amdgpu_dkms, "amdgpu-dkms package in /var/lib/dpkg/status"),
]
