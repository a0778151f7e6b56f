"""The process entry point (``gpuvet`` and ``python -m gpuvet``).  ``gpuvet run [OPTIONS] -- CMD`` with plain
options starts CMD without importing Click or the model: the wrapper's start-up is paid by every wrapped job
(it was ~0.1 s of CPU, more than a 1-second job may spend on it), so this path reads run's few options itself
and imports only ``gpuvet.app.run`` (standard library on its pass-through path).  Anything else, or anything
it does not understand (``--help``, an unknown or malformed option, a missing command, a closed standard
stream), goes to the full Click command line (``gpuvet.cli.main``), which gives the same result and error
messages as always.  The full path's options and this parser's are pinned together by tests/test_run_fast.py.
"""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gpuvet.app.run_start import RunOptions, Started

FLAGS = {"--debug": ("debug", True), "--here": ("here", True), "--no-here": ("here", False)}
VALUED = ("--timeout", "--bundle", "--log-cap")


def parse_run(args: list[str]) -> RunOptions | None:
    """``run``'s arguments (after ``run``) as options, or None: let Click parse them (and say what is wrong)."""
    from gpuvet.app.run_start import DEFAULT_LOG_CAP, GRACE_S, RunOptions, parse_size

    opts: dict = {"timeout": None, "debug": False, "bundle": None, "here": True, "log_cap": DEFAULT_LOG_CAP}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break  # the command (Click stops at the first argument: allow_interspersed_args is off)
        if a in FLAGS:
            key, val = FLAGS[a]
            opts[key] = val
            i += 1
            continue
        name, eq, value = a.partition("=")
        if name not in VALUED:
            return None  # --help, -h, an unknown option (Click passes those to the command): Click decides
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        try:
            if name == "--timeout":
                t = float(value)
                if not t > 0 or t != t or t == float("inf"):
                    return None
                opts["timeout"] = t
            elif name == "--log-cap":
                opts["log_cap"] = parse_size(value)
            else:
                if not value or (os.path.exists(value) and not os.path.isdir(value)):
                    return None  # click.Path(file_okay=False) refuses a file: its message
                opts["bundle"] = value
        except ValueError:
            return None
    argv = args[i:]
    if not argv:
        return None
    try:
        grace = float(os.environ.get("GPUVET_RUN_GRACE", "") or GRACE_S)
    except ValueError:
        grace = GRACE_S
    return RunOptions(argv=argv, grace=grace, **opts)


def run(exit_now: bool = True) -> int:
    """The entry point.  ``exit_now``: after a fast `gpuvet run`, leave at once with the child's status
    (``os._exit`` once our streams are flushed), skipping the interpreter's tear-down, which frees every object
    (the knowledge base the prefilter loaded, the capture) one by one: tens of milliseconds after the job has
    already ended, for nothing (gpuvet registers no atexit work; its files are written and closed by then)."""
    argv = sys.argv[1:]
    if exit_now and argv[:1] == ["check"]:
        # a check is one short pass that leaves no garbage cycles worth collecting: the cyclic collector's
        # passes over the objects the imports create were ~11 M instructions of its start-up (2.7 %)
        import gc

        gc.disable()
    if argv[:1] == ["run"] and None not in (sys.stdin, sys.stdout, sys.stderr):
        try:
            opts = parse_run(argv[1:])
            cwd = os.getcwd() if opts is not None else ""
        except Exception:  # noqa: BLE001 - whatever this parser trips on, the full command line reports
            opts = None
        if opts is not None:
            # the job starts now, before the supervision is even imported: its start-up and gpuvet's overlap
            from gpuvet.app.run_start import start

            started = start(opts.argv, os.environ, _fd_open(0))
            code = _run(opts, cwd, started)
            if exit_now:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except (OSError, ValueError):  # a closed or broken stream never changes the child's status
                        pass
                os._exit(code)
            return code
    from gpuvet.cli.main import run as full

    return full(exit_now=exit_now)


def _fd_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _run(opts: RunOptions, cwd: str, started: Started | None = None) -> int:
    from gpuvet.app.run import RunEnv, run

    env = RunEnv(sys.stdin, sys.stdout, sys.stderr, dict(os.environ), cwd, started)
    try:
        return run(opts, env).exit_status
    except KeyboardInterrupt:
        sys.stderr.write("gpuvet: interrupted\n")
        return 130
    except Exception as exc:  # gpuvet's own bug: one line, as the full command line says it
        if started is not None:
            started.abandon()
        if os.environ.get("GPUVET_DEBUG"):
            import traceback

            traceback.print_exc(file=sys.stderr)
        from gpuvet.model.redact import redact_text

        sys.stderr.write(redact_text(f"gpuvet: internal error: {type(exc).__name__}: {exc} "
                                     "(set GPUVET_DEBUG=1 for the traceback; please report it)\n"))
        return 4
