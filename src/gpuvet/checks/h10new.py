"""New rules of the loader model, the extension scan, build-time settings and host compilers
(staging module: split into the layer modules after the layout change)."""
from __future__ import annotations

import os
import re
from typing import Iterable

from gpuvet.model import Row, Severity

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .gpu import gpu_arch

LIB_LABEL = {"cudnn": "cuDNN", "cublas": "cuBLAS", "cublaslt": "cuBLASLt", "nccl": "NCCL", "cudart": "CUDA runtime",
             "cusparselt": "cuSPARSELt", "nvrtc": "NVRTC", "amdhip64": "HIP runtime", "miopen": "MIOpen",
             "rocblas": "rocBLAS", "hipblaslt": "hipBLASLt", "rccl": "RCCL", "hipblas": "hipBLAS"}
# release family -> the pip distribution (prefix) torch pins for it in its Requires-Dist
PIN_DISTS = {"cudnn": "nvidia-cudnn", "nccl": "nvidia-nccl", "cublas": "nvidia-cublas", "cudart": "nvidia-cuda-runtime",
             "cusparselt": "nvidia-cusparselt", "nvrtc": "nvidia-cuda-nvrtc"}


def _label(name: str) -> str:
    if name in LIB_LABEL:
        return LIB_LABEL[name]
    if name.startswith("cudnn_"):
        return f"lib{name}"
    return name


def _nums(text: object, n: int = 3) -> tuple[int, ...] | None:
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text or ""))
    if not m:
        return None
    return tuple(int(x) for x in m.group(1).split(".")[:n])


def _same_version(a: str, b: str) -> bool:
    x, y = _nums(a, 4), _nums(b, 4)
    if x is None or y is None:
        return True  # unknown: do not claim a difference
    n = min(len(x), len(y), 3)
    return x[:n] == y[:n]


def _env(ctx: Context, name: str) -> Row | None:
    for r in ctx.facts.table("env_vars"):
        if r.get("name") == name:
            return r
    return None


def _selected(ctx: Context) -> list[Row]:
    return [r for r in ctx.facts.table("libraries") if r.get("selected") is True and r.get("path")]


def _fmt_lib(r: Row) -> str:
    via = r.get("via") or ""
    return (f"{os.path.basename(r.get('path') or '')} {r.get('version') or '?'} ({r.get('origin') or '?'}"
            + (f", via {via}" if via else "") + f") {r.get('path')}")


def _drop_dir_fix(ctx: Context, dirs: Iterable[str]) -> list:
    """Fixes that take the directories of stray copies out of LD_LIBRARY_PATH / LD_PRELOAD."""
    out = []
    ldp = _env(ctx, "LD_LIBRARY_PATH")
    dirs = [d.rstrip("/") for d in dirs]
    if ldp is not None:
        parts = [p for p in (ldp.get("value") or "").split(":") if p]
        keep = [p for p in parts if p.rstrip("/") not in dirs]
        if len(keep) != len(parts):
            cmd = f"export LD_LIBRARY_PATH={':'.join(keep)}" if keep else "unset LD_LIBRARY_PATH"
            out.append(fix(f"Take {', '.join(sorted(set(dirs)))} out of LD_LIBRARY_PATH", cmd, safe=True))
    return out


def _preload_fix(ctx: Context, paths: Iterable[str]) -> list:
    pre = _env(ctx, "LD_PRELOAD")
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


# -- BLD048 -------------------------------------------------------------------------------------------
@check(code="BLD048", name="gpu-library-mixed-releases", severity="error",
       tables=("libraries",), cause="runtime-mismatch", component="system-library")
def gpu_library_mixed_releases(ctx: Context) -> Iterable:
    """What it does:
    Groups the GPU libraries the framework's process will load -- through DT_NEEDED and through the
    libraries they open at run time with dlopen (cuDNN 9's ``libcudnn_graph``, ``libcudnn_engines_*``,
    ``libcudnn_heuristic``, ``libcudnn_ops``/``cnn``/``adv``; cuBLAS and cuBLASLt) -- by release
    family, and fires when the copies the loader picks belong to different releases.

    Why is this bad?
    The parts of one library release call each other's internal interfaces; two releases in one
    process fail at the first call that crosses them ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
    "cuDNN version incompatibility", "undefined symbol", a crash).  The usual cause: torch's DT_RPATH
    finds the pip ``libcudnn.so.9``, whose DT_RUNPATH comes after ``LD_LIBRARY_PATH``, so with a
    system directory first in ``LD_LIBRARY_PATH`` its sub-libraries come from the system release.

    Example:
    The H200 with ``LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:...``: ``libcudnn.so.9`` 9.19.0.56 (pip) and
    ``libcudnn_graph.so.9`` 9.14.0 (system): fires.  Every part from the pip 9.19.0.56 wheel: passes.

    Fix:
    Take the directory of the other release out of ``LD_LIBRARY_PATH`` (or stop preloading it), so
    every part resolves to the release the framework ships with.

    References:
    https://man7.org/linux/man-pages/man8/ld.so.8.html
    https://docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html
    """
    sel = _selected(ctx)
    if not sel:
        yield Skip("no loader resolution of GPU libraries (no GPU framework build, or pasted facts)")
        return
    fams: dict[str, list[Row]] = {}
    for r in sel:
        fams.setdefault(r.get("family") or r.get("name"), []).append(r)
    checked = 0
    for fam, rows in sorted(fams.items()):
        vers = {}
        for r in rows:
            v = _nums(r.get("version"), 2)
            if v is not None:
                vers.setdefault(v, []).append(r)
        if len(rows) < 2:
            continue
        checked += 1
        if len(vers) < 2:
            continue
        # the release the family's main library (the one the framework names) belongs to
        main = next((r for r in rows if r.get("name") == fam), rows[0])
        main_v = _nums(main.get("version"), 2)
        odd = [r for v, rs in vers.items() if v != main_v for r in rs]
        parts = "; ".join(f"{'.'.join(map(str, v))}: " + ", ".join(os.path.basename(r.get("path")) for r in rs)
                          for v, rs in sorted(vers.items()))
        how = sorted({r.get("via") for r in odd if r.get("via")})
        yield Fail(f"{_label(fam)}: one process will load parts of {len(vers)} releases ({parts})"
                   + (f"; the other release comes via {', '.join(how)}" if how else ""),
                   why=("The parts of one release call each other's internals: cuDNN checks its sub-libraries' "
                        "version and fails (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH), other libraries crash "
                        "or miss symbols."),
                   evidence=[ev(r, ("main: " if r is main else "") + _fmt_lib(r)
                                + (f" (opened by {os.path.basename(r.get('requested_by') or '')})"
                                   if r.get("requested_by") else "")) for r in [main] + odd][:10],
                   fixes=_fixes_for(ctx, odd) or [fix(f"Remove or align the {_label(fam)} copies at "
                                                      f"{', '.join(sorted({os.path.dirname(r.get('path')) for r in odd}))}",
                                                      safe=False)])
    if checked:
        yield Pass("the parts of each GPU library come from one release")


# -- BLD049 -------------------------------------------------------------------------------------------
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


@check(code="BLD049", name="gpu-library-older-than-build", severity="error",
       tables=("framework_builds", "libraries", "packages"), cause="runtime-mismatch", component="system-library")
def gpu_library_older_than_build(ctx: Context) -> Iterable:
    """What it does:
    Compares the version of each GPU library the framework will really load (after ``LD_PRELOAD``,
    ``/etc/ld.so.preload``, RPATH, ``LD_LIBRARY_PATH``, RUNPATH and the ldconfig cache) with the
    version the framework was built for: torch's ``Requires-Dist`` pin of its NVIDIA wheels
    (``nvidia-cudnn-cu13==9.19.0.56``).  An older release is an error.

    Why is this bad?
    torch checks the cuDNN it finds at run time and refuses an older one ("cuDNN version
    incompatibility: PyTorch was compiled against (9, 19, 0) but found runtime version (9, 14, 0)");
    an older NCCL or cuBLAS lacks symbols or versions the build calls.  A preloaded library wins over
    everything: torch's own RPATH copy is never loaded.

    Example:
    The H200 with ``LD_PRELOAD=/lib/x86_64-linux-gnu/libcudnn.so.9``: torch 2.11.0+cu130 (built for cuDNN
    9.19.0.56) would load the system cuDNN 9.14.0: fires.  Without the preload it loads the pip 9.19.0.56:
    passes.

    Fix:
    Remove the older copy from ``LD_PRELOAD`` / ``/etc/ld.so.preload`` / ``LD_LIBRARY_PATH`` so the
    framework loads the release it ships with, or install that release system-wide.

    References:
    https://man7.org/linux/man-pages/man8/ld.so.8.html
    https://github.com/pytorch/pytorch/blob/main/torch/backends/cudnn/__init__.py
    """
    builds = [b for b in ctx.facts.table("framework_builds") if b.get("name") == "torch" and b.get("variant") == "cuda"]
    sel = _selected(ctx)
    if not builds or not sel:
        yield Skip("no CUDA torch build with a loader resolution of its libraries")
        return
    for b in builds:
        pins = _pins(ctx, b)
        if not pins:
            yield Skip(f"{b.get('name')} {b.get('version')} pins no NVIDIA library wheels")
            continue
        for fam, (want, req) in sorted(pins.items()):
            mains = [r for r in sel if r.get("name") == fam]
            if not mains:
                continue
            for r in mains:
                have = _nums(r.get("version"), 3)
                need = _nums(want, 3)
                if have is None or need is None:
                    continue
                n = min(len(have), len(need), 2)
                if have[:n] >= need[:n]:
                    continue
                via = r.get("via") or ""
                how = {"preload": "LD_PRELOAD / /etc/ld.so.preload puts it in front of the framework's own copy",
                       "ld_library_path": "LD_LIBRARY_PATH puts it first",
                       "ldconfig": "the ldconfig cache provides it", "default": "a default directory provides it",
                       }.get(via, f"via {via}" if via else "")
                shadowed = [o for o in ctx.facts.table("libraries") if o.get("name") == fam and o.get("selected") is False
                            and (_nums(o.get("version"), 2) or ()) >= need[:2]]
                fixes = _fixes_for(ctx, [r])
                if not fixes:
                    fixes = [fix(f"Install {req} (the release {b.get('name')} was built for) where the loader finds it "
                                 f"first, or remove the older copy at {r.get('path')}", safe=False)]
                yield Fail(f"{b.get('name')} {b.get('version')} is built for {_label(fam)} {want} ({req}) but will load "
                           f"{_label(fam)} {r.get('version')} from {r.get('path')}" + (f": {how}" if how else ""),
                           why=(f"An older {_label(fam)} than the build's lacks what it calls; torch refuses an older "
                                "cuDNN at its first use ('cuDNN version incompatibility')."),
                           evidence=[ev(b, f"{b.get('name')} {b.get('version')} requires {req}"),
                                     ev(r, "loaded: " + _fmt_lib(r)),
                                     *[ev(o, "not loaded: " + _fmt_lib(o)) for o in shadowed[:2]]],
                           fixes=fixes)
    yield Pass("each GPU library the framework loads is at least the release it was built for")


# -- BLD045 (new version: information) ------------------------------------------------------------------
def shadowed_copies(ctx: Context) -> Iterable:
    """Body of BLD045 gpu-library-shadowed-copy (information)."""
    libs = ctx.facts.table("libraries")
    sel = [r for r in libs if r.get("selected") is True]
    if not sel:
        yield Skip("no loader resolution of GPU libraries (no GPU framework build)")
        return
    wins: dict[str, str] = {}
    for s in ctx.facts.table("shared_libraries"):
        for path, how in zip(s.get("others") or [], s.get("would_win") or []):
            wins.setdefault(path, how)
    for s in sel:
        others = [r for r in libs if r.get("name") == s.get("name") and r.get("selected") is False
                  and r.get("path") != s.get("path") and not _same_version(r.get("version"), s.get("version"))]
        if not others:
            continue
        seen: set[str] = set()
        olist = [o for o in others if not (o.get("path") in seen or seen.add(o.get("path")))]
        where = "; ".join(f"{o.get('version') or '?'} at {o.get('path')} ({o.get('origin') or '?'})"
                          + (f", loaded only with {wins[o.get('path')]}" if o.get("path") in wins else "")
                          for o in olist)
        who = os.path.basename(s.get("requested_by") or "") or "the framework"
        ldp = _env(ctx, "LD_LIBRARY_PATH")
        ld_dirs = [d.rstrip("/") for d in (ldp.get("value") or "").split(":") if d] if ldp else []
        pointed = [o for o in olist if os.path.dirname(o.get("path") or "") in ld_dirs]
        why = ("Nothing in this process loads the other copy; tools that ask ldconfig (collect_env) report "
               "it, and the setting named would make the loader take it.")
        if pointed:
            why += (" LD_LIBRARY_PATH points at it, so programs without the framework's RPATH (and libraries the "
                    "framework's copy opens at run time) load it.")
        yield Fail(f"{_label(s.get('name'))}: {who} loads {s.get('version') or '?'} ({s.get('origin')}, "
                   f"{s.get('path')}); not loaded: {where}",
                   why=why,
                   evidence=[ev(s, "loaded: " + _fmt_lib(s)), *[ev(o, "not loaded: " + _fmt_lib(o)) for o in olist]],
                   fixes=[fix(f"Nothing to change; quote {_label(s.get('name'))} {s.get('version')} (the loaded copy) "
                              "in bug reports, and keep the setting named out of the job's environment", safe=True)],
                   severity=Severity.INFO)


# -- extensions -----------------------------------------------------------------------------------------
def _ext_label(e: Row) -> str:
    return f"{e.get('dist') or e.get('name')} ({e.get('path')})"


def _rebuild(e: Row, arch_env: str) -> list:
    kind = e.get("kind")
    if kind == "jit-cache":
        d = os.path.dirname(e.get("path") or "")
        return [fix(f"Delete the JIT build so torch.utils.cpp_extension rebuilds it on the next load"
                    + (f" with {arch_env}" if arch_env else ""), f"rm -rf {d}", safe=True)]
    if e.get("dist"):
        dist = e.get("dist")
        env = f"{arch_env} " if arch_env else ""
        return [fix(f"Rebuild {dist} from source against the installed torch"
                    + (f" for this GPU ({arch_env})" if arch_env else ""),
                    f"{env}pip install --no-build-isolation --no-binary {dist} --force-reinstall --no-deps {dist}",
                    safe=True),
                fix(f"Or install a {dist} wheel built for this torch and GPU", safe=True)]
    return [fix(f"Rebuild it in its source tree against the installed torch"
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


@check(code="EXT007", name="extension-lacks-gpu-arch", severity="error",
       tables=("extensions", "gpu_devices"), cause="gpu-arch-unsupported", component="extension")
def extension_lacks_gpu_arch(ctx: Context) -> Iterable:
    """What it does:
    Reads the GPU code objects of every compiled extension the environment can import (site-packages,
    ``PYTHONPATH``, the torch_extensions JIT cache: flash-attn, xformers, bitsandbytes, apex, vllm,
    deepspeed ops, your own ``cpp_extension`` modules) and compares their targets with the GPUs.  A
    cubin ``sm_XY`` runs on GPUs of major X with minor >= Y, PTX ``compute_XY`` on any newer GPU
    after a JIT compile; AMD code objects need the exact gfx target.

    Why is this bad?
    The extension imports, then its first kernel launch fails with "no kernel image is available for
    execution on the device" (CUDA) or "invalid device function" (HIP), although the framework
    itself has kernels for the GPU: blaming torch's build is wrong.

    Example:
    An extension built with ``TORCH_CUDA_ARCH_LIST=8.0`` (sm_80 only) on the H200 (sm_90): fires, naming
    the file and its targets.  The same extension built for 8.0 and 9.0: passes.

    Fix:
    Rebuild the extension for the GPU (``TORCH_CUDA_ARCH_LIST=9.0 pip install --no-build-isolation
    --no-binary <dist> <dist>``; for a JIT build delete its directory under the torch_extensions cache),
    or install a wheel built for it.

    References:
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
    https://pytorch.org/docs/stable/cpp_extension.html
    """
    from .build import cuda_target_runs

    exts = [e for e in ctx.facts.table("extensions") if e.get("gpu_code") in ("cuda-fatbin", "hip-offload-bundle")]
    if not exts:
        yield Skip("no compiled extension carries GPU code")
        return
    nv = _nvidia_archs(ctx)
    amd = [(g, gpu_arch(g, ctx.kb)) for g in ctx.facts.table("gpu_devices") if g.get("vendor") == "amd"]
    if not nv and not amd:
        yield Skip("no GPU found")
        return
    checked = 0
    for e in exts:
        targets = list(e.get("targets") or [])
        if not targets:
            continue
        if e.get("gpu_code") == "cuda-fatbin":
            for g, arch in nv:
                checked += 1
                runs = [t for t in targets if cuda_target_runs(t, arch) == "cubin"]
                ptx = [t for t in targets if cuda_target_runs(t, arch) == "ptx"]
                if runs:
                    continue
                arch_env = f"TORCH_CUDA_ARCH_LIST={_arch_list_value(arch)}"
                gname = f"GPU {g.get('index', '')} {g.get('name', '')} ({arch})"
                evidence = [ev(e, f"{_ext_label(e)}: GPU code for {', '.join(targets)}"), ev(g, gname)]
                if ptx:
                    yield Fail(f"{e.get('name')}: no {arch} code, only PTX {', '.join(ptx)}: its kernels are "
                               f"JIT-compiled for {gname} at first use",
                               why="Without a cubin for the GPU the driver compiles the PTX on first use: slow starts, "
                                   "and a failure when the driver is older than the PTX.",
                               evidence=evidence, fixes=_rebuild(e, arch_env), severity=Severity.WARNING)
                else:
                    yield Fail(f"{e.get('name')} has no kernels for {gname}: built for {', '.join(targets)} "
                               f"({e.get('path')})",
                               why="Its kernel launches fail with 'no kernel image is available for execution on "
                                   "the device'; the framework's own targets do not help an extension.",
                               evidence=evidence, fixes=_rebuild(e, arch_env))
        else:
            for g, arch in amd:
                if not arch:
                    continue
                checked += 1
                if arch in targets:
                    continue
                yield Fail(f"{e.get('name')} has no code objects for GPU {g.get('index', '')} {g.get('name', '')} "
                           f"({arch}): built for {', '.join(targets)} ({e.get('path')})",
                           why="AMD code objects run only on their exact gfx target: 'invalid device function'.",
                           evidence=[ev(e, f"{_ext_label(e)}: code objects for {', '.join(targets)}"),
                                     ev(g, f"GPU {g.get('name', '')} ({arch})")],
                           fixes=_rebuild(e, f"PYTORCH_ROCM_ARCH={arch}"))
    if checked:
        yield Pass(f"{len(exts)} extension(s) with GPU code carry code for this machine's GPUs")
    else:
        yield Skip("no extension's GPU targets could be compared with a GPU")


@check(code="EXT008", name="extension-needs-symbols-torch-lacks", severity="error",
       tables=("extensions",), cause="extension-abi", component="extension")
def extension_needs_symbols_torch_lacks(ctx: Context) -> Iterable:
    """What it does:
    For every compiled extension that links torch (DT_NEEDED ``libtorch*.so`` / ``libc10*.so``),
    takes the strong undefined dynamic symbols in torch's namespaces (``c10::``, ``at::``, ``torch::``,
    ``caffe2::``) and looks each up in the dynamic symbol tables of the installed torch's libraries.

    Why is this bad?
    A symbol the installed torch does not export is the exact proof that the extension was built
    against another torch release (or another C++ ABI): ``import`` fails with "undefined symbol:
    _ZN3c10...", often only when the extension is first used deep inside a job.

    Example:
    torchvision built for torch 2.10 next to torch 2.11: fires, naming the symbols.  An extension
    built here with ``torch.utils.cpp_extension``: passes (every symbol is exported).

    Fix:
    Reinstall the extension's build made for the installed torch, or rebuild it from source against
    it (``pip install --no-build-isolation --no-binary <dist> --force-reinstall <dist>``).

    References:
    https://pytorch.org/docs/stable/cpp_extension.html
    https://github.com/pytorch/pytorch/issues/42325
    """
    exts = [e for e in ctx.facts.table("extensions") if e.get("links_torch")]
    if not exts:
        yield Skip("no compiled extension links torch")
        return
    unknown = 0
    for e in exts:
        n = e.get("missing_count")
        if n is None or n < 0:
            unknown += 1
            continue
        if n == 0:
            continue
        miss = list(e.get("missing_symbols") or [])
        yield Fail(f"{e.get('name')} needs {n} of its {e.get('torch_symbols')} torch symbols that the installed torch "
                   f"does not export (e.g. {miss[0] if miss else '?'}): built for another torch ({e.get('path')})",
                   why="The dynamic loader cannot bind them: importing it fails with 'undefined symbol'.",
                   evidence=[ev(e, f"{_ext_label(e)} links {', '.join(e.get('links_torch') or [])}"),
                             *[ev(e, f"undefined in {e.get('torch_dir') or 'torch'}/lib: {s}") for s in miss[:4]]],
                   fixes=_rebuild(e, ""))
    if unknown == len(exts):
        yield Unknown("the installed torch's symbol tables could not be read")
        return
    yield Pass(f"{len(exts) - unknown} extension(s) linking torch find every torch symbol they need")


@check(code="EXT009", name="extension-links-another-runtime-major", severity="error",
       tables=("extensions", "framework_builds"), cause="extension-abi", component="extension")
def extension_links_another_runtime_major(ctx: Context) -> Iterable:
    """What it does:
    Compares the CUDA (``libcudart.so.N``) or HIP (``libamdhip64.so.N``) runtime major each compiled
    extension that links torch was built against with the one the installed torch was built with.

    Why is this bad?
    An extension of another CUDA major needs a runtime the framework does not ship ("libcudart.so.12:
    cannot open shared object file") or loads a second runtime into the process next to the
    framework's; either fails at import or at the first kernel.

    Example:
    A flash-attn wheel built for CUDA 12 (``libcudart.so.12``) next to torch 2.11.0+cu130: fires.
    An extension built here with nvcc 13 for torch +cu130: passes.

    Fix:
    Install the extension's build for the framework's CUDA/ROCm release, or rebuild it with a
    toolkit of that release.

    References:
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    https://pytorch.org/docs/stable/cpp_extension.html
    """
    torch = next((b for b in ctx.facts.table("framework_builds") if b.get("name") == "torch"), None)
    exts = [e for e in ctx.facts.table("extensions") if e.get("links_torch") and (e.get("cuda_major") or e.get("hip_major"))]
    if torch is None or not exts:
        yield Skip("no torch, or no extension that links torch and a GPU runtime")
        return
    want_cuda = str((_nums(torch.get("cuda"), 1) or ("",))[0])
    want_hip = str((_nums(torch.get("hip"), 1) or ("",))[0])
    for e in exts:
        for have, want, rt in ((e.get("cuda_major"), want_cuda, "CUDA"), (e.get("hip_major"), want_hip, "HIP")):
            if not have:
                continue
            if not want:
                yield Fail(f"{e.get('name')} links the {rt} {have} runtime but torch {torch.get('version')} is not a {rt} "
                           f"build ({e.get('path')})",
                           why=f"The extension needs a {rt} runtime the framework does not load.",
                           evidence=[ev(e, f"{_ext_label(e)}: {rt} runtime major {have}"),
                                     ev(torch, f"torch {torch.get('version')}")], fixes=_rebuild(e, ""))
            elif have != want:
                yield Fail(f"{e.get('name')} is built for {rt} {have} but torch {torch.get('version')} for {rt} {want} "
                           f"({e.get('path')})",
                           why=f"It needs a {rt} {have} runtime next to the framework's {rt} {want}: it fails to load, "
                               "or two runtimes end up in one process.",
                           evidence=[ev(e, f"{_ext_label(e)}: links lib{'cudart' if rt == 'CUDA' else 'amdhip64'}.so.{have}"),
                                     ev(torch, f"torch {torch.get('version')}: {rt} {want}")],
                           fixes=_rebuild(e, ""))
    yield Pass("the extensions link the framework's GPU runtime major")


# -- build-time settings ------------------------------------------------------------------------------
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
    from .build import cuda_target_runs

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


@check(code="ENV066", name="build-arch-list-misses-gpu", severity="error",
       tables=("env_vars", "gpu_devices"), cause="gpu-arch-unsupported", component="config-env")
def build_arch_list_misses_gpu(ctx: Context) -> Iterable:
    """What it does:
    Reads ``TORCH_CUDA_ARCH_LIST`` (NVIDIA) and ``PYTORCH_ROCM_ARCH`` (AMD), the settings every
    ``torch.utils.cpp_extension`` build (flash-attn, apex, xformers or deepspeed from source, JIT
    ``load()``) takes its GPU targets from, and checks that each GPU of this machine is covered:
    ``8.0`` gives sm_80 code (runs on 8.x GPUs), ``+PTX`` adds PTX for newer ones, ``9.0a`` only sm_90;
    AMD targets must name the exact gfx.

    Why is this bad?
    Every extension built here will lack this GPU's kernels and fail at its first launch with "no
    kernel image is available for execution on the device" / "invalid device function", while nvcc
    and the framework look healthy.

    Example:
    ``TORCH_CUDA_ARCH_LIST=8.0`` on the H200 (sm_90): fires.  ``9.0a`` or ``8.0;9.0``: passes.
    ``PYTORCH_ROCM_ARCH=gfx90a`` on an MI300X (gfx942): fires.

    Fix:
    Add the GPU's architecture (``export TORCH_CUDA_ARCH_LIST="8.0;9.0"``) or unset the variable
    (cpp_extension then builds for the GPUs it sees), and rebuild the extensions built with it.

    References:
    https://pytorch.org/docs/stable/cpp_extension.html
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
    """
    tcal, rocm = _env(ctx, "TORCH_CUDA_ARCH_LIST"), _env(ctx, "PYTORCH_ROCM_ARCH")
    if tcal is None and rocm is None:
        yield Skip("neither TORCH_CUDA_ARCH_LIST nor PYTORCH_ROCM_ARCH is set")
        return
    gpus = ctx.facts.table("gpu_devices")
    if not gpus:
        yield Skip("no GPU found")
        return
    if tcal is not None:
        items = parse_arch_list(tcal.get("value") or "")
        for g, arch in _nvidia_archs(ctx):
            ok, how = _cuda_list_covers(items, arch)
            gname = f"GPU {g.get('index', '')} {g.get('name', '')} ({arch})"
            if ok:
                yield Pass(f"TORCH_CUDA_ARCH_LIST={tcal.get('value')} gives {how} code for {gname}",
                           [ev(tcal, f"TORCH_CUDA_ARCH_LIST={tcal.get('value')}")])
                continue
            add = _arch_list_value(arch)
            new = ";".join([v + ("+PTX" if p else "") for v, p in items] + [add]) if items else add
            yield Fail(f"TORCH_CUDA_ARCH_LIST={tcal.get('value')!r} has no code for {gname}: every CUDA extension built "
                       "here will lack its kernels",
                       why="cpp_extension builds exactly the listed architectures; the extension then fails with 'no "
                           "kernel image is available for execution on the device' on this GPU.",
                       evidence=[ev(tcal, f"TORCH_CUDA_ARCH_LIST={tcal.get('value')}"), ev(g, gname)],
                       fixes=[fix(f"Add {add} to TORCH_CUDA_ARCH_LIST (or unset it), then rebuild the extensions built "
                                  "with it", f'export TORCH_CUDA_ARCH_LIST="{new}"', safe=True)])
    if rocm is not None:
        listed = [x.split(":")[0] for x in re.split(r"[;,\s]+", rocm.get("value") or "") if x]
        for g in gpus:
            if g.get("vendor") != "amd":
                continue
            arch = gpu_arch(g, ctx.kb)
            if not arch:
                continue
            if arch in listed:
                yield Pass(f"PYTORCH_ROCM_ARCH lists {arch}")
                continue
            yield Fail(f"PYTORCH_ROCM_ARCH={rocm.get('value')!r} does not list GPU {g.get('index', '')} "
                       f"{g.get('name', '')} ({arch}): every HIP extension built here will lack its code objects",
                       why="HIP code objects are specific to one gfx target: 'invalid device function'.",
                       evidence=[ev(rocm, f"PYTORCH_ROCM_ARCH={rocm.get('value')}"), ev(g, f"GPU {arch}")],
                       fixes=[fix(f"Add {arch} to PYTORCH_ROCM_ARCH", f'export PYTORCH_ROCM_ARCH="{";".join(listed + [arch])}"',
                                  safe=True)])


# -- host compilers -----------------------------------------------------------------------------------
@check(code="ENV065", name="host-compiler-not-runnable", severity="error",
       tables=("host_compilers",), cause="toolchain", component="config-env")
def host_compiler_not_runnable(ctx: Context) -> Iterable:
    """What it does:
    Checks every host compiler the GPU stack will call -- ``CC`` (Triton builds its launcher with it;
    torch.utils.cpp_extension passes it to nvcc as ``-ccbin``), ``CXX`` (Inductor's C++ path,
    cpp_extension), ``NVCC_CCBIN`` / ``CUDAHOSTCXX`` (nvcc's host compiler), and when ``CC`` is unset the
    ``gcc`` or ``clang`` Triton looks for on PATH -- for existing and running (``--version``).

    Why is this bad?
    ``torch.compile`` fails at its first graph when Triton cannot run its C compiler
    ("InductorError: ... FileNotFoundError: '/nonexistent/gcc'", "Failed to find C compiler. Please
    specify via CC environment variable"); extension builds fail inside pip.  The job's error then
    looks like user code.

    Example:
    ``CC=/nonexistent/gcc`` with torch 2.11.0+cu130 and Triton: fires, naming CC.  ``CC`` unset and gcc
    13.3 on PATH: passes.

    Fix:
    Point the variable at a compiler that exists (``export CC=$(command -v gcc)``) or unset it; install
    gcc/g++ when none is on PATH.

    References:
    https://github.com/triton-lang/triton/blob/main/python/triton/runtime/build.py
    https://github.com/pytorch/pytorch/blob/main/torch/_inductor/cpp_builder.py
    https://pytorch.org/docs/stable/cpp_extension.html
    """
    rows = ctx.facts.table("host_compilers")
    if not rows:
        yield Skip("no host compiler was probed (pasted facts)")
        return
    gpu_build = any(b.get("variant") in ("cuda", "rocm") for b in ctx.facts.table("framework_builds"))
    for r in rows:
        if r.get("runs") is not False:
            continue
        req = r.get("requested") or ""
        var = req.split("=", 1)[0] if "=" in req else ""
        if var:
            val = req.split("=", 1)[1]
            cmd = f"unset {var}" if var != "CC" else "unset CC  # or: export CC=$(command -v gcc)"
            fixes = [fix(f"Point {var} at a compiler that exists, or unset it ({val!r}: {r.get('error')})", cmd, safe=True)]
        else:
            fixes = [fix("Install the GNU compilers (gcc, g++)", "sudo apt-get install -y gcc g++", root=True)]
        sev = None if (var or gpu_build) else Severity.WARNING
        yield Fail(f"{r.get('role')}: {req} -- {r.get('error') or 'does not run'}",
                   why=("torch.compile (Triton, Inductor) and extension builds call this compiler; they fail at their "
                        "first compile, with an error that looks like the job's own."),
                   evidence=[ev(r, f"{req}: {r.get('error') or 'does not run'}")], fixes=fixes, severity=sev)
    ok = [r for r in rows if r.get("runs") is not False]
    if ok:
        yield Pass("host compilers run: " + ", ".join(f"{r.get('requested')} -> {r.get('path')} {r.get('version')}"
                                                       for r in ok))


CHECKS = [gpu_library_mixed_releases, gpu_library_older_than_build, extension_lacks_gpu_arch,
          extension_needs_symbols_torch_lacks, extension_links_another_runtime_major, build_arch_list_misses_gpu,
          host_compiler_not_runnable]
