"""Probes of the host: OS, the environment variables that steer the stack, device nodes and the
user's groups, containers, and the Python distributions installed (read from dist-info directories,
never by importing them)."""
from __future__ import annotations

import os
import re
import stat as _stat
from typing import Iterable

from gpuvet.model import Row, row
from gpuvet.model.redact import redact_env
from gpuvet.model.versions import normalise_name

from .base import Probe
from .system import System
from ..model.lazyre import lazy

# Variables that change what the GPU stack does.  Names or prefixes (ending in '_').
ENV_NAMES = (
    "HSA_", "HIP_", "ROCR_", "ROCM_", "ROCBLAS_", "HIPBLASLT_", "MIOPEN_", "AMD_", "GPU_DEVICE_ORDINAL",
    "CUDA_", "NVIDIA_", "NCCL_", "RCCL_", "CUDNN_", "CUBLAS_", "CUBLASLT_", "NVTE_",
    "PYTORCH_", "TORCH_", "TORCHINDUCTOR_", "TRITON_", "XLA_", "JAX_", "TF_CPP_", "TF_GPU_", "TF_FORCE_", "VLLM_",
    "LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "PYTHONPATH", "CONDA_PREFIX", "VIRTUAL_ENV",
    "OMPI_", "OMP_NUM_THREADS", "HF_HOME", "HF_HUB_OFFLINE", "HF_TOKEN",
    "CC", "CXX", "NVCC_", "CUDAHOSTCXX", "CUDACXX",
)
MAX_ENV_VALUE = 2000


def _env_wanted(name: str) -> bool:
    return any(name.startswith(p) if p.endswith("_") else name == p for p in ENV_NAMES)


def parse_environ(environ: dict[str, str] | Iterable[tuple[str, str]], source: str) -> list[Row]:
    items = environ.items() if isinstance(environ, dict) else environ
    out = []
    for name, value in sorted(items):
        if _env_wanted(name):
            v = redact_env(name, value)
            if len(v) > MAX_ENV_VALUE:
                v = v[:MAX_ENV_VALUE] + "…"
            out.append(row("env_vars", source, name=name, value=v))
    return out


def probe_env(system: System) -> list[Row]:
    return parse_environ(dict(system.environ), "environ")


def parse_os_release(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k.strip()] = v.strip().strip('"')
    return out


def probe_os(system: System) -> list[Row]:
    rel = parse_os_release(system.read_text("/etc/os-release") or "")
    kernel = (system.read_text("/proc/sys/kernel/osrelease") or "").strip() or system.uname()[1]
    v = system.libc_version()
    glibc = v.split()[-1] if v.startswith("glibc") else ""
    return [row("os_info", "/etc/os-release", name=rel.get("PRETTY_NAME") or rel.get("NAME") or system.uname()[0],
                kernel=kernel, arch=system.uname()[2], glibc=glibc, python=system.python_version())]


DEVICE_GLOBS = ("/dev/kfd", "/dev/dri/renderD*", "/dev/nvidiactl", "/dev/nvidia[0-9]*", "/dev/nvidia-uvm", "/dev/dxg")


def probe_devices(system: System) -> list[Row]:
    out = []
    for pattern in DEVICE_GLOBS:
        for path in system.glob(pattern) if "*" in pattern else ([pattern] if system.exists(pattern) else []):
            st = system.stat(path)
            group = system.group_name(st.gid) if st else ""
            mode = f"{_stat.S_IMODE(st.mode):04o}" if st else ""
            out.append(row("device_nodes", path, path=path, exists=True,
                           readable=system.access(path, os.R_OK), writable=system.access(path, os.W_OK),
                           group=group, mode=mode))
    return out


def probe_user(system: System) -> list[Row]:
    return [row("user", "os", name=system.user_name(), uid=system.uid(),
                groups=sorted({system.group_name(g) for g in system.groups()}))]


def probe_container(system: System) -> list[Row]:
    out = []
    env = system.environ
    if system.exists("/.dockerenv"):
        out.append(row("containers", "/.dockerenv", kind="docker", detail="/.dockerenv exists"))
    if system.exists("/run/.containerenv"):
        out.append(row("containers", "/run/.containerenv", kind="podman", detail="/run/.containerenv exists"))
    for var, kind in (("APPTAINER_CONTAINER", "apptainer"), ("SINGULARITY_CONTAINER", "singularity")):
        if env.get(var):
            out.append(row("containers", "environ", kind=kind, detail=f"{var}={env[var]}"))
    if env.get("KUBERNETES_SERVICE_HOST"):
        out.append(row("containers", "environ", kind="kubernetes", detail="KUBERNETES_SERVICE_HOST is set"))
    cg = system.read_text("/proc/1/cgroup", limit=65536) or ""
    if not out:
        for key, kind in (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("lxc", "lxc")):
            if key in cg:
                out.append(row("containers", "/proc/1/cgroup", kind=kind, detail=f"'{key}' in /proc/1/cgroup"))
                break
    ver = system.read_text("/proc/version", limit=4096) or ""
    if "microsoft" in ver.lower():
        out.append(row("containers", "/proc/version", kind="wsl", detail="Microsoft kernel (WSL)"))
    return out


# -- Python distributions ---------------------------------------------------------------------------
_DIST_DIR = re.compile(r"^(?P<name>.+?)-(?P<version>[^-]+?)\.(dist-info|egg-info)$")
# Distributions whose requirements matter to checks (extensions and companions pin torch/CUDA).
REQUIRES_FOR = lazy(
    r"^(torch.*|triton|pytorch-triton.*|xformers|flash-attn.*|bitsandbytes|apex|deepspeed|vllm|"
    r"jax.*|tensorflow.*|onnxruntime.*|cupy.*|transformers|accelerate|mmcv.*|detectron2|auto-gptq|"
    r"torch-scatter|torch-sparse|torch-geometric|transformer-engine.*|nvidia-.*)$")




def _requires(system: System, path: str) -> list[str]:
    meta = system.read_text(os.path.join(path, "METADATA"), limit=512 * 1024) \
        or system.read_text(os.path.join(path, "PKG-INFO"), limit=512 * 1024) or ""
    reqs = []
    for line in meta.splitlines():
        if not line.strip():
            break  # headers end at the first blank line
        if line.startswith("Requires-Dist:"):
            req = line.split(":", 1)[1].strip()
            if "extra ==" not in req:
                reqs.append(req)
    return reqs


def _meta_field(system: System, path: str, field: str) -> str:
    meta = system.read_text(os.path.join(path, "METADATA"), limit=65536) \
        or system.read_text(os.path.join(path, "PKG-INFO"), limit=65536) or ""
    for line in meta.splitlines():
        if not line.strip():
            break
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def probe_packages(system: System) -> list[Row]:
    out = []
    seen: set[tuple[str, str]] = set()
    for site in system.python_paths():
        for entry in system.listdir(site):
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            path = os.path.join(site, entry)
            m = _DIST_DIR.match(entry)
            name, version = (m.group("name"), m.group("version")) if m else ("", "")
            if not m or not version[:1].isdigit():
                # egg-info without a version in its name, or a broken dist-info: read its metadata
                name = _meta_field(system, path, "Name") or entry.split("-")[0].split(".")[0]
                version = _meta_field(system, path, "Version")
            norm = normalise_name(name)
            key = (norm, site)
            if key in seen:
                continue
            seen.add(key)
            requires = _requires(system, path) if REQUIRES_FOR.match(norm) else []
            out.append(row("packages", path, name=norm, version=version, location=site, requires=requires))
    return out


def parse_gcc_version(text: str, source: str, path: str = "") -> list[Row]:
    """``gcc -dumpfullversion`` (12.2.0) or the first line of ``gcc --version``."""
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)\s*$", text.strip().splitlines()[0]) if text.strip() else None
    return [row("compilers", source, name="gcc", version=m.group(1), path=path)] if m else []


def parse_cc_version(text: str) -> tuple[str, str] | None:
    """(family, version) from the first line of ``CC --version``: gcc/g++ or clang."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    m = re.search(r"clang version (\d+\.\d+(?:\.\d+)?)", first)
    if m:
        return "clang", m.group(1)
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)(?:\s+\d{8})?(?:\s+\([^)]*\))?\s*$", first)
    if m:
        return "gcc", m.group(1)
    return None


def host_compiler_requests(environ: dict) -> list[tuple[str, str, str, bool]]:
    """(role, requested, executable, from_env) of each host compiler the GPU stack will call.

    * Triton compiles its launcher with ``CC``, else ``gcc``, else ``clang`` on PATH
      (triton/runtime/build.py); torch.utils.cpp_extension passes ``CC`` to nvcc as ``-ccbin``.
    * Inductor's C++ path and cpp_extension's C++ compile use ``CXX``, else ``g++``
      (torch/_inductor/cpp_builder.py, config.cpp.cxx).
    * nvcc's host compiler: ``NVCC_CCBIN`` (nvcc), ``CUDAHOSTCXX`` (CMake builds), else the PATH's.
    """
    out = []
    cc = environ.get("CC")
    if cc is not None:
        out.append(("CC (Triton; cpp_extension's nvcc -ccbin)", f"CC={cc}", cc.split()[0] if cc.strip() else "", True))
    else:
        out.append(("CC (Triton; cpp_extension's nvcc -ccbin)", "gcc or clang on PATH (CC unset)", "", False))
    cxx = environ.get("CXX")
    if cxx is not None:
        out.append(("CXX (Inductor C++, cpp_extension)", f"CXX={cxx}", cxx.split()[0] if cxx.strip() else "", True))
    else:
        out.append(("CXX (Inductor C++, cpp_extension)", "g++ on PATH (CXX unset)", "g++", False))
    for var in ("NVCC_CCBIN", "CUDAHOSTCXX"):
        if environ.get(var) is not None:
            v = environ[var]
            out.append((f"nvcc host ({var})", f"{var}={v}", v.split()[0] if v.strip() else "", True))
    return out


def probe_host_compilers(system: System) -> list[Row]:
    """Each host compiler the stack will call: does it exist, does it run, which version."""
    rows: list[Row] = []
    ran: dict[str, tuple[str, str, str] | None] = {}  # path -> (family, version, error)
    for role, requested, exe, from_env in host_compiler_requests(dict(system.environ)):
        if not exe and not from_env:  # Triton's default: gcc, else clang
            exe = "gcc" if system.which("gcc") else ("clang" if system.which("clang") else "gcc")
        path = exe if "/" in exe else (system.which(exe) if exe else None)
        name = os.path.basename(exe or "cc")
        base = "clang" if "clang" in name else ("gcc" if re.search(r"gcc|g\+\+|^cc$|^c\+\+$", name) else name)
        if not exe:
            rows.append(row("host_compilers", "environ", name=base, version="", path="", role=role, requested=requested,
                            runs=False, error="empty value"))
            continue
        if not path or not system.exists(path):
            rows.append(row("host_compilers", "environ" if from_env else "PATH", name=base, version="", path=path or exe,
                            role=role, requested=requested, runs=False,
                            error=f"{exe} not found" + ("" if "/" in exe else " on PATH")))
            continue
        if path not in ran:
            res = system.run([path, "--version"], timeout=3)
            got = parse_cc_version(res.stdout) if res.ok else None
            if got:
                ran[path] = (got[0], got[1], "")
            else:
                ran[path] = (base, "", res.describe() if not res.ok else "no version in its --version output")
        fam, version, err = ran[path]  # type: ignore[misc]
        rows.append(row("host_compilers", f"{path} --version", name=fam, version=version, path=path, role=role,
                        requested=requested, runs=not err, error=err))
    rows.extend(_hip_clang(system))
    return rows


def _hip_clang(system: System) -> list[Row]:
    """hipcc's compiler on AMD when ``HIP_CLANG_PATH`` names it: ``$HIP_CLANG_PATH/clang++`` (hipcc's
    hipvars.pm reads the variable; Debian's hipcc 5.2.3 calls ``clang++-15`` there, else ``clang-15``)."""
    d = (system.environ or {}).get("HIP_CLANG_PATH")
    if d is None:
        return []
    role, requested = "hipcc's clang (HIP_CLANG_PATH)", f"HIP_CLANG_PATH={d}"
    names = system.listdir(d) if d else []
    cands = [n for n in ("clang++", "clang") if n in names] + sorted(
        n for n in names if re.fullmatch(r"clang(\+\+)?-\d+", n))
    if not cands:
        return [row("host_compilers", "environ", name="clang", version="", path=d, role=role, requested=requested,
                    runs=False, error=f"no clang++ in {d or '(empty)'}")]
    path = f"{d.rstrip('/')}/{cands[0]}"
    res = system.run([path, "--version"], timeout=3)
    got = parse_cc_version(res.stdout) if res.ok else None
    err = "" if got else (res.describe() if not res.ok else "no version in its --version output")
    return [row("host_compilers", f"{path} --version", name=got[0] if got else "clang", version=got[1] if got else "",
                path=path, role=role, requested=requested, runs=not err, error=err)]


def probe_host_compiler(system: System) -> list[Row]:
    return probe_host_compilers(system)


PROBES = [
    Probe("host.cc", ("host_compilers",), probe_host_compilers, "Host compilers (CC, CXX, nvcc's): exist, run, version."),
    Probe("host.env", ("env_vars",), probe_env, "Environment variables that steer the GPU stack."),
    Probe("host.os", ("os_info",), probe_os, "/etc/os-release, kernel, glibc, Python."),
    Probe("host.devices", ("device_nodes",), probe_devices, "GPU device nodes and access."),
    Probe("host.user", ("user",), probe_user, "User and groups."),
    Probe("host.container", ("containers",), probe_container, "Container runtime."),
    Probe("host.packages", ("packages",), probe_packages, "Python distributions (dist-info)."),
]
