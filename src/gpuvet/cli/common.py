"""Options and helpers shared by the sub-commands."""
from __future__ import annotations

import os
from typing import Any, Callable

import click

from gpuvet.app.env import Environment
from gpuvet.app.inputs import MAX_PASTE_BYTES, looks_binary, read_text_input, stat_input
from gpuvet.model import ExitCode, Report, Severity
from gpuvet.model.errors import GpuvetError

__all__ = ["MAX_PASTE_BYTES", "looks_binary", "read_text_input", "stat_input", "emit", "env_of", "make_policy",
           "format_option", "output_options", "policy_options"]



def format_option(documents: bool = False) -> Callable[[Callable], Callable]:
    """``--format``, its choices from the one format registry (``gpuvet.render.REGISTRY``); ``documents``:
    a document command (rules, kb info, recommend) offers only the formats that render documents."""
    from gpuvet.render import formats

    return click.option("--format", "-f", "fmt", type=click.Choice(formats(documents)), default="terminal",
                        show_default=True, help="Output format.")


def output_options(func: Callable) -> Callable:
    func = click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
                        help="Write the report to this file instead of standard output.")(func)
    func = format_option()(func)
    func = click.option("--verbose", "-v", is_flag=True, help="Also list checks that passed or did not apply.")(func)
    func = click.option("--stack", "stack", is_flag=True,
                        help="Show the whole stack table, with where each row was read.")(func)
    return func


def policy_options(func: Callable) -> Callable:
    func = click.option("--fail-on", "fail_on", default="error", show_default=True,
                        type=click.Choice(["info", "warning", "error", "critical", "never"]),
                        help="Lowest severity of a failed finding that makes the exit status 1.")(func)
    func = click.option("--select", multiple=True, metavar="CODE", help="Only run checks whose code starts with CODE.")(func)
    func = click.option("--ignore", multiple=True, metavar="CODE", help="Skip checks whose code starts with CODE.")(func)
    func = click.option("--ack", "ack", multiple=True, metavar="CODE=REASON",
                        help="Acknowledge a finding: still shown, no longer fails or costs score.")(func)
    return func


def make_policy(select, ignore, ack, fail_on: str):
    from gpuvet.app.engine import Policy

    acks: dict[str, str] = {}
    for item in ack:
        code, sep, reason = item.partition("=")
        if not sep or not reason.strip():
            raise click.BadParameter(f"--ack needs CODE=REASON, got {item!r}", param_hint="--ack")
        acks[code.strip().upper()] = reason.strip()
    sev = Severity.CRITICAL + 1 if fail_on == "never" else Severity.parse(fail_on)
    return Policy(select=tuple(s.upper() for s in select), ignore=tuple(s.upper() for s in ignore),
                  acknowledged=acks, fail_on=sev)  # type: ignore[arg-type]


def emit(report: Report, env: Environment, fmt: str, output: str | None, verbose: bool = False,
         stack: bool = False) -> None:
    from gpuvet.render import render

    color = env.color and output is None and fmt == "terminal"
    text = render(report, fmt, color=color, width=env.width if output is None else 100, verbose=verbose,
                  stack=stack)
    if output:
        tmp = f"{output}.tmp-{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, output)  # never leave a half-written report behind
        except OSError as exc:
            raise GpuvetError(f"cannot write {output}: {exc.strerror or exc}", ExitCode.BAD_INPUT) from None
    else:
        env.stdout.write(text)


def env_of(ctx: click.Context) -> Environment:
    obj: Any = ctx.find_root().obj
    return obj if isinstance(obj, Environment) else Environment()
