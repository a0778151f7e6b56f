"""BLD: the framework build (GPU targets, variant, prerelease, loaded libraries, KB release tables)."""
from __future__ import annotations

import os
import re
from typing import Any, Iterable

from gpuvet.kb import query as q
from gpuvet.model import Row, Severity
from gpuvet.model.arch import gfx_from_override
from gpuvet.model.versions import release, same_release

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import _install_cmd, _packages, _torch, _variant
from .common import _lib_title, _vnums, _same_lib_version, _env_row, _selected_libs, _fmt_lib, _fixes_for, _pins  # noqa: F401
from .gpu import gpu_arch

GPU_VARIANTS = ("cuda", "rocm")


LIB_LABEL = {"cudnn": "cuDNN", "cublas": "cuBLAS", "cublaslt": "cuBLASLt", "nccl": "NCCL", "cudart": "CUDA runtime",
             "cusparselt": "cuSPARSELt", "nvrtc": "NVRTC", "amdhip64": "HIP runtime", "miopen": "MIOpen",
             "rocblas": "rocBLAS", "hipblaslt": "hipBLASLt", "rccl": "RCCL", "hipblas": "hipBLAS"}


# -- helpers -------------------------------------------------------------------------------------------
def _build_label(b: Row) -> str:
    return f"{b.get('name', 'framework')} {b.get('version', '')}".strip()


def _gpu_builds(ctx: Context) -> list[Row]:
    return [b for b in ctx.facts.table("framework_builds") if b.get("variant") in GPU_VARIANTS]


def _vendor_of_variant(variant: str) -> str:
    return {"cuda": "nvidia", "rocm": "amd"}.get(variant, "")




_SM = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


def _cc(num: int) -> tuple[int, int]:
    return (num // 10, num % 10)


def cuda_target_runs(target: str, device: str) -> str | None:
    """How a CUDA target runs on a device arch: 'cubin', 'ptx' (JIT compiled) or None.

    Cubin ``sm_XY`` runs on devices of major X and minor >= Y; ``sm_XYa`` only on exactly XY;
    ``sm_XYf`` (family-specific, CUDA 12.9+) on major X with minor >= Y; PTX ``compute_XY`` is
    JIT-compiled for any device >= X.Y (``compute_XYa`` only XY, ``compute_XYf`` its family)."""
    t = _SM.match(target)
    d = _SM.match(device)
    if not t or not d:
        return None
    tcc, dcc = _cc(int(t.group(2))), _cc(int(d.group(2)))
    suffix = t.group(3)
    if suffix == "a":
        ok = tcc == dcc
    elif suffix == "f":
        ok = tcc[0] == dcc[0] and tcc[1] <= dcc[1]
    elif t.group(1) == "sm":
        ok = tcc[0] == dcc[0] and tcc[1] <= dcc[1]
    else:
        ok = tcc <= dcc
    if not ok:
        return None
    return "cubin" if t.group(1) == "sm" else "ptx"


def _build_env(ctx: Context, name: str) -> Row | None:
    for r in ctx.facts.table("env_vars"):
        if r.get("name") == name:
            return r
    return None


# Targets an override can borrow: the first gfx of a generation that builds ship.
_OVERRIDE_HINT = {"gfx103": ("gfx1030", "10.3.0"), "gfx110": ("gfx1100", "11.0.0"),
                  "gfx115": ("gfx1100", "11.0.0"), "gfx90": ("gfx900", "9.0.0")}


# -- BLD040 -------------------------------------------------------------------------------------------
@check(code="BLD040", name="gpu-arch-not-in-build", severity="error",
       tables=("framework_builds", "gpu_devices"), cause="gpu-arch-unsupported", component="framework-build")
def gpu_arch_not_in_build(ctx: Context) -> Iterable:
    """What it does:
    Compares each GPU's architecture (``gpu_devices``: gfx90a, sm_90) with the GPU targets the
    framework build carries kernels for (``framework_builds.targets``, read from the CUDA fatbin or
    the HIP offload bundles of libtorch_cuda.so / libtorch_hip.so).  NVIDIA: a cubin ``sm_XY`` runs
    on devices of the same major with minor >= Y (sm_80 code runs on an sm_86 GPU, never across
    majors); ``sm_XYa`` only on exactly that GPU, ``sm_XYf`` on its family; PTX ``compute_XY`` is
    JIT-compiled for any newer GPU (a warning: slow first run, and JIT needs a driver that knows the
    PTX).  AMD: the gfx target must match exactly (a gfx1100 build does not run on gfx1101); when
    ``HSA_OVERRIDE_GFX_VERSION`` is set, the overridden target is judged instead, and said so.

    Why is this bad?
    A build without kernels for the GPU fails at the first kernel launch: "no kernel image is
    available for execution on the device" (CUDA), "HIP error: invalid device function" or
    "hipErrorNoBinaryForGpu" (ROCm), although ``is_available()`` says True.

    Example:
    torch 2.11.0+cu130 (sm_75 ... sm_120) on an H200 (sm_90): passes.  torch 2.7.1+cu118 (up to sm_90)
    on an RTX 5090 (sm_120): fails.  torch 2.5.1+rocm6.2 (gfx900 ... gfx1100) on an RX 6700 XT
    (gfx1031): fails; with HSA_OVERRIDE_GFX_VERSION=10.3.0 it runs gfx1030 code and passes.

    Fix:
    Install a build made for the GPU (a newer CUDA/ROCm wheel, or a source build with
    TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH naming it).  For consumer AMD GPUs of a supported
    generation, ``HSA_OVERRIDE_GFX_VERSION`` makes the runtime treat the GPU as the listed target
    (unsupported by AMD; can crash).

    References:
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
    https://docs.nvidia.com/cuda/blackwell-compatibility-guide/index.html
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
    https://pytorch.org/docs/stable/notes/hip.html
    """
    # builds whose targets are read (torch); jax/tensorflow rows carry no target list
    builds = [b for b in _gpu_builds(ctx) if b.get("name") == "torch" or b.get("targets")]
    gpus = ctx.facts.table("gpu_devices")
    if not builds:
        yield Skip("no GPU framework build installed")
        return
    if not gpus:
        yield Skip("no GPU found")
        return
    override = _build_env(ctx, "HSA_OVERRIDE_GFX_VERSION")
    checked = False
    for b in builds:
        vendor = _vendor_of_variant(b.get("variant"))
        mine = [g for g in gpus if g.get("vendor") == vendor]
        if not mine:
            continue  # wrong-vendor-build's business
        targets = [t for t in (b.get("targets") or []) if t]
        if not targets and not b.get("targets_source"):
            # a pasted / described build: nobody read its libraries; BLD102 judges the official wheel's list
            yield Skip(f"the GPU targets of {_build_label(b)} were not read from its libraries")
            continue
        if not targets:
            yield Unknown(f"the GPU targets of {_build_label(b)} are not known ({b.get('targets_source') or 'not read'})",
                          [ev(b, f"{_build_label(b)}: {b.get('targets_source') or 'no targets'}")])
            continue
        seen: set[str] = set()
        for g in mine:
            arch = gpu_arch(g, ctx.kb)
            if arch is None:
                yield Unknown(f"the architecture of GPU {g.get('index', '')} {g.get('name', '')} is not known",
                              [ev(g, f"GPU {g.get('name', '')}")])
                continue
            if arch in seen:
                continue
            seen.add(arch)
            checked = True
            gname = f"GPU {g.get('index', '')} {g.get('name', '') or ''} ({arch})".replace("  ", " ")
            evidence = [ev(g, gname), ev(b, f"{_build_label(b)} targets: {', '.join(targets)} "
                                           f"({b.get('targets_source') or 'targets'})")]
            if vendor == "nvidia":
                yield from _judge_cuda(b, arch, targets, gname, evidence)
            else:
                yield from _judge_amd(b, arch, targets, gname, evidence, override)
    if not checked:
        yield Skip("no GPU of the build's vendor, or no target list read")


def _judge_cuda(b: Row, arch: str, targets: list[str], gname: str, evidence: list) -> Iterable:
    arch = re.sub(r"[af]$", "", arch)
    cubins = [t for t in targets if cuda_target_runs(t, arch) == "cubin"]
    ptx = [t for t in targets if cuda_target_runs(t, arch) == "ptx"]
    if cubins:
        yield Pass(f"{_build_label(b)} has {', '.join(cubins)} code for {gname}", evidence)
        return
    cuda = b.get("cuda") or "?"
    fixes = [fix(f"Install a {b.get('name', 'framework')} build whose CUDA supports {arch} "
                 f"(for torch: a newer +cuXXX wheel from https://download.pytorch.org/whl/)", safe=True),
             fix(f"Or build from source with TORCH_CUDA_ARCH_LIST including {arch[3:-1]}.{arch[-1]}", safe=True)]
    if ptx:
        yield Fail(f"{_build_label(b)} has no {arch} code for {gname}, only PTX {', '.join(ptx)}: kernels are "
                   f"JIT-compiled at first use",
                   why=("Without a cubin for the GPU every kernel is compiled from PTX by the driver on first "
                        "use: minutes of start-up, a JIT cache that may fill, and failures when the driver is "
                        "older than the PTX."),
                   evidence=evidence, fixes=fixes, severity=Severity.WARNING)
        return
    yield Fail(f"{_build_label(b)} (CUDA {cuda}) has no kernels for {gname}: built for {', '.join(targets)}",
               why=("Kernel launches fail with 'no kernel image is available for execution on the device'; "
                    "a cubin runs only on GPUs of its own major architecture, and the build has no PTX "
                    "that could be JIT-compiled for this one."),
               evidence=evidence, fixes=fixes)


def _judge_amd(b: Row, arch: str, targets: list[str], gname: str, evidence: list, override: Row | None) -> Iterable:
    bases = {re.sub(r":.*$", "", t) for t in targets}
    eff = arch
    note = ""
    if override is not None and override.get("value"):
        o = gfx_from_override(override.get("value"))
        evidence = evidence + [ev(override, f"HSA_OVERRIDE_GFX_VERSION={override.get('value')}")]
        if o:
            eff = o
            note = f" (HSA_OVERRIDE_GFX_VERSION={override.get('value')} makes the runtime load {o} code)"
        else:
            note = f" (HSA_OVERRIDE_GFX_VERSION={override.get('value')!r} is not a valid X.Y.Z version)"
    if eff in bases:
        if eff != arch:
            yield Pass(f"{_build_label(b)} has {eff} code; {gname} runs it through the override{note}", evidence)
        else:
            yield Pass(f"{_build_label(b)} has {arch} code for {gname}", evidence)
        return
    fixes = [fix(f"Install a {b.get('name', 'framework')} build for a ROCm release that supports {arch} "
                 f"(https://download.pytorch.org/whl/ rocm wheels), or build with PYTORCH_ROCM_ARCH={arch}",
                 safe=True)]
    hint = _OVERRIDE_HINT.get(arch[:6]) or _OVERRIDE_HINT.get(arch[:5])
    if hint and hint[0] in bases and eff != hint[0]:
        fixes.append(fix(f"Or export HSA_OVERRIDE_GFX_VERSION={hint[1]} to run the build's {hint[0]} code on "
                         f"{arch} (not supported by AMD; may crash or compute wrongly)",
                         command=f"export HSA_OVERRIDE_GFX_VERSION={hint[1]}", safe=False))
    yield Fail(f"{_build_label(b)} has no kernels for {gname}{note}: built for {', '.join(sorted(bases))}",
               why=("AMD code objects are specific to one gfx target: kernels fail with 'HIP error: invalid "
                    "device function' / 'no binary for gpu' unless the exact target is in the build."),
               evidence=evidence, fixes=fixes)


# -- BLD041 -------------------------------------------------------------------------------------------
@check(code="BLD041", name="cpu-only-build-with-gpu", severity="error",
       tables=("framework_builds", "gpu_devices"), cause="cpu-only-build", component="framework-build")
def cpu_only_build_with_gpu(ctx: Context) -> Iterable:
    """What it does:
    Fires when a framework build is CPU-only (torch ``+cpu`` or a version.py with neither CUDA nor
    HIP; jax without a CUDA/ROCm plugin; tensorflow-cpu) on a machine that has a GPU.

    Why is this bad?
    The GPU is never used: ``torch.cuda.is_available()`` is False, "Torch not compiled with CUDA
    enabled", training silently runs on the CPU many times slower.

    Example:
    torch 2.13.0+cpu with an NVIDIA H200 present: fires.  torch 2.13.0+cpu on a machine without a
    GPU: passes.  torch 2.11.0+cu130 with the H200: passes.

    Fix:
    Reinstall the framework from the GPU index, e.g. ``pip install torch --index-url
    https://download.pytorch.org/whl/cu130`` (NVIDIA) or ``.../whl/rocm6.4`` (AMD); for jax install
    ``jax[cuda13]``.

    References:
    https://pytorch.org/get-started/locally/
    https://docs.jax.dev/en/latest/installation.html
    """
    gpus = ctx.facts.table("gpu_devices")
    builds = ctx.facts.table("framework_builds")
    if not gpus:
        yield Skip("no GPU found")
        return
    vendors = sorted({g.get("vendor") for g in gpus if g.get("vendor")})
    if builds and not any(b.get("variant") == "cpu" for b in builds):
        yield Pass("no CPU-only framework build: " + ", ".join(f"{_build_label(b)} ({b.get('variant')})" for b in builds))
    for b in builds:
        name = b.get("name")
        if b.get("variant") != "cpu" or name == "jaxlib" or (name or "").startswith("jax-"):
            continue
        vendor = vendors[0] if vendors else "nvidia"
        index = "cu130" if vendor == "nvidia" else "rocm6.4"
        cmd = (f"pip install --force-reinstall {name} --index-url https://download.pytorch.org/whl/{index}"
               if name == "torch" else
               (f"pip install -U 'jax[{'cuda13' if vendor == 'nvidia' else 'rocm'}]'" if name == "jax" else None))
        yield Fail(f"{_build_label(b)} is a CPU-only build, but this machine has "
                   f"{len(gpus)} {'/'.join(vendors) or ''} GPU(s)".replace("  ", " "),
                   why="A CPU-only build never uses the GPU: is_available() is False and work runs on the CPU.",
                   evidence=[ev(b, f"{_build_label(b)}: variant cpu ({b.get('targets_source') or b.source})"),
                             *[ev(g, f"GPU {g.get('index', '')} {g.get('name', '')}") for g in gpus[:4]]],
                   fixes=[fix(f"Reinstall {name} built for the GPU's {'CUDA' if vendor == 'nvidia' else 'ROCm'} "
                              f"(pick the index matching the driver)", command=cmd, safe=True)])


# -- BLD042 -------------------------------------------------------------------------------------------
@check(code="BLD042", name="wrong-vendor-build", severity="error",
       tables=("framework_builds", "gpu_devices"), cause="wrong-vendor-build", component="framework-build")
def wrong_vendor_build(ctx: Context) -> Iterable:
    """What it does:
    Fires when a CUDA build of a framework is installed on a machine whose GPUs are all AMD, or a
    ROCm build on a machine whose GPUs are all NVIDIA.

    Why is this bad?
    The build cannot use the GPU at all: a CUDA torch on an AMD machine reports no CUDA device, a
    ROCm torch on an NVIDIA machine cannot find libamdhip64 or an AMD device ("No HIP GPUs are
    available").

    Example:
    torch 2.11.0+cu130 with an AMD Instinct MI210 (gfx90a) only: fires.  torch 2.5.1+rocm6.2 on the
    H200: fires.  A CUDA build on a machine with both an NVIDIA and an AMD GPU: passes.

    Fix:
    Reinstall the framework from the index for the machine's vendor (``.../whl/rocm6.4`` for AMD,
    ``.../whl/cu130`` for NVIDIA).

    References:
    https://pytorch.org/get-started/locally/
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html
    """
    gpus = ctx.facts.table("gpu_devices")
    builds = _gpu_builds(ctx)
    if not gpus:
        yield Skip("no GPU found")
        return
    if not builds:
        yield Skip("no GPU framework build installed")
        return
    vendors = {g.get("vendor") for g in gpus if g.get("vendor")}
    if not vendors:
        yield Unknown("the GPUs' vendor is not known")
        return
    for b in builds:
        want = _vendor_of_variant(b.get("variant"))
        if want in vendors:
            yield Pass(f"{_build_label(b)} is a {b.get('variant')} build for this machine's {want} GPU(s)")
            continue
        have = "/".join(sorted(vendors))
        index = "rocm6.4" if "amd" in vendors else "cu130"
        yield Fail(f"{_build_label(b)} is a {b.get('variant').upper()} build, but this machine's GPUs are {have}",
                   why=(f"A {b.get('variant').upper()} build only drives {want.upper()} GPUs; on this machine it "
                        "finds no usable device."),
                   evidence=[ev(b, f"{_build_label(b)}: variant {b.get('variant')}"),
                             *[ev(g, f"GPU {g.get('index', '')} {g.get('vendor')} {g.get('name', '')}") for g in gpus[:4]]],
                   fixes=[fix(f"Reinstall {b.get('name')} built for {have.upper()} GPUs",
                              command=(f"pip install --force-reinstall torch --index-url "
                                       f"https://download.pytorch.org/whl/{index}") if b.get("name") == "torch" else None,
                              safe=True)])


# -- BLD043 -------------------------------------------------------------------------------------------
@check(code="BLD043", name="prerelease-framework", severity="warning",
       tables=("framework_builds",), cause="prerelease-regression", component="framework-build")
def prerelease_framework(ctx: Context) -> Iterable:
    """What it does:
    Fires when an installed framework is a nightly (``2.6.0.dev20241101+cu124``) or a published
    pre-release (``2.6.0rc1``, ``0.5.0b1``).  Source builds from a commit (NGC's
    ``2.6.0a0+ecf3bae40a.nv25.01``, ``2.4.0a0+git1c6f2c1``) are not flagged.

    Why is this bad?
    Nightlies carry regressions fixed or reverted before the release; a failure seen only there is
    best checked against the stable release before it is debugged further.

    Example:
    torch 2.6.0.dev20241101+cu124: fires.  torch 2.11.0+cu130: passes.

    Fix:
    Try the latest stable release (``pip install torch --index-url https://download.pytorch.org/whl/cu130``);
    keep the nightly only when a fix you need is not released yet.

    References:
    https://pytorch.org/get-started/locally/
    https://packaging.python.org/en/latest/specifications/version-specifiers/
    """
    builds = ctx.facts.table("framework_builds")
    if not builds:
        yield Skip("no framework installed")
        return
    for b in builds:
        ch = b.get("channel")
        if ch in ("nightly", "prerelease"):
            yield Fail(f"{_build_label(b)} is a {ch} build",
                       why="Nightly and pre-release builds carry regressions that the stable release does not.",
                       evidence=[ev(b, f"{_build_label(b)}: channel {ch}")],
                       fixes=[fix(f"Install the latest stable {b.get('name')} and check whether the problem remains",
                                  safe=True)])


# -- libraries ------------------------------------------------------------------------------------------
def _selected(ctx: Context) -> list[Row]:
    return [r for r in ctx.facts.table("libraries") if r.get("selected") is True]


def _lib_label(name: str) -> str:
    return LIB_LABEL.get(name, name)




def _describe(r: Row) -> str:
    where = r.get("path") or r.source
    return f"{_lib_label(r.get('name'))} {r.get('version') or '?'} ({r.get('origin') or '?'}) {where}"


@check(code="BLD044", name="gpu-library-loaded-twice", severity="error",
       tables=("libraries",), cause="runtime-mismatch", component="system-library")
def gpu_library_loaded_twice(ctx: Context) -> Iterable:
    """What it does:
    Fires when the framework's libraries resolve one GPU library (cuDNN, cuBLAS, NCCL, the CUDA or
    HIP runtime, MIOpen, rocBLAS ...) to two different files, e.g. libtorch_cuda.so finds
    ``libcudart.so.13`` in the pip wheel while another torch library's search path finds a
    ``libcudart.so.12`` elsewhere.

    Why is this bad?
    Two copies of one runtime in one process keep two sets of global state (contexts, handles,
    allocators); symbols bind to whichever loaded first, and the result is crashes, "invalid
    resource handle", "CUBLAS_STATUS_NOT_INITIALIZED" or silently wrong versions.

    Example:
    libtorch_cuda.so -> pip libcudart.so.13, libcaffe2_nvrtc.so -> /usr/local/cuda-12.4 libcudart.so.12
    through LD_LIBRARY_PATH: fires.  Every torch library resolving to the same pip copy: passes.

    Fix:
    Remove the directory of the stray copy from LD_LIBRARY_PATH (or the conda/system package that
    provides it), so every request resolves to the copy the framework was built with.

    References:
    https://man7.org/linux/man-pages/man8/ld.so.8.html
    https://github.com/pytorch/pytorch/issues/101314
    """
    sel = _selected(ctx)
    if not sel:
        yield Skip("no loader resolution of GPU libraries (no GPU framework build, or pasted facts)")
        return
    by_name: dict[str, list[Row]] = {}
    for r in sel:
        if r.get("path"):
            by_name.setdefault(r.get("name"), []).append(r)
    for name, rows in sorted(by_name.items()):
        paths = list(dict.fromkeys(r.get("path") for r in rows))
        if len(paths) < 2:
            continue
        first = rows[0]
        yield Fail(f"{_lib_label(name)} is loaded from {len(paths)} places: " + "; ".join(
            f"{r.get('path')} ({r.get('version') or '?'}, for {r.get('requested_by') or '?'})" for r in rows),
                   why="Two copies of one GPU library in one process mix their state and versions.",
                   evidence=[ev(r, _describe(r) + f" requested by {r.get('requested_by') or '?'}") for r in rows],
                   fixes=[fix(f"Keep only the copy {first.get('requested_by') or 'the framework'} resolves to: "
                              f"remove the other's directory from LD_LIBRARY_PATH", safe=False)])


@check(code="BLD045", name="gpu-library-shadowed-copy", severity="info",
       tables=("libraries",), cause="runtime-mismatch", component="system-library")
def gpu_library_shadowed_copy(ctx: Context) -> Iterable:
    """What it does:
    For each GPU library the framework loads, lists the other copies of it on the loader's search
    path (the ldconfig cache, LD_LIBRARY_PATH, default directories) with a *different version* that
    nothing in the process loads, and says which setting would make the loader take each one
    (``LD_PRELOAD=<path>`` beats a DT_RPATH; ``LD_LIBRARY_PATH=<dir>`` beats RUNPATH, the cache and
    the default directories).  Information: a copy nothing loads costs no score.

    Why is this bad?
    By itself it is not: the framework loads its own copy.  But tools that ask ldconfig (collect_env)
    report the other one, extensions built with the system toolkit link it, and the setting named
    swaps it in (BLD048 and BLD049 judge that case as an error).

    Example:
    The H200: torch 2.11.0+cu130 loads pip cuDNN 9.19.0.56 through DT_RPATH; the system
    /lib/x86_64-linux-gnu/libcudnn.so.9 (9.14.0, what collect_env reports) is loaded only with
    ``LD_PRELOAD``: reported as information.  Only the pip copy present: nothing to report.

    Fix:
    Nothing for the framework; quote the loaded version in bug reports and keep the setting named
    out of the job's environment.

    References:
    https://man7.org/linux/man-pages/man8/ld.so.8.html
    https://github.com/pytorch/pytorch/blob/main/torch/utils/collect_env.py
    """
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
        if str(s.get("name") or "").startswith("cudnn_"):
            continue  # cuDNN's sub-libraries: reported with libcudnn (one finding per release, not nine)
        others = [r for r in libs if r.get("name") == s.get("name") and r.get("selected") is False
                  and r.get("path") != s.get("path") and not same_release(r.get("version"), s.get("version"))]
        if not others:
            continue
        subs = [r for r in sel if str(r.get("name") or "").startswith(f"{s.get('name')}_")]
        seen: set[str] = set()
        olist: list[Row] = []
        for o in others:  # one per path
            if o.get("path") not in seen:
                seen.add(o.get("path"))
                olist.append(o)
        where = "; ".join(f"{o.get('version') or '?'} at {o.get('path')} ({o.get('origin') or '?'})"
                          + (f", loaded only with {wins[o.get('path')]}" if o.get("path") in wins else "")
                          for o in olist)
        who = os.path.basename(s.get("requested_by") or "") or "the framework"
        ldp = _env_row(ctx, "LD_LIBRARY_PATH")
        ld_dirs = [d.rstrip("/") for d in (ldp.get("value") or "").split(":") if d] if ldp else []
        pointed = [o for o in olist if os.path.dirname(o.get("path") or "") in ld_dirs]
        why = ("Nothing in this process loads the other copy; tools that ask ldconfig (collect_env) report "
               "it, and the setting named would make the loader take it.")
        if pointed:
            why += (" LD_LIBRARY_PATH points at it, so programs without the framework's RPATH (and libraries the "
                    "framework's copy opens at run time) load it.")
        yield Fail(f"{_lib_title(s.get('name'))}: {who} loads {s.get('version') or '?'} ({s.get('origin')}"
                   + (f", {s.get('path')}" if s.get('path') else "") + ")" + (f" and its {len(subs)} sub-libraries" if subs else "") + f"; not loaded: {where}",
                   why=why,
                   evidence=[ev(s, "loaded: " + _fmt_lib(s)), *[ev(o, "not loaded: " + _fmt_lib(o)) for o in olist]],
                   fixes=[fix(f"Nothing to change; quote {_lib_title(s.get('name'))} {s.get('version')} (the loaded copy) "
                              "in bug reports, and keep the setting named out of the job's environment", safe=True)],
                   severity=Severity.INFO)


# -- BLD046 / BLD047 ----------------------------------------------------------------------------------
def _runtime_lib(ctx: Context, variant: str) -> Row | None:
    name = "cudart" if variant == "cuda" else "amdhip64"
    sel = [r for r in _selected(ctx) if r.get("name") == name]
    # a copy with its file path first; a pasted report may name only the wheel torch loads it from
    sel.sort(key=lambda r: not r.get("path"))
    return sel[0] if sel else None


def _via(ctx: Context, path: str) -> str:
    for r in ctx.facts.table("shared_libraries"):
        if r.get("path") == path:
            return r.get("via") or ""
    return ""


@check(code="BLD046", name="framework-runtime-mismatch", severity="error",
       tables=("framework_builds", "libraries"), cause="runtime-mismatch", component="runtime")
def framework_runtime_mismatch(ctx: Context) -> Iterable:
    """What it does:
    Compares the CUDA / HIP version the framework was built with (torch's ``version.cuda`` /
    ``version.hip``) with the version of the runtime library the dynamic loader will really give it
    (``libcudart.so.N`` / ``libamdhip64.so.N`` as resolved through RPATH, LD_LIBRARY_PATH, RUNPATH
    and the ldconfig cache).  CUDA: another major release is an error, an older minor of the same
    major a warning.  HIP: another major.minor is an error.

    Why is this bad?
    The framework calls the runtime it was built against: an older or other-major runtime lacks
    symbols or behaves differently ("undefined symbol: cudaGetDriverEntryPointByVersion",
    "hipErrorInvalidImage", wrong-ABI crashes).  The usual cause is LD_LIBRARY_PATH pointing at
    another toolkit, or a conda package shadowing the wheel's copy.

    Example:
    torch 2.11.0+cu130 resolving libcudart.so.13 to pip nvidia-cuda-runtime 13.0.96: passes.  torch
    +rocm6.2 with LD_LIBRARY_PATH=/opt/rocm-6.0/lib loading libamdhip64.so.6.0: fires.

    Fix:
    Remove the other toolkit from LD_LIBRARY_PATH (or unset it), or reinstall the framework so it
    carries its own runtime; the finding names the directory the loader took it from.

    References:
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    https://man7.org/linux/man-pages/man8/ld.so.8.html
    """
    builds = [b for b in _gpu_builds(ctx) if b.get("name") == "torch"]
    if not builds:
        yield Skip("no GPU torch build installed")
        return
    for b in builds:
        variant = b.get("variant")
        built = b.get("cuda") if variant == "cuda" else b.get("hip")
        want = release(built, 2)
        lib = _runtime_lib(ctx, variant)
        if want is None:
            yield Unknown(f"{_build_label(b)}: the {variant.upper()} version it was built with is not known")
            continue
        if lib is None:
            yield Unknown(f"{_build_label(b)}: which {'libcudart' if variant == 'cuda' else 'libamdhip64'} it loads "
                          f"is not known")
            continue
        where = lib.get("path") or (f"the {lib.get('origin')} copy ({lib.source})" if lib.get("origin") else lib.source)
        have = release(lib.get("version"), 2)
        if have is None and lib.get("origin") == "framework-bundled":
            yield Pass(f"{_build_label(b)} loads the runtime bundled with it ({where})",
                       [ev(lib, f"loads {where} (framework-bundled)")])
            continue
        if have is None:
            yield Unknown(f"the version of {where} is not known")
            continue
        via = _via(ctx, lib.get("path"))
        evidence = [ev(b, f"{_build_label(b)} built with {variant.upper()} {built}"),
                    ev(lib, f"loads {where} ({lib.get('version')}, {lib.get('origin')}"
                            + (f", via {via}" if via else "") + ")")]
        fixes = [fix("Unset LD_LIBRARY_PATH (or drop the other toolkit's directory from it) so the framework "
                     "loads the runtime it ships with", command="unset LD_LIBRARY_PATH", safe=True)] \
            if via == "ld_library_path" else \
            [fix(f"Install a {b.get('name')} build for {variant.upper()} {'.'.join(map(str, have))}, or remove "
                 f"the stray runtime at {where}", safe=True)]
        rt = "CUDA" if variant == "cuda" else "HIP"
        if variant == "cuda":
            if have[0] != want[0]:
                yield Fail(f"{_build_label(b)} is built for CUDA {built} but will load CUDA runtime "
                           f"{lib.get('version')} from {where}" + (f" (via {via})" if via else ""),
                           why="A CUDA runtime of another major release is not ABI compatible with the build.",
                           evidence=evidence, fixes=fixes)
            elif len(have) > 1 and len(want) > 1 and have[1] < want[1]:
                yield Fail(f"{_build_label(b)} is built for CUDA {built} but will load the older CUDA runtime "
                           f"{lib.get('version')} from {where}",
                           why="A runtime older than the build's minor release may lack functions the build calls.",
                           evidence=evidence, fixes=fixes, severity=Severity.WARNING)
            else:
                yield Pass(f"{_build_label(b)} (CUDA {built}) loads CUDA runtime {lib.get('version')}", evidence)
        else:
            if have[:2] != want[:2]:
                yield Fail(f"{_build_label(b)} is built for HIP {built} but will load {rt} runtime "
                           f"{lib.get('version')} from {where}" + (f" (via {via})" if via else ""),
                           why="HIP has no cross-release compatibility: the build needs the HIP runtime it was "
                               "built with.",
                           evidence=evidence, fixes=fixes)
            else:
                yield Pass(f"{_build_label(b)} (HIP {built}) loads HIP runtime {lib.get('version')}", evidence)


@check(code="BLD047", name="framework-runtime-differs-from-system", severity="info",
       tables=("framework_builds", "runtimes"), cause="runtime-mismatch", component="runtime")
def framework_runtime_differs_from_system(ctx: Context) -> Iterable:
    """What it does:
    Compares a CUDA framework build's CUDA version with the system's CUDA toolkit (``runtimes``:
    cuda-toolkit, cuda-runtime of origin system) and, when they differ, says which one the framework
    really uses: the runtime in the pip wheels wins over the system one.  Informational.  ROCm builds
    are judged by RTM021 (framework-hip-differs-from-rocm), where a different ROCm release is an error.

    Why is this bad?
    Usually harmless for running the framework (it brings its own runtime), but the two disagree
    for everything built on this machine: extensions compiled with the system nvcc/hipcc, and bug
    reports that quote the system version instead of the one in use.

    Example:
    torch 2.7.0+cu128 (pip runtime 12.8) with /usr/local/cuda 12.4: fires, torch uses 12.8.  torch
    2.11.0+cu130 with the CUDA 13.0 toolkit: passes.

    Fix:
    Nothing for running; to build extensions, use a toolkit of the framework's CUDA/ROCm release
    (set CUDA_HOME / ROCM_PATH to it).

    References:
    https://pytorch.org/docs/stable/cpp_extension.html
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    """
    builds = _gpu_builds(ctx)
    if not builds:
        yield Skip("no GPU framework build installed")
        return
    rts = [r for r in ctx.facts.table("runtimes") if r.get("origin") in ("system", None, "")]
    any_compared = False
    for b in builds:
        variant = b.get("variant")
        if variant != "cuda":
            continue  # ROCm: RTM021 compares HIP with the system ROCm (an error there, not information)
        built = b.get("cuda") if variant == "cuda" else b.get("hip")
        want = release(built, 2)
        if want is None:
            continue
        vendor = _vendor_of_variant(variant)
        names = ("cuda-toolkit", "cuda-runtime") if variant == "cuda" else ("rocm", "hip-runtime")
        mine = [r for r in rts if r.get("vendor") == vendor and r.get("name") in names and release(r.get("version"), 2)]
        if not mine:
            continue
        any_compared = True
        lib = _runtime_lib(ctx, variant)
        for r in mine:
            have = release(r.get("version"), 2)
            n = min(len(have or ()), len(want))
            if have is None or have[:n] == want[:n]:
                continue  # a build that names only the major (jaxlib's "13") agrees with any 13.x
            if lib is not None and lib.get("origin") in ("pip", "framework-bundled", "conda"):
                wins = (f"{b.get('name')} uses its own {lib.get('origin')} runtime {lib.get('version')} "
                        f"({lib.get('path')})")
            elif lib is not None:
                wins = f"{b.get('name')} loads the system runtime {lib.get('version')} ({lib.get('path')})"
            else:
                wins = "which one it loads is not known"
            yield Fail(f"{_build_label(b)} is built for {variant.upper()} {built}; the system {r.get('name')} is "
                       f"{r.get('version')}: {wins}",
                       why="Extensions built with the system toolkit and bug reports quoting it disagree with the "
                           "runtime the framework uses.",
                       evidence=[ev(b, f"{_build_label(b)}: {variant.upper()} {built}"),
                                 ev(r, f"system {r.get('name')} {r.get('version')} {r.get('path') or ''}".strip()),
                                 *([ev(lib, f"loaded: {lib.get('path')} {lib.get('version')}")] if lib else [])],
                       fixes=[fix(f"To build extensions, use a {variant.upper()} {built} toolkit "
                                  f"({'CUDA_HOME' if variant == 'cuda' else 'ROCM_PATH'})", safe=True)])
    if not any_compared:
        yield Skip("no system CUDA toolkit / ROCm release to compare with")


# ---------------------------------------------------------------------------------------------------
@check(code="BLD102", name="gpu-target-missing-from-official-wheel", severity="critical",
       tables=("framework_builds", "gpu_devices"), cause="gpu-arch-unsupported", component="framework-build")
def gpu_target_missing_from_official_wheel(ctx: Context):
    """What it does:
    When the build's own GPU target list could not be read from its libraries (a described stack, a
    pasted report, an unreadable ELF file), compares each GPU's architecture with the targets of the
    official wheel line of that torch release and variant (TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH of
    the release's build scripts, in the knowledge base's torch_releases table).  For a release or wheel line the
    KB has no arch list for (torch 1.x, a nightly), the CUDA release the build was made with bounds its targets:
    a GPU whose architecture came after that release (gpu_models ``min_cuda``: sm_89 needs CUDA 11.8) has no code
    of its own in it (a critical finding across architecture majors, a warning within one, where older cubins run
    and only run-time compilation for the GPU fails).  A version named without its wheel line ("torch 2.5.1" in a
    pip list, "pytorch=1.4.0") fails only for an NVIDIA GPU that no CUDA line of the release carries; for a release
    older than the KB's torch_releases, one that came after the newest CUDA any official binary of the release was
    built with (torch_legacy_cuda).

    Why is this bad?
    A wheel without code for the GPU fails at the first kernel: "no kernel image is available for
    execution on the device" (CUDA), "invalid device function" / "HIP error: invalid device function"
    (ROCm), or torch warns "<GPU> with CUDA capability sm_120 is not compatible with the current PyTorch
    installation".  NVIDIA cubins run on newer GPUs of the same major architecture (sm_80 code on
    sm_86/sm_89) and PTX is JIT-compiled forward; AMD code objects run only on their exact gfx target.

    Example:
    torch 2.6.0+cu126 on a GeForce RTX 5090 (sm_120: the cu126 line stops at sm_90); torch 2.5.1+rocm6.2
    on a Radeon RX 5700 XT (gfx1010 is not among gfx900/906/908/90a/942/1030/1100); "torch 2.5.1" with no
    line named on an RTX 5090 (no CUDA line of 2.5 carries sm_120); "torch==1.6.0" on an RTX 3090 (1.6 binaries
    were built with CUDA 10.2 at most; sm_86 needs 11.1).

    Fix:
    Install a wheel line that carries the target (a newer CUDA variant such as cu128 for Blackwell, a
    newer ROCm variant), build from source with the target in TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH,
    or, on AMD only, an HSA_OVERRIDE_GFX_VERSION the runtime accepts for that target.

    References:
    https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh
    https://docs.nvidia.com/cuda/blackwell-compatibility-guide/
    https://github.com/pytorch/pytorch/issues/132570
    """
    build = ctx.facts.first("framework_builds", name="torch")
    if build is None:
        yield Skip("torch is not installed")
        return
    if build.get("targets"):
        yield Skip("the build's own target list was read from its libraries (checked by the build rules)")
        return
    version = str(build.get("version", ""))
    release = q.torch_release(ctx.kb, version)
    if release is None:
        judged = list(_judge_by_cuda_release(ctx, build))
        yield from judged or [Unknown(f"torch {version} is not in the KB's torch_releases")]
        return
    variant = _variant(release, build, version)
    kind = str(build.get("variant", "") or (variant.kind if variant else ""))
    if kind == "cpu" or (variant is not None and variant.kind == "cpu"):
        yield Skip("CPU-only build")
        return
    if variant is None and not kind and not build.get("cuda") and not build.get("hip"):
        # the text names the version alone ("torch 2.5.1", a pip list line): whichever CUDA wheel line it is, a GPU
        # that none of the release's CUDA lines carries code for cannot run it
        judged = list(_judge_every_cuda_line(ctx, build, release))
        yield from judged or [Unknown(f"torch {version} names no wheel line; every CUDA line of torch "
                                      f"{release.version} that the KB records may carry the GPU")]
        return
    if variant is None:
        yield Unknown(f"the KB records no {kind or 'GPU'} wheel line of torch {release.version} matching {version}")
        return
    vendor = "nvidia" if variant.kind == "cuda" else "amd" if variant.kind == "rocm" else ""
    gpus = [g for g in ctx.facts.table("gpu_devices") if g.get("vendor") in (vendor, None, "")]
    if not gpus:  # the targets matter only for a GPU: no GPU, no need of the arch list
        yield Skip(f"no {vendor or 'matching'} GPU")
        return
    if variant.arch is None:
        judged = list(_judge_by_cuda_release(ctx, build, variant.version if variant.kind == "cuda" else ""))
        yield from judged or [Unknown(f"the KB has no verified arch list for torch {release.version} {variant.name}")]
        return
    ok = []
    for g in gpus:
        arch = gpu_arch(g, ctx.kb)
        label = g.get("name") or arch or "GPU"
        if not arch:
            yield Unknown(f"the architecture of {label} is not known")
            continue
        src = f"KB torch_releases {release.version} {variant.name}: {', '.join(variant.arch)}" + (
            f" (+PTX {', '.join(variant.ptx)})" if variant.ptx else "") + f" ({variant.source})"
        if q.runs_on(arch, variant.arch, variant.ptx):
            ok.append(f"{label} ({arch})")
            continue
        better = _newer_line_for(ctx.kb, arch, variant.kind)
        yield Fail(f"{label} ({arch}) is not among the targets of torch {release.version} {variant.name}",
                   why=f"The official {variant.name} wheels of torch {release.version} carry code for "
                       f"{', '.join(variant.arch)} only; kernels fail on {arch} with 'no kernel image is available' "
                       "(CUDA) or 'invalid device function' (ROCm).",
                   evidence=[ev(g, f"GPU {label}: {arch}"), ev(build, f"torch {version}"), ev(None, src)],
                   fixes=[fix(f"install torch {better[0].latest} {better[1].name}, which carries {arch}",
                              _install_cmd(*better), safe=True)] if better else
                         [fix(f"build torch from source with {arch} in the target list")])
    if ok:
        yield Pass(f"{', '.join(ok)} run the torch {release.version} {variant.name} wheels")


def _judge_every_cuda_line(ctx: Context, build: Row, release: q.TorchRelease) -> Iterable:
    """A torch version named without its wheel line (no +cuNNN label, no CUDA version beside it): fails for an NVIDIA
    GPU that no CUDA wheel line of the release carries code for (by the line's arch list, or, where the KB has none,
    by the CUDA release it was built with: a GPU of the same major as that CUDA's newest architecture runs it).
    Only NVIDIA GPUs are judged; a GPU some line carries says nothing of the installed line."""
    lines = [v for v in release.variants if v.kind == "cuda"]
    if not lines:
        return
    version = str(build.get("version", ""))
    for g in ctx.facts.table("gpu_devices"):
        if g.get("vendor") != "nvidia":
            continue
        arch = gpu_arch(g, ctx.kb)
        if not arch or not arch.startswith("sm_"):
            continue
        label = g.get("name") or arch
        if any(_line_runs(ctx.kb, arch, v) for v in lines):
            continue
        shown = "; ".join(f"{v.name}: {', '.join(v.arch)}" if v.arch else f"{v.name}: CUDA {v.version}" for v in lines)
        better = _newer_line_for(ctx.kb, arch, "cuda")
        yield Fail(f"{label} ({arch}) is in no CUDA wheel line of torch {release.version} (torch {version} was named "
                   "without its line; none of them carries the GPU)",
                   why=f"Every official CUDA build of torch {release.version} carries code for other architectures "
                       f"only ({shown}): kernels fail on {arch} with 'no kernel image is available', or torch warns "
                       f"that the GPU's capability is not compatible with the installation.",
                   evidence=[ev(g, f"GPU {label}: {arch}"), ev(build, f"torch {version} (no wheel line named)"),
                             ev(None, f"KB torch_releases {release.version}: {shown} ({lines[0].source})")],
                   fixes=[fix(f"install torch {better[0].latest} {better[1].name}, which carries {arch}",
                              _install_cmd(*better), safe=True)] if better else
                         [fix(f"build torch from source with {arch} in the target list")])


def _line_runs(kb: Any, arch: str, v: q.Variant) -> bool:
    if v.arch is not None:
        return q.runs_on(arch, v.arch, v.ptx)
    newest = q.cuda_newest_arch(kb, v.version)
    need = q.cuda_min_for_arch(kb, arch)
    if newest is None or need is None:
        return True  # not known: never a finding
    first, built = q.minor_of(need[0]), q.minor_of(v.version)
    if first is None or built is None or built >= first:
        return True
    return _cc(int(newest[3:].rstrip("af")))[0] == _cc(int(arch[3:].rstrip("af")))[0]


def _judge_by_cuda_release(ctx: Context, build: Row, cuda: str = "") -> Iterable:
    """No arch list in the KB for this wheel line: the CUDA release it was built with bounds its targets.  A GPU
    whose architecture came after that release (gpu_models ``min_cuda``) has no code of its own in the build:
    across majors nothing runs (error); within the major, older cubins run but JIT compilation for the GPU (NVRTC:
    jiterator, the TorchScript fuser) fails (warning).  A version named without its CUDA (a release older than the
    KB's torch_releases) is bounded by the newest CUDA any official binary of that release was built with
    (torch_legacy_cuda): the same error across majors and warning within one, said as "at most"."""
    legacy = False
    if not cuda and not build.get("cuda") and not build.get("variant") and not build.get("hip"):
        newest_binary = q.legacy_torch_cuda(ctx.kb, build.get("version"))
        if newest_binary is not None:
            cuda, legacy = newest_binary[0], True
    cuda = cuda or str(build.get("cuda") or "")
    if not cuda or str(build.get("variant") or "cuda") != "cuda":
        return
    newest = q.cuda_newest_arch(ctx.kb, cuda)
    built = q.minor_of(cuda)
    for g in ctx.facts.table("gpu_devices"):
        if g.get("vendor") not in ("nvidia", None, ""):
            continue
        arch = gpu_arch(g, ctx.kb)
        need = q.cuda_min_for_arch(ctx.kb, arch) if arch else None
        first = q.minor_of(need[0]) if need else None
        if arch is None or need is None or newest is None or built is None or first is None:
            continue
        label = g.get("name") or arch
        if built >= first:
            yield Pass(f"{label} ({arch}) is targeted by CUDA {need[0]} and later; torch was built with CUDA {cuda}")
            continue
        same_major = _cc(int(newest[3:]))[0] == _cc(int(arch[3:].rstrip("af")))[0]
        if legacy and not same_major:
            yield Fail(f"{label} ({arch}) came after CUDA {cuda}, the newest CUDA any official build of torch "
                       f"{build.get('version')} was made with (CUDA {need[0]} is the first to target {arch})",
                       why=f"torch {build.get('version')} was named without its CUDA; its official binaries were built "
                           f"with CUDA {cuda} at most, which carries code for {newest} at most, and cubins never run "
                           f"across architecture majors: kernels fail on {arch} with 'no kernel image is available'.",
                       evidence=[ev(g, f"GPU {label}: {arch}"),
                                 ev(build, f"torch {build.get('version')} (no CUDA named)"),
                                 ev(None, f"KB torch_legacy_cuda: the newest CUDA of torch {build.get('version')} "
                                          "binaries is " + cuda),
                                 ev(None, f"KB gpu_models: {arch} needs CUDA >= {need[0]} ({need[1]})")],
                       fixes=[fix(f"install a torch release with a CUDA {need[0]}+ build "
                                  "(https://pytorch.org/get-started/locally/)", safe=True)],
                       severity=Severity.CRITICAL)
            continue
        yield Fail(f"{label} ({arch}) came after CUDA {cuda}, which torch {build.get('version')} was built with"
                   f"{' at most (its version was named without a CUDA)' if legacy else ''} "
                   f"(CUDA {need[0]} is the first to target {arch})",
                   why=(f"A CUDA {cuda} build carries code for {newest} at most: it runs on {arch} by binary "
                        "compatibility, but anything compiled for the GPU at run time (NVRTC: the jiterator, the "
                        "TorchScript fuser) fails with 'invalid value for --gpu-architecture'." if same_major else
                        f"A CUDA {cuda} build carries code for {newest} at most, and cubins never run across "
                        f"architecture majors: kernels fail on {arch} with 'no kernel image is available'."),
                   evidence=[ev(g, f"GPU {label}: {arch}"), ev(build, f"torch {build.get('version')} (CUDA {cuda})"),
                             ev(None, f"KB gpu_models: {arch} needs CUDA >= {need[0]} ({need[1]})")],
                   fixes=[fix(f"install a torch build made with CUDA {need[0]} or newer "
                              "(https://pytorch.org/get-started/previous-versions/)", safe=True)],
                   severity=Severity.WARNING if same_major else Severity.CRITICAL)


def _newer_line_for(kb: Any, arch: str, kind: str) -> tuple[q.TorchRelease, q.Variant] | None:
    for rel in q.torch_releases(kb):
        for v in sorted(rel.variants, key=lambda v: q.parse_version(v.version or "0") or q.Version("0"), reverse=True):
            if v.kind == kind and v.arch is not None and q.runs_on(arch, v.arch, v.ptx):
                return rel, v
    return None


# ---------------------------------------------------------------------------------------------------
@check(code="BLD103", name="python-outside-build-range", severity="error",
       tables=("framework_builds", "os_info"), cause="other", component="framework-build")
def python_outside_build_range(ctx: Context):
    """What it does:
    Compares the Python version with the range of Python versions the torch release publishes wheels
    for (the release compatibility matrix in pytorch/pytorch RELEASE.md).

    Why is this bad?
    No official wheel exists outside the range: pip says "No matching distribution found for
    torch==X", falls back to an older torch that has a wheel for this Python, or builds from an sdist.
    A torch copied from another environment fails to import (its extension modules are built for one
    CPython ABI).

    Example:
    torch 2.0 on Python 3.12 (2.0 ships wheels for 3.8-3.11); torch 2.9 on Python 3.9 (3.10-3.14).

    Fix:
    Use a Python inside the release's range (a venv or uv/conda environment with that interpreter) or
    a torch release that supports this Python.

    References:
    https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix
    """
    build, version = _torch(ctx)
    osr = ctx.facts.first("os_info")
    py = osr.get("python") if osr is not None else None
    if version is None:
        yield Skip("torch is not installed")
        return
    if not py:
        if ctx.facts.origin == "described":
            yield Skip("no Python version described")
        else:
            yield Unknown("the Python version is not known")
        return
    release = q.torch_release(ctx.kb, version)
    if release is None or not release.python_min or not release.python_max:
        yield Unknown(f"the KB records no Python range for torch {version}")
        return
    have, lo, hi = q.minor_of(py), q.minor_of(release.python_min), q.minor_of(release.python_max)
    if have is None or lo is None or hi is None:
        yield Unknown(f"cannot compare Python {py}")
        return
    if not lo <= have <= hi:
        older = [r for r in q.torch_releases(ctx.kb)
                 if (r_lo := q.minor_of(r.python_min)) and (r_hi := q.minor_of(r.python_max)) and r_lo <= have <= r_hi]
        fixes = [fix(f"use Python {release.python_min}..{release.python_max} for torch {release.version}")]
        if older:
            fixes.append(fix(f"or torch {older[0].latest}, the newest release with wheels for Python {have[0]}.{have[1]}",
                             f"pip install torch=={older[0].latest}", safe=True))
        yield Fail(f"Python {py} is outside torch {release.version}'s range {release.python_min}..{release.python_max}",
                   why=f"torch {release.version} publishes wheels for Python {release.python_min} to "
                       f"{release.python_max} only.",
                   evidence=[ev(osr, f"Python {py}"), ev(build, f"torch {version}"),
                             ev(None, f"KB torch_releases {release.version}: Python {release.python_min}..{release.python_max} ({release.source})")],
                   fixes=fixes)
        return
    yield Pass(f"Python {py} is within torch {release.version}'s range")


# ---------------------------------------------------------------------------------------------------
def _issue_matches(ctx: Context, issue: dict[str, Any], version: str, variant: str) -> tuple[bool | None, list[str]]:
    """Whether all conditions of a known issue hold: True, False, or None (a condition cannot be judged)."""
    when = issue.get("when") or {}
    why: list[str] = []
    if "torch" in when:
        ok = q.spec_contains(when["torch"], version)
        if not ok:
            return False, why
        why.append(f"torch {version} ({when['torch']})")
    if "variant" in when:
        if not variant:
            return None, why
        wanted = when["variant"] if isinstance(when["variant"], list) else [when["variant"]]
        if variant not in wanted:
            return False, why
        why.append(f"variant {variant}")
    if "package" in when:
        r = _packages(ctx).get(when["package"])
        if r is None:
            return False, why
        spec = when.get("package_version")
        if spec and not q.spec_contains(spec, r.get("version")):
            return False, why
        why.append(f"{when['package']} {r.get('version')}")
    gpus = ctx.facts.table("gpu_devices")
    if "gpu_arch" in when:
        if ctx.facts.status("gpu_devices") in ("missing", "error"):
            return None, why
        archs = {gpu_arch(g, ctx.kb) for g in gpus}
        known = {a for a in archs if a is not None}
        if len(known) < len(archs):
            return None, why
        hit = known & set(when["gpu_arch"])
        if not hit:
            return False, why
        why.append(f"GPU {', '.join(sorted(hit))}")
    if when.get("no_gpu"):
        if ctx.facts.status("gpu_devices") in ("missing", "error"):
            return None, why
        if gpus:
            return False, why
        why.append("no GPU")
    return True, why


@check(code="BLD106", name="known-broken-combination", severity="error",
       tables=("framework_builds",), cause="other", component="framework-build")
def known_broken_combination(ctx: Context):
    """What it does:
    Matches the stack against the knowledge base's known_issues table: specific combinations (a torch
    release or nightly, its wheel variant, a GPU target, an installed extension release) that are
    publicly reported broken, each with its thread.

    Why is this bad?
    Each entry is a failure someone already debugged: a nightly that bundles a math library without
    one gfx target, an extension release built against a newer torch, a release regression.  Finding
    it by name saves the rediscovery.

    Example:
    flash-attn 2.5.8 with torch 2.1.2 ("undefined symbol ... c10::impl::cow"), torch 2.12 nightly
    +rocm7.2 on a gfx900 Vega ("Illegal seek for GPU arch : gfx900").

    Fix:
    The fix recorded with the entry (usually a version to move to); follow the linked thread.

    References:
    https://github.com/Dao-AILab/flash-attention/issues/950
    https://github.com/pytorch/pytorch/issues/179865
    """
    build, version = _torch(ctx)
    if version is None:
        yield Skip("torch is not installed")
        return
    release = q.torch_release(ctx.kb, version)
    variant = q.local_tag(version)
    if not variant and release is not None and build is not None:
        v = _variant(release, build, version)
        variant = v.name if v else ""
    undecided = []
    gpu_only: list[str] = []
    no_gpu_described = ctx.facts.origin == "described" and ctx.facts.status("gpu_devices") == "missing"
    for issue in q.known_issues(ctx.kb):
        hit, why = _issue_matches(ctx, issue, version, variant)
        if hit is None and no_gpu_described and "gpu_arch" in (issue.get("when") or {}):
            # a description that names no GPU is not made "unknown" by an issue of some GPUs only: say which
            rest = dict(issue, when={k: v for k, v in issue["when"].items() if k != "gpu_arch"})
            hit_rest, _ = _issue_matches(ctx, rest, version, variant)
            if hit_rest is False:
                continue
            if hit_rest:
                gpu_only.append(f"{issue['id']} (only on {', '.join(issue['when']['gpu_arch'])})")
                continue
        if hit is None:
            undecided.append(issue["id"])
        elif hit:
            sev = Severity.ERROR if issue.get("effect") == "breaks" else Severity.WARNING
            yield Fail(f"known broken: {issue['title']}",
                       why=f"This stack matches a reported failure ({'; '.join(why)}): {issue['source']}",
                       evidence=[ev(build, f"torch {version}"), ev(None, f"KB known_issues {issue['id']} ({issue['source']})")],
                       fixes=[fix(issue.get("fix", "see the linked thread"))], severity=sev)
    if undecided:
        yield Unknown(f"cannot tell whether known issue(s) {', '.join(undecided)} apply")
    note = f"; no GPU described, GPU-specific known issue(s): {', '.join(gpu_only)}" if gpu_only else ""
    yield Pass(f"no known broken combination for torch {version}{note}")



# -- BLD048 / BLD049 ----------------------------------------------------------------------------------
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
    sel = _selected_libs(ctx)
    if not sel:
        yield Skip("no loader resolution of GPU libraries (no GPU framework build, or pasted facts)")
        return
    fams: dict[str, list[Row]] = {}
    for r in sel:
        fams.setdefault(r.get("family") or r.get("name"), []).append(r)
    checked = 0
    for fam, rows in sorted(fams.items()):
        vers: dict[tuple[int, ...], list[Row]] = {}
        for r in rows:
            v = _vnums(r.get("version"), 2)
            if v is not None:
                vers.setdefault(v, []).append(r)
        if len(rows) < 2:
            continue
        checked += 1
        if len(vers) < 2:
            continue
        # the release the family's main library (the one the framework names) belongs to
        main = next((r for r in rows if r.get("name") == fam), rows[0])
        main_v = _vnums(main.get("version"), 2)
        odd = [r for v, rs in vers.items() if v != main_v for r in rs]
        parts = "; ".join(f"{'.'.join(map(str, v))}: " + ", ".join(os.path.basename(r.get("path")) for r in rs)
                          for v, rs in sorted(vers.items()))
        how = sorted({r.get("via") for r in odd if r.get("via")})
        yield Fail(f"{_lib_title(fam)}: one process will load parts of {len(vers)} releases ({parts})"
                   + (f"; the other release comes via {', '.join(how)}" if how else ""),
                   why=("The parts of one release call each other's internals: cuDNN checks its sub-libraries' "
                        "version and fails (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH), other libraries crash "
                        "or miss symbols."),
                   evidence=[ev(r, ("main: " if r is main else "") + _fmt_lib(r)
                                + (f" (opened by {os.path.basename(r.get('requested_by') or '')})"
                                   if r.get("requested_by") else "")) for r in [main] + odd][:10],
                   fixes=_fixes_for(ctx, odd) or [fix(f"Remove or align the {_lib_title(fam)} copies at "
                                                      f"{', '.join(sorted({os.path.dirname(r.get('path')) for r in odd}))}",
                                                      safe=False)])
    if checked:
        yield Pass("the parts of each GPU library come from one release")


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
    sel = _selected_libs(ctx)
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
                have = _vnums(r.get("version"), 3)
                need = _vnums(want, 3)
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
                            and (_vnums(o.get("version"), 2) or ()) >= need[:2]]
                fixes = _fixes_for(ctx, [r])
                if not fixes:
                    fixes = [fix(f"Install {req} (the release {b.get('name')} was built for) where the loader finds it "
                                 f"first, or remove the older copy at {r.get('path')}", safe=False)]
                yield Fail(f"{b.get('name')} {b.get('version')} is built for {_lib_title(fam)} {want} ({req}) but will load "
                           f"{_lib_title(fam)} {r.get('version')} from {r.get('path')}" + (f": {how}" if how else ""),
                           why=(f"An older {_lib_title(fam)} than the build's lacks what it calls; torch refuses an older "
                                "cuDNN at its first use ('cuDNN version incompatibility')."),
                           evidence=[ev(b, f"{b.get('name')} {b.get('version')} requires {req}"),
                                     ev(r, "loaded: " + _fmt_lib(r)),
                                     *[ev(o, "not loaded: " + _fmt_lib(o)) for o in shadowed[:2]]],
                           fixes=fixes)
    yield Pass("each GPU library the framework loads is at least the release it was built for")


@check(code="BLD050", name="rocm-libraries-mixed-releases", severity="error",
       tables=("libraries",), cause="runtime-mismatch", component="runtime", vendor="amd")
def rocm_libraries_mixed_releases(ctx: Context) -> Iterable:
    """What it does:
    Reads the ROCm release of every ROCm library the framework's process will load (HIP, rocBLAS,
    hipBLASLt, MIOpen, RCCL, hipBLAS, as the loader model resolves them: an ``/opt/rocm-X.Y.Z`` path
    after symlinks, AMD's build number in the file name, ``librocblas.so.4.2.60201`` = ROCm 6.2.1, or the
    HIP version of the torch wheel that bundles them) and fires when they are not all of one release.

    Why is this bad?
    ROCm's libraries are built and tested as one release: rocBLAS and MIOpen of one release call HIP
    and each other through interfaces of that release.  A mix fails at load ("undefined symbol"), at the
    first GEMM (Tensile code objects for another HIP ABI: "hipErrorNoBinaryForGpu", "invalid device
    function"), or crashes.  The usual cause: ``LD_LIBRARY_PATH`` (or ``LD_PRELOAD``) puts a system
    ROCm's library in front of the copies a torch wheel bundles, for the libraries it happens to have.

    Example:
    torch built with HIP 6.2 loading its own ``libamdhip64.so`` but ``librocblas.so.4`` from
    ``/opt/rocm-6.1.0/lib`` first on ``LD_LIBRARY_PATH``: fires.  Every library from the wheel: passes.

    Fix:
    Take the other ROCm's directory out of ``LD_LIBRARY_PATH`` / ``LD_PRELOAD`` so every library comes
    from one release (the wheel's own), or install the framework build made for the system ROCm.

    References:
    https://man7.org/linux/man-pages/man8/ld.so.8.html
    https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html
    """
    rows = [r for r in _selected_libs(ctx) if r.get("release")]
    if len(rows) < 2:
        yield Skip("fewer than two ROCm libraries of a known release in the loader model")
        return
    groups: dict[tuple[int, ...], list[Row]] = {}
    for r in rows:
        v = _vnums(r.get("release"), 2)
        if v is not None:
            groups.setdefault(v, []).append(r)
    if len(groups) < 2:
        yield Pass(f"the ROCm libraries the framework loads are all of ROCm {rows[0].get('release')}")
        return
    # the release of HIP (what the framework was built for when the wheel bundles it) is the reference
    hip = next((r for r in rows if r.get("name") == "amdhip64"), None)
    main_v = _vnums(hip.get("release"), 2) if hip else max(groups, key=lambda k: len(groups[k]))
    odd = [r for v, rs in groups.items() if v != main_v for r in rs]
    parts = "; ".join(f"ROCm {'.'.join(map(str, v))}: " + ", ".join(os.path.basename(r.get("path")) for r in rs)
                      for v, rs in sorted(groups.items()))
    yield Fail(f"one process will load ROCm libraries of {len(groups)} releases ({parts})",
               why=("ROCm's libraries are built as one release and call HIP and each other through that release's "
                    "interfaces: a mix fails at load, at the first GEMM, or crashes."),
               evidence=[ev(r, f"ROCm {r.get('release')}: " + _fmt_lib(r)) for r in ([hip] if hip else []) + odd][:10],
               fixes=_fixes_for(ctx, odd) or [fix("Make every ROCm library come from one release: remove the copies at "
                                                  + ", ".join(sorted({os.path.dirname(r.get('path')) for r in odd}))
                                                  + " from the loader path", safe=False)])


# -- BLD110 -------------------------------------------------------------------------------------------
@check(code="BLD110", name="gpu-target-in-no-official-rocm-build", severity="error",
       tables=("gpu_devices",), cause="gpu-arch-unsupported", component="framework-build", vendor="amd")
def gpu_target_in_no_official_rocm_build(ctx: Context):
    """What it does:
    When no framework build of known release is in sight (a log or bug report that names the GPU but
    not the torch version; a live machine without torch), compares each AMD GPU's gfx target with
    every official ROCm wheel line of torch in the knowledge base (the union of their
    PYTORCH_ROCM_ARCH lists).  A target none of them ever carried fails, unless
    ``HSA_OVERRIDE_GFX_VERSION`` makes the runtime load a carried one.  With a known torch build,
    BLD040 (targets read from its libraries) and BLD102 (its wheel line's list) judge instead, and
    with the math libraries' kernel files read, LIB026.

    Why is this bad?
    AMD code objects run only on their exact gfx target.  Consumer parts outside the official lists
    (RX 6600/6700 gfx1031/1032, RX 5000 gfx101x, Polaris gfx803, APU graphics such as gfx90c, gfx1035,
    gfx1036, gfx1103) get "invalid device function", a segmentation fault or a GPU memory access
    fault at the first kernel of an official build; an integrated GPU enumerated next to a supported
    discrete one takes work it cannot run.

    Example:
    ComfyUI's "Device: cuda:0 AMD Radeon RX 6600 : native" before a segfault, no torch version shown:
    fires (gfx1032).  llama.cpp's "Device 0: AMD Radeon RX 7900 XTX, gfx1100": passes.  gfx1031 with
    HSA_OVERRIDE_GFX_VERSION=10.3.0: passes (runs gfx1030 code).

    Fix:
    Set HSA_OVERRIDE_GFX_VERSION to the carried target of the same generation (10.3.0 for RDNA2,
    11.0.0 for RDNA3; unsupported by AMD), hide an integrated GPU with HIP_VISIBLE_DEVICES, or build
    the framework from source with PYTORCH_ROCM_ARCH set to the GPU's target.

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
    https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_rocm.sh
    """
    amd = [g for g in ctx.facts.table("gpu_devices") if g.get("vendor") == "amd"]
    if not amd:
        yield Skip("no AMD GPU")
        return
    known = [b for b in ctx.facts.table("framework_builds") if b.get("name") == "torch" and b.get("version")
             and b.get("variant") in ("rocm", "", None)]
    if known:
        yield Skip("not applicable: a torch build is known, BLD040 / BLD102 judge its targets")
        return
    if ctx.facts.table("kernel_libraries"):
        yield Skip("not applicable: the math libraries' kernel files were read, LIB026 judges them for each GPU")
        return
    carried: set[str] = set()
    lines: list[str] = []
    for rel in q.torch_releases(ctx.kb) if ctx.kb is not None else []:
        for v in rel.variants:
            if v.kind == "rocm" and v.arch:
                carried |= {a.split(":")[0] for a in v.arch}
                lines.append(f"{rel.version} {v.name}")
    if not carried:
        yield Unknown("the knowledge base records no ROCm wheel arch lists")
        return
    override = _build_env(ctx, "HSA_OVERRIDE_GFX_VERSION")
    eff = gfx_from_override(override.get("value")) if override is not None and override.get("value") else None
    src = f"KB torch_releases, official ROCm wheel lines {lines[-1]} .. {lines[0]}: {', '.join(sorted(carried))}"
    ok: list[str] = []
    seen: set[str] = set()
    for g in amd:
        arch = gpu_arch(g, ctx.kb)
        label = (g.get("name") if g.get("name") and g.get("name") != arch else "") or "AMD GPU"
        if arch is None:
            continue  # a PCI id or a name the KB does not know: nothing to judge (the GPU's gfx target is not shown)
        if arch in seen:
            continue
        seen.add(arch)
        if arch in carried or (arch.startswith("gfx94") and "gfx942" in carried):
            # gfx940/941/943: MI300 steppings and TheRock family names, served by the gfx942 line
            ok.append(f"{label} ({arch})")
            continue
        if eff and eff in carried:
            yield Pass(f"{label} ({arch}) runs the official builds' {eff} code through "
                       f"HSA_OVERRIDE_GFX_VERSION={override.get('value') if override else ''}",
                       [ev(g, f"{label}: {arch}"), ev(override, "HSA_OVERRIDE_GFX_VERSION")])
            continue
        others = [x for x in amd if gpu_arch(x, ctx.kb) in carried]
        hint = _OVERRIDE_HINT.get(arch[:6]) or _OVERRIDE_HINT.get(arch[:5])
        fixes = []
        if others:
            idx = ",".join(str(x.get("index")) for x in others if x.get("index") is not None)
            fixes.append(fix(f"Hide the {arch} GPU from ROCm and keep the supported one(s)"
                             + (f": export HIP_VISIBLE_DEVICES={idx}" if idx else " with HIP_VISIBLE_DEVICES"),
                             command=f"export HIP_VISIBLE_DEVICES={idx}" if idx else None, safe=False))
        if hint and hint[0] in carried:
            fixes.append(fix(f"export HSA_OVERRIDE_GFX_VERSION={hint[1]} to run the official builds' {hint[0]} code "
                             f"on {arch} (not supported by AMD; may crash or compute wrongly)",
                             command=f"export HSA_OVERRIDE_GFX_VERSION={hint[1]}", safe=False))
        fixes.append(fix(f"Or build the framework from source with PYTORCH_ROCM_ARCH={arch}"))
        note = (f" (HSA_OVERRIDE_GFX_VERSION={override.get('value')} selects {eff or 'no valid target'}, "
                "which no official build carries either)") if override is not None else ""
        yield Fail(f"{label} ({arch}) is a GPU target no official ROCm build of torch carries{note}",
                   why="AMD code objects run only on their exact gfx target: an official ROCm build fails at the "
                       "first kernel on this GPU (invalid device function, a segfault or a memory access fault).",
                   evidence=[ev(g, f"{label}: {arch}"), ev(None, src)]
                            + ([ev(override, f"HSA_OVERRIDE_GFX_VERSION={override.get('value')}")] if override else []),
                   fixes=fixes)
    if ok:
        yield Pass(f"{', '.join(ok)}: carried by the official ROCm builds", [ev(None, src)])
    elif not seen:
        yield Skip("no AMD GPU's gfx target shown (rocminfo's Name: gfx... line would show it)")


CHECKS = [gpu_arch_not_in_build, cpu_only_build_with_gpu, wrong_vendor_build, prerelease_framework, gpu_library_loaded_twice, gpu_library_shadowed_copy, framework_runtime_mismatch, framework_runtime_differs_from_system, gpu_target_missing_from_official_wheel, python_outside_build_range, known_broken_combination,
          gpu_library_mixed_releases, gpu_library_older_than_build, rocm_libraries_mixed_releases,
          gpu_target_in_no_official_rocm_build]
