"""`gpuvet run [--timeout S] [--debug] [--bundle DIR] [--log-cap SIZE] -- CMD ...`: run a command under gpuvet.

The child's standard output and standard error pass through unchanged, in blocks, as they come.  When the
child fails (non-zero exit, killed by a signal, or still running after --timeout) gpuvet diagnoses the
output it saw, prints the diagnosis on standard error, and writes a crash bundle directory (0700, files
0600, every text redacted):

    output.log       the child's output (both streams, in arrival order; the first and last --log-cap/2 bytes)
    command.json     argv (secrets masked), exit status / signal / timeout, duration, GPU-related variables
    facts.json       facts found in the output and, where readable, this machine's live facts
    diagnosis.json   the ranked diagnoses (the same document as `gpuvet diagnose --format json`)
    gpu-state.txt    nvidia-smi / rocm-smi / amd-smi output where those tools exist
    backtrace.txt    for a hung child: native backtrace via rocgdb / cuda-gdb / gdb (and py-spy) when installed
    debug-output.log with --debug: the output of the re-run with the vendors' synchronous/logging switches

The supervision itself lives in ``gpuvet.app.run``; this module parses argv and returns the status.
"""
from __future__ import annotations

import click

from .common import env_of

EPILOG = ("Exit status: the child's exit status; 128+N if it was killed by signal N (SIGINT, SIGTERM and SIGHUP "
          "sent to gpuvet are passed on to it); 124 if stopped after --timeout; 127 if it could not be started; "
          "2 usage error.  GPUVET_RUN_GRACE: seconds a signalled command gets before it is killed (default 10).")


def parse_size(text: str) -> int:
    from gpuvet.app.run import parse_size as size_of

    try:
        return size_of(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--log-cap") from None


@click.command(name="run", epilog=EPILOG, context_settings={"ignore_unknown_options": True,
                                                            "allow_interspersed_args": False})
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Treat the command as hung after this many seconds: take a backtrace, stop it, diagnose.")
@click.option("--debug", is_flag=True,
              help="On failure, re-run once with AMD_SERIALIZE_KERNEL=3, AMD_LOG_LEVEL=3, CUDA_LAUNCH_BLOCKING=1, "
                   "TORCH_SHOW_CPP_STACKTRACES=1, NCCL_DEBUG=INFO, ... so the error points at the real call.")
@click.option("--bundle", "bundle", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Crash bundle directory (default: ./gpuvet-crash-YYYYmmdd-HHMMSS, or under "
                   "$XDG_STATE_HOME/gpuvet/crash when the working directory is not writable).")
@click.option("--log-cap", "log_cap", default="8M", show_default=True, metavar="SIZE",
              help="Most bytes of output kept in output.log and for the diagnosis (the first and the last half).")
@click.option("--here/--no-here", default=True, show_default=True,
              help="Add this machine's live facts to the diagnosis of a failure.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- CMD [ARGS]...")
@click.pass_context
def run_(ctx: click.Context, timeout, debug, bundle, log_cap, here, command) -> int:
    """Run CMD under gpuvet; its output passes through unchanged.  If it fails (non-zero exit, signal, or hang
    past --timeout) gpuvet diagnoses the output, prints the diagnosis on standard error and writes a crash bundle."""
    from gpuvet.app.run import GRACE_S, RunOptions, run

    env = env_of(ctx)
    argv = list(command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise click.UsageError("give the command to run after --")
    if timeout is not None and not timeout > 0:
        raise click.BadParameter("must be a positive number of seconds", param_hint="--timeout")
    try:
        grace = float(env.environ.get("GPUVET_RUN_GRACE", "") or GRACE_S)
    except ValueError:
        grace = GRACE_S
    opts = RunOptions(argv=argv, timeout=timeout, debug=debug, bundle=bundle, here=here, log_cap=parse_size(log_cap),
                      grace=grace)
    return run(opts, env).exit_status
