"""bench/tuning_score.py --src scores another tree's code (day 5: PYTHONPATH could not reach it, because
incident_cv puts this tree's src/ first, so bench/nonamd_score.py was written beside it; it is folded in now)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import ROOT


def test_src_scores_the_other_trees_code(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("new-t0001.yaml", "new-t0002.yaml", "new-t0003.yaml"):
        shutil.copy(ROOT / "bench" / "incidents-new" / "tuning" / name, cases / name)
    other = tmp_path / "other" / "src"
    shutil.copytree(ROOT / "src", other, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    rank = other / "gpuvet" / "logs" / "rank.py"  # the other tree's ranker blames nothing
    rank.write_text(rank.read_text() + "\n\ndef rank(*args, **kwargs):\n    return []\n")

    def score(*extra):
        out = tmp_path / f"score{len(extra)}.json"
        r = subprocess.run([sys.executable, str(ROOT / "bench" / "tuning_score.py"), "--rules", "--json", str(out),
                            *extra, str(cases)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout, json.loads(out.read_text())

    mine_out, mine = score()
    other_out, theirs = score("--src", str(other), "--compare", str(tmp_path / "score0.json"))
    assert f"scoring {other / 'gpuvet'}" in other_out
    assert any(c["predicted"] for c in mine["cases"]) and any(c["rules"]["predicted"] for c in mine["cases"])
    assert not any(c["predicted"] or c["rules"]["predicted"] for c in theirs["cases"])
    assert "rules alone: cases 3" in other_out
    assert " - shipped " in other_out  # --compare lists the cases the other tree lost
