"""`gpuvet rules` and `gpuvet rule CODE`: every check's documentation, from its docstring."""
from __future__ import annotations

import json
from typing import Any

import click

from .common import env_of
from .env import GpuvetError


def rule_dict(chk: Any) -> dict[str, Any]:
    return {"code": chk.code, "name": chk.name, "severity": chk.severity.name.lower(), "tables": list(chk.tables),
            "cause": chk.cause, "component": chk.component, "summary": chk.summary, "sections": chk.sections()}


def _signatures() -> list[dict[str, Any]]:
    try:
        from gpuvet import kb as kbmod

        return list(kbmod.load().table("signatures"))
    except Exception:  # a missing or broken table must not hide the rules
        return []


def _sig_id(s: dict[str, Any]) -> str:
    return str(s.get("id") or s.get("code") or s.get("name") or "?")


def _sig_summary(s: dict[str, Any]) -> str:
    return str(s.get("title") or s.get("summary") or s.get("description") or s.get("cause") or "")


def render_rule(chk: Any) -> str:
    """A check's page as text (also the body of docs/rules/CODE.md)."""
    out = [f"{chk.code} {chk.name}", "",
           f"Severity: {chk.severity.name.lower()} · cause: {chk.cause} · component: {chk.component} · "
           f"facts: {', '.join(chk.tables)}", ""]
    for head, body in chk.sections().items():
        out.append(head if head.endswith("?") else f"{head}:")
        out.extend("  " + line if line.strip() else "" for line in body.splitlines())
        out.append("")
    return "\n".join(out).rstrip() + "\n"


@click.command()
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.pass_context
def rules(ctx: click.Context, fmt: str) -> int:
    """List every check (code, name, severity, what it does) and every log signature."""
    from gpuvet.checks.registry import all_checks

    env = env_of(ctx)
    checks = all_checks()
    sigs = _signatures()
    if fmt == "json":
        doc = {"checks": [rule_dict(c) for c in checks],
               "signatures": [{"id": _sig_id(s), "summary": _sig_summary(s), "cause": s.get("cause", "")} for s in sigs]}
        env.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0
    width = max((len(c.name) for c in checks), default=10)
    lines = [f"{len(checks)} checks (gpuvet rule CODE for one check's documentation)", ""]
    for c in checks:
        summary = " ".join(c.summary.split())
        if len(summary) > 90:
            summary = summary[:87] + "..."
        lines.append(f"{c.code}  {c.name:<{width}}  {c.severity.name.lower():<8}  {summary}")
    if sigs:
        lines += ["", f"{len(sigs)} log signatures (kb/data/signatures.yaml)", ""]
        for s in sigs:
            lines.append(f"{_sig_id(s)}  {s.get('cause', '')}  {_sig_summary(s)[:90]}")
    env.stdout.write("\n".join(lines) + "\n")
    return 0


@click.command()
@click.argument("code")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.pass_context
def rule(ctx: click.Context, code: str, fmt: str) -> int:
    """Print the documentation of one check (by code, e.g. PKG100, or name) or log signature."""
    from gpuvet.checks.registry import get

    env = env_of(ctx)
    chk = get(code)
    if chk is None:
        sig = next((s for s in _signatures() if _sig_id(s).lower() == code.lower()), None)
        if sig is None:
            raise click.UsageError(f"no check or signature {code!r} (gpuvet rules lists them)")
        env.stdout.write(json.dumps(sig, indent=2, default=str) + "\n" if fmt == "json" else
                         "\n".join(f"{k}: {v}" for k, v in sig.items()) + "\n")
        return 0
    env.stdout.write(json.dumps(rule_dict(chk), indent=2) + "\n" if fmt == "json" else render_rule(chk))
    return 0


__all__ = ["rules", "rule", "render_rule", "GpuvetError"]
