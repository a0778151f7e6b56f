"""Pasted text -> facts.

Users paste several tools' outputs into a bug thread, one after another: ``python -m
torch.utils.collect_env``, ``rocminfo``, ``nvidia-smi``, ``hipconfig``, ``nvcc --version``, ``pip list``
or ``pip freeze``, torch's version.py, the "ROCk module version" line.  ``parse_report`` finds each of
them in the text and runs the same ``parse_*`` functions the live probes use, so a report in a bug
thread gives the same facts as the machine would.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, cast

from gpuvet.model import Facts, ProbeError, Row, row
from gpuvet.model.versions import channel_of, normalise_name, variant_of

from . import dpkg, framework, hip, host, kfd, nvidia, rocm_smi, rocminfo, transcripts
from .mentions import _ANY as _MENTIONS, _torch_row, parse_mentions  # noqa: F401  (dispatched by name below)
from .mentions import NV_ANY as _NV_MENTIONS, PROSE_GPU, parse_nvidia_mentions  # noqa: F401
from .prose import _ANY as _PROSE, parse_prose, weakest_first_dropped  # noqa: F401
from .envblock import _ANY as _ENVBLOCK_LINES, parse_envblock  # noqa: F401
from ..model.lazyre import lazy

# searched at line starts only, as a pattern's search (model/lazyre.LineStartPattern)
_ENVBLOCK = cast("re.Pattern[str]", _ENVBLOCK_LINES)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
NA = {"", "n/a", "na", "none", "could not collect", "no cuda", "false"}


# A CI runner's log stamps every line: GitHub Actions "2024-02-20T10:01:02.1234567Z ", Jenkins' timestamper
# "[2024-02-20T10:01:02.123Z] ".  Pasted whole, no tool output in it starts where its parser expects it.
# BuildKit's plain progress output ("#5 [1/4] FROM docker.io/rocm/...", "#7 12.34 Collecting torch": moby/buildkit
# util/progress/progressui printer.go, "#%d " then the step's elapsed seconds on its log lines) stamps every line the same way.
_CI_STAMP = re.compile(r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z |\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\] "
                       r"|#\d{1,4} (?:\d+\.\d{3} )?)")
_CI_STAMP_ANY = re.compile(r"^(?:\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|#\d{1,4} \[\d+/\d+\] )", re.M)


# Text copied from a web page or a chat carries typography no tool prints: no-break and ideographic spaces, zero-width
# characters and a byte-order mark, and CJK writers' full-width punctuation ("ROCm 版本：5.6.1，PyTorch ..."): the
# ASCII each stands for (Unicode's own compatibility mapping of U+FF01..U+FF5E; 。 and 、 as ". " and ", ").
_WEB_CHARS = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u3000": " ", "\u200b": "", "\u200c": "",
                            "\u200d": "", "\u2060": "", "\ufeff": "", "\u3002": ". ", "\u3001": ", ",
                            **{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}})
# A thread read as rendered HTML (a forum page, GitHub's HTML, a mail): the code blocks' tags and the entities
# (&gt;&gt;&gt; for the Python prompt, &#39; for its quotes) around the tools' outputs; tags are removed in place, never
# turned into line breaks, so every line keeps its number.
_HTML_HINT = re.compile(r"&(?:gt|lt|amp|quot|#39|#x27);|<(?:pre|code)\b[^<>\n]{0,200}>")
_HTML_TAG = re.compile(r"</?(?:pre|code|p|br|div|span|tt|kbd|samp|blockquote|strong|b|em|i)\b[^<>\n]{0,200}>")
# IPython's prompts (IPython/terminal/prompts.py: "In [N]: ", "   ...: ", "Out[N]: "): the standard REPL's, so
# that the readers of ">>> torch.__version__" and of its answer read a notebook's session too
_IPY_IN = re.compile(r"^In \[\d+\]: ?", re.M)
_IPY_CONT = re.compile(r"^[ \t]+\.\.\.: ?", re.M)
_IPY_OUT = re.compile(r"^Out\[\d+\]: ?", re.M)


# CJK writing puts no space between a word and a version ("torch版本是2.3.0", "显卡是MI210"); a space there (what
# CJK typesetting calls 盘古之白) lets every reader's word boundaries work.  Same line count.
_CJK_ASCII = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])(?=[A-Za-z0-9])"
                        r"|(?<=[A-Za-z0-9])(?=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])")


def _web_text(text: str) -> str:
    if not text.isascii():
        text = _CJK_ASCII.sub(" ", text.translate(_WEB_CHARS))
    if ("&" in text or "<" in text) and _HTML_HINT.search(text):
        import html

        text = html.unescape(_HTML_TAG.sub("", text))
    if "In [" in text and _IPY_IN.search(text):
        text = _IPY_OUT.sub("", _IPY_CONT.sub("... ", _IPY_IN.sub(">>> ", text)))
    return text


def clean(text: str) -> str:
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _web_text(text)
    if _CI_STAMP_ANY.search(text):
        lines = text.split("\n")
        stamped = sum(1 for ln in lines if _CI_STAMP.match(ln))
        if stamped * 2 >= sum(1 for ln in lines if ln.strip()):  # a runner's log, not one stamped line in prose
            text = "\n".join(_CI_STAMP.sub("", ln, count=1) for ln in lines)
    return text


# -- collect_env -----------------------------------------------------------------------------------
_CE_KEY = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ._/()-]{1,60}?):\s?(?P<value>.*)$")


def _collect_env_fields(text: str) -> dict[str, str]:
    """Key -> value of collect_env's 'Key: value' lines; continuation lines (GPU list, cuDNN list)
    are appended to the previous key with newlines."""
    fields: dict[str, str] = {}
    last: str | None = None
    started = False
    for line in text.splitlines():
        if line.startswith(("PyTorch version:", "Collecting environment information")):
            started = True
        if not started:
            continue
        if line.startswith("Versions of relevant libraries"):
            break
        if line.lstrip().startswith(("```", "~~~", "</", "<details", "<summary")):
            last = None  # a Markdown fence or an HTML tag around a pasted report ends its field, never continues it
            continue
        m = _CE_KEY.match(line)
        if m and not line.startswith((" ", "\t", "/")) and not re.match(r"GPU \d+:", line):
            last = m.group("key").strip()
            fields[last] = m.group("value").strip()
        elif last and line.strip() and not line.startswith("CPU:"):
            fields[last] = (fields[last] + "\n" + line.strip()).strip()
        elif not line.strip():
            last = None
    return fields


def _na(v: str | None) -> bool:
    return v is None or v.strip().lower() in NA


_GPU_LINE = lazy(r"^(?:GPU[ \t]*(?P<idx>\d+)[ \t]*:[ \t]*)?(?P<name>\S(?:.*\S)?|.)[ \t\r]*$")  # linear
_PIP_LINE = re.compile(r"^\[(?P<tool>pip3?|conda)\]\s+(?P<rest>.+)$")


def parse_collect_env(text: str, source: str) -> list[Row]:
    f = _collect_env_fields(clean(text))
    if "PyTorch version" not in f:
        return []
    out: list[Row] = []
    src = f"{source} (collect_env)"
    version = f.get("PyTorch version", "")
    if not _na(version):
        cuda = "" if _na(f.get("CUDA used to build PyTorch")) else f["CUDA used to build PyTorch"]
        hip = "" if _na(f.get("ROCM used to build PyTorch")) else f["ROCM used to build PyTorch"]
        if "CUDA used to build PyTorch" not in f and "ROCM used to build PyTorch" not in f:
            # a partial paste (the first line or two of the report): the wheel's own label names its runtime
            local = version.partition("+")[2]
            hip = local[4:] if local.startswith("rocm") else ""
            cuda = f"{local[2:-1]}.{local[-1]}" if re.fullmatch(r"cu\d{3,4}", local) else ""
        out.append(row("framework_builds", src, name="torch", version=version, cuda=cuda, hip=hip,
                       debug=f.get("Is debug build", "").lower() == "true", channel=channel_of(version),
                       variant=variant_of(version, cuda, hip), targets=[], targets_source=""))
        if hip and not _na(f.get("MIOpen runtime version")):
            out.append(row("libraries", src, name="miopen", version=f["MIOpen runtime version"],
                           origin="framework-build", path=""))
    osname = f.get("OS", "")
    libc = f.get("Libc version", "")
    pyv = f.get("Python version", "")
    if osname or libc or pyv:
        glibc = libc.split("-", 1)[1] if libc.startswith("glibc-") else ""
        kernel = ""
        plat = f.get("Python platform", "")
        m = re.match(r"Linux-(?P<k>[^-]+(?:-[^-]+)*?)-(x86_64|aarch64|ppc64le)", plat)
        if m:
            kernel = m.group("k")
        arch = ""
        m = re.search(r"\((x86_64|aarch64|ppc64le|AMD64|arm64)\)", osname)
        if m:
            arch = m.group(1)
        out.append(row("os_info", src, name=re.sub(r"\s*\([^)]*\)$", "", osname), kernel=kernel, arch=arch,
                       glibc=glibc, python=pyv.split()[0] if pyv else ""))
    gcc = f.get("GCC version", "")
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)\s*$", gcc)
    if m and not _na(gcc):
        out.append(row("compilers", src, name="gcc", version=m.group(1)))
    rt = f.get("CUDA runtime version", "")
    if not _na(rt) and re.match(r"\d+\.\d+", rt):
        # collect_env runs the system's `nvcc --version` for this line: it is the toolkit, not torch's CUDA
        out.append(row("compilers", src, name="nvcc", version=rt, cuda_version=".".join(rt.split(".")[:2])))
    drv = f.get("Nvidia driver version", "")
    if not _na(drv):
        out.append(row("drivers", src, vendor="nvidia", component="user-space", version=drv.split()[0]))
    gpus = f.get("GPU models and configuration", "")
    if not _na(gpus):
        for i, line in enumerate(l for l in gpus.splitlines() if l.strip()):
            m = _GPU_LINE.match(line.strip())
            if not m:
                continue
            name = m.group("name")
            idx = int(m.group("idx")) if m.group("idx") is not None else i
            if _na(name):
                continue
            vendor = "amd" if re.search(r"\b(AMD|Radeon|Instinct|gfx\d)", name, re.I) else \
                ("nvidia" if re.search(r"NVIDIA|GeForce|Tesla|Quadro|RTX|\b[HABLTVP]\d{2,3}\b", name) else "")
            arch_m = re.search(r"\((gfx[0-9a-f]+)[^)]*\)", name)
            out.append(row("gpu_devices", src, vendor=vendor, index=idx,
                           name=re.sub(r"\s*\(gfx[^)]*\)", "", name).strip(),
                           arch=arch_m.group(1) if arch_m else None))
    cudnn = f.get("cuDNN version", "")
    if not _na(cudnn):
        for m in re.finditer(r"(\S*libcudnn(?:_\w+)?\.so\.(\d+(?:\.\d+)*))", cudnn):
            if "/libcudnn.so." in "/" + m.group(1).split("/")[-1] or m.group(1).split("/")[-1].startswith("libcudnn.so"):
                out.append(row("libraries", src, name="cudnn", version=m.group(2), path=m.group(1), origin="system"))
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)+)\s*", cudnn)
        if m:
            out.append(row("libraries", src, name="cudnn", version=m.group(1), origin="pasted"))
    hip_rt = f.get("HIP runtime version", "")
    if not _na(hip_rt):
        out.append(row("runtimes", src, vendor="amd", name="hip-runtime", version=hip_rt, origin="framework-build",
                       path=""))
    alloc = f.get("Caching allocator config", "")
    if not _na(alloc):
        out.append(row("env_vars", src, name="PYTORCH_CUDA_ALLOC_CONF", value=alloc))
    pkgs = parse_relevant_libraries(text, src)
    out.extend(pkgs)
    out = _pip_gpu_libraries(out, pkgs, src)
    return out


# pip wheels that carry the CUDA libraries a pip torch loads through its RPATH ($ORIGIN/../../nvidia/*/lib)
PIP_GPU_LIBS = [
    (re.compile(r"^nvidia-cudnn(-cu\d+)?$"), "cudnn"), (re.compile(r"^nvidia-nccl(-cu\d+)?$"), "nccl"),
    (re.compile(r"^nvidia-cublas(-cu\d+)?$"), "cublas"), (re.compile(r"^nvidia-cuda-runtime(-cu\d+)?$"), "cudart"),
    (re.compile(r"^nvidia-cusparselt(-cu\d+)?$"), "cusparselt"), (re.compile(r"^nvidia-cuda-nvrtc(-cu\d+)?$"), "nvrtc"),
]


def _pip_gpu_libraries(rows: list[Row], pkgs: list[Row], src: str) -> list[Row]:
    """A pip CUDA torch loads the nvidia-* wheels' libraries through its RPATH, whatever copy of the
    same library the system has (and collect_env lists).  Record the pip copy as the one loaded and
    the system copies collect_env guessed as not loaded."""
    torch = next((r for r in rows if r.table == "framework_builds" and r.get("name") == "torch"), None)
    if torch is None or torch.get("variant") != "cuda":
        return rows
    pip_libs = {}
    for p in pkgs:
        if p.get("location") != "pip":
            continue
        for pat, lib in PIP_GPU_LIBS:
            if pat.match(p.get("name", "")):
                pip_libs[lib] = p
    if not pip_libs:
        return rows
    out = []
    for r in rows:
        if r.table == "libraries" and r.get("name") in pip_libs and r.get("origin") == "system":
            r = Row(r.table, {**r.values, "selected": False}, r.source)
        out.append(r)
    for lib, p in sorted(pip_libs.items()):
        out.append(row("libraries", f"{src}: pip {p.get('name')} (loaded through torch's RPATH)", name=lib,
                       version=p.get("version"), origin="pip", selected=True, path="", requested_by="torch"))
    return out


def parse_relevant_libraries(text: str, source: str) -> list[Row]:
    """collect_env's '[pip3] torch==2.1.0' and '[conda] pytorch 2.1.0 py3.10_cuda12.1 pytorch' lines."""
    out = []
    for line in clean(text).splitlines():
        m = _PIP_LINE.match(line.strip())
        if not m:
            continue
        rest = m.group("rest").strip()
        if m.group("tool").startswith("pip"):
            name, sep, ver = rest.partition("==")
            if sep:
                out.append(row("packages", source, name=normalise_name(name.strip()), version=ver.strip(),
                               location="pip", requires=[]))
        else:
            parts = rest.split()
            if len(parts) >= 2 and re.match(r"\d", parts[1]):
                out.append(row("packages", source, name=normalise_name(parts[0]), version=parts[1],
                               location="conda", requires=[]))
    return out


# -- pip list / pip freeze / pip show --------------------------------------------------------------
_FREEZE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*(?P<ver>[0-9][\w.+!-]*)\s*$")
_PIPLIST_HEAD = re.compile(r"^Package\s+Version(\s+.*)?$")
_PIPLIST_ROW = lazy(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s+(?P<ver>[0-9][\w.+!-]*)(\s+\S.*)?$")


def parse_pip(text: str, source: str) -> list[Row]:
    out: list[Row] = []
    in_list = False
    lines = clean(text).splitlines()
    src = f"{source} (pip)"
    for i, line in enumerate(lines):
        s = line.strip()
        if _PIPLIST_HEAD.match(s):
            in_list = True
            continue
        if in_list:
            if set(s) <= {"-", " "} and s:
                continue
            m = _PIPLIST_ROW.match(s)
            if m:
                out.append(row("packages", src, name=normalise_name(m.group("name")), version=m.group("ver"),
                               location="pip", requires=[]))
                continue
            in_list = False
        m = _FREEZE.match(s)
        if m:
            out.append(row("packages", src, name=normalise_name(m.group("name")), version=m.group("ver"),
                           location="pip", requires=[]))
            continue
        if s.startswith("Name: ") and i + 1 < len(lines) and lines[i + 1].strip().startswith("Version: "):
            out.append(row("packages", src, name=normalise_name(s[6:].strip()),
                           version=lines[i + 1].strip()[9:].strip(), location="pip", requires=[]))
    return out


# -- small things people paste: os-release, uname, ls of devices, libraries and dist-info ----------
_LS_MISSING = lazy(r"^ls: cannot access '(?P<p>/dev/(?:kfd|dri[^']*|nvidia[^']*))': No such file or directory", re.M)
# `ls -l /dev/kfd ...` rows, and `ls -la /dev | grep kfd` / `ls -l /dev/dri` rows, which name the node bare (a character
# device called kfd, renderD128, nvidia0 is the GPU's node wherever it is listed)
_LS_DEV = lazy(r"^(?P<mode>[cd][rwxs-]{9})[.+]?[ \t]+\d+[ \t]+(?P<user>\S+)[ \t]+(?P<group>\S+)[ \t]+.*?"
                     r"(?:(?P<p>/dev/(?:kfd|dri/renderD\d+|nvidia\S*))|(?<=[ \t])(?P<bare>kfd|renderD\d+|nvidia(?:\d+|ctl|-uvm)))"
                     r"[ \t\r]*$", re.M)
_UNAME = re.compile(r"^Linux \S+ (?P<k>\d+\.\d+\S*) #.*?(?P<arch>x86_64|aarch64|ppc64le)", re.M)
_LIBFILE = lazy(r"\b(?P<f>lib(?P<n>amdhip64|cudnn|cudart|cublas|cublasLt|nccl|rccl|MIOpen|rocblas|hipblaslt|hipblas)\.so\.(?P<v>\d+(?:\.\d+){1,3}))\b")
_DISTDIR = re.compile(r"^(?P<n>[A-Za-z0-9][A-Za-z0-9_.]*?)-(?P<v>\d[\w.+!]*)\.dist-info/?$", re.M)
LIBNAMES = {"amdhip64": "amdhip64", "cudnn": "cudnn", "cudart": "cudart", "cublas": "cublas", "cublasLt": "cublaslt",
            "nccl": "nccl", "rccl": "rccl", "MIOpen": "miopen", "rocblas": "rocblas", "hipblaslt": "hipblaslt",
            "hipblas": "hipblas"}


def parse_misc(text: str, source: str) -> list[Row]:
    out: list[Row] = []
    rel = host.parse_os_release("\n".join(l for l in text.splitlines() if re.match(r"^[A-Z_]+=", l)))
    um = _UNAME.search(text)
    if rel.get("PRETTY_NAME") or um:
        out.append(row("os_info", f"{source} (os-release/uname)", name=rel.get("PRETTY_NAME", ""),
                       kernel=um.group("k") if um else "", arch=um.group("arch") if um else ""))
    for m in _LS_MISSING.finditer(text):
        out.append(row("device_nodes", f"{source} (ls)", path=m.group("p"), exists=False, readable=False,
                       writable=False, group="", mode=""))
    for m in _LS_DEV.finditer(text):
        if m.group("mode")[0] != "c":
            continue
        bare = m.group("bare")
        path = m.group("p") or (f"/dev/dri/{bare}" if bare.startswith("renderD") else f"/dev/{bare}")
        out.append(row("device_nodes", f"{source} (ls -l)", path=path, exists=True, readable=None,
                       writable=None, group=m.group("group"), mode=m.group("mode")))
    seen = set()
    for m in _LIBFILE.finditer(text):
        key = (m.group("n"), m.group("v"))
        if key in seen or m.group("v").count(".") < 1:
            continue
        seen.add(key)
        out.append(row("libraries", f"{source} (file name)", name=LIBNAMES[m.group("n")], version=m.group("v"),
                       path=m.group("f"), origin="pasted"))
        if m.group("n") == "amdhip64" and m.group("v").count(".") >= 2:
            out.append(row("runtimes", f"{source} (file name {m.group('f')})", vendor="amd", name="hip-runtime",
                           version=m.group("v"), path=m.group("f"), origin="pasted"))
    for m in _DISTDIR.finditer(text):
        out.append(row("packages", f"{source} (dist-info)", name=normalise_name(m.group("n")),
                       version=m.group("v"), location="dist-info listing", requires=[]))
        if normalise_name(m.group("n")) == "torch":  # torch's own dist-info directory names the build installed
            n = text.count("\n", 0, m.start()) + 1
            out.append(_torch_row(m.group("v"), f"{source} line {n} (dist-info {m.group(0).rstrip('/')})"))
    return out


_ENV_LINE = re.compile(r"^(?:declare -x |export )?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def parse_env_dump(text: str, source: str) -> list[Row]:
    """``env`` / ``printenv`` / ``export -p`` output: the variables that steer the GPU stack (secrets
    redacted by the same redactor as the live probe).  Only a block where most lines are NAME=value."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    hits = [m for m in (_ENV_LINE.match(ln.strip()) for ln in lines) if m]
    if len(hits) < 3 or len(hits) < 0.5 * len(lines):
        return []
    pairs = []
    for m in hits:
        val = m.group(2)
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val = val[1:-1]
        pairs.append((m.group(1), val))
    return host.parse_environ(pairs, f"{source} (env)")


def parse_dpkg_lines(text: str, source: str) -> list[Row]:
    """``dpkg -l`` rows or dpkg status paragraphs pasted (``dpkg.parse_dpkg``), each fact citing the line of its
    package, as every other pasted fact does: a verdict says where each version was read."""
    rows = dpkg.parse_dpkg(text, source)
    lines = text.splitlines()

    def line_of(pkg_re: str) -> tuple[int, str] | None:
        pat = re.compile(r"^(?:ii[ \t]+|Package:[ \t]*)(" + pkg_re + r")(?::\w+)?(?:[ \t]|$)")
        for i, ln in enumerate(lines):
            m = pat.match(ln.strip())
            if m:
                return i + 1, m.group(1)
        return None

    out = []
    for r in rows:
        name = r.get("name")
        pkg_re = {"rocm": r"rocm-core|libamdhip64-\d+", "hip-runtime": r"hip-runtime-amd"}.get(str(name)) if \
            r.table == "runtimes" else (re.escape(str(r.get("path"))) if r.table == "libraries" else
                                        r"amdgpu-dkms" if r.table == "drivers" else None)
        at = line_of(pkg_re) if pkg_re else None
        if at:
            n, pkg = at
            r = Row(r.table, r.values, f"{source} line {n} (installed package {pkg}: {r.get('version')})")
        out.append(r)
    return out


# -- dispatch --------------------------------------------------------------------------------------
def _parser(module, name: str) -> Callable[[str, str], list[Row]] | None:
    return getattr(module, name, None)


DETECTORS: list[tuple[re.Pattern[str], object, str]] = [
    (re.compile(r"^(PyTorch version:|Collecting environment information)", re.M), None, "parse_collect_env"),
    (re.compile(r"^\[(pip3?|conda)\] ", re.M), None, "parse_relevant_libraries"),
    (re.compile(r"ROCk module|HSA System Attributes|HSA Agents|Marketing Name:|amdgcn-amd-amdhsa"), rocminfo, "parse_rocminfo"),
    (re.compile(r"ROCk module version"), kfd, "parse_rock_module"),
    (kfd.LSPCI_AMD_GPU, kfd, "parse_lspci"),
    (re.compile(r"HIP_PLATFORM|^HIP version[ \t]*:|HIP_PATH[ \t]*:", re.M), hip, "parse_hipconfig"),
    (re.compile(r"^HIP version: ", re.M), hip, "parse_hipcc_version"),
    (re.compile(r"ROCm System Management Interface|^GPU\[\d+\][ \t]*:", re.M), rocm_smi, "parse_rocm_smi"),
    (re.compile(r"^(GPU: \d+|[ \t]*ASIC:|[ \t]*MARKET_NAME:|[ \t]*TARGET_GRAPHICS_VERSION:)|AMDSMI Tool:", re.M), rocm_smi, "parse_amd_smi"),
    (re.compile(r"^ii[ \t]+(rocm-core|hip-runtime-amd|amdgpu-dkms|libamdhip64|miopen-hip|rocblas|hipcc|rocminfo)", re.M), None, "parse_dpkg_lines"),
    (re.compile(r"NVIDIA-SMI|Driver Version[ \t]*:|CUDA Version[ \t]*:|^name, |NVSMI LOG", re.M), nvidia, "parse_nvidia_smi"),
    (re.compile(r"NVRM version"), nvidia, "parse_proc_version"),
    (re.compile(r"Cuda compilation tools, release"), nvidia, "parse_nvcc"),
    (re.compile(r"^__version__ = ['\"]", re.M), framework, "parse_torch_version_py"),
    (re.compile(r"^PRETTY_NAME=|^Linux \S+ \d+\.\d+|^ls: cannot access '/dev/|^[cd][rwx-]{9}.*?/dev/|^c[rwx-]{9}.*[ \t](?:kfd|renderD\d+|nvidia(?:\d+|ctl|-uvm))[ \t\r]*$|\blib(amdhip64|cudnn|cudart|cublas|nccl|rccl|MIOpen|rocblas|hipblaslt)\.so\.\d+\.\d|\.dist-info/?$", re.M), None, "parse_misc"),
    (re.compile(r"^(?:declare -x |export )?(?:PATH|HOME|SHELL|USER|HOSTNAME|LD_LIBRARY_PATH|CUDA_HOME|ROCM_PATH)=", re.M),
     None, "parse_env_dump"),
    (_MENTIONS, None, "parse_mentions"),
    (_NV_MENTIONS, None, "parse_nvidia_mentions"),
    (transcripts._ANY, transcripts, "parse_transcripts"),
    (_PROSE, None, "parse_prose"),
    (_ENVBLOCK, None, "parse_envblock"),
    (re.compile(r"^Package[ \t]+Version|^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9]|^Name: \S+\nVersion: ", re.M), None, "parse_pip"),
]


SMI_NO_DRIVER = re.compile(r"Driver not initialized \(amdgpu not found in modules\)[^\n]*|AMDSMI_STATUS_DRIVER_NOT_LOADED[^\n]*")


# Past this size a detector's regex runs only where its literal gate (model/gate.py: some literal every match
# contains occurs in the text, a C-speed substring test) says it can match: the head of a large log (1 MiB of a
# deep traceback or a training log) cost ~0.6 s of regex searches, ~0.05 s behind the gates.  Same answers: a
# gate never says no to text its pattern matches.
GATED_TEXT = 64 * 1024
_detector_gates: list | None = None


def _gates() -> list:
    global _detector_gates
    if _detector_gates is None:
        from gpuvet.model.gate import LiteralGate

        _detector_gates = [LiteralGate(p.pattern, p.flags) for p, _, _ in DETECTORS]
    return _detector_gates


def parse_report(text: str, source: str = "<pasted>") -> Facts:
    """Facts from pasted text.  Raises ValueError when no tool output is recognised."""
    text = clean(text)
    facts = Facts(origin="pasted")
    recognised = False
    gates = _gates() if len(text) > GATED_TEXT else None
    low = text.lower() if gates is not None else None  # once for every gate with a case-folded needle
    for i, (pattern, module, fname) in enumerate(DETECTORS):
        if gates is not None and not gates[i](text, low):
            continue
        if not pattern.search(text):
            continue
        func = globals()[fname] if module is None else _parser(module, fname)
        if func is None:
            continue
        try:
            rows = list(func(text, source))
        except Exception as exc:  # one parser's bug must not lose the others' facts
            facts.fail(ProbeError(f"pasted.{fname}", (), f"{fname}: {type(exc).__name__}: {exc}"))
            continue
        if rows:
            recognised = True
            facts.add(rows)
    nv_err = getattr(nvidia, "nvidia_smi_error", None)
    msg = nv_err(text) if nv_err else None
    if msg and "not found" not in msg:
        # a pasted nvidia-smi that failed: the driver tables could not be read, which checks must see
        facts.fail(ProbeError("pasted.nvidia-smi", ("drivers", "gpu_devices"), msg))
        recognised = True
    amd_err = getattr(rocminfo, "rocminfo_error", None)
    looks_rocminfo = any(n in text for n in ("ROCk module", "HSA System Attributes", "HSA Agents",
                                             "hsa api call failure"))
    msg = amd_err(text) if amd_err and looks_rocminfo else None
    if msg:
        facts.fail(ProbeError("pasted.rocminfo", ("gpu_devices",), msg))
        recognised = True
    # rocm-smi / amd-smi without the kernel driver print only their error: that is a fact too (the ROCm
    # user space is there, the amdgpu module is not loaded), not text to refuse
    smi = SMI_NO_DRIVER.search(text) if "Driver not initialized" in text or "AMDSMI_STATUS" in text else None
    if smi:
        facts.fail(ProbeError("pasted.rocm-smi", ("drivers", "gpu_devices"), smi.group(0).strip()))
        recognised = True
    if not recognised:
        raise ValueError(f"{source}: no recognisable tool output (expected collect_env, rocminfo, nvidia-smi, "
                         "hipconfig, hipcc/nvcc --version, pip list/freeze or torch/version.py)")
    if any(r.table == "gpu_devices" and r.get("vendor") == "nvidia" and PROSE_GPU not in r.source for r in facts.rows):
        # a tool printed the GPU: a model named in prose is another machine, or the same one said less exactly
        facts.rows = [r for r in facts.rows if not (r.table == "gpu_devices" and PROSE_GPU in r.source)]
    # a version stated in words or an install index yields to a tool's output saying the same thing more exactly
    facts.rows = _dedupe(weakest_first_dropped(facts.rows))
    return facts


_KEYS: dict[str, tuple[str, ...]] = {
    "gpu_devices": ("vendor", "index"),
    "drivers": ("vendor", "component"),
    "framework_builds": ("name",),
    "compilers": ("name",),
    "os_info": (),
    "packages": ("name", "version"),
    "runtimes": ("vendor", "name", "origin", "version"),
    "env_vars": ("name",),
    "libraries": ("name", "version"),
    "device_nodes": ("path",),
}


_LINE_OF = re.compile(r"^(.{0,300}? line \d+) \(")


def _line_of(source: str) -> str | None:
    m = _LINE_OF.match(source)
    return m.group(1) if m else None


def _dedupe(rows: Iterable[Row]) -> list[Row]:
    """Merge rows that describe the same thing (collect_env and nvidia-smi both list GPU 0): the
    first row's values win, later rows fill what it lacks."""
    out: list[Row] = []
    index: dict[tuple, int] = {}
    for r in rows:
        key_cols = _KEYS.get(r.table)
        if key_cols is None:
            out.append(r)
            continue
        key = (r.table,) + tuple(r.values.get(c) for c in key_cols)
        if r.table == "gpu_devices" and r.values.get("index") is None:
            key = (r.table, r.values.get("vendor"), r.values.get("name"))
        if key in index:
            i = index[key]
            old = out[i]
            merged = dict(old.values)
            for k, v in r.values.items():
                if merged.get(k) in (None, "", []) and v not in (None, "", []):
                    merged[k] = v
            # two readers of one line (a field prose and the environment-block reader both read) are one source
            same_line = _line_of(r.source)
            src = old.source if r.source == old.source or (same_line and same_line == _line_of(old.source)) \
                else f"{old.source}; {r.source}"
            out[i] = Row(old.table, merged, src)
        else:
            index[key] = len(out)
            out.append(r)
    return out
