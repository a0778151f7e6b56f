"""`gpuvet config`: the resolved settings and where each came from (ruff's `show-settings`)."""
from __future__ import annotations

import json

import click

from .common import env_of, resolve_settings


@click.command("config")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal",
              show_default=True, help="Output format.")
@click.pass_context
def config(ctx: click.Context, fmt: str) -> int:
    """Show the settings `gpuvet check` would use here and where each came from.

    The configuration is the first `.gpuvet.toml`, `gpuvet.toml` or `pyproject.toml` with a
    `[tool.gpuvet]` table from the current directory upwards (else ~/.config/gpuvet/gpuvet.toml):
    select, ignore, ack (CODE = "reason"), fail-on and python.  The command line wins over
    GPUVET_PYTHON, which wins over the file."""
    env = env_of(ctx)
    s = resolve_settings(env, (), (), (), None, None)
    if fmt == "json":
        env.stdout.write(json.dumps({k: {"value": v.value, "origin": v.origin} for k, v in s.items()},
                                    indent=2, default=list) + "\n")
        return 0
    lines = [f"config file: {s['config'].value or '(none found from ' + env.cwd + ')'}"]
    for key in ("select", "ignore", "fail-on", "python", "ack"):
        st = s[key]
        val = st.value
        if key == "ack":
            shown = "; ".join(f"{c} ({r})" for c, r in val.items()) or "(none)"
        elif isinstance(val, tuple):
            shown = ", ".join(val) or ("(all)" if key == "select" else "(none)")
        else:
            shown = val if val else ("(gpuvet's own interpreter)" if key == "python" else "(none)")
        lines.append(f"{key:8} = {shown}    [{st.origin}]")
    env.stdout.write("\n".join(lines) + "\n")
    return 0
