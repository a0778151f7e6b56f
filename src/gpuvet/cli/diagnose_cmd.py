"""`gpuvet diagnose FILE|-`: name the root cause of a failure from a log or a pasted bug report."""
from __future__ import annotations

import os
import stat
import time

import click

from gpuvet.model import ExitCode

from .common import emit, env_of, looks_binary, stat_input
from .env import GpuvetError

EPILOG = """Exit status: 0 no stack problem found (nothing, or only the user's code or data, is blamed); 1 at
least one diagnosis that blames the stack; 3 bad input
(missing, unreadable, directory, binary or empty); 4 gpuvet's own failure."""


def _check_file(path: str) -> int:
    st = stat_input(path, "log")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        raise GpuvetError(f"cannot read log {path}: {exc.strerror}") from None
    if not head.strip():
        if stat.S_ISREG(st.st_mode) and st.st_size > len(head):
            pass  # leading blank space in a large file: let the scan decide
        else:
            raise GpuvetError(f"log {path} is empty")
    if looks_binary(head):
        raise GpuvetError(f"log {path} is binary data, not text output")
    return st.st_size if stat.S_ISREG(st.st_mode) else -1


class _Peek:
    """A binary stream with its first bytes already read (to refuse binary/empty stdin early)."""

    def __init__(self, head: bytes, rest):
        self.head, self.rest = head, rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            if n is None or n < 0:
                return out + self.rest.read()
            return out
        return self.rest.read(n)


@click.command(epilog=EPILOG)
@click.argument("log", required=False, metavar="FILE|-")
@click.option("--here", is_flag=True, help="Add this machine's live facts (the probes of `gpuvet check`).")
@click.option("--follow", "follow", metavar="FILE", default=None,
              help="Watch a growing log; report the first diagnosis as soon as its evidence appears.")
@click.option("--wait", "wait_s", type=float, default=None, metavar="SECONDS",
              help="With --follow: give up after this many seconds without a diagnosis (default: wait until interrupted).")
@click.option("--format", "-f", "fmt", type=click.Choice(["terminal", "json", "markdown", "junit"]), default="terminal",
              show_default=True, help="Output format.")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output.")
@click.option("--verbose", "-v", is_flag=True, help="Show more detail.")
@click.option("--no-grep", is_flag=True, hidden=True, help="Never use grep as the prefilter (testing).")
@click.pass_context
def diagnose(ctx: click.Context, log, here, follow, wait_s, fmt, output, verbose, no_grep) -> int:
    """Name the most likely root causes of a failure from a log or a pasted bug report (FILE, or - for stdin).

    Each diagnosis has the cause (gpuvet's taxonomy), the component at fault, a confidence, the evidence (log
    lines with line numbers and the facts found in the text), why it ranks above the others, and the fix.
    A plain user-code error that merely ran on a GPU gives an empty list: nothing in the stack is blamed."""
    from gpuvet import diagnosis

    env = env_of(ctx)
    if bool(log) == bool(follow):
        raise click.UsageError("give exactly one of FILE (or -) and --follow FILE")
    live = None
    if here:
        from gpuvet.probes.base import run_probes
        from gpuvet.probes.registry import all_probes

        live = run_probes(env.system(), all_probes())
    if follow:
        report = _follow(follow, env, live, wait_s)
        if report is None:
            env.stderr.write(f"gpuvet: no diagnosis in {follow} after {wait_s:g}s\n")
            return int(ExitCode.OK)
    elif log == "-":
        stream = getattr(env.stdin, "buffer", None)
        if stream is None:  # a text stream (tests): encode what it holds
            data = env.stdin.read()
            import io

            stream = io.BytesIO(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        head = stream.read(8192)
        if not head.strip():
            more = stream.read(1 << 20)
            if not more.strip():
                raise GpuvetError("log <stdin> is empty")
            head += more
        if looks_binary(head):
            raise GpuvetError("log <stdin> is binary data, not text output")
        report = diagnosis.diagnose_stream(_Peek(head, stream), "<stdin>", live)
    else:
        _check_file(log)
        try:
            report = diagnosis.diagnose_path(log, live, fast=not no_grep)
        except OSError as exc:
            raise GpuvetError(f"cannot read log {log}: {exc.strerror or exc}") from None
    emit(report, env, fmt, output, verbose)
    return int(diagnose_exit(report))


def diagnose_exit(report) -> ExitCode:
    """1 only when the stack is at fault: a diagnosis whose component is not the user's own code."""
    stack = [d for d in report.extra.get("diagnoses") or [] if d.get("component") != "user-code"]
    return ExitCode.FINDINGS if stack else ExitCode.OK


def _follow(path: str, env, live, wait_s: float | None, poll: float = 0.2):
    """Tail ``path`` (which may not exist yet) and return the first report with a diagnosis."""
    from gpuvet import diagnosis
    from gpuvet.logs.match import Scanner
    from gpuvet.logs.signatures import load_catalog

    started = time.monotonic()
    sc = Scanner(load_catalog())
    head = bytearray()
    pending = b""
    lineno = 0
    pos = 0
    while True:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise GpuvetError(f"cannot read log {path}: {exc.strerror}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise GpuvetError(f"log {path} is a directory, not a file")
        new_match = False
        if st is not None:
            if st.st_size < pos:  # truncated / rotated: start over
                pos, pending = 0, b""
            if st.st_size > pos:
                with open(path, "rb") as fh:
                    fh.seek(pos)
                    data = fh.read(min(st.st_size - pos, 8 << 20))
                pos += len(data)
                if lineno == 0 and not pending and looks_binary(data[:8192]):
                    raise GpuvetError(f"log {path} is binary data, not text output")
                data = pending + data
                lines = data.split(b"\n")
                pending = lines.pop()
                if len(pending) > 1 << 20:
                    pending = pending[-(1 << 16):]
                for raw in lines:
                    lineno += 1
                    if len(head) < diagnosis.HEAD_BYTES:
                        head += raw + b"\n"
                    if sc.feed(lineno, raw):
                        new_match = True
        if new_match:
            facts = diagnosis.facts_from_text(head.decode("utf-8", "replace"), path, sc.result, live)
            report = diagnosis.build_report(sc.result, facts, diagnosis.findings_for(facts, live is not None),
                                            path, started, "follow")
            if report.extra.get("diagnoses"):
                return report
        if wait_s is not None and time.monotonic() - started > wait_s:
            return None
        time.sleep(poll)
