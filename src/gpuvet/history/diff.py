"""What changed between two snapshots, most dangerous first, each change linked to the findings it
caused or cleared; the result is a list of findings so every format and the exit status work.

Order (and default severity): driver, runtime (ROCm/CUDA release, HIP/CUDA runtime, compilers, the
active ROCm/CUDA tree), framework build (version, its CUDA/HIP, variant, channel), GPU targets (the
GPUs present and the architectures the build carries), math libraries (the copy the loader picks),
OS packages of the GPU stack, companions and extensions, other Python packages, configuration
(environment, container, OS, groups, device nodes).  Volatile facts (free memory, temperatures,
utilisation, clocks, uptime, PIDs, file counts of caches, timestamps, where a row was read) never
count as changes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from gpuvet.model import Evidence, Finding, Fix, Applicability, Outcome, Severity

# (category, code, kebab-case name, severity, title when nothing changed)
CATEGORIES: tuple[tuple[str, str, str, Severity], ...] = (
    ("driver", "DIF001", "driver-changed", Severity.ERROR),
    ("runtime", "DIF002", "runtime-changed", Severity.ERROR),
    ("framework", "DIF003", "framework-build-changed", Severity.ERROR),
    ("gpu-targets", "DIF004", "gpu-targets-changed", Severity.WARNING),
    ("math-libraries", "DIF005", "math-library-changed", Severity.WARNING),
    ("os-packages", "DIF006", "os-package-changed", Severity.WARNING),
    ("companions", "DIF007", "companion-package-changed", Severity.WARNING),
    ("packages", "DIF008", "python-package-changed", Severity.INFO),
    ("configuration", "DIF009", "configuration-changed", Severity.INFO),
)
UNEXPLAINED = ("DIF010", "finding-changed-without-recorded-change")
RANK = {c[0]: i for i, c in enumerate(CATEGORIES)}
BY_CATEGORY = {c[0]: c for c in CATEGORIES}

# the finding components of the cause taxonomy -> the category of change that can explain them
COMPONENT_CATEGORY = {
    "driver": ("driver",), "runtime": ("runtime", "os-packages"), "framework-build": ("framework", "gpu-targets"),
    "system-library": ("math-libraries", "os-packages"), "companion-package": ("companions", "framework"),
    "extension": ("companions", "framework"), "config-env": ("configuration",), "container": ("configuration",),
}

VOLATILE_COLUMN = re.compile(
    r"(^source$|free|used|temp|util|uptime|pid|timestamp|_at$|elapsed|clock|power|fan|^files$|load|"
    r"^mtime$|^atime$|^ctime$)", re.I)
# companions and extensions: packages built against (or pinned to) a framework build
COMPANION = re.compile(
    r"^(torch.*|triton|pytorch-triton.*|xformers|flash-attn.*|bitsandbytes|apex|deepspeed|vllm|jax.*|"
    r"tensorflow.*|tf-keras|onnxruntime.*|cupy.*|mmcv.*|detectron2|auto-gptq|transformer-engine.*|"
    r"nvidia-.*|amd-.*|rocm-.*|hip-python.*|apex|megatron.*|fbgemm-gpu.*|torchrec|tensorrt.*|"
    r"mamba-ssm|causal-conv1d|liger-kernel|sglang|llama-cpp-python)$")
FRAMEWORKS = ("torch", "jax", "jaxlib", "tensorflow", "tensorflow-rocm", "tensorflow-cpu", "paddlepaddle-gpu")

# fact table -> (category, identity columns)
TABLE_KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "drivers": ("driver", ("vendor", "component")),
    "runtimes": ("runtime", ("vendor", "name")),
    "compilers": ("runtime", ("name",)),
    "framework_builds": ("framework", ("name",)),
    "gpu_devices": ("gpu-targets", ("vendor", "index")),
    "libraries": ("math-libraries", ("name",)),
    "shared_libraries": ("math-libraries", ("soname", "requested_by")),
    "env_vars": ("configuration", ("name",)),
    "containers": ("configuration", ("kind",)),
    "os_info": ("configuration", ()),
    "user": ("configuration", ()),
    "device_nodes": ("configuration", ("path",)),
    "kernel_caches": ("configuration", ("name", "path")),
}
FRAMEWORK_TARGET_COLUMNS = ("targets", "partial_targets", "targets_source")


@dataclass
class Change:
    category: str
    subject: str  # what changed: "torch", "driver amd kernel-module", "env HSA_OVERRIDE_GFX_VERSION"
    before: str | None  # None: added
    after: str | None  # None: removed
    detail: list[str] = field(default_factory=list)  # column-level changes: "cuda: 12.1 -> 12.4"
    source: str = ""  # the fact table or snapshot section
    caused: list[str] = field(default_factory=list)  # finding codes now failing that this change explains
    cleared: list[str] = field(default_factory=list)  # finding codes no longer failing
    names: tuple[str, ...] = ()  # words that tie findings to this change (package names, versions)

    @property
    def kind(self) -> str:
        return "added" if self.before is None else "removed" if self.after is None else "changed"

    def text(self) -> str:
        if self.before is None:
            s = f"{self.subject} {self.after} added"
        elif self.after is None:
            s = f"{self.subject} {self.before} removed"
        else:
            s = f"{self.subject} {self.before} -> {self.after}"
        links = [f"{c} now fails" for c in self.caused] + [f"{c} no longer fails" for c in self.cleared]
        return s + (": " + ", ".join(links) if links else "")

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "subject": self.subject, "kind": self.kind, "before": self.before,
                "after": self.after, "detail": self.detail, "source": self.source, "caused": self.caused,
                "cleared": self.cleared}


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return ",".join(str(x) for x in v) if v else "(none)"
    if v is None or v == "":
        return "(none)"
    return str(v)


def _stable(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not VOLATILE_COLUMN.search(k)}


def _keyed(rows: Iterable[Mapping[str, Any]], key: tuple[str, ...], table: str) -> dict[tuple, dict[str, Any]]:
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        if table == "libraries" and r.get("selected") is False:
            continue  # a shadowed copy: the loader does not pick it
        k = tuple(str(r.get(c, "")) for c in key)
        if k in out:  # several rows with one identity (two ROCm trees): tell them apart by path
            k = k + (str(r.get("path", "")),)
        out[k] = _stable(r)
    return out


def _version_col(table: str) -> str | None:
    return {"drivers": "version", "runtimes": "version", "compilers": "version", "framework_builds": "version",
            "libraries": "version", "gpu_devices": "arch", "env_vars": "value", "shared_libraries": "path",
            "device_nodes": "mode", "containers": "detail", "kernel_caches": "writable"}.get(table)


def _subject(table: str, key: tuple, row: Mapping[str, Any]) -> str:
    label = {"drivers": "driver", "runtimes": "", "compilers": "", "framework_builds": "", "gpu_devices": "GPU",
             "libraries": "", "shared_libraries": "loader:", "env_vars": "env", "containers": "container",
             "os_info": "OS", "user": "user", "device_nodes": "device", "kernel_caches": "cache"}.get(table, table)
    parts = [p for p in key if p]
    return " ".join([label] + parts).strip() if parts else label or table


def fact_changes(fa: Mapping[str, list], fb: Mapping[str, list]) -> list[Change]:
    changes: list[Change] = []
    for table, (category, key) in TABLE_KEYS.items():
        if table not in fa and table not in fb:
            continue
        if table not in fa or table not in fb:
            continue  # one side never collected it: not a change of the machine
        a, b = _keyed(fa[table], key, table), _keyed(fb[table], key, table)
        for k in sorted(set(a) | set(b)):
            ra, rb = a.get(k), b.get(k)
            if ra == rb:
                continue
            vcol = _version_col(table)
            row = rb or ra or {}
            subject = _subject(table, k, row)
            if table == "env_vars":
                subject = f"env {k[0]}"
            before = None if ra is None else _fmt(ra.get(vcol)) if vcol else "present"
            after = None if rb is None else _fmt(rb.get(vcol)) if vcol else "present"
            detail = []
            if ra is not None and rb is not None:
                for col in sorted(set(ra) | set(rb)):
                    if ra.get(col) != rb.get(col) and col not in key:
                        detail.append(f"{col}: {_fmt(ra.get(col))} -> {_fmt(rb.get(col))}")
            cat = category
            if table == "framework_builds" and ra is not None and rb is not None and \
                    all(d.split(":")[0] in FRAMEWORK_TARGET_COLUMNS for d in detail):
                cat = "gpu-targets"  # same build, other kernels (a rebuilt wheel)
            if before == after and detail:
                before, after = detail[0].split(": ", 1)[1].split(" -> ")
                subject = f"{subject} {detail[0].split(':')[0]}"
            names = tuple(str(x) for x in (*k, row.get("name", ""), ra and ra.get(vcol or ""), rb and rb.get(vcol or "")) if x)
            changes.append(Change(cat, subject, before, after, detail, f"facts.{table}", names=names))
            if table == "framework_builds" and ra is not None and rb is not None:
                ta, tb = set(ra.get("targets") or []), set(rb.get("targets") or [])
                if ta != tb and cat != "gpu-targets":
                    changes.append(Change("gpu-targets", f"{k[0]} GPU targets", _fmt(sorted(ta)), _fmt(sorted(tb)),
                                          [f"lost: {_fmt(sorted(ta - tb))}", f"gained: {_fmt(sorted(tb - ta))}"],
                                          "facts.framework_builds", names=(k[0],)))
    return changes


def _dist_map(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in doc.get("distributions") or [] if not d.get("shadowed")}


def _origin_text(d: Mapping[str, Any]) -> str:
    du = d.get("direct_url") or {}
    return d.get("origin", "") + (f" {du.get('url')}" if du.get("url") else "")


def distribution_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    da, db = _dist_map(a), _dist_map(b)
    out: list[Change] = []
    for name in sorted(set(da) | set(db)):
        x, y = da.get(name), db.get(name)
        if x and y and x.get("version") == y.get("version") and _origin_text(x) == _origin_text(y) \
                and x.get("wheel_tags") == y.get("wheel_tags"):
            continue
        cat = "framework" if name in FRAMEWORKS else "companions" if COMPANION.match(name) else "packages"
        if cat == "framework" and x and y and x.get("version") != y.get("version"):
            cat = "framework-dist"  # reported by facts.framework_builds already; kept only when facts lack it
        detail = []
        if x and y:
            if _origin_text(x) != _origin_text(y):
                detail.append(f"origin: {_origin_text(x) or '(none)'} -> {_origin_text(y) or '(none)'}")
            if x.get("wheel_tags") != y.get("wheel_tags"):
                detail.append(f"wheel tags: {_fmt(x.get('wheel_tags'))} -> {_fmt(y.get('wheel_tags'))}")
        before = x.get("version") if x else None
        after = y.get("version") if y else None
        if before == after:
            before, after = (detail[0].split(": ", 1)[1].split(" -> ") if detail else (before, after))
        out.append(Change(cat, name, before, after, detail, "distributions",
                          names=(name, str(x and x.get("version") or ""), str(y and y.get("version") or ""))))
    return out


def os_package_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    pa = {p["name"]: p.get("version", "") for p in (a.get("os_packages") or {}).get("packages", [])}
    pb = {p["name"]: p.get("version", "") for p in (b.get("os_packages") or {}).get("packages", [])}
    return [Change("os-packages", f"package {n}", pa.get(n), pb.get(n), [], "os_packages", names=(n,))
            for n in sorted(set(pa) | set(pb)) if pa.get(n) != pb.get(n)]


def tree_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    def active(doc):
        return {t["vendor"]: f"{t['path']} ({t.get('version') or '?'})"
                for t in (doc.get("gpu_trees") or {}).get("trees", []) if t.get("active")}

    def present(doc):
        return {t["path"]: t.get("version", "") for t in (doc.get("gpu_trees") or {}).get("trees", [])}

    out = []
    aa, ab = active(a), active(b)
    for vendor in sorted(set(aa) | set(ab)):
        if aa.get(vendor) != ab.get(vendor):
            name = "ROCm" if vendor == "amd" else "CUDA"
            out.append(Change("runtime", f"active {name} tree", aa.get(vendor), ab.get(vendor), [], "gpu_trees",
                              names=(name.lower(),)))
    pa, pb = present(a), present(b)
    for p in sorted(set(pa) | set(pb)):
        if pa.get(p) != pb.get(p) and p not in ("/opt/rocm", "/usr/local/cuda"):
            out.append(Change("runtime", f"tree {p}", pa.get(p) if p in pa else None, pb.get(p) if p in pb else None,
                              [], "gpu_trees", names=(p,)))
    return out


def container_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    out = []
    ca, cb = a.get("container") or {}, b.get("container") or {}
    for key in ("image", "id"):
        if ca.get(key) != cb.get(key) and (ca.get(key) or cb.get(key)):
            out.append(Change("configuration", f"container {key}", ca.get(key), cb.get(key), [], "container"))
    ha, hb = ca.get("host_view") or {}, cb.get("host_view") or {}
    for key in ("image", "image_id"):
        if ha.get(key) != hb.get(key) and ha and hb:
            out.append(Change("configuration", f"container {key} (docker inspect)", ha.get(key), hb.get(key), [],
                              "container.host_view"))
    return out


def _failed(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for f in doc.get("findings") or []:
        if f.get("outcome") == "failed":
            out.setdefault(f["code"], f)
    return out


def _finding_words(f: Mapping[str, Any]) -> str:
    parts = [f.get("title", ""), f.get("why", "")] + [e.get("text", "") for e in f.get("evidence") or []]
    return " ".join(parts).lower()


def link_findings(changes: list[Change], a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Attach each finding that started or stopped failing to the changes that explain it: a change
    whose package/version is named in the finding, else the most dangerous change of the categories
    the finding's component belongs to.  Returns (unexplained new failures, unexplained cleared)."""
    fa, fb = _failed(a), _failed(b)
    unexplained: tuple[list[str], list[str]] = ([], [])
    for codes, side, attr, slot in ((sorted(set(fb) - set(fa)), fb, "caused", 0),
                                    (sorted(set(fa) - set(fb)), fa, "cleared", 1)):
        for code in codes:
            f = side[code]
            words = _finding_words(f)
            cats = COMPONENT_CATEGORY.get(f.get("component", ""), ())
            named = [c for c in changes if any(n and len(n) > 2 and n.lower() in words for n in c.names)]
            pick = [c for c in named if not cats or c.category in cats] or named
            if not pick:
                pick = [c for c in changes if c.category in cats][:1]
            if not pick:
                unexplained[slot].append(code)
            for c in pick:
                getattr(c, attr).append(code)
    return unexplained


def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[list[Change], list[str], list[str]]:
    """All changes from snapshot ``a`` to ``b``, most dangerous first, linked to findings."""
    changes = fact_changes(a.get("facts") or {}, b.get("facts") or {})
    changes += tree_changes(a, b) + os_package_changes(a, b) + container_changes(a, b)
    dist = distribution_changes(a, b)
    have_fw = {c.subject for c in changes if c.source == "facts.framework_builds"}
    for c in dist:
        if c.category in ("framework-dist", "framework"):
            if c.subject in have_fw:
                continue  # facts.framework_builds already says it, with the build's CUDA/HIP
            c.category = "framework"
        changes.append(c)
    changes.sort(key=lambda c: (RANK[c.category], c.subject))
    new_unexplained, cleared_unexplained = link_findings(changes, a, b)
    return changes, new_unexplained, cleared_unexplained


def diff_findings(a: Mapping[str, Any], b: Mapping[str, Any], rollback_hint: str | None = None) -> tuple[list[Finding], list[Change]]:
    """The diff as findings: one failed finding per change (severity of its category, raised to error
    when it made a check fail), one passed finding per category without change, and DIF010 for
    findings that started failing with no recorded change to explain them."""
    changes, new_unexplained, cleared_unexplained = compare(a, b)
    findings: list[Finding] = []
    fb = _failed(b)
    for category, code, name, sev in CATEGORIES:
        mine = [c for c in changes if c.category == category]
        if not mine:
            findings.append(Finding(code=code, name=name, severity=sev, outcome=Outcome.PASSED,
                                    title=f"{category.replace('-', ' ')}: unchanged", cause="other", component=category))
            continue
        for c in mine:
            s = sev
            if c.caused:
                s = max(sev, max((Severity.parse(fb[x].get("severity", "error")) for x in c.caused if x in fb),
                                 default=Severity.ERROR), Severity.ERROR)
            ev = [Evidence(f"before: {c.before if c.before is not None else '(absent)'}", a.get("_source", "A")),
                  Evidence(f"after: {c.after if c.after is not None else '(absent)'}", b.get("_source", "B"))]
            ev += [Evidence(d, c.source) for d in c.detail[:8]]
            for x in c.caused:
                if x in fb:
                    ev.append(Evidence(f"{x} now fails: {fb[x].get('title', '')}", "findings"))
            fixes = (Fix(f"return to the earlier stack: {rollback_hint}", Applicability.DISPLAY_ONLY, rollback_hint),) \
                if rollback_hint and c.caused else ()
            findings.append(Finding(code=code, name=name, severity=s, outcome=Outcome.FAILED, title=c.text(),
                                    why=_why(category), evidence=tuple(ev), fixes=fixes, cause="other",
                                    component=category))
    for code in new_unexplained:
        f = fb[code]
        findings.append(Finding(code=UNEXPLAINED[0], name=UNEXPLAINED[1],
                                severity=Severity.parse(f.get("severity", "warning")), outcome=Outcome.FAILED,
                                title=f"{code} now fails, and no recorded change explains it: {f.get('title', '')}",
                                why="A check started failing although the snapshots show no change of the layer it "
                                    "reads: something outside the snapshot changed (hardware, firmware, a file), or the "
                                    "knowledge base judged it differently.", cause="other", component="findings"))
    return findings, changes


def _why(category: str) -> str:
    return {
        "driver": "A driver change can break every framework build on the machine and usually needs a reboot to undo.",
        "runtime": "The framework's kernels were built for one runtime; another release can fail to load or run them.",
        "framework": "A different framework build changes the CUDA/HIP it was compiled for and every operator.",
        "gpu-targets": "Kernels missing for this GPU's architecture fail at the first launch.",
        "math-libraries": "Another cuDNN/cuBLAS/MIOpen/rocBLAS copy can change results, speed or fail to load.",
        "os-packages": "OS packages of the GPU stack are the runtime and libraries every framework loads.",
        "companions": "Companions and extensions are built against one framework build and break with another.",
        "packages": "Other packages rarely break the GPU stack, but they are what a rollback must restore.",
        "configuration": "Environment variables and the container steer which devices, libraries and kernels are used.",
    }.get(category, "")
