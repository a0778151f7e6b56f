"""Entry point.  Sub-commands live one per module and are imported only when used, so
``gpuvet check`` never pays for diagnose's or the store's imports."""
from __future__ import annotations

import io
import os
import sys
from typing import Sequence

from gpuvet.app.env import Environment
from gpuvet.model import ExitCode
from gpuvet.model.errors import GpuvetError, UsageError

# command name -> (module, attribute, one-line help).  The help text is here so `gpuvet --help` does
# not import every command module.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("gpuvet.cli.check_cmd", "check", "Read every layer of this machine's GPU stack and say which disagree."),
    "diagnose": ("gpuvet.cli.diagnose_cmd", "diagnose", "Name the root cause of a failure from a log or pasted bug report."),
    "run": ("gpuvet.cli.run_cmd", "run_", "Run a command under gpuvet; diagnose it and write a crash bundle if it fails."),
    "compat": ("gpuvet.cli.kb_cmd", "compat", "Evaluate a described stack (no machine needed) against the knowledge base."),
    "recommend": ("gpuvet.cli.kb_cmd", "recommend", "The newest framework build that works here, with its install command."),
    "rules": ("gpuvet.cli.rules_cmd", "rules", "List every check and log signature."),
    "rule": ("gpuvet.cli.rules_cmd", "rule", "Print the documentation of one check."),
    "config": ("gpuvet.cli.config_cmd", "config", "Show the resolved settings and where each came from."),
    "kb": ("gpuvet.cli.kb_cmd", "kb", "Knowledge-base information."),
    "validate": ("gpuvet.cli.validate_cmd", "validate", "Run GPU correctness cases (child processes, time-outs) against float64 references."),
    "bench": ("gpuvet.cli.validate_cmd", "bench", "Microbenchmarks against the GPU's expected peaks; `bench compare A B`."),
    "scan": ("gpuvet.cli.validate_cmd", "scan", "List the operators, ROCm pitfalls and settings a project's code uses (AST, no import)."),
    "snapshot": ("gpuvet.cli.snapshot_cmd", "snapshot", "Record this environment in the history (versions, origins, findings)."),
    "history": ("gpuvet.cli.snapshot_cmd", "history", "List the snapshots in the history store."),
    "mark-good": ("gpuvet.cli.snapshot_cmd", "mark_good", "Pin a snapshot as the good one to return to."),
    "diff": ("gpuvet.cli.history_cmd", "diff", "What changed between two snapshots (or since the good one), most dangerous first."),
    "report": ("gpuvet.cli.history_cmd", "report", "Version report (Markdown/HTML) of this stack; --bundle for a bug report."),
    "rollback": ("gpuvet.cli.history_cmd", "rollback", "Plan (or build into a new venv) the way back to an earlier snapshot."),
}


def __getattr__(name: str):
    """``cli`` (the Click group) and its pieces, imported on first use (Click costs start-up)."""
    if name in ("cli", "LazyGroup", "EXIT_HELP"):
        from . import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    env = env or Environment()
    argv = list(sys.argv[1:] if argv is None else argv)
    from gpuvet.model.redact import redact_text, register_environ

    register_environ(env.environ)  # their values are masked wherever they appear in what gpuvet writes
    global _FAST_RAN
    try:
        fast = None
        if argv[:1] == ["check"]:
            from .check_run import parse_check_argv, run_check

            fast = parse_check_argv(argv, env.environ)
        elif argv[:1] == ["diagnose"]:
            from .diagnose_run import parse_diagnose_argv, run_diagnose

            fast = parse_diagnose_argv(argv, env.environ)
        if fast is not None:  # a plain `gpuvet check ...` / `gpuvet diagnose FILE`: no Click (start-up)
            rv: object = run_check(env, **fast) if argv[0] == "check" else run_diagnose(env, **fast)
            _FAST_RAN = True
        else:
            from .group import cli

            rv = cli.main(args=argv, prog_name="gpuvet", standalone_mode=False, obj=env)
    except (Exception, KeyboardInterrupt) as exc:
        return _failed(exc, env, redact_text)
    return int(rv if isinstance(rv, int) else ExitCode.OK)


def _failed(exc: BaseException, env: Environment, redact_text) -> int:
    """The exit status (and the one line on stderr) for an exception out of a command.  Click's exceptions
    are recognised only when Click was imported: without it, none can have been raised."""
    click = sys.modules.get("click")
    if click is not None:
        if isinstance(exc, click.exceptions.NoArgsIsHelpError):
            env.stdout.write(exc.ctx.get_help() + "\n")
            return int(ExitCode.OK)
        if isinstance(exc, click.UsageError):
            hint = f"\nTry 'gpuvet {exc.ctx.command_path.split(' ', 1)[1] if exc.ctx and ' ' in exc.ctx.command_path else ''} --help'." if exc.ctx else ""
            env.stderr.write(redact_text(f"gpuvet: error: {exc.format_message()}{hint.replace('  ', ' ')}\n"))
            return int(ExitCode.USAGE)
        if isinstance(exc, click.exceptions.Exit):
            return int(exc.exit_code)
        if isinstance(exc, click.Abort):
            env.stderr.write("gpuvet: aborted\n")
            return int(ExitCode.INTERNAL)
        if isinstance(exc, click.ClickException):
            env.stderr.write(redact_text(f"gpuvet: error: {exc.format_message()}\n"))
            return int(ExitCode.BAD_INPUT)
    if isinstance(exc, UsageError):  # raised by a use case (a bad value, not bad syntax): one line, exit 2
        env.stderr.write(redact_text(f"gpuvet: error: {exc}\n"))  # it may echo a value given
        return int(exc.code)
    if isinstance(exc, GpuvetError):
        env.stderr.write(redact_text(f"gpuvet: error: {exc}\n"))
        return int(exc.code)
    if isinstance(exc, KeyboardInterrupt):
        env.stderr.write("gpuvet: interrupted\n")
        return 130
    if isinstance(exc, BrokenPipeError):  # `gpuvet check | head -1`: silent, and the status a pipe writer gets from SIGPIPE
        _silence_stdout()
        return BROKEN_PIPE
    # gpuvet's own bug: one line, plus the traceback only when asked for
    if env.environ.get("GPUVET_DEBUG"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=env.stderr)
    env.stderr.write(f"gpuvet: internal error: {type(exc).__name__}: {exc} "
                     "(set GPUVET_DEBUG=1 for the traceback; please report it)\n")
    return int(ExitCode.INTERNAL)


BROKEN_PIPE = 128 + 13
_FAST_RAN = False  # the last main() ran a plain `gpuvet check` / `gpuvet diagnose` through the fast path (see run)  # 128 + SIGPIPE, what `yes | head -1` reports for yes


class _Closed(io.StringIO):
    """Stands in for a standard stream that is closed (fd 0, 1 or 2 closed when gpuvet started): reading gives
    nothing (stdin is then "closed": one clear error where it is needed), writing is dropped.  A text stream
    (StringIO) to the type checker and to code that asks; every method that touches data is overridden."""

    closed = True

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def write(self, text: str) -> int:
        return len(text)

    def read(self, n: int | None = -1) -> str:
        raise ValueError(f"standard {self.name} is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(f"standard {self.name} is closed")


def _silence_stdout() -> None:
    """After a broken pipe: point fd 1 at /dev/null so the interpreter's final flush stays silent."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def run(exit_now: bool = False) -> int:
    """The process entry point (through ``cli.fast.run``).  ``exit_now``: after a plain ``gpuvet check``
    (the fast path) whose probe threads have all ended, leave with ``os._exit`` once the streams are
    flushed, skipping the interpreter's tear-down (it frees every module and object one by one: ~25 M
    instructions, 5 % of a check, after the report is written).  Not after anything else (a command that
    may still hold an open file, a probe thread still waiting on a hung tool)."""
    global _FAST_RAN
    _FAST_RAN = False
    stdout_closed = sys.stdout is None
    env = Environment(stdin=sys.stdin if sys.stdin is not None else _Closed("input"),
                      stdout=sys.stdout if sys.stdout is not None else _Closed("output"),
                      stderr=sys.stderr if sys.stderr is not None else _Closed("error"))
    code = main(env=env)
    if stdout_closed and code in (0, 1) and sys.argv[1:2] != ["run"] and sys.stderr is not None:
        sys.stderr.write("gpuvet: warning: standard output is closed: the report was not written\n")
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE
    except (OSError, ValueError):
        pass
    if exit_now and _FAST_RAN and not stdout_closed and sys.stderr is not None:
        import threading

        if threading.active_count() == 1:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                return code
            os._exit(code)
    return code
