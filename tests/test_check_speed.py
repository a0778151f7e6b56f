"""gpuvet check's start-up stays lean: the modules it must not import on the way (each costs start-up
time on every run: bench/check_speed.py), and the fast paths that replaced them give the same answers."""
import os
import shutil
import subprocess
import sys

import pytest

from gpuvet.probes.dpkg import parse_dpkg_status
from gpuvet.probes.system import _which

HEAVY = ("packaging.requirements", "packaging.markers", "packaging.tags", "logging", "importlib.resources",
         "shutil", "secrets", "yaml", "jsonschema", "elftools", "sqlalchemy", "rich", "tomllib")


def test_live_check_does_not_import_heavy_modules(tmp_path):
    code = ("import sys, io, contextlib\nfrom gpuvet.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['check', '--fail-on', 'never'])\n"
            "print('\\n'.join(sorted(sys.modules)))")
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    # a warm KB cache first (a user's second run): the YAML parser is only for a cache miss
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    mods = set(out.stdout.split())
    assert "gpuvet.app.check" in mods, out.stderr
    # what the interpreter loads before gpuvet runs (site's .pth hooks: the H200 image's numba-cuda redirector
    # imports importlib.resources and shutil) is not gpuvet's cost; nor is what a dependency's own module
    # pulls in once gpuvet needs it lazily (older packaging: specifiers -> utils -> tags -> logging)
    base = "import sys\nprint('\\n'.join(sorted(sys.modules)))"
    before = set(subprocess.run([sys.executable, "-c", base], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60).stdout.split())
    if "packaging.specifiers" in mods:
        before |= set(subprocess.run([sys.executable, "-c", "import packaging.specifiers\n" + base], cwd=tmp_path,
                                     env=env, capture_output=True, text=True, timeout=60).stdout.split())
    assert not [m for m in HEAVY if m in mods - before]


@pytest.mark.parametrize("cmd", ["python3", "ls", "sh", "nonexistent-tool-x", "/usr/bin/env", "/usr/bin", "bin/ls"])
@pytest.mark.parametrize("path", [os.environ.get("PATH", ""), "", "/nonexistent:/usr/bin", "/usr/bin::/bin",
                                  "/usr/bin:/usr/bin"])
def test_which_is_shutils(cmd, path):
    assert _which(cmd, path) == shutil.which(cmd, path=path)


def test_dpkg_status_fast_scan_reads_what_the_paragraph_parse_read():
    import re

    from gpuvet.probes.dpkg import AMD_DPKG

    def by_paragraph(text):
        out = {}
        for para in text.split("\n\n"):
            pkg = re.search(r"^Package:[ \t]*(\S+)", para, re.M)
            ver = re.search(r"^Version:[ \t]*(\S+)", para, re.M)
            st = re.search(r"^Status:[ \t]*(.+)$", para, re.M)
            if pkg and ver and AMD_DPKG.match(pkg.group(1)) and not (st and "installed" not in st.group(1).split()[-1:]):
                out[pkg.group(1)] = ver.group(1)
        return out

    texts = ["", "Package: rocm-core\nStatus: install ok installed\nVersion: 6.0.2.60002-115~22.04\n",
             "Package: rocm-core\nStatus: deinstall ok config-files\nVersion: 6.0.2-1\n\nPackage: hipcc\nVersion: 5.2\n",
             "Package: libc6\nVersion: 2.36\n\nPackage: libamdhip64-5\nStatus: install ok installed\nVersion: 5.2.3-3\n"]
    if os.path.exists("/var/lib/dpkg/status"):
        texts.append(open("/var/lib/dpkg/status", encoding="utf-8", errors="replace").read())
    for t in texts:
        assert parse_dpkg_status(t) == by_paragraph(t)


# -- `gpuvet check` without Click: the fast parser gives Click's parameters, or declines ------------------
FAST_ARGVS = [
    [], ["--format", "json"], ["--format=json"], ["-f", "markdown"], ["--fail-on", "never"], ["--fail-on=warning"],
    ["-v"], ["--verbose", "--stack"], ["-q"], ["--quiet", "--statistics"], ["--show-fixes"],
    ["--python", "/usr/bin/python3"], ["--python=/x y/python"], ["--from", "a.txt", "--from", "-"],
    ["--from=-"], ["--select", "BLD", "--ignore", "PKG063", "--select", "DRV"], ["--format", "sarif", "-v", "-q"],
    ["--fail-on", "never", "--format", "json", "--fail-on", "error"], ["--select", ""],
]
DECLINED_ARGVS = [
    ["--help"], ["-h"], ["--format", "yaml"], ["--format"], ["--fail-on", "Never"], ["--bogus"], ["--verb"],
    ["-vq"], ["-fjson"], ["--fix"], ["--dry-run"], ["--fix", "--dry-run"], ["--ack", "X=y"], ["-o", "out.txt"],
    ["--deadline", "5"], ["extra"], ["--python", "-x"], ["--", "--format", "json"], ["--verbose=1"],
]


def _click_params(args):
    from gpuvet.cli.check_cmd import check

    ctx = check.make_context("check", list(args))
    return dict(ctx.params)


@pytest.mark.parametrize("args", FAST_ARGVS)
def test_fast_check_parser_gives_clicks_parameters(args):
    from gpuvet.cli.check_run import parse_check_argv

    got = parse_check_argv(["check", *args], {})
    assert got is not None, args
    assert got == _click_params(args)


@pytest.mark.parametrize("args", DECLINED_ARGVS)
def test_fast_check_parser_leaves_the_rest_to_click(args):
    from gpuvet.cli.check_run import parse_check_argv

    assert parse_check_argv(["check", *args], {}) is None


def test_fast_check_parser_only_takes_check_and_not_completion():
    from gpuvet.cli.check_run import parse_check_argv

    assert parse_check_argv(["diagnose", "x.log"], {}) is None
    assert parse_check_argv(["--version"], {}) is None
    assert parse_check_argv(["check"], {"_GPUVET_COMPLETE": "bash_source"}) is None


def test_plain_check_does_not_import_click_and_help_still_works(tmp_path):
    code = ("import sys, io, contextlib\nfrom gpuvet.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    rc = main(['check', '--format', 'json', '--fail-on', 'never'])\n"
            "print(rc, 'click' in sys.modules)")
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["0", "False"], out.stderr
    helped = subprocess.run([sys.executable, "-m", "gpuvet", "check", "--help"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--format" in helped.stdout and "--fail-on" in helped.stdout
    bad = subprocess.run([sys.executable, "-m", "gpuvet", "check", "--format", "yaml"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "gpuvet: error:" in bad.stderr and "yaml" in bad.stderr


def test_fast_and_click_paths_give_the_same_report():
    """The same pasted report through the fast path and through Click: the same bytes (timing aside)."""
    import io
    import json

    from gpuvet.app.env import Environment
    from gpuvet.cli.group import cli
    from gpuvet.cli.main import main

    from conftest import REAL

    src = str(REAL / "h200-cuda13" / "nvidia-smi.txt")
    outs = []
    for via_click in (False, True):
        out, err = io.StringIO(), io.StringIO()
        env = Environment(stdout=out, stderr=err, environ={"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")})
        argv = ["check", "--from", src, "--format", "json", "--fail-on", "never"]
        if via_click:
            rc = cli.main(args=argv, prog_name="gpuvet", standalone_mode=False, obj=env)
        else:
            rc = main(argv, env)
        doc = json.loads(out.getvalue())
        for key in ("elapsed_s",):
            doc["meta"].pop(key, None)
        doc.pop("header", None)
        outs.append((rc, json.dumps(doc, sort_keys=True), err.getvalue()))
    assert outs[0] == outs[1]


def test_fast_check_exits_at_once_with_its_whole_report_and_status(tmp_path):
    """After a fast-path check the process leaves with os._exit (no interpreter tear-down): the report is
    still written whole, through a pipe and into a file, with the right exit status."""
    import json

    from conftest import FIXTURES, REAL

    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    gv = [sys.executable, "-m", "gpuvet", "check"]
    live = subprocess.run(gv + ["--format", "json", "--fail-on", "never"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert live.returncode == 0 and json.loads(live.stdout)["command"] == "check", live.stderr
    pasted = [str(REAL / "debian12-cpu-rocm52" / "rocminfo.txt"), str(FIXTURES / "amd" / "pasted" / "lspci-grep-vga-vega10.txt")]
    out = tmp_path / "report.txt"
    with open(out, "w") as fh:
        r = subprocess.run(gv + ["--from", pasted[0], "--from", pasted[1]], cwd=tmp_path, env=env, stdout=fh,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    text = out.read_text()
    assert r.returncode == 1, r.stderr  # the amdgpu driver is not loaded: an error at the default --fail-on
    assert text.rstrip().splitlines()[-1].startswith("gpuvet ") and "Score" in text
