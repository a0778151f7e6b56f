"""``check``: read every layer of this machine's stack (or pasted reports) and say which disagree."""
from __future__ import annotations

from dataclasses import field
from typing import Any

from gpuvet.model import Report
from gpuvet.model.record import record

from .engine import Policy, stamp
from .env import Environment
from .facts import DEFAULT_DEADLINE, start_live_facts
from .inputs import read_text_input


@record
class CheckOptions:
    """The options of one ``gpuvet check``."""

    sources: tuple[str, ...] = ()  # pasted reports (paths, '-' for stdin); empty: this machine
    python: str | None = None  # another interpreter whose packages to examine
    deadline: float = DEFAULT_DEADLINE
    policy: Policy = field(default_factory=Policy)


def run(opts: CheckOptions, env: Environment) -> Report:
    from gpuvet import kb as kbmod
    from gpuvet.checks.registry import all_checks

    from .engine import build_report, retarget_fixes, run_checks

    started, started_wall = env.clock(), env.wall_clock()
    inputs: list[dict] = []
    if opts.sources:
        facts, inputs = pasted_inputs([read_text_input(src, env, "report") for src in opts.sources])
        wait = None
    else:
        wait = start_live_facts(env, opts.python, opts.deadline)
    kb = kbmod.load()
    checks = all_checks()
    if wait is not None:
        facts = wait()
    findings = run_checks(facts, checks, kb, opts.policy, {"live": not opts.sources})
    findings = retarget_fixes(findings, examined_python(opts, env))
    report = build_report("check", facts, findings, kb)
    report.meta["python"] = examined_python(opts, env)
    usable = report.extra.get("usable")
    chosen = opts.python or env.environ.get("GPUVET_PYTHON")
    if chosen and not opts.sources and isinstance(usable, dict) and usable.get("state") == "no-framework":
        # the user already pointed at an interpreter: name it, do not send them to --python again
        usable["text"] = f"no framework in the environment of {chosen}: check the one your job uses"
    if inputs:
        report.meta["inputs"] = inputs
        if len(inputs) == 1:
            report.meta["input"] = inputs[0]["source"]
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    return stamp(report, env, started_wall, started, live=not opts.sources)


def examined_python(opts: CheckOptions, env: Environment) -> str:
    """The interpreter whose environment the fixes change: --python / GPUVET_PYTHON, gpuvet's own for a
    live check, and a plain ``python`` for pasted text (the machine it came from is not this one)."""
    import sys

    if opts.sources:
        return "python"
    return opts.python or env.environ.get("GPUVET_PYTHON") or sys.executable


def pasted_inputs(texts: list[tuple[str, str]]) -> tuple[Any, list[dict[str, Any]]]:
    """The facts of several pasted files: each file read on its own, what it was recognised as (or
    that it was not), and one error (exit 3) only when no file held anything recognisable.

    A gpuvet JSON report (``--format json``) is read back as the facts it holds."""
    import json

    from gpuvet.model import Facts
    from gpuvet.model.errors import InputError
    from gpuvet.probes.pasted import _dedupe, parse_report

    facts = Facts(origin="pasted")
    inputs: list[dict] = []
    origins: set[str] = set()
    for text, source in texts:
        entry: dict = {"source": source}
        doc = None
        if text.lstrip().startswith("{"):
            try:
                doc = json.loads(text)
            except ValueError:
                doc = None
        if isinstance(doc, dict) and isinstance(doc.get("facts"), dict) and "schema_version" in doc:
            try:
                got = Facts.from_dict(doc["facts"], doc.get("probe_errors") or [])
            except ValueError as exc:
                entry.update(recognised=False, note=f"a gpuvet report whose facts cannot be read: {exc}")
                inputs.append(entry)
                continue
            origins.add(str((doc.get("meta") or {}).get("facts_origin") or "live"))
            entry.update(recognised=True, tables=sorted({r.table for r in got.rows}), note="a gpuvet JSON report")
        else:
            try:
                got = parse_report(text, source)
            except ValueError:
                entry.update(recognised=False, note="no tool output recognised in it")
                inputs.append(entry)
                continue
            origins.add("pasted")
            entry.update(recognised=True, tables=sorted({r.table for r in got.rows} | set(got.probed)))
        facts.merge(got)
        inputs.append(entry)
    if not any(e["recognised"] for e in inputs):
        names = ", ".join(e["source"] for e in inputs)
        raise InputError(f"{names}: no recognisable tool output (expected collect_env, rocminfo, rocm-smi, amd-smi, "
                         "nvidia-smi, hipconfig, hipcc/nvcc --version, pip list/freeze, env, torch/version.py, "
                         "a gpuvet JSON report, or bug-report text naming versions)")
    # the same GPU named by collect_env and by nvidia-smi, pasted as two files, is one GPU
    facts.rows = _dedupe(facts.rows)
    # a saved live report stays a live report (its facts were probed on the machine); text is pasted
    facts.origin = "live" if origins == {"live"} else "pasted"
    return facts, inputs
