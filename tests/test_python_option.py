"""`check --python PATH` / GPUVET_PYTHON: a path that cannot be an interpreter is a usage error (exit 2, one
line); an interpreter that hangs or crashes gives probe error rows and `unknown` checks, never `passed`."""
from __future__ import annotations

import os
import sys

import pytest
from conftest import run_cli

ENV = {"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")}


def _script(tmp_path, name: str, body: str, mode: int = 0o755) -> str:
    p = tmp_path / name
    p.write_text(body)
    p.chmod(mode)
    return str(p)


@pytest.mark.parametrize("how", ["option", "environ"])
def test_missing_interpreter_is_a_usage_error(how):
    argv = ["check", "--format", "json"] + (["--python", "/nonexistent/python"] if how == "option" else [])
    env = dict(ENV, GPUVET_PYTHON="/nonexistent/python") if how == "environ" else ENV
    r = run_cli(argv, environ=env)
    assert r.code == 2, r.err
    assert r.out == ""
    flag = "--python" if how == "option" else "GPUVET_PYTHON"
    assert r.err.strip() == f"gpuvet: error: {flag} /nonexistent/python: no such file"


@pytest.mark.parametrize("kind", ["text-file", "not-executable", "directory"])
def test_non_python_file_is_a_usage_error(tmp_path, kind):
    if kind == "text-file":
        path = _script(tmp_path, "notes.txt", "just some notes\n")  # executable, but no program, no #!
    elif kind == "not-executable":
        path = _script(tmp_path, "python3", "#!/bin/sh\necho hi\n", mode=0o644)
    else:
        path = str(tmp_path)
    r = run_cli(["check", "--python", path, "--format", "json"], environ=ENV)
    assert r.code == 2, r.err
    assert len(r.err.strip().splitlines()) == 1 and r.err.startswith(f"gpuvet: error: --python {path}: ")
    assert "Traceback" not in r.err


def _python_findings(doc):
    """Findings of checks that read the examined interpreter's packages or framework builds."""
    from gpuvet.checks.registry import all_checks

    need = {c.code for c in all_checks() if {"packages", "framework_builds"} & set(c.tables)}
    return {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] in need}


@pytest.mark.parametrize("body,expect", [
    ("#!/bin/sh\nsleep 20\n", "timed out"),  # hangs: killed after the interpreter time-out
    ("#!/bin/sh\nkill -SEGV $$\n", "exited"),  # crashes
    ("#!/bin/sh\necho not json\n", "did not print its sys.path"),  # answers, but not like Python
])
def test_hanging_or_crashing_interpreter_gives_probe_errors_and_unknown_checks(tmp_path, body, expect):
    path = _script(tmp_path, "python3", body)
    r = run_cli(["check", "--python", path, "--format", "json"], environ=ENV)
    assert r.code in (0, 1), r.err
    doc = r.json()
    errs = [e for e in doc["probe_errors"] if path in e["message"]]
    assert errs and all(expect in e["message"] for e in errs), doc["probe_errors"]
    assert {t for e in errs for t in e["tables"]} >= {"packages", "framework_builds"}
    outcomes = _python_findings(doc)
    assert outcomes and "passed" not in outcomes.values(), outcomes
    assert "unknown" in outcomes.values()


def test_a_real_interpreter_still_works():
    r = run_cli(["check", "--python", sys.executable, "--format", "json"], environ=ENV)
    assert r.code in (0, 1), r.err
    assert not [e for e in r.json()["probe_errors"] if sys.executable in e["message"]]
    assert any(row["name"] == "pytest" for row in r.json()["facts"]["packages"])

