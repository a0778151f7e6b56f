"""Probes: framework builds (torch, jax/jaxlib and their GPU plugins, tensorflow), read without
importing them.

torch: ``torch/version.py`` (version, cuda, hip, debug, git_version), and the GPU targets from the
ELF of ``torch/lib/libtorch_cuda.so`` (CUDA fatbin) or ``torch/lib/libtorch_hip.so`` (HIP offload
bundles) -- the answer ``torch.cuda.get_arch_list()`` gives, without the import.  Then the dynamic
loader's view of those libraries (``probes.loader``): which copy of cuDNN, cuBLAS, NCCL, the CUDA
runtime, HIP, MIOpen, rocBLAS ... each will really load, and which copies it shadows.

Where: ``system.python_paths()``, the ``sys.path`` of the interpreter examined (gpuvet's own, or
``--python``); the first entry holding a ``torch`` package is the one ``import torch`` would take.

Target rule: a GPU target is reported in ``targets`` when it appears in at least half as many
fatbin entries as the most common target of its kind (cubin ``sm_XX`` or PTX ``compute_XX``).  A
build's TORCH_CUDA_ARCH_LIST puts every kernel in every listed arch; a few kernels (FlashAttention,
CUTLASS) add arch-specific ones (sm_90a, sm_100a) that do not make the whole build run there.  Those
partial targets are named in ``targets_source`` with their entry counts.
"""
from __future__ import annotations

import ast
import os
import re
import sys
from typing import Iterable, Sequence

from gpuvet.model import Row, row
from gpuvet.model.versions import channel_of, normalise_name, variant_of

from . import elf, kernel_files, loader
from .base import Probe
from .system import System
from ..model.lazyre import lazy

# -- torch/version.py ---------------------------------------------------------------------------------
_ASSIGN_KEYS = {"__version__": "version", "debug": "debug", "cuda": "cuda", "hip": "hip",
                "rocm": "rocm", "xpu": "xpu", "git_version": "git_version"}


def _version_py_values(text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in tree.body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            if isinstance(target, ast.Name) and value is not None and target.id in _ASSIGN_KEYS:
                try:
                    out[_ASSIGN_KEYS[target.id]] = ast.literal_eval(value)
                except (ValueError, SyntaxError):
                    pass
        return out
    # a truncated paste: fall back to line matching
    for line in text.splitlines():
        m = re.match(r"\s*(\w+)\s*(?::[^=]*)?=\s*(.+?)\s*$", line)
        if m and m.group(1) in _ASSIGN_KEYS:
            try:
                out[_ASSIGN_KEYS[m.group(1)]] = ast.literal_eval(m.group(2))
            except (ValueError, SyntaxError):
                pass
    return out


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def parse_torch_version_py(text: str, source: str, path: str = "") -> list[Row]:
    """torch/version.py (or its pasted text) -> one framework_builds row (targets not yet known)."""
    vals = _version_py_values(text)
    version = vals.get("version")
    if not isinstance(version, str) or not version:
        return []
    cuda, hip, xpu = (_str_or_none(vals.get(k)) for k in ("cuda", "hip", "xpu"))
    return [row("framework_builds", source, name="torch", version=version, cuda=cuda or "",
                hip=hip or "", debug=bool(vals.get("debug", False)),
                git_version=str(vals.get("git_version") or ""), channel=channel_of(version),
                targets=[], targets_source="", variant=variant_of(version, cuda, hip, xpu), path=path)]


# -- finding distributions without importlib (so a fake System can serve them) ---------------------------
_DIST_RE = lazy(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[^-]+?)\.(?:dist-info|egg-info)$")


_norm = normalise_name  # PEP 503, as everywhere


def site_dirs(paths: Sequence[str] | None = None) -> list[str]:
    """Directories of the current interpreter's import path, in order, deduplicated."""
    out: list[str] = []
    for p in (sys.path if paths is None else paths):
        p = p or os.getcwd()
        if p not in out and not p.endswith(".zip"):
            out.append(p)
    return out


def find_distributions(system: System, dirs: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """normalised name -> (version, dist-info dir, site dir); the first directory on the path wins."""
    out: dict[str, tuple[str, str, str]] = {}
    for d in dirs:
        for entry in system.listdir(d):
            m = _DIST_RE.match(entry)
            if not m:
                continue
            name = _norm(m.group("name"))
            if name not in out:
                out[name] = (m.group("version"), f"{d}/{entry}", d)
    return out


def _metadata_version(system: System, dist_dir: str) -> str | None:
    text = system.read_text(f"{dist_dir}/METADATA", limit=16 * 1024) or system.read_text(
        f"{dist_dir}/PKG-INFO", limit=16 * 1024)
    if text:
        m = re.search(r"^Version:[ \t]*(\S+)", text, re.M)
        if m:
            return m.group(1)
    return None


# -- torch --------------------------------------------------------------------------------------------
CUDA_LIBS = ("libtorch_cuda.so", "libtorch_cuda_cu.so")
HIP_LIBS = ("libtorch_hip.so",)
# Other torch libraries whose DT_NEEDED name GPU libraries the loader must find.
EXTRA_GPU_LIBS = ("libc10_cuda.so", "libcaffe2_nvrtc.so", "libc10_hip.so", "libtorch_cuda_linalg.so")


def find_torch(system: System, dirs: Sequence[str]) -> str | None:
    for d in dirs:
        if system.exists(f"{d}/torch/version.py") or system.exists(f"{d}/torch/__init__.py"):
            return f"{d}/torch"
    return None


_STD_FLAG = re.compile(r'def _get_cpp_std_cflag\(std_num: str = "c\+\+(\d\d)"')
_CMAKE_STD = re.compile(r"\bCXX_STANDARD\s+(\d\d)\b")


def torch_cxx_standard(system: System, tdir: str) -> tuple[str, str]:
    """The C++ standard torch's C++ code paths compile with: Inductor's default -std flag
    (torch/_inductor/cpp_builder.py), else the CXX_STANDARD its CMake config gives extensions."""
    path = f"{tdir}/_inductor/cpp_builder.py"
    m = _STD_FLAG.search(system.read_text(path, limit=256 * 1024) or "")
    if m:
        return m.group(1), f"{path}: -std=c++{m.group(1)}"
    path = f"{tdir}/share/cmake/Torch/TorchConfig.cmake"
    m = _CMAKE_STD.search(system.read_text(path, limit=64 * 1024) or "")
    if m:
        return m.group(1), f"{path}: CXX_STANDARD {m.group(1)}"
    return "", ""


def probe_torch(system: System, dirs: Sequence[str]) -> list[Row]:
    tdir = find_torch(system, dirs)
    if tdir is None:
        return []
    vpath = f"{tdir}/version.py"
    text = system.read_text(vpath, limit=64 * 1024)
    rows = parse_torch_version_py(text, vpath, tdir) if text else []
    if not rows:
        dists = find_distributions(system, [os.path.dirname(tdir)])
        v = dists.get("torch")
        version = (_metadata_version(system, v[1]) or v[0]) if v else None
        if not version:
            return []
        rows = [row("framework_builds", v[1] if v else tdir, name="torch", version=version, cuda="", hip="",
                    debug=False, git_version="", channel=channel_of(version), targets=[], targets_source="",
                    variant=variant_of(version), path=tdir)]
    base = rows[0]
    vals = dict(base.values)
    vals["cxx_standard"], vals["cxx_standard_source"] = torch_cxx_standard(system, tdir)
    gpu_lib = None
    for name in (*CUDA_LIBS, *HIP_LIBS):
        p = f"{tdir}/lib/{name}"
        if system.exists(p):
            gpu_lib = p
            break
    if gpu_lib is None:
        vals["targets"] = []
        vals["targets_source"] = "no libtorch_cuda.so / libtorch_hip.so in torch/lib: no GPU code"
        out = [row("framework_builds", base.source, **vals)]
        return out
    try:
        co = elf.code_objects(system, gpu_lib)
        full, partial = co.split()
        vals["targets"] = full
        vals["partial_targets"] = [f"{k}:{v}" for k, v in partial.items()]
        src = f"{gpu_lib}: {co.kind}, {co.entries} entries in {co.containers} " + (
            "containers" if co.kind == "cuda-fatbin" else "bundles")
        if partial:
            src += "; in a few kernels only: " + ", ".join(f"{k} ({v})" for k, v in partial.items())
        if co.note:
            src += f"; {co.note}"
        if co.kind == "none":
            src = f"{gpu_lib}: no .nv_fatbin / .hip_fatbin section"
        vals["targets_source"] = src
    except (elf.ElfError, OSError) as exc:
        vals["targets_source"] = f"could not read {gpu_lib}: {exc}"
    out = [row("framework_builds", base.source, **vals)]
    # the dynamic loader's view of the GPU libraries
    libs = [gpu_lib] + [f"{tdir}/lib/{n}" for n in EXTRA_GPU_LIBS if system.exists(f"{tdir}/lib/{n}")]
    resolved = loader.resolve_framework_libraries(system, libs, framework_dir=tdir, site_dir=os.path.dirname(tdir),
                                                  framework_hip=str(vals.get("hip") or ""))
    out.extend(resolved)
    # the kernel directories of the ROCm math libraries that copy reads (none on a CUDA build)
    out.extend(kernel_files.kernel_library_rows(system, [r for r in resolved if r.table == "libraries"],
                                                framework_dir=tdir, framework_hip=str(vals.get("hip") or "")))
    return out


# -- jax / jaxlib / plugins, tensorflow ---------------------------------------------------------------
_PLUGIN = re.compile(r"^jax-(cuda|rocm)(\d+)-(plugin|pjrt)$")


def _plugin_runtime(kind: str, digits: str) -> str:
    """'cuda','12' -> '12'; 'rocm','60' -> '6.0'; 'rocm','7' -> '7'."""
    if kind == "rocm" and len(digits) >= 2:
        return f"{digits[0]}.{digits[1:]}"
    return digits


def probe_jax(system: System, dists: dict[str, tuple[str, str, str]]) -> list[Row]:
    rows: list[Row] = []
    plugins = sorted(n for n in dists if _PLUGIN.match(n))
    variant, cuda, hip = "cpu", "", ""
    for n in plugins:
        m = _PLUGIN.match(n)
        assert m
        if m.group(1) == "cuda":
            variant, cuda = "cuda", cuda or _plugin_runtime("cuda", m.group(2))
        else:
            variant, hip = "rocm", hip or _plugin_runtime("rocm", m.group(2))
    for name in ("jax", "jaxlib"):
        if name not in dists:
            continue
        version, dist_dir, site = dists[name]
        v_cuda, v_hip, v_variant = cuda, hip, variant
        local = version.split("+", 1)[1] if "+" in version else ""
        m = re.match(r"cuda(\d+)", local)  # old jaxlib wheels: 0.4.20+cuda12.cudnn89
        if m:
            v_variant, v_cuda = "cuda", v_cuda or m.group(1)
        m = re.match(r"rocm(\d+)", local)
        if m:
            v_variant, v_hip = "rocm", v_hip or _plugin_runtime("rocm", m.group(1))
        rows.append(row("framework_builds", dist_dir, name=name, version=version, cuda=v_cuda, hip=v_hip,
                        debug=False, git_version="", channel=channel_of(version), targets=[],
                        targets_source="", variant=v_variant, path=f"{site}/{name}"))
    for n in plugins:
        m = _PLUGIN.match(n)
        assert m
        version, dist_dir, site = dists[n]
        rt = _plugin_runtime(m.group(1), m.group(2))
        rows.append(row("framework_builds", dist_dir, name=n, version=version,
                        cuda=rt if m.group(1) == "cuda" else "", hip=rt if m.group(1) == "rocm" else "",
                        debug=False, git_version="", channel=channel_of(version), targets=[],
                        targets_source="", variant="cuda" if m.group(1) == "cuda" else "rocm",
                        path=f"{site}/{n.replace('-', '_')}"))
    return rows


_TF_DISTS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-rocm", "tf-nightly",
             "tf-nightly-cpu", "intel-tensorflow")


def parse_tf_build_info(text: str) -> dict[str, object]:
    """tensorflow/python/platform/build_info.py -> its build_info dict (cuda_version, is_rocm_build ...)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "build_info"
                                                for t in node.targets):
            try:
                val = ast.literal_eval(node.value)
            except ValueError:
                # build_info = collections.OrderedDict([...]) in some releases
                if isinstance(node.value, ast.Call) and node.value.args:
                    try:
                        val = dict(ast.literal_eval(node.value.args[0]))
                    except (ValueError, TypeError):
                        return {}
                else:
                    return {}
            return dict(val) if isinstance(val, dict) else {}
    return {}


def probe_tensorflow(system: System, dists: dict[str, tuple[str, str, str]]) -> list[Row]:
    for name in _TF_DISTS:
        if name not in dists:
            continue
        version, dist_dir, site = dists[name]
        info_path = f"{site}/tensorflow/python/platform/build_info.py"
        info = parse_tf_build_info(system.read_text(info_path, limit=64 * 1024) or "")
        cuda = str(info.get("cuda_version") or "") if info.get("is_cuda_build") else ""
        hip = str(info.get("rocm_version") or info.get("hip_version") or "") if info.get("is_rocm_build") else ""
        if info.get("is_rocm_build") or name == "tensorflow-rocm":
            variant = "rocm"
        elif info.get("is_cuda_build") or name in ("tensorflow-gpu",):
            variant = "cuda"
        elif info or name.endswith("-cpu"):
            variant = "cpu"
        else:
            variant = "cuda" if name in ("tensorflow", "tf-nightly") else "cpu"
        return [row("framework_builds", info_path if info else dist_dir, name="tensorflow", version=version,
                    cuda=cuda, hip=hip, debug=False, git_version="",
                    channel="nightly" if name.startswith("tf-nightly") else channel_of(version),
                    targets=[], targets_source="", variant=variant, path=f"{site}/tensorflow")]
    return []


# -- the probe ---------------------------------------------------------------------------------------
def probe_frameworks(system: System, paths: Sequence[str] | None = None) -> Iterable[Row]:
    dirs = site_dirs(paths)
    rows: list[Row] = []
    rows.extend(probe_torch(system, dirs))
    dists = find_distributions(system, dirs)
    rows.extend(probe_jax(system, dists))
    rows.extend(probe_tensorflow(system, dists))
    return rows


def _probe(system: System) -> Iterable[Row]:
    paths = system.python_paths() if hasattr(system, "python_paths") else None
    return probe_frameworks(system, paths)


PROBES: list[Probe] = [
    Probe("framework", ("framework_builds", "shared_libraries", "libraries", "kernel_libraries"), _probe,
          "torch/jax/tensorflow builds from version files, dist-info and ELF; loader resolution of their "
          "GPU libraries"),
]
