"""Versions in the transcripts of package managers and Python packaging tools, as users paste them (pure).

Where ``probes.mentions`` reads the listings (``dpkg -l``, ``apt list``, ``rpm -qa``, ``pip list``), this module reads
what the same tools print while they work or when asked about one package, each in its upstream format:

* dpkg's progress lines, ``Unpacking rocm-core (5.6.1.50601-93~22.04) ...`` and ``Setting up rocm-core (...) ...``
  (dpkg src/main/unpack.c and configure.c: ``"Unpacking %s (%s) ..."``, ``"Setting up %s (%s) ..."``; ``over (OLD)``
  names the version replaced), undone by a later ``Removing rocm-core (...) ...``;
* apt's ``rocm-hip-runtime is already the newest version (5.6.1.50601-93~22.04).`` (apt-private/private-install.cc);
* a package's info paragraph, ``Name : rocm-core`` then ``Version : 5.6.1.50601`` (``dnf info``, ``yum info``,
  ``rpm -qi``, ``zypper info``; dnf/cli/output.py infoOutput), not under dnf's ``Available Packages`` heading;
* torch's version from Python packaging tools: ``pip list --format=json`` (``{"name": "torch", "version": ...}``,
  pip's list.py format_for_json), ``poetry show torch`` (`` name : torch`` / `` version : X``, poetry's show.py),
  ``Pipfile.lock`` (``"torch": {... "version": "==X" ...}``), and ``pip show torch`` whose ``Version:`` line comes
  below the command (``pip show torch | grep Version``);
* ``dpkg-query -W`` (``rocm-core<TAB>5.6.1.50601-93~22.04``), ``zypper se -si`` rows with status ``i``/``i+``, and ``dpkg -s`` /
  ``rpm -qi`` of a ROCm package with its ``Version:`` line filtered below the command;
* rocminfo's ``Runtime Version: 1.1`` and hipcc's ``HIP version: 5.6.31062`` quoted inside a sentence ("rocminfo says
  Runtime Version: 1.1 but hipcc says HIP version: 5.6.31062"): RTM028 explains that the two are not comparable.

The ROCm meta packages' versions are AMD's ``X.Y.Z.NNNNN`` (the 5-digit field is the release); HIP's packages carry
HIP's numbering with the release in the build field (``hip-runtime-amd 5.6.31062.50601``).
"""
from __future__ import annotations

import re

from gpuvet.model import Row, row

from . import dpkg
from .mentions import ROCM_META, TORCH_VER, _rocm_from_build, _rocm_meta_release, _snippet, _torch_row

_ROCM_PKG = r"(rocm-core|rocm-hip-runtime|rocm-hip-sdk|rocm-hip-libraries|rocm-dev|rocm-libs|rocm-utils|rocm-language-runtime|rocm-ml-sdk|hip-runtime-amd|hip-devel|hip-dev)"
DPKG_PROGRESS_RE = re.compile(r"^(Unpacking|Setting up|Removing|Purging configuration files for) " + _ROCM_PKG
                              + r"(?::\w+)? \((\d[\w.:~+-]*)\)(?: over \([\w.:~+-]+\))? \.\.\.\s*$")
APT_NEWEST_RE = re.compile(r"^" + _ROCM_PKG + r"(?::\w+)? is already the newest version \((\d[\w.:~+-]*)\)\.?\s*$")
INFO_NAME_RE = re.compile(r"^Name\s*:\s*" + _ROCM_PKG + r"\s*$")
INFO_VERSION_RE = re.compile(r"^Version\s*:\s*(\d[\w.:~+-]*)\s*$")
# dpkg-query -W's default format "${binary:Package}\t${Version}" (dpkg-query(1)); zypper search -si's table
# "i+ | rocm-core | package | 5.6.1.50601-sles155.93 | x86_64 | rocm" (status i / i+: installed)
DPKG_QUERY_RE = re.compile(r"^" + _ROCM_PKG + r"(?::\w+)?\t(\d[\w.:~+-]*)\s*$")
ZYPPER_ROW_RE = re.compile(r"^i\+?[ \t]*\|[ \t]*" + _ROCM_PKG + r"[ \t]*\|[ \t]*package[ \t]*\|[ \t]*(\d[\w.:~+-]*)[ \t]*\|")
# a package manager asked about one installed package, its Version field filtered below the command ("dpkg -s
# rocm-core | grep Version", "rpm -qi rocm-core | grep Version")
# (only the tools that describe the installed package: apt show, dnf info and zypper info show candidates too)
PKG_SHOW_CMD_RE = re.compile(r"\b(?:dpkg(?:-query)?[ \t]+(?:-s|--status)|rpm[ \t]+-qi)[ \t]+(?:--\S+[ \t]+)*" + _ROCM_PKG
                             + r"(?![\w.-])")
INFO_AVAILABLE_RE = re.compile(r"^(Available|Installed) Packages\s*$")
# torch in Python packaging tools' own formats
JSON_TORCH_RE = re.compile(r"\{\s*\"name\"\s*:\s*\"(?:py)?torch\"\s*,\s*\"version\"\s*:\s*\"" + TORCH_VER + r"\"")
POETRY_NAME_RE = re.compile(r"^\s*name\s*:\s*torch\s*$")
POETRY_VERSION_RE = re.compile(r"^\s*version\s*:\s*" + TORCH_VER + r"\s*$")
PIPFILE_KEY_RE = re.compile(r"^\s*\"torch\"\s*:\s*\{\s*$")
PIPFILE_VERSION_RE = re.compile(r"^\s*\"version\"\s*:\s*\"==" + TORCH_VER + r"\"\s*,?\s*$")
PIP_SHOW_CMD_RE = re.compile(r"\bpip3?\s+show\s+(?:py)?torch(?![\w.-])")
PIP_SHOW_VERSION_RE = re.compile(r"^Version:\s*" + TORCH_VER + r"\s*$")

# a tool's answer quoted in a sentence: "rocminfo says Runtime Version: 1.1 but hipcc says HIP version: 5.6.31062"
# (rocminfo's "Runtime Version:" field, hipcc --version's "HIP version: X" banner line, in the words of a chat)
INLINE_ROCMINFO_RE = re.compile(r"\brocminfo\b[^\n]{0,60}?\bRuntime Version:?[ \t]*(1\.\d{1,2})(?![\w.])")
INLINE_HIPCC_RE = re.compile(r"\bhipcc\b[^\n]{0,40}?\bHIP version:?[ \t]*(\d+\.\d+\.\d{4,6})(?:-[0-9a-f]+)?(?![\w.])")

_ANY = re.compile(r"^(?:rocm|hip)-[a-z-]+(?::\w+)?\t\d|^i\+?[ \t]*\|[ \t]*(?:rocm|hip)-|(?:-s|--status|-qi)[ \t]+(?:--\S+[ \t]+)*(?:rocm|hip)-"
                  r"|^(?:Unpacking|Setting up) (?:rocm|hip)-|is already the newest version \(|^Name[ \t]*:[ \t]*(?:rocm|hip)-"
                  r"|\"name\"[ \t]*:[ \t]*\"(?:py)?torch\"|^[ \t]*name[ \t]*:[ \t]*torch[ \t]*$|^[ \t]*\"torch\"[ \t]*:[ \t]*\{|\bpip3?[ \t]+show[ \t]+(?:py)?torch"
                  r"|\brocminfo\b[^\n]{0,60}?\bRuntime Version|\bhipcc\b[^\n]{0,40}?\bHIP version",
                  re.M)


def _release(pkg: str, version: str) -> str | None:
    """The ROCm release a ROCm package's version names: rocm-core / the meta packages 5.6.1.50601 -> 5.6.1; HIP's
    packages 5.6.31062.50601 -> 5.6.1 (the 5-digit build field)."""
    up = dpkg.upstream_version(version) if ("-" in version or ":" in version or "~" in version) else version
    if pkg.startswith("hip-"):
        return _rocm_from_build(up)
    if pkg == "rocm-core" or pkg in ROCM_META:
        rel = _rocm_meta_release(up + "-0")
        return rel if rel and rel.count(".") == 2 else None
    return None


def parse_transcripts(text: str, source: str) -> list[Row]:
    lines = text.splitlines()
    installed: dict[str, tuple[str, int, str]] = {}  # package -> (version, line, what)
    torch: list[tuple[str, int, str]] = []
    inline: list[Row] = []
    section = ""
    for i, raw in enumerate(lines):
        n = i + 1
        line = raw.strip()
        if not line or len(line) > 2000:
            continue
        m = DPKG_PROGRESS_RE.match(line)
        if m:
            verb, pkg, ver = m.groups()
            if verb.startswith(("Removing", "Purging")):
                installed.pop(pkg, None)
            elif verb == "Setting up" or pkg not in installed:
                installed[pkg] = (ver, n, f"dpkg: {_snippet(line, 80)}")
            continue
        m = APT_NEWEST_RE.match(line)
        if m:
            installed[m.group(1)] = (m.group(2), n, f"apt: {_snippet(line, 80)}")
            continue
        m = DPKG_QUERY_RE.match(raw.rstrip()) or ZYPPER_ROW_RE.match(line)
        if m:
            installed.setdefault(m.group(1), (m.group(2), n, f"package query: {_snippet(line, 80)}"))
            continue
        m = PKG_SHOW_CMD_RE.search(line)
        if m and not line.startswith("#"):
            for j in range(i + 1, min(len(lines), i + 4)):
                nxt = lines[j].strip()
                if nxt.startswith(("$", "#", "Package:", "Name")):
                    break  # the next command, or a whole paragraph (read by the listing readers)
                vm = INFO_VERSION_RE.match(nxt)
                if vm:
                    installed.setdefault(m.group(1), (vm.group(1), j + 1, f"{_snippet(line, 60)}: Version: {vm.group(1)}"))
                    break
        m = INFO_AVAILABLE_RE.match(line)
        if m:
            section = m.group(1)
            continue
        m = INFO_NAME_RE.match(line)
        if m and section != "Available":
            for j in range(i + 1, min(len(lines), i + 4)):
                vm = INFO_VERSION_RE.match(lines[j].strip())
                if vm:
                    installed[m.group(1)] = (vm.group(1), j + 1, f"package info: Name : {m.group(1)}, "
                                                                 f"Version : {vm.group(1)}")
                    break
            continue
        if "rocminfo" in line and "Runtime Version" in line and not line.startswith(("#", "$")):
            m = INLINE_ROCMINFO_RE.search(line)
            if m:
                inline.append(row("runtimes", f"{source} line {n} (rocminfo, quoted: {_snippet(line, 80)})",
                                  vendor="amd", name="hsa-runtime", version=m.group(1), path="", origin="pasted"))
        if "hipcc" in line and "HIP version" in line and not line.startswith("HIP version"):
            m = INLINE_HIPCC_RE.search(line)
            if m:
                inline.append(row("compilers", f"{source} line {n} (hipcc --version, quoted: {_snippet(line, 80)})",
                                  name="hipcc", version=m.group(1), platform="amd", cuda_version=None))
        if "torch" in line:
            for jm in JSON_TORCH_RE.finditer(line):
                torch.append((jm.group(1), n, f"pip list --format=json: \"torch\" {jm.group(1)}"))
            if POETRY_NAME_RE.match(line):
                for j in range(i + 1, min(len(lines), i + 3)):
                    vm = POETRY_VERSION_RE.match(lines[j])
                    if vm:
                        torch.append((vm.group(1), j + 1, f"package info: name : torch, version : {vm.group(1)}"))
                        break
            elif PIPFILE_KEY_RE.match(line):
                for j in range(i + 1, min(len(lines), i + 12)):
                    nxt = lines[j].strip()
                    if nxt.startswith("}"):
                        break
                    vm = PIPFILE_VERSION_RE.match(nxt)
                    if vm:
                        torch.append((vm.group(1), j + 1, f"lock file: \"torch\" =={vm.group(1)}"))
                        break
            elif PIP_SHOW_CMD_RE.search(line) and "Version:" not in line:
                for j in range(i + 1, min(len(lines), i + 4)):
                    nxt = lines[j].strip()
                    if nxt.startswith(("Name:", "$", "#", ">>>")):
                        break  # another package's paragraph (mentions reads a whole one), or the next command
                    vm = PIP_SHOW_VERSION_RE.match(nxt)
                    if vm:
                        torch.append((vm.group(1), j + 1, f"pip show torch: Version: {vm.group(1)}"))
                        break
    out: list[Row] = list(inline)
    releases: dict[str, tuple[int, str]] = {}
    for pkg, (ver, n, what) in installed.items():
        rel = _release(pkg, ver)
        if rel:
            releases.setdefault(rel, (n, what))
    if len(releases) == 1:  # one release installed, however many of its packages are shown
        rel, (n, what) = next(iter(releases.items()))
        out.append(row("runtimes", f"{source} line {n} ({what})", vendor="amd", name="rocm", version=rel,
                       path="/opt/rocm", origin="pasted"))
    if len({v for v, _, _ in torch}) == 1:
        v, n, what = torch[0]
        out.append(_torch_row(v, f"{source} line {n} ({what})"))
    return out
