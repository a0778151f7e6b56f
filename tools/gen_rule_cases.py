"""Regenerate tests/fixtures/rule_cases.json: for every check, one fact set on which it fires and one on
which it does not, taken from the fact sets the rule modules' own unit tests build (recorded while those
tests run), so the rule harness (tests/rules.py) has a case of each kind keyed by code.

    .venv/bin/python tools/gen_rule_cases.py            # runs the rule tests once, writes the file

A case is kept only when replaying it from JSON gives the same outcome (the harness test checks it again).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "rule_cases.json"
TESTS = ["tests/test_amd_checks.py", "tests/test_build_checks.py", "tests/test_compat_checks.py",
         "tests/test_host_checks.py", "tests/test_nvidia_checks.py", "tests/test_loader.py",
         "tests/test_loader_model.py", "tests/test_h200_fixture.py", "tests/test_integration_rocm.py",
         "tests/test_conventions.py", "tests/test_versions.py", "tests/test_extension_scan.py", "tests/test_pasted_absent.py",
         "tests/test_kernel_files.py", "tests/test_host_compiler_ranges.py", "tests/test_compile_caches.py",
         "tests/test_rocm_pasted_facts.py"]


class Recorder:
    def __init__(self) -> None:
        self.cases: dict[str, dict[str, dict]] = {}

    def pytest_sessionstart(self, session) -> None:
        from gpuvet.app import engine

        orig = engine._run_one
        rec = self

        def spy(chk, ctx):
            out = list(orig(chk, ctx))
            kinds = {f.outcome.value for f in out}
            kind = "fires" if "failed" in kinds else "passes" if kinds <= {"passed", "skipped"} else None
            if kind and kind not in rec.cases.setdefault(chk.code, {}):
                doc = {"facts": ctx.facts.to_dict(), "errors": [e.to_dict() for e in ctx.facts.errors],
                       "origin": ctx.facts.origin, "options": {k: v for k, v in ctx.options.items()
                                                                if isinstance(v, (bool, int, str))}}
                if _replays(chk.code, doc, kind):
                    rec.cases[chk.code][kind] = doc
            yield from out

        engine._run_one = spy


def _replays(code: str, doc: dict, kind: str) -> bool:
    sys.path.insert(0, str(ROOT / "tests"))
    from rules import case_facts, outcome_of

    try:
        failed = outcome_of(code, case_facts(doc), doc["options"]) == "failed"
    except Exception:
        return False
    return failed == (kind == "fires")


def main() -> int:
    rec = Recorder()
    pytest.main(["-q", "-x", "-p", "no:cacheprovider", *[str(ROOT / t) for t in TESTS if (ROOT / t).exists()]],
                plugins=[rec])
    doc = {"about": "One firing and one non-firing fact set per check, recorded from the rule modules' unit "
                    "tests by tools/gen_rule_cases.py; replayed by tests/test_rule_harness.py.",
           "cases": {code: rec.cases[code] for code in sorted(rec.cases)}}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")
    print(f"{OUT}: {sum(len(v) for v in rec.cases.values())} cases for {len(rec.cases)} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
