"""``snapshot``: record the whole environment (every fact ``check`` reads, every Python distribution and
where it came from, the dependency tree, the container, the GPU stack's OS packages, the ROCm/CUDA
trees and which is active, the findings and score) as a sealed, versioned document, and keep it in
the history store.  Also: resolving a snapshot reference (id, label, file, ``good``, ``latest``,
``now``) for ``diff``, ``rollback`` and ``report``.
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from gpuvet import __version__
from gpuvet.model import Report
from gpuvet.model.errors import GpuvetError, InputError, UsageError

from .engine import Policy
from .env import Environment


@dataclass
class SnapshotOptions:
    label: str | None = None
    python: str | None = None
    deadline: float = 3.0
    mark_good: bool = False
    container: str | None = None  # --container NAME: docker inspect / diff from the host
    db: str | None = None
    store: bool = True  # False: only build the document (diff ... now, --no-store)
    policy: Policy = field(default_factory=Policy)


@dataclass
class Taken:
    doc: dict[str, Any]
    report: Report  # the check report of that moment
    record: Any = None  # store.SnapshotRecord when stored
    where: str = ""  # the database it was stored in
    elapsed_s: float = 0.0


def _extras(system: Any, container: str | None, out: dict[str, Any]) -> None:
    from gpuvet.probes import pydist, stack_trees

    def guard(key: str, fn, default):
        try:
            out[key] = fn()
        except Exception as exc:  # noqa: BLE001 - a probe bug must not sink the snapshot
            out[key] = default
            out.setdefault("errors", []).append({"probe": f"snapshot.{key}", "message": f"{type(exc).__name__}: {exc}",
                                                  "tables": [], "kind": "error"})

    guard("distributions", lambda: pydist.distributions(system), [])
    guard("os_packages", lambda: stack_trees.os_packages(system), {"manager": "none", "packages": []})
    guard("gpu_trees", lambda: stack_trees.gpu_trees(system), {"trees": []})
    guard("container", lambda: stack_trees.container_identity(system, container), {"inside": False})
    guard("host", lambda: _host(system), {"hostname": ""})


def _host(system: Any) -> dict[str, str]:
    name = (system.read_text("/proc/sys/kernel/hostname", limit=256) or "").strip() or system.hostname()
    out = {"hostname": name}
    mid = (system.read_text("/etc/machine-id", limit=256) or "").strip()
    if mid:
        out["machine_id"] = hashlib.sha256(mid.encode()).hexdigest()  # identifies the machine, reveals nothing
    return out


def _marker_env(py_version: str) -> dict[str, str]:
    from packaging.markers import default_environment

    env = {k: str(v) for k, v in default_environment().items()}
    if py_version:
        env["python_full_version"] = py_version
        env["python_version"] = ".".join(py_version.split(".")[:2])
    return env


def take(opts: SnapshotOptions, env: Environment) -> Taken:
    from gpuvet.history import snapshot as snap
    from gpuvet.probes import pydist
    from gpuvet.store import redact_json, utcnow

    from .check import CheckOptions
    from .check import run as run_check

    if opts.python and not os.access(opts.python, os.X_OK):
        raise UsageError(f"--python {opts.python}: not an executable interpreter")
    if opts.label is not None and (not opts.label.strip() or len(opts.label) > 200 or opts.label.isdigit()
                                   or opts.label in ("good", "latest", "now")):
        raise UsageError(f"--label {opts.label!r}: give 1-200 characters, not only digits, not good/latest/now")
    started = env.clock()
    system = env.system(opts.python)
    extra: dict[str, Any] = {}
    worker = threading.Thread(target=_extras, args=(system, opts.container, extra), name="gpuvet-snapshot", daemon=True)
    worker.start()
    opened: dict[str, Any] = {}
    if opts.store:  # open the database (SQLAlchemy's import, migrations) while the probes wait on tools
        def _open() -> None:
            try:
                store = open_db(opts.db, env)
                store.prepare()  # connect (and create / migrate) now
                opened["store"] = store
            except Exception as exc:  # noqa: BLE001 - re-raised below, in the caller's thread
                opened["error"] = exc

        opener = threading.Thread(target=_open, name="gpuvet-store-open", daemon=True)
        opener.start()
    report = run_check(CheckOptions(python=opts.python, deadline=opts.deadline, policy=opts.policy), env)
    worker.join(max(1.0, opts.deadline + 2))
    if worker.is_alive():
        extra.setdefault("errors", []).append({"probe": "snapshot", "message": "snapshot probes did not finish in time",
                                               "tables": [], "kind": "timeout"})
    py_version = system.python_version()
    dists = extra.get("distributions", [])
    facts = report.facts
    doc: dict[str, Any] = {
        "$schema": snap.SCHEMA_ID, "kind": snap.KIND, "schema_version": snap.SCHEMA_VERSION,
        "id": str(uuid.uuid4()), "created_at": utcnow(), "label": opts.label, "gpuvet_version": __version__,
        "kb": report.meta.get("kb"),
        "host": extra.get("host", {"hostname": ""}),
        "python": {"executable": os.path.abspath(opts.python or env.environ.get("GPUVET_PYTHON") or sys.executable),
                   "version": py_version, "marker_env": _marker_env(py_version)},
        "facts": facts.to_dict() if facts is not None else {},
        "probe_errors": [e.to_dict() for e in (facts.errors if facts is not None else [])] + extra.get("errors", []),
        "distributions": dists,
        "dependency_tree": pydist.dependency_tree(dists, _marker_env(py_version)),
        "container": extra.get("container", {"inside": False}),
        "os_packages": extra.get("os_packages", {"manager": "none", "packages": []}),
        "gpu_trees": extra.get("gpu_trees", {"trees": []}),
        "findings": [f.to_dict() for f in report.findings],
        "score": report.score,
    }
    doc["summary"] = snap.summary(doc)
    doc["elapsed_s"] = round(env.clock() - started, 3)
    doc = snap.seal(redact_json(doc))
    taken = Taken(doc, report, elapsed_s=doc["elapsed_s"])
    if opts.store:
        opener.join()
        with _store_errors():
            if "error" in opened:
                raise opened["error"]
            store = opened["store"]
            taken.record = store.add_snapshot(doc, good=opts.mark_good)
        taken.where = store.where()
        store.close()
    return taken


# -- the store and references ---------------------------------------------------------------------
def open_db(db: str | None, env: Environment):
    from gpuvet.store import open_store

    return open_store(db, env.environ)


class _store_errors:
    def __enter__(self):
        return self

    def __exit__(self, et, exc, tb):
        from gpuvet.store import StoreError

        if isinstance(exc, StoreError):
            raise InputError(str(exc)) from None
        return False


def load_file(path: str, env: Environment) -> dict[str, Any]:
    from gpuvet.history.snapshot import SnapshotError, load_text

    from .inputs import read_text_input

    text, source = read_text_input(path, env, "snapshot", max_bytes=256 * 1024 * 1024)
    try:
        doc = load_text(text, source)
    except SnapshotError as exc:
        raise InputError(str(exc)) from None
    doc["_source"] = source
    return doc


def resolve(ref: str, env: Environment, db: str | None = None, python: str | None = None,
            deadline: float = 3.0) -> dict[str, Any]:
    """A snapshot document for a reference: ``now`` (taken on the spot, not stored), a file path, or
    a store reference (id, label, uid prefix, ``good``, ``latest``)."""
    from gpuvet.history.snapshot import SnapshotError, verify

    if ref == "now":
        doc = take(SnapshotOptions(python=python, deadline=deadline, store=False), env).doc
        doc["_source"] = "now"
        return doc
    path = ref if os.path.isabs(ref) else os.path.join(env.cwd, ref)
    if ("/" in ref or ref.endswith(".json") or os.path.exists(path)) and not ref.isdigit():
        return load_file(path, env)
    store = open_db(db, env)
    with _store_errors():
        rec = store.snapshot(ref)
    store.close()
    try:
        doc = verify(rec.doc, f"snapshot {rec.id} in the history")
    except SnapshotError as exc:
        raise InputError(str(exc)) from None
    doc["_source"] = f"snapshot {rec.id}" + (f" ({rec.label})" if rec.label else "")
    doc["_store_id"] = rec.id
    return doc


def history(db: str | None, env: Environment, limit: int | None = None) -> tuple[list[Any], str]:
    store = open_db(db, env)
    with _store_errors():
        recs = store.snapshots(limit)
        counts = store.run_counts()
    for r in recs:
        r.summary = dict(r.summary, runs=counts.get(r.id, {}))
    where = store.where()
    store.close()
    return recs, where


def mark_good(ref: str, db: str | None, env: Environment):
    store = open_db(db, env)
    with _store_errors():
        rec = store.mark_good(ref)
    store.close()
    return rec


__all__ = ["SnapshotOptions", "Taken", "take", "resolve", "load_file", "history", "mark_good", "GpuvetError"]
