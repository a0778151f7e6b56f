"""docs/rules/*.md stay in step with the checks' docstrings (regenerate: python tools/gen_rule_docs.py)."""
from __future__ import annotations

import importlib.util

from conftest import ROOT, run_cli
from gpuvet.checks.registry import all_checks


def _gen():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", ROOT / "tools" / "gen_rule_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_docs_in_step_with_docstrings():
    gen = _gen()
    want = gen.expected()
    have = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "rules").glob("*.md")}
    stale = sorted(n for n in want if have.get(n) != want[n])
    extra = sorted(set(have) - set(want))
    assert not stale and not extra, (f"docs/rules out of date: {stale}, no such check: {extra}; "
                                     "run: python tools/gen_rule_docs.py")


def test_every_check_has_a_page_with_every_section():
    gen = _gen()
    for c in all_checks():
        page = gen.page(c)
        for head in ("What it does", "Why is this bad?", "Example", "Fix", "References"):
            assert f"## {head}" in page, (c.code, head)
        assert f"gpuvet rule {c.code}" in page


def test_cli_rule_prints_the_same_sections_as_the_docs():
    for c in all_checks():
        out = run_cli(["rule", c.code]).out
        assert out.startswith(f"{c.code} {c.name}")
        for head, body in c.sections().items():
            first = body.strip().splitlines()[0].strip()
            assert first in out and first in _gen().page(c), (c.code, head)


def test_check_mode_reports_stale(tmp_path, monkeypatch):
    gen = _gen()
    monkeypatch.setattr(gen, "OUT", tmp_path)
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0
    assert gen.main(["--check"]) == 0
    (tmp_path / "BLD999.md").write_text("stale")
    assert gen.main(["--check"]) == 1
    gen.main([])
    assert not (tmp_path / "BLD999.md").exists()
