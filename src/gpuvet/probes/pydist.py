"""Every installed Python distribution in detail, for snapshots: version and local version, where it
lives, which installer put it there, where it came from (PEP 610 ``direct_url.json``: an index, a
local wheel or directory, a VCS checkout, a URL), its wheel tags, and its requirements.  Read from
the ``.dist-info`` / ``.egg-info`` directories through ``System`` (never by importing anything).

``dependency_tree`` derives what pipdeptree shows (each distribution's requirements, the version
installed of each, whether it satisfies the specifier, and the roots nothing depends on) from that
metadata alone, without pip.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable, Mapping

from .system import System

_DIST_DIR = re.compile(r"^(?P<name>.+?)-(?P<version>[^-]+?)\.(?P<kind>dist-info|egg-info)$")
_MAX_META = 512 * 1024


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _headers(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.strip():
            break  # the body (long description) starts at the first blank line
        if line[:1] in " \t" and out:
            continue  # a continuation line of the previous header
        k, sep, v = line.partition(":")
        if sep:
            out.append((k.strip(), v.strip()))
    return out


def parse_direct_url(text: str | None) -> dict[str, Any] | None:
    """PEP 610 ``direct_url.json`` -> {url, kind: archive|dir|vcs, editable, vcs, commit, hash}.
    Returns None for missing or malformed files (recorded as origin 'unknown' by the caller)."""
    if not text:
        return None
    try:
        d = json.loads(text)
    except ValueError:
        return None
    if not isinstance(d, dict) or not isinstance(d.get("url"), str):
        return None
    out: dict[str, Any] = {"url": d["url"]}
    if isinstance(d.get("vcs_info"), dict):
        v = d["vcs_info"]
        out.update(kind="vcs", vcs=str(v.get("vcs", "")), commit=str(v.get("commit_id", "")))
        if v.get("requested_revision"):
            out["requested_revision"] = str(v["requested_revision"])
    elif isinstance(d.get("dir_info"), dict):
        out.update(kind="dir", editable=bool(d["dir_info"].get("editable", False)))
    else:
        info = d.get("archive_info")
        a: dict[str, Any] = info if isinstance(info, dict) else {}
        out["kind"] = "archive"
        h = a.get("hashes", {}).get("sha256") if isinstance(a.get("hashes"), dict) else None
        h = h or (a.get("hash") if isinstance(a.get("hash"), str) else None)
        if h:
            out["hash"] = h if "=" in str(h) else f"sha256={h}"
    return out


def origin_of(direct: Mapping[str, Any] | None, installer: str, kind: str) -> str:
    """index | local-wheel | local-archive | local-dir | editable | vcs | url | unknown."""
    if direct is None:
        if kind == "egg-info":
            return "unknown"
        return "index" if installer in ("pip", "uv") else ("conda" if installer == "conda" else "unknown")
    url = str(direct.get("url", ""))
    if direct.get("kind") == "vcs":
        return "vcs"
    if direct.get("kind") == "dir":
        return "editable" if direct.get("editable") else "local-dir"
    if url.startswith("file:"):
        return "local-wheel" if url.endswith(".whl") else "local-archive"
    return "url"


def _requirement(spec: str) -> dict[str, Any] | None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return None
    marker = str(req.marker) if req.marker else ""
    if "extra" in marker:
        return None  # only wanted with an extra: not part of what must be installed
    return {"name": normalise(req.name), "specifier": str(req.specifier), "marker": marker,
            "extras": sorted(req.extras)}


def read_distribution(system: System, site: str, entry: str) -> dict[str, Any] | None:
    m = _DIST_DIR.match(entry)
    if not m:
        return None
    path = os.path.join(site, entry)
    kind = m.group("kind")
    meta = ""
    if system.is_dir(path):
        meta = system.read_text(os.path.join(path, "METADATA"), limit=_MAX_META) or \
            system.read_text(os.path.join(path, "PKG-INFO"), limit=_MAX_META) or ""
    else:  # a bare .egg-info file
        meta = system.read_text(path, limit=_MAX_META) or ""
    hdr = _headers(meta)
    name = next((v for k, v in hdr if k == "Name"), "") or m.group("name")
    version = next((v for k, v in hdr if k == "Version"), "") or m.group("version")
    requires: list[dict[str, Any]] = []
    for k, v in hdr:
        if k == "Requires-Dist":
            r = _requirement(v)
            if r:
                requires.append(r)
    installer = (system.read_text(os.path.join(path, "INSTALLER"), limit=256) or "").strip() if kind == "dist-info" else ""
    direct = parse_direct_url(system.read_text(os.path.join(path, "direct_url.json"), limit=65536)) \
        if kind == "dist-info" else None
    tags: list[str] = []
    wheel = system.read_text(os.path.join(path, "WHEEL"), limit=65536) if kind == "dist-info" else None
    for k, v in _headers(wheel or ""):
        if k == "Tag":
            tags.append(v)
    local = version.split("+", 1)[1] if "+" in version else ""
    return {
        "name": normalise(name), "display_name": name, "version": version, "local_version": local,
        "location": site, "metadata_dir": entry, "installer": installer,
        "requested": system.exists(os.path.join(path, "REQUESTED")) if kind == "dist-info" else None,
        "origin": origin_of(direct, installer, kind), "direct_url": direct, "wheel_tags": tags,
        "requires": requires, "requires_python": next((v for k, v in hdr if k == "Requires-Python"), ""),
    }


def distributions(system: System, paths: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every distribution on the examined interpreter's path; the first directory holding a name wins
    (as importlib does), later copies are returned with ``shadowed: True``."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for site in (system.python_paths() if paths is None else paths):
        for entry in sorted(system.listdir(site)):
            d = read_distribution(system, site, entry)
            if d is None:
                continue
            d["shadowed"] = d["name"] in seen
            seen.add(d["name"])
            out.append(d)
    return out


def _marker_ok(marker: str, env: Mapping[str, str] | None) -> bool:
    if not marker:
        return True
    from packaging.markers import InvalidMarker, Marker

    try:
        return Marker(marker).evaluate(dict(env) if env else None)
    except (InvalidMarker, Exception):
        return True


def dependency_tree(dists: list[dict[str, Any]], marker_env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """{"edges": {name: [{name, specifier, installed, satisfied}]}, "roots": [...], "missing": [...],
    "conflicts": [...]} from the distributions' own metadata (what pipdeptree prints)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    active = {d["name"]: d for d in dists if not d.get("shadowed")}
    edges: dict[str, list[dict[str, Any]]] = {}
    needed: set[str] = set()
    missing: list[dict[str, str]] = []
    conflicts: list[dict[str, str | None]] = []
    for name, d in sorted(active.items()):
        row = []
        for r in d.get("requires", []):
            if not _marker_ok(r.get("marker", ""), marker_env):
                continue
            dep = active.get(r["name"])
            installed = dep["version"] if dep else None
            ok: bool | None = None
            if installed is not None:
                try:
                    ok = SpecifierSet(r["specifier"]).contains(Version(installed), prereleases=True) \
                        if r["specifier"] else True
                except (InvalidSpecifier, InvalidVersion):
                    ok = None
            row.append({"name": r["name"], "specifier": r["specifier"], "installed": installed, "satisfied": ok})
            needed.add(r["name"])
            if dep is None:
                missing.append({"package": name, "requires": r["name"] + r["specifier"]})
            elif ok is False:
                conflicts.append({"package": name, "requires": r["name"] + r["specifier"], "installed": installed})
        edges[name] = row
    roots = sorted(n for n in active if n not in needed)
    return {"edges": edges, "roots": roots, "missing": missing, "conflicts": conflicts}
