"""gpuvet's package data (the KB's YAML and schemas, the signature index, the learned model) is found when gpuvet
runs from a built wheel, not only from this source tree: the wheel is built from a copy of the tree, unpacked,
and `gpuvet diagnose` run from it must give the source tree's answer with the shipped index and model."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, run_cli

FIXTURE = ROOT / "tests" / "fixtures" / "founding" / "collect_env.txt"


@pytest.mark.slow
def test_diagnose_from_a_built_wheel_reads_its_package_data(tmp_path):
    # the wheel is built without build isolation (no index to fetch setuptools from on the GPU machine): it needs the
    # interpreter's own setuptools, which a Python 3.12 venv no longer carries
    pytest.importorskip("setuptools", reason="no setuptools in this interpreter to build the wheel with")
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path / "dist"), str(tree)], check=True, capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("gpuvet-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("gpuvet/logs/data/signature_index.json", "gpuvet/logs/data/fallback_model.json",
                 "gpuvet/kb/data/signatures.yaml", "gpuvet/kb/schemas/signatures.schema.json"):
        assert data in names, data
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = ("import json, sys, gpuvet; from gpuvet.logs import index, learned; "
             "print(json.dumps([gpuvet.__file__, sorted(index._shipped()), learned.load() is not None]))")
    env = dict(os.environ, PYTHONPATH=str(site), GPUVET_NO_CACHE="1", NO_COLOR="1")
    got = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    where, sections, model = json.loads(got.stdout)
    assert where.startswith(str(site)), where  # the unpacked wheel's gpuvet, not this tree's editable install
    assert sections and model
    wheel_doc = subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", "--format", "json", str(FIXTURE)],
                               env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    here = run_cli(["diagnose", "--format", "json", str(FIXTURE)]).json()
    causes = [d["cause"] for d in json.loads(wheel_doc.stdout)["diagnoses"]]
    assert causes == [d["cause"] for d in here["diagnoses"]] and causes[0] == "runtime-mismatch"
