"""`gpuvet validate`, `gpuvet bench`, `gpuvet bench compare`, `gpuvet scan`."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .common import emit, env_of, make_policy, output_options, policy_options
from .env import Environment

if TYPE_CHECKING:
    from rich.status import Status


class Progress:
    """Progress on standard error while cases run: a Rich status line on a terminal, plain lines elsewhere."""

    def __init__(self, env: Environment, total: int, quiet: bool = False):
        self.env, self.total, self.quiet, self.done = env, total, quiet, 0
        isatty = getattr(env.stderr, "isatty", None)
        self.live = bool(isatty and isatty()) and "NO_COLOR" not in env.environ and not quiet
        self._status: Status | None = None
        if self.live:
            from rich.console import Console

            self.console = Console(file=env.stderr, stderr=True, highlight=False)

    def __call__(self, what: str, spec, result) -> None:
        if self.quiet:
            return
        if what == "start":
            text = f"[{self.done + 1}/{self.total}] {spec.name}: {spec.title} ..."
            if self.live:
                if self._status is None:
                    self._status = self.console.status(text)
                    self._status.start()
                else:
                    self._status.update(text)
            return
        self.done += 1
        status = result.get("status", "?") if result else "?"
        line = f"[{self.done}/{self.total}] {spec.name}: {status} ({result.get('elapsed_s', 0):.2f} s)"
        if result and result.get("error") and status != "ok":
            line += f" - {result['error'][:120]}"
        if self.live:
            style = "green" if status == "ok" else ("yellow" if status == "unsupported" else "red")
            self.console.print(f"[{style}]{line}[/{style}]")
        else:
            self.env.stderr.write(line + "\n")
            self.env.stderr.flush() if hasattr(self.env.stderr, "flush") else None

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()


def _common(func):
    func = click.option("--python", "python", metavar="PATH", default=None,
                        help="Interpreter whose framework to validate (also GPUVET_PYTHON); default: gpuvet's own.")(func)
    func = click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
                        help="Where to run: the GPU when the framework sees one (cuda means ROCm's HIP too), else the CPU.")(func)
    func = click.option("--case", "cases", multiple=True, metavar="NAME", help="Run only this case (repeatable).")(func)
    func = click.option("--inject", multiple=True, metavar="FAULT",
                        help="Fault injection: segfault, abort, hang, wrong, leak (comma-separated), or "
                             "sleep:CASE=SECONDS to slow a case's timed region.")(func)
    func = click.option("--against", metavar="REF", default=None,
                        help="Compare with a stored run: 'good' (newest run on the snapshot marked good), "
                             "'latest', a run id, a snapshot label, or a saved --format json report.")(func)
    func = click.option("--no-save", "no_save", is_flag=True, help="Do not record the run in the history store.")(func)
    func = click.option("--db", metavar="URL", default=None, help="History database (also GPUVET_DB).")(func)
    func = click.option("--snapshot", metavar="REF", default=None, help="Tie the stored run to this snapshot.")(func)
    func = click.option("--case-timeout", type=float, default=None, metavar="S",
                        help="Seconds each case may run before it counts as hung (default: the case's own).")(func)
    func = click.option("--html", metavar="FILE", default=None, help="Also write the HTML report with plots.")(func)
    func = click.option("--no-progress", "no_progress", is_flag=True, help="No progress lines on standard error.")(func)
    func = click.option("--world-size", "world_size", type=click.IntRange(1, 1024), default=None, metavar="N",
                        help="Processes for the distributed cases (default: one per GPU; two on the CPU).")(func)
    return func


def _run(ctx, kind, level, python, device, cases, inject, against, no_save, db, snapshot, case_timeout, html,
         no_progress, fmt, output, verbose, select, ignore, ack, fail_on, ops_from=None, listing=False, stack=False,
         quiet=False, statistics=False, world_size=None) -> int:
    from gpuvet.app import validate as app

    env = env_of(ctx)
    policy = make_policy(select, ignore, ack, fail_on, env)
    opts = app.ValidateOptions(kind=kind, level=level, python=python, device=device, cases=tuple(cases),
                               inject=tuple(inject), ops_from=ops_from, against=against, save=not no_save, db=db,
                               snapshot=snapshot, case_timeout=case_timeout, html=html)
    if world_size:
        opts.params = {"collective": {"world_size": world_size}, "distributed": {"world_size": world_size}}
    if listing:
        specs, _ = app.select_cases(opts, env)
        for s in specs:
            env.stdout.write(f"{s.name:18} {s.level:9} {s.code}  {s.title}\n")
        return 0
    app.interpreter(python, env)
    specs, _ = app.select_cases(opts, env)
    progress = Progress(env, len(specs), quiet or no_progress)
    try:
        report = app.run_validate(opts, env, progress)
    finally:
        progress.close()
    from gpuvet.app.engine import _apply_policy, exit_code, score

    report.findings = [_apply_policy(f, policy) for f in report.findings if policy.wants(f.code)]
    report.score, report.deductions = score(report.findings)
    emit(report, env, fmt, output, verbose, stack, quiet, statistics)
    rec = report.extra["validate"]
    if rec.get("run_id") and not (quiet or no_progress):
        env.stderr.write(f"gpuvet: stored as run {rec['run_id']}"
                         + (f" (snapshot {rec['snapshot_id']})" if rec.get("snapshot_id") else "") + "\n")
    return int(exit_code(report, policy.fail_on))


@click.command()
@click.option("--level", type=click.Choice(["quick", "standard", "full"]), default="quick", show_default=True,
              help="quick: seconds; standard: about 2 minutes; full: about 15 minutes on a GPU.")
@click.option("--ops-from", "ops_from", metavar="PATH", default=None,
              help="Test exactly the operators (and dtypes) that the Python code under PATH uses (see gpuvet scan).")
@click.option("--list", "listing", is_flag=True, help="List the cases that would run, and exit.")
@_common
@output_options
@policy_options
@click.pass_context
def validate(ctx, level, ops_from, listing, **kw) -> int:
    """Prove the GPU stack computes correctly: operators against a float64 CPU reference, a training step
    in five stages, memory, stability.

    Every case runs in a child process of the examined interpreter with a time-out, so a crash, hang or
    GPU fault becomes that case's finding and the run carries on.  Runs are stored in the history."""
    return _run(ctx, "validate", level, ops_from=ops_from, listing=listing, **kw)


class _BenchGroup(click.Group):
    def parse_args(self, ctx, args):
        # `gpuvet bench [OPTIONS]` runs the microbenchmarks; `gpuvet bench compare A B` compares runs
        if args and args[0] in self.commands:
            return super().parse_args(ctx, args)
        ctx.ensure_object(dict)
        return click.Command.parse_args(self, ctx, args)


@click.group(cls=_BenchGroup, invoke_without_command=True)
@_common
@output_options
@policy_options
@click.pass_context
def bench(ctx, **kw) -> int:
    """Microbenchmarks with the framework's own timing: allocator, launch overhead, cold start, matmul
    TFLOP/s per dtype and memory bandwidth against the GPU model's expected peak.

    `gpuvet bench compare A B` compares two stored runs (ids, 'latest', 'good', or JSON reports)."""
    if ctx.invoked_subcommand is not None:
        return 0
    return _run(ctx, "bench", "bench", **kw)


@bench.command("compare")
@click.argument("base")
@click.argument("new")
@click.option("--db", metavar="URL", default=None, help="History database (also GPUVET_DB).")
@click.option("--html", metavar="FILE", default=None, help="Also write the HTML report with plots.")
@output_options
@policy_options
@click.pass_context
def compare(ctx: click.Context, base, new, db, html, fmt, output, verbose, select, ignore, ack, fail_on, stack=False, quiet=False,
            statistics=False) -> int:
    """Per-case deltas of run NEW against run BASE, with the noise band of their repeated timings."""
    from gpuvet.app.engine import exit_code

    from gpuvet.app import validate as app

    env = env_of(ctx)
    policy = make_policy(select, ignore, ack, fail_on, env)
    report = app.run_compare(base, new, env, db, html)
    emit(report, env, fmt, output, verbose, stack, quiet, statistics)
    ctx.exit(int(exit_code(report, policy.fail_on)))


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--python", "python", metavar="PATH", default=None,
              help="Interpreter whose framework build decides what the findings say (ROCm or CUDA).")
@output_options
@policy_options
@click.pass_context
def scan(ctx, paths, python, fmt, output, verbose, select, ignore, ack, fail_on, stack=False, quiet=False,
         statistics=False) -> int:
    """Read a project's Python code (AST, never imported) and list the operators known to differ across
    versions and backends, calls that break on ROCm, settings made in code and environment set through
    os.environ, each with what it does on the detected stack."""
    from gpuvet.app.engine import exit_code

    from gpuvet.app import validate as app

    env = env_of(ctx)
    policy = make_policy(select, ignore, ack, fail_on, env)
    report = app.run_scan(tuple(paths), env, app.detect_backend(env, python))
    emit(report, env, fmt, output, verbose, stack, quiet, statistics)
    return int(exit_code(report, policy.fail_on))
