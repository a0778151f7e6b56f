"""Checks of the NVIDIA stack: driver vs the CUDA the framework and the toolkit need (with CUDA
minor-version compatibility), nvcc vs the framework's CUDA, kernel module vs user-space driver, and a
driver that does not answer.  Pure: facts and the knowledge base's ``cuda_toolkits`` table in,
results out.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from packaging.version import InvalidVersion, Version

from gpuvet.model import Row, Severity

from .base import Context, Fail, Pass, Result, Skip, Unknown, check, ev, fix
from .gpu import gpu_arch

NVIDIA_PROBES = ("nvidia-driver", "nvidia-kernel-module")
_NUM = re.compile(r"(\d+(?:\.\d+)*)")


# ---------------------------------------------------------------------------------------------------
# versions

def _version(text: Any) -> Version | None:
    """'580.159.04' -> Version; leading junk and suffixes ignored; None when there is no number."""
    m = _NUM.search(str(text or ""))
    if not m:
        return None
    try:
        return Version(m.group(1))
    except InvalidVersion:  # pragma: no cover - the regex only lets digits and dots through
        return None


def _mm(text: Any) -> tuple[int, int] | None:
    """CUDA major.minor of '13.0', '12.4.1', '13.0.88'; None when absent."""
    m = re.search(r"(\d+)\.(\d+)", str(text or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _build_cuda(text: Any) -> tuple[tuple[int, int], bool] | None:
    """A framework build's CUDA: ('12.4' -> ((12, 4), False)); a major alone, as jaxlib's CUDA
    plugins name it ('13' -> ((13, 0), True)); None when the build has no CUDA."""
    mm = _mm(text)
    if mm:
        return mm, False
    m = re.fullmatch(r"\s*(?:cuda\s*)?(\d{1,2})\s*", str(text or ""), re.I)
    return ((int(m.group(1)), 0), True) if m else None


def _fmt(mm: tuple[int, int]) -> str:
    return f"{mm[0]}.{mm[1]}"


# ---------------------------------------------------------------------------------------------------
# the knowledge base's cuda_toolkits table

def _toolkits(kb: Any) -> list[dict[str, Any]]:
    if kb is None:
        return []
    out = [e for e in kb.table("cuda_toolkits") if _version(e.get("cuda")) and _version(e.get("min_driver_linux"))]
    return sorted(out, key=lambda e: _version(e["cuda"]))  # type: ignore[arg-type,return-value]


def _release_entry(kb: Any, mm: tuple[int, int]) -> dict[str, Any] | None:
    """The GA release of CUDA major.minor (else its earliest listed update)."""
    same = [e for e in _toolkits(kb) if _mm(e["cuda"]) == mm]
    for e in same:
        if str(e["cuda"]) == _fmt(mm):
            return e
    return same[0] if same else None


def _compat_floor(kb: Any, major: int) -> tuple[Version, dict[str, Any]] | None:
    """The lowest driver that runs any CUDA ``major``.x release under minor-version compatibility."""
    best: tuple[Version, dict[str, Any]] | None = None
    for e in _toolkits(kb):
        if _mm(e["cuda"])[0] != major:  # type: ignore[index]
            continue
        v = _version(e.get("minor_compat_min_driver_linux"))
        if v is not None and (best is None or v < best[0]):
            best = (v, e)
    return best


def _driver_cuda_from_kb(kb: Any, driver: Version) -> tuple[int, int] | None:
    """The newest CUDA major.minor whose full requirement this driver meets; None when the driver is
    newer than every release the KB lists (it may support a CUDA the KB does not know)."""
    entries = _toolkits(kb)
    if not entries:
        return None
    if driver > max(_version(e["min_driver_linux"]) for e in entries):  # type: ignore[type-var]
        return None
    ok = [_mm(e["cuda"]) for e in entries if _version(e["min_driver_linux"]) <= driver]  # type: ignore[operator]
    return max(ok) if ok else (0, 0)  # type: ignore[type-var]


# ---------------------------------------------------------------------------------------------------
# facts

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
        self.version = _version(self.row.get("version")) if self.row else None
        self.cuda: tuple[int, int] | None = _mm(self.user.get("cuda_version")) if self.user else None
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
    if alt_fix is not None:
        fixes.append(alt_fix(drv.cuda))
    same_major = drv.cuda[0] == need[0]
    above_floor = floor is None or drv.version is None or drv.version >= floor[0]
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


# ---------------------------------------------------------------------------------------------------
# the checks

@check(code="DRV001", name="driver-too-old-for-framework-cuda", severity="error",
       tables=("drivers", "framework_builds"), cause="driver-too-old", component="driver")
def driver_too_old_for_framework(ctx: Context):
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

        def alt(have: tuple[int, int], name=b.get("name", "the framework")):
            return fix(f"Or install a {name} build made for CUDA {_fmt(have)} or older, which this driver runs",
                       safe=True)

        yield from _judge(ctx, need, f"{name} (built for CUDA {b.get('cuda')})", b, alt)  # type: ignore[arg-type]


def _toolkit_rows(ctx: Context) -> list[tuple[Row, str]]:
    out: list[tuple[Row, str]] = []
    for r in ctx.facts.table("compilers"):
        if r.get("name") == "nvcc" and _mm(r.get("cuda_version")):
            out.append((r, f"nvcc {r.get('version', r.get('cuda_version'))} (CUDA {r.get('cuda_version')})"))
    for r in ctx.facts.table("runtimes"):
        if r.get("vendor") == "nvidia" and r.get("name") == "cuda-toolkit" and _mm(r.get("version")):
            out.append((r, f"the CUDA toolkit {r.get('version')} at {r.get('path') or r.source}"))
    return out


@check(code="DRV002", name="driver-too-old-for-cuda-toolkit", severity="error",
       tables=("drivers",), cause="driver-too-old", component="driver")
def driver_too_old_for_toolkit(ctx: Context):
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
    need_row, label = max(tk, key=lambda t: _mm(t[0].get("cuda_version") or t[0].get("version")))  # type: ignore[arg-type,return-value]
    need = _mm(need_row.get("cuda_version") or need_row.get("version"))

    def alt(have: tuple[int, int]):
        return fix(f"Or use a CUDA toolkit no newer than {_fmt(have)} (point CUDA_HOME and PATH at it)", safe=True)

    yield from _judge(ctx, need, label, need_row, alt)  # type: ignore[arg-type]


@check(code="EXT003", name="nvcc-cuda-differs-from-framework", severity="error",
       tables=("compilers", "framework_builds"), cause="extension-abi", component="extension")
def nvcc_differs_from_framework(ctx: Context):
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
    nvccs = [r for r in ctx.facts.table("compilers") if r.get("name") == "nvcc" and _mm(r.get("cuda_version"))]
    builds = [r for r in ctx.facts.table("framework_builds") if _build_cuda(r.get("cuda"))]
    if not nvccs:
        yield Skip("no nvcc found")
        return
    if not builds:
        yield Skip("no framework build made for CUDA is installed")
        return
    nv = nvccs[0]
    have: tuple[int, int] = _mm(nv.get("cuda_version"))  # type: ignore[assignment]
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


@check(code="DRV004", name="nvidia-kernel-module-differs-from-user-space-driver", severity="error",
       tables=("drivers",), cause="driver-too-old", component="driver")
def kernel_module_mismatch(ctx: Context):
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
        uv, kv = _version(user.get("version")), _version(kernel.get("version"))
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
       tables=(), cause="device-access", component="driver")
def driver_not_responding(ctx: Context):
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


def _cc_of(arch: str | None) -> tuple[int, int] | None:
    """'sm_70' -> (7, 0); 'sm_90a' -> (9, 0); 'sm_120' -> (12, 0)."""
    m = re.fullmatch(r"sm_(\d+?)(\d)[a-z]?", arch or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@check(code="EXT006", name="nvcc-cannot-target-gpu", severity="error",
       tables=("compilers", "gpu_devices"), cause="gpu-arch-unsupported", component="extension")
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
    nvccs = [r for r in ctx.facts.table("compilers") if r.get("name") == "nvcc" and _mm(r.get("cuda_version"))]
    gpus = [r for r in ctx.facts.table("gpu_devices") if r.get("vendor") == "nvidia"]
    if not nvccs:
        yield Skip("no nvcc found")
        return
    if not gpus:
        yield Skip("no NVIDIA GPU on this machine")
        return
    nv = nvccs[0]
    have = _mm(nv.get("cuda_version"))
    release = _release_entry(ctx.kb, have)  # type: ignore[arg-type]
    floor = _mm(release.get("min_compute_capability")) if release else None
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


CHECKS = [driver_too_old_for_framework, driver_too_old_for_toolkit, nvcc_differs_from_framework,
          kernel_module_mismatch, driver_not_responding, nvcc_cannot_target_gpu]
