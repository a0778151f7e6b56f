"""`gpuvet compat`, `gpuvet recommend` and `gpuvet kb info`: the knowledge base's commands."""
from __future__ import annotations

import json
from typing import Callable

import click

from .common import emit, env_of, make_policy, output_options, policy_options
from .env import GpuvetError


def stack_options(func: Callable) -> Callable:
    """The options that describe a stack (shared by compat and recommend)."""
    opts = [
        click.option("--glibc", metavar="V", help="glibc version of the system (for the manylinux check)."),
        click.option("--nvcc", metavar="V", help="CUDA release of the nvcc that builds extensions (default: --cuda)."),
        click.option("--gcc", metavar="V", help="Host GCC version used with nvcc."),
        click.option("--package", "packages", multiple=True, metavar="NAME==V",
                     help="An installed distribution (torchvision, triton, xformers, numpy ...). Repeatable."),
        click.option("--python", metavar="V", help="Python version, e.g. 3.12."),
        click.option("--gpu", metavar="NAME|ARCH", help="GPU model as the vendor tool prints it (H200, 'AMD Instinct "
                                                         "MI210') or its target (sm_90, gfx90a)."),
        click.option("--driver", metavar="V", help="NVIDIA driver (e.g. 550.54.15) or amdgpu driver version."),
        click.option("--rocm", metavar="V", help="ROCm release of the torch build (its +rocmX.Y wheel line)."),
        click.option("--cuda", metavar="V", help="CUDA release of the torch build (its +cuXYZ wheel line)."),
        click.option("--torch", metavar="V", help="torch version: 2.8, 2.8.0 or 2.8.0+cu128."),
    ]
    for opt in opts:
        func = opt(func)
    return func


def _description(torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc):
    from gpuvet.compat import Description, DescriptionError, parse_package

    try:
        pkgs = [parse_package(p) for p in packages]
    except DescriptionError as exc:
        raise click.BadParameter(str(exc), param_hint="--package") from None
    return Description(torch=torch, cuda=cuda, rocm=rocm, driver=driver, gpu=gpu, python=python,
                       packages=pkgs, gcc=gcc, nvcc=nvcc, glibc=glibc)


@click.command()
@stack_options
@output_options
@policy_options
@click.pass_context
def compat(ctx: click.Context, torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc,
           fmt, output, verbose, stack, select, ignore, ack, fail_on) -> int:
    """Evaluate a described stack (no machine needed) with the checks `gpuvet check` runs.

    Says whether it works, breaks, or is unknown (the knowledge base does not know enough: never a
    guess), which checks decide it, why, and the source.  Exit status 1 when it breaks (at or above
    --fail-on)."""
    from gpuvet import kb as kbmod
    from gpuvet.compat import DescriptionError, evaluate
    from gpuvet.engine import exit_code

    env = env_of(ctx)
    started = env.clock()
    if not any((torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc)):
        raise click.UsageError("describe a stack: give at least one of --torch, --cuda, --rocm, --driver, --gpu, "
                               "--python, --package, --gcc")
    desc = _description(torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc)
    policy = make_policy(select, ignore, ack, fail_on)
    kb = kbmod.load()
    try:
        report = evaluate(desc, kb, policy=policy)
    except DescriptionError as exc:
        raise click.UsageError(str(exc)) from None
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    emit(report, env, fmt, output, verbose, stack)
    return int(exit_code(report, policy.fail_on))


@click.command()
@stack_options
@click.option("--deadline", type=float, default=4.0, show_default=True,
              help="Seconds to wait for the probes (this machine only).")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal",
              show_default=True, help="Output format.")
@click.pass_context
def recommend(ctx: click.Context, torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc,
              deadline, fmt) -> int:
    """The newest torch build that works with this machine's driver and GPU, with its install command.

    Without options it reads this machine; with --gpu/--driver/--python ... it recommends for the
    described one."""
    from gpuvet import kb as kbmod
    from gpuvet.engine import build_report
    from gpuvet.recommend import recommend as do_recommend, render_text

    env = env_of(ctx)
    started = env.clock()
    kb = kbmod.load()
    described = any((torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc))
    if described:
        from gpuvet.compat import DescriptionError, build_facts

        try:
            facts, _ = build_facts(_description(torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc), kb)
        except DescriptionError as exc:
            raise click.UsageError(str(exc)) from None
    else:
        from gpuvet.probes.base import run_probes
        from gpuvet.probes.registry import all_probes

        facts = run_probes(env.system(), all_probes(), deadline=deadline)
    result = do_recommend(facts, kb)
    if fmt == "json":
        report = build_report("recommend", facts, [], kb)
        report.meta["elapsed_s"] = round(env.clock() - started, 3)
        report.extra = result
        emit(report, env, "json", None)
    else:
        env.stdout.write(render_text(result))
    return 0 if result["recommendation"] is not None else 1


@click.group()
def kb() -> None:
    """Knowledge-base information."""


@kb.command("info")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.pass_context
def kb_info(ctx: click.Context, fmt: str) -> int:
    """KB version, date, and what each table covers (releases, GPUs, toolkits)."""
    from gpuvet import kb as kbmod
    from gpuvet.kb import query as q

    env = env_of(ctx)
    k = kbmod.load()
    cov = q.coverage(k)
    if fmt == "json":
        env.stdout.write(json.dumps({"version": k.version, "date": k.date, "tables": cov}, indent=2, default=str) + "\n")
        return 0
    out = [f"gpuvet knowledge base {k.version} ({k.date})", ""]
    for name, info in cov.items():
        out.append(f"{name}: {info['entries']} entries")
        for key, val in info.items():
            if key in ("entries", "description"):
                continue
            if isinstance(val, dict):
                val = "; ".join(f"{k2}: {', '.join(map(str, v2)) if isinstance(v2, list) else v2}" for k2, v2 in val.items())
            elif isinstance(val, list):
                val = ", ".join(map(str, val))
            out.append(f"  {key}: {val}")
    env.stdout.write("\n".join(out) + "\n")
    return 0


__all__ = ["compat", "recommend", "kb", "GpuvetError"]
