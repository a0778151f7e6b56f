"""`gpuvet compat`, `gpuvet recommend` and `gpuvet kb info`: argv -> options -> app -> render -> exit."""
from __future__ import annotations

from typing import Callable

import click

from gpuvet.model.errors import GpuvetError

from .common import (
    emit,
    env_of,
    format_option,
    make_policy,
    output_options,
    policy_options,
)


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
    from gpuvet.app.compat import Description, DescriptionError, parse_package

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
           fmt, output, verbose, stack, select, ignore, ack, fail_on, quiet, statistics) -> int:
    """Evaluate a described stack (no machine needed) with the checks `gpuvet check` runs.

    Says whether it works, breaks, or is unknown (the knowledge base does not know enough: never a
    guess), which checks decide it, why, and the source.  Exit status 1 when it breaks (at or above
    --fail-on)."""
    from gpuvet.app.compat import CompatOptions, run
    from gpuvet.app.engine import exit_code

    env = env_of(ctx)
    desc = _description(torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc)
    policy = make_policy(select, ignore, ack, fail_on, env)
    report = run(CompatOptions(desc, policy), env)
    emit(report, env, fmt, output, verbose, stack, quiet, statistics)
    return int(exit_code(report, policy.fail_on))


@click.command()
@stack_options
@click.option("--deadline", type=float, default=4.0, show_default=True,
              help="Seconds to wait for the probes (this machine only).")
@format_option(documents=True)
@click.pass_context
def recommend(ctx: click.Context, torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc,
              deadline, fmt) -> int:
    """The newest torch build that works with this machine's driver and GPU, with its install command.

    Without options it reads this machine; with --gpu/--driver/--python ... it recommends for the
    described one."""
    from gpuvet.app.recommend import RecommendOptions, run

    env = env_of(ctx)
    described = any((torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc))
    desc = _description(torch, cuda, rocm, driver, gpu, python, packages, gcc, nvcc, glibc) if described else None
    report = run(RecommendOptions(desc, deadline), env)
    emit(report, env, fmt, None)
    return 0 if report.extra["recommendation"] is not None else 1


@click.group()
def kb() -> None:
    """Knowledge-base information."""


@kb.command("info")
@format_option(documents=True)
@click.pass_context
def kb_info(ctx: click.Context, fmt: str) -> int:
    """KB version, date, and what each table covers (releases, GPUs, toolkits)."""
    from gpuvet.app.rules import kb_info as run

    env = env_of(ctx)
    emit(run(env), env, fmt, None)
    return 0


__all__ = ["compat", "recommend", "kb", "GpuvetError"]
