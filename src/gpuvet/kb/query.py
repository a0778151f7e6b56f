"""Typed helpers over the knowledge base's tables (pure; no machine access).

The YAML tables stay plain data; these helpers give the checks, ``gpuvet compat`` and ``gpuvet
recommend`` one place that knows how to read them: find the torch release of a version string, the
wheel line (variant) of a build, the architecture of a GPU name, whether a wheel line's targets run on
a GPU, the newest host GCC an nvcc accepts, the newest CUDA a driver supports.  Every helper answers
``None`` when the KB does not know, so callers can say "unknown" instead of guessing.
"""
from __future__ import annotations

import re
from dataclasses import field
from typing import Any, Iterable

from packaging.version import Version

from gpuvet.model.record import record
from gpuvet.model.versions import local_tag, minor_of, parse_version, spec_contains  # noqa: F401 (re-exported as q.*)
from ..model.lazyre import lazy

# -- versions: parsed in one place (gpuvet.model.versions), re-exported for the KB's callers ------------


def _vkey(text: Any) -> Version:
    """A sort key: the version, unparsable text first."""
    return parse_version(text) or Version("0")


# -- torch releases ------------------------------------------------------------------------------------
@record(frozen=True)
class Variant:
    """One build variant of a torch release (cu128, rocm6.2.4, cpu)."""

    name: str  # cu128, rocm6.2.4, cpu
    kind: str  # cuda | rocm | cpu | xpu
    version: str  # 12.8, 6.2.4, ''
    index_url: str
    arch: tuple[str, ...] | None  # None: not recorded (unknown), never "no targets"
    ptx: tuple[str, ...] = ()
    cudnn: str = ""
    source: str = ""

    @classmethod
    def from_entry(cls, e: dict[str, Any]) -> "Variant":
        arch = e.get("arch")
        return cls(str(e["name"]), str(e.get("kind", "")), str(e.get("version", "") or ""), str(e.get("index_url", "")),
                   tuple(arch) if arch is not None else None, tuple(e.get("ptx") or ()), str(e.get("cudnn", "") or ""),
                   str(e.get("source", "")))


@record(frozen=True)
class TorchRelease:
    """A torch release the knowledge base records, with its variants."""

    version: str  # "2.8"
    latest: str  # "2.8.0"
    python_min: str | None
    python_max: str | None
    companions: dict[str, str]
    manylinux: str
    pypi_default: str
    source: str
    variants: tuple[Variant, ...] = field(default_factory=tuple)
    partial: bool = False

    @property
    def key(self) -> tuple[int, int]:
        return minor_of(self.version) or (0, 0)

    def variant(self, name: str) -> Variant | None:
        for v in self.variants:
            if v.name == name:
                return v
        return None

    def companion_minor(self, package: str) -> tuple[int, int] | None:
        return minor_of(self.companions.get(package))


def torch_releases(kb: Any) -> list[TorchRelease]:
    """Every recorded torch release, newest first."""
    out = []
    for e in kb.table("torch_releases"):
        py = e.get("python") or {}
        out.append(TorchRelease(str(e["version"]), str(e.get("latest", e["version"])), py.get("min"), py.get("max"),
                                {k: str(v) for k, v in (e.get("companions") or {}).items()},
                                str(e.get("manylinux", "") or ""), str(e.get("pypi_default", "") or ""),
                                str(e.get("source", "")), tuple(Variant.from_entry(v) for v in e.get("variants", [])),
                                bool(e.get("partial", False))))
    return sorted(out, key=lambda r: r.key, reverse=True)


def torch_release(kb: Any, version: Any) -> TorchRelease | None:
    """The release a torch version belongs to, by major.minor ('2.8.0+cu128', '2.8', '2.12.0.dev2026')."""
    mm = minor_of(version)
    if mm is None:
        return None
    for r in torch_releases(kb):
        if r.key == mm:
            return r
    return None


def newest_with_rocm(kb: Any, rocm: Any) -> tuple[TorchRelease, Variant] | None:
    """The newest recorded torch release that ships wheels for this ROCm major.minor, and that wheel line."""
    mm = minor_of(rocm)
    if mm is None:
        return None
    for r in torch_releases(kb):
        if r.partial:
            continue
        for v in r.variants:
            if v.kind == "rocm" and minor_of(v.version) == mm:
                return r, v
    return None


def cuda_tag(cuda: Any) -> str:
    mm = minor_of(cuda)
    return f"cu{mm[0]}{mm[1]}" if mm else ""


def find_variant(release: TorchRelease, *, tag: str = "", cuda: Any = None, rocm: Any = None,
                 kind: str = "") -> Variant | None:
    """The wheel line of a build: by its local tag (cu128, rocm6.2), else by CUDA or ROCm version, else
    (kind 'cuda' with nothing else) the variant PyPI's plain ``torch`` wheel is built with."""
    if tag:
        v = release.variant(tag)
        if v is not None:
            return v
        if tag.startswith("rocm"):
            rocm = rocm or tag[4:]
        elif tag.startswith("cu") and tag[2:].isdigit():
            cuda = cuda or f"{tag[2:-1]}.{tag[-1]}"
        elif tag == "cpu":
            return release.variant("cpu")
    if cuda:
        return release.variant(cuda_tag(cuda))
    if rocm:
        want = parse_version(rocm)
        cands = [v for v in release.variants if v.kind == "rocm"]
        for v in cands:  # exact first (6.2.4 == 6.2.4), then by major.minor (6.2.4 -> rocm6.2)
            if want is not None and parse_version(v.version) == want:
                return v
        for v in cands:
            if minor_of(v.version) == minor_of(rocm):
                return v
        return None
    if kind == "cuda" and release.pypi_default:
        return release.variant(release.pypi_default)
    if kind == "cpu":
        return release.variant("cpu")
    return None


# -- GPUs ----------------------------------------------------------------------------------------------
_SM = re.compile(r"^sm_(\d+)([af]?)$")


def _norm_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


_BRAND = lazy(r"^(?:(?:amd|ati|nvidia|radeon|geforce|instinct|tesla|quadro)\s+)+")


def _short_name(name: str) -> str:
    """A normalised name without its vendor/brand words: 'amd radeon rx 7900 xtx' -> 'rx 7900 xtx' (what users
    type); empty when nothing distinctive (two characters or a bare number) would be left."""
    short = _BRAND.sub("", name)
    return short if len(short) > 2 and not short.isdigit() else ""


_SERIES = re.compile(r"^(?:(?:rx|rtx|gtx|gt|pro)\s+)+")


def _core_name(short: str) -> str:
    """A short name without its series words too: 'rx 7900 xtx' -> '7900 xtx', 'rtx a6000' -> 'a6000' (what users
    type when they drop 'RX'); empty unless a letter and a digit are left ('rtx 4090' -> '': a bare model number
    is no name)."""
    core = _SERIES.sub("", short)
    return core if len(core) > 3 and re.search(r"[a-z]", core) and re.search(r"\d", core) else ""


@record(frozen=True)
class Gpu:
    """A GPU the knowledge base records: its vendor, architecture and name."""

    vendor: str  # nvidia | amd | ''
    arch: str  # sm_90 | gfx90a
    name: str = ""
    compute_capability: str = ""
    family: str = ""
    source: str = ""


def resolve_gpu(kb: Any, text: str) -> Gpu | None:
    """A GPU described by name ('H200', 'AMD Instinct MI210', 'RTX 4090') or by target ('sm_90',
    'gfx1151', '8.9'); None when the KB does not know it."""
    t = (text or "").strip()
    if not t:
        return None
    arch = _arch_of(t)
    entries = kb.table("gpu_models")
    if arch:
        for e in entries:
            if e.get("arch") == arch:
                return Gpu(e["vendor"], arch, t, str(e.get("compute_capability", "")), str(e.get("family", "")),
                           str(e.get("source", "")))
        vendor = "nvidia" if arch.startswith("sm_") else "amd"
        m = _SM.match(arch)
        cc = f"{int(m.group(1)) // 10}.{int(m.group(1)) % 10}" if m else ""
        return Gpu(vendor, arch, t, cc)
    wanted = _norm_name(t)
    short = _short_name(wanted)
    core = _core_name(short)
    best: tuple[int, dict[str, Any]] | None = None
    by_core: list[dict[str, Any]] = []
    for e in entries:
        for alias in e.get("names", []):
            a = _norm_name(alias)
            if a and (wanted == a or f" {a} " in f" {wanted} " or (short and _short_name(a) == short)):
                if best is None or len(a) > best[0]:
                    best = (len(a), e)
            elif a and core and _core_name(_short_name(a)) == core:
                by_core.append(e)
    if best is None:
        # '7900 XTX' for 'Radeon RX 7900 XTX': only when every GPU with that core name has one architecture
        if not by_core or len({c["arch"] for c in by_core}) != 1:
            return None
        best = (0, by_core[0])
    e = best[1]
    return Gpu(e["vendor"], e["arch"], t, str(e.get("compute_capability", "")), str(e.get("family", "")),
               str(e.get("source", "")))


def _arch_of(text: str) -> str | None:
    """'sm_90' / 'sm90' / '9.0' -> 'sm_90'; 'gfx90a:xnack-' -> 'gfx90a'; anything else None.  (kb may
    not import checks, so this mirrors checks.gpu.normalise_arch for whole-target inputs only.)"""
    m = re.fullmatch(r"(gfx[0-9a-f]{3,5})(:.*)?", text, re.I)
    if m:
        return m.group(1).lower()
    m = re.fullmatch(r"sm_?(\d{2,3})([af]?)", text, re.I)
    if m:
        return f"sm_{m.group(1)}{m.group(2).lower()}"
    m = re.fullmatch(r"(\d+)\.(\d)", text)
    if m:
        return f"sm_{m.group(1)}{m.group(2)}"
    return None


def _sm(arch: str) -> tuple[int, int, str] | None:
    m = _SM.match(arch or "")
    if not m:
        return None
    n = int(m.group(1))
    return n // 10, n % 10, m.group(2)


def runs_on(gpu_arch: str, targets: Iterable[str], ptx: Iterable[str] = ()) -> bool:
    """Whether a binary with these GPU targets has code that runs on ``gpu_arch``.

    NVIDIA: a cubin for sm_XY runs on sm_XZ with Z >= Y (same major; arch-specific 'a'/'f' cubins only
    on their own target), and PTX for compute_XY is JIT-compiled for any newer GPU.  AMD: code objects
    are per target (gfx90a runs only gfx90a code), xnack/sramecc feature suffixes aside."""
    targets = list(targets)
    if gpu_arch.startswith("gfx"):
        return any(t.split(":")[0] == gpu_arch for t in targets)
    g = _sm(gpu_arch)
    if g is None:
        return False
    for t in targets:
        if t.startswith("compute_"):
            p = _sm("sm_" + t[len("compute_"):])
            if p and (p[0], p[1]) <= (g[0], g[1]):
                return True
            continue
        s = _sm(t)
        if s is None:
            continue
        if t == gpu_arch:
            return True
        if s[2] == "" and s[0] == g[0] and s[1] <= g[1]:
            return True
    for code in ptx:
        s = _sm(code)
        if s and (s[0], s[1]) <= (g[0], g[1]):
            return True
    return False


# -- drivers, compilers ----------------------------------------------------------------------------------
def cuda_toolkits(kb: Any) -> list[dict[str, Any]]:
    return [e for e in kb.table("cuda_toolkits") if parse_version(e.get("cuda")) is not None]


def min_driver_for_cuda(kb: Any, cuda: Any) -> dict[str, Any] | None:
    """The cuda_toolkits entry of a CUDA version (GA release of its major.minor)."""
    mm = minor_of(cuda)
    if mm is None:
        return None
    rows = [e for e in cuda_toolkits(kb) if minor_of(e["cuda"]) == mm]
    rows.sort(key=lambda e: parse_version(e["cuda"]) or Version("0"))  # GA (X.Y) sorts before X.Y.1
    return rows[0] if rows else None


def cuda_for_driver(kb: Any, driver: Any) -> str | None:
    """The newest CUDA major.minor whose toolkit minimum Linux driver is <= ``driver`` (what nvidia-smi
    prints as 'CUDA Version'), or None when the table is absent or the driver older than all of it."""
    d = parse_version(driver)
    if d is None:
        return None
    best: tuple[int, int] | None = None
    for e in cuda_toolkits(kb):
        need = parse_version(e.get("min_driver_linux"))
        mm = minor_of(e["cuda"])
        if need is not None and mm is not None and need <= d and (best is None or mm > best):
            best = mm
    return f"{best[0]}.{best[1]}" if best else None


def host_compiler(kb: Any, cuda: Any) -> dict[str, Any] | None:
    """The host_compilers entry for a CUDA version: its own major.minor, else None."""
    mm = minor_of(cuda)
    for e in kb.table("host_compilers"):
        if minor_of(e.get("cuda")) == mm:
            return e
    return None


def cxx_standard(kb: Any, std: Any) -> dict[str, Any] | None:
    """The cxx_standards entry (oldest GCC / clang accepting -std=c++NN) of a C++ standard, or None."""
    for e in kb.table("cxx_standards"):
        if str(e.get("std")) == str(std or ""):
            return e
    return None


# -- rules ------------------------------------------------------------------------------------------------
def python_rules(kb: Any, kind: str) -> list[dict[str, Any]]:
    return [e for e in kb.table("python_rules") if e.get("kind") == kind]


def manylinux_glibc(kb: Any, tag: str) -> str | None:
    for e in python_rules(kb, "manylinux"):
        if e.get("tag") == tag:
            return str(e.get("glibc"))
    return None


def extension_pin(kb: Any, package: str, version: Any) -> dict[str, Any] | None:
    """The companions entry (torch specifier) of one extension release, or None.  A local tag (an index's
    ``+cu130`` build of that release) is the same release."""
    v = parse_version(version)
    for e in kb.table("companions"):
        w = parse_version(e.get("version"))
        if e.get("package") == package and v is not None and w is not None and (w == v or w.public == v.public):
            return e
    return None


def known_issues(kb: Any) -> list[dict[str, Any]]:
    return list(kb.table("known_issues"))


def coverage(kb: Any) -> dict[str, Any]:
    """What each table covers, for ``gpuvet kb info``."""
    out: dict[str, Any] = {}
    for name in sorted(kb.tables):
        entries = kb.table(name)
        info: dict[str, Any] = {"entries": len(entries), "description": kb.descriptions.get(name, "")}
        if name == "torch_releases":
            rels = torch_releases(kb)
            info["releases"] = [r.version for r in reversed(rels)]
            info["variants"] = sorted({v.name for r in rels for v in r.variants},
                                      key=lambda n: (n[:2], parse_version(re.sub(r"^[a-z]+", "", n) or "0") or Version("0")))
            info["arch_lists"] = sum(1 for r in rels for v in r.variants if v.arch is not None)
        elif name == "gpu_models":
            for vendor in ("nvidia", "amd"):
                archs = sorted({e["arch"] for e in entries if e.get("vendor") == vendor})
                info[vendor] = {"models": sum(len(e.get("names", [])) for e in entries if e.get("vendor") == vendor),
                                "archs": archs}
        elif name == "cuda_toolkits":
            vs = [e.get("cuda") for e in entries]
            info["range"] = f"{vs and min(vs, key=_vkey)} .. {vs and max(vs, key=_vkey)}"
        elif name == "host_compilers":
            info["cuda"] = [e.get("cuda") for e in entries]
        elif name in ("known_issues", "python_rules"):
            info["ids"] = [e.get("id") for e in entries]
        elif name == "companions":
            info["packages"] = sorted({e.get("package") for e in entries})
        out[name] = info
    return out


# -- the CUDA release an NVIDIA architecture needs -----------------------------------------------------
def cuda_min_for_arch(kb: Any, arch: str) -> tuple[str, str] | None:
    """(first CUDA toolkit that targets ``arch``, its source) from gpu_models' ``min_cuda``, or None."""
    for e in kb.table("gpu_models"):
        if e.get("vendor") == "nvidia" and e.get("arch") == arch and e.get("min_cuda"):
            return str(e["min_cuda"]), str(e.get("min_cuda_source") or e.get("source") or "")
    return None


def legacy_torch_cuda(kb: Any, version: Any) -> tuple[str, str] | None:
    """(the newest CUDA release any official binary of this old torch release was built with, its source), from
    torch_legacy_cuda (releases older than torch_releases records), or None."""
    mm = minor_of(version)
    if mm is None:
        return None
    for e in kb.table("torch_legacy_cuda"):
        if minor_of(e.get("version")) == mm:
            cudas = sorted((minor_of(c), str(c)) for c in e.get("cuda") or () if minor_of(c) is not None)
            if cudas:
                return cudas[-1][1], str(e.get("source") or "")
    return None


def cuda_newest_arch(kb: Any, cuda: Any) -> str | None:
    """The newest NVIDIA architecture (sm_XY) whose ``min_cuda`` is <= ``cuda``: what a build made with that CUDA
    can carry code for at most (None when the KB records none)."""
    mm = minor_of(cuda)
    if mm is None:
        return None
    best: tuple[tuple[int, int], str] | None = None
    for e in kb.table("gpu_models"):
        need = minor_of(e.get("min_cuda")) if e.get("vendor") == "nvidia" and e.get("min_cuda") else None
        cc = minor_of(e.get("compute_capability"))
        if need is not None and cc is not None and need <= mm and (best is None or cc > best[0]):
            best = (cc, str(e["arch"]))
    return best[1] if best else None
