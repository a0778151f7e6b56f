"""`gpuvet diagnose FILE` without Click: the fast parser gives Click's parameters or declines, and both paths
give the same report and exit status."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from conftest import REAL

LOG = str(REAL / "h200-gpuvet" / "runs" / "oom-output.log")

FAST_ARGVS = [
    ["x.log"], ["-"], ["x.log", "--format", "json"], ["--format", "json", "x.log"], ["--format=json", "x.log"],
    ["-f", "markdown", "x.log"], ["x.log", "-v"], ["--verbose", "x.log", "--here"], ["--no-grep", "x.log"],
    ["-f", "json", "-f", "terminal", "x.log"], ["./-x.log"],
]
DECLINED_ARGVS = [
    [], ["--help"], ["-h"], ["x.log", "--format", "yaml"], ["x.log", "--format"], ["--bogus", "x.log"],
    ["--verb", "x.log"], ["-vf", "json", "x.log"], ["-fjson", "x.log"], ["-o", "out.txt", "x.log"],
    ["--output=out.txt", "x.log"], ["--follow", "x.log"], ["--wait", "5", "x.log"], ["a.log", "b.log"],
    ["--", "x.log"], ["--", "-x.log"], ["-x.log"], ["--verbose=1", "x.log"], ["x.log", "--format", "-v"],
    ["--here"],
]


def _click_params(args):
    from gpuvet.cli.diagnose_cmd import diagnose

    ctx = diagnose.make_context("diagnose", list(args))
    return dict(ctx.params)


@pytest.mark.parametrize("args", FAST_ARGVS)
def test_fast_diagnose_parser_gives_clicks_parameters(args):
    from gpuvet.cli.diagnose_run import parse_diagnose_argv

    got = parse_diagnose_argv(["diagnose", *args], {})
    assert got is not None, args
    assert got == _click_params(args)


@pytest.mark.parametrize("args", DECLINED_ARGVS)
def test_fast_diagnose_parser_leaves_the_rest_to_click(args):
    from gpuvet.cli.diagnose_run import parse_diagnose_argv

    assert parse_diagnose_argv(["diagnose", *args], {}) is None


def test_fast_diagnose_parser_only_takes_diagnose_and_not_completion():
    from gpuvet.cli.diagnose_run import parse_diagnose_argv

    assert parse_diagnose_argv(["check", "x.log"], {}) is None
    assert parse_diagnose_argv(["diagnose", "x.log"], {"_GPUVET_COMPLETE": "bash_source"}) is None


@pytest.mark.parametrize("fmt", ["json", "terminal"])
def test_fast_and_click_paths_give_the_same_report(fmt):
    from gpuvet.app.env import Environment
    from gpuvet.cli.group import cli
    from gpuvet.cli.main import main

    outs = []
    for via_click in (False, True):
        out, err = io.StringIO(), io.StringIO()
        env = Environment(stdout=out, stderr=err, environ={"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")})
        argv = ["diagnose", "--format", fmt, LOG]
        rc = cli.main(args=argv, prog_name="gpuvet", standalone_mode=False, obj=env) if via_click else main(argv, env)
        text = out.getvalue()
        if fmt == "json":
            doc = json.loads(text)
            doc["meta"].pop("elapsed_s", None)
            doc.pop("header", None)
            text = json.dumps(doc, sort_keys=True)
        else:
            text = "\n".join(ln for ln in text.splitlines() if " · KB " not in ln)  # the footer names the time
        outs.append((rc, text, err.getvalue()))
    assert outs[0] == outs[1]


def test_plain_diagnose_does_not_import_click_and_errors_stay_clicks(tmp_path):
    code = ("import sys, io, contextlib\nfrom gpuvet.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    rc = main(['diagnose', '--format', 'json', {LOG!r}])\n"
            "print(rc, 'click' in sys.modules)")
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["0", "False"], out.stderr
    bad = subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", "--format", "yaml", LOG], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "gpuvet: error:" in bad.stderr and "yaml" in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", str(tmp_path / "nope.log")], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 3 and missing.stderr.startswith("gpuvet: error:") and "Traceback" not in missing.stderr
