"""`gpuvet diagnose`'s body, and its fast path: the plain invocations (``gpuvet diagnose FILE``, ``--format
json``, ``-v``, ``--here``) are parsed here without importing Click, as ``check_run.py`` does for ``check``.

Importing Click (with its ``inspect``/``uuid``/``platform``/``datetime``/``gettext`` imports) and building the
command cost ~35 ms of a ~0.2 s diagnosis of a pasted report, one process per case.  The fast parser takes only
what it parses exactly as Click does (tests/test_diagnose_fast.py compares both on every form it accepts);
anything else (``--help``, an unknown or misspelt option, a value Click would refuse, ``-o``, ``--follow``,
``--wait``, a second file, ``--``, shell completion) returns None and goes through Click, so help and every
usage error stay Click's.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from gpuvet.app.env import Environment
from gpuvet.model import ExitCode

from .argv import scan
from .policy import emit

# the parameters of the ``diagnose`` command, with Click's defaults
DEFAULTS: dict[str, Any] = {"log": None, "here": False, "follow": None, "wait_s": None, "fmt": "terminal",
                            "output": None, "verbose": False, "no_grep": False}
_FLAGS = {"--verbose": "verbose", "-v": "verbose", "--here": "here", "--no-grep": "no_grep"}
_VALUES = {"--format": "fmt", "-f": "fmt"}


def parse_diagnose_argv(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``diagnose`` command's parameters from ``argv`` (``['diagnose', ...]``), exactly as Click would
    parse them, or None when this parser does not take the invocation (Click then handles it)."""
    if not argv or argv[0] != "diagnose" or "_GPUVET_COMPLETE" in environ:
        return None
    from gpuvet.render import formats

    pairs = scan(argv[1:], _FLAGS, _VALUES, positional=True)
    if pairs is None:
        return None
    params = dict(DEFAULTS)
    for key, value in pairs:
        if key is None:  # the one FILE (``-``: standard input)
            if params["log"] is not None:
                return None  # Click: "Got unexpected extra argument"
            params["log"] = value
        elif key == "fmt" and value not in formats():
            return None
        else:
            params[key] = value
    if params["log"] is None:
        return None  # no FILE: Click's path says what is missing
    return params


def run_diagnose(env: Environment, *, log, here, follow, wait_s, fmt, output, verbose, no_grep) -> int:
    from gpuvet.app.diagnose import DiagnoseOptions, run

    report = run(DiagnoseOptions(log=log, follow=follow, wait_s=wait_s, here=here, fast=not no_grep), env)
    if report is None:
        env.stderr.write(f"gpuvet: no diagnosis in {follow} after {wait_s:g}s\n")
        return int(ExitCode.OK)
    emit(report, env, fmt, output, verbose)
    return int(diagnose_exit(report))


def diagnose_exit(report) -> ExitCode:
    """1 only when the stack is at fault: a diagnosis whose component is not the user's own code."""
    diags = report.extra.get("diagnoses") or []
    if diags and diags[0].get("cause") == "none":
        return ExitCode.OK  # probably not a stack problem (rank._honest_none): the stack causes after it are guesses
    stack = [d for d in diags if d.get("component") != "user-code"]
    return ExitCode.FINDINGS if stack else ExitCode.OK
