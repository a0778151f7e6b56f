"""`gpuvet snapshot`, `gpuvet history`, `gpuvet mark-good`: argv -> app.snapshot -> output."""
from __future__ import annotations

import json

import click

from .common import env_of, make_policy

DB_HELP = "History database: a path, sqlite:///PATH or postgresql://... (default: $GPUVET_DB, else the XDG data dir)."


def db_option(func):
    return click.option("--db", "db", metavar="URL", default=None, help=DB_HELP)(func)


def write_atomic(path: str, text: str) -> None:
    """``-o FILE`` of snapshot/history/diff: redacted, then written as every report is (app/output.py: atomic over
    a regular file keeping its mode, straight into a device, FIFO or symlink target, never a guessable temp name)."""
    from gpuvet.app.output import write_output
    from gpuvet.model.redact import redact_text

    write_output(path, redact_text(text))


@click.command()
@click.option("--label", default=None, metavar="NAME", help="A name to find this snapshot by (diff, rollback --to).")
@click.option("--python", "python", metavar="PATH", default=None,
              help="Snapshot the environment of this interpreter instead of gpuvet's own (also GPUVET_PYTHON).")
@click.option("--mark-good", "mark_good", is_flag=True, help="Pin it as the snapshot to return to (`good`).")
@click.option("--container", metavar="NAME", default=None,
              help="On the host: also record `docker inspect NAME` and `docker diff NAME`.")
@click.option("--deadline", type=float, default=3.0, show_default=True, help="Seconds to wait for all probes.")
@click.option("--no-store", "no_store", is_flag=True, help="Do not keep it in the history (only -o / --format json).")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Also write the snapshot document (JSON) to this file.")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True,
              help="terminal: a summary line; json: the snapshot document.")
@db_option
@click.pass_context
def snapshot(ctx, label, python, mark_good, container, deadline, no_store, output, fmt, db) -> int:
    """Record this environment: every fact `check` reads, every Python distribution and where it came
    from, the dependency tree, the container, the GPU stack's OS packages, the ROCm/CUDA trees, and the
    findings and score of this moment.  Kept in the history store (see `gpuvet history`)."""
    from gpuvet.app.snapshot import SnapshotOptions, take
    from gpuvet.history.snapshot import dumps

    env = env_of(ctx)
    if no_store and mark_good:
        raise click.UsageError("--mark-good needs the history store (drop --no-store)")
    if output:
        import os

        from gpuvet.model.errors import InputError

        d = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(d) or not os.access(d, os.W_OK):
            raise InputError(f"cannot write {output}: {'not a writable directory' if os.path.isdir(d) else 'no such directory'}: {d}")
    t = take(SnapshotOptions(label=label, python=python, deadline=deadline, mark_good=mark_good, container=container,
                             db=db, store=not no_store, policy=make_policy((), (), (), "error")), env)
    text = dumps(t.doc)
    if output:
        write_atomic(output, text)
    if fmt == "json":
        env.stdout.write(text)
        return 0
    s = t.doc.get("summary", {})
    fw = ", ".join(f"{k} {v}" for k, v in sorted((s.get("frameworks") or {}).items())) or "no framework"
    where = f"stored as {t.record.id} in {t.where}" if t.record else "not stored"
    good = "; marked good" if t.record and t.record.good else ""
    failed = s.get("failed") or []
    env.stdout.write(f"snapshot {t.doc['id'][:8]}{' ' + repr(label) if label else ''}: {fw}, "
                     f"{len(t.doc['distributions'])} distributions, score {t.doc.get('score')}"
                     f"{' (failing: ' + ', '.join(failed) + ')' if failed else ''}; {where}{good}"
                     f"{'; written to ' + output if output else ''} ({t.elapsed_s:.2f} s)\n")
    return 0


@click.command()
@click.option("--limit", "-n", type=click.IntRange(1), default=None, help="Show only the newest N.")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@db_option
@click.pass_context
def history(ctx, limit, fmt, db) -> int:
    """List the snapshots in the history store, newest first (`*` marks the good one)."""
    from gpuvet.app.snapshot import history as list_history

    env = env_of(ctx)
    recs, where = list_history(db, env, limit)
    if fmt == "json":
        env.stdout.write(json.dumps({"database": where, "snapshots": [r.to_dict() for r in recs]}, indent=2) + "\n")
        return 0
    if not recs:
        env.stdout.write(f"no snapshots yet in {where} (take one with `gpuvet snapshot`)\n")
        return 0
    good_id = max((r for r in recs if r.good), key=lambda r: (r.good_at or "", r.id), default=None)
    rows = [("", "id", "taken (UTC)", "label", "frameworks", "score", "failing", "runs")]
    for r in recs:
        fw = " ".join(f"{k} {v}" for k, v in sorted((r.summary.get("frameworks") or {}).items()))
        rows.append(("*" if good_id and r.id == good_id.id else ("g" if r.good else ""), str(r.id),
                     r.created_at[:19].replace("T", " "), r.label or "", fw, "" if r.score is None else str(r.score),
                     ",".join(r.summary.get("failed") or []),
                     " ".join(f"{k}:{n}" for k, n in sorted((r.summary.get("runs") or {}).items()))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        env.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
    env.stdout.write(f"({len(recs)} shown from {where}; * = good, the one `rollback --to good` returns to)\n")
    return 0


@click.command("mark-good")
@click.argument("ref", metavar="ID")
@db_option
@click.pass_context
def mark_good(ctx, ref, db) -> int:
    """Pin snapshot ID (an id, label or uid prefix) as the good one to return to."""
    from gpuvet.app.snapshot import mark_good as do_mark

    env = env_of(ctx)
    rec = do_mark(ref, db, env)
    env.stdout.write(f"snapshot {rec.id}{' (' + rec.label + ')' if rec.label else ''} is now the good snapshot\n")
    return 0
