"""Helpers shared by the rule modules of several stack layers (reading facts, KB look-ups)."""
from __future__ import annotations

import re
from typing import Any

from gpuvet.kb import query as q
from gpuvet.model import Facts, Row
from gpuvet.model.versions import find_version, major_minor

from .base import Context


def _mmstr(t: tuple[int, int]) -> str:
    return f"{t[0]}.{t[1]}"


def _amd_gpus(facts: Facts) -> list[Row]:
    return [r for r in facts.table("gpu_devices") if r.get("vendor") == "amd"]


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
            and r.get("origin") in (None, "", "system", "pasted") and major_minor(r.get("version"))]


def _system_hip_runtime(facts: Facts) -> list[Row]:
    return [r for r in facts.table("runtimes") if r.get("vendor") == "amd" and r.get("name") == "hip-runtime"
            and r.get("origin") in (None, "", "system", "pasted") and major_minor(r.get("version"))]


def _hip_builds(facts: Facts) -> list[Row]:
    return [b for b in facts.table("framework_builds") if b.get("hip") and major_minor(b.get("hip"))]


def _amd_label(b: Row) -> str:
    return f"{b.get('name') or 'framework'} {b.get('version') or ''}".strip()


def _rocm_entry(kb: Any, release: str) -> dict | None:
    """The KB entry of a ROCm release: exact match, else the newest entry of the same major.minor."""
    if kb is None:
        return None
    entries = kb.table("rocm_releases")
    for e in entries:
        if str(e.get("rocm")) == release:
            return e
    mm = major_minor(release)
    same = [e for e in entries if major_minor(e.get("rocm")) == mm]
    return same[0] if same else None


def _default_rocm(facts: Facts) -> list[Row]:
    rows = _system_rocm(facts)
    default = [r for r in rows if (r.get("path") or "").rstrip("/") == "/opt/rocm"]
    return default or rows


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


def _companion_cmd(release: q.TorchRelease, variant: q.Variant | None, name: str) -> str | None:
    """Install exactly the companion ``name`` at the version ``release`` pins (nothing else), or None
    when the KB records no pin for it."""
    want = release.companions.get(name)
    if not want:
        return None
    cmd = f"pip install {name}=={want}"
    if variant is not None and variant.index_url and not name.startswith(("triton", "pytorch-triton")):
        cmd += f" --index-url {variant.index_url}"
    return cmd


GROUP_HINT = {"/dev/kfd": ("render", "video"), "/dev/dri": ("render", "video")}










def _build_cuda(text: Any) -> tuple[tuple[int, int], bool] | None:
    """A framework build's CUDA: ('12.4' -> ((12, 4), False)); a major alone, as jaxlib's CUDA
    plugins name it ('13' -> ((13, 0), True)); None when the build has no CUDA."""
    mm = major_minor(text)
    if mm:
        return mm, False
    m = re.fullmatch(r"\s*(?:cuda\s*)?(\d{1,2})\s*", str(text or ""), re.I)
    return ((int(m.group(1)), 0), True) if m else None


def _fmt(mm: tuple[int, int]) -> str:
    return f"{mm[0]}.{mm[1]}"


def _toolkits(kb: Any) -> list[dict[str, Any]]:
    if kb is None:
        return []
    out = [e for e in kb.table("cuda_toolkits") if find_version(e.get("cuda")) and find_version(e.get("min_driver_linux"))]
    return sorted(out, key=lambda e: find_version(e["cuda"]))  # type: ignore[arg-type,return-value]


def _release_entry(kb: Any, mm: tuple[int, int]) -> dict[str, Any] | None:
    """The GA release of CUDA major.minor (else its earliest listed update)."""
    same = [e for e in _toolkits(kb) if major_minor(e["cuda"]) == mm]
    for e in same:
        if str(e["cuda"]) == _fmt(mm):
            return e
    return same[0] if same else None
