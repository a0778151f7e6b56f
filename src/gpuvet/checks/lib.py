"""LIB: system libraries (glibc, MIOpen databases)."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from gpuvet.kb import query as q
from gpuvet.model import Facts, Row, Severity
from gpuvet.model.arch import gfx_from_override

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import _torch
from .gpu import gpu_arch


# ---------------------------------------------------------------------------------------------------
def _miopen_in_use(facts: Facts) -> tuple[bool, list]:
    libs = [r for r in facts.table("libraries") if r.get("name") == "miopen"]
    builds = [b for b in facts.table("framework_builds") if b.get("variant") == "rocm" or b.get("hip")]
    return bool(libs or builds), (libs[:1] + builds[:1])


@check(code="LIB025", name="miopen-db-unusable", severity="warning",
       tables=("kernel_caches",), cause="kernel-cache-db", component="system-library", vendor="amd")
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
@check(code="LIB107", name="glibc-older-than-wheel-needs", severity="error",
       tables=("framework_builds", "os_info"), cause="other", component="system-library")
def glibc_older_than_wheel_needs(ctx: Context):
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
    have_v, need_v = q.parse_version(glibc), q.parse_version(need)
    if have_v is None or need_v is None:
        yield Unknown(f"cannot compare glibc {glibc!r} with {need!r}")
        return
    if have_v < need_v:
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


# -- the ROCm math libraries' run-time kernel files ------------------------------------------------
def releases_differ(a: Sequence[str], b: Sequence[str]) -> bool | None:
    """True when two tag lists name different releases of one kind (ROCm compared on major.minor,
    a library's own version on the components both give), False when a shared kind agrees, None when
    they share no kind."""
    da = dict(t.split(" ", 1) for t in a if " " in t)
    db = dict(t.split(" ", 1) for t in b if " " in t)
    shared = [k for k in da if k in db]
    if not shared:
        return None
    for k in shared:
        x, y = da[k].split("."), db[k].split(".")
        n = 2 if k == "rocm" else min(len(x), len(y))
        if x[:n] != y[:n]:
            return True
    return False


_TITLE = {"rocblas": "rocBLAS", "hipblaslt": "hipBLASLt", "miopen": "MIOpen"}
_WHAT = {"rocblas": "Tensile library", "hipblaslt": "Tensile library", "miopen": "kernel database"}


def _effective_gfx(ctx: Context, arch: str) -> tuple[str, str]:
    """(the gfx the libraries will look for, why): HSA_OVERRIDE_GFX_VERSION=10.3.0 makes it gfx1030."""
    for r in ctx.facts.table("env_vars"):
        if r.get("name") == "HSA_OVERRIDE_GFX_VERSION":
            gfx = gfx_from_override(r.get("value"))
            if gfx:
                return gfx, f"HSA_OVERRIDE_GFX_VERSION={r.get('value')}"
    return arch, ""


def _amd_archs(ctx: Context) -> list[tuple[Row, str, str]]:
    out = []
    for g in ctx.facts.table("gpu_devices"):
        if g.get("vendor") != "amd":
            continue
        arch = gpu_arch(g, ctx.kb)
        if arch and arch.startswith("gfx"):
            eff, why = _effective_gfx(ctx, arch)
            out.append((g, eff, why))
    return out


@check(code="LIB026", name="math-library-kernels-missing-for-gpu", severity="error",
       tables=("kernel_libraries", "gpu_devices"), cause="gpu-arch-unsupported", component="system-library",
       vendor="amd")
def math_library_kernels_missing_for_gpu(ctx: Context) -> Iterable:
    """What it does:
    For each ROCm math library the framework's process will load (the copy the loader model picks:
    a torch wheel's bundled ``torch/lib/librocblas.so`` or ``/opt/rocm``'s), finds the directory that
    copy reads its kernels from -- rocBLAS's and hipBLASLt's Tensile libraries
    (``ROCBLAS_TENSILE_LIBPATH`` / ``HIPBLASLT_TENSILE_LIBPATH``, else ``rocblas/library`` /
    ``hipblaslt/library`` beside the library; Debian's ``rocblas/<version>/library``), MIOpen's kernel
    databases (``MIOPEN_SYSTEM_DB_PATH``, else ``share/miopen/db``) -- and checks that its file names
    carry each AMD GPU's gfx target (``TensileLibrary_lazy_gfx90a.dat``, ``gfx942.kdb``; the gfx
    ``HSA_OVERRIDE_GFX_VERSION`` makes the GPU report, when set).  Reads one directory listing per
    library, no file contents.

    Why is this bad?
    rocBLAS aborts the process at its first GEMM ("rocBLAS error: Cannot read
    .../TensileLibrary_lazy_gfx1030.dat: No such file or directory for GPU arch : gfx1030"); hipBLASLt
    fails its GEMMs ("rocblaslt error: Cannot read ..."); MIOpen without a kernel database compiles
    every kernel at run time (minutes for a first convolution: "Missing system database file").
    A torch wheel carries the files of its own target list only.

    Example:
    Debian's ``librocblas4`` 6.4.4 (``/usr/lib/x86_64-linux-gnu/rocblas/4.4.1/library``: gfx803 ...
    gfx1102, no gfx942) on an MI300X (gfx942): error.  The same library on a gfx90a GPU: passes.

    Fix:
    Install the library build that has this GPU's kernels (AMD's ROCm packages for this gfx, or the
    framework wheel built for it), or point the override variable at that build's directory of the same
    release; for MIOpen install the kernel database package of this gfx (``miopen-hip-<gfx>kdb``).

    References:
    https://github.com/ROCm/rocBLAS/blob/develop/library/src/tensile_host.cpp
    https://github.com/ROCm/hipBLASLt/blob/develop/library/src/amd_detail/rocblaslt/src/tensile_host.cpp
    https://github.com/ROCm/MIOpen/blob/develop/src/db_path.cpp.in
    https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_rocm.sh
    """
    rows = ctx.facts.table("kernel_libraries")
    if not rows:
        yield Skip("no rocBLAS, hipBLASLt or MIOpen copy is loaded (no ROCm framework build)")
        return
    gpus = _amd_archs(ctx)
    if not gpus:
        yield Skip("no AMD GPU with a known gfx target")
        return
    ok = []
    for r in rows:
        lib = str(r.get("library"))
        title, what = _TITLE.get(lib, lib), _WHAT.get(lib, "kernel files")
        d = r.get("dir")
        archs = set(r.get("archs") or [])
        sev = None if lib == "rocblas" else Severity.WARNING
        via = r.get("via") or "default"
        where = f"{d} ({via if via != 'default' else 'read by ' + str(r.get('library_path'))})"
        for g, gfx, why in gpus:
            gname = f"GPU {g.get('index', '')} {g.get('name', '')} ({gfx}{', ' + why if why else ''})".replace("  ", " ")
            if r.get("exists") is False:
                yield Fail(f"{title}'s {what} directory {d} does not exist: no kernels for {gname}",
                           why=_missing_why(lib, d, gfx),
                           evidence=[ev(r, f"{title} {r.get('library_path')} reads {where}: missing"), ev(g, gname)],
                           fixes=_kernel_fixes(ctx, r, gfx), severity=sev)
                continue
            if not archs and r.get("files"):
                yield Unknown(f"{title}'s {what} {d}: its {r.get('files')} file names name no gfx target")
                continue
            if gfx in archs:
                ok.append(f"{title} {gfx} ({d})")
                continue
            listed = list(r.get("archs") or [])
            shown = ", ".join(listed[:12]) + (" ..." if len(listed) > 12 else "")
            yield Fail(f"{title} will read {d}, which has no {what} files for {gname}: only {shown or 'none'}",
                       why=_missing_why(lib, d, gfx, bool(r.get("generic"))),
                       evidence=[ev(r, f"{title} {r.get('library_path')} reads {where}; gfx targets there: {shown}"),
                                 ev(g, gname)],
                       fixes=_kernel_fixes(ctx, r, gfx), severity=sev)
    if ok:
        yield Pass("kernels for this GPU found: " + "; ".join(ok))


def _missing_why(lib: str, d: object, gfx: str, generic: bool = False) -> str:
    if lib == "rocblas" and generic:
        return (f"rocBLAS loads {d}/TensileLibrary.dat, which has no solutions or code objects for {gfx}: its first "
                "GEMM fails ('Cannot read ... for GPU arch', 'hipErrorNoBinaryForGpu') or aborts.")
    if lib == "rocblas":
        return (f"rocBLAS aborts the process at its first GEMM: 'rocBLAS error: Cannot read {d}/TensileLibrary_lazy_{gfx}.dat: "
                f"No such file or directory for GPU arch : {gfx}'.")
    if lib == "hipblaslt":
        return (f"GEMMs routed to hipBLASLt fail: 'rocblaslt error: Cannot read {d}/TensileLibrary_lazy_{gfx}.dat'; "
                "torch uses hipBLASLt for this GPU when it supports it.")
    return ("MIOpen finds no kernel database for this GPU and compiles every kernel at run time "
            "('Missing system database file ... Performance may degrade'): minutes per new convolution.")


def _kernel_fixes(ctx: Context, r: Row, gfx: str) -> list:
    var = r.get("variable") or ""
    out = []
    if r.get("via") not in ("", "default", None) and r.get("default_dir"):
        out.append(fix(f"{var} overrides the library's own directory {r.get('default_dir')}: unset it", f"unset {var}",
                       safe=True))
    lib = r.get("library")
    if lib == "miopen":
        out.append(fix(f"Install MIOpen's kernel database for {gfx} (AMD's miopen-hip-{gfx}kdb package of this ROCm "
                       "release)", root=True))
    else:
        out.append(fix(f"Install a {_TITLE.get(str(lib), lib)} build with {gfx} kernels of the same release as "
                       f"{r.get('library_path')} (AMD's ROCm packages, or the framework wheel built for {gfx})",
                       safe=False))
    return out


@check(code="LIB027", name="math-library-kernels-from-other-release", severity="error",
       tables=("kernel_libraries",), cause="runtime-mismatch", component="system-library", vendor="amd")
def math_library_kernels_from_other_release(ctx: Context) -> Iterable:
    """What it does:
    Compares the release of the directory each loaded rocBLAS / hipBLASLt / MIOpen copy reads its
    kernels from (an ``/opt/rocm-X.Y.Z`` path, the framework wheel that bundles it, Debian's
    ``rocblas/<version>/library``, the library file installed beside it) with the release of the
    library itself.  Fires when they differ -- usually an override variable
    (``ROCBLAS_TENSILE_LIBPATH``, ``HIPBLASLT_TENSILE_LIBPATH``, ``MIOPEN_SYSTEM_DB_PATH``) left
    pointing at another ROCm install.

    Why is this bad?
    A Tensile library is generated for one rocBLAS / hipBLASLt release: another release's
    ``TensileLibrary*.dat`` and code objects fail to load ("rocBLAS error: Could not load ...
    TensileLibrary", "Could not initialize Tensile library"), pick kernels with other arguments, or
    crash; another MIOpen's kernel database holds binaries its loader rejects or mis-runs.

    Example:
    torch's bundled rocBLAS of ROCm 6.2 with ``ROCBLAS_TENSILE_LIBPATH=/opt/rocm-6.1.0/lib/rocblas/library``:
    fires.  Debian's ``librocblas.so.4.4`` with ``ROCBLAS_TENSILE_LIBPATH`` at Debian's
    ``rocblas/2.47.0/library`` (librocblas0, ROCm 5.5): fires.  No override: passes.

    Fix:
    Unset the override variable (each library finds its own directory), or point it at the directory
    of the same release as the loaded library.

    References:
    https://github.com/ROCm/rocBLAS/blob/develop/library/src/tensile_host.cpp
    https://github.com/ROCm/hipBLASLt/blob/develop/library/src/amd_detail/rocblaslt/src/tensile_host.cpp
    https://github.com/ROCm/MIOpen/blob/develop/src/db_path.cpp.in
    """
    rows = ctx.facts.table("kernel_libraries")
    if not rows:
        yield Skip("no rocBLAS, hipBLASLt or MIOpen copy is loaded (no ROCm framework build)")
        return
    compared = []
    for r in rows:
        lib = str(r.get("library"))
        title = _TITLE.get(lib, lib)
        if r.get("exists") is False:
            continue
        differ = releases_differ(r.get("library_release") or [], r.get("dir_release") or [])
        if differ is None:
            continue
        if differ is False:
            compared.append(f"{title} ({', '.join(r.get('dir_release') or [])})")
            continue
        via = r.get("via") or "default"
        var = r.get("variable") or ""
        fixes = ([fix(f"Unset {var}: {title} then reads its own {r.get('default_dir')}", f"unset {var}", safe=True)]
                 if via != "default" else
                 [fix(f"Reinstall {title} so its library and kernel files come from one release", safe=False)])
        yield Fail(f"{title} {r.get('library_path')} ({', '.join(r.get('library_release') or [])}) will read "
                   f"kernels of another release from {r.get('dir')} ({', '.join(r.get('dir_release') or [])})"
                   + (f", set by {var}" if via != "default" else ""),
                   why=(f"{title}'s kernel files are generated for one release of the library: another release's "
                        "fail to load, select kernels with other arguments, or crash."),
                   evidence=[ev(r, f"{title} {r.get('library_path')}: {', '.join(r.get('library_release') or [])}"),
                             ev(r, f"{r.get('dir')} ({via}): {', '.join(r.get('dir_release') or [])}")],
                   fixes=fixes, severity=Severity.WARNING if lib == "miopen" else None)
    if compared:
        yield Pass("kernel directories match their libraries' release: " + "; ".join(compared))
    else:
        yield Skip("no kernel directory with a known release to compare")


CHECKS = [miopen_db_unusable, glibc_older_than_wheel_needs, math_library_kernels_missing_for_gpu,
          math_library_kernels_from_other_release]
