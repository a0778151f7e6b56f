"""``check --show-fixes`` / ``--fix`` / ``--dry-run``: the fixes of a report, in order, and applying the safe ones.

Only a fix that is ``safe``, has a command, needs neither root nor a reboot, and is a pip step into the
examined environment (``/path/bin/python -m pip install|uninstall ...``) is ever applied: gpuvet runs
it as a child process (no shell).  Everything else is shown with the reason it is not applied:
driver changes, ``sudo``, reboots, ``export``/``unset`` (a child process cannot change your shell).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from gpuvet.model import Applicability, Fix, Outcome, Report

APPLY_TIMEOUT = 900.0  # a pip install of a 2 GB torch wheel on a slow link


@dataclass(frozen=True)
class Step:
    code: str
    title: str
    fix: Fix
    applies: bool  # --fix would run it
    why_not: str = ""  # when it does not


def _why_not(f: Fix) -> str:
    if f.needs_reboot or f.applicability is Applicability.DISPLAY_ONLY:
        return "display-only: a driver change or a reboot, never applied"
    if f.needs_root:
        return "needs root, never applied"
    if f.applicability is not Applicability.SAFE:
        return f"{f.applicability.value}: review it and run it yourself"
    if not f.command:
        return "no command: a manual step"
    argv = _argv(f.command)
    if argv is None:
        return "a shell command line: run it yourself"
    if argv[0] in ("export", "unset") or argv[0].endswith("=") or "=" in argv[0]:
        return "changes your shell's environment: run it in your shell"
    if not _is_pip(argv):
        return "not a pip step into the examined environment: run it yourself"
    return ""


def _argv(command: str) -> list[str] | None:
    if any(ch in command for ch in "|&;<>`$(){}"):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _is_pip(argv: list[str]) -> bool:
    return len(argv) >= 4 and argv[1:3] == ["-m", "pip"] and argv[3] in ("install", "uninstall") and \
        (argv[0].startswith("/") or argv[0] in ("python", "python3"))


def plan(report: Report) -> list[Step]:
    """The fixes of the failed (not acknowledged) findings, most severe first, each once."""
    steps: list[Step] = []
    seen: set[tuple[str, str]] = set()
    failed = [f for f in report.findings if f.outcome is Outcome.FAILED and not f.acknowledged]
    failed.sort(key=lambda f: -int(f.severity))
    for f in failed:
        for x in f.fixes:
            key = (x.text, x.command or "")
            if key in seen:
                continue
            seen.add(key)
            why = _why_not(x)
            steps.append(Step(f.code, f.title, x, not why, why))
    return steps


def script(steps: list[Step], header: str) -> str:
    """The fixes as a shell script, in order; what gpuvet would not apply is commented out."""
    out = ["#!/bin/sh", f"# {header}", "# Lines gpuvet --fix would run are live; the others are commented out, with why.",
           "set -e", ""]
    if not steps:
        out.append("# nothing to fix")
    for s in steps:
        out.append(f"# {s.code}: {s.title}")
        out.append(f"# fix [{s.fix.applicability.value}]: {s.fix.text}")
        if s.fix.command:
            out.append(s.fix.command if s.applies else f"# ({s.why_not})\n# {s.fix.command}")
        else:
            out.append(f"# ({s.why_not})")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def apply(steps: list[Step], system: Any, dry_run: bool, write) -> int:
    """Run the applicable steps in order (stop at the first that fails); returns how many failed."""
    todo = [s for s in steps if s.applies]
    if not todo:
        write("gpuvet: no fix can be applied automatically (only safe pip steps are)\n")
        return 0
    for s in todo:
        argv = _argv(s.fix.command or "") or []
        if dry_run:
            write(f"gpuvet: would run ({s.code}): {s.fix.command}\n")
            continue
        write(f"gpuvet: running ({s.code}): {s.fix.command}\n")
        res = system.run(argv, timeout=APPLY_TIMEOUT)
        if not res.ok:
            tail = (res.stderr or res.stdout or res.error or "").strip().splitlines()[-3:]
            write(f"gpuvet: fix failed ({res.describe()}): {' / '.join(tail)}\n")
            return 1
    return 0
