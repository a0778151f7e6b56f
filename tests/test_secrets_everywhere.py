"""The secret corpus (tests/secret_corpus.py) planted in the environment, in argv and in logs, through
every command and every output format, with a grep of every file written: nothing may leak."""
import os

import pytest

from conftest import REAL, run_cli
from secret_corpus import ENV, USEFUL_ENV, leaks, leaks_in_tree, secret_env, secret_log

FORMATS = ["terminal", "json", "markdown", "junit"]
H200_CE = str(REAL / "h200-cuda13" / "collect_env.txt")


def _env():
    return secret_env({"NO_COLOR": "1", "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root")})


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_live_environment(fmt, tmp_path):
    out = tmp_path / f"report.{fmt}"
    r = run_cli(["check", "--format", fmt, "-o", str(out), "--verbose"], environ=_env())
    assert r.code in (0, 1), r.err
    text = out.read_text()
    assert leaks(text) == [] and leaks(r.err) == []
    if fmt == "json":  # the secret-named variables are there, masked; the useful ones are visible
        import json

        rows = {e["name"]: e["value"] for e in json.loads(text)["facts"]["env_vars"]}
        for name in ("NVIDIA_NGC_KEY", "VLLM_HF_KEY"):
            assert rows[name] == "***"
        assert rows["TRITON_REMOTE"] == "Bearer ***"
        assert rows["CUDA_VISIBLE_DEVICES"] == USEFUL_ENV["CUDA_VISIBLE_DEVICES"]
        assert rows["HSA_OVERRIDE_GFX_VERSION"] == USEFUL_ENV["HSA_OVERRIDE_GFX_VERSION"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_pasted_report_with_secrets(fmt, tmp_path):
    pasted = tmp_path / "paste.txt"
    pasted.write_text(open(H200_CE).read() + "\n" + secret_log())
    r = run_cli(["check", "--from", str(pasted), "--format", fmt], environ=_env())
    assert r.code in (0, 1), r.err
    assert leaks(r.out) == [] and leaks(r.err) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("here", [False, True])
def test_diagnose_log_with_secrets(fmt, here, tmp_path):
    log = tmp_path / "train.log"
    log.write_text(secret_log())
    out = tmp_path / "out"
    argv = ["diagnose", str(log), "--format", fmt, "-o", str(out)] + (["--here"] if here else [])
    r = run_cli(argv, environ=_env())
    assert r.code == 1, r.err
    assert "no kernel image" in out.read_text() or fmt == "junit"
    assert leaks(out.read_text()) == [] and leaks(r.out + r.err) == []


def test_nothing_written_leaks(tmp_path):
    """Every file the commands above would write, grepped in one place (the helper others reuse)."""
    log = tmp_path / "train.log"
    log.write_text(secret_log())
    (tmp_path / "out").mkdir()
    for fmt in FORMATS:
        run_cli(["diagnose", str(log), "--format", fmt, "-o", str(tmp_path / "out" / f"d.{fmt}")], environ=_env())
    os.unlink(log)
    assert len(os.listdir(tmp_path / "out")) == 4
    assert leaks_in_tree(tmp_path) == {}
    assert ENV  # the corpus is not empty
