"""`gpuvet check`: read every layer of the stack (or a pasted report) and say which disagree."""
from __future__ import annotations

import os

import click

from .common import emit, env_of, make_policy, output_options, policy_options, read_text_input
from .env import GpuvetError


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
    env = env_of(ctx)
    started = env.clock()
    policy = make_policy(select, ignore, ack, fail_on)
    if sources:
        from gpuvet.model import Facts
        from gpuvet.probes.pasted import parse_report

        facts = Facts(origin="pasted")
        for src in sources:
            text, name = read_text_input(src, env, "report")
            try:
                facts.merge(parse_report(text, name))
            except ValueError as exc:
                raise GpuvetError(str(exc)) from None
        facts.origin = "pasted"
        probing = None
    else:
        import threading

        from gpuvet.probes.base import run_probes
        from gpuvet.probes.registry import all_probes

        if python and not os.access(python, os.X_OK):
            raise GpuvetError(f"--python {python}: not an executable interpreter")
        result: dict = {}
        system = env.system(python)
        probes = all_probes()
        # probe in the background while the checks and the KB load: the probes mostly wait on tools
        probing = threading.Thread(target=lambda: result.update(facts=run_probes(system, probes, deadline=deadline)),
                                   name="gpuvet-probes", daemon=True)
        probing.start()
    from gpuvet import kb as kbmod
    from gpuvet.checks.registry import all_checks
    from gpuvet.engine import build_report, exit_code, run_checks

    kb = kbmod.load()
    checks = all_checks()
    if probing is not None:
        probing.join()
        facts = result["facts"]
    findings = run_checks(facts, checks, kb, policy, {"live": not sources})
    report = build_report("check", facts, findings, kb)
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    emit(report, env, fmt, output, verbose, stack)
    return int(exit_code(report, policy.fail_on))
