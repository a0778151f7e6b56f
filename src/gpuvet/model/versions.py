"""The one place versions, release channels, build variants and package names are parsed (on ``packaging``).

Every probe, parser, check and KB query reads versions through these functions, so the same text gives the
same answer whether it was probed live, pasted, or found in a log: an NGC build
``2.6.0a0+ecf3bae40a.nv25.01`` is a ``source`` build everywhere, never a ``prerelease`` in one path only.
Versions are ``packaging.version.Version`` objects (or the vendor's own format parsed once in its probe:
``probes.hip.hip_version``, ``probes.dpkg.upstream_version``); they are never compared as strings.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version
from .lazyre import lazy

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

# packaging.specifiers (and, through packaging.utils, packaging.tags with logging and platform) are
# imported only when a specifier is evaluated: ``gpuvet check`` starts faster for it

__all__ = ["Version", "parse_version", "pep440", "find_version", "major_minor", "minor_of", "release", "same_release",
           "spec_contains", "local_tag", "channel_of", "variant_of", "cuda_of_local", "hip_of_local",
           "normalise_name", "parse_requirement", "CHANNELS", "VARIANTS"]

CHANNELS = ("stable", "nightly", "prerelease", "source")  # framework_builds.channel
VARIANTS = ("cuda", "rocm", "xpu", "cpu")  # framework_builds.variant ('' when the text does not say)

_LEADING = re.compile(r"\d+(\.\d+)*")
_ANYWHERE = re.compile(r"(\d+(?:\.\d+)*)")
_MM = re.compile(r"(\d+)\.(\d+)")
_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")
_NIGHTLY_DEV = re.compile(r"^20\d{6}$")  # torch nightlies: 2.6.0.dev20241112
_COMMIT = re.compile(r"^[0-9a-f]{7,}")
# TheRock's dated ROCm builds in the local label: 2.9.0+rocm7.10.0a20251117 (a nightly of ROCm 7.10),
# 2.7.1+rocm7.0.0rc20250805 (a release candidate); the framework's own version may look stable
_ROCM_DATED = re.compile(r"^rocm\d+\.\d+(?:\.\d+)?(a|rc)20\d{6}$")


def parse_version(text: Any) -> Version | None:
    """A PEP 440 version, or None.  Accepts '2.8.0+cu128', '12.8', 'v2.1', '580.159.04'; a string that is
    not PEP 440 gives the version its leading number states ('6.1.40092-038397aaa' -> 6.1.40092)."""
    if text is None:
        return None
    if isinstance(text, Version):
        return text
    t = str(text).strip().lstrip("vV")
    if not t:
        return None
    try:
        return Version(t)
    except InvalidVersion:
        m = _LEADING.match(t)
        return Version(m.group(0)) if m else None


def pep440(text: Any) -> Version | None:
    """``text`` as a PEP 440 version exactly ('1.0-custom' is None); see parse_version for the lenient form."""
    try:
        return Version(str(text).strip())
    except InvalidVersion:
        return None


def find_version(text: Any) -> Version | None:
    """The first number anywhere in ``text`` ('NVIDIA driver 580.159.04' -> 580.159.4); None without one."""
    m = _ANYWHERE.search(str(text or ""))
    return Version(m.group(1)) if m else None


def major_minor(text: Any) -> tuple[int, int] | None:
    """(major, minor) of the first 'X.Y' in the text: '13.0', '12.4.1', '5.7.31921-d1770ee1b', '6.2.x'."""
    if text is None:
        return None
    m = _MM.search(str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


def minor_of(text: Any) -> tuple[int, int] | None:
    """(major, minor) of a parsed version ('12' -> (12, 0)); None when ``text`` is not a version."""
    v = parse_version(text)
    if v is None:
        return None
    rel = v.release + (0,)
    return rel[0], rel[1]


def release(text: Any, n: int = 3) -> tuple[int, ...] | None:
    """The first ``n`` numbers of a leading release ('v12.4.1.2' -> (12, 4, 1)); None without one."""
    m = _RELEASE.match(str(text or ""))
    if not m:
        return None
    return tuple(int(x) for x in m.group(1).split(".")[:n])


def same_release(a: Any, b: Any, depth: int = 3) -> bool:
    """Whether two versions agree on the numbers both state (up to ``depth``); True when either is unknown
    (an unknown version never counts as a difference)."""
    x, y = release(a, depth + 1), release(b, depth + 1)
    if x is None or y is None:
        return True
    k = min(len(x), len(y), depth)
    return x[:k] == y[:k]


def spec_contains(spec: str, version: Any) -> bool | None:
    """Whether ``version`` satisfies a PEP 440 specifier (pre-releases included); None if unparsable.

    The plain clauses the knowledge base writes (``==2.7.0``, ``>=2.2,<2.3``, ``<2.2``) are decided here with
    ``Version`` comparisons, by PEP 440's rules for them; anything else (``~=``, ``===``, ``.*``, a clause this
    does not recognise) goes to ``packaging.specifiers``, whose import and one large regex cost about 20 M
    instructions of `gpuvet check`'s start-up.  tests/test_versions_spec.py holds both to the same answers."""
    v = parse_version(version)
    fast = _plain_spec_contains(spec, v) if v is not None else None
    if fast is not None:
        return fast
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        s = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    if v is None:
        return None
    return s.contains(v, prereleases=True)


_PLAIN_CLAUSE = re.compile(r"[ \t]*(==|!=|<=|>=|<|>)[ \t]*(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?"
                           r"(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?)[ \t]*")


def _plain_spec_contains(spec: str, v: Version) -> bool | None:
    """PEP 440 for the plain clauses (canonical versions, no wildcard, no ``~=``/``===``); None otherwise."""
    if not isinstance(spec, str) or not spec.strip():
        return None
    for clause in spec.split(","):
        m = _PLAIN_CLAUSE.fullmatch(clause)
        if not m:
            return None
        op, text = m.groups()
        s = Version(text)
        if s.local is not None and op not in ("==", "!="):
            return None  # an ordered comparison with a local version is not a valid specifier
        if (op == "<" and (s.is_postrelease or s.is_devrelease)) or (op == ">" and (s.is_prerelease or s.is_postrelease)):
            return None  # exclusive bounds on post/dev (and for >, pre-) releases: left to packaging
        if not _clause(op, s, v):
            return False
    return True


def _clause(op: str, s: Version, v: Version) -> bool:
    public = Version(v.public) if v.local is not None else v
    if op in ("==", "!="):
        same = (v if s.local is not None else public) == s  # a candidate's local label is ignored unless named
        return same if op == "==" else not same
    if op == "<=":
        return public <= s
    if op == ">=":
        return public >= s
    base_same = Version(v.base_version) == Version(s.base_version)
    if op == "<":  # never a pre-release of the version named, unless that is itself a pre-release
        return v < s and not (v.is_prerelease and not s.is_prerelease and base_same)
    # ">": never a post-release of the version named (unless it is one), nor a local version of it
    return v > s and not (v.is_postrelease and not s.is_postrelease and base_same) and not (v.local is not None and base_same)


def local_tag(version: Any) -> str:
    """'2.8.0+cu128' -> 'cu128'; '2.5.1+rocm6.2' -> 'rocm6.2'; '' when there is none."""
    v = parse_version(version)
    if v is not None and v.local:
        return str(v.local)
    m = re.search(r"\+([A-Za-z0-9.]+)$", str(version or ""))
    return m.group(1).lower() if m else ""


def channel_of(version: Any) -> str:
    """stable | nightly | prerelease | source, from a framework version string.

    A dated ``.devYYYYMMDD`` is a nightly; another ``.dev`` or an ``a0`` with a commit / NGC local label
    ('2.6.0a0+ecf3bae40a.nv25.01', '2.4.0a0+git1c6f2c1') is a build from source, not a published
    pre-release; other a/b/rc versions are pre-releases; text that is not a version is ``source``."""
    try:
        v = Version(str(version).strip())
    except InvalidVersion:
        return "source"
    local = v.local or ""
    if v.dev is not None and _NIGHTLY_DEV.match(str(v.dev)):
        return "nightly"
    dated = _ROCM_DATED.match(local)
    if dated:
        return "nightly" if dated.group(1) == "a" else "prerelease"
    if v.dev is not None:
        return "source"
    if v.pre is not None:
        if v.pre == ("a", 0) and local and (local.startswith("git") or _COMMIT.match(local) or ".nv" in f".{local}"):
            return "source"
        return "prerelease"
    return "stable"


def variant_of(version: Any, cuda: str | None = None, hip: str | None = None, xpu: str | None = None,
               default: str = "cpu") -> str:
    """cuda | rocm | xpu | cpu: the GPU runtime a framework build targets, from the runtime versions it
    reports or its local label ('+cu128', '+rocm6.2', '+xpu', '+cpu').  ``default`` for a version without
    a label: 'cpu' where the build itself was read (its version.py says no GPU runtime), '' where the text
    only names the version (a log line)."""
    if hip:
        return "rocm"
    if cuda:
        return "cuda"
    if xpu:
        return "xpu"
    local = str(version or "").partition("+")[2].lower()
    if local.startswith("rocm"):
        return "rocm"
    if local.startswith("cu"):
        return "cuda"
    if local.startswith("xpu"):
        return "xpu"
    if local == "cpu":
        return "cpu"
    return default


def cuda_of_local(version: Any) -> str:
    """The CUDA release a '+cuXYZ' label names ('2.8.0+cu128' -> '12.8', '+cu118' -> '11.8'); '' otherwise."""
    local = str(version or "").partition("+")[2].lower()
    if local.startswith("cu") and local[2:].isdigit() and len(local) >= 4:
        return f"{local[2:-1]}.{local[-1]}"
    return ""


def hip_of_local(version: Any) -> str:
    """The ROCm release a '+rocmX.Y' label names ('2.5.1+rocm6.2' -> '6.2'); '' otherwise."""
    local = str(version or "").partition("+")[2].lower()
    return local[4:] if local.startswith("rocm") else ""


def normalise_name(name: str) -> str:
    """A distribution's name as PEP 503 normalises it ('PyTorch_Triton.ROCm' -> 'pytorch-triton-rocm')."""
    return _SEPARATORS.sub("-", name.strip()).lower()  # packaging.utils.canonicalize_name's rule


_SEPARATORS = re.compile(r"[-_.]+")
# PEP 508: name, optional [extras], then a version specifier (optionally in parentheses) or ``@ URL``,
# then an optional ``; marker``
_REQUIREMENT = lazy(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*"
                          r"(?:\((?P<paren>[^)]*)\)|(?P<spec>[<>=!~][^;]*)|@[^;]*)?\s*(?:;\s*\S.*)?$", re.S)


def parse_requirement(req: str) -> tuple[str, SpecifierSet] | None:
    """A ``Requires-Dist`` line -> (name as written, its version specifier: empty for none or a URL),
    or None when it is not a valid requirement.  Markers are not evaluated.  ``torch (>=2.1)``,
    ``torch==2.4.0; extra == "gpu"``, ``torch[opt]>=2`` all name torch.

    This is packaging.requirements' answer for the name and specifier without importing its marker
    grammar (the start-up of ``gpuvet check``); the specifier is still packaging's own SpecifierSet."""
    m = _REQUIREMENT.match(req or "")
    if not m:
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    spec = (m.group("paren") if m.group("paren") is not None else m.group("spec") or "").strip()
    try:
        return m.group(1), SpecifierSet(spec)
    except InvalidSpecifier:
        return None
