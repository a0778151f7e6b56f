"""Healthy text is healthy: every capture of a working machine in ../shared/fixtures/real and
tests/fixtures/real diagnoses to nothing, and no signature of the whole set matches any line of them.

Not healthy (and so not here): the Debian CPU machine's captures of GPU tools failing for want of a GPU
(dev-nodes, nvidia-smi, rocminfo), and the H200 runs that fail on purpose (tests/fixtures/real/h200-gpuvet/runs)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from gpuvet.app.diagnose import scan_text

DIRS = [ROOT.parent / "shared" / "fixtures" / "real", ROOT / "tests" / "fixtures" / "real"]
NOT_HEALTHY = {
    "debian12-cpu-rocm52/dev-nodes.txt": "ls of /dev/kfd on a machine without an AMD GPU",
    "debian12-cpu-rocm52/nvidia-smi.txt": "nvidia-smi: command not found",
    "debian12-cpu-rocm52/rocminfo.txt": "ROCk module is NOT loaded (no GPU)",
    "debian12-cpu-rocm52/rocm-smi.txt": "Driver not initialized (amdgpu not found in modules): no GPU",
}


def healthy() -> list[Path]:
    out = []
    for d in DIRS:
        if not d.is_dir():
            continue
        for p in sorted(d.rglob("*")):
            rel = p.relative_to(d).as_posix()
            if not p.is_file() or p.name == "README.md" or rel in NOT_HEALTHY or "/runs/" in f"/{rel}":
                continue
            if p.stat().st_size == 0 or p.suffix == ".gz":  # compressed package listings: not pasteable text
                continue
            out.append(p)
    return out


CAPTURES = healthy()


def test_there_are_healthy_captures():
    assert len(CAPTURES) >= 20


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_healthy_capture_diagnoses_to_nothing(path):
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=path.read_text(encoding="utf-8", errors="replace"))
    assert r.code == 0, (path, r.err[-300:])
    assert r.json()["diagnoses"] == [], [(d["cause"], d["evidence"][:2]) for d in r.json()["diagnoses"]]


def test_no_signature_matches_a_healthy_capture():
    hits = {}
    for p in CAPTURES:
        scan = scan_text(p.read_text(encoding="utf-8", errors="replace"))
        for sid, ms in scan.matches.items():
            hits.setdefault(sid, []).append(f"{p.name}:{ms[0].line}: {ms[0].text[:100]}")
    assert not hits, hits


def test_lscpu_vulnerability_lines_are_not_errors():
    text = ("CPU:\nVulnerability Tsx async abort:      Not affected\nVulnerability Retbleed:             Mitigation; "
            "untrained return thunk; SMT enabled with STIBP protection\nVulnerability Mds:  Not affected\n")
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    assert r.json()["diagnoses"] == []
