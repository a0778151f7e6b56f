"""`gpuvet check`'s body, and its fast path: the plain invocations users run (``gpuvet check``,
``--format json``, ``--fail-on``, ``--verbose``, ...) are parsed here without importing Click.

Click, its ``inspect``/``uuid``/``datetime``/``gettext`` imports and the building of the command's options
cost about 53 M instructions, 8 % of a whole ``gpuvet check`` on the 2-CPU VM (bench/results/).  The fast
parser takes only what it can parse exactly as Click does (tests/test_check_speed.py compares both on
every form it accepts); anything else (``--help``, an unknown or misspelt option, a value Click would
refuse, ``--fix``, ``--ack``, ``-o``, ``--deadline``, shell completion) returns None and goes through Click,
so help and every usage error stay Click's.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from gpuvet.app.env import Environment

from .argv import scan
from .policy import emit, make_policy

FAIL_ON = ("info", "warning", "error", "critical", "never")

# the parameters of the ``check`` command, with Click's defaults
DEFAULTS: dict[str, Any] = {
    "sources": (), "python": None, "deadline": 3.0, "show_fixes": False, "apply_fixes": False, "dry_run": False,
    "fmt": "terminal", "output": None, "verbose": False, "stack": False, "select": (), "ignore": (), "ack": (),
    "fail_on": None, "quiet": False, "statistics": False,
}
_FLAGS = {"--verbose": "verbose", "-v": "verbose", "--stack": "stack", "--quiet": "quiet", "-q": "quiet",
          "--statistics": "statistics", "--show-fixes": "show_fixes"}
_VALUES = {"--format": "fmt", "-f": "fmt", "--fail-on": "fail_on", "--python": "python"}
_MULTI = {"--from": "sources", "--select": "select", "--ignore": "ignore"}
_MULTI_KEYS = frozenset(_MULTI.values())


def parse_check_argv(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``check`` command's parameters from ``argv`` (``['check', ...]``), exactly as Click would
    parse them, or None when this parser does not take the invocation (Click then handles it)."""
    if not argv or argv[0] != "check" or "_GPUVET_COMPLETE" in environ:
        return None
    from gpuvet.render import formats

    pairs = scan(argv[1:], _FLAGS, {**_VALUES, **_MULTI})
    if pairs is None:
        return None
    params = dict(DEFAULTS)
    multi: dict[str, list[str]] = {}
    for key, value in pairs:
        if key is None:  # no plain word without positional=True; kept for the type
            return None
        if key in _MULTI_KEYS:
            multi.setdefault(key, []).append(str(value))
            continue
        if key == "fmt" and value not in formats():
            return None
        if key == "fail_on" and value not in FAIL_ON:
            return None
        params[key] = value
    for key, values in multi.items():
        params[key] = tuple(values)
    return params


def usage_error(message: str) -> Exception:
    import click

    return click.UsageError(message)


def run_check(env: Environment, *, sources, python, deadline, show_fixes, apply_fixes, dry_run, fmt, output, verbose,
              stack, select, ignore, ack, fail_on, quiet, statistics) -> int:
    from gpuvet.app.check import CheckOptions, run
    from gpuvet.app.engine import exit_code

    policy = make_policy(select, ignore, ack, fail_on, env, python)
    python = policy.python
    if dry_run and not apply_fixes:
        raise usage_error("--dry-run goes with --fix")
    if apply_fixes and sources:
        raise usage_error("--fix changes this machine's environment: it cannot go with --from")
    report = run(CheckOptions(sources=tuple(sources), python=python, deadline=deadline, policy=policy), env)
    if show_fixes or apply_fixes:
        from gpuvet.app import fixes

        steps = fixes.plan(report)
        target = report.meta.get("python") or "the examined environment"
        env.stdout.write(fixes.script(steps, f"gpuvet check fixes for {target}"))
        if apply_fixes:
            env.stdout.flush() if hasattr(env.stdout, "flush") else None
            if fixes.apply(steps, env.system(python), dry_run, env.stderr.write):
                return 1
        return int(exit_code(report, policy.fail_on)) if not apply_fixes or dry_run else 0
    emit(report, env, fmt, output, verbose, stack, quiet, statistics)
    return int(exit_code(report, policy.fail_on))
