"""`gpuvet rules` and `gpuvet rule CODE`: argv -> app.rules -> render (every check's documentation)."""
from __future__ import annotations

import click

from gpuvet.model.errors import GpuvetError

from .common import emit, env_of, format_option


@click.command()
@format_option(documents=True)
@click.pass_context
def rules(ctx: click.Context, fmt: str) -> int:
    """List every check (code, name, severity, what it does) and every log signature."""
    from gpuvet.app.rules import list_rules

    env = env_of(ctx)
    emit(list_rules(env), env, fmt, None)
    return 0


@click.command()
@click.argument("code")
@format_option(documents=True)
@click.pass_context
def rule(ctx: click.Context, code: str, fmt: str) -> int:
    """Print the documentation of one check (by code, e.g. PKG100, or name) or log signature."""
    from gpuvet.app.rules import show_rule

    env = env_of(ctx)
    emit(show_rule(code, env), env, fmt, None)
    return 0


__all__ = ["rules", "rule", "GpuvetError"]
