"""diagnose's terminal, Markdown and JUnit views list the causes in the order they were ranked: the first
one drawn is the verdict's (issue 9: the founding incident's skew "ranked first" is what a user reads first).
A check report keeps its order by severity."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_cli
from gpuvet.logs.rank import blames_nothing
from test_founding_incident import SKEW_FORMS

FOUNDING = ROOT / "tests" / "fixtures" / "founding"


def _causes_drawn(text: str) -> list[str]:
    return re.findall(r"diagnosis-([a-z-]+)", text)


@pytest.mark.parametrize("name", SKEW_FORMS)
def test_terminal_draws_the_top_diagnosis_first(name):
    text = (FOUNDING / name).read_text(encoding="utf-8")
    ranked = [d["cause"] for d in run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]]
    r = run_cli(["diagnose", "-"], stdin=text, environ={"NO_COLOR": "1", "COLUMNS": "80"})
    assert r.code == 1
    assert ranked[0] == "runtime-mismatch"
    assert _causes_drawn(r.out) == ranked, (name, _causes_drawn(r.out), ranked)
    assert r.out.splitlines()[0].startswith("Verdict: stack problem: runtime-mismatch (")


@pytest.mark.parametrize("fmt", ["markdown", "junit"])
def test_other_views_keep_the_rank(fmt):
    text = (FOUNDING / "conda_list_ls_opt.txt").read_text(encoding="utf-8")
    ranked = [d["cause"] for d in run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]]
    out = run_cli(["diagnose", "--format", fmt, "-"], stdin=text).out
    drawn = list(dict.fromkeys(_causes_drawn(out)))
    assert drawn == ranked, (drawn, ranked)


def test_terminal_shows_the_notes_json_carries():
    """rocminfo's Runtime Version 1.1 beside hipcc's 5.6: the explanation is in the JSON's notes, and the
    terminal (and Markdown) view a user reads says it too."""
    text = (FOUNDING / "ci_commands.txt").read_text(encoding="utf-8")
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    [note] = [n for n in doc["notes"] if n["code"] == "RTM028"]
    out = run_cli(["diagnose", "-"], stdin=text, environ={"NO_COLOR": "1", "COLUMNS": "80"}).out
    flat = " ".join(out.split())
    assert "i RTM028" in out and "HSA runtime API version" in flat and "can never pass" in flat, out
    assert flat.index("diagnosis-runtime-mismatch") < flat.index("i RTM028") < flat.index("Stack")
    assert max(len(line) for line in out.splitlines()) <= 80
    md = " ".join(run_cli(["diagnose", "--format", "markdown", "-"], stdin=text).out.split())
    assert "RTM028" in md and "HSA runtime API version" in md
    assert note["title"].split(":")[0] in flat


def test_the_ci_gate_alone_blames_the_gate_not_the_stack():
    """The team's CI gate compared rocminfo's Runtime Version (HSA API 1.1) with hipcc's 5.6 and could never pass
    (issue 9). Pasted alone, its failure line is the gate's own (LOG380, user code) beside RTM028's explanation:
    no stack cause; with the framework's and the system's versions beside it (ci_commands.txt) the skew still ranks
    first."""
    gate = ('$ hipcc --version\nHIP version: 5.6.31062\n$ rocminfo | grep "Runtime Version"\n'
            "Runtime Version:         1.1\nERROR: HIP version check failed: runtime 1.1 != hipcc 5.6\n")
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=gate)
    doc = r.json()
    assert r.code == 0 and blames_nothing(doc["diagnoses"]), [(d["cause"], d["title"]) for d in doc["diagnoses"]]
    assert [s["signature"] for s in doc["user_code_signals"]] == ["LOG380"]
    assert any(n["code"] == "RTM028" for n in doc["notes"])
    full = run_cli(["diagnose", "--format", "json", "-"], stdin=(FOUNDING / "ci_commands.txt").read_text()).json()
    assert full["diagnoses"][0]["cause"] == "runtime-mismatch" and full["diagnoses"][0]["checks"] == ["RTM021"]


def test_ranked_order_puts_a_checks_information_note_after_the_causes():
    # run's report on a machine with live information findings (the H200's BLD045: a cuDNN copy not loaded) lists
    # them before the diagnosis; the screen draws the causes first, in rank order
    from gpuvet.model import Finding, Outcome, Severity
    from gpuvet.render.terminal import order_failed

    note = Finding(code="BLD045", name="n", title="cuDNN copy not loaded", outcome=Outcome.FAILED, severity=Severity.INFO)
    first = Finding(code="LOG140", name="n", title="a kernel assert", outcome=Outcome.FAILED, severity=Severity.WARNING)
    second = Finding(code="LOG002", name="n", title="no kernel image", outcome=Outcome.FAILED, severity=Severity.ERROR)
    assert [f.code for f in order_failed([note, first, second], ranked=True)] == ["LOG140", "LOG002", "BLD045"]
