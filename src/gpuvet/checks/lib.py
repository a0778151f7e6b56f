"""LIB: system libraries (glibc, MIOpen databases)."""
from __future__ import annotations

from typing import Any, Iterable

from gpuvet.kb import query as q
from gpuvet.model import Facts, Severity

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import _torch


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


CHECKS = [miopen_db_unusable, glibc_older_than_wheel_needs]
