"""Use cases: validate, bench, bench compare, scan.  Options + Environment -> Report.

(Moves to ``gpuvet/app/validate.py`` with the app layer.)
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from gpuvet.model import Evidence, ExitCode, Facts, Finding, Outcome, Report, Severity

from gpuvet.model.errors import GpuvetError

from .env import Environment


@dataclass
class ValidateOptions:
    kind: str = "validate"  # validate | bench
    level: str = "quick"
    python: str | None = None
    device: str = "auto"
    cases: tuple[str, ...] = ()
    inject: tuple[str, ...] = ()
    ops_from: str | None = None
    against: str | None = None
    save: bool = True
    db: str | None = None
    snapshot: str | None = None
    case_timeout: float | None = None
    timeout_scale: float = 1.0
    html: str | None = None
    params: dict[str, dict[str, Any]] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def interpreter(python: str | None, env: Environment) -> str:
    py = python or env.environ.get("GPUVET_PYTHON") or sys.executable
    if not os.path.isfile(py) or not os.access(py, os.X_OK):
        raise GpuvetError(f"--python {py}: not an executable interpreter", ExitCode.USAGE)
    return py


def parse_inject(items: tuple[str, ...]) -> tuple[list[str], dict[str, Any]]:
    """--inject segfault,hang,... and sleep:CASE=SECONDS -> (fault names, worker inject dict)."""
    from gpuvet.validate.cases import BY_NAME, FAULTS

    faults: list[str] = []
    inject: dict[str, Any] = {}
    for item in items:
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            if part.startswith("sleep:"):
                case, sep, secs = part[6:].partition("=")
                try:
                    s = float(secs)
                except ValueError:
                    s = -1
                if not sep or case not in BY_NAME or s < 0:
                    raise GpuvetError(f"--inject {part!r}: expected sleep:CASE=SECONDS with a known case", ExitCode.USAGE)
                inject.setdefault("sleep", {})[case] = s
            elif part in FAULTS:
                faults.append(part)
            else:
                raise GpuvetError(f"--inject {part!r}: choose from {', '.join(FAULTS)} or sleep:CASE=SECONDS",
                                  ExitCode.USAGE)
    return faults, inject


def select_cases(opts: ValidateOptions, env: Environment):
    from gpuvet.validate import cases as cat

    faults, _ = parse_inject(opts.inject)
    scan_info = None
    if opts.cases:
        unknown = [c for c in opts.cases if c not in cat.BY_NAME]
        if unknown:
            raise GpuvetError(f"--case {unknown[0]}: unknown case (gpuvet validate --list shows them)", ExitCode.USAGE)
        specs = [cat.BY_NAME[c] for c in opts.cases]
    elif opts.ops_from:
        res = scan(opts.ops_from)
        scan_info = {"path": opts.ops_from, "ops": sorted(res.ops), "dtypes": sorted(res.dtypes), "files": res.files}
        specs = cat.for_ops(res.ops)
        want = {d for d in res.dtypes if d in ("fp32", "tf32", "fp16", "bf16")} | {"fp32"}
        for s in specs:
            if s.dtypes:
                opts.params.setdefault(s.name, {})["dtypes"] = sorted(want)
    else:
        specs = cat.for_level("bench" if opts.kind == "bench" else opts.level)
    # injected faults run first: the real cases after them show that the run carries on
    specs = cat.faults(faults) + [s for s in specs if s.level != "fault"]
    return specs, scan_info


def scan(path: str):
    from gpuvet import kb as kbmod
    from gpuvet.validate.scan import scan_paths

    if not os.path.exists(path):
        raise GpuvetError(f"cannot read {path}: No such file or directory")
    return scan_paths([path], kbmod.load().table("code_patterns"))


def open_store(db: str | None, env: Environment):
    from gpuvet.store import StoreError
    from gpuvet.store import open_store as _open

    try:
        return _open(url=db, environ=env.environ)
    except StoreError as exc:
        raise GpuvetError(str(exc)) from None


def load_run(ref: str, env: Environment, db: str | None, kind: str | None = None) -> dict[str, Any]:
    """A run record from a JSON report file, a run id, 'latest', or 'good' (the newest run on the
    snapshot marked good).  A stored run carries ``_history``: up to five earlier runs of its kind on the
    same snapshot (or with no snapshot, on the same host), for the run-to-run noise band."""
    from gpuvet.validate.record import from_report_json, from_store

    if os.path.isfile(ref):
        try:
            with open(ref, encoding="utf-8") as fh:
                return from_report_json(fh.read(), ref)
        except (OSError, ValueError) as exc:
            raise GpuvetError(str(exc)) from None
    from gpuvet.store import StoreError

    store = open_store(db, env)
    try:
        if ref.isdigit():
            rec = store.run(int(ref))
        elif ref == "latest":
            runs = store.runs(kind=kind, limit=1)
            if not runs:
                raise GpuvetError(f"no {kind or ''} run in the history ({store.where()})".replace("  ", " "))
            rec = runs[0]
        else:
            snap = store.snapshot(ref)
            runs = store.runs(kind=kind, snapshot_id=snap.id, limit=1)
            if not runs:
                raise GpuvetError(f"snapshot {ref} ({snap.id}) has no {kind or ''} run to compare with".replace("  ", " "))
            rec = runs[0]
        out = from_store(rec)
        siblings = [r for r in store.runs(kind=rec.kind, snapshot_id=rec.snapshot_id, limit=20)
                    if r.id < rec.id and r.host == rec.host and r.status == "ok"][:5]
        out["_history"] = [from_store(r) for r in siblings]
        return out
    except StoreError as exc:
        raise GpuvetError(str(exc)) from None


def run_validate(opts: ValidateOptions, env: Environment,
                 progress: Callable[[str, Any, Any], None] | None = None) -> Report:
    from gpuvet import kb as kbmod
    from gpuvet.app.engine import build_report
    from gpuvet.validate import record as rec_mod
    from gpuvet.validate.compare import compare_runs
    from gpuvet.validate.findings import findings_for
    from gpuvet.validate.peaks import peak_rows
    from gpuvet.validate.runner import Runner, RunOptions

    python = interpreter(opts.python, env)
    specs, scan_info = select_cases(opts, env)
    _, inject = parse_inject(opts.inject)
    baseline = load_run(opts.against, env, opts.db, kind=opts.kind) if opts.against else None
    started, t0 = _now(), time.monotonic()
    runner = Runner(RunOptions(python=python, device=opts.device, inject=inject, case_timeout=opts.case_timeout,
                               timeout_scale=opts.timeout_scale, environ=dict(env.environ), params=opts.params),
                    progress=progress)
    results = runner.run(specs)
    findings = findings_for(results, runner.framework_error)
    dist_record = _distributed(results, findings, env)  # topology + misconfigurations (validate/distributed.py)
    kb = kbmod.load()
    fw = runner.framework or {}
    record: dict[str, Any] = {
        "schema": rec_mod.SCHEMA, "kind": opts.kind,
        "level": ("cases" if opts.cases else "ops-from" if opts.ops_from else opts.level) if opts.kind == "validate" else "bench",
        "started_at": started, "finished_at": _now(), "elapsed_s": round(time.monotonic() - t0, 3),
        "python": python, "host": env.system().hostname(), "framework": fw, "framework_error": runner.framework_error,
        "workers_started": runner.workers_started, "inject": {"faults": parse_inject(opts.inject)[0], **inject},
        "cases": results}
    if scan_info:
        record["ops_from"] = scan_info
    if dist_record:
        record["distributed"] = dist_record
    rows, pfind = peak_rows(results, fw.get("device_name"), kb.table("gpu_peaks"))
    if rows:
        record["peaks"] = rows
        findings += pfind
    if baseline is not None:
        crow, cfind = compare_runs(baseline, record, baseline.pop("_history", None))
        record["baseline"] = {"ref": opts.against, "run_id": baseline.get("run_id"),
                              "started_at": baseline.get("started_at"), "rows": crow}
        findings += cfind
    if opts.save:
        record["run_id"], record["snapshot_id"] = _save(record, opts, env)
    report = build_report(opts.kind, Facts(origin="validate"), findings, kb,
                          level=record["level"], python=python, framework=fw)
    report.meta["elapsed_s"] = record["elapsed_s"]
    report.extra["validate"] = record
    if opts.html:
        write_html(report, opts.html)
    return report


def _distributed(results: list[dict[str, Any]], findings: list[Finding], env: Environment) -> dict[str, Any] | None:
    """For a distributed case that ran: topology facts recorded, misconfiguration findings added."""
    from gpuvet.validate import distributed as dist

    ran = [r for r in results if r.get("case") == "distributed"]
    if not ran:
        return None
    topo = dist.topology(env.environ)
    for res in ran:
        extra = dist.findings(res, topo, env.environ)
        for i, f in enumerate(findings):  # a hang: NCCL/RCCL's own lines from the rank's log join its evidence
            if f.code == "VAL002" and f.title.startswith("distributed "):
                findings[i] = dist.with_debug_lines(f, res)
        findings += extra
    return {"topology": topo}


def _save(record: dict[str, Any], opts: ValidateOptions, env: Environment) -> tuple[int | None, int | None]:
    from gpuvet.store import StoreError
    from gpuvet.validate import record as rec_mod

    store = open_store(opts.db, env)
    try:
        snap_id = None
        if opts.snapshot:
            snap_id = store.snapshot(opts.snapshot).id
        else:  # the newest snapshot of the interpreter that was examined, when one was taken
            for s in store.snapshots(limit=50):
                if s.python and os.path.realpath(s.python) == os.path.realpath(record["python"]):
                    snap_id = s.id
                    break
        meta = {k: v for k, v in record.items() if k not in ("cases", "kind", "level", "started_at", "finished_at")}
        run_id = store.add_run(record["kind"], snap_id, record["cases"], started_at=record["started_at"],
                               finished_at=record["finished_at"], status=rec_mod.status(record["cases"]),
                               level=record["level"], summary=rec_mod.summary(record["cases"]), meta=meta)
        return run_id, snap_id
    except StoreError as exc:
        raise GpuvetError(str(exc)) from None


def run_compare(a: str, b: str, env: Environment, db: str | None = None, html: str | None = None) -> Report:
    from gpuvet import kb as kbmod
    from gpuvet.app.engine import build_report
    from gpuvet.validate.compare import compare_runs

    base, new = load_run(a, env, db), load_run(b, env, db)
    new.pop("_history", None)
    rows, findings = compare_runs(base, new, base.pop("_history", None))
    record = dict(new)
    record["baseline"] = {"ref": a, "run_id": base.get("run_id"), "started_at": base.get("started_at"), "rows": rows}
    report = build_report("bench compare", Facts(origin="validate"), findings, kbmod.load(), base=a, new=b)
    report.extra["validate"] = record
    if html:
        write_html(report, html)
    return report


def write_html(report: Report, path: str) -> None:
    from gpuvet.app.output import write_output
    from gpuvet.render import render

    write_output(path, render(report, "html"))


# ---------------------------------------------------------------------------------------------- scan
SCAN_CODES = {"operator": "VAL020", "rocm": "VAL021", "setting": "VAL022", "env": "VAL023"}


def run_scan(paths: tuple[str, ...], env: Environment, backend: str | None = None) -> Report:
    from gpuvet import kb as kbmod
    from gpuvet.app.engine import build_report
    from gpuvet.validate.findings import finding
    from gpuvet.validate.scan import scan_paths

    for p in paths:
        if not os.path.exists(p):
            raise GpuvetError(f"cannot read {p}: No such file or directory")
    kb = kbmod.load()
    entries = kb.table("code_patterns")
    res = scan_paths(list(paths), entries)
    findings: list[Finding] = []
    groups: dict[tuple[str, str], list] = {}
    for h in res.hits:
        if h.kind == "dtype":
            continue
        groups.setdefault((h.kind, h.name), []).append(h)
    for (kind, name), hits in sorted(groups.items()):
        e = entries[hits[0].entry] if hits[0].entry is not None else {}
        code = SCAN_CODES[kind]
        on_stack = ""
        if backend == "rocm" and e.get("on_rocm"):
            on_stack = " On this stack (ROCm): " + e["on_rocm"]
        elif backend == "cuda" and e.get("on_cuda"):
            on_stack = " On this stack (CUDA): " + e["on_cuda"]
        elif backend != "rocm" and e.get("on_rocm"):
            on_stack = " On ROCm: " + e["on_rocm"]
        sev = Severity.INFO
        outcome = Outcome.FAILED
        if kind == "rocm":
            sev = Severity.ERROR if backend == "rocm" else Severity.WARNING
        elif kind == "env" and any(k in name for k in ("ALLOC_CONF", "MEMORY_CACHING")):
            sev = Severity.WARNING
        where = f"{len(hits)} place(s)"
        val = next((h.value for h in hits if h.value is not None), None)
        title = {"operator": f"uses {name} ({where}); validate with `gpuvet validate --case {e.get('case', '')}`",
                 "rocm": f"{name} ({where}){': ' + repr(val) if val else ''}",
                 "setting": f"sets {name}{' = ' + val if val else ''} in code ({where})",
                 "env": f"sets {name}{'=' + val if val else ''} through os.environ ({where})"}[kind]
        ev = [Evidence(h.source, source=f"{h.path}:{h.line}") for h in hits[:6]]
        if e.get("source"):
            ev.append(Evidence(f"source: {e['source']}", source="kb code_patterns"))
        findings.append(finding(code, outcome, title, why=e.get("what", "") + on_stack, evidence=ev, severity=sev))
    report = build_report("scan", Facts(origin="scan"), findings, kb, paths=list(paths), backend=backend)
    report.extra["scan"] = {"files": res.files, "ops": sorted(res.ops), "dtypes": sorted(res.dtypes),
                            "errors": [{"path": p, "error": e} for p, e in res.errors], "truncated": res.truncated,
                            "hits": [h.to_dict() for h in res.hits]}
    return report


def detect_backend(env: Environment, python: str | None) -> str | None:
    """rocm | cuda | cpu from the examined interpreter's torch build (read, never imported); None if absent."""
    try:
        import shutil

        from gpuvet.probes.framework import probe_frameworks

        if python and os.sep not in python:  # a bare name such as python3: the one on PATH
            python = shutil.which(python, path=env.environ.get("PATH")) or python
        system = env.system(python)
        paths = system.python_paths() if hasattr(system, "python_paths") else None
        for r in probe_frameworks(system, paths):
            if r.table == "framework_builds" and r.values.get("name") == "torch":
                return str(r.values.get("variant") or "") or None
    except Exception:  # a probe problem leaves the backend unknown, never fails the scan
        return None
    return None
