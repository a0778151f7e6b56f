"""``check``: read every layer of this machine's stack (or pasted reports) and say which disagree."""
from __future__ import annotations

from dataclasses import dataclass, field

from gpuvet.model import Report

from .engine import Policy
from .env import Environment
from .facts import DEFAULT_DEADLINE, pasted_facts, start_live_facts
from .inputs import read_text_input


@dataclass
class CheckOptions:
    sources: tuple[str, ...] = ()  # pasted reports (paths, '-' for stdin); empty: this machine
    python: str | None = None  # another interpreter whose packages to examine
    deadline: float = DEFAULT_DEADLINE
    policy: Policy = field(default_factory=Policy)


def run(opts: CheckOptions, env: Environment) -> Report:
    from gpuvet import kb as kbmod
    from gpuvet.checks.registry import all_checks

    from .engine import build_report, run_checks

    started = env.clock()
    if opts.sources:
        facts = pasted_facts(read_text_input(src, env, "report") for src in opts.sources)
        wait = None
    else:
        wait = start_live_facts(env, opts.python, opts.deadline)
    kb = kbmod.load()
    checks = all_checks()
    if wait is not None:
        facts = wait()
    findings = run_checks(facts, checks, kb, opts.policy, {"live": not opts.sources})
    report = build_report("check", facts, findings, kb)
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    return report
