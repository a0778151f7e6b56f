"""``diagnose``: log / pasted text -> facts + signature matches -> ranked diagnoses -> Report.

* Facts: the text goes through the same parsers as ``gpuvet check --from``
  (``gpuvet.probes.pasted.parse_report``; ValueError there means "no tool output recognised", i.e. no facts),
  plus the version facts that only appear inside tracebacks and warnings (``gpuvet.logs.extract``); with
  ``live`` facts (``--here``) both are merged.  The same checks run on them (``engine.run_checks``).
* Signatures: every line streams through ``gpuvet.logs.match.Scanner`` in bounded memory.  For large
  regular files the cheap prefilter is delegated to ``grep -E`` (a compiled DFA matcher) with the
  signatures' own patterns, and only its candidate lines reach Python; without grep, or for standard input,
  the pure-Python prefilter is used.
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

from gpuvet.logs.match import Scanner, ScanResult, iter_blocks, iter_lines
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


def scan_file_fast(path: str, catalog: Catalog | None = None, grep: str | None = None,
                   head_bytes: int = HEAD_BYTES, on_head=None, system: Any = None) -> tuple[ScanResult, bytes] | None:
    """Scan a large regular file: ``grep -a -n -E -f`` with the signature patterns as prefilter runs in its own
    process while Python handles the first block(s) (context hints) and ``on_head(head)`` (e.g. parsing
    facts); then the candidate lines grep found are matched.  None when grep is unavailable or fails."""
    if system is None:  # the machine, through the one door (probes.system.System)
        from gpuvet.probes.system import System

        system = System()
    grep = grep or system.which("grep")
    if not grep:
        return None
    cat = catalog or load_catalog()
    sc = Scanner(cat)
    from gpuvet.logs.extract import PREFILTER_PATTERNS

    import tempfile  # here: its imports (shutil, random) cost every small diagnosis start-up

    with tempfile.NamedTemporaryFile("w", suffix=".patterns", delete=False, encoding="utf-8") as pf:
        pf.write("\n".join(list(cat.patterns()) + list(PREFILTER_PATTERNS)) + "\n")
        pfile = pf.name
    try:
        proc = system.spawn([grep, "-a", "-n", "-E", "-f", pfile, "--", path], {"LC_ALL": "C"})
    except OSError:
        os.unlink(pfile)
        return None
    try:
        with open(path, "rb") as fh:  # grep scans the file meanwhile, on another core
            head = fh.read(head_bytes)
        cut = head.rfind(b"\n", 0, HINT_BYTES) + 1
        head_lines = sc.feed_block(1, head[:cut]) if cut > 0 else 0
        sc.hints_everywhere = False
        if on_head is not None:
            on_head(head)
        assert proc.stdout is not None
        for _, raw in iter_lines(proc.stdout):
            num, sep, rest = raw.partition(b":")
            if not sep or not num.isdigit():
                continue
            n = int(num)
            if n <= head_lines:
                continue
            sc.feed(n, rest, prefiltered=True)
        proc.stdout.close()
        rc = proc.wait()
        if rc not in (0, 1):
            return None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.unlink(pfile)
    if sc.result.lines < head_lines:
        sc.result.lines = head_lines
    return sc.result, head


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
    return Finding(code=code, name=name, severity=severity, outcome=Outcome.FAILED,
                   title=f"{d.cause} ({d.component}, confidence {d.confidence:.2f}): {d.title}", why=d.why,
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


def diagnose_stream(stream: Any, source: str, live: Facts | None = None) -> Report:
    """``stream``: a binary stream (IO[bytes] or inputs.Peek)."""
    started = time.monotonic()
    scan, head = scan_stream(stream)
    facts = facts_from_text(head.decode("utf-8", "replace"), source, scan, live)
    return build_report(scan, facts, findings_for(facts, live is not None), source, started)


def diagnose_path(path: str, live: Facts | None = None, fast: bool = True, system: Any = None) -> Report:
    started = time.monotonic()
    size = os.path.getsize(path)
    parsed: dict[str, Facts] = {}
    worker: list[threading.Thread] = []

    def on_head(head: bytes) -> None:  # parse facts in a thread while grep's output is consumed
        t = threading.Thread(target=lambda: parsed.setdefault("f", parse_head(head.decode("utf-8", "replace"), path)),
                             daemon=True)
        t.start()
        worker.append(t)

    res = scan_file_fast(path, on_head=on_head, system=system) if fast and size >= FAST_MIN_BYTES else None
    mode = "grep-prefilter"
    if res is None:
        mode = "python"
        with open(path, "rb") as fh:
            res = scan_stream(fh)
    for t in worker:
        t.join()
    scan, head = res
    facts = facts_from_text(head.decode("utf-8", "replace"), path, scan, live, parsed.get("f"))
    return build_report(scan, facts, findings_for(facts, live is not None), path, started, mode)


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
        report = diagnose_stream(open_log_stdin(env), "<stdin>", live)
    else:
        assert opts.log is not None
        size = check_log_file(opts.log)
        if size < 0:  # a FIFO, /dev/stdin, a device: one pass, as a stream
            with open_input(opts.log, "log") as fh:
                report = diagnose_stream(open_log_stream(fh, opts.log), opts.log, live)
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
           "build_report", "facts_from_text", "findings_for", "to_finding", "first_diagnosis", "follow",
           "DiagnoseOptions", "run"]
