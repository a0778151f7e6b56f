"""`gpuvet diff`, `gpuvet rollback`: argv -> app.diff / app.rollback -> render -> exit status."""
from __future__ import annotations

import json

import click

from .common import emit, env_of, make_policy, output_options, policy_options
from .snapshot_cmd import db_option, write_atomic


@click.command()
@click.argument("a", metavar="A", default="good")
@click.argument("b", metavar="B", default="now")
@click.option("--python", "python", metavar="PATH", default=None, help="For `now`: the interpreter whose environment to read.")
@output_options
@policy_options
@db_option
@click.pass_context
def diff(ctx, a, b, python, fmt, output, verbose, select, ignore, ack, fail_on, db, **more) -> int:
    """What changed from snapshot A to B (default: good -> now), most dangerous first.

    A and B: a snapshot id, label or uid prefix from the history, a snapshot file, `good` (the one
    marked good), `latest`, or `now` (this environment, not stored).  Each change says which
    findings it made fail or cleared.  Exit status 1 when a change at or above --fail-on is found:
    drivers, runtimes and framework builds are errors, GPU targets, math libraries, OS packages and
    companions warnings, other packages and configuration info."""
    from gpuvet.app.diff import DiffOptions, run
    from gpuvet.app.engine import exit_code

    env = env_of(ctx)
    policy = make_policy(select, ignore, ack, fail_on)
    report = run(DiffOptions(a=a, b=b, db=db, python=python, policy=policy), env)
    if fmt == "terminal" and not output:
        ia, ib = report.meta["a"], report.meta["b"]
        n = sum(1 for f in report.findings if f.failed)
        def when(i):
            return (i.get("created_at") or "")[:16].replace("T", " ")

        env.stdout.write(f"diff {ia['ref']} -> {ib['ref']}: {n} change(s)\n"
                         f"     taken {when(ia)} -> {when(ib)} UTC\n\n")
    emit(report, env, fmt, output, verbose, **more)
    return int(exit_code(report, policy.fail_on))


def _kv(items, what: str) -> dict[str, str]:
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k or not v:
            raise click.BadParameter(f"needs VARIANT=URL, got {item!r}", param_hint=what)
        out[k.strip()] = v.strip()
    return out


@click.command()
@click.option("--to", "to", metavar="SNAP", default="good", show_default=True,
              help="The snapshot to return to: id, label, uid prefix, file, `good` or `latest`.")
@click.option("--from", "current", metavar="SNAP", default="now", show_default=True,
              help="The state to start from (default: this environment now).")
@click.option("--into", "into", metavar="DIR", default=None,
              help="Build the old stack in a new virtual environment DIR and verify it (the running one is never touched).")
@click.option("--python", "python", metavar="PATH", default=None, help="The interpreter whose environment is rolled back.")
@click.option("--index-map", "index_map", multiple=True, metavar="VARIANT=URL",
              help="Use URL as the index for a variant (cu121, rocm5.6, cpu, nightly/rocm6.3, default): a mirror.")
@click.option("--find-links", "find_links", multiple=True, metavar="DIR|URL", help="Also look for wheels here (pip --find-links).")
@click.option("--installer", type=click.Choice(["uv", "pip"]), default=None, help="Default: uv when on PATH, else pip.")
@click.option("--sizes", "sizes", is_flag=True, help="Ask remote indexes (PEP 691 JSON) for download sizes (local ones are always read).")
@click.option("--validate", "validate", is_flag=True, help="Also run `gpuvet validate --level quick` in the new environment.")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "markdown", "json", "sh", "junit"]),
              default="terminal", show_default=True, help="sh: the plan as a shell script (display-only steps commented out).")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None, help="Write to this file.")
@db_option
@click.pass_context
def rollback(ctx, to, current, into, python, index_map, find_links, installer, sizes, validate, fmt, output, db) -> int:
    """Print the plan back to an earlier snapshot: ordered steps with exact versions and index URLs,
    companions pinned, OS-package / driver / ROCm-CUDA-tree steps display-only (root, reboot), the
    cost and the risks.  With --into DIR: build it in a new virtual environment and verify it."""
    from gpuvet.app.rollback import RollbackOptions, run
    from gpuvet.history.rollback import Plan, Step, render_markdown, render_sh, render_text
    from gpuvet.model import Outcome

    env = env_of(ctx)
    opts = RollbackOptions(to=to, current=current, into=into, db=db, python=python,
                           index_map=_kv(index_map, "--index-map"), find_links=tuple(find_links), validate=validate,
                           sizes=sizes,
                           installer=installer)
    report = run(opts, env)
    pd = report.extra["plan"]
    plan = Plan(pd["target"], pd["current"], [Step(**{k: v for k, v in s.items() if k != "order"}) for s in pd["steps"]],
                pd["cost"], pd["risks"], pd["unchanged"])
    if fmt == "sh":
        text = render_sh(plan)
    elif fmt == "json":
        from gpuvet.render import render

        text = render(report, "json")
    elif fmt == "junit":
        from gpuvet.render import render

        text = render(report, "junit")
    elif fmt == "markdown":
        text = render_markdown(plan)
        if into:
            from gpuvet.render import render

            text += "\n" + render(report, "markdown", verbose=True)
    else:
        text = render_text(plan)
        if into:
            from gpuvet.render import render

            info = report.extra.get("into", {})
            text += f"\nBuilt into {info.get('path')}: {info.get('state', '').upper()}\n\n"
            text += render(report, "terminal", color=env.color and not output, width=env.width, verbose=True)
    if output:
        write_atomic(output, text)
    else:
        from gpuvet.model.redact import redact_text

        env.stdout.write(redact_text(text))
    if into:
        return 0 if all(f.outcome is not Outcome.FAILED or f.code == "RBK009" for f in report.findings) else 1
    return 0


_ = json


@click.command()
@click.option("--since", metavar="SNAP", default="good", show_default=True,
              help="Show the changes since this snapshot (id, label, file, good, latest).")
@click.option("--format", "-f", "fmt", type=click.Choice(["markdown", "html"]), default=None,
              help="Default: from the -o file's extension, else markdown.")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None, help="Write the report here.")
@click.option("--bundle", "bundle", type=click.Path(dir_okay=False), default=None, metavar="FILE.tar.gz",
              help="Also write a redacted archive for a bug report: raw probe outputs, the snapshot, the findings, "
                   "and ready-to-paste text for the PyTorch and ROCm issue templates.")
@click.option("--python", "python", metavar="PATH", default=None, help="Report on this interpreter's environment.")
@db_option
@click.pass_context
def report(ctx, since, fmt, output, bundle, python, db) -> int:
    """A version report of this stack: the stack, its findings, and the changes since the good snapshot."""
    from gpuvet.app.report import ReportOptions, run, write_bundle
    from gpuvet.model.redact import redact_text
    from gpuvet.render.version_report import render_report_html, render_report_markdown

    env = env_of(ctx)
    rep, now, raw = run(ReportOptions(since=since, db=db, python=python, record=bool(bundle)), env)
    fmt = fmt or ("html" if output and output.lower().endswith((".html", ".htm")) else "markdown")
    text = render_report_html(rep) if fmt == "html" else render_report_markdown(rep)
    if output:
        write_atomic(output, text)
    elif not bundle:
        env.stdout.write(redact_text(text))
    if bundle:
        members = write_bundle(bundle, rep, now, raw)
        env.stdout.write(f"wrote {bundle} ({len(members)} files, redacted): attach it, and paste "
                         "issue-pytorch.md or issue-rocm.md into the issue form\n")
    elif output:
        env.stdout.write(f"wrote {output}\n")
    return 0
