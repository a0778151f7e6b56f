"""The first screen after day 5's changes, looked at in tmux at 80 columns (bench/results/issue9-q12-screens.md):
a reading made only of guesses is drawn as the low-confidence warning it is; in a ranked report (diagnose, run)
what the text shows comes right after the verdict and a check's information notes after it; Markdown says what
the terminal says; the golden screens do not depend on the machine they are captured or tested on."""
from __future__ import annotations

import json
import sys

import yaml

from conftest import ROOT, run_cli

TERM = {"NO_COLOR": "1", "COLUMNS": "80", "PATH": "/usr/bin:/bin"}
H200 = ROOT / "tests" / "fixtures" / "real" / "h200-gpuvet"
GOLDEN = ROOT / "tests" / "golden" / "screens"


def _case_text(path: str) -> str:
    case = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))
    parts = [case["inputs"].get("env") or "", case["inputs"]["log"]]
    return "\n".join(p.rstrip("\n") for p in parts if p) + "\n"


def _head(text: str, cause: str) -> str:
    return next(line for line in text.splitlines() if f"diagnosis-{cause} [" in line)


def test_combined_guesses_are_drawn_low_confidence():
    # new-f0009 (tuning): two "can also mean hardware-fault" readings (0.25 each) combine to 0.33, drawn
    # "✗ LOG112 diagnosis-hardware-fault [critical]" under an [error] first cause
    r = run_cli(["diagnose", "-"], stdin=_case_text("bench/incidents-new/frozen/new-f0009.yaml"), environ=TERM)
    head = _head(r.out, "hardware-fault")
    assert head.startswith("! ") and head.endswith("[low confidence]"), head
    assert "[critical]" not in r.out
    # n3r-f0013 (tuning): driver-too-old at 0.31 from two alternates was "[error]"
    r = run_cli(["diagnose", "-"], stdin=_case_text("bench/incidents-new3/frozen/n3r-f0013.yaml"), environ=TERM)
    assert _head(r.out, "driver-too-old").endswith("[low confidence]")
    assert _head(r.out, "hardware-fault").endswith("[low confidence]")
    assert r.code == 1  # the exit status still follows the blamed stack


def test_json_severity_agrees_with_the_screen():
    doc = run_cli(["diagnose", "--format", "json", "-"],
                  stdin=_case_text("bench/incidents-new/frozen/new-f0009.yaml")).json()
    sev = {f["name"]: f["severity"] for f in doc["findings"]}
    assert sev["diagnosis-hardware-fault"] == "warning", sev


def test_a_learned_hardware_fault_alone_is_not_critical():
    # n5r-t0034 (tuning): the learned model alone (weight 0.5) read prose about KFD features as hardware-fault,
    # drawn [critical] ("Drain the node"); a critical verdict needs a fact or a signature
    from gpuvet.app.diagnose import _severity
    from gpuvet.logs.rank import Contribution, Diagnosis
    from gpuvet.model import Severity

    def diag(*contribs):
        return Diagnosis(cause="hardware-fault", component="hardware", confidence=max(c.weight for c in contribs),
                         title="t", evidence=[], facts=[], fix="", fixes=[], why="", signatures=[], checks=[], references=[],
                         contributions=list(contribs))

    learned = Contribution(0.5, "hardware", "learned", "learned", "r")
    xid = Contribution(0.9, "hardware", "signature", "LOG030", "r")
    alt = Contribution(0.25, "hardware", "signature", "LOG112", "r")
    assert _severity(diag(learned)) is Severity.ERROR
    assert _severity(diag(xid, learned)) is Severity.CRITICAL
    assert _severity(diag(alt, alt)) is Severity.WARNING
    r = run_cli(["diagnose", "-"], stdin=_case_text("bench/incidents-new5/tuning/n5r-t0034.yaml"), environ=TERM)
    assert "[critical]" not in r.out


def _h200_live(monkeypatch):
    """``gpuvet run``'s live facts as the H200 gave them (its captured `gpuvet check --format json`)."""
    import gpuvet.app.facts as facts_mod
    from gpuvet.model import Facts

    doc = json.loads((H200 / "check.json").read_text())
    live = Facts.from_dict(doc["facts"], doc["probe_errors"])
    monkeypatch.setattr(facts_mod, "start_live_facts", lambda env, python=None, deadline=6.0: (lambda: live))


def test_run_on_the_h200_draws_the_user_code_reading_before_the_machines_notes(monkeypatch, tmp_path):
    # on the H200, `gpuvet run` of the device-side assert drew the live BLD045 notes (NCCL, cuDNN copies not
    # loaded) between the verdict and the "● LOG140 ... your code or data" reading, even after 71da6ab
    monkeypatch.chdir(ROOT)
    _h200_live(monkeypatch)
    r = run_cli(["run", "--bundle", str(tmp_path / "b"), "--", "sh", "-c",
                 "cat tests/fixtures/real/h200-gpuvet/runs/assert-output.log; exit 1"], environ=TERM)
    screen = r.err.splitlines()
    first = next(i for i, line in enumerate(screen) if line.startswith(("● ", "i ", "✗ ", "! ")))
    assert screen[first].startswith("● LOG140 "), screen[first]
    assert sum(line.startswith("i BLD045 ") for line in screen) == 2
    # the golden screen (taken with --no-here) is this screen without the machine's notes
    golden = (GOLDEN / "run-assert-80.txt").read_text().splitlines()
    body = golden[golden.index(next(g for g in golden if g.startswith("gpuvet: the command exited"))):]
    notes = [i for i, line in enumerate(screen) if line.startswith("i BLD045 ")]
    shown = [line.replace(str(tmp_path / "b"), "/tmp/gpuvet-golden-run") for line in screen[:notes[0]]]
    assert [x.rstrip() for x in shown if x.strip()] == [x.rstrip() for x in body[:-1] if x.strip()]


def test_markdown_says_what_the_text_shows_when_no_stack_cause_is_blamed():
    # diagnose --format markdown of the H200's device-side assert printed the verdict and nothing else
    r = run_cli(["diagnose", "--format", "markdown", str(H200 / "runs" / "assert-output.log")])
    assert "`LOG140`" in r.out and "your code or data" in r.out
    assert "device-side assert triggered" in r.out


def test_golden_screens_do_not_read_the_machine():
    sys.path.insert(0, str(ROOT / "tools"))
    from capture_screens import SCREENS

    for name, argv in SCREENS.items():
        if argv[0] == "run":
            assert "--no-here" in argv[:argv.index("--")], name
        if argv[0] == "diagnose":
            assert "--here" not in argv, name
        if argv[0] == "check":
            assert "--from" in argv, name


def test_every_generic_fix_names_the_command_to_run_next():
    # the taxonomy's fixes (what a "can also mean", learned or vocabulary reading shows) named no command
    from gpuvet.model.taxonomy import CAUSE_COMMAND, CAUSE_FIX, CAUSE_TABLE

    for c in CAUSE_TABLE:
        assert c.command, c.name
        assert CAUSE_FIX[c.name].endswith(f": {c.command}") and CAUSE_COMMAND[CAUSE_FIX[c.name]] == c.command


def test_a_generic_fix_draws_its_command_on_its_own_line():
    # new-f0009: the third place, driver-too-old (LOG271 can also mean), had only "Upgrade the GPU kernel driver ..."
    text = _case_text("bench/incidents-new/frozen/new-f0009.yaml")
    r = run_cli(["diagnose", "-"], stdin=text, environ=TERM)
    lines = r.out.splitlines()
    start = lines.index(_head(r.out, "driver-too-old"))
    block = lines[start:lines.index("", start)]
    assert "    $ gpuvet recommend" in block, block
    hw = lines[lines.index(_head(r.out, "hardware-fault")):]
    assert any(x.startswith("  fix [display-only, root]: ") for x in hw[:hw.index("")])
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    fixes = next(f["fixes"] for f in doc["findings"] if f["name"] == "diagnosis-driver-too-old")
    assert fixes[0]["command"] == "gpuvet recommend"
