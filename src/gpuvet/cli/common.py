"""Options and helpers shared by the sub-commands."""
from __future__ import annotations

import os
import stat
from typing import Any, Callable

import click

from gpuvet.model import ExitCode, Report, Severity

from .env import Environment, GpuvetError

MAX_PASTE_BYTES = 32 * 1024 * 1024  # a pasted bug report is kilobytes; refuse anything past this


def output_options(func: Callable) -> Callable:
    func = click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
                        help="Write the report to this file instead of standard output.")(func)
    func = click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json", "markdown", "junit", "html"]),
                        default="terminal", show_default=True, help="Output format.")(func)
    func = click.option("--verbose", "-v", is_flag=True, help="Also list checks that passed or did not apply.")(func)
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
    from gpuvet.engine import Policy

    acks: dict[str, str] = {}
    for item in ack:
        code, sep, reason = item.partition("=")
        if not sep or not reason.strip():
            raise click.BadParameter(f"--ack needs CODE=REASON, got {item!r}", param_hint="--ack")
        acks[code.strip().upper()] = reason.strip()
    sev = Severity.CRITICAL + 1 if fail_on == "never" else Severity.parse(fail_on)
    return Policy(select=tuple(s.upper() for s in select), ignore=tuple(s.upper() for s in ignore),
                  acknowledged=acks, fail_on=sev)  # type: ignore[arg-type]


def emit(report: Report, env: Environment, fmt: str, output: str | None, verbose: bool = False) -> None:
    from gpuvet.render import render

    color = env.color and output is None and fmt == "terminal"
    text = render(report, fmt, color=color, width=env.width, verbose=verbose)
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


def read_text_input(path: str, env: Environment, what: str = "input",
                    max_bytes: int = MAX_PASTE_BYTES) -> tuple[str, str]:
    """Read a pasted report (a file or '-' for stdin) fully, refusing what is not text.

    Returns (text, source name).  Raises GpuvetError (one line, exit 3) for a directory, a missing or
    unreadable file, empty input, binary data, or more than ``max_bytes``."""
    if path == "-":
        stream = getattr(env.stdin, "buffer", env.stdin)
        data = stream.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        source = "<stdin>"
    else:
        st = stat_input(path, what)
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            raise GpuvetError(f"{what} {path} is {st.st_size / 2**20:.0f} MiB; a pasted report is expected "
                              f"to be under {max_bytes // 2**20} MiB (use `gpuvet diagnose` for large logs)")
        try:
            with open(path, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise GpuvetError(f"cannot read {what} {path}: {exc.strerror}") from None
        source = path
    if len(data) > max_bytes:
        raise GpuvetError(f"{what} {source} is larger than {max_bytes // 2**20} MiB; a pasted report is expected to be smaller")
    if not data.strip():
        raise GpuvetError(f"{what} {source} is empty")
    if looks_binary(data):
        raise GpuvetError(f"{what} {source} is binary data, not text output of a tool")
    return data.decode("utf-8", errors="replace"), source


def stat_input(path: str, what: str) -> os.stat_result:
    """os.stat of an input file, or a one-line GpuvetError for a missing/unreadable path or a directory."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise GpuvetError(f"cannot read {what} {path}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise GpuvetError(f"{what} {path} is a directory, not a file")
    return st


def looks_binary(data: bytes, sample: int = 8192) -> bool:
    head = data[:sample]
    if b"\x00" in head:
        return True
    ctrl = sum(1 for b in head if b < 9 or 13 < b < 32 and b != 27)
    return len(head) > 0 and ctrl / len(head) > 0.10


def env_of(ctx: click.Context) -> Environment:
    obj: Any = ctx.find_root().obj
    return obj if isinstance(obj, Environment) else Environment()
