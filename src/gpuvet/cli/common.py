"""Options and helpers shared by the sub-commands."""
from __future__ import annotations

from typing import Any, Callable

import click

from gpuvet.app.env import Environment
from gpuvet.app.inputs import MAX_PASTE_BYTES, looks_binary, read_text_input, stat_input

from .policy import emit, known_codes, make_policy, resolve_settings, validate_codes

__all__ = ["MAX_PASTE_BYTES", "looks_binary", "read_text_input", "stat_input", "emit", "env_of", "make_policy",
           "format_option", "output_options", "policy_options", "known_codes", "resolve_settings", "validate_codes"]


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
    func = click.option("--fail-on", "fail_on", default=None,
                        type=click.Choice(["info", "warning", "error", "critical", "never"]),
                        help="Lowest severity of a failed finding that makes the exit status 1 [default: error, "
                             "or fail-on in the configuration].")(func)
    func = click.option("--select", multiple=True, metavar="CODE", shell_complete=complete_code,
                        help="Only run checks whose code starts with CODE.")(func)
    func = click.option("--ignore", multiple=True, metavar="CODE", shell_complete=complete_code,
                        help="Skip checks whose code starts with CODE.")(func)
    func = click.option("--ack", "ack", multiple=True, metavar="CODE=REASON",
                        help="Acknowledge a finding: still shown, no longer fails or costs score.")(func)
    func = click.option("-q", "--quiet", "quiet", is_flag=True,
                        help="One line per failed finding (WHERE:CODE: message), nothing else.")(func)
    func = click.option("--statistics", is_flag=True, help="Count the failed findings per code.")(func)
    return func


def complete_code(ctx, param, incomplete: str):
    from click.shell_completion import CompletionItem

    return [CompletionItem(c) for c in known_codes(False) if c.startswith(incomplete.upper())]


def env_of(ctx: click.Context) -> Environment:
    obj: Any = ctx.find_root().obj
    return obj if isinstance(obj, Environment) else Environment()
