"""The rule harness, keyed by code (hadolint's ruleCatches / ruleCatchesNot).

``fires(code, facts)`` / ``passes(code, facts)`` run exactly one rule (a check by code, or a log signature
by its LOG id on text) and say whether it fired.  Every check and signature has a firing and a non-firing
case (tests/test_rule_harness.py)."""
from __future__ import annotations

from typing import Any

from gpuvet import kb as kbmod
from gpuvet.app.engine import Policy, run_checks
from gpuvet.checks.registry import get
from gpuvet.model import Facts


def case_facts(doc: dict[str, Any]) -> Facts:
    return Facts.from_dict(doc["facts"], doc.get("errors", ()), origin=doc.get("origin", "live"))


def outcome_of(code: str, facts: Facts, options: dict[str, Any] | None = None) -> str:
    """'failed' when the rule fires, else its outcome (passed, skipped, unknown)."""
    chk = get(code)
    assert chk is not None, f"no check {code}"
    found = run_checks(facts, [chk], kbmod.load(), Policy(select=(chk.code,)), options or {})
    outcomes = {f.outcome.value for f in found}
    return "failed" if "failed" in outcomes else next(iter(sorted(outcomes)), "passed")


def _signature_fires(code: str, text: str) -> bool:
    from gpuvet.logs.match import Scanner
    from gpuvet.logs.signatures import load_catalog

    cat = load_catalog()
    sig = cat.get(code)
    assert sig is not None, f"no signature {code}"
    sc = Scanner(cat)
    sc.feed_text(text)
    return bool(sc.result.matches.get(code))


def fires(code: str, facts: Facts | str, **options: Any) -> bool:
    if isinstance(facts, str):
        return _signature_fires(code, facts)
    return outcome_of(code, facts, options) == "failed"


def passes(code: str, facts: Facts | str, **options: Any) -> bool:
    """The rule does not fire (passed, skipped, or, for a check, unknown is NOT a pass)."""
    if isinstance(facts, str):
        return not _signature_fires(code, facts)
    return outcome_of(code, facts, options) in ("passed", "skipped")
