"""The secret corpus (tests/secret_corpus.py) through the commands test_secrets_everywhere.py and
test_history_secrets.py do not cover, in every output format they offer, with a grep of every file written:
compat, recommend, rules / rule, and snapshot / history / diff / rollback / report of an environment whose
installed distributions carry credentials (a PEP 610 direct_url.json with ``user:token@``, as a VCS install
by an installer that does not strip them leaves it).  Secrets are planted in the environment, in free-text
arguments (an --ack reason, a GPU name, a rule code) and in the examined environment's metadata."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import run_cli
from secret_corpus import GH, GITLAB, HF, OPENAI, PIP_PASS, leaks, leaks_in_tree, secret_env

FORMATS = ["terminal", "json", "markdown", "junit", "github", "sarif", "html"]
STACK = ["--torch", "2.5.1+cu121", "--driver", "470.82.01", "--gpu", f"NVIDIA H200 {HF}", "--python", "3.11",
         "--package", "torchvision==0.20.1"]


def _env(tmp_path):
    return secret_env({"NO_COLOR": "1", "PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
                       "XDG_DATA_HOME": str(tmp_path / "xdg"), "XDG_CACHE_HOME": str(tmp_path / "cache")})


@pytest.mark.parametrize("fmt", FORMATS)
def test_compat_every_format(fmt, tmp_path):
    out = tmp_path / "out" / f"compat.{fmt}"
    out.parent.mkdir()
    argv = ["compat", *STACK, "--ack", f"DRV001=approved with token {GH}", "--verbose", "--stack",
            "--format", fmt, "-o", str(out)]
    r = run_cli(argv, environ=_env(tmp_path))
    assert r.code in (0, 1), r.err
    assert out.stat().st_size > 0
    assert leaks(r.out + r.err) == [] and leaks_in_tree(tmp_path / "out") == {}
    if fmt == "json":
        assert "***" in out.read_text()  # masked where it was, not dropped


def test_compat_quiet_statistics_and_bad_input(tmp_path):
    env = _env(tmp_path)
    for argv in (["compat", *STACK, "-q"], ["compat", *STACK, "--statistics"],
                 ["compat", "--torch", f"2.5.1+{OPENAI}"], ["compat", "--package", f"{HF}==1.0"],
                 ["compat", "--ack", f"NOPE999={HF}"], ["compat", "--gpu", f"https://u:{PIP_PASS}@x.example/g"]):
        r = run_cli(argv, environ=env)
        assert r.code in (0, 1, 2, 3), (argv, r.err)
        assert leaks(r.out + r.err) == [], argv


@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_recommend_rules_rule(fmt, tmp_path):
    env = _env(tmp_path)
    outs = []
    for argv in (["recommend", *STACK], ["recommend"], ["rules"], ["rule", "DRV001"], ["rule", HF],
                 ["rule", f"DRV001{GITLAB}"]):
        r = run_cli(argv + ["--format", fmt], environ=env)
        assert r.code in (0, 1, 2, 3), (argv, r.err)
        outs.append(r.out + r.err)
    assert all(leaks(o) == [] for o in outs), [leaks(o) for o in outs]


def _venv_with_credentials(tmp_path):
    """A real venv whose site-packages holds a distribution installed from a private git repository, the
    token in its direct_url.json and in its METADATA's Project-URL (the files as they lie on disk)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = next((venv / "lib").glob("python3*/site-packages"))
    info = site / "privpkg-1.2.0.dist-info"
    info.mkdir()
    (site / "privpkg").mkdir()
    (site / "privpkg" / "__init__.py").write_text("")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: privpkg\nVersion: 1.2.0\n"
                                   f"Project-URL: Source, https://oauth2:{GITLAB}@gitlab.example.com/ml/privpkg.git\n"
                                   "Requires-Dist: numpy\n\n")
    (info / "INSTALLER").write_text("uv\n")
    (info / "RECORD").write_text("privpkg/__init__.py,,\n")
    (info / "direct_url.json").write_text(json.dumps({
        "url": f"https://{GH}@github.com/org/privpkg.git",
        "vcs_info": {"vcs": "git", "commit_id": "0" * 40, "requested_revision": "main"}}))
    return venv / "bin" / "python"


@pytest.mark.slow  # ~20 commands, each probing the machine
def test_history_commands_with_credentials_in_the_examined_environment(tmp_path):
    py = str(_venv_with_credentials(tmp_path))
    env = _env(tmp_path)
    written = tmp_path / "written"
    written.mkdir()
    outs = []

    def run(*argv, codes=(0,)):
        r = run_cli(list(argv), environ=env)
        assert r.code in codes, (argv, r.err)
        outs.append(r.out + r.err)
        return r

    run("snapshot", "--python", py, "--label", "before", "--mark-good", "-o", str(written / "snap.json"))
    text = (written / "snap.json").read_text()
    assert "privpkg" in text and "github.com/org/privpkg.git" in text  # recorded, its credentials masked
    run("snapshot", "--python", py, "--format", "json", "--no-store")
    run("snapshot", "--python", py, "--label", "after")
    run("history")
    run("history", "--format", "json")
    for fmt in FORMATS:
        run("diff", "before", "after", "--format", fmt, "-o", str(written / f"diff.{fmt}"), "--fail-on", "never")
    run("diff", "good", "now", "--python", py, "--format", "json", "--fail-on", "never")
    run("rollback", "--to", "before", "--python", py)
    run("rollback", "--to", "before", "--python", py, "--format", "sh", "-o", str(written / "plan.sh"))
    run("rollback", "--to", str(written / "snap.json"), "--format", "json", "-o", str(written / "plan.json"))
    run("report", "--python", py, "-o", str(written / "r.md"))
    run("report", "--python", py, "-o", str(written / "r.html"))
    run("report", "--python", py, "--since", "before", "--bundle", str(written / "b.tar.gz"))
    with tarfile.open(written / "b.tar.gz") as tar:
        tar.extractall(written / "unpacked", filter="data")
    assert [leaks(o) for o in outs if leaks(o)] == []
    assert leaks_in_tree(written) == {}
    assert leaks_in_tree(tmp_path / "xdg") == {}  # the SQLite history store (and its WAL)
