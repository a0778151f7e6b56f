"""checks/registry.py validates every rule when it loads, and renamed codes redirect."""
from __future__ import annotations

import dataclasses

import pytest

from gpuvet.checks import registry
from gpuvet.checks.base import check
from gpuvet.checks.registry import RuleError, all_checks, validate

GOOD_DOC = """What it does:
    Checks a thing.

Why is this bad?
    Because.

Example:
    x: fires.

Fix:
    Do y.

References:
    https://example.org/
"""


def _decl(**kw):
    args = dict(code="DRV099", name="made-up-rule", severity="error", tables=("drivers",),
                cause="driver-too-old", component="driver")
    args.update(kw)

    def made_up_rule(ctx):
        return []

    made_up_rule.__doc__ = GOOD_DOC
    made_up_rule.__module__ = "gpuvet.checks.drv"
    return check(**args)(made_up_rule)


def test_every_registered_rule_is_valid():
    for c in all_checks():
        assert validate(c) == [], c.code


def test_a_well_formed_rule_passes():
    assert validate(_decl()) == []


@pytest.mark.parametrize("kw,problem", [
    ({"code": "DRV99"}, "is not PREFIX + 3 digits"),
    ({"code": "GPU001"}, "is not PREFIX + 3 digits"),
    ({"name": "Made_Up"}, "is not kebab-case"),
    ({"cause": "cosmic-rays"}, "cause 'cosmic-rays' is not in the taxonomy"),
    ({"component": "firmware"}, "component 'firmware' is not in the taxonomy"),
    ({"tables": ("drivers", "gpus")}, "table 'gpus' is not a declared fact table"),
    ({"name": "other-name"}, "is not named after the rule"),
    ({"code": "RTM099"}, "lives in checks/drv.py, not checks/rtm.py"),
])
def test_a_broken_declaration_is_named(kw, problem):
    assert any(problem in p for p in validate(_decl(**kw))), validate(_decl(**kw))


def test_an_empty_doc_heading_is_rejected():
    chk = dataclasses.replace(_decl(), doc=GOOD_DOC.replace("    Do y.\n", ""))
    assert any("'Fix' missing or empty" in p for p in validate(chk))


def test_loading_a_broken_rule_fails_loudly(monkeypatch):
    from gpuvet.checks import drv

    monkeypatch.setattr(drv, "CHECKS", [*drv.CHECKS, _decl(cause="cosmic-rays")])
    registry._all.cache_clear()
    try:
        with pytest.raises(RuleError, match="DRV099: cause 'cosmic-rays'"):
            all_checks()
    finally:
        monkeypatch.undo()
        registry._all.cache_clear()
    assert all_checks()


def test_renamed_codes_redirect(monkeypatch):
    monkeypatch.setitem(registry.REDIRECTS, "BLD999", "BLD043")
    assert registry.resolve("bld999") == "BLD043"
    assert registry.get("BLD999").code == "BLD043"
    from conftest import run_cli

    r = run_cli(["rule", "BLD999", "--format", "json"])
    assert r.code == 0 and r.json()["code"] == "BLD043"


def test_a_redirected_code_is_never_reused(monkeypatch):
    monkeypatch.setitem(registry.REDIRECTS, "DRV099", "DRV001")
    assert any("codes are never reused" in p for p in validate(_decl()))
