"""The typed report header (model.findings.ReportHeader): tool and KB version, host, start time, duration."""
from __future__ import annotations

import re

from conftest import REAL, run_cli

from fakes import FakeSystem


def test_live_check_header_names_the_host_the_kb_and_the_time():
    doc = run_cli(["check", "--format", "json"], system=FakeSystem(host="gpu-node-7")).json()
    h = doc["header"]
    assert h["tool"] == "gpuvet" and h["tool_version"] == doc["meta"]["gpuvet_version"]
    assert h["kb_version"] == doc["meta"]["kb"]["version"] and h["kb_date"] == doc["meta"]["kb"]["date"]
    assert h["host"] == "gpu-node-7"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", h["started_at"])
    assert isinstance(h["duration_s"], float) and h["duration_s"] >= 0


def test_pasted_and_described_reports_name_no_host():
    pasted = run_cli(["check", "--from", str(REAL / "h200-cuda13" / "collect_env.txt"), "--format", "json"]).json()
    assert pasted["header"]["host"] == ""  # the pasted report is about another machine
    described = run_cli(["compat", "--torch", "2.8.0", "--cuda", "12.8", "--format", "json"]).json()
    assert described["header"]["host"] == "" and described["header"]["kb_version"]


def test_diagnose_has_a_header():
    r = run_cli(["diagnose", "-", "--format", "json"], stdin="RuntimeError: CUDA error: no kernel image is available\n")
    assert r.json()["header"]["tool"] == "gpuvet" and r.json()["header"]["host"] == ""
