"""``diagnose``: log / pasted text -> facts + signature matches -> ranked diagnoses -> Report.

* Facts: the text goes through the same parsers as ``gpuvet check --from``
  (``gpuvet.probes.pasted.parse_report``; ValueError there means "no tool output recognised", i.e. no facts),
  plus the version facts that only appear inside tracebacks and warnings (``gpuvet.logs.extract``); with
  ``live`` facts (``--here``) both are merged.  The same checks run on them (``engine.run_checks``).
* Signatures: every line streams through ``gpuvet.logs.match.Scanner`` in bounded memory.  Past 4 MiB (a regular
  file, standard input redirected from one, or a pipe) the cheap prefilter is delegated to ``grep -E`` with the
  catalog's key trie (a small DFA, a few hundred MB/s on any text) and only its candidate lines reach Python: the
  lines the Python trie would pick, read the same way, so the answer does not depend on the path; without grep the
  pure-Python prefilter is used.
* Ranking: ``gpuvet.logs.rank.rank`` joins both; the result is a ``Report`` (command ``diagnose``) whose
  findings are the diagnoses and whose ``extra["diagnoses"]`` is the ranked list.

One pipeline (scan -> facts -> checks -> rank -> report) serves a file, standard input, ``--follow``
(:func:`follow`) and ``gpuvet run``; :func:`run` is the use case the CLI calls.
"""
from __future__ import annotations

import os
import re
import stat
import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Sequence

from gpuvet.logs.match import Scanner, ScanResult, _cut, iter_blocks, iter_lines
from gpuvet.logs.rank import Diagnosis, rank, user_code_signals
from gpuvet.logs.signatures import Catalog, load_catalog
from gpuvet.model import Applicability, Evidence, Facts, Finding, Fix, Outcome, Report, Severity
from gpuvet.model.errors import GpuvetError

from .env import Environment
from .inputs import looks_binary

HEAD_BYTES = 1024 * 1024  # facts (collect_env, pip list, ...) are parsed from this much of the input
HINT_BYTES = 256 * 1024  # context hints are looked for on every line of this much of the input
FAST_MIN_BYTES = 4 * 1024 * 1024  # regular files above this use the grep prefilter when grep exists (day 7: 16 -> 4 MiB;
# the trie in Python reads 5-11 MB/s, grep with the same patterns 100+ MB/s after ~0.1 s of start: a 13.7 MiB deep
# traceback took 3.2 s in Python)
SEVERITY = {"hardware-fault": Severity.CRITICAL}
# a reading this unsure (the vocabulary's or the learned model's guess, a signature's "can also mean", the
# model's filler places) is a warning, drawn "! ... [low confidence]": never with a decisive cause's weight
TENTATIVE = 0.3


# ----------------------------------------------------------------------------------------- scanning
def scan_text(text: str, catalog: Catalog | None = None) -> ScanResult:
    sc = Scanner(catalog or load_catalog())
    sc.feed_text(text)
    return sc.result


def scan_stream(stream: IO[bytes], catalog: Catalog | None = None, head_bytes: int = HEAD_BYTES) -> tuple[ScanResult, bytes]:
    """Scan a binary stream block by block; returns the scan and the first ``head_bytes`` of the input."""
    sc = Scanner(catalog or load_catalog())
    head = bytearray()
    seen = 0
    for first, block in iter_blocks(stream):
        if len(head) < head_bytes:
            head += block[: head_bytes - len(head)]
        if sc.hints_everywhere and seen + len(block) > HINT_BYTES:
            # context hints on every line of the first HINT_BYTES only, not of the whole first block (1 MiB:
            # ~15,000 lines of a deep traceback each through the hint patterns)
            cut = block.rfind(b"\n", 0, max(0, HINT_BYTES - seen)) + 1
            if cut > 0:
                sc.feed_block(first, block[:cut])
                seen += cut
                first += block.count(b"\n", 0, cut)
                block = block[cut:]
            sc.hints_everywhere = False  # context hints: from the head and from candidate lines only
        sc.feed_block(first, block)
        seen += len(block)
    return sc.result, bytes(head)


_GREP_LINE = re.compile(rb"([0-9]+)([:-])([0-9]+)[:-]")


def _grep_argv(grep: str, pfile: str, source: str) -> list[str]:
    # -A 2: the one or two lines after a candidate, for a two-line reading waiting for its next non-blank line (the
    # Python path feeds them too); printed "N-B-text", a candidate "N:B:text" (-b: B, the line's byte offset, from
    # which the lines after the last one printed are counted), groups apart "--"
    return [grep, "-a", "-n", "-b", "-A", "2", "-E", "-f", pfile, "--", source]


def _feed_grep_output(sc: Scanner, out: IO[bytes], head_lines: int) -> tuple[int, int]:
    """Feed grep's candidate lines (past the head, which Python read whole) as the Python path feeds the lines its key
    trie finds (``Scanner.feed_block``): a repeated traceback frame is skipped, the line after a two-line reading's
    first line is given to it.  Returns (the number, the byte offset) of the last line grep printed, (0, 0) if none."""
    last = 0
    last_printed = (0, 0)
    feed, pending, repeated = sc.feed, sc.has_pending, sc.repeated_frame_line
    for _, raw in iter_lines(out):
        m = _GREP_LINE.match(raw)
        if m is None:  # "--" between groups
            continue
        n = int(m.group(1))
        last_printed = (n, int(m.group(3)))
        if n <= head_lines:
            continue
        rest = raw[m.end():]
        if m.group(2) == b"-":  # context: only for a reading waiting for this very line
            if n == last + 1 and pending():
                feed(n, _cut(rest))
                last = n
            continue
        if not pending() and repeated(rest):
            continue
        feed(n, _cut(rest))
        last = n
    return last_printed


def _count_lines_from(fd: int, line: int, start: int) -> int:
    """The file's line count (its newlines, plus a last line without one), given that line number ``line`` starts at
    byte ``start``: the newlines from there to the end are counted (the file's tail after grep's last printed line:
    its whole length only when grep printed nothing past the head)."""
    newlines, pos, last = 0, start, b"\n"
    while True:
        b = os.pread(fd, CHUNK_READ, pos)
        if not b:
            break
        newlines += b.count(b"\n")
        pos += len(b)
        last = b[-1:]
    return line - 1 + newlines + (0 if last == b"\n" else 1)


def scan_file_fast(path: str, catalog: Catalog | None = None, grep: str | None = None,
                   head_bytes: int = HEAD_BYTES, on_head=None, system: Any = None,
                   fd: int | None = None, offset: int = 0) -> tuple[ScanResult, bytes] | None:
    """Scan a large regular file: ``grep -a -n -E`` with the catalog's key trie (``Catalog.grep_pattern``: the lines
    it selects are the lines the Python path's trie selects) runs in its own process while Python handles the first
    block(s) (context hints) and ``on_head(head)`` (e.g. parsing facts); then the candidate lines grep found are read
    as the Python path reads them.  ``fd``: read this open regular file (standard input redirected from a file) from
    ``offset`` instead of ``path``.  None when grep is unavailable or fails."""
    if system is None:  # the machine, through the one door (probes.system.System)
        from gpuvet.probes.system import System

        system = System()
    grep = grep or system.which("grep")
    if not grep:
        return None
    cat = catalog or load_catalog()
    if not cat.grep_pattern:
        return None
    sc = Scanner(cat)

    import tempfile  # here: its imports (shutil, random) cost every small diagnosis start-up

    with tempfile.NamedTemporaryFile("w", suffix=".patterns", delete=False, encoding="utf-8") as pf:
        pf.write(cat.grep_pattern + "\n")
        pfile = pf.name
    try:
        if fd is not None:
            os.lseek(fd, offset, os.SEEK_SET)  # grep reads the descriptor from here on
            proc = system.spawn(_grep_argv(grep, pfile, "-"), {"LC_ALL": "C"}, stdin=fd)
        else:
            proc = system.spawn(_grep_argv(grep, pfile, path), {"LC_ALL": "C"})
    except OSError:
        os.unlink(pfile)
        return None
    try:
        if fd is not None:  # grep scans the file meanwhile, on another core
            head = _pread(fd, head_bytes, offset)
        else:
            with open(path, "rb") as fh:
                head = fh.read(head_bytes)
        head_lines = _feed_head(sc, head)
        if on_head is not None:
            on_head(head)
        assert proc.stdout is not None
        printed, at = _feed_grep_output(sc, proc.stdout, head_lines)
        proc.stdout.close()
        rc = proc.wait()
        if rc not in (0, 1):
            return None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.unlink(pfile)
    # the file's own line count (the last line grep printed is not the last line): from the later of grep's last
    # printed line and the end of the head's whole lines
    if printed <= head_lines:
        printed, at = head_lines + 1, head.rfind(b"\n", 0, HINT_BYTES) + 1
    try:
        if fd is not None:
            total = _count_lines_from(fd, printed, offset + at)
        else:
            with open(path, "rb") as fh:
                total = _count_lines_from(fh.fileno(), printed, at)
        sc.result.lines = max(sc.result.lines, total)
    except OSError:
        pass
    if sc.result.lines < head_lines:
        sc.result.lines = head_lines
    return sc.result, head


def _pread(fd: int, n: int, offset: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        b = os.pread(fd, n - len(out), offset + len(out))
        if not b:
            break
        out += b
    return bytes(out)


def _feed_head(sc: Scanner, head: bytes) -> int:
    """The head's first HINT_BYTES (whole lines) read line by line, context hints on every line; returns its lines."""
    cut = head.rfind(b"\n", 0, HINT_BYTES) + 1
    head_lines = sc.feed_block(1, head[:cut]) if cut > 0 else 0
    sc.hints_everywhere = False
    return head_lines


def scan_stream_fast(stream: Any, catalog: Catalog | None = None, system: Any = None,
                     head_bytes: int = HEAD_BYTES, min_bytes: int = FAST_MIN_BYTES) -> tuple[ScanResult, bytes, str]:
    """Scan a stream that cannot be reopened (standard input from a pipe, a FIFO) through grep as well: the first
    ``min_bytes`` are read (bounded); a shorter stream is scanned in Python as before.  Past that, gpuvet keeps the
    head (facts, context hints), a thread hands every block to grep's standard input, and grep's candidate lines are
    read as ``scan_file_fast`` reads them.  A stream that ends early, or no grep, is scanned in Python from what was
    read.  Returns (the scan, the head, the mode: "grep-prefilter" or "python")."""
    import io

    cat = catalog or load_catalog()
    first = bytearray()
    min_bytes = max(min_bytes, head_bytes)
    while len(first) < min_bytes:
        b = stream.read(min(CHUNK_READ, min_bytes - len(first)))
        if not b:
            return (*scan_stream(io.BytesIO(bytes(first)), cat, head_bytes), "python")
        first += b
    if system is None:
        from gpuvet.probes.system import System

        system = System()
    grep = system.which("grep") if cat.grep_pattern else None
    proc = None
    if grep:
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".patterns", delete=False, encoding="utf-8") as pf:
            pf.write(str(cat.grep_pattern) + "\n")
            pfile = pf.name
        try:
            proc = system.spawn(_grep_argv(grep, pfile, "-"), {"LC_ALL": "C"}, stdin_pipe=True)
        except OSError:
            proc = None
        if proc is None:
            os.unlink(pfile)
    if proc is None:
        return (*scan_stream(_Chain(bytes(first), stream), cat, head_bytes), "python")  # type: ignore[arg-type]
    assert proc.stdin is not None and proc.stdout is not None
    failed: list[BaseException] = []
    newlines = [0, False]  # the stream's newlines, whether it ends without one: its line count, as Python counts

    def pump() -> None:  # read, count and write only: all release the GIL or run at memchr speed
        try:
            proc.stdin.write(first)
            newlines[0] += first.count(b"\n")
            last = bytes(first[-1:])
            while True:
                b = stream.read(CHUNK_READ)
                if not b:
                    break
                proc.stdin.write(b)
                newlines[0] += b.count(b"\n")
                last = b[-1:]
            newlines[1] = last not in (b"", b"\n")
        except (OSError, ValueError) as exc:  # grep gone, or the stream failed: what grep got is scanned
            failed.append(exc)
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass

    sc = Scanner(cat)
    head = bytes(first[:head_bytes])
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        head_lines = _feed_head(sc, head)
        _feed_grep_output(sc, proc.stdout, head_lines)  # the lines are counted as the pump hands them to grep
        proc.stdout.close()
        t.join()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.unlink(pfile)
    if not failed:
        sc.result.lines = max(sc.result.lines, int(newlines[0]) + (1 if newlines[1] else 0))
    if sc.result.lines < head_lines:
        sc.result.lines = head_lines
    return sc.result, head, "grep-prefilter"


CHUNK_READ = 1 << 20


class _Chain:
    """Bytes already read, then the rest of a stream."""

    def __init__(self, first: bytes, rest: Any) -> None:
        self.first, self.rest = first, rest

    def read(self, n: int = -1) -> bytes:
        if self.first:
            if n is None or n < 0:
                out, self.first = self.first + self.rest.read(), b""
                return out
            out, self.first = self.first[:n], self.first[n:]
            return out
        return self.rest.read(n)


# ----------------------------------------------------------------------------------------- facts
def parse_head(head: str, source: str) -> Facts:
    """The pasted-report parsers on the head of the input; no tool output recognised means no facts."""
    from .facts import pasted_facts

    return pasted_facts([(head, source)], strict=False)


def facts_from_text(head: str, source: str, scan: ScanResult, live: Facts | None = None,
                    parsed: Facts | None = None) -> Facts:
    facts = parsed if parsed is not None else parse_head(head, source)
    facts.add(r for r in scan.rows if not _covered(r, facts))
    facts.origin = "pasted"
    if live is not None:
        facts.merge(live)
        facts.origin = "pasted+live"
    return facts


def _agrees(shown: Any, other: Any) -> bool:
    """A log's version ('5.7') agrees with a parsed report's ('5.7.31921-d1770ee1b'): equal, one empty, or
    a release prefix of the other."""
    a, b = str(shown or ""), str(other or "")
    return not a or not b or a == b or b.startswith(a + ".") or b.startswith(a + "-") or a.startswith(b + ".")


def _covered(r: Any, facts: Facts) -> bool:
    """A framework build a traceback or package line names that the parsed report already holds (same name
    and version, no field that disagrees): one torch, shown once in the evidence and the stack table, and
    its checks fire once."""
    if r.table != "framework_builds":
        return False
    return any(p.get("name") == r.get("name") and p.get("version") == r.get("version") and
               all(_agrees(r.get(k), p.get(k)) for k in ("cuda", "hip", "variant", "channel"))
               for p in facts.table("framework_builds"))


def findings_for(facts: Facts, live: bool = False) -> list[Finding]:
    if not facts.rows and not facts.errors:
        return []
    try:
        from gpuvet import kb
        from gpuvet.app.engine import run_checks
        from gpuvet.checks.registry import all_checks

        return run_checks(facts, all_checks(), kb.load(), options={"live": live})
    except Exception as exc:  # the checks must not sink a diagnosis; the failure shows in probe_errors
        from gpuvet.model import ProbeError

        facts.fail(ProbeError("checks", (), f"the checks could not run: {type(exc).__name__}: {exc}"))
        return []


# ----------------------------------------------------------------------------------------- report
def to_finding(d: Diagnosis) -> Finding:
    # a finding's code is a rule's (docs/report-schema.json: LOG082, RTM021): the learned model's and the
    # vocabulary's readings ("learned", "fallback" in the diagnosis's signatures) are LOG000, no rule's
    code = next((c for c in [*d.signatures, *d.checks] if re.fullmatch(r"[A-Z]{2,3}[0-9]{3}", c)), "LOG000")
    name = f"diagnosis-{d.cause}"
    ev = tuple(Evidence(e["text"], source=e.get("signature") or e.get("hint", "") or e.get("source", ""),
                        line=e.get("line")) for e in d.evidence)
    fixes = _fixes(d)
    severity = _severity(d)
    # the learned model's guesses say their own probability (p=0.10) or "low confidence" in their title; their rank
    # weight (the lowest shown, MIN_CONFIDENCE) beside it would read as a second, contradicting probability
    guess = bool(d.contributions) and all(c.ref == "learned" and c.kind == "tentative" for c in d.contributions)
    rank = "" if guess else f", confidence {d.confidence:.2f}"
    return Finding(code=code, name=name, severity=severity, outcome=Outcome.FAILED,
                   title=f"{d.cause} ({d.component}{rank}): {d.title}", why=d.why,
                   evidence=ev, fixes=fixes, cause=d.cause, component=d.component)


def _severity(d: Diagnosis) -> Severity:
    """A diagnosis's severity: a warning ("low confidence") when no single reading of it is more than tentative
    (several "can also mean" readings of 0.25 combine to 0.33-0.39, still guesses, drawn [critical] for a
    hardware-fault before); a cause's own severity (hardware-fault: critical) only when a fact or a signature
    names it outright; else an error."""
    weights = [c.weight for c in d.contributions] or [d.confidence]
    if d.confidence <= TENTATIVE + 1e-9 or max(weights) <= TENTATIVE + 1e-9:
        return Severity.WARNING
    if d.contributions and not any(c.kind in ("fact", "signature") and c.weight > TENTATIVE + 1e-9
                                   for c in d.contributions):
        return Severity.ERROR  # the learned model's or the vocabulary's reading alone
    return SEVERITY.get(d.cause, Severity.ERROR)


def _fixes(d: Diagnosis) -> tuple[Fix, ...]:
    """The diagnosis's fixes as the checks that found them wrote them (the command to run, root, reboot, the
    alternatives after the first), or its one fix text when it has no structured ones."""
    out: list[Fix] = []
    for x in d.fixes or []:
        if not isinstance(x, dict) or not x.get("text"):
            continue
        try:
            appl = Applicability(x.get("applicability") or Applicability.DISPLAY_ONLY.value)
        except ValueError:
            appl = Applicability.DISPLAY_ONLY
        out.append(Fix(str(x["text"]), appl, str(x["command"]) if x.get("command") else None,
                       bool(x.get("needs_root")), bool(x.get("needs_reboot"))))
    if d.fix and not any(f.text == d.fix for f in out):
        from gpuvet.model.taxonomy import CAUSE_COMMAND

        cmd = CAUSE_COMMAND.get(d.fix)  # a cause's generic fix names its command
        out.insert(0, Fix(d.fix, command=cmd, needs_root=bool(cmd and cmd.startswith("sudo "))))
    return tuple(out)


def build_report(scan: ScanResult, facts: Facts, findings: Sequence[Finding], source: str,
                 started: float | None = None, mode: str = "python") -> Report:
    from gpuvet import __version__, kb

    diags = rank(scan, [f for f in findings if f.failed])
    settle = _settle(scan, facts, diags)
    # an honest `none` first (rank._honest_none: probably not a stack problem) is the verdict, not a finding; the stack
    # causes after it are the guesses shown, low confidence
    out = [to_finding(d) for d in diags if d.cause != "none"]
    if out and settle:
        from dataclasses import replace

        from gpuvet.logs.settle import settle_text

        out[0] = replace(out[0], fixes=out[0].fixes + (Fix(settle_text(settle), Applicability.DISPLAY_ONLY,
                                                          settle[0]["command"]),))
    report = Report(command="diagnose", findings=out, facts=facts, score=None)
    try:
        stamp: Any = kb.load().stamp()
    except Exception:
        stamp = None
    report.meta = {"gpuvet_version": __version__, "kb": stamp, "facts_origin": facts.origin, "input": source}
    if started is not None:
        report.meta["elapsed_s"] = round(time.monotonic() - started, 3)
    report.extra = {
        "diagnoses": [d.to_dict() for d in diags],
        "user_code_signals": user_code_signals(scan),
        "verdict": _verdict(diags),
        # commands whose output would settle the top diagnosis (facts the text does not show)
        "settle": settle,
        # explanations from the facts that are not causes (rocminfo's Runtime Version is the HSA API, ...)
        "notes": [{"code": f.code, "title": f.title, "why": f.why} for f in findings
                  if f.failed and f.severity == Severity.INFO],
        "scan": {"lines": scan.lines, "candidate_lines": scan.candidates, "mode": mode,
                 "hints": {k: {"line": h.line, "text": h.text} for k, h in sorted(scan.hints.items())},
                 "check_findings": [f.code for f in findings if f.failed]},
    }
    return report


def _settle(scan: ScanResult, facts: Facts, diags: Sequence[Diagnosis]) -> list[dict[str, Any]]:
    from gpuvet.logs.settle import commands_to_settle

    if diags and diags[0].cause == "none":
        # probably the program's own error: what would settle the first guess, unless a user-code signal already says
        return [] if len(diags) < 2 or user_code_signals(scan) else commands_to_settle(diags[1].cause, facts, scan.hint_names)
    if diags:
        top = diags[0]
        decided = any(c.kind == "fact" for c in top.contributions)
        return commands_to_settle(top.cause, facts, scan.hint_names, decided)
    if scan.error_lines and not user_code_signals(scan) and not facts.table("framework_builds"):
        return commands_to_settle("other", facts, scan.hint_names, limit=1)
    return []


def _verdict(diags: Sequence[Diagnosis]) -> str:
    if not diags:
        return "no stack problem found (nothing in the GPU stack is blamed)"
    top = diags[0]
    if top.cause == "none":
        guesses = " or ".join(d.cause for d in diags[1:3])
        return ("probably not a stack problem: no known stack message explains the error (most such errors are the "
                f"program's own); if the stack is at fault after all, possibly {guesses} (low confidence: guesses)")
    if top.component == "user-code":
        return f"the workload, not the stack: {top.cause} ({top.component})"
    if all(c.kind == "tentative" for c in top.contributions):
        # the unsure model's first guess is right about one time in four on sets it was not trained on
        # (bench/results/issue9-m11-learned.md): "possibly", not "probably"
        return f"stack problem, possibly: {top.cause} ({top.component}), low confidence (a guess: no known message matched)"
    if all(c.kind in ("tentative", "fallback") for c in top.contributions):
        return f"stack problem, probably: {top.cause} ({top.component}), low confidence (no known message matched)"
    return f"stack problem: {top.cause} ({top.component})"


def diagnose_text(text: str, source: str = "<text>", live: Facts | None = None) -> Report:
    started = time.monotonic()
    scan = scan_text(text)
    facts = facts_from_text(text[:HEAD_BYTES], source, scan, live)
    return build_report(scan, facts, findings_for(facts, live is not None), source, started)


def diagnose_stream(stream: Any, source: str, live: Facts | None = None, fast: bool = False,
                    system: Any = None) -> Report:
    """``stream``: a binary stream (IO[bytes] or inputs.Peek).  ``fast``: past FAST_MIN_BYTES, through grep
    (``scan_stream_fast``); the answer is the Python path's."""
    started = time.monotonic()
    mode = "python"
    if fast:
        scan, head, mode = scan_stream_fast(stream, system=system)
    else:
        scan, head = scan_stream(stream)
    facts = facts_from_text(head.decode("utf-8", "replace"), source, scan, live)
    return build_report(scan, facts, findings_for(facts, live is not None), source, started, mode)


def diagnose_path(path: str, live: Facts | None = None, fast: bool = True, system: Any = None,
                  fd: int | None = None, offset: int = 0, size: int | None = None) -> Report:
    """A regular file: ``path``, or (``fd``) standard input redirected from one, read from ``offset`` (``size``: the
    file's size; ``path`` then only names it)."""
    started = time.monotonic()
    if size is None:
        size = os.path.getsize(path)
    parsed: dict[str, Facts] = {}
    worker: list[threading.Thread] = []

    def on_head(head: bytes) -> None:  # parse facts in a thread while grep's output is consumed
        t = threading.Thread(target=lambda: parsed.setdefault("f", parse_head(head.decode("utf-8", "replace"), path)),
                             daemon=True)
        t.start()
        worker.append(t)

    res = scan_file_fast(path, on_head=on_head, system=system, fd=fd, offset=offset) \
        if fast and size - offset >= FAST_MIN_BYTES else None
    mode = "grep-prefilter"
    if res is None:
        mode = "python"
        if fd is not None:
            os.lseek(fd, offset, os.SEEK_SET)
            res = scan_stream(os.fdopen(os.dup(fd), "rb", closefd=True))
        else:
            with open(path, "rb") as fh:
                res = scan_stream(fh)
    for t in worker:
        t.join()
    scan, head = res
    facts = facts_from_text(head.decode("utf-8", "replace"), path, scan, live, parsed.get("f"))
    return build_report(scan, facts, findings_for(facts, live is not None), path, started, mode)


def _stdin_file(env: Environment) -> tuple[int, int, int] | None:
    """Standard input redirected from a regular file (``gpuvet diagnose - < big.log``): (its descriptor, the offset
    reading starts at, its size); None for a pipe, a terminal, a closed or a test's text stream."""
    if getattr(env.stdin, "buffer", None) is None:
        return None
    try:
        fd = env.stdin.fileno()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        return fd, os.lseek(fd, 0, os.SEEK_CUR), st.st_size
    except (OSError, ValueError, AttributeError):
        return None


@dataclass
class DiagnoseOptions:
    log: str | None = None  # a path, or '-' for standard input
    follow: str | None = None  # a growing log to watch instead
    wait_s: float | None = None  # with follow: give up after this long without a diagnosis
    here: bool = False  # add this machine's live facts
    fast: bool = True  # the grep prefilter for large files


def run(opts: DiagnoseOptions, env: Environment) -> Report | None:
    """The diagnose use case; None only when ``follow`` gave up after ``wait_s`` without a diagnosis."""
    from gpuvet.model.errors import GpuvetError, UsageError

    from .facts import live_facts
    from .inputs import check_log_file, open_input, open_log_stdin, open_log_stream

    from .engine import stamp

    if bool(opts.log) == bool(opts.follow):
        raise UsageError("give exactly one of FILE (or -) and --follow FILE")
    started, started_wall = env.clock(), env.wall_clock()
    live = live_facts(env, deadline=4.0) if opts.here else None
    report: Report | None
    if opts.follow:
        report = follow(opts.follow, env, live, opts.wait_s)
    elif opts.log == "-":
        reg = _stdin_file(env) if opts.fast else None  # before anything is read: where reading starts
        peek = open_log_stdin(env)  # empty, blank or binary input: refused the same way
        if reg is not None and reg[2] - reg[1] >= FAST_MIN_BYTES:  # grep reads the file from that offset
            report = diagnose_path("<stdin>", live, system=env.system(), fd=reg[0], offset=reg[1], size=reg[2])
        else:
            report = diagnose_stream(peek, "<stdin>", live, fast=opts.fast, system=env.system())
    else:
        assert opts.log is not None
        size = check_log_file(opts.log)
        if size < 0:  # a FIFO, /dev/stdin, a device: one pass, as a stream
            with open_input(opts.log, "log") as fh:
                report = diagnose_stream(open_log_stream(fh, opts.log), opts.log, live, fast=opts.fast,
                                         system=env.system())
        else:
            try:
                report = diagnose_path(opts.log, live, fast=opts.fast, system=env.system())
                now = os.stat(opts.log).st_size
            except OSError as exc:
                raise GpuvetError(f"cannot read log {opts.log}: {exc.strerror or exc}") from None
            if now < size:  # truncated or rewritten while read: the diagnosis saw part of it
                from .inputs import warn_shrank

                warn_shrank(env, opts.log, size, now)
    return None if report is None else stamp(report, env, started_wall, started, live=opts.here)


def follow(path: str, env: Environment, live: Facts | None, wait_s: float | None,
           poll: float = 0.2) -> Report | None:
    """Tail ``path`` (which may not exist yet) and return the first report with a diagnosis (None when
    ``wait_s`` passed without one)."""
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
                    if len(head) < HEAD_BYTES:
                        head += raw + b"\n"
                    if sc.feed(lineno, raw):
                        new_match = True
        if new_match:
            facts = facts_from_text(head.decode("utf-8", "replace"), path, sc.result, live)
            report = build_report(sc.result, facts, findings_for(facts, live is not None),
                                            path, started, "follow")
            first = first_diagnosis(report)
            if first is not None and first.get("cause") != "none":  # a stack cause (an honest `none` first: keep on)
                return report
        if wait_s is not None and time.monotonic() - started > wait_s:
            return None
        time.sleep(poll)


def first_diagnosis(report: Report) -> dict[str, Any] | None:
    d = report.extra.get("diagnoses") or []
    return d[0] if d else None


__all__ = ["diagnose_text", "diagnose_stream", "diagnose_path", "scan_text", "scan_stream", "scan_file_fast",
           "scan_stream_fast",
           "build_report", "facts_from_text", "findings_for", "to_finding", "first_diagnosis", "follow",
           "DiagnoseOptions", "run"]
