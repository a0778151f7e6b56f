"""Regression gate: the incident scorer on the dev incidents (../shared/benchmarks, present in CI beside the
clone) must keep top-1 >= 85% and top-3 >= 95% with no crash.  Cases run in-process with the scorer's own
case loading and text assembly; one case also runs through the real scorer and CLI as a subprocess."""
import importlib.util
import subprocess
import sys

import pytest

from conftest import SHARED
from gpuvet.app.diagnose import diagnose_text

SCORER = SHARED / "benchmarks" / "score_incidents.py"
DEV = SHARED / "benchmarks" / "incidents" / "dev"
pytestmark = pytest.mark.skipif(not (SCORER.exists() and DEV.is_dir()), reason="../shared/benchmarks not present")


def _scorer():
    spec = importlib.util.spec_from_file_location("score_incidents", SCORER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_dev_incidents_thresholds():
    sc = _scorer()
    cases = sc.load_cases([str(DEV)])
    assert len(cases) >= 60
    top1 = top3 = 0
    misses = []
    for case in cases:
        doc_causes = [d["cause"] for d in diagnose_text(sc.posted_text(case), case["id"]).extra["diagnoses"]]
        truth = case["label"]["cause"]
        if truth == "none":
            h1 = h3 = not doc_causes or doc_causes[0] == "none"
        else:
            h1, h3 = bool(doc_causes) and doc_causes[0] == truth, truth in doc_causes[:3]
        top1 += h1
        top3 += h3
        if not h1:
            misses.append((case["id"], truth, doc_causes[:3]))
    n = len(cases)
    assert top1 / n >= 0.85, misses
    assert top3 / n >= 0.95, misses


def test_real_scorer_subprocess_smoke(tmp_path):
    one = tmp_path / "cases"
    one.mkdir()
    src = sorted(DEV.glob("*.yaml"))[0]
    (one / src.name).write_text(src.read_text())
    p = subprocess.run([sys.executable, str(SCORER), str(one), "--cmd", f"{sys.executable} -m gpuvet diagnose --format json"],
                       capture_output=True, text=True, timeout=120)
    assert "crashed/timeout/bad output: 0" in p.stdout, p.stdout + p.stderr
