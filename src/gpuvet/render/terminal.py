"""Terminal output: the answer first, then what to fix, then the stack.

Order of the screen (what a person reads at a glance):

1. one verdict line (``GPU usable by torch: yes (2.11.0+cu130, CUDA 13.0, 1x H200 sm_90)``; for
   ``compat`` the works/breaks/unknown verdict; for ``diagnose`` the causes come from its own extra);
2. the failed findings, each with its evidence and fixes;
3. the checks that could not run, collapsed into one line per reason with the command whose output
   would supply the facts (``--verbose`` lists them one by one);
4. the stack table: a short one by default, every row and where it was read with ``--stack`` or
   ``--verbose``;
5. the score of what was checked, and how much could not be.

Plain text with optional ANSI colour, wrapped to the width given (the terminal's real width, which
the CLI reads); no Rich, so the path users run is as fast as ``--format json``.
"""
from __future__ import annotations

import re
import textwrap
from typing import Any, Iterable, Sequence

from gpuvet.model import SUPPLIED_BY, SUPPLIED_BY_VENDOR, Finding, Outcome, Report, Severity

from .stack import stack_lines

MARK = {Outcome.FAILED: "✗", Outcome.UNKNOWN: "?", Outcome.PASSED: "✓", Outcome.SKIPPED: "-"}
# a failed finding's glyph says how bad it is: an error is not drawn like a warning or a note
SEV_MARK = {Severity.CRITICAL: "✗", Severity.ERROR: "✗", Severity.WARNING: "!", Severity.INFO: "i"}
SEV_STYLE = {Severity.CRITICAL: "1;31", Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}
VERDICT_TEXT = {"works": "works", "breaks": "breaks", "unknown": "not known (the knowledge base does not know enough)"}
# layers of the short stack table (the full one has every row)
SHORT_LAYERS = ("os", "gpu", "driver", "runtime", "compiler", "library", "framework", "package")
SHORT_PACKAGES = {"torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "numpy", "xformers",
                  "flash-attn", "jax", "jaxlib", "tensorflow", "bitsandbytes", "deepspeed", "vllm"}
TABLE_WORDS = {"framework_builds": "framework build", "gpu_devices": "GPUs", "drivers": "driver",
               "runtimes": "runtimes", "compilers": "compilers", "libraries": "loaded libraries",
               "packages": "packages", "env_vars": "environment", "device_nodes": "device nodes",
               "os_info": "OS and Python", "containers": "container", "kernel_caches": "kernel caches",
               "shared_libraries": "library resolution", "user": "user", "host_compilers": "host compilers",
               "extensions": "compiled extensions"}


_AFTER_SLASH = re.compile(r"[^/]*(?:/+|$)")
_AFTER_SEP = re.compile(r"[^_.,:=-]*(?:[_.,:=-]+|$)")


def _pieces(word: str, room: int) -> list[str]:
    """A word too long for a line (a path, a URL, a mangled symbol) split after each '/' (a piece still too
    long: after '_', '.', ':', '-', ...) so it wraps at a separator, not mid-name; a run without one longer
    than the line is cut at the line's length, as before."""
    out: list[str] = []
    for p in (m.group(0) for m in _AFTER_SLASH.finditer(word) if m.group(0)):
        for q in ([p] if len(p) <= room else [m.group(0) for m in _AFTER_SEP.finditer(p) if m.group(0)]):
            while len(q) > room:
                out.append(q[:room])
                q = q[room:]
            if q:
                out.append(q)
    return out


class _Wrapper(textwrap.TextWrapper):
    """textwrap's, but a word longer than a line becomes its pieces (chunks with no space between them:
    they pack on a line as one word would and the line breaks between two of them)."""

    def _split(self, text: str) -> list[str]:
        room = max(8, self.width - len(self.subsequent_indent))
        return [p for chunk in super()._split(text)
                for p in (_pieces(chunk, room) if len(chunk) > room and not chunk.isspace() else [chunk])]


def wrap(text: str, width: int, indent: int = 0, hang: int = 2) -> list[str]:
    """``text`` wrapped to ``width`` (first line indented ``indent``, the others ``hang``) at spaces; a word
    longer than a line breaks after a path separator, never inside a name when it holds one."""
    w = _Wrapper(width=width, initial_indent=" " * indent, subsequent_indent=" " * hang,
                 break_long_words=True, break_on_hyphens=False)
    return w.wrap(text) or [" " * indent]


class _Out:
    def __init__(self, width: int, color: bool):
        self.width = max(40, int(width or 80))
        self.color = color
        self.lines: list[str] = []

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and code and text else text

    def blank(self) -> None:
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def para(self, text: str, indent: int = 0, hang: int | None = None, code: str = "",
             first: str = "") -> None:
        """Wrap ``text`` to the width; ``first`` is an unstyled prefix-free lead already in text."""
        hang = indent + 2 if hang is None else hang
        for w in wrap(text, self.width, indent, hang):
            self.lines.append(self.style(w, code))

    def text(self) -> str:
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        return "\n".join(self.lines) + "\n"


def render_terminal(report: Report, color: bool = False, width: int = 80, verbose: bool = False,
                    stack: bool = False, **_: Any) -> str:
    from .listing import TEXT_VIEWS

    if report.command in TEXT_VIEWS:  # a document command (rules, kb info, recommend): its own view
        return TEXT_VIEWS[report.command](report)
    out = _Out(width, color)
    _verdict(out, report)
    skipped_inputs = [i for i in report.meta.get("inputs") or [] if not i.get("recognised")]
    for i in skipped_inputs:
        out.para(f"! {i.get('source')}: {i.get('note') or 'not recognised'}; left out", code="33")
    if skipped_inputs:
        out.blank()
    ranked = is_ranked(report)
    shown_input = str(report.meta.get("input") or "") if ranked else ""
    failed = order_failed(report.findings, ranked)
    # a ranked report (diagnose, run): the causes, or what the text shows instead (user code, data), come right
    # after the verdict; the notes and a check's information findings (run's live BLD045) after them
    later = [f for f in failed if f.severity <= Severity.INFO] if ranked else []
    # "probably not a stack problem" first (logs/rank._honest_none): what the text shows of the program's own error
    # comes first, then the stack causes as what they are, guesses
    honest = ranked and (report.extra.get("diagnoses") or [{}])[0].get("cause") == "none"
    if honest:
        _diagnoses(out, report)
        if any(f not in later for f in failed):
            out.para("If the stack is at fault after all (guesses from the error lines' words, low confidence):",
                     code="1")
            out.blank()
    for f in failed:
        if f not in later:
            _finding(out, f, shown_input=shown_input)
    if ranked and not honest:
        _diagnoses(out, report)
    _notes(out, report)
    for f in later:
        _finding(out, f, shown_input=shown_input)
    unknown = [f for f in report.findings if f.outcome is Outcome.UNKNOWN]
    if verbose:
        for f in unknown:
            _finding(out, f, brief=True)
        for f in report.findings:
            if f.outcome in (Outcome.PASSED, Outcome.SKIPPED):
                out.para(f"{MARK[f.outcome]} {f.code} {f.name}: {f.title}", code="2")
    elif unknown:
        out.blank()
        for line in unknown_lines(report, unknown):
            out.para(line, code="33" if not color else "33")
    if not ranked:
        _diagnoses(out, report)
    if report.facts is not None and not report.extra.get("hide_stack"):
        _stack(out, report, full=stack or verbose)
    _score(out, report)
    return out.text()


# -- 1. the verdict -------------------------------------------------------------------------------
def _verdict(out: _Out, report: Report) -> None:
    usable = report.extra.get("usable")
    if usable:
        state = usable.get("state", "")
        code = {"yes": "1;32", "no": "1;31"}.get(state, "1;33")
        out.para(usable["text"], code=code, hang=2)
        out.blank()
        return
    verdict = report.extra.get("verdict")
    if verdict:
        code = {"works": "1;32", "breaks": "1;31"}.get(verdict, "1;33")
        out.para(f"Verdict: {verdict_text(report)}", code=code)
        reasons = report.extra.get("verdict_reasons", [])
        for why in reasons[:6]:
            out.para(f"- {why}", indent=2, hang=4)
        if len(reasons) > 6:
            out.para(f"- and {len(reasons) - 6} more (--format json lists them)", indent=2, hang=4, code="2")
        srcs = report.extra.get("sources", [])
        for src in srcs[:4]:
            out.para(f"source: {src}", indent=2, hang=4, code="2")
        out.blank()


# -- 2. findings ----------------------------------------------------------------------------------
def mark(f: Finding) -> str:
    """The glyph of a finding: for a failed one its severity's (✗ error, ! warning, i information)."""
    return SEV_MARK[f.severity] if f.outcome is Outcome.FAILED else MARK[f.outcome]


def order_failed(findings: Iterable[Finding], ranked: bool = False) -> list[Finding]:
    """Failed findings as every renderer shows them: unacknowledged first, most severe first, by code.
    ``ranked`` (diagnose, run: the findings are causes in the order the ranker put them): that order, so
    the first cause drawn is the verdict's, never a more severe but less likely one."""
    failed = [f for f in findings if f.outcome is Outcome.FAILED]
    if ranked:  # the ranker's order; a check's information note (run's live BLD045) after the causes, never before
        return sorted(failed, key=lambda f: (bool(f.acknowledged), f.severity <= Severity.INFO))
    return sorted(failed, key=lambda f: (bool(f.acknowledged), -int(f.severity), f.code))


def is_ranked(report: Report) -> bool:
    """A report whose findings are ranked causes (diagnose, run's diagnosis)."""
    return "diagnoses" in report.extra


def tally(findings: Sequence[Finding], by_severity: bool = False) -> list[str]:
    """The score line's counts: failures (warnings and worse) apart from information notes and
    acknowledged findings, so a note never reads as a failure beside a score of 100.  ``by_severity``
    (beside a compat verdict): the failures per severity, "1 warning" rather than "1 failed", so a
    stack that works with a warning never reads "works" beside "1 failed"."""
    failed = [f for f in findings if f.outcome is Outcome.FAILED]
    bad = [f for f in failed if not f.acknowledged and f.severity > Severity.INFO]
    counts = [(len(bad), "failed")]
    if by_severity and bad:
        counts = [(sum(1 for f in bad if f.severity == sev), _severity_word(sev, sum(1 for f in bad if f.severity == sev)))
                  for sev in (Severity.CRITICAL, Severity.ERROR, Severity.WARNING)]
        counts = [c for c in counts if c[0]]
    counts += [(sum(1 for f in failed if not f.acknowledged and f.severity == Severity.INFO), "information"),
               (sum(1 for f in failed if f.acknowledged), "acknowledged"),
               (sum(1 for f in findings if f.outcome is Outcome.PASSED), "passed"),
               (sum(1 for f in findings if f.outcome is Outcome.UNKNOWN), "could not be checked"),
               (sum(1 for f in findings if f.outcome is Outcome.SKIPPED), "not applicable")]
    return [f"{n} {w}" for n, w in counts if n or w in ("failed", "passed")]


def _severity_word(sev: Severity, n: int) -> str:
    word = {Severity.CRITICAL: "critical", Severity.ERROR: "error", Severity.WARNING: "warning"}[sev]
    return word if n == 1 or sev == Severity.CRITICAL else word + "s"


def verdict_text(report: Report) -> str:
    """The compat verdict as shown: "works", "works, with 1 warning" (a warning is a caveat to read, not
    a break), "breaks", or "not known (...)"."""
    verdict = str(report.extra.get("verdict") or "")
    text = VERDICT_TEXT.get(verdict, verdict)
    if verdict == "works":
        n = sum(1 for f in report.findings if f.outcome is Outcome.FAILED and not f.acknowledged
                and f.severity == Severity.WARNING)
        if n:
            text += f", with {n} warning{'s' if n > 1 else ''}"
    return text


def short_source(src: str, shown_input: str, lines_shown: set[int]) -> str:
    """Where a diagnosis's fact was read, said once: the diagnosed input's own path left out ("line 42 (...)"
    rather than "crash.log line 42 (...)", "collect_env" for "crash.log (collect_env)"), and the quoted
    line dropped when that line is already drawn above as evidence ("line 49")."""
    if not shown_input:
        return src
    parts = []
    for part in src.split("; "):
        if part == f"{shown_input} (collect_env)":
            part = "collect_env"
        elif part.startswith(f"{shown_input} line "):
            part = part[len(shown_input) + 1:]
        m = re.match(r"line (\d+) \(", part)
        if m and part.endswith(")") and int(m.group(1)) in lines_shown:
            part = f"line {m.group(1)}"
        parts.append(part)
    return "; ".join(parts)


def short_why(f: Finding) -> str:
    """A diagnosis's why without its first reason when that is the title drawn just above it (the ranker's
    why repeats it: "Only cause the text points at. <title>."); --format json keeps the whole text."""
    why, _, tail = f.why, *f.title.partition("): ")[1:]
    if not tail or tail not in why:
        return why
    for full, short in ((f"points at. {tail}.", "points at."), (f"points at. {tail}; ", "points at. Also: "),
                        (f"because {tail} — this fact explains the error", "because the fact above explains the error"),
                        (f"because {tail}.", "because of the above."), (f"because {tail}; ", "because of the above; "),
                        (f" Supported by: {tail}.", ""), (f"Supported by: {tail}; ", "Also supported by: ")):
        why = why.replace(full, short)
    return why.strip()


def _finding(out: _Out, f: Finding, brief: bool = False, shown_input: str = "") -> None:
    style = SEV_STYLE[f.severity] if f.outcome is Outcome.FAILED and not f.acknowledged else "2"
    head = f"{mark(f)} {f.code} {f.name} [{severity_label(f)}]"
    if f.acknowledged:
        head += f" (acknowledged: {f.acknowledged})"
    out.para(head, code=style, hang=4)
    out.para(f.title, indent=2)
    if brief:
        return
    why = short_why(f) if shown_input else f.why
    if why:
        out.para(f"why: {why}", indent=2, hang=4, code="2")
    groups = _grouped_evidence(f)
    lines_shown = {e.line for _, items in groups for e in items if e.line}
    for src, items in groups:
        for e in items:
            where = f"line {e.line}: " if e.line else ""
            out.para(f"· {where}{e.text}", indent=2, hang=4)
        if src and not any(src.split(" (")[0] in e.text for e in items):
            out.para(f"(read from {short_source(src, shown_input, lines_shown)})", indent=4, hang=6, code="2")
    for x in f.fixes:
        tag = x.applicability.value + (", root" if x.needs_root else "") + (", reboot" if x.needs_reboot else "")
        text = x.text
        if x.command and text.endswith(x.command) and text[: -len(x.command)].rstrip().endswith(":"):
            text = text[: -len(x.command)].rstrip()  # the command on its own "$" line, whole, to copy
        out.para(f"fix [{tag}]: {text}", indent=2, hang=4, code="32")
        if x.command and x.command not in text:
            out.para(f"$ {x.command}", indent=4, hang=6, code="32")
    out.blank()


def severity_label(f: Finding) -> str:
    """The bracketed word of a finding's head: its severity, or for a diagnosis drawn as a warning (a tentative
    reading, confidence 0.3 or less: app.diagnose.TENTATIVE) "low confidence", which is what it means."""
    if f.name.startswith("diagnosis-") and f.severity is Severity.WARNING:
        return "low confidence"
    return f.severity.name.lower()


def _grouped_evidence(f: Finding, limit: int = 8) -> list[tuple[str, list]]:
    """Evidence lines in order, the source named once per run of lines read from the same place."""
    groups: list[tuple[str, list]] = []
    for e in f.evidence[:limit]:
        src = "" if e.line else e.source
        if groups and groups[-1][0] == src:
            groups[-1][1].append(e)
        else:
            groups.append((src, [e]))
    return groups


# -- 3. what could not be checked -----------------------------------------------------------------
def unknown_lines(report: Report, unknown: Sequence[Finding]) -> list[str]:
    """One line per reason: how many checks, why, and what would supply the facts."""
    pasted = report.facts is not None and getattr(report.facts, "origin", "") in ("pasted", "described")
    not_shown: dict[str, list[Finding]] = {}
    by_reason: dict[str, list[Finding]] = {}
    for f in unknown:
        reason = f.title[len("could not check: "):] if f.title.startswith("could not check: ") else f.title
        if f.missing and (pasted or reason.startswith("not collected")):
            not_shown.setdefault("", []).append(f)
        else:
            by_reason.setdefault(reason, []).append(f)
    lines: list[str] = []
    if not_shown:
        fs = not_shown[""]
        tables = list(dict.fromkeys(t for f in fs for t in f.missing))
        facts = report.facts
        cmds = _commands_to_paste(facts, tables) if pasted else \
            [c for c in dict.fromkeys(SUPPLIED_BY.get(t, "") for t in tables) if c and not c.startswith("gpuvet")]
        absent = [t for t in tables if facts is None or facts.status(t) != "ok"]
        thin = [t for t in tables if t not in absent]
        words = lambda ts: ", ".join(TABLE_WORDS.get(t, t.replace("_", " ")) for t in ts)  # noqa: E731
        if pasted:
            parts = ([f"the text does not show {words(absent)}"] if absent else []) + \
                    ([f"shows too little of {words(thin)}"] if thin else [])
            what = " and ".join(parts)
        else:
            what = f"not collected: {words(tables)}"
        supply = (f"paste the output of {', '.join(cmds)} (or run gpuvet check on that machine)" if cmds
                  else "run gpuvet check on that machine")
        lines.append(f"? {_n(len(fs))} could not run: {what}; {supply}; --verbose lists them")
    for reason, fs in by_reason.items():
        codes = ", ".join(f.code for f in fs[:4]) + (", …" if len(fs) > 4 else "")
        lines.append(f"? {_n(len(fs))} could not run ({codes}): {reason}")
    return lines


def _vendors(facts: Any) -> set[str]:
    """The GPU vendors the facts name (framework build variant, runtimes, GPUs, drivers)."""
    out: set[str] = set()
    for b in facts.table("framework_builds"):
        if b.get("variant") == "rocm" or b.get("hip"):
            out.add("amd")
        elif b.get("variant") == "cuda" or b.get("cuda"):
            out.add("nvidia")
    for t in ("runtimes", "gpu_devices", "drivers"):
        out.update(v for v in (r.get("vendor") for r in facts.table(t)) if v in ("amd", "nvidia"))
    return out


def _already_shown(facts: Any, command: str) -> bool:
    """The pasted text already holds this command's output: asking for it again settles nothing."""
    rows = [r for t in ("gpu_devices", "drivers", "runtimes", "compilers", "framework_builds", "packages", "os_info")
            for r in facts.table(t)]
    if command == "python -m torch.utils.collect_env":
        return any("(collect_env)" in r.source for r in rows)
    if command == "hipcc --version":
        return any(r.get("name") in ("hipcc", "hipconfig") for r in facts.table("compilers"))
    if command == "nvcc --version":
        return any(r.get("name") == "nvcc" for r in facts.table("compilers"))
    if command in ("nvidia-smi", "rocminfo"):
        return any(command in r.source for t in ("gpu_devices", "drivers") for r in facts.table(t))
    return False


def _commands_to_paste(facts: Any, tables: Sequence[str]) -> list[str]:
    """What to paste for these tables: this vendor's command when the facts name one vendor, never one whose
    output the text already holds."""
    vendors = _vendors(facts) if facts is not None else set()
    vendor = next(iter(vendors)) if len(vendors) == 1 else ""
    cmds = []
    for t in tables:
        c = SUPPLIED_BY_VENDOR.get((t, vendor), SUPPLIED_BY.get(t, ""))
        if c and not c.startswith("gpuvet") and not (facts is not None and _already_shown(facts, c)):
            cmds.append(c)
    return list(dict.fromkeys(cmds))


def _n(k: int) -> str:
    return f"{k} check{'s' if k != 1 else ''}"


def _notes(out: _Out, report: Report) -> None:
    """diagnose's notes: what the facts explain without being a cause (rocminfo's Runtime Version 1.1 is
    the HSA API, not a ROCm release), drawn like a check's information finding."""
    for n in report.extra.get("notes") or []:
        if not isinstance(n, dict):
            continue
        out.para(f"i {n.get('code', '')} {n.get('title', '')}".rstrip(), code="36", hang=4)
        if n.get("why"):
            out.para(f"why: {n['why']}", indent=2, hang=4, code="2")
        out.blank()


# -- diagnose's causes (when a renderer of diagnose hands them over) --------------------------------
def _diagnoses(out: _Out, report: Report) -> None:
    """For diagnose/run: what the text shows when no stack cause is blamed (user code, data)."""
    diags = report.extra.get("diagnoses") or []
    if diags and diags[0].get("cause") != "none":  # an honest `none` first still shows the user-code signals
        return
    for sig in report.extra.get("user_code_signals") or []:
        out.para(f"● {sig.get('signature', '')} {sig.get('title', '')}: your code or data, not the stack".strip(),
                 code="1", hang=4)
        if sig.get("meaning"):
            out.para(str(sig["meaning"]), indent=2)
        for e in (sig.get("evidence") or [])[:4]:
            out.para(f"· line {e.get('line')}: {e.get('text')}", indent=2, hang=4)
        out.blank()


# -- 4. the stack ---------------------------------------------------------------------------------
def short_stack(rows: list) -> list:
    """The rows of the short stack table: the layers that decide, the framework's companions, the
    libraries really loaded."""
    frameworks = {b for layer, b, _, _ in rows if layer == "framework"}
    return [r for r in rows if r[0] in SHORT_LAYERS and
            (r[0] != "package" or (r[1] in SHORT_PACKAGES and r[1] not in frameworks)) and
            not (r[0] == "library" and "not loaded" in r[2])]


def _stack(out: _Out, report: Report, full: bool) -> None:
    rows = stack_lines(report.facts)
    if not rows:
        return
    if not full:
        rows = short_stack(rows)
    hidden = len(stack_lines(report.facts)) - len(rows)
    out.blank()
    with_source = full or out.width >= 120
    title = "Stack"
    if not full and hidden:
        title += f" (--stack for all {len(rows) + hidden} rows" + ("" if with_source else " and where each was read") + ")"
    elif not with_source:
        title += " (--stack adds where each row was read)"
    out.lines.append(out.style(title, "1"))
    cols = ["layer", "component", "version"] + (["read from"] if with_source else [])
    table = [[a, b, c] + ([d] if with_source else []) for a, b, c, d in rows]
    out.lines.extend(_table(cols, table, out.width, out))
    out.blank()


def _table(cols: list[str], rows: list[list[str]], width: int, out: _Out) -> list[str]:
    """A plain table fitted to ``width``: columns wrap (the last ones first), never run past it."""
    gap = 2
    natural = [max([len(c)] + [len(str(r[i])) for r in rows]) for i, c in enumerate(cols)]
    avail = width - gap * (len(cols) - 1)
    widths = list(natural)
    mins = [min(n, m) for n, m in zip(natural, [9, 14, 14, 16][:len(cols)])]
    while sum(widths) > avail:
        # shrink the widest column that can still shrink
        i = max((j for j in range(len(cols)) if widths[j] > mins[j]), key=lambda j: widths[j], default=None)
        if i is None:
            break
        widths[i] -= 1
    lines = [out.style("  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip(), "2")]
    lines.append(out.style("  ".join("─" * w for w in widths), "2"))
    for r in rows:
        cells = [textwrap.wrap(str(v), width=w, break_long_words=True, break_on_hyphens=False) or [""]
                 for v, w in zip(r, widths)]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "").ljust(w) for c, w in zip(cells, widths)]
            lines.append("  ".join(parts).rstrip())
    return lines


# -- 5. the score ---------------------------------------------------------------------------------
def _score(out: _Out, report: Report) -> None:
    counts = {o: sum(1 for f in report.findings if f.outcome is o) for o in Outcome}
    if report.score is not None and not report.extra.get("verdict"):
        sc = report.score
        checked = counts[Outcome.PASSED] + counts[Outcome.FAILED]
        style = "1;32" if sc >= 90 else ("1;33" if sc >= 60 else "1;31")
        parts = tally(report.findings)
        if checked:
            out.para(out.style(f"Score {sc}/100", style) + f" on {_n(checked)}: " + " · ".join(parts), hang=2)
        else:
            out.para(out.style("Score: none", "1;33") + ": nothing could be checked ("
                     + " · ".join(p for p in parts if not p.startswith("0 ")) + ")", hang=2)
    elif report.findings and report.command not in ("diagnose", "run"):
        by_severity = bool(report.extra.get("verdict"))
        out.para(" · ".join(p for p in tally(report.findings, by_severity) if not p.startswith("0 ")))
    kb = report.meta.get("kb")
    if kb:
        el = report.meta.get("elapsed_s")
        tail = f" · {el:.2f}s" if isinstance(el, (int, float)) else ""
        out.lines.append(out.style(f"gpuvet {report.meta.get('gpuvet_version')} · KB {kb.get('version')}{tail}", "2"))


def _join(items: Iterable[str]) -> str:
    return ", ".join(items)


# -- -q and --statistics ----------------------------------------------------------------------------
def _where(report: Report, f: Finding) -> str:
    """Where a finding was read: the input file for pasted text, else the first evidence's source."""
    src = report.meta.get("input") or ""
    if not src and report.facts is not None and getattr(report.facts, "origin", "") == "pasted":
        src = next((e.source for e in f.evidence if e.source), "")
    if not src:
        src = next((e.source.split(" (")[0] for e in f.evidence if e.source), "") or report.command
    line = next((e.line for e in f.evidence if e.line), None)
    return f"{src}:{line}" if line else src


def render_quiet(report: Report) -> str:
    """One line per failed finding, ``WHERE:CODE: message`` (ruff's and pip-audit's shape)."""
    lines = [f"{_where(report, f)}:{f.code}: [{f.severity.name.lower()}] {f.title}"
             for f in report.findings if f.outcome is Outcome.FAILED and not f.acknowledged]
    return "".join(line + "\n" for line in lines)


def render_statistics(report: Report) -> str:
    """Failed findings counted per code, most first (``ruff --statistics``)."""
    counts: dict[str, list[Finding]] = {}
    for f in report.findings:
        if f.outcome is Outcome.FAILED and not f.acknowledged:
            counts.setdefault(f.code, []).append(f)
    rows = sorted(counts.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    fixable = lambda fs: any(x.applicability.value == "safe" and x.command for f in fs for x in f.fixes)  # noqa: E731
    out = [f"{len(fs):>4}  {code:<7} [{'*' if fixable(fs) else ' '}] {fs[0].name} ({fs[0].severity.name.lower()})"
           for code, fs in rows]
    if rows:
        n = sum(len(fs) for _, fs in rows)
        out.append(f"{n:>4}  failed finding{'' if n == 1 else 's'}; [*] a safe fix exists (--show-fixes)")
    else:
        out.append("   0  failed findings")
    return "\n".join(out) + "\n"
