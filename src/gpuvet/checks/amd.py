"""Checks: the AMD ROCm stack -- amdgpu/ROCk kernel driver, ROCm release and HIP runtime, the
framework's HIP, hipcc/hipconfig, HSA_OVERRIDE_GFX_VERSION, MIOpen databases, several ROCm trees.

Codes 020-039.  Rules that need to know whether an AMD GPU is present say ``unknown`` when the
probes that would tell (rocminfo, KFD topology) failed, and ``skipped`` when there is none.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from gpuvet.model.arch import gfx_from_override
from gpuvet.model import Facts, Row, Severity

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .gpu import gpu_arch

# ---------------------------------------------------------------------------------------------------
# helpers


def _mm(text: Any) -> tuple[int, int] | None:
    """(major, minor) of '5.7.31921-d1770ee1b', '6.1.0', '5.2.21153-0', '6.2.x'."""
    if text is None:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)", str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _mmstr(t: tuple[int, int]) -> str:
    return f"{t[0]}.{t[1]}"




def _amd_gpus(facts: Facts) -> list[Row]:
    return [r for r in facts.table("gpu_devices") if r.get("vendor") == "amd"]


def _nvidia_gpus(facts: Facts) -> list[Row]:
    return [r for r in facts.table("gpu_devices") if r.get("vendor") == "nvidia"]


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
            and r.get("origin") in (None, "", "system", "pasted") and _mm(r.get("version"))]


def _system_hip_runtime(facts: Facts) -> list[Row]:
    return [r for r in facts.table("runtimes") if r.get("vendor") == "amd" and r.get("name") == "hip-runtime"
            and r.get("origin") in (None, "", "system", "pasted") and _mm(r.get("version"))]


def _hip_builds(facts: Facts) -> list[Row]:
    return [b for b in facts.table("framework_builds") if b.get("hip") and _mm(b.get("hip"))]


def _label(b: Row) -> str:
    return f"{b.get('name') or 'framework'} {b.get('version') or ''}".strip()


def _loaded_hip(facts: Facts) -> Row | None:
    sel = [r for r in facts.table("libraries") if r.get("name") == "amdhip64" and r.get("selected")]
    return sel[0] if sel else None


def _rocm_entry(kb: Any, release: str) -> dict | None:
    """The KB entry of a ROCm release: exact match, else the newest entry of the same major.minor."""
    if kb is None:
        return None
    entries = kb.table("rocm_releases")
    for e in entries:
        if str(e.get("rocm")) == release:
            return e
    mm = _mm(release)
    same = [e for e in entries if _mm(e.get("rocm")) == mm]
    return same[0] if same else None


def _default_rocm(facts: Facts) -> list[Row]:
    rows = _system_rocm(facts)
    default = [r for r in rows if (r.get("path") or "").rstrip("/") == "/opt/rocm"]
    return default or rows


# ---------------------------------------------------------------------------------------------------
@check(code="DRV020", name="amd-kernel-driver-too-old", severity="error",
       tables=("drivers", "runtimes"), cause="driver-too-old", component="driver")
def amd_kernel_driver_too_old(ctx: Context) -> Iterable:
    """What it does:
    Finds the ROCm release whose amdgpu kernel-mode driver (KMD, the "ROCk module") is loaded --
    from the amdgpu-dkms package whose driver version matches /sys/module/amdgpu/version (the
    package version carries the ROCm build, e.g. 6.8.5.60200 = ROCm 6.2.0; else the knowledge base's
    record of the driver version each release installs, e.g. 6.10.5 = ROCm 6.3) -- and checks that the
    ROCm user space installed on the system and the HIP the framework was built with are among the
    user-space releases AMD tested with that KMD (knowledge base ``rocm_releases``: AMD's
    KMD/user-space matrix, "+/- 2 releases").  User space newer than the tested range is an error;
    older, a warning.  rocminfo's "HSA Error: Incompatible kernel and userspace ... Upgrade amdgpu"
    is an error whatever the versions.

    Why is this bad?
    The user-space runtime (ROCr/HSA, HIP) talks to the KMD through ioctls whose features move with
    each release.  A runtime newer than the driver it was tested with can fail to initialise
    ("hipErrorNoDevice", "HSA_STATUS_ERROR_OUT_OF_RESOURCES"), hang, or lose features such as
    partition modes, and the failure looks like a framework bug.

    Example:
    amdgpu-dkms 1:6.8.5.60200 (ROCm 6.2.0's KMD, tested with 6.0.x-6.3.x) under ROCm 6.2.4 and torch
    +rocm6.2: passes.  ROCm 5.2.3's KMD (tested with 5.3.0, 5.4.0) under a torch built with HIP 5.7:
    fires.

    Fix:
    Install the amdgpu-dkms driver of a ROCm release whose tested user space includes the one you
    run (``amdgpu-install``), then reboot; or use a framework build for the older ROCm.

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/user-kernel-space-compat-matrix.html
    https://github.com/ROCm/ROCm/blob/develop/docs/compatibility/compatibility-matrix.rst
    """
    facts = ctx.facts
    incompatible = [e for e in facts.errors if re.search(r"Incompatible kernel and userspace", e.message)]
    if incompatible:
        yield Fail("the HSA runtime reports the amdgpu kernel driver as incompatible with the ROCm user space "
                   "and disabled the GPU",
                   why="The ROCm runtime needs kernel-driver features the loaded amdgpu (often the "
                       "distribution kernel's own) does not have.",
                   evidence=[ev(None, e.message) for e in incompatible[:1]],
                   fixes=[fix("Install AMD's amdgpu-dkms driver for this ROCm release (amdgpu-install "
                              "--usecase=dkms) or a newer kernel, then reboot", root=True, reboot=True)])
        return
    amd_drv = [r for r in facts.table("drivers") if r.get("vendor") == "amd"]
    loaded = [r for r in amd_drv if r.get("flavor") != "dkms-package"]
    packages = [r for r in amd_drv if r.get("flavor") == "dkms-package"]
    if not loaded:
        yield Skip("no amdgpu kernel driver loaded")
        return
    drv = next((r for r in loaded if r.get("version")), loaded[0])
    if drv.get("flavor") == "inbox":
        yield Unknown(f"the kernel's own amdgpu driver is loaded ({drv.get('version') or 'inbox'}); AMD's "
                      "tested KMD/user-space combinations cover its amdgpu-dkms driver only",
                      [ev(drv, f"amdgpu {drv.get('version') or ''} (inbox)")])
        return
    dver = str(drv.get("version") or "")
    if not dver:
        yield Unknown("the amdgpu driver is loaded but its version was not printed "
                      "(no /sys/module/amdgpu/version)", [ev(drv, "ROCk module is loaded")])
        return
    release = None
    pkg_row = None
    for p in packages:
        m = re.match(r"(\d+\.\d+\.\d+)\.(\d{5})$", str(p.get("version") or ""))
        if m and (not dver or m.group(1) == dver):
            n = int(m.group(2))
            release, pkg_row = f"{n // 10000}.{(n // 100) % 100}.{n % 100}", p
            break
    kb_driver = None
    if release is None and ctx.kb is not None:
        for e in ctx.kb.table("rocm_releases"):
            if str(e.get("amdgpu_dkms") or "") == dver:
                release, kb_driver = str(e["rocm"]), e
                break
    if release is None:
        yield Unknown(f"amdgpu driver {dver}: the ROCm release it belongs to is not known (no matching "
                      "amdgpu-dkms package record, not in the knowledge base)", [ev(drv, f"amdgpu {dver}")])
        return
    entry = _rocm_entry(ctx.kb, release)
    tested = (entry or {}).get("kernel_driver", {}).get("tested_user_space") if entry else None
    if not tested:
        yield Unknown(f"the knowledge base has no KMD/user-space matrix for ROCm {release}")
        return
    ok = {_mm(t) for t in tested if _mm(t)} | {_mm(release)}
    users: list[tuple[Row, str, tuple[int, int]]] = []
    for r in _system_rocm(facts):
        users.append((r, f"system ROCm {r.get('version')} ({r.get('path') or r.source})", _mm(r.get("version"))))
    for b in _hip_builds(facts):
        users.append((b, f"{_label(b)} (HIP {b.get('hip')})", _mm(b.get("hip"))))
    if not users:
        yield Skip("no ROCm user space or HIP framework build to compare with the driver")
        return
    base = [ev(drv, f"amdgpu {dver} loaded"),
            ev(pkg_row, f"amdgpu-dkms {pkg_row.get('version')} = ROCm {release} KMD") if pkg_row is not None else
            ev(None, f"amdgpu {dver} is the driver of ROCm {release} ({(kb_driver or {}).get('also', [''])[-1]})"),
            ev(None, f"ROCm {release} KMD tested with user space {', '.join(tested)}")]
    hi, lo = max(ok), min(ok)
    for src, text, mm in users:
        if mm in ok:
            continue
        if mm > hi:
            yield Fail(f"the amdgpu driver (ROCm {release} KMD) is older than {text}",
                       why=f"AMD tested the ROCm {release} kernel driver with user space {', '.join(tested)} only.",
                       evidence=[*base, ev(src, text)],
                       fixes=[fix(f"Install the amdgpu-dkms driver of ROCm {_mmstr(mm)} or newer "
                                  "(amdgpu-install --usecase=dkms) and reboot", root=True, reboot=True)])
        elif mm < lo:
            yield Fail(f"{text} is older than the user space AMD tested with the loaded ROCm {release} driver",
                       why=f"AMD tested the ROCm {release} kernel driver with user space {', '.join(tested)} only.",
                       evidence=[*base, ev(src, text)], severity=Severity.WARNING,
                       fixes=[fix(f"Upgrade the ROCm user space to {', '.join(tested)}", root=True)])
    yield Pass(f"ROCm {release} kernel driver is tested with the user space in use", base)


# ---------------------------------------------------------------------------------------------------
@check(code="RTM021", name="framework-hip-differs-from-rocm", severity="error",
       tables=("framework_builds", "runtimes"), cause="runtime-mismatch", component="framework-build")
def framework_hip_differs_from_rocm(ctx: Context) -> Iterable:
    """What it does:
    Compares the HIP version a framework was built with (torch's ``version.hip``, e.g. 5.7.31921)
    with the machine's ROCm release (``/opt/rocm`` or the distribution's packages; the HIP runtime
    library when no release is recorded).  Another major.minor is an error.  The finding says which
    HIP runtime the framework actually loads: pip ROCm wheels carry their own libamdhip64 in
    torch/lib, builds against the system ROCm load /opt/rocm/lib's.

    Why is this bad?
    HIP has no compatibility across minor releases.  A framework built for HIP 5.7 on a machine with
    ROCm 5.6.1 either loads the system's 5.6 runtime (missing symbols, "hipErrorInvalidImage",
    wrong results) or its bundled 5.7 runtime next to a 5.6 user space and kernel driver that nobody
    tested together, and every extension compiled with the system hipcc targets 5.6.  It is the
    classic silent mismatch: nothing prints a warning.

    Example:
    torch 2.2.0.dev+rocm5.7 (HIP 5.7.31921) on a ROCm 5.6.1 machine: fires.  torch 2.5.1+rocm6.2
    (HIP 6.2.41133) with ROCm 6.2.4 in /opt/rocm: passes.

    Fix:
    Install the framework build for the installed ROCm release (``pip install torch --index-url
    https://download.pytorch.org/whl/rocmX.Y`` with X.Y the ROCm release), or upgrade ROCm (and its
    amdgpu-dkms driver) to the framework's HIP release.

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html
    https://pytorch.org/get-started/locally/
    """
    facts = ctx.facts
    builds = _hip_builds(facts)
    if not builds:
        yield Skip("no framework built with HIP")
        return
    system = _default_rocm(facts) or _system_hip_runtime(facts)
    if not system:
        yield Skip("no system ROCm release or HIP runtime found to compare with")
        return
    lib = _loaded_hip(facts)
    for b in builds:
        want = _mm(b.get("hip"))
        same = [r for r in system if _mm(r.get("version")) == want]
        if same:
            yield Pass(f"{_label(b)} (HIP {b.get('hip')}) matches system ROCm {same[0].get('version')}",
                       [ev(b, f"HIP {b.get('hip')}"), ev(same[0], f"{same[0].get('name')} {same[0].get('version')}")])
            continue
        r = system[0]
        if lib is not None and lib.get("origin") in ("framework-bundled", "pip", "conda"):
            loads = (f"it loads its own {lib.get('origin')} HIP runtime {lib.get('version') or ''} "
                     f"({lib.get('path')}), not the system's").replace("  ", " ")
        elif lib is not None:
            loads = f"it loads the system HIP runtime {lib.get('path')} ({lib.get('version') or '?'})"
        else:
            loads = "which HIP runtime it loads is not known"
        yield Fail(f"{_label(b)} is built for HIP {b.get('hip')} but the system ROCm is "
                   f"{r.get('version')}: {loads}",
                   why="HIP has no compatibility across minor releases; the framework, the system runtime, "
                       "the kernel driver and hipcc-built extensions must agree on the ROCm release.",
                   evidence=[ev(b, f"{_label(b)}: HIP {b.get('hip')}"),
                             ev(r, f"system {r.get('name')} {r.get('version')} {r.get('path') or ''}".strip()),
                             *([ev(lib, f"loaded libamdhip64: {lib.get('path')}")] if lib else [])],
                   fixes=[fix(f"Install the {b.get('name') or 'framework'} build for ROCm "
                              f"{_mmstr(_mm(r.get('version')))}: pip install --force-reinstall "
                              f"{b.get('name') or 'torch'} --index-url https://download.pytorch.org/whl/rocm"
                              f"{_mmstr(_mm(r.get('version')))}", safe=True),
                          fix(f"Or upgrade ROCm (and amdgpu-dkms) to {_mmstr(want)}", root=True, reboot=True)])


# ---------------------------------------------------------------------------------------------------
def _hip_compilers(facts: Facts) -> list[Row]:
    return [r for r in facts.table("compilers") if r.get("name") in ("hipcc", "hipconfig") and _mm(r.get("version"))]


def _prefix(path: str | None) -> str:
    p = (path or "").rstrip("/")
    if "/bin/" in p:
        return p.rsplit("/bin/", 1)[0]
    return p


@check(code="RTM022", name="hipcc-hip-differs-from-runtime", severity="error",
       tables=("compilers", "runtimes"), cause="toolchain", component="runtime")
def hipcc_hip_differs_from_runtime(ctx: Context) -> Iterable:
    """What it does:
    Compares the HIP version hipcc / hipconfig report (``hipcc --version``, ``hipconfig --full``)
    with the HIP runtime library installed beside them (libamdhip64.so.X.Y.Z of the same prefix:
    /usr for distribution packages, /opt/rocm-X.Y.Z for AMD's), and hipcc with hipconfig.  Another
    major.minor is an error.

    Why is this bad?
    Code compiled by hipcc uses the headers and device libraries of its HIP release; run against a
    runtime of another release it fails at load time ("hipErrorNoBinaryForGpu", undefined symbols)
    or behaves differently.  It happens when PATH finds one ROCm tree's hipcc and the loader
    another tree's libamdhip64, e.g. after a partial upgrade.

    Example:
    Debian 12: hipcc 5.2.21153-0 with /usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153: passes.
    /opt/rocm-6.1.0/bin/hipcc (6.1.40091) on PATH with only /opt/rocm-5.7.1/lib/libamdhip64.so.5.7:
    fires.

    Fix:
    Put the bin directory of the ROCm tree whose runtime you use first on PATH (or set ROCM_PATH /
    HIP_PATH to it), or remove the stale tree.

    References:
    https://rocm.docs.amd.com/projects/HIP/en/latest/install/install.html
    https://rocm.docs.amd.com/projects/HIPCC/en/latest/env.html
    """
    facts = ctx.facts
    comps = _hip_compilers(facts)
    if not comps:
        yield Skip("hipcc / hipconfig not installed")
        return
    rts = _system_hip_runtime(facts)
    hipcc = [c for c in comps if c.get("name") == "hipcc"]
    hipconfig = [c for c in comps if c.get("name") == "hipconfig"]
    if hipcc and hipconfig and _mm(hipcc[0].get("version")) != _mm(hipconfig[0].get("version")):
        yield Fail(f"hipcc reports HIP {hipcc[0].get('version')} but hipconfig {hipconfig[0].get('version')}",
                   why="hipcc and hipconfig come from different ROCm trees: builds mix headers and flags of "
                       "two releases.",
                   evidence=[ev(hipcc[0], f"hipcc {hipcc[0].get('version')} {hipcc[0].get('path') or ''}"),
                             ev(hipconfig[0], f"hipconfig {hipconfig[0].get('version')} {hipconfig[0].get('path') or ''}")],
                   fixes=[fix("Put one ROCm tree's bin directory on PATH", safe=True)])
    if not rts:
        yield Skip("no system HIP runtime library (libamdhip64) found")
        return
    for c in hipcc or hipconfig:
        pre = _prefix(c.get("path"))
        near = [r for r in rts if pre and (r.get("path") or "").startswith(pre + "/")] or rts
        want = _mm(c.get("version"))
        if any(_mm(r.get("version")) == want for r in near):
            r = next(r for r in near if _mm(r.get("version")) == want)
            yield Pass(f"{c.get('name')} HIP {c.get('version')} matches {r.get('path')}",
                       [ev(c, f"{c.get('name')} {c.get('version')}"), ev(r, f"libamdhip64 {r.get('version')}")])
            continue
        r = near[0]
        yield Fail(f"{c.get('name')} reports HIP {c.get('version')} but the HIP runtime is {r.get('version')} "
                   f"({r.get('path')})",
                   why="Programs and extensions built by this hipcc will run against another HIP release.",
                   evidence=[ev(c, f"{c.get('name')} {c.get('version')} {c.get('path') or ''}".strip()),
                             ev(r, f"libamdhip64 {r.get('version')} {r.get('path')}")],
                   fixes=[fix(f"Use the hipcc of the ROCm tree that holds {r.get('path')} (PATH / ROCM_PATH)",
                              safe=True)])


# ---------------------------------------------------------------------------------------------------
@check(code="RTM023", name="hipcc-wrong-platform", severity="error",
       tables=("compilers",), cause="toolchain", component="runtime")
def hipcc_wrong_platform(ctx: Context) -> Iterable:
    """What it does:
    Checks the platform hipcc / hipconfig resolve to (HIP_PLATFORM: amd or nvidia) against the GPUs
    in the machine: nvidia on a machine with an AMD GPU, or amd on a machine whose only GPUs are
    NVIDIA ones, fires.  Says ``unknown`` when whether an AMD GPU is present could not be told
    (rocminfo failed, no KFD topology).

    Why is this bad?
    With HIP_PLATFORM unset, hipconfig picks amd only when it finds clang++ (HIP_CLANG_PATH or
    PATH) and otherwise nvidia when nvcc is on PATH.  A ROCm machine that also has CUDA's nvcc
    but no clang++ on PATH (Debian's hipcc package without clang) then compiles every HIP
    extension with nvcc for CUDA: builds fail with nvcc errors, or produce CUDA binaries that never
    run on the AMD GPU.

    Example:
    Debian 12 with hipcc 5.2 and CUDA 13's nvcc: hipconfig prints HIP_PLATFORM nvidia; with an
    MI210 present this fires, with no AMD GPU (and no way to tell) it says unknown.  hipcc on
    /opt/rocm-6.1.1 (AMD clang) with a Radeon 780M: passes.

    Fix:
    export HIP_PLATFORM=amd (and HIP_CLANG_PATH=/opt/rocm/llvm/bin, or install the ROCm clang), or
    export HIP_PLATFORM=nvidia on an NVIDIA-only machine.

    References:
    https://rocm.docs.amd.com/projects/HIPCC/en/latest/env.html
    https://github.com/ROCm/HIPCC/blob/develop/bin/hipvars.pm
    """
    facts = ctx.facts
    comps = [c for c in _hip_compilers(facts) if c.get("platform") in ("amd", "nvidia")]
    if not comps:
        yield Skip("hipcc / hipconfig not installed (or their platform is not known)")
        return
    state, reason = amd_gpu_state(facts)
    nvidia = _nvidia_gpus(facts)
    amd = _amd_gpus(facts)
    env = {r.get("name"): r.get("value") for r in facts.table("env_vars")}
    for c in comps:
        plat = c.get("platform")
        evid = [ev(c, f"{c.get('name')} {c.get('version')}: platform {plat}"
                       + (f" (CUDA {c.get('cuda_version')})" if c.get("cuda_version") else ""))]
        if env.get("HIP_PLATFORM"):
            evid.append(ev(None, f"HIP_PLATFORM={env['HIP_PLATFORM']}"))
        if plat == "nvidia":
            if state == "yes":
                yield Fail(f"{c.get('name')} resolves to the NVIDIA platform on a machine with an AMD GPU "
                           f"({amd[0].get('name') or amd[0].get('arch')})",
                           why="HIP code is compiled with nvcc for CUDA instead of for the AMD GPU.",
                           evidence=[*evid, ev(amd[0], f"AMD GPU {amd[0].get('name') or ''} {amd[0].get('arch') or ''}")],
                           fixes=[fix("export HIP_PLATFORM=amd HIP_CLANG_PATH=/opt/rocm/llvm/bin",
                                      command="export HIP_PLATFORM=amd", safe=True)])
            elif state == "unknown":
                yield Unknown(f"{c.get('name')} resolves to nvidia; whether an AMD GPU is present is not known: {reason}",
                              evid)
            elif nvidia:
                yield Pass(f"{c.get('name')} resolves to nvidia on an NVIDIA machine", evid)
            else:
                yield Skip("no GPU found")
        else:
            if state == "yes":
                yield Pass(f"{c.get('name')} resolves to amd on a machine with an AMD GPU", evid)
            elif state == "unknown":
                yield Unknown(f"whether an AMD GPU is present is not known: {reason}", evid)
            elif nvidia:
                yield Fail(f"{c.get('name')} resolves to the AMD platform but the machine's GPUs are NVIDIA "
                           f"({nvidia[0].get('name')})",
                           why="HIP code is compiled for AMD GPUs that this machine does not have.",
                           evidence=[*evid, ev(nvidia[0], f"NVIDIA GPU {nvidia[0].get('name')}")],
                           fixes=[fix("export HIP_PLATFORM=nvidia", command="export HIP_PLATFORM=nvidia", safe=True)])
            else:
                yield Skip("no GPU found")


# ---------------------------------------------------------------------------------------------------
def _natively_supported(kb: Any, arch: str, facts: Facts) -> tuple[bool | None, str]:
    """Is ``arch`` among the officially supported targets of the installed ROCm release (or, when
    none is known, of any ROCm release in the KB)?"""
    if kb is None:
        return None, ""
    rels = [r.get("version") for r in _default_rocm(facts)]
    for rel in rels:
        e = _rocm_entry(kb, str(rel))
        if e and e.get("gfx_targets"):
            return arch in e["gfx_targets"], f"ROCm {e['rocm']}"
    any_targets = [e for e in kb.table("rocm_releases") if e.get("gfx_targets")]
    if not any_targets:
        return None, ""
    hit = [e for e in any_targets if arch in e["gfx_targets"]]
    return bool(hit), (f"ROCm {hit[0]['rocm']}" if hit else "any ROCm release in the knowledge base")


@check(code="ENV024", name="hsa-override-gfx-version", severity="warning",
       tables=("env_vars",), cause="gpu-arch-unsupported", component="config-env")
def hsa_override_gfx_version(ctx: Context) -> Iterable:
    """What it does:
    When HSA_OVERRIDE_GFX_VERSION (or HSA_OVERRIDE_GFX_VERSION_<n>) is set, says to what target it
    makes the runtime report the GPU (10.3.0 -> gfx1030, 9.0.10 -> gfx90a), and checks it: a
    malformed value is an error; a value the knowledge base (``hsa_overrides``, from public threads)
    records as failing for this GPU's real target is an error; an override of another GPU
    generation (major version) is an error; an override on a GPU the installed ROCm release
    supports natively is a warning; a value recorded as working passes.  The GPU's own target comes
    from the KFD topology (rocminfo reports the target after the override) or from its model name.

    Why is this bad?
    The override makes ROCm load code objects built for another target.  Within one family (RDNA2
    gfx1031 -> gfx1030) that is a known workaround; across families, or to a target the framework
    has no kernels for either, it crashes ("invalid device function", "hipErrorNoBinaryForGpu",
    segfaults) or computes wrong results.  Left set on a supported GPU (an MI210, a 7900 XTX) it
    only hides the real target and breaks the next framework upgrade.

    Example:
    HSA_OVERRIDE_GFX_VERSION=10.3.0 on an RX 6700 XT (gfx1031): passes (known to work).
    HSA_OVERRIDE_GFX_VERSION=11.0.2 on a Radeon 780M (gfx1103) with torch +rocm6.1: fires.
    HSA_OVERRIDE_GFX_VERSION=11.0.0 on an MI210 (gfx90a): fires.  HSA_OVERRIDE_GFX_VERSION=gfx1030:
    fires (malformed).

    Fix:
    Unset HSA_OVERRIDE_GFX_VERSION on natively supported GPUs; otherwise set it to the known-working
    value of the same family (X.Y.Z of the closest supported target), or install a framework build
    that carries kernels for the GPU's own target.

    References:
    https://github.com/ollama/ollama/blob/main/docs/gpu.md#overrides
    https://github.com/ROCm/ROCm/issues/2353
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
    """
    facts = ctx.facts
    env = {r.get("name"): r for r in facts.table("env_vars")}
    names = sorted(n for n in env if n == "HSA_OVERRIDE_GFX_VERSION" or re.fullmatch(r"HSA_OVERRIDE_GFX_VERSION_\d+", n or ""))
    if not names:
        yield Pass("HSA_OVERRIDE_GFX_VERSION is not set")
        return
    state, reason = amd_gpu_state(facts)
    gpus = _amd_gpus(facts)
    overrides = ctx.kb.table("hsa_overrides") if ctx.kb is not None else []
    for n in names:
        r = env[n]
        value = str(r.get("value") or "")
        eff = gfx_from_override(value)
        e_set = ev(r, f"{n}={value}")
        if eff is None:
            yield Fail(f"{n}={value!r} is malformed: the runtime expects X.Y.Z (e.g. 10.3.0 for gfx1030)",
                       why="A malformed override is ignored or misread by the HSA runtime.",
                       evidence=[e_set], severity=Severity.ERROR,
                       fixes=[fix(f"unset {n}, or set it to X.Y.Z", command=f"unset {n}", safe=True)])
            continue
        targets = gpus
        m = re.fullmatch(r"HSA_OVERRIDE_GFX_VERSION_(\d+)", n)
        if m:
            targets = [g for g in gpus if g.get("index") == int(m.group(1))] or gpus
        if not targets:
            if state == "unknown":
                yield Unknown(f"{n}={value} makes the GPU report {eff}; the GPU's own target is not known: {reason}",
                              [e_set])
            else:
                yield Fail(f"{n}={value} is set but no AMD GPU was found",
                           evidence=[e_set], severity=Severity.INFO,
                           fixes=[fix(f"unset {n}", command=f"unset {n}", safe=True)])
            continue
        for g in targets:
            real = gpu_arch(g, ctx.kb)
            from_kfd = "/kfd/" in g.source
            if not from_kfd:
                # rocminfo / amd-smi report the target *after* the override: prefer the model's own
                by_name = gpu_arch(Row(g.table, {**g.values, "arch": None, "compute_capability": None}, g.source),
                                   ctx.kb)
                real = by_name or real
            gname = g.get("name") or real or "GPU"
            e_gpu = ev(g, f"{gname}: {real or 'target unknown'}")
            if not real:
                yield Unknown(f"{n}={value} ({eff}); the real target of {gname} is not known", [e_set, e_gpu])
                continue
            if real == eff:
                if not from_kfd and not by_name:
                    yield Unknown(f"{n}={value}: {gname} reports {eff}, which may be the override itself; its own "
                                  "target is not known", [e_set, e_gpu])
                else:
                    yield Pass(f"{n}={value} names {gname}'s own target {real}", [e_set, e_gpu])
                continue
            known = [o for o in overrides if o.get("real") == real and str(o.get("override")) == value.strip()]
            if known and not known[0].get("works"):
                yield Fail(f"{n}={value} on {gname} ({real}) makes it report {eff}, which is known to fail",
                           why=str(known[0].get("note") or ""), evidence=[e_set, e_gpu, ev(None, str(known[0].get("source")))],
                           severity=Severity.ERROR,
                           fixes=[fix(f"unset {n}, or use a value known to work for {real}", safe=True)])
                continue
            if known and known[0].get("works"):
                yield Pass(f"{n}={value} on {gname} ({real} -> {eff}) is a known working override",
                           [e_set, e_gpu, ev(None, str(known[0].get("source")))])
                continue
            rm = re.match(r"gfx(\d+?)([0-9a-f]{2})$", real)
            em = re.match(r"gfx(\d+?)([0-9a-f]{2})$", eff)
            if rm and em and rm.group(1) != em.group(1):
                yield Fail(f"{n}={value} makes {gname} ({real}) report {eff}, another GPU generation",
                           why="Code objects of another generation do not run on this GPU.",
                           evidence=[e_set, e_gpu], severity=Severity.ERROR,
                           fixes=[fix(f"unset {n}", command=f"unset {n}", safe=True)])
                continue
            native, where = _natively_supported(ctx.kb, real, facts)
            if native:
                yield Fail(f"{n}={value} is set on {gname} ({real}), which {where} supports natively",
                           why="The override hides the GPU's real target and loads code built for another one.",
                           evidence=[e_set, e_gpu],
                           fixes=[fix(f"unset {n}", command=f"unset {n}", safe=True)])
                continue
            yield Unknown(f"{n}={value} makes {gname} ({real}) report {eff}; the knowledge base has no record "
                          "of this override", [e_set, e_gpu])


# ---------------------------------------------------------------------------------------------------
def _miopen_in_use(facts: Facts) -> tuple[bool, list]:
    libs = [r for r in facts.table("libraries") if r.get("name") == "miopen"]
    builds = [b for b in facts.table("framework_builds") if b.get("variant") == "rocm" or b.get("hip")]
    return bool(libs or builds), (libs[:1] + builds[:1])


@check(code="LIB025", name="miopen-db-unusable", severity="warning",
       tables=("kernel_caches",), cause="kernel-cache-db", component="system-library")
def miopen_db_unusable(ctx: Context) -> Iterable:
    """What it does:
    When MIOpen is in use (a MIOpen library, or a ROCm framework build), checks its three
    directories: the system performance database (/opt/rocm/share/miopen/db) exists; the user
    database (MIOPEN_USER_DB_PATH, default ~/.config/miopen/) and the kernel cache
    (MIOPEN_CUSTOM_CACHE_DIR, default ~/.cache/miopen/) are writable or can be created.

    Why is this bad?
    Without a writable user database and cache MIOpen recompiles and re-tunes kernels in every
    process (minutes per convolution shape) and may fail with "MIOpen Error: ... Unable to open
    database" / sqlite "attempt to write a readonly database" (common in containers with a
    read-only home or a shared HOME); without the system database it falls back to slow search.

    Example:
    HOME read-only in a container, ~/.cache/miopen absent: fires.  Default directories under a
    writable home: passes.

    Fix:
    Point MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR at a writable directory (e.g. under /tmp or
    a volume), or make the defaults writable; reinstall the MIOpen package for a missing system db.

    References:
    https://rocm.docs.amd.com/projects/MIOpen/en/latest/conceptual/perfdb.html
    https://rocm.docs.amd.com/projects/MIOpen/en/latest/conceptual/cache.html
    """
    facts = ctx.facts
    in_use, why_rows = _miopen_in_use(facts)
    if not in_use:
        yield Skip("MIOpen is not in use (no MIOpen library, no ROCm framework build)")
        return
    rows = [r for r in facts.table("kernel_caches") if str(r.get("name") or "").startswith("miopen-")]
    if not rows:
        yield Unknown("MIOpen's directories were not examined")
        return
    for r in rows:
        name, path = r.get("name"), r.get("path")
        if name == "miopen-system-db":
            if r.get("exists") is False:
                yield Fail(f"MIOpen's system performance database {path} is missing",
                           why="MIOpen falls back to searching for kernels at run time.",
                           evidence=[ev(r, f"{path}: missing")],
                           fixes=[fix("Reinstall the MIOpen package of this ROCm release (miopen-hip)", root=True)])
        elif r.get("writable") is False:
            var = "MIOPEN_USER_DB_PATH" if name == "miopen-user-db" else "MIOPEN_CUSTOM_CACHE_DIR"
            yield Fail(f"MIOpen {'user database' if name == 'miopen-user-db' else 'kernel cache'} {path} is not "
                       "writable" + ("" if r.get("exists") else " (and cannot be created)"),
                       why="MIOpen cannot store tuned or compiled kernels and redoes the work in every process, "
                           "or fails to open its database.",
                       evidence=[ev(r, f"{path}: exists={r.get('exists')}, writable=False")],
                       fixes=[fix(f"export {var}=/tmp/$USER/miopen-{'db' if name == 'miopen-user-db' else 'cache'}",
                                  command=f"export {var}=/tmp/$USER/miopen", safe=True)],
                       severity=Severity.ERROR)
    yield Pass("MIOpen's databases and cache are usable", [ev(r, f"{r.get('path')}: ok") for r in rows])


# ---------------------------------------------------------------------------------------------------
@check(code="DRV026", name="amdgpu-driver-not-loaded", severity="error",
       tables=("gpu_devices",), cause="device-access", component="driver")
def amdgpu_driver_not_loaded(ctx: Context) -> Iterable:
    """What it does:
    Fires when an AMD GPU is on the PCI bus (or named by a pasted report) and ROCm is installed,
    but the amdgpu kernel module is not loaded: no /sys/module/amdgpu, no KFD topology, rocminfo
    "ROCk module is NOT loaded".

    Why is this bad?
    Without the amdgpu/KFD driver there is no /dev/kfd: every ROCm program reports no GPU
    ("hipErrorNoDevice", torch.cuda.is_available() False) although the hardware and the ROCm user
    space are fine.  Usual causes: amdgpu-dkms failed to build for a new kernel, the module is
    blacklisted (nomodeset), or Secure Boot refused the unsigned DKMS module.

    Example:
    An MI210 in lspci, ROCm 6.2.3 installed, rocm-smi "Driver not initialized (amdgpu not found in
    modules)": fires.  An MI300X with amdgpu 6.10.5 loaded: passes.

    Fix:
    sudo modprobe amdgpu, and read dmesg; rebuild the driver for the running kernel
    (sudo dkms autoinstall or amdgpu-install --usecase=dkms), enrol the DKMS key for Secure Boot,
    then reboot.

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/post-install.html
    https://github.com/ROCm/ROCm/issues/4098
    """
    facts = ctx.facts
    amd = _amd_gpus(facts)
    if not amd:
        yield Skip("no AMD GPU found")
        return
    loaded = [r for r in facts.table("drivers") if r.get("vendor") == "amd" and r.get("flavor") != "dkms-package"]
    kfd = [g for g in amd if "/kfd/" in g.source or g.get("arch")]
    rocm = _system_rocm(facts) or _system_hip_runtime(facts)
    if loaded or kfd:
        yield Pass("the amdgpu kernel driver is loaded",
                   [ev(loaded[0] if loaded else kfd[0], "amdgpu loaded" if loaded else "KFD topology present")])
        return
    if not rocm:
        yield Skip("ROCm is not installed")
        return
    errs = [e.message for e in facts.table_errors("drivers") + facts.table_errors("gpu_devices")]
    yield Fail(f"{amd[0].get('name') or 'an AMD GPU'} is present and ROCm {rocm[0].get('version')} is installed, "
               "but the amdgpu kernel module is not loaded",
               why="Without amdgpu/KFD there is no /dev/kfd and ROCm sees no GPU.",
               evidence=[ev(amd[0], f"{amd[0].get('name')} ({amd[0].get('pci_bus') or ''})"),
                         ev(rocm[0], f"ROCm {rocm[0].get('version')}"),
                         *[ev(None, m) for m in dict.fromkeys(errs)]],
               fixes=[fix("sudo modprobe amdgpu && dmesg | grep -i amdgpu", command="sudo modprobe amdgpu", root=True),
                      fix("Rebuild the driver for this kernel: sudo amdgpu-install --usecase=dkms, then reboot",
                          root=True, reboot=True)])


# ---------------------------------------------------------------------------------------------------
@check(code="RTM027", name="rocm-default-tree-mismatch", severity="error",
       tables=("runtimes",), cause="runtime-mismatch", component="runtime")
def rocm_default_tree_mismatch(ctx: Context) -> Iterable:
    """What it does:
    With several ROCm trees installed (/opt/rocm-6.1.0, /opt/rocm-6.2.4, ...), checks that /opt/rocm
    (what ROCM_PATH defaults to, what ldconfig and hipcc use) points at the release the framework
    was built for.  Fires when another installed tree has the framework's HIP release but
    /opt/rocm points elsewhere, or when ROCM_PATH names a tree of another release than /opt/rocm.

    Why is this bad?
    The framework built against the system ROCm, the extensions built with /opt/rocm/bin/hipcc and
    libraries found through /etc/ld.so.conf.d/rocm.conf then come from different releases;
    "undefined symbol" and "hipErrorInvalidImage" follow, and which tree is used depends on the
    shell's environment.

    Example:
    /opt/rocm-6.2.4 and /opt/rocm-6.1.0 installed, /opt/rocm -> rocm-6.1.0, torch +rocm6.2: fires.
    One tree only: skipped.

    Fix:
    Point /opt/rocm at the framework's release (sudo update-alternatives --config rocm) or set
    ROCM_PATH and LD_LIBRARY_PATH to that tree; remove trees no longer used.

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/install-methods/multi-version-install.html
    """
    facts = ctx.facts
    rocm = _system_rocm(facts)
    trees = {(r.get("path") or "").rstrip("/"): r for r in rocm if (r.get("path") or "").startswith("/opt/rocm")}
    default = trees.get("/opt/rocm")
    versioned = {p: r for p, r in trees.items() if p != "/opt/rocm"}
    if len(versioned) < 2 or default is None:
        yield Skip("fewer than two ROCm trees installed (or no /opt/rocm)")
        return
    env = {r.get("name"): r.get("value") for r in facts.table("env_vars")}
    dmm = _mm(default.get("version"))
    evid = [ev(default, f"/opt/rocm: ROCm {default.get('version')}"),
            *[ev(r, f"{p}: ROCm {r.get('version')}") for p, r in sorted(versioned.items())]]
    fired = False
    rp = (env.get("ROCM_PATH") or "").rstrip("/")
    if rp and rp in versioned and _mm(versioned[rp].get("version")) != dmm:
        fired = True
        yield Fail(f"ROCM_PATH={rp} (ROCm {versioned[rp].get('version')}) but /opt/rocm is ROCm {default.get('version')}",
                   why="Tools that honour ROCM_PATH and those that use /opt/rocm (ldconfig, default hipcc) "
                       "use different releases.",
                   evidence=[*evid, ev(None, f"ROCM_PATH={rp}")],
                   fixes=[fix("Point /opt/rocm at the same release (update-alternatives --config rocm) or unset "
                              "ROCM_PATH", root=True)])
    lib = _loaded_hip(facts)
    bundled = lib is not None and lib.get("origin") in ("framework-bundled", "pip", "conda")
    for b in _hip_builds(facts):
        want = _mm(b.get("hip"))
        if want == dmm:
            continue
        match = [p for p, r in versioned.items() if _mm(r.get("version")) == want]
        if match:
            fired = True
            yield Fail(f"{_label(b)} is built for HIP {b.get('hip')} and {match[0]} is installed, but /opt/rocm "
                       f"points at ROCm {default.get('version')}",
                       why=("The framework uses its bundled HIP runtime, but extensions and tools built with "
                            "/opt/rocm use another release." if bundled else
                            "The framework and everything found through /opt/rocm load different ROCm releases."),
                       evidence=[*evid, ev(b, f"{_label(b)}: HIP {b.get('hip')}")],
                       fixes=[fix(f"sudo ln -sfn {match[0]} /opt/rocm (or update-alternatives --config rocm)",
                                  root=True),
                              fix(f"export ROCM_PATH={match[0]} LD_LIBRARY_PATH={match[0]}/lib:$LD_LIBRARY_PATH",
                                  safe=True)])
    if not fired:
        yield Pass(f"/opt/rocm (ROCm {default.get('version')}) agrees with ROCM_PATH and the framework", evid)


CHECKS = [amd_kernel_driver_too_old, framework_hip_differs_from_rocm, hipcc_hip_differs_from_runtime,
          hipcc_wrong_platform, hsa_override_gfx_version, miopen_db_unusable, amdgpu_driver_not_loaded,
          rocm_default_tree_mismatch]
