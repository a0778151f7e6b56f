"""Day 9 (f9b), issue 9: a third red-team batch of founding-incident forms (tests/founding_redteam_round3.py), written
after f9's two batches and their fixes, and run once before any fix aimed at them: the honest measure of how far
the fixes generalise to the way users paste (chat shorthand, issue titles, other projects' env reports).

Same contract as test_founding_redteam_f9_fresh: the skew ranked first with both versions and where each was read,
``check --from`` failing RTM021; the consistent twin (ROCm 5.7.1) compared and passing."""
from __future__ import annotations

import pytest

from conftest import run_cli
from founding_redteam_forms import HIP, SKEW_SYS, TORCH, TWIN_SYS, _mm
from founding_redteam_round3 import ROUND3, SOURCES

# skew-side failures when first run, before any fix aimed at them (reason: red team round 3)
SKEW_FAILED_FIRST: set[str] = {
    "chat-plus-shorthand", "issue-title-one-line", "version-before-name", "everywhere", "hard-wrap-80", "kohya-log",
    "conda-env-export", "mixed-chat-with-other-text", "equals-pairs", "discord-inline-code", "stackoverflow-question",
    "rocm-smi-banner",
}
# twin-side failures when first run (the consistent twin not compared, or called a skew)
TWIN_FAILED_FIRST: set[str] = set(SKEW_FAILED_FIRST)  # the same 12: no system release read


def _params(failed: set[str]):
    for name in ROUND3:
        marks = [pytest.mark.xfail(strict=True, reason="red team round 3: failed before any fix")] \
            if name in failed else []
        yield pytest.param(name, marks=marks, id=name)


def test_every_round3_form_names_its_shape():
    assert set(SOURCES) == set(ROUND3)


@pytest.mark.parametrize("name", list(_params(SKEW_FAILED_FIRST)))
def test_the_skew_is_ranked_first_and_check_fails_rtm021(name):
    text = ROUND3[name](TORCH, HIP, SKEW_SYS) + "\n"
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    assert r.code == 1, r.err
    diags = r.json()["diagnoses"]
    top = diags[0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], [(d["cause"], d["checks"]) for d in diags]
    facts = [f for f in top["facts"] if f.get("check") == "RTM021"]
    said = " ".join(f["text"] + " " + f.get("source", "") for f in facts)
    assert "HIP 5.7" in said and (f"rocm {_mm(SKEW_SYS)}" in said or f"hip-runtime {_mm(SKEW_SYS)}" in said), said
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


@pytest.mark.parametrize("name", list(_params(TWIN_FAILED_FIRST)))
def test_the_consistent_twin_is_compared_and_no_skew(name):
    text = ROUND3[name](TORCH, HIP, TWIN_SYS) + "\n"
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags), [(d["cause"], d["checks"]) for d in diags]
    r = run_cli(["check", "--from", "-", "--format", "json"], stdin=text)
    assert r.code in (0, 1), r.err
    codes = {f["code"]: f["outcome"] for f in r.json()["findings"] if f["code"] == "RTM021"}
    assert codes == {"RTM021": "passed"}, codes
