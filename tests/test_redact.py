"""The one redactor (model/redact.py): every corpus secret masked by name, by shape and by value; useful
values visible; linear time on hostile input."""
import json
import time

import pytest

from gpuvet.model import redact as R
from secret_corpus import CORPUS, ENV, USEFUL_ENV, leaks, secret_argv, secret_env, secret_log


@pytest.mark.parametrize("secret", CORPUS, ids=lambda s: s.kind)
def test_every_corpus_secret_is_masked_in_its_context(secret):
    line = secret.context.format(v=secret.value)
    out = R.redact_text(line)
    assert secret.value not in out, out
    assert R.MASK in out


def test_whole_log_keeps_the_error_and_loses_the_secrets():
    out = R.redact_text(secret_log())
    assert leaks(out) == []
    assert "RuntimeError: CUDA error: no kernel image is available" in out
    assert 'File "train.py", line 12' in out
    assert "Traceback (most recent call last):" in out  # a PEM block does not swallow what follows


@pytest.mark.parametrize("name", sorted(ENV))
def test_secret_named_variables(name):
    assert R.MASK in R.redact_env(name, ENV[name])
    assert leaks(R.redact_env(name, ENV[name])) == []


@pytest.mark.parametrize("name", ["NVIDIA_NGC_KEY", "VLLM_HF_KEY", "MY_PASSWORD", "DB_PWD", "X_AUTH", "SSH_PRIVATE",
                                  "SLACK_WEBHOOK", "SESSION_COOKIE", "AWS_SESSION_TOKEN", "apikey", "HF_KEYS",
                                  "--token", "hub_token", "passphrase"])
def test_names_in_any_position(name):
    assert R.is_secret_name(name)


@pytest.mark.parametrize("name", ["CUDA_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION", "NCCL_SOCKET_IFNAME", "PWD",
                                  "TOKENIZERS_PARALLELISM", "KeyError", "max_new_tokens", "AUTHOR", "PATH",
                                  "openai.AuthenticationError", "LD_LIBRARY_PATH"])
def test_useful_names_stay_visible(name):
    assert not R.is_secret_name(name)


@pytest.mark.parametrize("text", [
    "CUDA_VISIBLE_DEVICES=0,1", "HSA_OVERRIDE_GFX_VERSION=10.3.0", "NCCL_SOCKET_IFNAME=eth0",
    "KeyError: 'weight'", "max_new_tokens: 512", "PyTorch version: 2.3.0+rocm6.0",
    "ssh key: /root/.ssh/id_rsa", "git version: 3f9a0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b",
    "https://download.pytorch.org/whl/cu121", "tokenizer.json not found", "session 3 started",
])
def test_useful_text_is_unchanged(text):
    assert R.redact_text(text) == text


def test_values_of_this_process_secret_variables_anywhere(monkeypatch):
    token = "qZ8vN2kL5mR7tY1wX4cB"  # no recognisable shape: only its value gives it away
    R.register_environ({"ACME_DEPLOY_KEY": token, "SHORT_TOKEN": "1"})
    assert R.redact_text(f"connecting with {token} now") == "connecting with *** now"
    assert R.redact_text("retries: 1") == "retries: 1"  # short values are not masked everywhere


def test_argv_options():
    out = R.redact_argv(["python", "train.py", *secret_argv(), "--lr", "3e-4", "--output", "/data/run1"])
    assert leaks(" ".join(out)) == []
    assert out[:2] == ["python", "train.py"] and out[-4:] == ["--lr", "3e-4", "--output", "/data/run1"]


def test_json_stays_valid_after_redaction():
    doc = {"env": secret_env({}), "lines": [s.context.format(v=s.value) for s in CORPUS], "useful": USEFUL_ENV}
    out = R.redact_text(json.dumps(doc, indent=2))
    again = json.loads(out)
    assert leaks(out) == []
    assert again["useful"] == USEFUL_ENV


def test_idempotent():
    once = R.redact_text(secret_log())
    assert R.redact_text(once) == once


BOMBS = [("\n", ""), (" ", ""), ("a", ""), ("key=", ""), ("token ", ""), ("a.a.", ""), ("https://", ""),
         ("-----BEGIN RSA PRIVATE KEY-----\n", ""), ("eyJ", ""), ("Bearer ", ""), ("x", "password: "),
         ("--token ", ""), ("@", "://"), ("A", "hf_"), ("key:", "x" * 63 + "=")]


def _timed(text: str) -> float:
    t = time.perf_counter()
    R.redact_text(text)
    return time.perf_counter() - t


@pytest.mark.parametrize("unit,prefix", BOMBS, ids=lambda b: repr(b[:12]))
def test_linear_on_bombs(unit, prefix):
    """Four times the input costs about four times the time (a quadratic pattern would cost 16x)."""
    n = 50_000 // len(unit) + 1
    small = min(_timed(prefix + unit * n) for _ in range(2))
    big = min(_timed(prefix + unit * (4 * n)) for _ in range(2))
    assert big < 10 * max(small, 0.01), (small, big)
    assert big < 3.0


def test_cap():
    assert R.cap("abc", 5) == "abc"
    assert R.cap("abcdef", 4) == "abc…"


def test_gpuvet_own_signature_field_is_not_masked_but_signed_url_signatures_are():
    # diagnose's evidence carries {"signature": "LOG002"}: the rule code, not a secret (it was printed as ***)
    from gpuvet.model.redact import is_secret_name, redact_text

    assert not is_secret_name("signature")
    assert is_secret_name("X-Amz-Signature") and is_secret_name("URL_SIGNATURE")
    url = ("https://b.s3.amazonaws.com/k?X-Amz-Signature=4f1e2d3c4b5a69788796a5b4c3d2e1f0aabbccddeeff0011"
           "&X-Amz-Expires=60")
    assert "4f1e2d3c4b5a" not in redact_text(url)


def test_diagnose_json_keeps_the_signature_code(tmp_path):
    import json
    import subprocess
    import sys

    log = tmp_path / "x.log"
    log.write_text("RuntimeError: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n")
    out = subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", "--format", "json", str(log)],
                         capture_output=True, text=True, timeout=60).stdout
    sigs = [e.get("signature") for d in json.loads(out)["diagnoses"] for e in d.get("evidence", [])]
    assert sigs and "***" not in sigs and any(s and s.startswith("LOG") for s in sigs)
