"""``diff``: what changed between two snapshots (ids, labels, files, ``good``, ``latest``, ``now``), most
dangerous first, each change linked to the findings it caused or cleared; a Report of findings, so
every output format and the exit status work as for ``check``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuvet.model import Report

from .engine import Policy
from .env import Environment


@dataclass
class DiffOptions:
    a: str = "good"
    b: str = "now"
    db: str | None = None
    python: str | None = None
    deadline: float = 3.0
    policy: Policy = field(default_factory=Policy)


def _ident(doc: dict[str, Any]) -> dict[str, Any]:
    return {"ref": doc.get("_source"), "id": doc.get("id"), "label": doc.get("label"),
            "created_at": doc.get("created_at"), "store_id": doc.get("_store_id"), "score": doc.get("score")}


def run(opts: DiffOptions, env: Environment) -> Report:
    from dataclasses import replace

    from gpuvet.history.diff import diff_findings

    from .snapshot import resolve

    started = env.clock()
    a = resolve(opts.a, env, opts.db, opts.python, opts.deadline)
    b = resolve(opts.b, env, opts.db, opts.python, opts.deadline)
    hint = f"gpuvet rollback --to {opts.a} --into DIR" if opts.a != "now" else None
    findings, changes = diff_findings(a, b, rollback_hint=hint)
    pol = opts.policy
    out = []
    for f in findings:
        if not pol.wants(f.code):
            continue
        if f.code in pol.severity:
            f = replace(f, severity=pol.severity[f.code])
        if f.code in pol.acknowledged and f.failed:
            f = replace(f, acknowledged=pol.acknowledged[f.code])
        out.append(f)
    # keep the diff's own order (most dangerous first); passed categories after the changes
    out.sort(key=lambda f: 0 if f.failed else 1)
    from gpuvet import __version__

    report = Report(command="diff", findings=out, facts=None, score=None,
                    meta={"gpuvet_version": __version__, "a": _ident(a), "b": _ident(b),
                          "elapsed_s": round(env.clock() - started, 3)},
                    extra={"diff": {"a": _ident(a), "b": _ident(b), "changes": [c.to_dict() for c in changes]}})
    return report
