"""`gpuvet check`: Click's command (help, usage errors, every option); the body is ``check_run.run_check``,
which the plain invocations reach without Click (``check_run.parse_check_argv``)."""
from __future__ import annotations

import click

from .common import env_of, output_options, policy_options


@click.command()
@click.option("--from", "sources", multiple=True, metavar="FILE",
              help="Check a pasted report instead of this machine: collect_env output, rocminfo, nvidia-smi, "
                   "hipconfig, nvcc, pip list/freeze, or several concatenated. '-' reads standard input. Repeatable.")
@click.option("--python", "python", metavar="PATH", default=None,
              help="Examine the packages of this Python interpreter instead of gpuvet's own (also GPUVET_PYTHON).")
@click.option("--deadline", type=float, default=3.0, show_default=True, help="Seconds to wait for all probes (a hung tool is reported as a time-out).")
@click.option("--show-fixes", is_flag=True, help="Print the fixes of the failed findings as a shell script, in order.")
@click.option("--fix", "apply_fixes", is_flag=True,
              help="Apply the safe fixes (pip steps into the examined environment) after showing them; "
                   "nothing needing root or a reboot is ever applied.")
@click.option("--dry-run", is_flag=True, help="With --fix: show what would be run, run nothing.")
@output_options
@policy_options
@click.pass_context
def check(ctx: click.Context, sources, python, deadline, show_fixes, apply_fixes, dry_run, fmt, output, verbose,
          stack, select, ignore, ack, fail_on, quiet, statistics) -> int:
    """Read every layer of this machine's GPU stack and say which components disagree.

    Prints the stack layer by layer (with where each version was read), the findings (what disagrees
    with what, why it matters, the evidence and the fix) and a health score from 0 to 100."""
    from .check_run import run_check

    return run_check(env_of(ctx), sources=sources, python=python, deadline=deadline, show_fixes=show_fixes,
                     apply_fixes=apply_fixes, dry_run=dry_run, fmt=fmt, output=output, verbose=verbose, stack=stack,
                     select=select, ignore=ignore, ack=ack, fail_on=fail_on, quiet=quiet, statistics=statistics)
