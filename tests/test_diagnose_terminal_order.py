"""diagnose's terminal, Markdown and JUnit views list the causes in the order they were ranked: the first
one drawn is the verdict's (issue 9: the founding incident's skew "ranked first" is what a user reads first).
A check report keeps its order by severity."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_cli
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
