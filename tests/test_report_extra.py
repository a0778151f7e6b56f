"""Report.extra is typed (model.findings.ReportExtra): every command-specific top-level JSON key is declared
once, none shadows an envelope key of docs/report-schema.json, and the document commands print their
document (Report.document) as it stands."""
from __future__ import annotations

import json

import pytest

from conftest import REAL, ROOT, run_cli

from gpuvet.model import Report, ReportExtra
from gpuvet.render.json import report_dict

H200_CE = str(REAL / "h200-cuda13" / "collect_env.txt")
FOUNDING = str(ROOT / "tests" / "fixtures" / "founding" / "collect_env.txt")
ENVELOPE = set(json.loads((ROOT / "docs" / "report-schema.json").read_text())["properties"])
DECLARED = set(ReportExtra.__optional_keys__) | set(ReportExtra.__required_keys__)


def test_declared_keys_never_shadow_the_envelope():
    assert DECLARED and not DECLARED & ENVELOPE, sorted(DECLARED & ENVELOPE)


@pytest.mark.parametrize("argv", [
    ["check", "--from", H200_CE, "--format", "json"],
    ["diagnose", FOUNDING, "--format", "json"],
    ["compat", "--torch", "2.5.1", "--cuda", "12.4", "--gpu", "H100", "--format", "json"],
    ["recommend", "--gpu", "H100", "--driver", "550.54", "--python", "3.11", "--format", "json"],
])
def test_every_top_level_key_is_the_envelope_or_declared(argv):
    r = run_cli(argv)
    assert r.code in (0, 1), r.err
    doc = json.loads(r.out)
    extra = set(doc) - ENVELOPE
    assert extra and extra <= DECLARED, sorted(extra - DECLARED)
    assert not any(k.startswith("_") for k in doc)


def test_extra_keys_come_after_the_header_and_before_the_facts():
    rep = Report("check", extra=ReportExtra(usable={"state": "yes", "text": "t"}, verdict="ok"))
    assert list(report_dict(rep))[-2:] == ["usable", "verdict"]


@pytest.mark.parametrize("argv,keys", [
    (["rules", "--format", "json"], {"checks", "signatures"}),
    (["kb", "info", "--format", "json"], {"version", "date", "tables"}),
    (["rule", "RTM021", "--format", "json"], {"code", "name", "severity", "cause", "component", "tables"}),
])
def test_document_commands_print_their_document(argv, keys):
    r = run_cli(argv)
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert keys <= set(doc) and "schema_version" not in doc and "findings" not in doc
