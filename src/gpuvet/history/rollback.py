"""A plan back to an earlier snapshot: ordered steps with exact versions and the right index for each
CUDA/ROCm variant, companions pinned with the framework, OS-package / driver / ROCm-CUDA-tree steps
shown display-only (root, reboot), what it costs and what can go wrong.  Pure: the executor that
builds a plan into a new virtual environment lives in ``app.rollback``.

Step order: driver (reboot), ROCm/CUDA tree switch, OS packages of the GPU stack (root), then the
Python environment: the framework and its companions together from the framework's own index
(``--no-deps``: the snapshot lists every distribution, so nothing is left to a resolver), the other
distributions from their indexes or recorded origins, ``pip check``, and the verification.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

FRAMEWORK_FAMILY = {"torch", "torchvision", "torchaudio", "torchtext", "torchdata", "torchrec", "fbgemm-gpu",
                    "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "torchao"}
FOLLOW_TORCH_INDEX = {"pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu"}  # no local version of their own
VARIANT = re.compile(r"^(rocm\d+(?:\.\d+)*|cu\d+|cpu|xpu)$")
PYTORCH_INDEX = "https://download.pytorch.org/whl"
BIG = {"torch": 900, "jaxlib": 250, "tensorflow": 600, "tensorflow-rocm": 900, "triton": 250,
       "pytorch-triton-rocm": 400, "nvidia-cudnn-cu12": 700, "nvidia-cublas-cu12": 600}  # MB, a rough guess


@dataclass
class Step:
    kind: str  # driver | tree | os-packages | python | python-remove | check | verify
    title: str
    command: str  # a shell command line
    applicability: str = "safe"  # safe | unsafe | display-only
    needs_root: bool = False
    needs_reboot: bool = False
    packages: list[str] = field(default_factory=list)  # exact pins this step installs
    index_url: str | None = None
    argv: list[str] = field(default_factory=list)  # for the executor (python steps): pip arguments after 'install'
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if v not in (None, "", [], False)}
        d["applicability"] = self.applicability
        return d


@dataclass
class Plan:
    target: dict[str, Any]  # id, label, created_at of the snapshot to return to
    current: dict[str, Any]
    steps: list[Step]
    cost: dict[str, Any]
    risks: list[str]
    unchanged: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "current": self.current, "unchanged": self.unchanged,
                "steps": [dict(order=i + 1, **s.to_dict()) for i, s in enumerate(self.steps)],
                "cost": self.cost, "risks": self.risks}


def variant_of(version: str) -> str:
    local = version.split("+", 1)[1] if "+" in version else ""
    return local.lower() if VARIANT.match(local.lower()) else ""


def is_nightly(version: str) -> bool:
    return ".dev" in version


def index_for(version: str, kb: Any = None, index_map: Mapping[str, str] | None = None) -> str:
    """The index serving a framework build: the KB's index URL for that release's variant (primary
    source: PyTorch's previous-versions page / builder scripts), else PyTorch's URL pattern
    (``/whl/<variant>``, ``/whl/nightly/<variant>`` for nightlies).  ``index_map`` overrides by
    variant (a mirror, an air-gapped copy)."""
    var = variant_of(version) or "cpu"
    key = ("nightly/" if is_nightly(version) else "") + var
    if index_map and (key in index_map or var in index_map):
        return index_map.get(key) or index_map[var]
    if kb is not None and not is_nightly(version):
        try:
            from gpuvet.kb.query import torch_release

            rel = torch_release(kb, version)
            v = rel.variant(var) if rel else None
            if v and v.index_url:
                return v.index_url
        except Exception:  # noqa: BLE001 - a KB without the table: fall back to the pattern
            pass
    return f"{PYTORCH_INDEX}/{key}"


def _dists(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in doc.get("distributions") or [] if not d.get("shadowed")}


def _pin(d: Mapping[str, Any]) -> str:
    du = d.get("direct_url") or {}
    name = d.get("display_name") or d["name"]
    if d.get("origin") == "vcs" and du.get("url"):
        return f"{name} @ {du.get('vcs', 'git')}+{du['url']}@{du.get('commit', '')}"
    if d.get("origin") in ("local-wheel", "url", "local-archive") and du.get("url"):
        return f"{name} @ {du['url']}"
    return f"{name}=={d['version']}"


def _q(args: Iterable[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


def plan(current: Mapping[str, Any], target: Mapping[str, Any], kb: Any = None,
         index_map: Mapping[str, str] | None = None, python: str = "python",
         find_links: Iterable[str] = ()) -> Plan:
    cur, tgt = _dists(current), _dists(target)
    steps: list[Step] = []
    risks: list[str] = []
    root = reboot = False
    # -- driver -------------------------------------------------------------------------------
    drv_a = {(r.get("vendor"), r.get("component")): r.get("version") for r in (current.get("facts") or {}).get("drivers", [])}
    drv_b = {(r.get("vendor"), r.get("component")): r.get("version") for r in (target.get("facts") or {}).get("drivers", [])}
    for key in sorted(set(drv_b), key=str):
        if drv_b[key] and drv_a.get(key) != drv_b[key] and key[1] != "user-space":
            vendor = key[0]
            pkg = "amdgpu-dkms" if vendor == "amd" else "the NVIDIA driver package (nvidia-driver-<branch>)"
            steps.append(Step("driver", f"install the {vendor} {key[1]} driver {drv_b[key]} "
                                        f"(now {drv_a.get(key) or 'absent'}), then reboot",
                              f"# install {pkg} at version {drv_b[key]} with the OS package manager, then: sudo reboot",
                              "display-only", needs_root=True, needs_reboot=True))
            root = reboot = True
            risks.append("A driver change stops every GPU job on the machine and needs a reboot; other "
                         "environments on it may need the newer driver.")
    # -- ROCm / CUDA tree ----------------------------------------------------------------------
    def active(doc):
        return {t["vendor"]: t for t in (doc.get("gpu_trees") or {}).get("trees", []) if t.get("active")
                and t["path"] not in ("/opt/rocm", "/usr/local/cuda")}

    ta, tb = active(current), active(target)
    present_now = {t["path"] for t in (current.get("gpu_trees") or {}).get("trees", [])}
    for vendor, t in sorted(tb.items()):
        if ta.get(vendor, {}).get("path") == t["path"]:
            continue
        generic, alt = ("/opt/rocm", "rocm") if vendor == "amd" else ("/usr/local/cuda", "cuda")
        via = t.get("via") or []
        if f"/etc/alternatives/{alt}" in via:
            cmd = f"sudo update-alternatives --set {alt} {shlex.quote(t['path'])}"
        else:
            cmd = f"sudo ln -sfn {shlex.quote(t['path'])} {generic}"
        envs = [v for v in via if v.isupper()]
        if envs:
            cmd += "\n" + "\n".join(f"export {e}={shlex.quote(t['path'])}" for e in envs)
        title = f"make {t['path']} ({t.get('version') or '?'}) the active {'ROCm' if vendor == 'amd' else 'CUDA'} tree"
        if t["path"] not in present_now:
            title += " (it is no longer installed: reinstall it first)"
        steps.append(Step("tree", title, cmd, "display-only", needs_root=True))
        root = True
    # -- OS packages ---------------------------------------------------------------------------
    mgr = (target.get("os_packages") or {}).get("manager", "none")
    pa = {p["name"]: p["version"] for p in (current.get("os_packages") or {}).get("packages", [])}
    pb = {p["name"]: p["version"] for p in (target.get("os_packages") or {}).get("packages", [])}
    os_install = sorted(f"{n}={v}" if mgr == "dpkg" else f"{n}-{v}" for n, v in pb.items() if pa.get(n) != v)
    os_remove = sorted(n for n in pa if n not in pb)
    if os_install:
        cmd = ("sudo apt-get install --allow-downgrades " if mgr == "dpkg" else "sudo dnf install ") + " ".join(os_install)
        steps.append(Step("os-packages", f"put {len(os_install)} OS package(s) of the GPU stack back at their versions",
                          cmd, "display-only", needs_root=True, packages=os_install))
        root = True
        risks.append("Downgrading OS packages can remove packages that depend on the newer ones; read the "
                     "package manager's summary before confirming.")
    if os_remove:
        steps.append(Step("os-packages", f"remove {len(os_remove)} OS package(s) added since (optional)",
                          ("sudo apt-get remove " if mgr == "dpkg" else "sudo dnf remove ") + " ".join(os_remove),
                          "display-only", needs_root=True, packages=os_remove))
    # -- Python: framework family, then the rest ------------------------------------------------
    changed = {n: d for n, d in tgt.items() if n not in cur or cur[n].get("version") != d.get("version")
               or cur[n].get("origin") != d.get("origin")}
    fl = [a for f in find_links for a in ("--find-links", f)]
    torch_v = tgt.get("torch", {}).get("version", "")
    fam = sorted(n for n in changed if n in FRAMEWORK_FAMILY and changed[n].get("origin") in ("index", "unknown", "conda"))
    if fam:
        by_index: dict[str, list[str]] = {}
        for n in fam:
            v = changed[n]["version"]
            base = torch_v if (n in FOLLOW_TORCH_INDEX and torch_v) else v
            if not variant_of(base) and n not in FOLLOW_TORCH_INDEX and not variant_of(torch_v):
                by_index.setdefault("", []).append(n)  # a plain PyPI build
                continue
            by_index.setdefault(index_for(base if variant_of(base) else torch_v, kb, index_map), []).append(n)
        for idx, names in sorted(by_index.items()):
            pins = [_pin(changed[n]) for n in names]
            args = ["--no-deps", *pins] + (["--index-url", idx] if idx else []) + fl
            steps.append(Step("python", f"install the framework build and its companions ({', '.join(names)})",
                              _q([python, "-m", "pip", "install", *args]), "safe", packages=pins,
                              index_url=idx or None, argv=args))
        if any(is_nightly(changed[n]["version"]) for n in fam):
            risks.append("Nightly wheels are deleted from the nightly index after a while: the exact build may "
                         "no longer be downloadable.")
    rest = sorted(n for n in changed if n not in fam)
    plain = [n for n in rest if changed[n].get("origin") not in ("editable", "local-dir")]
    special = [n for n in rest if n not in plain]
    if plain:
        pins = [_pin(changed[n]) for n in plain]
        default_idx = (index_map or {}).get("default")
        args = ["--no-deps", *pins] + (["--index-url", default_idx] if default_idx else []) + fl
        steps.append(Step("python", f"install {len(pins)} other distribution(s) at their recorded versions",
                          _q([python, "-m", "pip", "install", *args]), "safe", packages=pins,
                          index_url=default_idx, argv=args))
        for n in plain:
            du = changed[n].get("direct_url") or {}
            if changed[n].get("origin") == "local-wheel":
                risks.append(f"{n} was installed from a local wheel ({du.get('url', '')}): it must still exist there.")
    for n in special:
        du = changed[n].get("direct_url") or {}
        steps.append(Step("python", f"reinstall {n} {changed[n]['version']} from its checkout ({du.get('url', '?')})",
                          _q([python, "-m", "pip", "install", "--no-deps", "-e" if changed[n].get("origin") == "editable"
                              else "", du.get("url", "").replace("file://", "")]).replace("'' ", ""),
                          "display-only", packages=[n]))
        risks.append(f"{n} was installed from a local directory: its source may have changed since the snapshot.")
    removed = sorted(n for n in cur if n not in tgt and n not in ("pip", "setuptools", "wheel"))
    if removed:
        steps.append(Step("python-remove", f"remove {len(removed)} distribution(s) installed since (in place only)",
                          _q([python, "-m", "pip", "uninstall", "-y", *removed]), "unsafe", packages=removed,
                          note="not needed with --into: a new environment never had them"))
    has_python = any(s.kind == "python" for s in steps)
    if has_python or removed:
        steps.append(Step("check", "check the installed distributions' requirements", _q([python, "-m", "pip", "check"])))
        steps.append(Step("verify", "verify the environment: gpuvet check, then a matmul and a conv2d on the GPU "
                                    "(the CPU when there is none)", f"gpuvet check --python {shlex.quote(python)}"))
    # -- cost ---------------------------------------------------------------------------------
    n_py = sum(len(s.packages) for s in steps if s.kind == "python")
    mb = sum(BIG.get(p.split("==")[0].split(" @")[0].lower(), 2) for s in steps if s.kind == "python" for p in s.packages)
    minutes = round(n_py * 0.05 + mb / 100.0 + (10 if reboot else 0) + (3 if root else 0), 1)
    cost = {"python_packages": n_py, "python_removed": len(removed), "os_packages": len(os_install) + len(os_remove),
            "download_mb_estimate": mb, "download_size_source": "a rough estimate: the index was not asked",
            "needs_root": root, "needs_reboot": reboot, "minutes_estimate": minutes}
    if root:
        risks.append("Steps marked display-only change the system for every user: gpuvet only shows them.")
    risks.append("In place, a failed install can leave the environment half-changed: prefer "
                 "`gpuvet rollback --into DIR`, which builds a new environment and never touches this one.")

    def ident(doc):
        return {"id": doc.get("id"), "label": doc.get("label"), "created_at": doc.get("created_at"),
                "torch": _dists(doc).get("torch", {}).get("version")}

    return Plan(ident(target), ident(current), steps, cost, risks, unchanged=not steps)


# -- output ------------------------------------------------------------------------------------------
def render_text(p: Plan) -> str:
    t = p.target
    out = [f"Rollback plan to snapshot {t.get('label') or ''} ({(t.get('id') or '')[:8]}, {t.get('created_at', '')})".replace("  ", " ")]
    if p.unchanged:
        return out[0] + "\n\nNothing to do: this environment already matches it.\n"
    out.append("")
    for i, s in enumerate(p.steps, 1):
        marks = [m for m, on in (("display-only", s.applicability == "display-only"), ("root", s.needs_root),
                                 ("reboot", s.needs_reboot), ("unsafe", s.applicability == "unsafe")) if on]
        out.append(f"{i}. {s.title}" + (f"  [{', '.join(marks)}]" if marks else ""))
        if s.index_url:
            out.append(f"   index: {s.index_url}")
        for line in s.command.splitlines():
            out.append(f"   $ {line}")
        if s.note:
            out.append(f"   ({s.note})")
    c = p.cost
    known = c.get("download_mb_known")
    kb_ = (c.get("download_bytes_known") or 0) / 1024
    shown = f"{known} MB" if known is None or known >= 1 else f"{kb_:.0f} KiB" if kb_ >= 1 else f"{kb_ * 1024:.0f} bytes"
    size = (f"{shown} to download as the index says" + (
        f" (+ ~{c['download_mb_estimate']} MB estimated in all)" if c.get("download_size_unknown") else "")
        if c.get("download_mb_known") is not None else
        f"~{c['download_mb_estimate']} MB to download ({c['download_size_source']})")
    out += ["", "Cost: " + ", ".join([f"{c['python_packages']} Python package(s) to install",
                                       f"{c['python_removed']} to remove", f"{c['os_packages']} OS package(s)", size,
                                       "root" if c["needs_root"] else "no root",
                                       "reboot" if c["needs_reboot"] else "no reboot",
                                       f"~{c['minutes_estimate']} min"])]
    out += ["", "Risks:"] + [f"- {r}" for r in p.risks]
    return "\n".join(out) + "\n"


def render_markdown(p: Plan) -> str:
    t = p.target
    out = [f"# Rollback plan to snapshot {t.get('label') or (t.get('id') or '')[:8]}", ""]
    if p.unchanged:
        return "\n".join(out + ["Nothing to do: this environment already matches it.", ""])
    for i, s in enumerate(p.steps, 1):
        marks = " ".join(f"`{m}`" for m, on in (("display-only", s.applicability == "display-only"),
                                                 ("root", s.needs_root), ("reboot", s.needs_reboot)) if on)
        out += [f"{i}. **{s.title}** {marks}".rstrip(), "", "   ```sh", *[f"   {x}" for x in s.command.splitlines()],
                "   ```", ""]
    c = p.cost
    out += ["## Cost", "", f"- Python packages to install: {c['python_packages']}, to remove: {c['python_removed']}",
            f"- OS packages: {c['os_packages']}", f"- download: ~{c['download_mb_estimate']} MB ({c['download_size_source']})",
            f"- root: {'yes' if c['needs_root'] else 'no'}, reboot: {'yes' if c['needs_reboot'] else 'no'}, "
            f"time: ~{c['minutes_estimate']} min", "", "## Risks", ""] + [f"- {r}" for r in p.risks]
    return "\n".join(out) + "\n"


def render_sh(p: Plan) -> str:
    """A POSIX shell script: safe steps run, display-only ones are comments (root / reboot)."""
    t = p.target
    out = ["#!/bin/sh", f"# gpuvet rollback plan to snapshot {t.get('label') or ''} {t.get('id') or ''} ({t.get('created_at', '')})",
           "# Steps marked display-only need root or a reboot: they are printed, commented out, never run.",
           "set -eu", ""]
    for i, s in enumerate(p.steps, 1):
        out.append(f"# {i}. {s.title}")
        if s.applicability == "display-only" or s.kind == "python-remove":
            why = "display-only" + (", needs root" if s.needs_root else "") + (", needs a reboot" if s.needs_reboot else "")
            if s.kind == "python-remove":
                why = "unsafe, in place only: uncomment to remove"
            out.append(f"# ({why})")
            out += [f"# {line}" for line in s.command.splitlines()]
        else:
            out += s.command.splitlines()
        out.append("")
    if p.unchanged:
        out.append("echo 'nothing to do: the environment already matches the snapshot'")
    return "\n".join(out) + "\n"
