"""`gpuvet check`: argv -> CheckOptions -> app.check.run -> render -> exit status."""
from __future__ import annotations

import click

from .common import emit, env_of, make_policy, output_options, policy_options


@click.command()
@click.option("--from", "sources", multiple=True, metavar="FILE",
              help="Check a pasted report instead of this machine: collect_env output, rocminfo, nvidia-smi, "
                   "hipconfig, nvcc, pip list/freeze, or several concatenated. '-' reads standard input. Repeatable.")
@click.option("--python", "python", metavar="PATH", default=None,
              help="Examine the packages of this Python interpreter instead of gpuvet's own (also GPUVET_PYTHON).")
@click.option("--deadline", type=float, default=3.0, show_default=True, help="Seconds to wait for all probes (a hung tool is reported as a time-out).")
@output_options
@policy_options
@click.pass_context
def check(ctx: click.Context, sources, python, deadline, fmt, output, verbose, stack, select, ignore, ack, fail_on) -> int:
    """Read every layer of this machine's GPU stack and say which components disagree.

    Prints the stack layer by layer (with where each version was read), the findings (what disagrees
    with what, why it matters, the evidence and the fix) and a health score from 0 to 100."""
    from gpuvet.app.check import CheckOptions, run
    from gpuvet.app.engine import exit_code

    env = env_of(ctx)
    policy = make_policy(select, ignore, ack, fail_on)
    report = run(CheckOptions(sources=tuple(sources), python=python, deadline=deadline, policy=policy), env)
    emit(report, env, fmt, output, verbose, stack)
    return int(exit_code(report, policy.fail_on))
