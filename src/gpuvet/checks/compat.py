"""Checks that reason with the knowledge base's release tables (codes 100-119).

They run on live facts (``gpuvet check``), on pasted reports and on described stacks (``gpuvet
compat``) alike.  Each one answers ``unknown`` when the KB does not record what it needs (a torch
release, a wheel line's arch list, a GPU name) instead of guessing.
"""
from __future__ import annotations

from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from gpuvet.kb import query as q
from gpuvet.model import Row, Severity

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .gpu import gpu_arch

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


# ---------------------------------------------------------------------------------------------------
@check(code="PKG100", name="companion-built-for-other-torch", severity="error",
       tables=("packages",), cause="companion-mismatch", component="companion-package")
def companion_for_other_torch(ctx: Context):
    """What it does:
    Compares torchvision, torchaudio and triton (pytorch-triton-rocm on ROCm) with the versions the
    installed torch release pins, from the knowledge base's torch_releases table and from the
    companion's own ``Requires-Dist: torch==X`` when its metadata was read.

    Why is this bad?
    torchvision and torchaudio ship C++ operators compiled against one torch release; loaded with
    another they fail with "undefined symbol", "operator torchvision::nms does not exist" or a silent
    fall back to slow paths.  torch.compile (inductor) imports private triton APIs that change between
    triton releases ("cannot import name 'triton_key'").  pip does not always keep them in step: an
    unpinned ``pip install torchvision`` or another package's requirement pulls a different torch.

    Example:
    torch 2.2.2 with triton 2.3.0 (torch 2.2 pins triton 2.2.0); torch 2.3.1 with torchvision 0.19.0
    (built for torch 2.4).

    Fix:
    Install the companions from the same index as torch, pinned to the release's versions, e.g.
    ``pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url
    https://download.pytorch.org/whl/cu121``.

    References:
    https://github.com/pytorch/vision#installation
    https://pytorch.org/get-started/previous-versions/
    https://github.com/coreweave/ml-containers/issues/64
    """
    build, version = _torch(ctx)
    pkgs = _packages(ctx)
    present = [n for n in COMPANIONS if n in pkgs]
    if version is None:
        yield Skip("torch is not installed")
        return
    if not present:
        yield Skip("no torchvision, torchaudio or triton installed")
        return
    release = q.torch_release(ctx.kb, version)
    tv = q.parse_version(version)
    # a nightly / pre-release pins the companion builds of its own date, not the release's pins: only
    # the companions' own Requires-Dist on torch can be judged
    nightly = tv is not None and (tv.is_devrelease or tv.is_prerelease)
    unknown: list[str] = []
    for name in present:
        r = pkgs[name]
        have = str(r.get("version", ""))
        # 1. the companion's own requirement on torch (exact pins in official wheels)
        for req in r.get("requires", []) or []:
            try:
                rq = Requirement(req)
            except InvalidRequirement:
                continue
            if rq.name.lower() == "torch" and rq.specifier and tv is not None \
                    and not rq.specifier.contains(tv, prereleases=True):
                yield Fail(f"{name} {have} requires torch{rq.specifier} but torch {version} is installed",
                           why=f"{name} {have} was built against another torch release; its compiled operators "
                               "do not load, or load and misbehave, with this one.",
                           evidence=[ev(r, f"{name} {have}: Requires-Dist {req}"), ev(build, f"torch {version}")],
                           fixes=[fix(f"install the {name} built for torch {version}",
                                      _install_cmd(release, _variant(release, build, version)) if release else None,
                                      safe=True)])
                break
        else:
            if nightly:
                continue
            if release is None:
                unknown.append(f"torch {version} is not in the KB's torch_releases")
                continue
            want = release.companions.get(name)
            if not want:
                if name.startswith(("triton", "pytorch-triton")):
                    continue  # releases before 2.0 pin no triton
                unknown.append(f"the KB records no {name} pin for torch {release.version}")
                continue
            if q.minor_of(have) != q.minor_of(want):
                yield Fail(f"{name} {have} is not the release torch {release.version} pins ({name} {want})",
                           why=f"torch {release.version} was released with {name} {want}; {name} {have} was built "
                               "for another torch release and its compiled parts (or, for triton, the private APIs "
                               "torch.compile imports) do not match.",
                           evidence=[ev(r, f"{name} {have}"), ev(build, f"torch {version}"),
                                     ev(None, f"KB torch_releases {release.version}: {name} {want} ({release.source})")],
                           fixes=[fix(f"install {name} {want} from torch's index",
                                      _install_cmd(release, _variant(release, build, version)), safe=True)])
    if unknown:
        yield Unknown("; ".join(dict.fromkeys(unknown)))
    yield Pass(f"{', '.join(present)} match torch {version}")


# ---------------------------------------------------------------------------------------------------
@check(code="EXT101", name="extension-built-for-other-torch", severity="error",
       tables=("packages",), cause="extension-abi", component="extension")
def extension_for_other_torch(ctx: Context):
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
            try:
                rq = Requirement(req)
            except InvalidRequirement:
                continue
            if rq.name.lower() == "torch" and rq.specifier:
                spec, where = str(rq.specifier), f"Requires-Dist {req}"
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
@check(code="BLD102", name="gpu-target-missing-from-official-wheel", severity="critical",
       tables=("framework_builds", "gpu_devices"), cause="gpu-arch-unsupported", component="framework-build")
def gpu_missing_from_official_wheel(ctx: Context):
    """What it does:
    When the build's own GPU target list could not be read from its libraries (a described stack, a
    pasted report, an unreadable ELF file), compares each GPU's architecture with the targets of the
    official wheel line of that torch release and variant (TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH of
    the release's build scripts, in the knowledge base's torch_releases table).

    Why is this bad?
    A wheel without code for the GPU fails at the first kernel: "no kernel image is available for
    execution on the device" (CUDA), "invalid device function" / "HIP error: invalid device function"
    (ROCm), or torch warns "<GPU> with CUDA capability sm_120 is not compatible with the current PyTorch
    installation".  NVIDIA cubins run on newer GPUs of the same major architecture (sm_80 code on
    sm_86/sm_89) and PTX is JIT-compiled forward; AMD code objects run only on their exact gfx target.

    Example:
    torch 2.6.0+cu126 on a GeForce RTX 5090 (sm_120: the cu126 line stops at sm_90); torch 2.5.1+rocm6.2
    on a Radeon RX 5700 XT (gfx1010 is not among gfx900/906/908/90a/942/1030/1100).

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
        yield Unknown(f"torch {version} is not in the KB's torch_releases")
        return
    variant = _variant(release, build, version)
    kind = str(build.get("variant", "") or (variant.kind if variant else ""))
    if kind == "cpu" or (variant is not None and variant.kind == "cpu"):
        yield Skip("CPU-only build")
        return
    if variant is None:
        yield Unknown(f"the KB records no {kind or 'GPU'} wheel line of torch {release.version} matching {version}")
        return
    if variant.arch is None:
        yield Unknown(f"the KB has no verified arch list for torch {release.version} {variant.name}")
        return
    vendor = "nvidia" if variant.kind == "cuda" else "amd" if variant.kind == "rocm" else ""
    gpus = [g for g in ctx.facts.table("gpu_devices") if g.get("vendor") in (vendor, None, "")]
    if not gpus:
        yield Skip(f"no {vendor or 'matching'} GPU")
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


def _newer_line_for(kb: Any, arch: str, kind: str) -> tuple[q.TorchRelease, q.Variant] | None:
    for rel in q.torch_releases(kb):
        for v in sorted(rel.variants, key=lambda v: q.parse_version(v.version or "0") or q.Version("0"), reverse=True):
            if v.kind == kind and v.arch is not None and q.runs_on(arch, v.arch, v.ptx):
                return rel, v
    return None


# ---------------------------------------------------------------------------------------------------
@check(code="BLD103", name="python-outside-build-range", severity="error",
       tables=("framework_builds", "os_info"), cause="other", component="framework-build")
def python_outside_range(ctx: Context):
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
        older = [r for r in q.torch_releases(ctx.kb) if r.python_min and r.python_max
                 and q.minor_of(r.python_min) <= have <= q.minor_of(r.python_max)]
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
@check(code="EXT104", name="host-compiler-too-new-for-nvcc", severity="error",
       tables=("compilers",), cause="toolchain", component="extension")
def host_compiler_too_new(ctx: Context):
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


# ---------------------------------------------------------------------------------------------------
@check(code="PKG105", name="numpy2-with-torch-built-for-numpy1", severity="error",
       tables=("packages",), cause="companion-mismatch", component="companion-package")
def numpy2_with_old_torch(ctx: Context):
    """What it does:
    Reports NumPy 2 installed next to a torch release whose wheels were compiled against NumPy 1.x
    (torch older than 2.3), from the knowledge base's python_rules table.

    Why is this bad?
    Extension modules compiled against NumPy 1.x cannot run with NumPy 2's ABI: importing torch prints
    "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0 as it may crash", and
    ``tensor.numpy()`` / ``torch.from_numpy`` raise "RuntimeError: Numpy is not available".

    Example:
    torch 2.1.2 with numpy 2.0.1 (a ``pip install -U numpy`` or a package requiring numpy>=2).

    Fix:
    ``pip install "numpy<2"``, or upgrade to torch 2.3 or newer, the first release built against
    NumPy 2.

    References:
    https://numpy.org/devdocs/numpy_2_0_migration_guide.html
    https://github.com/pytorch/pytorch/issues/107302
    """
    build, version = _torch(ctx)
    pkgs = _packages(ctx)
    np_row = pkgs.get("numpy")
    if version is None or np_row is None:
        yield Skip("needs both torch and numpy installed")
        return
    rules = [r for r in q.python_rules(ctx.kb, "numpy-abi") if r.get("package") == "torch"]
    if not rules:
        yield Unknown("the KB has no NumPy ABI rule")
        return
    npv = str(np_row.get("version", ""))
    for rule in rules:
        if q.spec_contains(rule["package_versions"], version) and q.spec_contains(rule["numpy"], npv):
            yield Fail(f"numpy {npv} with torch {version}, which was built against NumPy 1.x",
                       why=f"{rule['message']}: torch's NumPy bridge fails to load (tensor.numpy(), torch.from_numpy).",
                       evidence=[ev(np_row, f"numpy {npv}"), ev(build, f"torch {version}"),
                                 ev(None, f"KB python_rules {rule['id']} ({rule['source']})")],
                       fixes=[fix("install NumPy 1.x", "pip install 'numpy<2'", safe=True),
                              fix("or upgrade torch to 2.3 or newer")])
            return
    yield Pass(f"numpy {npv} works with torch {version}")


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
        if None in archs:
            return None, why
        hit = archs & set(when["gpu_arch"])
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
    for issue in q.known_issues(ctx.kb):
        hit, why = _issue_matches(ctx, issue, version, variant)
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
    yield Pass(f"no known broken combination for torch {version}")


# ---------------------------------------------------------------------------------------------------
@check(code="LIB107", name="glibc-older-than-wheel-needs", severity="error",
       tables=("framework_builds", "os_info"), cause="other", component="system-library")
def glibc_too_old(ctx: Context):
    """What it does:
    Compares the system's glibc with the one the torch release's wheels need: the manylinux platform tag
    they are built for (manylinux2014 = glibc 2.17; manylinux_2_28 = glibc 2.28, every Linux wheel since
    torch 2.7).

    Why is this bad?
    pip skips wheels whose manylinux tag the system does not satisfy and reports "No matching
    distribution found" (or silently picks an older torch); a wheel copied in anyway fails to import
    with "version `GLIBC_2.28' not found".

    Example:
    torch 2.7 on CentOS 7 / RHEL 7 (glibc 2.17) or Ubuntu 18.04 (glibc 2.27).

    Fix:
    Use a newer distribution (or a container image based on one), or a torch release built for the
    older manylinux tag (torch 2.6 or older).

    References:
    https://peps.python.org/pep-0600/
    https://github.com/pytorch/pytorch/issues/123649
    """
    build, version = _torch(ctx)
    osr = ctx.facts.first("os_info")
    glibc = osr.get("glibc") if osr is not None else None
    if version is None:
        yield Skip("torch is not installed")
        return
    if not glibc:
        yield Skip("glibc version not recorded (not a glibc system, or not read)")
        return
    release = q.torch_release(ctx.kb, version)
    if release is None or not release.manylinux:
        yield Unknown(f"the KB records no manylinux tag for torch {version}")
        return
    need = q.manylinux_glibc(ctx.kb, release.manylinux)
    if need is None:
        yield Unknown(f"the KB records no glibc for {release.manylinux}")
        return
    if q.parse_version(glibc) < q.parse_version(need):
        yield Fail(f"glibc {glibc} is older than torch {release.version}'s {release.manylinux} wheels need ({need})",
                   why=f"torch {release.version}'s Linux wheels are {release.manylinux}: they need glibc {need} or newer.",
                   evidence=[ev(osr, f"glibc {glibc}"), ev(build, f"torch {version}"),
                             ev(None, f"KB torch_releases {release.version}: {release.manylinux} ({release.source}); "
                                      f"python_rules: {release.manylinux} needs glibc {need} ({_rule_source(ctx.kb, release.manylinux)})")],
                   fixes=[fix("use a distribution or container with a newer glibc"),
                          fix("or a torch release built for manylinux2014 (2.6 or older)")])
        return
    yield Pass(f"glibc {glibc} satisfies {release.manylinux}")


def _rule_source(kb: Any, tag: str) -> str:
    for e in q.python_rules(kb, "manylinux"):
        if e.get("tag") == tag:
            return str(e.get("source", ""))
    return ""


CHECKS = [companion_for_other_torch, extension_for_other_torch, gpu_missing_from_official_wheel,
          python_outside_range, host_compiler_too_new, numpy2_with_old_torch, known_broken_combination,
          glibc_too_old]
