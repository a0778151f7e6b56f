"""Seams fail loudly: a parser or check failure inside diagnose is recorded in the report's probe errors."""
from __future__ import annotations


def test_diagnosis_records_a_parser_or_check_failure_instead_of_swallowing_it(monkeypatch):
    from gpuvet.app import diagnose
    from gpuvet.probes import pasted

    def broken(text, source):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(pasted, "parse_report", broken)
    report = diagnose.diagnose_text("PyTorch version: 2.8.0+cu128\nRuntimeError: CUDA error: out of memory\n")
    assert any(e.probe == "pasted-parser" and "RuntimeError: parser bug" in e.message for e in report.facts.errors)
    monkeypatch.undo()

    from gpuvet.checks import registry

    monkeypatch.setattr(registry, "all_checks", lambda: (_ for _ in ()).throw(RuntimeError("registry bug")))
    report = diagnose.diagnose_text("PyTorch version: 2.8.0+cu128\nCUDA used to build PyTorch: 12.8\n")
    assert any(e.probe == "checks" and "registry bug" in e.message for e in report.facts.errors)
