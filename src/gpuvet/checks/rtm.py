"""RTM: the GPU runtime (HIP / ROCm trees, hipcc) against the framework build."""
from __future__ import annotations

from typing import Iterable

from gpuvet.model import Facts, Row
from gpuvet.model.versions import major_minor

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import (
    _amd_gpus,
    _amd_label,
    _default_rocm,
    _hip_builds,
    _mmstr,
    _system_hip_runtime,
    _system_rocm,
    amd_gpu_state,
)


def _nvidia_gpus(facts: Facts) -> list[Row]:
    return [r for r in facts.table("gpu_devices") if r.get("vendor") == "nvidia"]


def _loaded_hip(facts: Facts) -> Row | None:
    sel = [r for r in facts.table("libraries") if r.get("name") == "amdhip64" and r.get("selected")]
    return sel[0] if sel else None


# ---------------------------------------------------------------------------------------------------
@check(code="RTM021", name="framework-hip-differs-from-rocm", severity="error",
       tables=("framework_builds", "runtimes"), cause="runtime-mismatch", component="framework-build", vendor="amd")
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
    amdgpu-dkms driver) to the framework's HIP release.  When the system is the newer of the two, the
    build for the system's release is the fix; installing the older ROCm beside it is the last resort.

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
        want = major_minor(b.get("hip"))
        if want is None:  # _hip_builds keeps only builds with a HIP major.minor
            continue
        same = [r for r in system if major_minor(r.get("version")) == want]
        if same:
            yield Pass(f"{_amd_label(b)} (HIP {b.get('hip')}) matches system ROCm {same[0].get('version')}",
                       [ev(b, f"HIP {b.get('hip')}"), ev(same[0], f"{same[0].get('name')} {same[0].get('version')}")])
            continue
        r = system[0]
        if lib is not None and lib.get("origin") in ("framework-bundled", "pip", "conda"):
            loads = (f"it loads its own {lib.get('origin')} HIP runtime {lib.get('version') or ''} "
                     f"({lib.get('path')}), not the system's").replace("  ", " ")
        elif lib is not None and not lib.get("path"):  # a pasted torch.__config__.show(): the version, no file
            loads = f"it runs on HIP runtime {lib.get('version') or '?'} (torch.__config__.show())"
        elif lib is not None:
            loads = f"it loads the system HIP runtime {lib.get('path')} ({lib.get('version') or '?'})"
        else:
            loads = "which HIP runtime it loads is not known"
        have = major_minor(r.get("version"))
        newer = have is not None and have > want  # the system is ahead of the build: never "upgrade" it backwards
        other = (fix(f"Or install ROCm {_mmstr(want)} beside {r.get('version')} and point /opt/rocm at it (a downgrade "
                     f"of the system; the build for {_mmstr(have)} above is the better fix)", root=True) if newer and have
                 else fix(f"Or upgrade ROCm (and amdgpu-dkms) to {_mmstr(want)}", root=True, reboot=True))
        yield Fail(f"{_amd_label(b)} is built for HIP {b.get('hip')} but the system ROCm is "
                   f"{r.get('version')}: {'the system is newer than the build; ' if newer else ''}{loads}",
                   why="HIP has no compatibility across minor releases; the framework, the system runtime, "
                       "the kernel driver and hipcc-built extensions must agree on the ROCm release.",
                   evidence=[ev(b, f"{_amd_label(b)}: HIP {b.get('hip')}"),
                             ev(r, f"system {r.get('name')} {r.get('version')} {r.get('path') or ''}".strip()),
                             *([ev(lib, f"loaded libamdhip64: {lib.get('path')}")] if lib else [])],
                   fixes=[_stable_build_fix(ctx, b, r), other])


def _stable_build_fix(ctx: Context, b: Row, r: Row):
    """The stable framework release built for the installed ROCm, installed into a fresh environment (the
    current one keeps working for comparison; nothing of the mismatched build is mixed in)."""
    from gpuvet.kb import query as q

    have = major_minor(r.get("version"))  # the system rows checked here always have one
    mm = _mmstr(have) if have is not None else str(r.get("version") or "")
    name = b.get("name") or "torch"
    env = f"~/venv-{name}-rocm{mm}"
    found = q.newest_with_rocm(ctx.kb, mm) if ctx.kb is not None and name == "torch" else None
    if found is not None:
        rel, var = found
        pins = [f"torch=={rel.latest}"]
        if rel.companions.get("torchvision"):
            pins.append(f"torchvision=={rel.companions['torchvision']}")
        cmd = (f"python3 -m venv {env} && {env}/bin/pip install {' '.join(pins)} --index-url {var.index_url}")
        what = f"the stable torch {rel.latest} build for ROCm {var.version}"
    else:
        cmd = (f"python3 -m venv {env} && {env}/bin/pip install {name} "
               f"--index-url https://download.pytorch.org/whl/rocm{mm}")
        what = f"the stable {name} build for ROCm {mm}"
    if b.get("channel") in ("nightly", "prerelease"):
        what += f" instead of the {b.get('channel')} build"
    return fix(f"Install {what} in a fresh virtual environment: {cmd}", command=cmd, safe=True)


# ---------------------------------------------------------------------------------------------------
def _hip_compilers(facts: Facts) -> list[Row]:
    return [r for r in facts.table("compilers") if r.get("name") in ("hipcc", "hipconfig") and major_minor(r.get("version"))]


def _prefix(path: str | None) -> str:
    p = (path or "").rstrip("/")
    if "/bin/" in p:
        return p.rsplit("/bin/", 1)[0]
    return p


@check(code="RTM022", name="hipcc-hip-differs-from-runtime", severity="error",
       tables=("compilers", "runtimes"), cause="toolchain", component="runtime", vendor="amd")
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
    if hipcc and hipconfig and major_minor(hipcc[0].get("version")) != major_minor(hipconfig[0].get("version")):
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
        want = major_minor(c.get("version"))
        if any(major_minor(r.get("version")) == want for r in near):
            r = next(r for r in near if major_minor(r.get("version")) == want)
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
       tables=("compilers",), cause="toolchain", component="runtime", vendor="amd")
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
@check(code="RTM027", name="rocm-default-tree-mismatch", severity="error",
       tables=("runtimes",), cause="runtime-mismatch", component="runtime", vendor="amd")
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
    dmm = major_minor(default.get("version"))
    evid = [ev(default, f"/opt/rocm: ROCm {default.get('version')}"),
            *[ev(r, f"{p}: ROCm {r.get('version')}") for p, r in sorted(versioned.items())]]
    fired = False
    rp = (env.get("ROCM_PATH") or "").rstrip("/")
    if rp and rp in versioned and major_minor(versioned[rp].get("version")) != dmm:
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
        want = major_minor(b.get("hip"))
        if want == dmm:
            continue
        match = [p for p, r in versioned.items() if major_minor(r.get("version")) == want]
        if match:
            fired = True
            yield Fail(f"{_amd_label(b)} is built for HIP {b.get('hip')} and {match[0]} is installed, but /opt/rocm "
                       f"points at ROCm {default.get('version')}",
                       why=("The framework uses its bundled HIP runtime, but extensions and tools built with "
                            "/opt/rocm use another release." if bundled else
                            "The framework and everything found through /opt/rocm load different ROCm releases."),
                       evidence=[*evid, ev(b, f"{_amd_label(b)}: HIP {b.get('hip')}")],
                       fixes=[fix(f"sudo ln -sfn {match[0]} /opt/rocm (or update-alternatives --config rocm)",
                                  root=True),
                              fix(f"export ROCM_PATH={match[0]} LD_LIBRARY_PATH={match[0]}/lib:$LD_LIBRARY_PATH",
                                  safe=True)])
    if not fired:
        yield Pass(f"/opt/rocm (ROCm {default.get('version')}) agrees with ROCM_PATH and the framework", evid)



# ---------------------------------------------------------------------------------------------------
@check(code="RTM028", name="hsa-api-version-read-as-rocm-release", severity="info",
       tables=("runtimes",), cause="other", component="runtime", vendor="amd")
def hsa_api_version_read_as_rocm_release(ctx: Context) -> Iterable:
    """What it does:
    Notes, in pasted text, when rocminfo's "Runtime Version" (the HSA runtime's API version, 1.1 under every ROCm 5.x,
    1.14-1.18 later) is seen next to a ROCm release or a HIP version (hipcc, hipconfig, /opt/rocm-X.Y.Z,
    the framework's HIP), that the two numbers are not comparable.

    Why is this bad?
    Scripts and CI gates that read ``rocminfo | grep "Runtime Version"`` as the ROCm release compare
    an HSA API version with a ROCm or HIP release: "1.1" never equals hipcc's "5.6", so the gate fails
    on a healthy machine, or passes a broken one when someone loosens it.  The ROCm release is in
    /opt/rocm/.info/version (or the rocm-core package); the HIP version is hipcc's ``HIP version``.

    Example:
    rocminfo "Runtime Version: 1.1" with hipcc "HIP version: 5.6.31062": noted.  rocminfo alone: passes.

    Fix:
    Read the ROCm release from /opt/rocm/.info/version (``cat /opt/rocm/.info/version``) or
    ``dpkg -s rocm-core``, and HIP's from ``hipconfig --version``; compare those with the framework's
    ``torch.version.hip``.

    References:
    https://rocm.docs.amd.com/projects/rocminfo/en/latest/
    https://rocm.docs.amd.com/en/latest/how-to/system-debugging.html
    """
    facts = ctx.facts
    if not facts.origin.startswith("pasted"):
        yield Skip("only pasted text puts the two numbers side by side for a reader to compare")
        return
    hsa = [r for r in facts.table("runtimes") if r.get("vendor") == "amd" and r.get("name") == "hsa-runtime"
           and major_minor(r.get("version"))]
    if not hsa:
        yield Skip("no rocminfo Runtime Version in the facts")
        return
    others = ([(r, f"ROCm {r.get('version')}") for r in _system_rocm(facts)]
              + [(c, f"{c.get('name')} HIP {c.get('version')}") for c in facts.table("compilers")
                 if c.get("name") in ("hipcc", "hipconfig") and major_minor(c.get("version"))]
              + [(b, f"{_amd_label(b)} HIP {b.get('hip')}") for b in _hip_builds(facts)]
              # `hipconfig --version`'s answer (a HIP runtime row read from the paste) is the same HIP version
              + [(r, f"hipconfig HIP {r.get('version')}") for r in facts.table("runtimes")
                 if r.get("vendor") == "amd" and r.get("name") == "hip-runtime" and major_minor(r.get("version"))])
    h = hsa[0]
    others = [(r, label) for r, label in others if major_minor(label.split()[-1]) != major_minor(h.get("version"))]
    if not others:
        yield Pass(f"rocminfo Runtime Version {h.get('version')} (HSA API) seen alone")
        return
    r, label = others[0]
    yield Fail(f"rocminfo's \"Runtime Version {h.get('version')}\" is the HSA runtime API version, not the ROCm "
               f"release: it is not comparable with {label}",
               why="A check that compares the two (a CI gate on rocminfo's Runtime Version against hipcc's HIP "
                   "version) can never pass; the ROCm release is /opt/rocm/.info/version.",
               evidence=[ev(h, f"rocminfo Runtime Version {h.get('version')} (HSA API)"), ev(r, label)],
               fixes=[fix("Compare /opt/rocm/.info/version (or hipconfig --version) with torch.version.hip "
                          "instead of rocminfo's Runtime Version", command="cat /opt/rocm/.info/version",
                          safe=True)])


CHECKS = [framework_hip_differs_from_rocm, hipcc_hip_differs_from_runtime, hipcc_wrong_platform, rocm_default_tree_mismatch,
          hsa_api_version_read_as_rocm_release]
