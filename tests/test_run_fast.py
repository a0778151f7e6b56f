"""`gpuvet run`'s fast start (cli/fast.py): the same options as the Click command, without its imports."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from gpuvet.app.env import Environment
from gpuvet.cli.fast import parse_run
from gpuvet.cli.main import main

PY = sys.executable

SAME = [
    ["--", "cmd", "a"],
    ["cmd", "-x", "--timeout", "3"],
    ["--timeout", "5", "--", "cmd"],
    ["--timeout=2.5", "cmd"],
    ["--debug", "--no-here", "--bundle", "d", "--log-cap", "1M", "--", "cmd", "--", "x"],
    ["--no-here", "--here", "cmd"],
    ["--log-cap=16k", "--timeout", "1", "--timeout", "9", "cmd", "--debug"],
    ["--", "-cmd-with-a-dash"],
]
FALLBACK = [[], ["--"], ["--help"], ["-h"], ["--timeout", "0", "cmd"], ["--timeout", "nan", "cmd"],
            ["--timeout", "x", "cmd"], ["--timeout"], ["--log-cap", "12", "cmd"], ["--log-cap", "lots", "cmd"],
            ["--unknown", "cmd"], ["--debug"]]


def _click_options(args, monkeypatch):
    """What the Click command passes to the use case for these arguments."""
    from gpuvet.app import run as run_mod

    seen = []

    def fake(opts, env):
        seen.append(opts)
        return run_mod.RunResult(0, run_mod.Outcome(opts.argv))

    monkeypatch.setattr(run_mod, "run", fake)
    env = Environment(stdin=io.StringIO(""), stdout=io.StringIO(), stderr=io.StringIO(), environ={"PATH": ""})
    code = main(["run", *args], env)
    return code, (seen[0] if seen else None), env.stderr.getvalue()


@pytest.mark.parametrize("args", SAME)
def test_fast_parser_reads_what_click_reads(args, monkeypatch):
    code, want, _ = _click_options(args, monkeypatch)
    got = parse_run(list(args))
    assert code == 0 and want is not None and got is not None
    assert vars(got) == vars(want)


@pytest.mark.parametrize("args", FALLBACK)
def test_what_the_fast_parser_does_not_take_click_handles(args, monkeypatch):
    assert parse_run(list(args)) is None
    code, opts, err = _click_options(args, monkeypatch)
    assert opts is None or args == ["--unknown", "cmd"]  # Click passes an unknown option on to the command
    assert code in (0, 2) and (code == 0 or err.startswith("gpuvet: error:"))


def test_run_starts_without_click_or_the_model():
    code = ("import sys; sys.argv = ['gpuvet', 'run', '--no-here', '--', sys.executable, '-c', 'pass']\n"
            "from gpuvet.cli.fast import run\nrc = run(exit_now=False)\n"
            "heavy = sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('click', 'dataclasses', "
            "'inspect', 'json') or m.startswith(('gpuvet.model', 'gpuvet.probes', 'gpuvet.logs', 'gpuvet.kb')))\n"
            "print(rc, heavy)")
    # what the interpreter loads before gpuvet runs (site's .pth hooks: the H200 image's numba-cuda redirector
    # imports importlib.resources, which imports inspect on Python 3.12) is not gpuvet's cost
    p = subprocess.run([PY, "-c", "import sys; before = set(sys.modules)\n" + code], capture_output=True, text=True,
                       timeout=60)
    assert p.stdout.strip() == "0 []", p.stdout + p.stderr


def test_fast_path_failure_still_diagnoses_and_bundles(tmp_path):
    b = tmp_path / "b"
    p = subprocess.run([PY, "-m", "gpuvet", "run", "--no-here", "--bundle", str(b), "--", PY, "-c",
                        "import sys; print('RuntimeError: CUDA error: out of memory', file=sys.stderr); sys.exit(3)"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode == 3
    assert "RuntimeError: CUDA error: out of memory" in p.stderr
    assert "Crash bundle" in p.stderr and (b / "diagnosis.json").is_file() and (b / "output.log").is_file()


def test_fast_path_usage_error_is_clicks(tmp_path):
    p = subprocess.run([PY, "-m", "gpuvet", "run", "--timeout", "-1", "--", "true"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.startswith("gpuvet: error:") and "--timeout" in p.stderr
