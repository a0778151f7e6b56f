"""Findings, reports, severities and exit codes: what every command ends with."""
from __future__ import annotations

import enum
from dataclasses import field
from typing import Any, TypedDict

from .record import record


class Severity(enum.IntEnum):
    INFO = 10
    WARNING = 20
    ERROR = 30
    CRITICAL = 40

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (choose from {', '.join(s.name.lower() for s in cls)})")

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.name.lower()


class Outcome(str, enum.Enum):
    FAILED = "failed"  # the problem is present
    PASSED = "passed"  # checked, the problem is absent
    UNKNOWN = "unknown"  # could not check (facts missing, probe failed)
    SKIPPED = "skipped"  # not applicable on this machine (e.g. no AMD GPU for an AMD rule)

    def __str__(self) -> str:  # pragma: no cover
        return self.value


class Applicability(str, enum.Enum):
    SAFE = "safe"  # can be applied without root, reversible (pip install in the env, an env var)
    UNSAFE = "unsafe"  # changes the system or needs root
    DISPLAY_ONLY = "display-only"  # driver change, reboot: shown, never applied

    def __str__(self) -> str:  # pragma: no cover
        return self.value


class ExitCode(enum.IntEnum):
    """Exit status of every gpuvet command (documented in README.md)."""

    OK = 0  # nothing reached --fail-on
    FINDINGS = 1  # at least one failed finding at or above --fail-on
    USAGE = 2  # bad command line
    BAD_INPUT = 3  # unreadable / invalid input file (binary, empty, truncated, too large)
    INTERNAL = 4  # gpuvet's own failure (a bug): please report it


@record(frozen=True)
class Fix:
    """One way to fix a finding: its text, how safe it is to apply, and the command (if any)."""

    text: str
    applicability: Applicability = Applicability.DISPLAY_ONLY
    command: str | None = None
    needs_root: bool = False
    needs_reboot: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"text": self.text, "applicability": self.applicability.value}
        if self.command:
            d["command"] = self.command
        if self.needs_root:
            d["needs_root"] = True
        if self.needs_reboot:
            d["needs_reboot"] = True
        return d


MAX_EVIDENCE = 2000  # characters of one evidence text


@record(frozen=True)
class Evidence:
    """A fact row or a log line that supports a finding."""

    text: str
    source: str = ""
    line: int | None = None  # 1-based line number in the input, for log evidence

    def __post_init__(self) -> None:  # every evidence text: secrets masked, length capped
        from .redact import cap, redact_text

        object.__setattr__(self, "text", cap(redact_text(cap(str(self.text), 2 * MAX_EVIDENCE)), MAX_EVIDENCE))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"text": self.text}
        if self.source:
            d["source"] = self.source
        if self.line is not None:
            d["line"] = self.line
        return d


@record(frozen=True)
class Finding:
    """The outcome of one check (or log signature): what disagrees, the evidence and the fixes."""

    code: str
    name: str
    severity: Severity
    outcome: Outcome
    title: str
    why: str = ""
    evidence: tuple[Evidence, ...] = ()
    fixes: tuple[Fix, ...] = ()
    cause: str = "other"
    component: str = ""
    acknowledged: str | None = None  # reason, when the user's policy acknowledged it
    # for an unknown: the fact tables it needed and could not have (renderers say which command's
    # output would supply them, see model.facts.SUPPLIED_BY)
    missing: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.outcome is Outcome.FAILED

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.name.lower(),
            "outcome": self.outcome.value,
            "title": self.title,
            "why": self.why,
            "cause": self.cause,
            "component": self.component,
            "evidence": [e.to_dict() for e in self.evidence],
            "fixes": [f.to_dict() for f in self.fixes],
        }
        if self.acknowledged:
            d["acknowledged"] = self.acknowledged
        if self.missing:
            d["missing"] = list(self.missing)
        return d


@record(frozen=True)
class Deduction:
    """Points a failed (or unchecked) finding took off the health score, and why."""

    code: str
    points: int
    reason: str


@record(frozen=True)
class ReportHeader:
    """Who made a report, about which machine, when and how long it took (``header`` in the JSON)."""

    tool_version: str
    kb_version: str | None = None
    kb_date: str | None = None
    host: str = ""  # the examined machine's hostname ('' for pasted / described facts)
    started_at: str = ""  # wall-clock start, ISO 8601 UTC
    duration_s: float | None = None
    tool: str = "gpuvet"

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "tool_version": self.tool_version, "kb_version": self.kb_version,
                "kb_date": self.kb_date, "host": self.host, "started_at": self.started_at,
                "duration_s": self.duration_s}


JSONDoc = dict[str, Any]  # a sub-document that is JSON as it stands (each producer's to_dict())


class ReportExtra(TypedDict, total=False):
    """The command-specific keys of a report's JSON, each declared once with its type and the command that
    writes it.  ``render/json.py`` puts them at the top level after ``header`` (docs/report-schema.json
    leaves them open); none may shadow an envelope key (tests/test_report.py).  Keys starting with ``_``
    are never rendered."""

    usable: dict[str, str]  # check, compat, recommend (engine.build_report): can the framework use a GPU
    # diagnose, run
    diagnoses: list[JSONDoc]
    user_code_signals: list[JSONDoc]
    settle: list[JSONDoc]  # commands whose output would settle the top diagnosis
    scan: JSONDoc  # diagnose: what was scanned; scan: the project's operators, settings, environment
    hide_stack: bool  # run: the terminal view leaves out the stack table (it is in the bundle)
    run: JSONDoc  # run: argv, result, exit status, bundle
    verdict: str  # diagnose, compat
    notes: list[Any]  # diagnose: {code, title, why} explanations; recommend: lines of text
    # compat
    verdict_reasons: list[str]
    described: JSONDoc
    sources: list[str]
    # recommend
    machine: JSONDoc
    recommendation: JSONDoc | None
    alternatives: list[JSONDoc]
    installed: JSONDoc | None
    skipped_newer: list[JSONDoc]
    # report (the version report)
    host: str
    taken_at: str
    since: JSONDoc | None
    changes: list[JSONDoc]
    distributions: list[JSONDoc]
    _raw_commands: dict[str, Any]  # report --bundle: the recorded probe outputs, never rendered
    diff: JSONDoc  # diff
    validate: JSONDoc  # validate, bench: the run record
    # rollback
    plan: JSONDoc
    into: JSONDoc


@record
class Report:
    """What a command produced: findings, the facts behind them, a score, and metadata."""

    command: str
    findings: list[Finding] = field(default_factory=list)
    facts: Any = None  # model.facts.Facts
    score: int | None = None
    deductions: list[Deduction] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    extra: ReportExtra = field(default_factory=lambda: ReportExtra())  # command-specific keys (diagnoses, verdict, ...)
    header: ReportHeader | None = None
    # rules, rule, kb info: the document the command prints (render/listing.py), not a report envelope
    document: dict[str, Any] | None = None

    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.failed and not f.acknowledged]
