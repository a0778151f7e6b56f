"""``gpuvet recommend``: the newest torch build that works with this driver and GPU, and how to install it.

Reads the machine's facts (live probes) or a described stack (the same facts ``compat`` builds) and
walks the KB's torch_releases newest first.  A wheel line qualifies when every GPU of its vendor has
code in its official target list, its CUDA is no newer than the NVIDIA driver supports, the Python
(when known) is in the release's range, and the glibc (when known) satisfies its manylinux tag.  A
line whose arch list the KB does not record is never guessed into a recommendation: it is listed
among the skipped, with why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuvet.checks.gpu import gpu_arch
from gpuvet.kb import query as q
from gpuvet.model import Facts, Report, ReportExtra


@dataclass
class Machine:
    """What a recommendation depends on, as read from facts."""

    gpus: list[tuple[str, str, str]] = field(default_factory=list)  # (vendor, arch, name)
    unknown_gpus: list[str] = field(default_factory=list)
    driver: str | None = None  # NVIDIA driver version
    driver_cuda: str | None = None  # the newest CUDA it supports
    python: str | None = None
    glibc: str | None = None
    torch: str | None = None  # the installed build, if any

    @property
    def vendor(self) -> str:
        vendors = {v for v, _, _ in self.gpus}
        return "nvidia" if "nvidia" in vendors else "amd" if "amd" in vendors else ""

    def to_dict(self) -> dict[str, Any]:
        return {"gpus": [{"vendor": v, "arch": a, "name": n} for v, a, n in self.gpus],
                "unknown_gpus": self.unknown_gpus, "driver": self.driver, "driver_cuda": self.driver_cuda,
                "python": self.python, "glibc": self.glibc, "installed_torch": self.torch}


def machine_of(facts: Facts, kb: Any) -> Machine:
    m = Machine()
    for g in facts.table("gpu_devices"):
        arch = gpu_arch(g, kb)
        name = str(g.get("name") or arch or "GPU")
        vendor = g.get("vendor") or ("nvidia" if (arch or "").startswith("sm_") else "amd" if arch else "")
        if arch and vendor:
            m.gpus.append((vendor, arch, name))
        else:
            m.unknown_gpus.append(name)
    drv = facts.first("drivers", vendor="nvidia", component="user-space") or \
        facts.first("drivers", vendor="nvidia", component="kernel-module")
    if drv is not None and drv.get("version"):
        m.driver = str(drv.get("version"))
        m.driver_cuda = str(drv.get("cuda_version") or "") or q.cuda_for_driver(kb, m.driver)
    osr = facts.first("os_info")
    if osr is not None:
        m.python = osr.get("python") or None
        m.glibc = osr.get("glibc") or None
    t = facts.first("framework_builds", name="torch")
    if t is not None:
        m.torch = str(t.get("version"))
    return m


def _variant_order(v: q.Variant) -> tuple:
    return (q.parse_version(v.version or "0") or q.Version("0"),)


def judge(release: q.TorchRelease, variant: q.Variant, m: Machine, kb: Any) -> list[str]:
    """Why this wheel line does not fit the machine (empty: it fits)."""
    why: list[str] = []
    want_kind = {"nvidia": "cuda", "amd": "rocm"}.get(m.vendor, "cpu")
    if variant.kind != want_kind:
        return [f"{variant.kind} line on a {m.vendor or 'GPU-less'} machine"]
    if variant.kind in ("cuda", "rocm"):
        if variant.arch is None:
            why.append("the KB has no verified arch list for this line")
        else:
            for vendor, arch, name in m.gpus:
                if vendor == m.vendor and not q.runs_on(arch, variant.arch, variant.ptx):
                    why.append(f"no code for {name} ({arch})")
    if variant.kind == "cuda":
        line_cuda, driver_cuda = q.minor_of(variant.version), q.minor_of(m.driver_cuda)
        if line_cuda is not None and driver_cuda is not None:
            if line_cuda > driver_cuda and minor_compat(variant, m, kb) is None:
                need = q.min_driver_for_cuda(kb, variant.version)
                why.append(f"needs CUDA {variant.version}" + (f" (driver >= {need['min_driver_linux']})" if need else "")
                           + f"; driver {m.driver} supports CUDA {m.driver_cuda}")
    if m.python and release.python_min and release.python_max:
        py, lo, hi = q.minor_of(m.python), q.minor_of(release.python_min), q.minor_of(release.python_max)
        if py is not None and lo is not None and hi is not None and not lo <= py <= hi:
            why.append(f"Python {m.python} is outside {release.python_min}..{release.python_max}")
    elif m.python:
        why.append("the KB records no Python range for this release")
    if m.glibc and release.manylinux:
        glibc = q.manylinux_glibc(kb, release.manylinux)
        have_v, need_v = q.parse_version(m.glibc), q.parse_version(glibc)
        if have_v is not None and need_v is not None and have_v < need_v:
            why.append(f"glibc {m.glibc} < {glibc} ({release.manylinux})")
    return why


def minor_compat(variant: q.Variant, m: Machine, kb: Any) -> str | None:
    """When a CUDA line newer than the driver's CUDA still runs under CUDA minor-version compatibility
    (same major, driver at or above the family's floor in the KB's cuda_toolkits), the note saying so."""
    have, need = q.minor_of(m.driver_cuda), q.minor_of(variant.version)
    drv = q.parse_version(m.driver or "")
    if have is None or need is None or drv is None or need <= have or need[0] != have[0]:
        return None
    floors: list[tuple[q.Version, str]] = []
    for e in (kb.table("cuda_toolkits") if kb is not None else []):
        family = q.minor_of(e.get("cuda"))
        text = str(e.get("minor_compat_min_driver_linux") or "")
        floor = q.parse_version(text) if text else None
        if family is not None and family[0] == need[0] and floor is not None:
            floors.append((floor, text))
    if not floors or drv < min(floors)[0]:
        return None
    return (f"CUDA {variant.version} on a CUDA {m.driver_cuda} driver runs under CUDA minor-version compatibility "
            f"(driver >= {min(floors)[1]}): no JIT of newer PTX, no features that need a newer driver")


def install_command(release: q.TorchRelease, variant: q.Variant) -> str:
    pkgs = [f"torch=={release.latest}"]
    for name in ("torchvision", "torchaudio"):
        if release.companions.get(name):
            pkgs.append(f"{name}=={release.companions[name]}")
    return "pip install " + " ".join(pkgs) + f" --index-url {variant.index_url}"


def recommend(facts: Facts, kb: Any, limit: int = 5) -> ReportExtra:
    """The newest fitting build, other fitting builds (newest per release), and the newer ones skipped."""
    m = machine_of(facts, kb)
    notes: list[str] = []
    if m.unknown_gpus:
        notes.append(f"architecture unknown for: {', '.join(m.unknown_gpus)} (not judged)")
    if m.vendor == "nvidia" and not m.driver_cuda:
        notes.append("the NVIDIA driver (or the CUDA it supports) is not known: the driver requirement is "
                     "stated with each build instead of checked")
    if {v for v, _, _ in m.gpus} == {"nvidia", "amd"}:
        notes.append("both NVIDIA and AMD GPUs: recommending for the NVIDIA GPUs")
    if m.vendor == "amd":
        notes.append("ROCm wheels bundle their user space; the amdgpu kernel driver must still support that ROCm "
                     "release (see the ROCm compatibility matrix)")
    fits: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for rel in q.torch_releases(kb):
        def full_first(v: q.Variant) -> tuple:
            # a line the driver supports outright before one that needs minor-version compatibility
            newer = v.kind == "cuda" and bool(m.driver_cuda) and (q.minor_of(v.version) or (0, 0)) > \
                (q.minor_of(m.driver_cuda) or (0, 0))
            return (not newer,) + _variant_order(v)

        for v in sorted(rel.variants, key=full_first, reverse=True):
            why = judge(rel, v, m, kb)
            if why and why[0].endswith("machine") and "line on a" in why[0]:
                continue
            entry: dict[str, Any] = {"torch": rel.latest, "variant": v.name, "index_url": v.index_url,
                                     "install": install_command(rel, v), "source": v.source}
            if v.kind == "cuda":
                need = q.min_driver_for_cuda(kb, v.version)
                if need:
                    entry["min_driver_linux"] = need["min_driver_linux"]
            if why:
                if not fits:
                    skipped.append({**entry, "why": why})
                continue
            note = minor_compat(v, m, kb) if v.kind == "cuda" and m.driver_cuda else None
            if note:
                entry["note"] = note
            if any(f["torch"] == rel.latest for f in fits):
                continue  # one line per release: the newest fitting one
            fits.append(entry)
            if len(fits) >= limit:
                break
        if len(fits) >= limit:
            break
    installed = None
    if m.torch:
        own = q.torch_release(kb, m.torch)
        if own is not None:
            line = q.find_variant(own, tag=q.local_tag(m.torch), kind="cuda" if m.vendor == "nvidia" else "")
            if line is not None:
                why = judge(own, line, m, kb)
                installed = {"torch": m.torch, "variant": line.name, "fits": not why, "why": why}
    return {"machine": m.to_dict(), "recommendation": fits[0] if fits else None, "alternatives": fits[1:],
            "installed": installed, "skipped_newer": skipped[:12], "notes": notes}


@dataclass
class RecommendOptions:
    description: Any = None  # compat.Description of another machine; None: this machine
    deadline: float = 4.0


def run(opts: RecommendOptions, env: Any) -> Report:
    """The recommend use case: a Report whose ``extra`` is the recommendation (``recommendation`` is None
    when no build in the KB is known to work)."""
    from gpuvet import kb as kbmod
    from gpuvet.model.errors import UsageError

    from .engine import build_report
    from .facts import live_facts

    started, started_wall = env.clock(), env.wall_clock()
    kb = kbmod.load()
    if opts.description is not None:
        from .compat import DescriptionError, build_facts

        try:
            facts, _ = build_facts(opts.description, kb)
        except DescriptionError as exc:
            raise UsageError(str(exc)) from None
    else:
        facts = live_facts(env, deadline=opts.deadline)
    result = recommend(facts, kb)
    report = build_report("recommend", facts, [], kb)
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    report.extra = result
    from .engine import stamp

    return stamp(report, env, started_wall, started, live=opts.description is None)
