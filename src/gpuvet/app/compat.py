"""``compat``: evaluate a described stack (no machine needed) with the same checks as ``check``.

A description (--torch/--cuda/--rocm/--driver/--gpu/--python/--package ...) becomes a ``Facts`` with
origin ``described``: the rows a probe would have produced on such a machine.  Only the tables the
description fills are marked collected, so rules about things it does not mention (device nodes,
containers, environment) report "not collected" and stay out of the verdict.

The verdict:
- ``breaks``: some check failed at severity error or above;
- ``unknown``: nothing failed, but a check that had its facts could not decide, or the KB does not know
  a described part (a torch release, a GPU name, a wheel line's targets, the CUDA a driver supports);
- ``works``: nothing failed and everything described was checked against the KB.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from gpuvet.kb import query as q
from gpuvet.model import Facts, Finding, Outcome, Report, Severity, row
from gpuvet.model.versions import normalise_name

SOURCE = "described"
NOT_COLLECTED = "could not check: not collected"


class DescriptionError(ValueError):
    """A described stack that cannot be turned into facts (bad version, --cuda with --rocm ...)."""


@dataclass
class Description:
    torch: str | None = None
    cuda: str | None = None
    rocm: str | None = None
    driver: str | None = None
    gpu: str | None = None
    python: str | None = None
    packages: list[tuple[str, str]] = field(default_factory=list)
    gcc: str | None = None
    nvcc: str | None = None
    glibc: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if v and k != "packages"}
        if self.packages:
            d["packages"] = [f"{n}=={v}" for n, v in self.packages]
        return d


def parse_package(spec: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s=]+)\s*", spec or "")
    if not m:
        raise DescriptionError(f"--package needs NAME==VERSION, got {spec!r}")
    return normalise_name(m.group(1)), m.group(2)


def _need_version(what: str, text: str | None) -> None:
    if text and q.parse_version(text) is None:
        raise DescriptionError(f"{what} {text!r} is not a version")


def build_facts(desc: Description, kb: Any) -> tuple[Facts, list[str]]:
    """The facts of a described stack, and the reasons the KB cannot vouch for parts of it."""
    if desc.cuda and desc.rocm:
        raise DescriptionError("give --cuda or --rocm, not both")
    for what, val in (("--torch", desc.torch), ("--cuda", desc.cuda), ("--rocm", desc.rocm),
                      ("--driver", desc.driver), ("--python", desc.python), ("--gcc", desc.gcc),
                      ("--nvcc", desc.nvcc), ("--glibc", desc.glibc)):
        _need_version(what, val)
    facts = Facts(origin="described")
    gaps: list[str] = []
    gpu = None
    if desc.gpu:
        gpu = q.resolve_gpu(kb, desc.gpu)
        if gpu is None:
            gaps.append(f"the KB does not know the GPU {desc.gpu!r}")
            facts.add([row("gpu_devices", SOURCE, vendor="", index=0, name=desc.gpu, arch="",
                           compute_capability="", memory_mib=None, pci_bus="")])
        else:
            facts.add([row("gpu_devices", SOURCE, vendor=gpu.vendor, index=0, name=desc.gpu, arch=gpu.arch,
                           compute_capability=gpu.compute_capability, memory_mib=None, pci_bus="")])
    vendor = gpu.vendor if gpu else ("nvidia" if desc.cuda else "amd" if desc.rocm else "")

    # the framework build
    torch_version = None
    if desc.torch:
        release = q.torch_release(kb, desc.torch)
        if release is None:
            gaps.append(f"the KB does not record torch {desc.torch}")
        base = desc.torch
        given = q.parse_version(desc.torch)
        if release is not None and given is not None and len(given.release) < 3 and not given.local:
            base = release.latest  # "2.8" -> the release's latest patch
        tag = q.local_tag(desc.torch)
        base = base.split("+")[0]
        if tag and ((desc.cuda and tag != q.cuda_tag(desc.cuda)) or (desc.rocm and tag != f"rocm{desc.rocm}")
                    or (tag == "cpu" and (desc.cuda or desc.rocm))):
            raise DescriptionError(f"--torch {desc.torch} names the +{tag} wheel line, which contradicts "
                                   f"--{'cuda' if desc.cuda else 'rocm'} {desc.cuda or desc.rocm}")
        kind = ""
        variant = None
        if release is not None:
            if tag:
                variant = q.find_variant(release, tag=tag)
            elif desc.cuda or desc.rocm:
                variant = q.find_variant(release, cuda=desc.cuda, rocm=desc.rocm)
            elif vendor == "nvidia":
                variant = q.find_variant(release, kind="cuda")
            if variant is None and (tag or desc.cuda or desc.rocm):
                gaps.append(f"torch {release.version} has no official {tag or ('cu' if desc.cuda else 'rocm')}"
                            f"{'' if tag else (desc.cuda or desc.rocm)} wheels in the KB")
        if variant is not None:
            kind = variant.kind
            tag = variant.name
        elif tag:
            kind = "cuda" if tag.startswith("cu") else "rocm" if tag.startswith("rocm") else tag
        elif desc.cuda:
            kind, tag = "cuda", q.cuda_tag(desc.cuda)
        elif desc.rocm:
            kind, tag = "rocm", f"rocm{desc.rocm}"
        elif vendor and release is not None:
            gaps.append(f"which torch {release.version} wheel line (--cuda / --rocm) is not given")
        cuda = variant.version if variant is not None and kind == "cuda" else (desc.cuda or "") if kind == "cuda" else ""
        hip = variant.version if variant is not None and kind == "rocm" else (desc.rocm or "") if kind == "rocm" else ""
        torch_version = f"{base}+{tag}" if tag else base
        pre = q.parse_version(base)
        channel = "nightly" if pre is not None and pre.is_devrelease else "prerelease" if pre is not None and pre.is_prerelease else "stable"
        # the official wheel line's targets stand in for the ELF target list a live probe reads, so the
        # build rules (BLD040) judge a described GPU exactly as they judge a real one
        targets: list[str] = []
        targets_source = ""
        if variant is not None and release is not None and variant.arch is not None:
            targets = list(variant.arch) + [f"compute_{p[3:]}" for p in variant.ptx]
            targets_source = (f"KB torch_releases: official torch {release.version} {variant.name} wheel line "
                              f"({variant.source})")
        elif variant is not None and release is not None and variant.kind in ("cuda", "rocm") and desc.gpu:
            # which targets the line carries matters only for a GPU: a description naming none is not
            # "not known" for want of the line's arch list (issue 9)
            gaps.append(f"the KB has no verified arch list for torch {release.version} {variant.name}")
        facts.add([row("framework_builds", SOURCE, name="torch", version=torch_version, cuda=cuda, hip=hip,
                       debug=False, git_version="", channel=channel, targets=targets, targets_source=targets_source,
                       variant=kind or "", path="")])
        facts.add([row("packages", SOURCE, name="torch", version=torch_version, location=SOURCE, requires=[])])
    elif desc.cuda:  # no framework: the system's CUDA runtime / toolkit
        facts.add([row("runtimes", SOURCE, vendor="nvidia", name="cuda-toolkit", version=desc.cuda, path="",
                       origin="system")])
    elif desc.rocm:
        facts.add([row("runtimes", SOURCE, vendor="amd", name="rocm", version=desc.rocm, path="", origin="system")])

    # the driver
    if desc.driver:
        if vendor == "amd":
            facts.add([row("drivers", SOURCE, vendor="amd", component="kernel-module", version=desc.driver,
                           cuda_version="", flavor="")])
        else:
            top = q.cuda_for_driver(kb, desc.driver)
            if top is None:
                gaps.append(f"the KB cannot tell which CUDA driver {desc.driver} supports")
            facts.add([row("drivers", SOURCE, vendor="nvidia", component="user-space", version=desc.driver,
                           cuda_version=top or "", flavor=""),
                       row("drivers", SOURCE, vendor="nvidia", component="kernel-module", version=desc.driver,
                           cuda_version="", flavor="")])

    # Python, glibc
    if desc.python or desc.glibc:
        facts.add([row("os_info", SOURCE, name="", kernel="", arch="x86_64", glibc=desc.glibc or "",
                       python=desc.python or "")])

    # packages
    seen = {"torch"} if desc.torch else set()
    for name, version in desc.packages:
        _need_version(f"--package {name}", version)
        if name == "torch":
            if desc.torch:
                raise DescriptionError("give torch with --torch, not --package torch==...")
            continue
        if name in seen:
            raise DescriptionError(f"--package {name} given twice")
        seen.add(name)
        facts.add([row("packages", SOURCE, name=name, version=version, location=SOURCE, requires=[])])
        pin = q.extension_pin(kb, name, version)
        if name not in ("numpy", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm") and pin is None \
                and not any(e.get("package") == name for e in q.known_issues(kb) for e in [e.get("when") or {}]):
            gaps.append(f"the KB records no torch requirement for {name} {version}")

    # compilers
    if desc.gcc:
        facts.add([row("compilers", SOURCE, name="gcc", version=desc.gcc, platform="", cuda_version="", path="")])
        nvcc = desc.nvcc or desc.cuda
        if nvcc:
            facts.add([row("compilers", SOURCE, name="nvcc", version=nvcc, platform="nvidia", cuda_version=nvcc,
                           path="")])
        else:
            gaps.append("--gcc needs --nvcc (or --cuda) to compare against")
    elif desc.nvcc:
        facts.add([row("compilers", SOURCE, name="nvcc", version=desc.nvcc, platform="nvidia",
                       cuda_version=desc.nvcc, path="")])
    # a described torch speaks for the whole package list: what is not named is not installed
    if desc.torch or desc.packages:
        facts.mark("packages")
    return facts, gaps


def verdict(findings: Sequence[Finding], gaps: Sequence[str]) -> tuple[str, list[str]]:
    """works | breaks | unknown, and why."""
    broken = [f for f in findings if f.failed and f.severity >= Severity.ERROR]
    if broken:
        return "breaks", [f"{f.code} {f.title}" for f in broken]
    undecided = [f for f in findings if f.outcome is Outcome.UNKNOWN and not f.title.startswith(NOT_COLLECTED)]
    reasons = list(gaps) + [f"{f.code} {f.title}" for f in undecided]
    if reasons:
        return "unknown", reasons
    checked = [f"{f.code} {f.title}" for f in findings if f.outcome is Outcome.PASSED]
    if not checked:
        return "unknown", ["nothing described could be checked"]
    warned = [f"{f.code} {f.title}" for f in findings if f.failed]
    return "works", warned + checked


def sources_of(findings: Sequence[Finding]) -> list[str]:
    urls: list[str] = []
    for f in sorted(findings, key=lambda f: not f.failed):
        if f.outcome not in (Outcome.FAILED, Outcome.PASSED):
            continue
        for e in f.evidence:
            urls.extend(re.findall(r"https?://[^\s)]+", e.text))
        urls.extend(re.findall(r"https?://[^\s)]+", f.why))
    return list(dict.fromkeys(urls))


def evaluate(desc: Description, kb: Any, checks: Sequence[Any] | None = None, policy: Any = None) -> Report:
    """Run every check on the described stack and return a Report whose ``extra`` holds the verdict."""
    from gpuvet.app.engine import build_report, run_checks
    from gpuvet.checks.registry import all_checks

    facts, gaps = build_facts(desc, kb)
    findings = run_checks(facts, list(checks) if checks is not None else all_checks(), kb, policy, {"live": False})
    # rules about layers the description does not mention (device nodes, containers ...) say nothing
    # about it: they are left out of the report rather than shown as "could not check"
    relevant = [f for f in findings if not (f.outcome is Outcome.UNKNOWN and f.title.startswith(NOT_COLLECTED))]
    report = build_report("compat", facts, relevant, kb, not_described=len(findings) - len(relevant))
    v, why = verdict(report.findings, gaps)
    report.extra = {"verdict": v, "verdict_reasons": why, "described": desc.to_dict(),
                    "sources": sources_of(report.findings)}
    return report


@dataclass
class CompatOptions:
    description: Description
    policy: Any = None  # engine.Policy


def run(opts: CompatOptions, env: Any) -> Report:
    """The compat use case: a UsageError for an empty or contradictory description."""
    from gpuvet import kb as kbmod
    from gpuvet.model.errors import UsageError

    started, started_wall = env.clock(), env.wall_clock()
    if not opts.description.to_dict():
        raise UsageError("describe a stack: give at least one of --torch, --cuda, --rocm, --driver, --gpu, "
                         "--python, --package, --gcc")
    kb = kbmod.load()
    try:
        report = evaluate(opts.description, kb, policy=opts.policy)
    except DescriptionError as exc:
        raise UsageError(str(exc)) from None
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    from .engine import stamp

    return stamp(report, env, started_wall, started, live=False)
