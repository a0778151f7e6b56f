"""DRV: the GPU kernel driver (NVIDIA, amdgpu) against what the framework and toolkits need."""
from __future__ import annotations

import re
from typing import Any, Iterable

from packaging.version import Version

from gpuvet.model import Row, Severity
from gpuvet.model.versions import find_version, major_minor

from .base import Context, Fail, Pass, Result, Skip, Unknown, check, ev, fix
from .common import (
    _amd_gpus,
    _amd_label,
    _build_cuda,
    _fmt,
    _hip_builds,
    _mmstr,
    _release_entry,
    _rocm_entry,
    _system_hip_runtime,
    _system_rocm,
    _toolkits,
)


# ---------------------------------------------------------------------------------------------------
@check(code="DRV020", name="amd-kernel-driver-too-old", severity="error",
       tables=("drivers", "runtimes"), cause="driver-too-old", component="driver", vendor="amd")
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
    ok = {mm for mm in (major_minor(t) for t in [*tested, release]) if mm}
    users: list[tuple[Row, str, tuple[int, int]]] = []
    for r in _system_rocm(facts):  # every row has a major.minor (_system_rocm, _hip_builds keep only those)
        if mm := major_minor(r.get("version")):
            users.append((r, f"system ROCm {r.get('version')} ({r.get('path') or r.source})", mm))
    for b in _hip_builds(facts):
        if mm := major_minor(b.get("hip")):
            users.append((b, f"{_amd_label(b)} (HIP {b.get('hip')})", mm))
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
@check(code="DRV026", name="amdgpu-driver-not-loaded", severity="error",
       tables=("gpu_devices",), cause="device-access", component="driver", vendor="amd")
def amdgpu_driver_not_loaded(ctx: Context) -> Iterable:
    """What it does:
    Fires when an AMD GPU is on the PCI bus (or named by a pasted report) and ROCm is installed,
    but the amdgpu kernel module is not loaded: no /sys/module/amdgpu, no KFD topology, rocminfo
    "ROCk module is NOT loaded".  In pasted text only when the text shows the module missing (rocminfo,
    rocm-smi or amd-smi say so): a text that names the GPU and a ROCm release but nothing of the driver
    says ``unknown``.

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
    errs = [e.message for e in facts.table_errors("drivers") + facts.table_errors("gpu_devices")]
    # rocminfo saying so is itself proof of the ROCm user space (rocminfo is part of it) and of the
    # missing kernel driver, also when the text names no ROCm version
    # so is rocm-smi's / amd-smi's "Driver not initialized (amdgpu not found in modules)"
    rock = [m for m in errs if re.search(r"ROCk module is NOT loaded", m, re.I)]
    smi = [m for m in errs if re.search(r"amdgpu not found in modules|AMDSMI_STATUS_DRIVER_NOT_LOADED", m)]
    if not rocm and not rock and not smi:
        yield Skip("ROCm is not installed")
        return
    if not rock and not smi and "drivers" not in facts.probed:
        # pasted text that shows a GPU and a ROCm release but nothing of the kernel driver: not shown is not
        # "not loaded" (a ComfyUI log or a bug report's prose names both on a machine that works)
        yield Unknown("whether the amdgpu kernel module is loaded is not in the text: paste `lsmod | grep amdgpu` "
                      "and `ls -l /dev/kfd`, or run gpuvet check on the machine")
        return
    user_space = f"ROCm {rocm[0].get('version')} is installed" if rocm else \
        f"the ROCm user space is installed ({'rocminfo' if rock else 'amd-smi' if 'AMDSMI' in smi[0] else 'rocm-smi'} ran)"
    yield Fail(f"{amd[0].get('name') or 'an AMD GPU'} is present and {user_space}, "
               "but the amdgpu kernel module is not loaded",
               why="Without amdgpu/KFD there is no /dev/kfd and ROCm sees no GPU.",
               evidence=[ev(amd[0], f"{amd[0].get('name')} ({amd[0].get('pci_bus') or ''})"),
                         *([ev(rocm[0], f"ROCm {rocm[0].get('version')}")] if rocm else []),
                         *[ev(None, m) for m in dict.fromkeys(errs)]],
               fixes=[fix("sudo modprobe amdgpu && dmesg | grep -i amdgpu", command="sudo modprobe amdgpu", root=True),
                      fix("Rebuild the driver for this kernel: sudo amdgpu-install --usecase=dkms, then reboot",
                          root=True, reboot=True)])


NVIDIA_PROBES = ("nvidia-driver", "nvidia-kernel-module")


def _compat_floor(kb: Any, major: int) -> tuple[Version, dict[str, Any]] | None:
    """The lowest driver that runs any CUDA ``major``.x release under minor-version compatibility."""
    best: tuple[Version, dict[str, Any]] | None = None
    for e in _toolkits(kb):
        if major_minor(e["cuda"])[0] != major:  # type: ignore[index]
            continue
        v = find_version(e.get("minor_compat_min_driver_linux"))
        if v is not None and (best is None or v < best[0]):
            best = (v, e)
    return best


def _driver_cuda_from_kb(kb: Any, driver: Version) -> tuple[int, int] | None:
    """The newest CUDA major.minor whose full requirement this driver meets; None when the driver is
    newer than every release the KB lists (it may support a CUDA the KB does not know)."""
    entries = [(floor, mm) for floor, mm in ((find_version(e["min_driver_linux"]), major_minor(e["cuda"]))
                                             for e in _toolkits(kb)) if floor is not None and mm is not None]
    if not entries:
        return None
    if driver > max(floor for floor, _ in entries):
        return None
    ok = [mm for floor, mm in entries if floor <= driver]
    return max(ok) if ok else (0, 0)


def _nvidia_drivers(ctx: Context) -> tuple[Row | None, Row | None]:
    """(user-space row, kernel-module row) of the NVIDIA driver; the user-space row that reports a
    CUDA version is preferred."""
    rows = [r for r in ctx.facts.table("drivers") if r.get("vendor") == "nvidia"]
    users = [r for r in rows if r.get("component") == "user-space"]
    users.sort(key=lambda r: 0 if r.get("cuda_version") else 1)
    kernels = [r for r in rows if r.get("component") == "kernel-module"]
    return (users[0] if users else None), (kernels[0] if kernels else None)


def _nvidia_errors(ctx: Context) -> list[Any]:
    """Failures of the NVIDIA probes, and any other recorded failure that names the NVIDIA driver's
    tools (a pasted report holding nvidia-smi's error message)."""
    return [e for e in ctx.facts.errors
            if e.probe in NVIDIA_PROBES or ("drivers" in e.tables and re.search(r"NVML|NVIDIA-SMI|nvidia", e.message))]


def _is_mismatch(message: str) -> bool:
    return bool(re.search(r"version mismatch", message, re.I))


class _Driver:
    """What the checks need to know of the NVIDIA driver, or why it cannot be known."""

    def __init__(self, ctx: Context):
        self.user, self.kernel = _nvidia_drivers(ctx)
        self.row = self.user or self.kernel
        self.version = find_version(self.row.get("version")) if self.row else None
        self.cuda: tuple[int, int] | None = major_minor(self.user.get("cuda_version")) if self.user else None
        self.cuda_from = "reported by the driver"
        self.newer_than_kb = False
        if self.cuda is None and self.version is not None:
            self.cuda = _driver_cuda_from_kb(ctx.kb, self.version)
            self.cuda_from = "from NVIDIA's release table"
            self.newer_than_kb = self.cuda is None and bool(_toolkits(ctx.kb))
        self.errors = _nvidia_errors(ctx)

    def describe(self) -> str:
        parts = []
        if self.version:
            parts.append(f"driver {self.row.get('version')}")  # type: ignore[union-attr]
        if self.cuda:
            parts.append(f"supports CUDA up to {_fmt(self.cuda)} ({self.cuda_from})")
        return ", ".join(parts) or "NVIDIA driver"


def _judge(ctx: Context, need: tuple[int, int], what: str, need_row: Row, alt_fix=None) -> Iterable[Result]:
    """Compare the driver with the CUDA ``need``ed by ``what``; shared by DRV001 and DRV002."""
    drv = _Driver(ctx)
    if drv.row is None:
        errs = [e for e in drv.errors]
        if errs:
            yield Unknown(f"the NVIDIA driver could not be read: {errs[0].message}")
        else:
            yield Skip("no NVIDIA driver on this machine")
        return
    if drv.cuda is None:
        if drv.newer_than_kb:
            yield Pass(f"{drv.describe()}: newer than every CUDA release the knowledge base lists")
            return
        yield Unknown(f"cannot tell which CUDA version driver {drv.row.get('version')} supports",
                      [ev(drv.row, drv.describe())])
        return
    evidence = [ev(need_row, f"{what} needs CUDA {_fmt(need)}"), ev(drv.row, drv.describe())]
    if drv.cuda >= need:
        yield Pass(f"{drv.describe()} >= CUDA {_fmt(need)} needed by {what}", evidence)
        return
    release = _release_entry(ctx.kb, need)
    floor = _compat_floor(ctx.kb, need[0])
    full = release.get("min_driver_linux") if release else None
    fixes = [fix(f"Install NVIDIA driver {full} or newer, the minimum NVIDIA lists for CUDA {_fmt(need)} "
                 "(then reboot)" if full else
                 f"Install an NVIDIA driver that supports CUDA {_fmt(need)} (then reboot)",
                 root=True, reboot=True)]
    alt = alt_fix(drv.cuda, drv.version) if alt_fix is not None else None
    if alt is not None:
        fixes.append(alt)
    same_major = drv.cuda[0] == need[0]
    # minor-version compatibility exists from CUDA 11 on: a major family with no floor in the KB (10.x and
    # older) has none, and a driver below the release's own minimum cannot run it
    above_floor = floor is not None and (drv.version is None or drv.version >= floor[0])
    if same_major and above_floor:
        floor_txt = f" (>= {floor[1].get('minor_compat_min_driver_linux')})" if floor else ""
        yield Fail(
            f"{what} needs CUDA {_fmt(need)} but the driver supports only CUDA {_fmt(drv.cuda)}: it runs under "
            f"CUDA minor-version compatibility{floor_txt}, without PTX JIT of newer PTX and newer-driver features",
            why=("Within one CUDA major release NVIDIA guarantees that programs built with a newer toolkit run "
                 "on an older driver of the same family, with a limited feature set: PTX built by the newer "
                 "toolkit cannot be JIT-compiled by the older driver ('the provided PTX was compiled with an "
                 "unsupported toolchain'), and APIs that need the newer driver return "
                 "cudaErrorCallRequiresNewerDriver."),
            evidence=evidence, fixes=fixes, severity=Severity.WARNING)
        return
    needs = f"{full} or newer" if full else f"a driver for CUDA {_fmt(need)}"
    if floor and need[0] > drv.cuda[0]:
        needs += f" (at least {floor[1].get('minor_compat_min_driver_linux')} under minor-version compatibility)"
    yield Fail(
        f"NVIDIA driver too old: {what} needs CUDA {_fmt(need)}, the driver supports CUDA {_fmt(drv.cuda)}; "
        f"CUDA {_fmt(need)} needs driver {needs}",
        why=("A CUDA program cannot run on a driver older than its CUDA major release (or, within the "
             "release, older than the family's minor-compatibility floor): CUDA initialisation fails with "
             "'CUDA driver version is insufficient for CUDA runtime version' or 'The NVIDIA driver on your "
             "system is too old', and frameworks report no GPU."),
        evidence=evidence, fixes=fixes)


@check(code="DRV001", name="driver-too-old-for-framework-cuda", severity="error",
       tables=("drivers", "framework_builds"), cause="driver-too-old", component="driver", vendor="nvidia")
def driver_too_old_for_framework_cuda(ctx: Context):
    """What it does:
    Compares the CUDA version each installed framework build was made with (torch's
    ``version.cuda``, jaxlib's CUDA plugin, ...) with the highest CUDA version the NVIDIA driver
    supports (NVML / nvidia-smi "CUDA Version", else derived from the driver version through the
    knowledge base's ``cuda_toolkits`` table).  A driver of an older CUDA *major* release is an error;
    one of the same major but an older minor is a warning, since the build then runs under CUDA
    minor-version compatibility.

    Why is this bad?
    A CUDA 12.4 build on a driver that supports only CUDA 11.x cannot initialise CUDA at all: torch
    prints "The NVIDIA driver on your system is too old" and ``torch.cuda.is_available()`` is False.
    Within a major release the build starts, but PTX JIT of kernels the driver does not know and APIs
    newer than the driver fail at run time (the warning case).

    Example:
    torch 2.5.1+cu124 with driver 470.82.01 (CUDA 11.4): error.  torch 2.7.0+cu128 with driver
    550.54.14 (CUDA 12.4): warning, minor-version compatibility.  torch 2.11.0+cu130 with driver
    580.159.04 (CUDA 13.0): passes.

    Fix:
    Install the driver NVIDIA lists as the minimum for the build's CUDA (named in the finding; needs
    root and a reboot), or install a framework build made for the CUDA the driver supports.

    References:
    https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#cuda-driver
    https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
    """
    builds = [r for r in ctx.facts.table("framework_builds") if _build_cuda(r.get("cuda"))]
    if not builds:
        yield Skip("no framework build made for CUDA is installed")
        return
    if not _toolkits(ctx.kb):
        yield Unknown("the knowledge base has no cuda_toolkits table")
        return
    for b in builds:
        need = _build_cuda(b.get("cuda"))[0]  # type: ignore[index]  # "13" (a major alone) needs 13.0
        name = f"{b.get('name', 'framework')} {b.get('version', '')}".strip()

        def alt(have: tuple[int, int], driver=None, b=b):
            return _older_cuda_build_fix(ctx.kb, b, have, driver)

        yield from _judge(ctx, need, f"{name} (built for CUDA {b.get('cuda')})", b, alt)  # type: ignore[arg-type]


def _older_cuda_build_fix(kb: Any, build: Row, have: tuple[int, int], driver: Version | None = None):
    """A torch build the KB records that this driver runs: CUDA <= ``have``, or of the same major
    under minor-version compatibility when the driver is above the family's floor.  This release's
    lines first, else the newest release that has one; None when the KB records none: never a guess."""
    from gpuvet.kb import query as q

    from .common import _install_cmd

    if build.get("name") != "torch":
        return None
    floor = _compat_floor(kb, have[0])
    compat_ok = floor is not None and driver is not None and driver >= floor[0]
    built = major_minor(build.get("cuda"))
    if built is not None and compat_ok and built[0] == have[0]:
        compat_ok = False  # the build itself runs under minor-version compatibility: only a fuller fit helps
    mine = q.torch_release(kb, build.get("version"))
    releases = ([mine] if mine is not None else []) + [r for r in q.torch_releases(kb) if r is not mine]
    own = q.local_tag(str(build.get("version") or ""))
    for rel in releases:
        lines = [(v, line) for v in rel.variants if v.kind == "cuda" and (line := q.minor_of(v.version))
                 and not (rel is mine and v.name == own)]  # never the build already there
        full = [(v, mm) for v, mm in lines if mm <= have]
        compat = [(v, mm) for v, mm in lines if mm > have and mm[0] == have[0] and compat_ok]
        if full:
            v = max(full, key=lambda t: t[1])[0]
            how = "which this driver runs"
        elif compat and floor is not None:  # compat holds rows only when floor is known (compat_ok)
            v = min(compat, key=lambda t: t[1])[0]
            how = (f"which this driver runs under CUDA minor-version compatibility "
                   f"(>= {floor[1].get('minor_compat_min_driver_linux')})")
        else:
            continue
        return fix(f"Or install torch {rel.latest} {v.name} (CUDA {v.version}), {how}", _install_cmd(rel, v), safe=True)
    return None


def _toolkit_rows(ctx: Context) -> list[tuple[Row, str]]:
    out: list[tuple[Row, str]] = []
    for r in ctx.facts.table("compilers"):
        if r.get("name") == "nvcc" and major_minor(r.get("cuda_version")):
            out.append((r, f"nvcc {r.get('version', r.get('cuda_version'))} (CUDA {r.get('cuda_version')})"))
    for r in ctx.facts.table("runtimes"):
        if r.get("vendor") == "nvidia" and r.get("name") == "cuda-toolkit" and major_minor(r.get("version")):
            out.append((r, f"the CUDA toolkit {r.get('version')} at {r.get('path') or r.source}"))
    return out


@check(code="DRV002", name="driver-too-old-for-cuda-toolkit", severity="error",
       tables=("drivers",), cause="driver-too-old", component="driver", vendor="nvidia")
def driver_too_old_for_cuda_toolkit(ctx: Context):
    """What it does:
    Compares the installed CUDA toolkit (``nvcc --version``'s release, the toolkit's ``version.json``)
    with the highest CUDA version the NVIDIA driver supports.  An older driver *major* release is an
    error; the same major with an older minor is a warning (minor-version compatibility).

    Why is this bad?
    Programs and extensions built with a toolkit newer than the driver fail to start ("CUDA driver
    version is insufficient for CUDA runtime version") or, within one major release, fail when the
    driver must JIT-compile PTX the newer nvcc emitted ("the provided PTX was compiled with an
    unsupported toolchain"): the default nvcc build of a kernel for an architecture without SASS in
    the binary hits exactly that.

    Example:
    nvcc 12.8 with driver 535.104.05 (CUDA 12.2): warning.  nvcc 13.0 with driver 550.54.14 (CUDA
    12.4): error.  nvcc 13.0.88 with driver 580.159.04 (CUDA 13.0): passes.

    Fix:
    Install the driver NVIDIA lists as the minimum for the toolkit (needs root and a reboot), or use
    a toolkit no newer than the CUDA version the driver reports.

    References:
    https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#cuda-driver
    https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
    """
    tk = _toolkit_rows(ctx)
    if not tk:
        bad = [t for t in ("compilers", "runtimes") if ctx.facts.status(t) == "error"]
        if bad and not any(ctx.facts.status(t) == "ok" for t in ("compilers", "runtimes")):
            yield Unknown(f"the CUDA toolkit could not be read ({', '.join(bad)} failed)")
        else:
            yield Skip("no CUDA toolkit (nvcc, version.json) found")
        return
    if not _toolkits(ctx.kb):
        yield Unknown("the knowledge base has no cuda_toolkits table")
        return
    # the newest toolkit present decides (an nvcc row and a version.json row usually agree)
    need_row, label = max(tk, key=lambda t: major_minor(t[0].get("cuda_version") or t[0].get("version")))  # type: ignore[arg-type,return-value]
    need = major_minor(need_row.get("cuda_version") or need_row.get("version"))

    def alt(have: tuple[int, int], driver=None):
        return fix(f"Or use a CUDA toolkit no newer than {_fmt(have)} (point CUDA_HOME and PATH at it)", safe=True)

    yield from _judge(ctx, need, label, need_row, alt)  # type: ignore[arg-type]


@check(code="DRV004", name="nvidia-kernel-module-differs-from-user-space-driver", severity="error",
       tables=("drivers",), cause="driver-too-old", component="driver", vendor="nvidia")
def nvidia_kernel_module_differs_from_user_space_driver(ctx: Context):
    """What it does:
    Compares the version of the loaded NVIDIA kernel module (``/proc/driver/nvidia/version``) with
    the user-space driver (NVML / nvidia-smi, libcuda), and reports nvidia-smi's "Failed to
    initialize NVML: Driver/library version mismatch".

    Why is this bad?
    The user-space driver only talks to a kernel module of exactly its own version.  After a driver
    upgrade without a reboot (or an unattended upgrade of the driver packages), the old module stays
    loaded: nvidia-smi fails with "Driver/library version mismatch" and every CUDA program fails to
    initialise ("CUDA driver initialization failed", error 803/804 "system has unsupported display
    driver / cuda driver combination").  In a container the module is the host's: user-space driver
    libraries baked into the image instead of injected by the NVIDIA Container Toolkit cause the same.

    Example:
    Kernel module 550.54.14 loaded, user-space libraries 550.90.07 installed by apt: fires.  Kernel
    module and NVML both 580.159.04: passes.

    Fix:
    Reboot, so the module of the installed driver is loaded; or unload and reload the NVIDIA modules
    when no process uses the GPU (``sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo
    modprobe nvidia``).  In a container, remove driver libraries from the image and let the NVIDIA
    Container Toolkit inject the host's.

    References:
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/index.html
    """
    user, kernel = _nvidia_drivers(ctx)
    mismatch_errors = [e for e in _nvidia_errors(ctx) if _is_mismatch(e.message)]
    fixes = [fix("Reboot so the kernel loads the module of the installed driver", "sudo reboot", root=True,
                 reboot=True),
             fix("Or, with no process using the GPU, reload the NVIDIA kernel modules",
                 "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia", root=True,
                 reboot=True)]
    why = ("The user-space driver (libcuda, NVML) only works with a kernel module of exactly its version; "
           "until they match, nvidia-smi and every CUDA program fail to initialise.")
    if user is not None and kernel is not None:
        uv, kv = find_version(user.get("version")), find_version(kernel.get("version"))
        if uv is None or kv is None:
            yield Unknown("a driver version could not be parsed")
            return
        ev_ = [ev(kernel, f"kernel module {kernel.get('version')}"), ev(user, f"user-space driver {user.get('version')}")]
        if uv != kv:
            yield Fail(f"NVIDIA kernel module {kernel.get('version')} differs from the user-space driver "
                       f"{user.get('version')}", why=why, evidence=ev_, fixes=fixes)
        else:
            yield Pass(f"kernel module and user-space driver are both {kernel.get('version')}", ev_)
        return
    if mismatch_errors:
        msg = mismatch_errors[0].message
        lib = re.search(r"NVML library version:\s*([\d.]+)", msg)
        ev_ = [ev(None, msg)]
        if kernel is not None:
            ev_.insert(0, ev(kernel, f"kernel module {kernel.get('version')}"))
        title = "NVIDIA Driver/library version mismatch"
        if kernel is not None and lib:
            title += f": kernel module {kernel.get('version')}, user-space library {lib.group(1)}"
        yield Fail(title, why=why, evidence=ev_, fixes=fixes)
        return
    if kernel is None and user is None:
        yield Skip("no NVIDIA driver on this machine")
        return
    if kernel is None:
        yield Skip("the NVIDIA kernel module version is not known (no /proc/driver/nvidia/version here)")
        return
    errs = _nvidia_errors(ctx)
    if errs:
        yield Unknown(f"the user-space driver could not be read: {errs[0].message}")
    else:
        yield Skip("the user-space NVIDIA driver version is not known")


@check(code="DRV005", name="nvidia-driver-not-responding", severity="error",
       tables=(), cause="device-access", component="driver", vendor="nvidia")
def nvidia_driver_not_responding(ctx: Context):
    """What it does:
    Reports an NVIDIA driver that is installed or an NVIDIA GPU that is present but cannot be
    reached: NVML and nvidia-smi both failing ("NVIDIA-SMI has failed because it couldn't
    communicate with the NVIDIA driver", "Failed to initialize NVML: Unknown Error", "No devices were
    found"), an NVIDIA kernel module without the user-space tools, or an NVIDIA GPU on the PCI bus
    with no NVIDIA kernel module loaded.  A driver/library version mismatch is DRV004's.

    Why is this bad?
    No CUDA program can use the GPU: frameworks report ``torch.cuda.is_available() == False`` or
    "CUDA driver initialization failed" although the GPU and the packages are there.  Common causes:
    a kernel update whose DKMS build of the module failed, Secure Boot refusing the unsigned module,
    nouveau holding the GPU, a container started without ``--gpus`` or whose device cgroup was reset
    (``systemctl daemon-reload`` on the host gives "Failed to initialize NVML: Unknown Error").

    Example:
    /proc/driver/nvidia/version present, nvidia-smi prints "NVIDIA-SMI has failed because it couldn't
    communicate with the NVIDIA driver": fires.  NVML answers with driver 580.159.04: passes.  No
    NVIDIA GPU, driver or tool at all: skipped.

    Fix:
    Load the module (``sudo modprobe nvidia``) and read ``dmesg`` for why it fails (missing DKMS
    build for the running kernel, Secure Boot, nouveau); reinstall the driver for the running kernel;
    in a container, start it with the NVIDIA runtime (``--gpus all``) or restart it after the host's
    daemon-reload.

    References:
    https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html
    https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html
    """
    errs = [e for e in _nvidia_errors(ctx) if not _is_mismatch(e.message)]
    if any(_is_mismatch(e.message) for e in _nvidia_errors(ctx)):
        yield Skip("a driver/library version mismatch (DRV004)")
        return
    user, kernel = _nvidia_drivers(ctx)
    if not errs:
        if user is not None:
            yield Pass(f"the NVIDIA driver {user.get('version')} answers", [ev(user, f"user-space driver {user.get('version')}")])
        elif kernel is not None:
            yield Pass(f"NVIDIA kernel module {kernel.get('version')} is loaded")
        else:
            yield Skip("no NVIDIA driver or GPU on this machine")
        return
    msg = errs[0].message
    evidence = [ev(None, f"{e.probe}: {e.message}") for e in errs]
    if kernel is not None:
        evidence.insert(0, ev(kernel, f"kernel module {kernel.get('version')} is loaded"))
    fixes = []
    low = msg.lower()
    if "no nvidia kernel module" in low or "couldn't communicate" in low:
        fixes.append(fix("Load the NVIDIA kernel module and read dmesg for why it does not load (DKMS build for "
                         "the running kernel, Secure Boot, nouveau)", "sudo modprobe nvidia && sudo dmesg | grep -i nvidia",
                         root=True))
        fixes.append(fix("Reinstall the NVIDIA driver for the running kernel, then reboot", root=True, reboot=True))
    elif "unknown error" in low:
        fixes.append(fix("Restart the container (its GPU device access was lost, e.g. after "
                         "`systemctl daemon-reload` on the host); start it with the NVIDIA runtime (--gpus all)",
                         root=True))
    elif "not installed" in low:
        fixes.append(fix("Install the user-space NVIDIA driver (nvidia-utils / libnvidia-compute) of the same "
                         "version as the kernel module; in a container, start it with --gpus all so the NVIDIA "
                         "Container Toolkit injects them", root=True))
    else:
        fixes.append(fix("Read `nvidia-smi` and `dmesg` for the driver's error; reinstall the driver and reboot",
                         root=True, reboot=True))
    # only the user-space side is absent (no NVML library, no nvidia-smi) while a module is loaded:
    # typically a container started without the GPU, which may be on purpose -> a warning
    user_space_absent = all(re.search(r"not installed|not found", p) for p in re.split(r";\s*", low) if p)
    if user_space_absent and "no nvidia kernel module" not in low:
        yield Fail("NVIDIA kernel module loaded but no user-space NVIDIA driver here (NVML and nvidia-smi are "
                   f"missing): {msg}",
                   why="CUDA programs here cannot reach the GPU. In a container this is what starting it without "
                       "--gpus (the NVIDIA Container Toolkit) looks like.",
                   evidence=evidence, fixes=fixes, severity=Severity.WARNING)
        return
    yield Fail(f"NVIDIA driver not responding: {msg}",
               why="With the driver unreachable no CUDA program can use the GPU.", evidence=evidence, fixes=fixes)


CHECKS = [driver_too_old_for_framework_cuda, driver_too_old_for_cuda_toolkit, nvidia_kernel_module_differs_from_user_space_driver, nvidia_driver_not_responding, amd_kernel_driver_too_old, amdgpu_driver_not_loaded]
