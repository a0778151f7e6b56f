"""EXT: compiled extensions and the toolchain that builds them (nvcc, host compiler)."""
from __future__ import annotations

import re
from typing import Iterable


from gpuvet.kb import query as q
from gpuvet.model import Severity
from gpuvet.model.versions import major_minor, parse_requirement

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import COMPANIONS, _build_cuda, _fmt, _packages, _release_entry, _torch
from .common import _vnums, _ext_label, _rebuild, _nvidia_archs, _arch_list_value  # noqa: F401
from .gpu import gpu_arch


# ---------------------------------------------------------------------------------------------------
@check(code="EXT101", name="extension-built-for-other-torch", severity="error",
       tables=("packages",), cause="extension-abi", component="extension")
def extension_built_for_other_torch(ctx: Context):
    """What it does:
    Finds compiled extensions (xformers, vllm, flash-attn, bitsandbytes, apex, deepspeed, torch-scatter
    ...) whose wheel requires a torch version other than the installed one: its own ``Requires-Dist``
    on torch, or, when the metadata was not read, the torch release the knowledge base's companions
    table records for that extension release.

    Why is this bad?
    A C++/CUDA extension links against libtorch's C++ ABI, which changes with every torch release.
    Imported against another torch it fails with "undefined symbol: _ZN3c10..." or, worse, loads and
    corrupts memory.  Prebuilt xformers and vllm wheels pin one exact torch for this reason; installing
    them with ``--no-deps`` or upgrading torch afterwards breaks the pin.

    Example:
    xformers 0.0.20 (built for torch 2.0.1) next to torch 2.1.0.

    Fix:
    Install the extension release built for the installed torch, or the torch it pins; rebuild
    source-built extensions (``pip install --no-build-isolation --force-reinstall --no-cache-dir``).

    References:
    https://github.com/facebookresearch/xformers#installing-xformers
    https://pytorch.org/docs/stable/notes/extending.html
    https://github.com/Dao-AILab/flash-attention/issues/950
    """
    build, version = _torch(ctx)
    if version is None:
        yield Skip("torch is not installed")
        return
    tv = q.parse_version(version)
    checked = []
    for name, r in sorted(_packages(ctx).items()):
        if name in ("torch", *COMPANIONS) or not name:
            continue
        have = str(r.get("version", ""))
        spec = None
        where = ""
        for req in r.get("requires", []) or []:
            rq = parse_requirement(req)
            if rq is None:
                continue
            if rq[0].lower() == "torch" and rq[1]:
                spec, where = str(rq[1]), f"Requires-Dist {req}"
                break
        if spec is None:
            pin = q.extension_pin(ctx.kb, name, have)
            if pin is None:
                continue
            spec, where = str(pin["torch"]), f"KB companions: {name} {have} built for torch{pin['torch']} ({pin['source']})"
        checked.append(name)
        ok = q.spec_contains(spec, version)
        if ok is False and tv is not None:
            yield Fail(f"{name} {have} is built for torch{spec}, but torch {version} is installed",
                       why=f"{name} carries compiled code linked against another libtorch; with torch {version} it "
                           "fails to import (undefined symbol) or misbehaves.",
                       evidence=[ev(r, f"{name} {have}: {where}"), ev(build, f"torch {version}")],
                       fixes=[fix(f"install the {name} release built for torch {version}, or torch{spec}", safe=True),
                              fix(f"or rebuild {name} from source against this torch",
                                  f"pip install --no-build-isolation --force-reinstall --no-cache-dir {name}")])
    if not checked:
        yield Skip("no extension with a recorded torch requirement is installed")
        return
    yield Pass(f"{', '.join(checked)} match torch {version}")


# ---------------------------------------------------------------------------------------------------
@check(code="EXT104", name="host-compiler-too-new-for-nvcc", severity="error",
       tables=("compilers",), cause="toolchain", component="extension")
def host_compiler_too_new_for_nvcc(ctx: Context):
    """What it does:
    Compares the host GCC (or clang) with the newest one the installed nvcc accepts, from the CUDA
    installation guide's host compiler table (crt/host_config.h enforces it).

    Why is this bad?
    nvcc refuses a newer host compiler: "#error -- unsupported GNU version! gcc versions later than 12
    are not supported!".  Every CUDA extension build fails (flash-attn, apex, a torch.utils.cpp_extension
    JIT load, DeepSpeed ops), usually deep inside a pip install log.

    Example:
    nvcc from CUDA 12.1 with GCC 13 (CUDA 12.1 accepts GCC up to 12).

    Fix:
    Install a supported GCC and point nvcc at it (``export CC=gcc-12 CXX=g++-12`` or
    ``NVCC_CCBIN=/usr/bin/g++-12``), or use a newer CUDA toolkit.  ``-allow-unsupported-compiler``
    skips the test at your own risk.

    References:
    https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html#host-compiler-support-policy
    """
    nvcc = ctx.facts.first("compilers", name="nvcc")
    hosts = [r for r in ctx.facts.table("compilers") + ctx.facts.table("host_compilers")
             if r.get("name") in ("gcc", "g++", "clang", "clang++") and r.get("runs") is not False and r.get("version")]
    # nvcc's host compiler: NVCC_CCBIN / CUDAHOSTCXX when set, cpp_extension's -ccbin $CC, else the PATH's
    nvcc_hosts = [r for r in hosts if str(r.get("role") or "").startswith("nvcc host")]
    hosts = nvcc_hosts or [r for r in hosts if not r.get("role") or str(r.get("role")).startswith("CC")] or hosts
    hosts = list({r.get("path") or id(r): r for r in hosts}.values())
    if nvcc is None:
        yield Skip("no nvcc")
        return
    if not hosts:
        yield Skip("the host compiler version was not recorded")
        return
    cuda = nvcc.get("cuda_version") or nvcc.get("version")
    entry = q.host_compiler(ctx.kb, cuda)
    if entry is None:
        yield Unknown(f"the KB records no host compiler limit for CUDA {cuda}")
        return
    for h in hosts:
        name = str(h.get("name"))
        family = "clang" if name.startswith("clang") else "gcc"
        limit = entry.get("clang_max" if family == "clang" else "gcc_max")
        have = q.parse_version(h.get("version"))
        if limit is None or have is None:
            yield Unknown(f"cannot compare {name} {h.get('version')} with CUDA {cuda}")
            continue
        if have.release[0] > int(limit):
            yield Fail(f"{name} {h.get('version')} is newer than CUDA {cuda}'s nvcc accepts ({family} <= {limit})",
                       why=f"nvcc {cuda} stops with 'unsupported GNU version' (or clang version) for a newer host "
                           "compiler, so CUDA extensions cannot be built.",
                       evidence=[ev(h, f"{name} {h.get('version')}"), ev(nvcc, f"nvcc CUDA {cuda}"),
                                 ev(None, f"KB host_compilers CUDA {entry['cuda']}: {family} <= {limit} ({entry['source']})")],
                       fixes=[fix(f"install {family}-{limit} and use it for CUDA builds",
                                  f"export CC={family}-{limit} CXX={'g++' if family == 'gcc' else 'clang++'}-{limit}"),
                              fix("or use a newer CUDA toolkit")])
        else:
            yield Pass(f"{name} {h.get('version')} is accepted by nvcc {cuda}")


@check(code="EXT003", name="nvcc-cuda-differs-from-framework", severity="error",
       tables=("compilers", "framework_builds"), cause="extension-abi", component="extension", vendor="nvidia")
def nvcc_cuda_differs_from_framework(ctx: Context):
    """What it does:
    Compares the CUDA release of ``nvcc`` (the compiler that builds CUDA extensions: flash-attn,
    apex, xformers from source, deepspeed ops, your own ``torch.utils.cpp_extension`` modules) with
    the CUDA version each framework build was made with.  A different major release is an error; a
    different minor release is a warning.

    Why is this bad?
    ``torch.utils.cpp_extension`` refuses to build when the majors differ ("The detected CUDA version
    (11.8) mismatches the version that was used to compile PyTorch (12.1)") and only warns on a minor
    difference; an extension built anyway links a CUDA runtime and libraries of another major than the
    framework's, which fails at import ("undefined symbol", "libcudart.so.11.0: cannot open shared
    object file") or at run time.

    Example:
    nvcc 11.8 with torch 2.5.1+cu124: error.  nvcc 12.6 with torch 2.5.1+cu124: warning.  nvcc
    13.0.88 with torch 2.11.0+cu130: passes.

    Fix:
    Install the CUDA toolkit of the framework's CUDA version and point CUDA_HOME (and PATH) at it
    before building, or install the framework build made for the toolkit's CUDA.

    References:
    https://pytorch.org/docs/stable/cpp_extension.html
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    """
    nvccs = [r for r in ctx.facts.table("compilers") if r.get("name") == "nvcc" and major_minor(r.get("cuda_version"))]
    builds = [r for r in ctx.facts.table("framework_builds") if _build_cuda(r.get("cuda"))]
    if not nvccs:
        yield Skip("no nvcc found")
        return
    if not builds:
        yield Skip("no framework build made for CUDA is installed")
        return
    nv = nvccs[0]
    have: tuple[int, int] = major_minor(nv.get("cuda_version"))  # type: ignore[assignment]
    where = f" at {nv.get('path')}" if nv.get("path") else ""
    for b in builds:
        need, major_only = _build_cuda(b.get("cuda"))  # type: ignore[misc]
        name = f"{b.get('name', 'framework')} {b.get('version', '')}".strip()
        built = f"CUDA {b.get('cuda')}" if major_only else f"CUDA {_fmt(need)}"
        evidence = [ev(nv, f"nvcc{where}: CUDA {nv.get('cuda_version')} ({nv.get('version')})"),
                    ev(b, f"{name} built with CUDA {b.get('cuda')}")]
        # a build that names only its CUDA major (jaxlib's cuda13 plugin) is judged on the major alone
        same = have[0] == need[0] if major_only else have == need
        if same:
            yield Pass(f"nvcc CUDA {_fmt(have)} matches {name} ({built})", evidence)
            continue
        fixes = [fix(f"Install a CUDA {b.get('cuda') if major_only else _fmt(need)} toolkit and set CUDA_HOME "
                     "(and PATH) to it before building extensions", root=True),
                 fix(f"Or install a {b.get('name', 'framework')} build made for CUDA {_fmt(have)}", safe=True)]
        if have[0] != need[0]:
            yield Fail(f"nvcc{where} is CUDA {_fmt(have)} but {name} was built with {built}: "
                       "a different CUDA major release, so CUDA extensions will not build or will not load",
                       why="torch.utils.cpp_extension refuses a CUDA major different from the framework's; an "
                           "extension built against another major links another CUDA runtime.",
                       evidence=evidence, fixes=fixes)
        else:
            yield Fail(f"nvcc{where} is CUDA {_fmt(have)} but {name} was built with {built} "
                       "(same major, different minor)",
                       why="Extensions usually build and load across CUDA minor releases, but PTX, headers and "
                           "library symbols can differ; torch warns about it.",
                       evidence=evidence, fixes=fixes, severity=Severity.WARNING)


def _cc_of(arch: str | None) -> tuple[int, int] | None:
    """'sm_70' -> (7, 0); 'sm_90a' -> (9, 0); 'sm_120' -> (12, 0)."""
    m = re.fullmatch(r"sm_(\d+?)(\d)[a-z]?", arch or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@check(code="EXT006", name="nvcc-cannot-target-gpu", severity="error",
       tables=("compilers", "gpu_devices"), cause="gpu-arch-unsupported", component="extension", vendor="nvidia")
def nvcc_cannot_target_gpu(ctx: Context):
    """What it does:
    Compares each NVIDIA GPU's compute capability with the oldest architecture the installed nvcc
    can still compile for (the knowledge base's ``min_compute_capability`` of the toolkit release:
    CUDA 13.x starts at Turing, 7.5).

    Why is this bad?
    CUDA 13.0 removed offline compilation and library support for Maxwell, Pascal and Volta: nvcc
    13 cannot build CUDA extensions or kernels for a V100 (sm_70), a P100 (sm_60) or a GTX 1080
    (sm_61) ("nvcc fatal : Unsupported gpu architecture 'compute_70'"), and the CUDA 13 math
    libraries carry no code for them.  Building flash-attn, apex or your own extension for such a
    GPU with CUDA 13 fails, or builds for other GPUs only.

    Example:
    nvcc 13.0 on a Tesla V100 (7.0): fires.  nvcc 13.0.88 on an H200 (9.0): passes.  nvcc 12.8 on
    a V100: skipped (no floor recorded for 12.x; 12.x still targets Volta).

    Fix:
    Build with a CUDA 12.x toolkit (set CUDA_HOME to it), with a framework build for CUDA 12.x, on
    this GPU; or use a Turing-or-newer GPU for CUDA 13.

    References:
    https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#deprecated-architectures
    https://developer.nvidia.com/cuda-gpus
    """
    nvccs = [r for r in ctx.facts.table("compilers") if r.get("name") == "nvcc" and major_minor(r.get("cuda_version"))]
    gpus = [r for r in ctx.facts.table("gpu_devices") if r.get("vendor") == "nvidia"]
    if not nvccs:
        yield Skip("no nvcc found")
        return
    if not gpus:
        yield Skip("no NVIDIA GPU on this machine")
        return
    nv = nvccs[0]
    have = major_minor(nv.get("cuda_version"))
    release = _release_entry(ctx.kb, have)  # type: ignore[arg-type]
    floor = major_minor(release.get("min_compute_capability")) if release else None
    if floor is None:
        yield Skip(f"the knowledge base records no oldest GPU architecture for CUDA {_fmt(have)}")  # type: ignore[arg-type]
        return
    for g in gpus:
        arch = gpu_arch(g, ctx.kb)
        cc = _cc_of(arch)
        label = f"GPU {g.get('index', '?')} {g.get('name', '')}".strip()
        if cc is None:
            yield Unknown(f"the architecture of {label} is not known", [ev(g, label)])
            continue
        evidence = [ev(nv, f"nvcc {nv.get('version')} (CUDA {nv.get('cuda_version')}) compiles for compute "
                           f"capability {_fmt(floor)} and newer"),
                    ev(g, f"{label}: {arch} (compute capability {_fmt(cc)})")]
        if cc >= floor:
            yield Pass(f"nvcc CUDA {_fmt(have)} can compile for {label} ({arch})", evidence)  # type: ignore[arg-type]
        else:
            yield Fail(f"nvcc CUDA {_fmt(have)} cannot compile for {label} ({arch}): CUDA {have[0]}.x supports "  # type: ignore[arg-type,index]
                       f"compute capability {_fmt(floor)} and newer",
                       why="CUDA 13.0 removed offline compilation and library support for Maxwell, Pascal and "
                           "Volta; extensions and kernels built with it carry no code for this GPU.",
                       evidence=evidence,
                       fixes=[fix("Build with a CUDA 12.x toolkit for this GPU: install it and set CUDA_HOME (and "
                                  "PATH) to it", root=True),
                              fix("Or use a framework build made for CUDA 12.x on this GPU", safe=True)])



# -- the compiled-extension scan ------------------------------------------------------------------
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
    from .bld import cuda_target_runs

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
            for g, known in amd:
                if not known:
                    continue
                arch = known
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
    want_cuda = str((_vnums(torch.get("cuda"), 1) or ("",))[0])
    want_hip = str((_vnums(torch.get("hip"), 1) or ("",))[0])
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


CHECKS = [nvcc_cuda_differs_from_framework, nvcc_cannot_target_gpu, extension_built_for_other_torch, host_compiler_too_new_for_nvcc,
          extension_lacks_gpu_arch, extension_needs_symbols_torch_lacks, extension_links_another_runtime_major]
