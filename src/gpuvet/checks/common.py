"""Helpers shared by the rule modules of several stack layers (reading facts, KB look-ups)."""
from __future__ import annotations

import os
import re
import shlex
from typing import Any, Iterable

from gpuvet.kb import query as q
from gpuvet.model import Facts, Row
from gpuvet.model.versions import find_version, major_minor

from .base import Context, fix
from .gpu import gpu_arch


def _mmstr(t: tuple[int, int]) -> str:
    return f"{t[0]}.{t[1]}"


def _amd_gpus(facts: Facts) -> list[Row]:
    return [r for r in facts.table("gpu_devices") if r.get("vendor") == "amd"]


def amd_gpu_state(facts: Facts) -> tuple[str, str]:
    """('yes' | 'no' | 'unknown', reason).  'unknown' when no AMD GPU row exists and an AMD probe
    that would have found one failed (rather than simply not being installed), or nobody looked."""
    if _amd_gpus(facts):
        return "yes", ""
    st = facts.status("gpu_devices")
    if st == "missing":
        return "unknown", "GPUs were not collected"
    errs = [e for e in facts.table_errors("gpu_devices") if e.kind != "missing"]
    if errs:
        return "unknown", "; ".join(dict.fromkeys(e.message for e in errs))
    if st == "error":
        return "unknown", "; ".join(dict.fromkeys(e.message for e in facts.table_errors("gpu_devices")))
    return "no", "no AMD GPU found"


def _system_rocm(facts: Facts) -> list[Row]:
    return [r for r in facts.table("runtimes") if r.get("vendor") == "amd" and r.get("name") == "rocm"
            and r.get("origin") in (None, "", "system", "pasted") and major_minor(r.get("version"))]


def _system_hip_runtime(facts: Facts) -> list[Row]:
    return [r for r in facts.table("runtimes") if r.get("vendor") == "amd" and r.get("name") == "hip-runtime"
            and r.get("origin") in (None, "", "system", "pasted") and major_minor(r.get("version"))]


def _hip_builds(facts: Facts) -> list[Row]:
    return [b for b in facts.table("framework_builds") if b.get("hip") and major_minor(b.get("hip"))]


def _amd_label(b: Row) -> str:
    return f"{b.get('name') or 'framework'} {b.get('version') or ''}".strip()


def _rocm_entry(kb: Any, release: str) -> dict | None:
    """The KB entry of a ROCm release: exact match, else the newest entry of the same major.minor."""
    if kb is None:
        return None
    entries = kb.table("rocm_releases")
    for e in entries:
        if str(e.get("rocm")) == release:
            return e
    mm = major_minor(release)
    same = [e for e in entries if major_minor(e.get("rocm")) == mm]
    return same[0] if same else None


def _default_rocm(facts: Facts) -> list[Row]:
    rows = _system_rocm(facts)
    default = [r for r in rows if (r.get("path") or "").rstrip("/") == "/opt/rocm"]
    return default or rows


COMPANIONS = ("torchvision", "torchaudio", "triton", "pytorch-triton-rocm")


def _torch(ctx: Context) -> tuple[Row | None, str | None]:
    """The torch build row (framework_builds) or its packages row, and its version."""
    r = ctx.facts.first("framework_builds", name="torch")
    if r is not None and r.get("version"):
        return r, str(r.get("version"))
    p = ctx.facts.first("packages", name="torch")
    if p is not None and p.get("version"):
        return p, str(p.get("version"))
    return None, None


def _packages(ctx: Context) -> dict[str, Row]:
    out: dict[str, Row] = {}
    for r in ctx.facts.table("packages"):
        if r.get("location") in ("pip", "conda") and r.get("name") in out:
            continue
        out.setdefault(str(r.get("name", "")), r)
    return out


def _variant(release: q.TorchRelease, build: Row | None, version: str) -> q.Variant | None:
    tag = q.local_tag(version)
    if build is None or build.table != "framework_builds":
        return q.find_variant(release, tag=tag)
    kind = str(build.get("variant", "") or "")
    return q.find_variant(release, tag=tag, cuda=build.get("cuda") or None, rocm=build.get("hip") or None,
                          kind=kind)


def _install_cmd(release: q.TorchRelease, variant: q.Variant | None) -> str:
    pkgs = [f"torch=={release.latest}"]
    for name in ("torchvision", "torchaudio"):
        if release.companions.get(name):
            pkgs.append(f"{name}=={release.companions[name]}")
    cmd = "pip install " + " ".join(pkgs)
    if variant is not None and variant.index_url:
        cmd += f" --index-url {variant.index_url}"
    return cmd


def _companion_cmd(release: q.TorchRelease, variant: q.Variant | None, name: str) -> str | None:
    """Install exactly the companion ``name`` at the version ``release`` pins (nothing else), or None
    when the KB records no pin for it."""
    want = release.companions.get(name)
    if not want:
        return None
    cmd = f"pip install {name}=={want}"
    if variant is not None and variant.index_url and not name.startswith(("triton", "pytorch-triton")):
        cmd += f" --index-url {variant.index_url}"
    return cmd


GROUP_HINT = {"/dev/kfd": ("render", "video"), "/dev/dri": ("render", "video")}










def _build_cuda(text: Any) -> tuple[tuple[int, int], bool] | None:
    """A framework build's CUDA: ('12.4' -> ((12, 4), False)); a major alone, as jaxlib's CUDA
    plugins name it ('13' -> ((13, 0), True)); None when the build has no CUDA."""
    mm = major_minor(text)
    if mm:
        return mm, False
    m = re.fullmatch(r"\s*(?:cuda\s*)?(\d{1,2})\s*", str(text or ""), re.I)
    return ((int(m.group(1)), 0), True) if m else None


def _fmt(mm: tuple[int, int]) -> str:
    return f"{mm[0]}.{mm[1]}"


def _toolkits(kb: Any) -> list[dict[str, Any]]:
    if kb is None:
        return []
    out = [e for e in kb.table("cuda_toolkits") if find_version(e.get("cuda")) and find_version(e.get("min_driver_linux"))]
    return sorted(out, key=lambda e: find_version(e["cuda"]))  # type: ignore[arg-type,return-value]


def _release_entry(kb: Any, mm: tuple[int, int]) -> dict[str, Any] | None:
    """The GA release of CUDA major.minor (else its earliest listed update)."""
    same = [e for e in _toolkits(kb) if major_minor(e["cuda"]) == mm]
    for e in same:
        if str(e["cuda"]) == _fmt(mm):
            return e
    return same[0] if same else None


# -- the loader model, extensions and build settings (BLD045/048/049, EXT007-009, ENV065/066) ---------
LIB_LABELS = {"cudnn": "cuDNN", "cublas": "cuBLAS", "cublaslt": "cuBLASLt", "nccl": "NCCL", "cudart": "CUDA runtime",
             "cusparselt": "cuSPARSELt", "nvrtc": "NVRTC", "amdhip64": "HIP runtime", "miopen": "MIOpen",
             "rocblas": "rocBLAS", "hipblaslt": "hipBLASLt", "rccl": "RCCL", "hipblas": "hipBLAS"}
# release family -> the pip distribution (prefix) torch pins for it in its Requires-Dist
PIN_DISTS = {"cudnn": "nvidia-cudnn", "nccl": "nvidia-nccl", "cublas": "nvidia-cublas", "cudart": "nvidia-cuda-runtime",
             "cusparselt": "nvidia-cusparselt", "nvrtc": "nvidia-cuda-nvrtc"}


def _lib_title(name: str) -> str:
    if name in LIB_LABELS:
        return LIB_LABELS[name]
    if name.startswith("cudnn_"):
        return f"lib{name}"
    return name


def _vnums(text: object, n: int = 3) -> tuple[int, ...] | None:
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text or ""))
    if not m:
        return None
    return tuple(int(x) for x in m.group(1).split(".")[:n])


def _same_lib_version(a: str, b: str) -> bool:
    x, y = _vnums(a, 4), _vnums(b, 4)
    if x is None or y is None:
        return True  # unknown: do not claim a difference
    n = min(len(x), len(y), 3)
    return x[:n] == y[:n]


def _env_row(ctx: Context, name: str) -> Row | None:
    for r in ctx.facts.table("env_vars"):
        if r.get("name") == name:
            return r
    return None


def _selected_libs(ctx: Context) -> list[Row]:
    return [r for r in ctx.facts.table("libraries") if r.get("selected") is True and r.get("path")]


def _fmt_lib(r: Row) -> str:
    via, path = r.get("via") or "", r.get("path") or ""
    name = os.path.basename(path) or str(r.get("name") or "")  # a pasted report may name no path
    return (f"{name} {r.get('version') or '?'} ({r.get('origin') or '?'}"
            + (f", via {via}" if via else "") + ")" + (f" {path}" if path else ""))


def _drop_dir_fix(ctx: Context, dirs: Iterable[str]) -> list:
    """Fixes that take the directories of stray copies out of LD_LIBRARY_PATH / LD_PRELOAD."""
    out = []
    ldp = _env_row(ctx, "LD_LIBRARY_PATH")
    dirs = [d.rstrip("/") for d in dirs]
    if ldp is not None:
        parts = [p for p in (ldp.get("value") or "").split(":") if p]
        keep = [p for p in parts if p.rstrip("/") not in dirs]
        if len(keep) != len(parts):
            cmd = f"export LD_LIBRARY_PATH={':'.join(keep)}" if keep else "unset LD_LIBRARY_PATH"
            out.append(fix(f"Take {', '.join(sorted(set(dirs)))} out of LD_LIBRARY_PATH", cmd, safe=True))
    return out


def _preload_fix(ctx: Context, paths: Iterable[str]) -> list:
    pre = _env_row(ctx, "LD_PRELOAD")
    paths = set(paths)
    out = []
    if pre is not None:
        parts = [p for p in re.split(r"[:\s]+", pre.get("value") or "") if p]
        keep = [p for p in parts if p not in paths and os.path.basename(p) not in {os.path.basename(x) for x in paths}]
        if len(keep) != len(parts):
            cmd = f"export LD_PRELOAD='{' '.join(keep)}'" if keep else "unset LD_PRELOAD"
            out.append(fix("Stop preloading the other copy: remove it from LD_PRELOAD", cmd, safe=True))
    if not out and paths:
        out.append(fix("Remove the line naming it from /etc/ld.so.preload", root=True))
    return out


def _fixes_for(ctx: Context, rows: Iterable[Row]) -> list:
    rows = list(rows)
    fixes = []
    pre = [r.get("path") for r in rows if r.get("via") == "preload"]
    if pre:
        fixes += _preload_fix(ctx, pre)
    ld = [os.path.dirname(r.get("path")) for r in rows if r.get("via") == "ld_library_path"]
    if ld:
        fixes += _drop_dir_fix(ctx, ld)
    return fixes


def _pins(ctx: Context, b: Row) -> dict[str, tuple[str, str]]:
    """family -> (pinned version, requirement text) from the framework's Requires-Dist."""
    out: dict[str, tuple[str, str]] = {}
    pkg = next((p for p in ctx.facts.table("packages") if p.get("name") == b.get("name")), None)
    if pkg is None:
        return out
    for req in pkg.get("requires") or []:
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([0-9][0-9.]*)", req)
        if not m:
            continue
        dist = re.sub(r"[-_.]+", "-", m.group(1)).lower()
        for fam, prefix in PIN_DISTS.items():
            if dist.startswith(prefix):
                out.setdefault(fam, (m.group(2), req.split(";")[0].strip()))
    return out


def _ext_label(e: Row) -> str:
    return f"{e.get('dist') or e.get('name')} ({e.get('path')})"


def _rebuild(e: Row, arch_env: str) -> list:
    kind = e.get("kind")
    if kind == "jit-cache":
        d = os.path.dirname(e.get("path") or "")
        if len(d.strip("/")) < 2:  # never offer to delete "" or "/" (a path the text did not give whole)
            return []
        return [fix("Delete the JIT build so torch.utils.cpp_extension rebuilds it on the next load"
                    + (f" with {arch_env}" if arch_env else ""), f"rm -rf {shlex.quote(d)}", safe=True)]
    if e.get("dist"):
        dist = e.get("dist")
        env = f"{arch_env} " if arch_env else ""
        return [fix(f"Rebuild {dist} from source against the installed torch"
                    + (f" for this GPU ({arch_env})" if arch_env else ""),
                    f"{env}pip install --no-build-isolation --no-binary {dist} --force-reinstall --no-deps {dist}",
                    safe=True),
                fix(f"Or install a {dist} wheel built for this torch and GPU", safe=True)]
    return [fix("Rebuild it in its source tree against the installed torch"
                + (f" with {arch_env}" if arch_env else "") + " (python setup.py build_ext --inplace)", safe=True)]


def _nvidia_archs(ctx: Context) -> list[tuple[Row, str]]:
    out = []
    for g in ctx.facts.table("gpu_devices"):
        if g.get("vendor") == "nvidia":
            a = gpu_arch(g, ctx.kb)
            if a:
                out.append((g, re.sub(r"[af]$", "", a)))
    return out


def _arch_list_value(arch: str) -> str:
    m = re.match(r"sm_(\d+)(\d)$", arch)
    return f"{m.group(1)}.{m.group(2)}" if m else arch


_NAMED_ARCH = {"kepler": ["3.5", "3.7"], "maxwell": ["5.0", "5.2"], "pascal": ["6.0", "6.1"], "volta": ["7.0"],
               "turing": ["7.5"], "ampere": ["8.0", "8.6"], "ada": ["8.9"], "hopper": ["9.0"],
               "blackwell": ["10.0", "12.0"]}


def parse_arch_list(value: str) -> list[tuple[str, bool]]:
    """TORCH_CUDA_ARCH_LIST ('8.0;8.6+PTX', '8.0 9.0a', 'Ampere') -> [('8.0', False), ('8.6', True) ...]."""
    out = []
    for item in re.split(r"[;,\s]+", value.strip()):
        if not item:
            continue
        ptx = item.upper().endswith("+PTX")
        base = item[:-4] if ptx else item
        if base.lower() in _NAMED_ARCH:
            out += [(v, ptx) for v in _NAMED_ARCH[base.lower()]]
        else:
            out.append((base, ptx))
    return out


def _cuda_list_covers(items: list[tuple[str, bool]], arch: str) -> tuple[bool, str]:
    from .bld import cuda_target_runs

    for v, ptx in items:
        m = re.fullmatch(r"(\d+)\.(\d+)([af]?)", v)
        if not m:
            continue
        num = f"{m.group(1)}{m.group(2)}{m.group(3)}"
        if cuda_target_runs(f"sm_{num}", arch) == "cubin":
            return True, f"sm_{num}"
        if ptx and cuda_target_runs(f"compute_{num}", arch):
            return True, f"compute_{num} (PTX, JIT-compiled)"
    return False, ""


