"""A file that shrinks while gpuvet reads it (a log truncated or rotated, a paste rewritten) gives one
warning line on stderr, and what was read is still used.  The file is real and really shrinks: the
truncation is timed between gpuvet's stat and its read by wrapping the function that opens/scans it."""
from __future__ import annotations

import os

from conftest import REAL, run_cli

ENV = {"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")}
CUDA_ERR = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_check_from_a_file_that_shrinks_while_read(tmp_path, monkeypatch):
    from gpuvet.app import inputs

    paste = tmp_path / "collect_env.txt"
    text = (REAL / "h200-cuda13" / "collect_env.txt").read_text()
    paste.write_text(text + "\n" + "padding line\n" * 5000)
    real_open = inputs.open_input

    def truncating_open(path, what="input", st=None):
        os.truncate(path, len(text.encode()))  # after the stat, before the read
        return real_open(path, what, st)

    monkeypatch.setattr(inputs, "open_input", truncating_open)
    r = run_cli(["check", "--from", str(paste), "--format", "json"], environ=ENV)
    assert r.code in (0, 1), r.err
    assert f"gpuvet: warning: {paste} shrank while it was read" in r.err
    assert r.err.count("shrank") == 1
    assert '"H200' in r.out or "H200" in r.out  # what was read is used


def test_diagnose_a_log_that_shrinks_while_read(tmp_path, monkeypatch):
    from gpuvet.app import diagnose

    log = tmp_path / "train.log"
    head = f"step 1\n{CUDA_ERR}\n"
    log.write_text(head + "after the error\n" * 20000)
    real = diagnose.diagnose_path

    def truncating(path, *a, **kw):
        os.truncate(path, len(head))  # rotated by the job's logger after gpuvet checked it
        return real(path, *a, **kw)

    monkeypatch.setattr(diagnose, "diagnose_path", truncating)
    r = run_cli(["diagnose", str(log)], environ=ENV)
    assert r.code == 1, r.err
    assert f"gpuvet: warning: {log} shrank while it was read ({len(head) + 16 * 20000} -> {len(head)} bytes)" in r.err
    assert "no kernel image" in r.out


def test_no_warning_when_the_file_stays(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(f"step 1\n{CUDA_ERR}\n")
    r = run_cli(["diagnose", str(log)], environ=ENV)
    assert r.code == 1 and "shrank" not in r.err
