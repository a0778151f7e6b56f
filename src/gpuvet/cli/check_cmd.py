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
    from gpuvet.app.check import CheckOptions, run
    from gpuvet.app.engine import exit_code

    env = env_of(ctx)
    policy = make_policy(select, ignore, ack, fail_on, env, python)
    python = policy.python
    if dry_run and not apply_fixes:
        raise click.UsageError("--dry-run goes with --fix")
    if apply_fixes and sources:
        raise click.UsageError("--fix changes this machine's environment: it cannot go with --from")
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
