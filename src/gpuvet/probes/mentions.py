"""Versions that pasted text names outside any one tool's full report (pure parsers).

A bug report rarely holds a whole ``collect_env``.  What it does hold are fragments that name a release
as plainly: a ROCm tree in a path (``/opt/rocm-5.6.1/share/miopen/db/...``, ``InstalledDir:
/opt/rocm-5.6.1/llvm/bin``), AMD clang's banner (``roc-5.6.1``), ``cat /opt/rocm/.info/version``,
``ls /opt``, ``apt list --installed`` / ``rpm -qa`` / ``pacman -Q`` lines of ROCm packages, ``dkms status``, a container
image tag (``rocm/pytorch:rocm5.6_ubuntu20.04_py3.8_pytorch_2.0.1``), a wheel file name or a ``pip list``
/ ``conda list`` / ``pip freeze`` line with ``+rocm5.7``, the output of ``python -c "import torch;
print(torch.__version__, torch.version.hip)"``, a lone ``rocminfo | grep "Runtime Version"``.

Each becomes the same fact row a live probe would give (``runtimes`` rocm / hip-runtime / hsa-runtime,
``framework_builds`` torch, ``drivers`` amdgpu, ``packages``), with ``origin="pasted"`` and a source that
says where in the text it was read (line number and the words that name the version), so a check's
evidence shows both sides of a mismatch and where each was read.

Rules, so that prose and unrelated numbers stay silent:
* a release counts only in the shape the tool prints it (a path component ``rocm-X.Y[.Z]`` after ``/opt/``,
  a package line with its version column, a tag after ``rocm/<image>:``), never a bare "ROCm 5.6" in prose;
* one row per (what, version): the first place it is seen is the evidence; later ones are counted.
"""
from __future__ import annotations

import re
from typing import Iterable

from gpuvet.model import Row, row

from . import dpkg
from .framework import channel_of, variant_of
from ..model.lazyre import lazy

_VER3 = r"\d+\.\d+(?:\.\d+)?"
# /opt/rocm-5.6.1/..., /opt/rocm-6.0.0, InstalledDir: /opt/rocm-5.6.1/llvm/bin ("/opt/rocm-5.6.1" then end or /)
ROCM_PATH_RE = lazy(r"(?<![\w.-])/opt/rocm-(" + _VER3 + r")(?![\w.])")
# AMD clang's banner: "AMD clang version 16.0.0 (https://github.com/RadeonOpenCompute/llvm-project roc-5.6.1 23332 ...)"
# (also collect_env's "Clang version: 16.0.0 (... roc-5.6.1 ...)")
CLANG_ROC_RE = lazy(r"clang version:? \d+\.\d+\.\d+\S* \(\S*llvm-project\S* roc-(" + _VER3 + r")\b", re.I)
# hipcc -v / clang: "Found HIP installation: /opt/rocm-5.7.0, version 5.7.31921"
FOUND_HIP_RE = lazy(r"Found HIP installation: (\S+?),? version (\d+\.\d+\.\d+)")
# ls /opt, ls -d /opt/rocm*: a bare "rocm-5.6.1" name in a listing line
LS_ROCM_RE = lazy(r"(?:^|\s)rocm-(\d+\.\d+\.\d+)(?=\s|$|/)")
LS_LINE_RE = lazy(r"^(?:[\w.+-]+/?\s+)*rocm-\d+\.\d+\.\d+/?(?:\s+[\w.+-]+/?)*\s*$")
# the version file: "cat /opt/rocm/.info/version" then "5.6.1-93"; grep -r output "/opt/rocm/.info/version:5.6.1-93"
INFO_CMD_RE = lazy(r"(/opt/rocm[\w.-]*)/\.info/version(?::\s*(\d+\.\d+\.\d+)(?:-\d+)?)?")
INFO_VALUE_RE = lazy(r"^\s*(\d+\.\d+\.\d+)(?:-\d+)?\s*$")
# apt list --installed: "rocm-core/jammy,now 5.6.1.50601-93~22.04 amd64 [installed,automatic]"
APT_RE = lazy(r"^([a-z0-9][a-z0-9.+-]*)/[\w,.-]+ (\S+) (?:amd64|arm64|all|i386)\b.*\[installed")
# rpm -qa / dnf list installed: "rocm-core-5.6.1.50601-93.el9.x86_64", "rocm-core.x86_64  5.6.1.50601-93.el9  @rocm"
RPM_RE = lazy(r"^(rocm-core|hip-runtime-amd|amdgpu-dkms)-(\d+\.\d+\.\d+\.\d+)-\S+\.(?:x86_64|noarch|aarch64)\s*$")
DNF_RE = lazy(r"^(rocm-core|hip-runtime-amd|amdgpu-dkms)\.(?:x86_64|noarch)\s+(?:\d+:)?(\d+\.\d+\.\d+\.\d+)-\S+")
# pacman -Q (Arch, CachyOS, Manjaro: ROCm packaged with the release as its version): "rocm-core 5.6.1-1",
# "hip-runtime-amd 5.6.1-1"
PACMAN_RE = lazy(r"^(rocm-core|hip-runtime-amd)\s+(\d+\.\d+\.\d+)-\d+(?:\.\d+)?\s*$")
# dkms status: "amdgpu/6.1.5-1609671.22.04, 5.15.0-92-generic, x86_64: installed" (older dkms: "amdgpu, 5.18.13-...")
DKMS_RE = lazy(r"^amdgpu(?:/|, )(\d+\.\d+\.\d+)-[\w.~-]+, (\S+), (\S+): installed")
# container images: rocm/pytorch:rocm5.6_ubuntu20.04_py3.8_pytorch_2.0.1, rocm/dev-ubuntu-22.04:5.6.1,
# rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4
# `docker images` / `docker image ls` rows name the repository and the tag in columns of their own:
# "rocm/pytorch   rocm5.6_ubuntu20.04_py3.8_pytorch_2.0.1   0c8a5d3f0e2b   2 weeks ago   52.3GB"
DOCKER_IMAGES_RE = lazy(r"^(?:docker\.io/)?rocm/([a-z0-9._-]+)[ \t]+((?:rocm-?)?(" + _VER3 + r")(?=[_.\s-])\S*)[ \t]+[0-9a-f]{12}\b")
# (also as a URI: apptainer / singularity `docker://rocm/dev-ubuntu-22.04:5.6.1`)
# (a tag may be followed by its digest, BuildKit's "FROM docker.io/rocm/...:5.6.1@sha256:...", or by podman's
# "Trying to pull docker.io/rocm/...:5.6.1...")
IMAGE_RE = lazy(r"(?:(?<![\w./-])|(?<=docker://))(?:docker\.io/)?rocm/([a-z0-9._-]+):(?:rocm-?)?(" + _VER3
                + r")(?=[_:\s@-]|\.\.\.|$)")
# torch versions printed by pip list / conda list / freeze / wheel names / print(torch.__version__)
TORCH_VER = r"(\d+\.\d+\.\d+(?:[a-z]+\d*)?(?:\.dev\d{8})?(?:\+(?:rocm|cu|cpu|xpu)[\w.]*)?)"
WHEEL_RE = lazy(r"(?<![\w-])(torch|torchvision|torchaudio|jaxlib|tensorflow_rocm|tensorflow)-"
                      r"(\d+\.\d+\.\d+[\w.]*(?:(?:\+|%2B)[\w.]+)?)-cp\d+-[\w]+-(?:linux|manylinux)[\w.]*\.whl")
PKG_LINE_RE = lazy(r"^(?:\[(?:pip3?|conda)\]\s+|- )?(torch|pytorch|torchvision|torchaudio)(?:\s*==\s*|\s+)" + TORCH_VER
                         + r"(?:\s+(pypi_0|<pip>|[\w.]*(?:_|py\d)[\w.]*)(?:\s+\S+)?)?\s*$")
# conda build strings name the variant: the pytorch channel's "py3.9_cuda11.3_cudnn8.3.2_0" / "py3.9_cpu_0",
# conda-forge's "cuda118py310h5cdf07d_300" / "cuda120_py311h..." / "cpu_generic_py310h1e4ec9c_0" / "cpu_py38h92724a6_0"
CONDA_CUDA_RE = lazy(r"(?:^|_)cuda(\d+)\.(\d)(?:_|$)|^cuda(\d{2})(\d)(?:_?py|_|$)")
CONDA_CPU_RE = lazy(r"(?:^|_)cpu(?:_|$)")
VERSION_PRINT_RE = lazy(r"^\s*" + TORCH_VER + r"\s+(\d+\.\d+\.\d+-[0-9a-f]+|\d+\.\d+\.\d+|\d+\.\d+|None)\s*$")
# the same two values at the Python prompt, as the tuple's repr: ">>> torch.__version__, torch.version.hip" answers
# "('2.3.0.dev20240215+rocm5.7', '5.7.31921-d1770ee1b')" (None unquoted)
TUPLE_PRINT_RE = lazy(r"^\s*\(\s*(['\"])" + TORCH_VER + r"\1\s*,\s*(?:(['\"])(\d+\.\d+(?:\.\d+)?(?:-[0-9a-f]+)?)\3|(None))"
                            r"\s*\)\s*$")
# pip show's Version field written after its command on one line ("pip show torch -> Version: 2.5.0+rocm6.2",
# "$ pip show torch | grep Version  Version: 2.1.0+cu121")
PIP_SHOW_INLINE_RE = lazy(r"\bpip3?\s+show\s+(?:py)?torch\b[^\n]{0,60}?\bVersion:\s*" + TORCH_VER + r"(?![\w.+])")
# (at the Python prompt, ">>> torch.__version__" answers with the repr: '2.3.0.dev20240215+rocm5.7')
LONE_TORCH_RE = lazy(r"^\s*(['\"]?)(\d+\.\d+\.\d+(?:[a-z]+\d*)?(?:\.dev\d{8})?\+(?:rocm|cu)[\w.]+)\1\s*$")
LABELLED_TORCH_RE = lazy(r"^\s*(?:torch|pytorch|PyTorch)(?: version)?\s*[:=]\s*" + TORCH_VER + r"\s*$")
SUCCESS_RE = lazy(r"Successfully installed .*?\btorch-(\d+\.\d+\.\d+[\w.]*(?:\+[\w.]+)?)(?:\s|$)")
HSA_RT_RE = lazy(r"^\s*Runtime Version:\s+(1\.\d+)\s*$")
# apt show / apt-cache show / dpkg -s paragraphs: "Package: rocm-libs" and, a few lines below, "Version: 6.4.0.60400-47~22.04";
# pip show: "Name: torch" then "Version: 2.3.0.dev20240215+rocm5.7"
PKG_FIELD_RE = lazy(r"^(Package|Name):\s*([A-Za-z0-9][A-Za-z0-9.+_-]*)\s*$")
VERSION_FIELD_RE = lazy(r"^Version:\s*(\S+)\s*$")
# PyTorch's cmake summary ("***** Library versions from dpkg *****"): "rocm-dev VERSION: 6.2.0.60200-66~20.04"
DPKG_SUMMARY_RE = lazy(r"^([a-z0-9][a-z0-9.+-]*) VERSION: (\d[\w.:~+-]*)\s*$")
# ROCm meta packages versioned with the ROCm release itself (AMD's X.Y.Z.NNNNN numbering)
ROCM_META = ("rocm-core", "rocm-libs", "rocm-dev", "rocm-hip-runtime", "rocm-hip-sdk", "rocm-hip-libraries",
             "rocm-language-runtime", "rocm-utils", "rocm-ml-sdk", "rocm")
# modinfo amdgpu: "filename:  /lib/modules/5.11.0-37-generic/updates/dkms/amdgpu.ko" then "version:  5.11.14"
MODINFO_FILE_RE = lazy(r"^filename:\s+(\S*/amdgpu\.ko(?:\.[xg]z|\.zst)?)\s*$")
MODINFO_VER_RE = lazy(r"^version:\s+(\d+\.\d+\.\d+[\d.]*)\s*$")
MODINFO_CMD_RE = lazy(r"\bmodinfo\s+amdgpu\b")
# cat /sys/module/amdgpu/version (or grep -H): "/sys/module/amdgpu/version: 5.18.2.22.40", or the value on the next line
SYSMOD_RE = lazy(r"/sys/module/amdgpu/version(?::\s*(\d+\.\d+\.\d+[\d.]*))?")
SYSMOD_VALUE_RE = lazy(r"^\s*(\d+\.\d+\.\d+[\d.]*)\s*$")
# torch.version.hip printed alone ("6.0.32830-d62f6a171"), or at a REPL ("'6.0.32830-d62f6a171'")
# hipconfig --version prints no newline (hipconfig.pl: print $HIP_VERSION): the shell's next prompt follows the version
HIP_PRINT_RE = lazy(r"^\s*['\"]?(\d+\.\d+\.\d{4,6}(?:-[0-9a-f]+)?)['\"]?(?:\s*$|(?=[\w.-]+@[\w.-]+:\S*[$#]|\$(?:\s|$)))")
HIP_CMD_RE = lazy(r"torch\.version\.hip\b")
# `hipconfig --version` (or `hipconfig -v`) echoed as a command, its output (5.6.31062 or 5.6.31062-hash) on the next line
HIPCONFIG_CMD_RE = lazy(r"(?:^|[\s$#>])hipconfig(?:\s+--version|\s+-v)\s*$")
# The GPU as the frameworks and apps print it (each regex is the print statement's shape):
# ComfyUI / Fooocus model_management: "Device: cuda:0 AMD Radeon RX 6600 : native"
DEV_COMFY_RE = lazy(r"^Device: (?:cuda|hip):(\d+) (.+?) : (?:native|cudaMallocAsync|[\w.-]+)\s*$")
# llama.cpp ggml-cuda on HIP: "  Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, Wave Size: 32"
DEV_GGML_RE = lazy(r"^\s*Device (\d+): (.+?), (gfx[0-9a-f]+)(?::[\w+:-]+)?(?: \(0x[0-9a-f]+\))?, VMM: ")
# older llama.cpp: "Device 1: AMD Radeon 780M, compute capability 11.0, VMM: no" (on HIP the gfx major/minor: the
# name decides the target through the KB)
DEV_GGML_CC_RE = lazy(r"^\s*Device (\d+): (.+?), compute capability (\d+)\.(\d+), VMM: ")
# ollama: msg="[0] GcnArchName: gfx1031", msg="inference compute" ... library=rocm ... compute=gfx1150 ... name="...",
# msg="amdgpu is not supported" gpu=0 gpu_type=gfx1031
DEV_OLLAMA_ARCH_RE = lazy(r"\[(\d+)\] GcnArchName: (gfx[0-9a-f]+)|\bgpu=(\d+) gpu_type=(gfx[0-9a-f]+)")
DEV_OLLAMA_COMPUTE_RE = lazy(r"\bid=(\d+) library=rocm\b.*?\bcompute=(gfx[0-9a-f]+)(?:.*?\bname=\"?([^\"]+)\"?)?")
# torch.cuda.get_device_properties(): "_CudaDeviceProperties(name='AMD Radeon RX 7900 XTX', major=11, minor=0, gcnArchName='gfx1100'"
DEV_PROPS_RE = lazy(r"_CudaDeviceProperties\(name='([^']+)'.*?gcnArchName='(gfx[0-9a-f]+)")
# rocminfo fragments (rocminfo | grep gfx): "  Name:                    gfx1030"
DEV_ROCMINFO_RE = lazy(r"^\s*Name:\s+(gfx[0-9a-f]{3,4})\s*$")
# HSA_OVERRIDE_GFX_VERSION set in a command line, an export, an env dump or ollama's server config map
HSA_OVERRIDE_RE = lazy(r"\bHSA_OVERRIDE_GFX_VERSION[=:]\s*['\"]?(\d+\.\d+\.\d+)\b")
# ldd / /proc/PID/maps: "libamdhip64.so.5 => /opt/rocm-5.6.1/lib/libamdhip64.so.5 (0x...)"
LDD_HIP_RE = lazy(r"^\s*libamdhip64\.so(?:\.(\d+))?[.\d]* => (\S+)")

# Names that carry the ROCm release in other package managers and module systems:
# - AMD's package repository URL (apt sources.list lines, `apt-cache policy` tables, yum/dnf .repo files):
#   `deb [arch=amd64] http://repo.radeon.com/rocm/apt/3.5.1/ xenial main` (ROCm/legacy-rocm-build issue 1183),
#   apt's `Hit:9 https://repo.radeon.com/rocm/apt/5.3 focal` (issue 1713); "debian" / "latest" name no release
REPO_URL_RE = lazy(r"\brepo\.radeon\.com/rocm/(?:apt|yum|zyp|rhel\d*|el\d+|sles\d*|centos\d*)/(\d+\.\d+(?:\.\d+)?)(?=[/\s\"']|$)")
# - `apt-cache policy PKG` / `apt policy PKG`: the package's name alone on a line, then "Installed: VERSION"
APT_POLICY_PKG_RE = lazy(r"^([a-z0-9][a-z0-9.+-]*):\s*$")
APT_POLICY_INSTALLED_RE = lazy(r"^Installed:\s*(\d[\w.:~+-]*)\s*$")
# - Lmod / Environment Modules (HPC clusters): `module list` rows "3) rocm/5.6.1", `module load rocm/6.4.1`
#   (OLCF's Frontier batch scripts: github.com/olcf/olcf-user-docs pull 1068)
LMOD_ROW_RE = lazy(r"(?:^|\s)\d+\)\s+rocm/(\d+\.\d+\.\d+)(?=\s|\(|$)")
# (Lmod's short form `ml rocm/5.6.1` = `module load rocm/5.6.1`: lmod.readthedocs.io, "ml: a convenient tool")
LMOD_CMD_RE = lazy(r"(?:\bmodule\s+(?:load|add|swap|switch)\b|(?:^|[;&|$]\s*)ml(?:\s+(?:load|add|swap|switch))?(?=\s))"
                         r"[^#\n]*?\brocm/(\d+\.\d+\.\d+)(?=\s|$)")
# - Spack specs: spack's ROCm packages are versioned by the ROCm release (hip@5.6.1, `spack spec` trees
#   "^hsa-rocr-dev@5.2.0%gcc@11.2.0", "^hsakmt-roct@5.3.0%gcc@9.4.0": github.com/spack/spack issues 32194, 33320)
SPACK_RE = lazy(r"(?<![\w-])(?:hip|hipcc|hip-rocclr|hsa-rocr-dev|hsakmt-roct|rocm-core|llvm-amdgpu|comgr|rocblas|hipblas|"
                      r"rocsolver|rocsparse|miopen-hip|rocm-device-libs|rocm-smi-lib|rocmcc)"
                      r"@(\d+\.\d+\.\d+)(?![\w.])")

ROCM_CONTEXT_RE = lazy(r"rocminfo|HSA System Attributes|Runtime Ext Version")
# hip-runtime-amd / hip-dev versions carry HIP's own numbering: 5.6.31062.50601 -> HIP 5.6.31062, ROCm 5.6.1
_ROCM_BUILD = lazy(r"^(\d+\.\d+\.\d+)\.(\d)(\d{2})(\d{2})$")


def _rocm_from_build(v: str) -> str | None:
    """'5.6.31062.50601' -> '5.6.1' (the 5-digit build field is the ROCm release)."""
    m = _ROCM_BUILD.match(v)
    if not m:
        return None
    return f"{int(m.group(2))}.{int(m.group(3))}.{int(m.group(4))}"


def _rocm_meta_release(deb_version: str) -> str | None:
    """A ROCm meta package's version -> the release: '6.4.0.60400-47~22.04' -> '6.4.0' (AMD's X.Y.Z.NNNNN);
    older '1.8.118' (no build field) -> '1.8'."""
    up = dpkg.upstream_version(deb_version)
    parts = up.split(".")
    if len(parts) == 4 and len(parts[3]) == 5 and all(p.isdigit() for p in parts):
        return ".".join(parts[:3])
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
        return ".".join(parts[:2])
    return None


def _snippet(s: str, n: int = 120) -> str:
    """The line a fact was read from, at most ``n`` characters, cut at a space (never mid-word) when one
    lies in its second half."""
    s = s.strip()
    if len(s) <= n:
        return s
    cut = s.rfind(" ", 0, n - 3)
    return (s[:cut] if cut > n // 2 else s[: n - 3]) + "..."


def _torch_row(version: str, src: str, hip: str = "", cuda: str = "", unlabelled: str = "") -> Row:
    """A torch build named in pasted text.  ``unlabelled``: the variant of a version with no local label and no
    runtime version beside it: unknown ("") where the text only names the version (a `pip list` line, a wheel
    name, "torch 2.1.2": the same version is a CUDA wheel on Linux PyPI and a CPU one on Windows PyPI), "cpu"
    only where the text shows the build reporting no GPU runtime."""
    local = version.partition("+")[2]
    if not hip and local.startswith("rocm"):
        hip = local[4:]
    if not cuda and re.fullmatch(r"cu\d{3,4}", local):
        cuda = f"{local[2:-1]}.{local[-1]}"
    return row("framework_builds", src, name="torch", version=version, cuda=cuda, hip=hip,
               channel=channel_of(version) if version else "",
               variant=variant_of(version, cuda or None, hip or None, default=unlabelled),
               targets=[], targets_source="")


def parse_mentions(text: str, source: str) -> list[Row]:
    lines = text.splitlines()
    out: list[Row] = []
    seen: set[tuple] = set()

    def add(key: tuple, r: Row) -> None:
        if key not in seen:
            seen.add(key)
            out.append(r)

    def rocm(version: str, lineno: int, how: str, path: str = "") -> None:
        add(("rocm", version, path.rstrip("/") == "/opt/rocm"),
            row("runtimes", f"{source} line {lineno} ({how})", vendor="amd", name="rocm", version=version,
                path=path or f"/opt/rocm-{version}", origin="pasted"))

    apt_pkgs: dict[str, str] = {}
    apt_line: dict[str, int] = {}
    rocminfo_ctx = bool(ROCM_CONTEXT_RE.search(text))
    m: re.Match[str] | None
    for i, raw in enumerate(lines):
        n = i + 1
        line = raw.strip()
        if not line or len(line) > 2000:
            continue
        if "/opt/rocm-" in line:
            for pm in ROCM_PATH_RE.finditer(line):
                rocm(pm.group(1), n, f"path {_snippet(line)}")
        if "roc-" in line and "clang version" in line.lower():
            m = CLANG_ROC_RE.search(line)
            if m:
                rocm(m.group(1), n, f"AMD clang banner: {_snippet(line)}")
        if "Found HIP installation" in line:
            m = FOUND_HIP_RE.search(line)
            if m:
                add(("hip", m.group(2)), row("runtimes", f"{source} line {n} ({_snippet(line)})", vendor="amd",
                                             name="hip-runtime", version=m.group(2), path=m.group(1),
                                             origin="pasted"))
        if "rocm-" in line and LS_LINE_RE.match(line):
            for lm in LS_ROCM_RE.finditer(line):
                rocm(lm.group(1), n, f"directory listing: {_snippet(line)}")
        if ".info/version" in line:
            m = INFO_CMD_RE.search(line)
            if m:
                tree = m.group(1)
                val = m.group(2)
                if not val:
                    for nxt in lines[i + 1:i + 3]:
                        vm = INFO_VALUE_RE.match(nxt)
                        if vm:
                            val = vm.group(1)
                            break
                if val:
                    rocm(val, n, f"{tree}/.info/version: {val}", path=tree)
        m = APT_RE.match(line)
        if m and (m.group(1).startswith(("rocm", "hip", "amdgpu", "miopen", "rocblas", "libamdhip64"))):
            apt_pkgs.setdefault(m.group(1), m.group(2))
            apt_line.setdefault(m.group(1), n)
        m = RPM_RE.match(line) or DNF_RE.match(line)
        if m:
            apt_pkgs.setdefault(m.group(1), m.group(2) + "-0")
            apt_line.setdefault(m.group(1), n)
        elif line.startswith(("rocm-core ", "hip-runtime-amd ")):
            m = PACMAN_RE.match(line)
            if m:
                apt_pkgs.setdefault(m.group(1), m.group(2) + "-0")
                apt_line.setdefault(m.group(1), n)
        if line.startswith("amdgpu"):
            m = DKMS_RE.match(line)
            if m:
                add(("dkms", m.group(1)), row("drivers", f"{source} line {n} (dkms status: {_snippet(line)})",
                                              vendor="amd", component="kernel-module", version=m.group(1),
                                              flavor="dkms-package"))
        if "repo.radeon.com/rocm/" in line:
            for um in REPO_URL_RE.finditer(line):
                rocm(um.group(1), n, f"AMD package repository {_snippet(um.group(0), 80)}", path="/opt/rocm")
        if line.startswith("Installed:") and i:
            m = APT_POLICY_INSTALLED_RE.match(line)
            pm_ = APT_POLICY_PKG_RE.match(lines[i - 1].strip())
            if m and pm_ and _rocm_package(pm_.group(1)) and m.group(1) != "(none)":
                apt_pkgs.setdefault(pm_.group(1), m.group(1))
                apt_line.setdefault(pm_.group(1), n)
        if "rocm/" in line:
            lm_ = LMOD_ROW_RE.search(line) or LMOD_CMD_RE.search(line)
            if lm_ and not line.startswith("#"):  # a commented-out load loads nothing
                rocm(lm_.group(1), n, f"environment module {_snippet(line, 80)}")
        if "@" in line:
            for sm in SPACK_RE.finditer(line):
                rocm(sm.group(1), n, f"Spack package {sm.group(0)}")
        if line.startswith(("rocm/", "docker.io/rocm/")):
            m = DOCKER_IMAGES_RE.match(line)
            if m:
                tag = f"rocm/{m.group(1)}:{m.group(2)}"
                rocm(m.group(3), n, f"container image {_snippet(tag, 80)} (docker images)",
                     path=f"container image {_snippet(tag, 80)}")
        if "rocm/" in line:
            for im in IMAGE_RE.finditer(line):
                tag = line[im.start():].split()[0]
                rocm(im.group(2), n, f"container image {_snippet(tag, 80)}", path=f"container image {_snippet(tag, 80)}")
        if ".whl" in line:
            for wm in WHEEL_RE.finditer(line):
                if wm.group(1) == "torch":
                    v = wm.group(2).replace("%2B", "+")
                    add(("torch", v), _torch_row(v, f"{source} line {n} (wheel file {wm.group(0)})",
                                                 unlabelled=_unlabelled_wheel_variant(wm.group(0))))
        if "torch" in line:
            m = PKG_LINE_RE.match(line)
            if m and m.group(1) in ("torch", "pytorch") and not _uv_removed(lines, i):
                build = m.group(3) or ""
                cm = CONDA_CUDA_RE.search(build) if "+" not in m.group(2) else None
                conda_cuda = (f"{cm.group(1)}.{cm.group(2)}" if cm.group(1) else f"{cm.group(3)}.{cm.group(4)}") if cm else ""
                cpu = not conda_cuda and "+" not in m.group(2) and bool(CONDA_CPU_RE.search(build))
                add(("torch", m.group(2)), _torch_row(m.group(2), f"{source} line {n} (package list: {_snippet(line)})",
                                                      cuda=conda_cuda, unlabelled="cpu" if cpu else ""))
            m = LABELLED_TORCH_RE.match(line)
            if m:
                add(("torch", m.group(1)), _torch_row(m.group(1), f"{source} line {n} ({_snippet(line)})"))
            m = SUCCESS_RE.search(line)
            if m:
                add(("torch", m.group(1)), _torch_row(m.group(1), f"{source} line {n} (pip: {_snippet(line)})"))
        m = VERSION_PRINT_RE.match(line)
        pair: tuple[str, str] | None = (m.group(1), m.group(2)) if m else None
        if pair is None and line.lstrip().startswith("("):
            tm = TUPLE_PRINT_RE.match(line)
            pair = (tm.group(2), tm.group(4) or "None") if tm else None
        if pair and _printed_by_torch(lines, i, pair[0]):
            v, second = pair
            prev = lines[i - 1] if i else ""
            hip = cuda = ""
            if second != "None":
                if "version.cuda" in prev or (("+cu" in v) and "version.hip" not in prev):
                    cuda = second
                else:
                    hip = second
            # "2.0.1 None": the build answered that it has no CUDA / HIP runtime (read as CPU-only, as before)
            cpu = second == "None"
            add(("torch", v), _torch_row(v, f"{source} line {n} (torch.__version__ / torch.version: {_snippet(line)})",
                                         hip=hip, cuda=cuda, unlabelled="cpu" if cpu else ""))
        else:
            m = LONE_TORCH_RE.match(line)
            if m and _printed_by_torch(lines, i, m.group(2)):
                add(("torch", m.group(2)), _torch_row(m.group(2), f"{source} line {n} (torch.__version__: {line})"))
        if "pip" in line and "Version:" in line:
            m = PIP_SHOW_INLINE_RE.search(line)
            if m:
                add(("torch", m.group(1)), _torch_row(m.group(1), f"{source} line {n} (pip show torch: {_snippet(line)})"))
        if line.startswith(("Package:", "Name:")):
            m = PKG_FIELD_RE.match(line)
            if m:
                _package_paragraph(lines, i, m.group(1), m.group(2), source, add, apt_pkgs, apt_line)
        if " VERSION: " in line:
            m = DPKG_SUMMARY_RE.match(line)
            if m and _rocm_package(m.group(1)):
                apt_pkgs.setdefault(m.group(1), m.group(2))
                apt_line.setdefault(m.group(1), n)
        if line.startswith("version:"):
            m = MODINFO_VER_RE.match(line)
            if m:
                above = [x.strip() for x in lines[max(0, i - 3):i]]
                fm = next((MODINFO_FILE_RE.match(x) for x in above if MODINFO_FILE_RE.match(x)), None)
                if fm or any(MODINFO_CMD_RE.search(x) for x in above):
                    path = fm.group(1) if fm else "amdgpu"
                    add(("amdgpu", m.group(1)),
                        row("drivers", f"{source} line {n} (modinfo amdgpu: {path}, version {m.group(1)})",
                            vendor="amd", component="kernel-module", version=m.group(1), flavor="dkms"))
        if "/sys/module/amdgpu/version" in line:
            m = SYSMOD_RE.search(line)
            val = m.group(1) if m else None
            if m and not val and i + 1 < len(lines):
                vm = SYSMOD_VALUE_RE.match(lines[i + 1])
                val = vm.group(1) if vm else None
            if val:
                add(("amdgpu", val), row("drivers", f"{source} line {n} (/sys/module/amdgpu/version: {val})",
                                         vendor="amd", component="kernel-module", version=val, flavor="dkms"))
        m = HIP_PRINT_RE.match(line)
        if m and any(HIP_CMD_RE.search(p) and "__version__" not in p for p in lines[max(0, i - 2):i]):
            hip = m.group(1)
            add(("torch-hip", hip), _torch_row("", f"{source} line {n} (torch.version.hip: {hip})", hip=hip))
        if m and i and HIPCONFIG_CMD_RE.search(lines[i - 1].strip()):
            hip = m.group(1)
            add(("hip", hip.split("-")[0]), row("runtimes", f"{source} line {n} (hipconfig --version: {hip})",
                                                vendor="amd", name="hip-runtime", version=hip.split("-")[0],
                                                origin="pasted"))
        if "libamdhip64.so" in line and "=>" in line:
            m = LDD_HIP_RE.match(raw)
            if m:
                _loaded_hip_row(m.group(2), m.group(1), f"{source} line {n} (loader: {_snippet(line)})", add)
        if "Device" in line or "gfx" in line:
            _gpu_mentions(line, n, source, add)
        if "HSA_OVERRIDE_GFX_VERSION" in line:
            m = HSA_OVERRIDE_RE.search(line)
            if m and not line.lstrip().startswith("#"):
                add(("hsa-override",), row("env_vars", f"{source} line {n} ({_snippet(line, 100)})",
                                           name="HSA_OVERRIDE_GFX_VERSION", value=m.group(1)))
        if rocminfo_ctx and "Runtime Version" in line:
            m = HSA_RT_RE.match(line)
            if m:
                add(("hsa", m.group(1)), row("runtimes", f"{source} line {n} (rocminfo: {_snippet(line)})",
                                             vendor="amd", name="hsa-runtime", version=m.group(1), path="",
                                             origin="pasted"))
    if apt_pkgs:
        for r in dpkg.dpkg_rows(apt_pkgs, ""):
            pkg = "rocm-core" if r.get("name") == "rocm" else ("hip-runtime-amd" if r.get("name") == "hip-runtime" else "")
            n = apt_line.get(pkg) or min(apt_line.values())
            vals = dict(r.values)
            key: tuple[object, ...]
            if vals.get("name") == "rocm":
                vals["path"] = "/opt/rocm"
                key = ("rocm", vals.get("version"), True)
            else:
                key = (vals.get("name"), vals.get("version"))
            vals["origin"] = "pasted"
            add(key, Row(r.table, vals, f"{source} line {n} (installed package {pkg or 'list'} "
                                        f"{apt_pkgs.get(pkg, '')})".replace("  ", " ")))
        if "amdgpu-dkms" in apt_pkgs:
            v = dpkg.upstream_version(apt_pkgs["amdgpu-dkms"])
            add(("dkms", v), row("drivers", f"{source} line {apt_line['amdgpu-dkms']} (installed package amdgpu-dkms)",
                                 vendor="amd", component="kernel-module", version=v, flavor="dkms-package"))
        if "rocm-core" not in apt_pkgs and not any(r.get("name") == "rocm" for r in out):
            meta = next((k for k in ROCM_META if k in apt_pkgs), None)
            rel = _rocm_meta_release(apt_pkgs[meta]) if meta else None
            if meta and rel:
                rocm(rel, apt_line[meta], f"installed package {meta} {apt_pkgs[meta]}", path="/opt/rocm")
        hip_pkgs = [k for k in apt_pkgs if k in ("hip-runtime-amd", "hip-dev", "hip-devel")]
        if hip_pkgs and not any(r.get("name") == "rocm" for r in out):
            rel = _rocm_from_build(dpkg.upstream_version(apt_pkgs[hip_pkgs[0]]))
            if rel:
                rocm(rel, apt_line[hip_pkgs[0]], f"installed package {hip_pkgs[0]} {apt_pkgs[hip_pkgs[0]]}")
    return out


# uv's install summary: " - name==old" (removed) and " + name==new" (installed) rows, one space in front
_UV_ROW = lazy(r"^ [-+] [A-Za-z0-9][\w.-]*==\S+\s*$")


def _uv_removed(lines: list[str], i: int) -> bool:
    """A " - torch==X" row of uv's summary is the package it removed, not one installed (a conda export's "- torch==X"
    rows stand under "- pip:", never beside " + " rows)."""
    if not lines[i].startswith(" - "):
        return False
    return any(ln.startswith(" + ") and _UV_ROW.match(ln) for ln in lines[max(0, i - 10):i + 10])


# PyPI's torch wheels for Linux x86_64 are CUDA builds without a local label (torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl
# is the CUDA 12.4 build; its metadata requires the nvidia-*-cu12 wheels on Linux x86_64); the PyTorch index labels
# every other variant (+cpu, +cu118, +rocm6.2, +xpu), and its old unlabelled CPU wheels carry the linux_x86_64 tag,
# never manylinux.  https://pypi.org/project/torch/#files, https://pytorch.org/get-started/previous-versions/
_MANYLINUX_X86 = lazy(r"-manylinux[\w.]*_x86_64(?:\.manylinux[\w.]*)?\.whl$")
# pip show torch's "Requires:" field naming the NVIDIA runtime wheels (nvidia-cuda-runtime-cu12, nvidia-cublas-cu11...)
_NV_REQUIRES = lazy(r"\bnvidia-[a-z-]+-cu(1[0-9])\b")


def _unlabelled_wheel_variant(wheel: str) -> str:
    """'cuda' for an unlabelled manylinux x86_64 torch wheel (PyPI's Linux build is the CUDA one), '' otherwise."""
    if "+" in wheel or "%2B" in wheel:
        return ""
    return "cuda" if _MANYLINUX_X86.search(wheel) else ""


def _pip_show_cuda_requires(lines: list[str], j: int) -> str:
    """The NVIDIA runtime wheels a ``pip show torch`` paragraph's Requires field names (the torch is then PyPI's
    CUDA build, whatever its version says), '' when it names none."""
    for k in range(j + 1, min(len(lines), j + 12)):
        nxt = lines[k].strip()
        if not nxt or PKG_FIELD_RE.match(nxt):
            return ""
        if nxt.startswith("Requires:"):
            found = sorted({m.group(0) for m in _NV_REQUIRES.finditer(nxt)})
            return ", ".join(found[:2]) + (", ..." if len(found) > 2 else "")
    return ""


def _rocm_package(name: str) -> bool:
    return name.startswith(("rocm", "hip", "amdgpu", "miopen", "rocblas", "libamdhip64"))


def _package_paragraph(lines: list[str], i: int, field: str, name: str, source: str, add, apt_pkgs: dict[str, str],
                       apt_line: dict[str, int]) -> None:
    """``apt show`` / ``dpkg -s`` (Package:) and ``pip show`` (Name:) paragraphs: the Version field below the name."""
    if field == "Name" and name not in ("torch", "pytorch"):
        return
    if field == "Package" and not _rocm_package(name):
        return
    for j in range(i + 1, min(len(lines), i + 12)):
        nxt = lines[j].strip()
        if not nxt or PKG_FIELD_RE.match(nxt):
            return
        vm = VERSION_FIELD_RE.match(nxt)
        if not vm:
            continue
        v = vm.group(1)
        if field == "Name":
            req = _pip_show_cuda_requires(lines, j)
            how = f"pip show {name}: Version: {v}" + (f"; Requires: {req}" if req else "")
            add(("torch", v), _torch_row(v, f"{source} line {j + 1} ({how})", unlabelled="cuda" if req else ""))
        else:
            apt_pkgs.setdefault(name, v)
            apt_line.setdefault(name, j + 1)
        return


def _gpu_row(idx: int | None, name: str, arch: str, src: str, add) -> None:
    name = name.strip()
    vendor = "amd" if arch.startswith("gfx") or re.search(r"\b(AMD|Radeon|Instinct)\b", name) else (
        "nvidia" if re.search(r"\b(NVIDIA|GeForce|Tesla|Quadro|RTX)\b", name) else "")
    if not vendor:
        return
    add(("gpu", vendor, idx, arch or name), row("gpu_devices", src, vendor=vendor, index=idx, name=name,
                                                arch=arch or None))


def _nvidia_row(idx: int, name: str, cc: str, src: str, add) -> None:
    if not re.search(r"\b(NVIDIA|GeForce|Tesla|Quadro|RTX)\b", name):
        return
    add(("gpu", "nvidia", idx, name), row("gpu_devices", src, vendor="nvidia", index=idx, name=name.strip(),
                                          compute_capability=cc, arch=f"sm_{cc.replace('.', '')}"))


def _gpu_mentions(line: str, n: int, source: str, add) -> None:
    """One line's GPU, in the shapes ComfyUI, llama.cpp, ollama, torch and rocminfo print it."""
    src = f"{source} line {n} ({_snippet(line, 100)})"
    m = DEV_COMFY_RE.match(line)
    if m:
        _gpu_row(int(m.group(1)), m.group(2), "", src, add)
        return
    m = DEV_GGML_RE.match(line)
    if m:
        _gpu_row(int(m.group(1)), m.group(2), m.group(3), src, add)
        return
    m = DEV_GGML_CC_RE.match(line)
    if m:
        name = m.group(2)
        if re.search(r"\b(AMD|Radeon|Instinct)\b", name):
            _gpu_row(int(m.group(1)), name, "", src, add)
        else:
            _nvidia_row(int(m.group(1)), name, f"{m.group(3)}.{m.group(4)}", src, add)
        return
    m = DEV_PROPS_RE.search(line)
    if m:
        _gpu_row(None, m.group(1), m.group(2), src, add)
        return
    m = DEV_OLLAMA_COMPUTE_RE.search(line)
    if m:
        _gpu_row(int(m.group(1)), m.group(3) or "", m.group(2), src, add)
        return
    m = DEV_OLLAMA_ARCH_RE.search(line)
    if m:
        idx = m.group(1) or m.group(3)
        _gpu_row(int(idx), "", m.group(2) or m.group(4), src, add)
        return
    m = DEV_ROCMINFO_RE.match(line)
    if m:
        _gpu_row(None, m.group(1), m.group(1), src, add)


def _loaded_hip_row(path: str, soname_major: str | None, src: str, add) -> None:
    """The HIP runtime a process resolved (ldd, /proc/PID/maps): a system tree's, or a wheel's own copy."""
    if "/site-packages/" in path or "/dist-packages/" in path:
        origin = "framework-bundled" if "/torch/lib/" in path else "pip"
    elif "/conda" in path or "/envs/" in path:
        origin = "conda"
    else:
        origin = "system"
    add(("loaded-hip", path), row("libraries", src, name="amdhip64", version=soname_major or "", path=path,
                                  origin=origin, selected=True))


_TORCH_CMD = lazy(r"(?<![\w.])torch\.__version__|(?<![\w.])torch\.version\.(?:hip|cuda)|import torch(?![\w-])")


# Python's warnings on stderr between a command and its output ("path.py:611: UserWarning: ..." then the source line
# "  warnings.warn(...)": warnings.formatwarning)
_PY_WARNING = lazy(r"^\S+:\d+: \w*Warning: |^\s+warnings\.warn\(")


def _printed_by_torch(lines: list[str], i: int, version: str) -> bool:
    """A bare version line is torch's when the command that printed it is shown just above (one or two lines up,
    not counting Python's warnings printed between)."""
    looked = 0
    for prev in reversed(lines[max(0, i - 8):i]):
        if _PY_WARNING.match(prev):
            continue
        if _TORCH_CMD.search(prev):
            return True
        looked += 1
        if looked == 2:
            break
    return False


def has_mentions(text: str) -> bool:
    """Cheap test: does the text hold anything ``parse_mentions`` reads?"""
    return bool(_ANY.search(text))


_ANY = re.compile(r"/opt/rocm-\d|roc-\d|\.info/version|^[a-z0-9.+-]+/[\w,.-]+ \S+ (?:amd64|arm64|all)\b|^amdgpu(?:/|, )\d"
                  r"|rocm/[a-z0-9._-]+:|\.whl\b|torch|Found HIP installation|^[ \t]*Runtime Version:|rocm-\d+\.\d+\.\d+"
                  r"|^(?:rocm-core|hip-runtime-amd|amdgpu-dkms)[-.]|^Package:[ \t]*(?:rocm|hip|amdgpu|miopen|rocblas|libamdhip)"
                  r"| VERSION: \d|amdgpu\.ko|modinfo amdgpu|/sys/module/amdgpu/version|libamdhip64\.so"
                  r"|^Device: (?:cuda|hip):\d|, gfx[0-9a-f]+|, compute capability \d|GcnArchName|gpu_type=gfx|library=rocm|gcnArchName"
                  r"|^[ \t]*Name:[ \t]+gfx|HSA_OVERRIDE_GFX_VERSION|hipconfig"
                  r"|repo\.radeon\.com/rocm/|^[ \t]*Installed:[ \t]*\d|rocm/\d|@\d+\.\d+\.\d|^rocm/[a-z0-9._-]+[ \t]", re.M)


def rows_for(text: str, source: str) -> Iterable[Row]:
    return parse_mentions(text, source) if has_mentions(text) else []


# -------------------------------------------------------------------------------------------- NVIDIA in prose
# A bug report names its NVIDIA GPU and its torch build in prose and in commands more often than in a tool's output:
# "I am using RTX 4090", "GPU Type: RTX4070", "Tesla T4", "pip3 install torch==1.10.0+cu113 ...", "PyTorch 2.8.0 +
# cu129".  A GPU named so becomes a gpu_devices row (its architecture comes from the KB by name, as for nvidia-smi's),
# only when no tool in the text printed an NVIDIA GPU (parse_report drops these rows then); a torch version with its
# CUDA tag becomes a framework_builds row wherever on the line it stands (a whole-line `torch==X` is parse_mentions').
NV_GPU_RE = lazy(
    # "RTX 3090", "GeForce GTX 1080 Ti", "2x RTX 3090s", "Quadro RTX 5000", "RTX 5000 Ada", "RTX PRO 6000"
    r"(?<![\w-])(?:NVIDIA[ \t]+)?(?P<quadro>Quadro[ \t]+)?(?:GeForce[ \t]+)?(?P<kind>RTX|GTX)[ \t]?(?P<pro>PRO[ \t]+)?"
    r"(?P<num>[1-9]\d{2,3})(?P<sfx>[ \t]?(?:Ti|SUPER|Super)\b)?(?P<ada>[ \t]+Ada\b)?s?(?!\w|\.\w)"
    # the Ampere workstation cards, with or without their "RTX" ("RTX A6000", "A6000", "A2000 12GB")
    r"|(?<![\w-])(?:NVIDIA[ \t]+)?(?:RTX[ \t]?)?(?P<ws>A[24-6][05]00)\b"
    r"|(?<![\w-])Tesla[ \t]+(?P<tesla>[KMPVT][1-9]\d{0,2})\b"
    r"|(?<![\w-])(?:NVIDIA[ \t]+)?(?P<dc>A100|A800|H100|H800|H200|GH200|V100|L40S|B200|A10G)\b"
    r"|(?<![\w-])Jetson[ \t]+(?:AGX[ \t]+)?(?P<orin>Orin)\b")
NV_TORCH_INLINE_RE = lazy(
    r"(?<![\w.-])(?:torch|pytorch|PyTorch)[ \t]*(?:==|=|[ \t])[ \t]*(?P<v>\d+\.\d+\.\d+)[ \t]*\+[ \t]*(?P<cu>cu\d{3,4})\b")
# the workstation numbers and "+ cu121" written out (A[24-6][05]00, \+ *cu\d{3}): the same matches, and a literal
# gate (model/gate.py) then reads strong needles ("A6000", "+cu") instead of "00" and "cu" (any deep traceback's
# "line 100", "recurse"), so a large head without any of them skips this search
NV_ANY = re.compile(r"\b(?:RTX|GTX|Tesla|A100|A800|H100|H800|H200|V100|L40S|B200|A10G|Jetson"
                    r"|A2000|A2500|A4000|A4500|A5000|A5500|A6000|A6500)\b|RTX ?[1-9]\d{2,3}"
                    r"|GTX ?[1-9]\d{2,3}|\+cu\d{3}|\+  *cu\d{3}")
PROSE_GPU = "named in the text"


# workstation numbers that are no GeForce model ("RTX 6000" is a Turing Quadro, an Ada card or, as "RTX PRO 6000", a
# Blackwell one): without Quadro / Ada / PRO the generation is not known, the vendor is
_NV_WORKSTATION_NUMS = {"4000", "4500", "5000", "5500", "6000", "8000"}


def _nv_gpu_name(m: re.Match[str]) -> str:
    if m.group("num"):
        num = m.group("num")
        if m.group("pro"):
            return f"RTX PRO {num} Blackwell"
        if m.group("quadro"):
            return f"Quadro RTX {num}"
        if m.group("ada"):
            return f"RTX {num} Ada"
        if m.group("kind") == "RTX" and num in _NV_WORKSTATION_NUMS:
            return f"RTX {num}"
        sfx = (m.group("sfx") or "").strip()
        sfx = {"super": " SUPER", "ti": " Ti"}.get(sfx.lower(), "")
        return f"GeForce {m.group('kind')} {num}{sfx}"
    if m.group("ws"):
        return f"RTX {m.group('ws')}"
    if m.group("tesla"):
        return f"Tesla {m.group('tesla')}"
    if m.group("dc"):
        return f"NVIDIA {m.group('dc')}"
    return "Jetson AGX Orin"


def parse_nvidia_mentions(text: str, source: str) -> list[Row]:
    out: list[Row] = []
    seen: set[str] = set()
    for i, raw in enumerate(text.splitlines()):
        line = raw.strip()
        if not line or len(line) > 2000:
            continue
        for m in NV_GPU_RE.finditer(line):
            name = _nv_gpu_name(m)
            if name not in seen:
                seen.add(name)
                out.append(row("gpu_devices", f"{source} line {i + 1} ({PROSE_GPU}: {_snippet(line, 100)})",
                               vendor="nvidia", index=None, name=name))
        if "+" in line:
            m2 = NV_TORCH_INLINE_RE.search(line)
            if m2 and "torch" not in seen:
                seen.add("torch")
                out.append(_torch_row(f"{m2.group('v')}+{m2.group('cu')}", f"{source} line {i + 1} ({_snippet(line)})"))
    return out
