"""Every check and every log signature has a case that fires and a case that does not, run by one harness
keyed by code (tests/rules.py) with only that rule enabled.  Known misses are listed, not deleted: a rule
in KNOWN_MISSES that gains its case makes this test fail until the entry is removed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules import case_facts, fires, passes

from gpuvet.checks.registry import all_checks
from gpuvet.logs.signatures import load_catalog

CASES = json.loads((Path(__file__).parent / "fixtures" / "rule_cases.json").read_text())["cases"]
CHECKS = [c.code for c in all_checks()]
SIGNATURES = load_catalog().signatures

# code -> (kind of case missing, why)
KNOWN_MISSES: dict[str, tuple[str, str]] = {
    "EXT009": ("passes", "its unit tests only build extensions that fail it; no non-firing fact set recorded"),
}


def _case(code: str, kind: str):
    if KNOWN_MISSES.get(code, ("", ""))[0] == kind:
        pytest.xfail(f"known miss: {code} has no {kind} case ({KNOWN_MISSES[code][1]})")
    doc = CASES.get(code, {}).get(kind)
    assert doc is not None, (f"{code}: no case that {kind}: give it a unit test that {kind}, list that test file in "
                             "tools/gen_rule_cases.py TESTS if it is new, and run the tool (or add it to KNOWN_MISSES)")
    return case_facts(doc), doc.get("options", {})


@pytest.mark.parametrize("code", CHECKS)
def test_check_fires_on_its_firing_case(code):
    facts, options = _case(code, "fires")
    assert fires(code, facts, **options)


@pytest.mark.parametrize("code", CHECKS)
def test_check_does_not_fire_on_its_passing_case(code):
    facts, options = _case(code, "passes")
    assert passes(code, facts, **options)


@pytest.mark.parametrize("sig", SIGNATURES, ids=lambda s: s.id)
def test_signature_fires_on_its_examples_and_not_on_its_counter_examples(sig):
    assert sig.examples, f"{sig.id}: no example that fires"
    for line in sig.examples:
        assert fires(sig.id, line), (sig.id, line)
    if not sig.counter_examples:
        pytest.xfail(f"known miss: {sig.id} has no counter-example")
    for line in sig.counter_examples:
        assert passes(sig.id, line), (sig.id, line)


def test_known_misses_are_still_misses():
    for code, (kind, _) in KNOWN_MISSES.items():
        assert code in CHECKS, f"{code} is no longer a check: drop it from KNOWN_MISSES"
        assert kind not in CASES.get(code, {}), f"{code} has a {kind} case now: drop it from KNOWN_MISSES"


def test_a_case_of_one_rule_does_not_count_for_another():
    """The harness enables only the rule asked for: a fact set on which BLD043 fires says nothing of DRV001."""
    facts, options = _case("BLD043", "fires")
    assert fires("BLD043", facts, **options)
    assert not fires("DRV001", facts, **options)
