"""The CLI behaves like the linters engineers trust (ruff, pip-audit): unknown codes are usage errors,
configuration is found like ruff's, -q / --statistics, --show-fixes / --fix / --dry-run, github and
sarif formats, --version with the KB, shell completion; fixes do what they say, into the examined env."""
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import REAL, run_cli
from gpuvet.app.env import Environment
from gpuvet.cli.main import main
from gpuvet.model import Applicability, Evidence, Finding, Fix, Outcome, Report, Severity

H200_JSON = str(REAL / "h200-gpuvet" / "check.json")
NVSMI = str(REAL / "h200-cuda13/nvidia-smi.txt")


def cli_in(cwd, argv, environ=None):
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdin=io.StringIO(""), stdout=out, stderr=err,
                      environ=environ or {"NO_COLOR": "1", "HOME": str(cwd)}, cwd=str(cwd))
    return main(argv, env), out.getvalue(), err.getvalue()


@pytest.mark.parametrize("opt,code,closest", [("--select", "BLD0455", "BLD045"), ("--ignore", "DRV0O1", "DRV001"),
                                              ("--ack", "BLD46=reason", "BLD046")])
def test_unknown_code_is_a_usage_error_naming_the_closest(opt, code, closest):
    r = run_cli(["check", "--from", H200_JSON, opt, code])
    assert r.code == 2 and closest in r.err and r.out == ""


def test_known_prefix_and_log_codes_are_accepted():
    assert run_cli(["check", "--from", H200_JSON, "--select", "BLD", "--fail-on", "never"]).code == 0
    assert run_cli(["check", "--from", H200_JSON, "--ack", "LOG100=known OOM", "--fail-on", "never"]).code == 0


def test_pyproject_config_is_found_from_a_subdirectory_and_shown_with_origins(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.gpuvet]\nignore = ["PKG063"]\nfail-on = "never"\npython = "venv/bin/python"\n'
        '[tool.gpuvet.ack]\nBLD045 = "the system cuDNN belongs to the host"\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    code, out, err = cli_in(sub, ["config", "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["config"]["value"] == str(tmp_path / "pyproject.toml")
    assert doc["ignore"] == {"value": ["PKG063"], "origin": f"{tmp_path / 'pyproject.toml'} [tool.gpuvet]"}
    assert doc["python"]["value"] == str(tmp_path / "venv/bin/python")
    assert doc["ack"]["value"] == {"BLD045": "the system cuDNN belongs to the host"}
    # the acknowledgement applies: BLD045 is shown acknowledged and does not cost score
    code, out, err = cli_in(sub, ["check", "--from", H200_JSON, "--format", "json", "--fail-on", "warning"])
    rep = json.loads(out)
    assert all(f.get("acknowledged") for f in rep["findings"] if f["code"] == "BLD045") and rep["score"] == 100
    assert code == 0
    # the command line wins over the file
    code, out, _ = cli_in(sub, ["config"])
    assert "fail-on  = never" in out and "[tool.gpuvet]" in out


def test_gpuvet_toml_wins_in_its_directory_and_bad_settings_are_usage_errors(tmp_path):
    (tmp_path / "gpuvet.toml").write_text('select = ["DRV"]\n')
    (tmp_path / "pyproject.toml").write_text('[tool.gpuvet]\nselect = ["BLD"]\n')
    code, out, _ = cli_in(tmp_path, ["config", "--format", "json"])
    assert json.loads(out)["select"]["value"] == ["DRV"]
    (tmp_path / "gpuvet.toml").write_text('selct = ["DRV"]\n')
    code, _, err = cli_in(tmp_path, ["check", "--from", NVSMI])
    assert code == 2 and "did you mean 'select'" in err
    (tmp_path / "gpuvet.toml").write_text('select = ["DRV999"]\n')
    code, _, err = cli_in(tmp_path, ["check", "--from", NVSMI])
    assert code == 2 and "DRV999" in err and "gpuvet.toml" in err


def test_quiet_and_statistics():
    r = run_cli(["check", "--from", H200_JSON, "-q"])
    lines = r.out.splitlines()
    assert len(lines) == 2 and all(":BLD045: [info] " in line for line in lines)  # copies nothing loads
    assert lines[0].startswith(H200_JSON + ":")
    r = run_cli(["check", "--from", H200_JSON, "--statistics"])
    assert r.out.splitlines()[0].split()[:2] == ["2", "BLD045"]
    assert r.out.splitlines()[-1].split()[:3] == ["2", "failed", "findings;"]


def test_counts_read_as_english():
    from gpuvet.render.github import render_github as github
    from gpuvet.render.terminal import render_statistics

    f = Finding("PKG100", "companion-built-for-other-torch", Severity.ERROR, Outcome.FAILED, "triton 3.6 vs 3.7")
    report = Report("check", findings=[f], score=80, meta={"coverage": {"checked": 1}})
    assert render_statistics(report).splitlines()[-1].startswith("   1  failed finding; ")
    assert "score 80/100 on 1 check" in github(report) and "on 1 checks" not in github(report)


def _report(*fixes):
    f = Finding("PKG100", "companion-built-for-other-torch", Severity.ERROR, Outcome.FAILED, "triton 3.6 vs 3.7",
                evidence=(Evidence("triton 3.6.0", "/venv/lib/site-packages"),), fixes=tuple(fixes))
    return Report("check", findings=[f], meta={"python": "/venv/bin/python"})


def test_show_fixes_and_fix_apply_only_safe_pip_steps():
    from gpuvet.app import fixes
    from fakes import FakeSystem

    rep = _report(Fix("install triton 3.7.1", Applicability.SAFE, "/venv/bin/python -m pip install triton==3.7.1"),
                  Fix("export it", Applicability.SAFE, "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
                  Fix("load the driver", Applicability.UNSAFE, "sudo modprobe amdgpu", needs_root=True),
                  Fix("reboot", Applicability.DISPLAY_ONLY, "sudo reboot", needs_reboot=True))
    steps = fixes.plan(rep)
    assert [s.applies for s in steps] == [True, False, False, False]
    text = fixes.script(steps, "test")
    live = [ln for ln in text.splitlines() if ln and not ln.startswith("#") and ln != "set -e"]
    assert live == ["/venv/bin/python -m pip install triton==3.7.1"]
    sysm = FakeSystem()
    sysm.commands["/venv/bin/python -m pip install triton==3.7.1"] = "Successfully installed triton-3.7.1"
    said = []
    assert fixes.apply(steps, sysm, dry_run=True, write=said.append) == 0 and "would run" in said[0]
    said.clear()
    assert fixes.apply(steps, sysm, dry_run=False, write=said.append) == 0 and "running" in said[0]
    assert fixes.apply(fixes.plan(_report(Fix("x", Applicability.SAFE, "/venv/bin/python -m pip install nope"))),
                       sysm, dry_run=False, write=said.append) == 1  # a failing step is reported


def test_fix_commands_use_the_examined_interpreter():
    from gpuvet.app.engine import retarget_fixes

    rep = _report(Fix("install triton 3.7.1", Applicability.SAFE, "pip install triton==3.7.1"),
                  Fix("numpy", Applicability.SAFE, "python -m pip install 'numpy<2'"),
                  Fix("unset", Applicability.SAFE, "unset LD_LIBRARY_PATH"))
    [f] = retarget_fixes(rep.findings, "/opt/my env/bin/python")
    assert [x.command for x in f.fixes] == ["'/opt/my env/bin/python' -m pip install triton==3.7.1",
                                            "'/opt/my env/bin/python' -m pip install 'numpy<2'",
                                            "unset LD_LIBRARY_PATH"]


def test_show_fixes_cli_and_fix_refuses_pasted_text():
    r = run_cli(["check", "--from", H200_JSON, "--show-fixes"])
    assert r.out.startswith("#!/bin/sh") and "BLD045" in r.out
    assert run_cli(["check", "--from", H200_JSON, "--fix"]).code == 2
    assert run_cli(["check", "--from", H200_JSON, "--dry-run"]).code == 2


def test_github_and_sarif_formats():
    r = run_cli(["check", "--from", H200_JSON, "--format", "github"])
    lines = r.out.splitlines()
    assert sum(line.startswith("::notice file=") for line in lines) == 2  # BLD045 is information
    assert "title=gpuvet BLD045 gpu-library-shadowed-copy" in lines[0]
    assert lines[-1].startswith("::notice title=gpuvet check::GPU usable by torch: yes")
    doc = json.loads(run_cli(["check", "--from", H200_JSON, "--format", "sarif"]).out)
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "gpuvet"
    assert [r["ruleId"] for r in run["results"]] == ["BLD045", "BLD045"]
    assert run["results"][0]["level"] == "note" and run["tool"]["driver"]["rules"][0]["id"] == "BLD045"


def test_version_names_the_kb():
    r = run_cli(["--version"])
    assert r.code == 0 and r.out.startswith("gpuvet ") and "knowledge base 20" in r.out


def test_click_shell_completion():
    env = dict(os.environ, _GPUVET_COMPLETE="bash_complete", COMP_WORDS="gpuvet check --select BLD04", COMP_CWORD="3")
    out = subprocess.run([sys.executable, "-m", "gpuvet"], env=env, capture_output=True, text=True, timeout=60).stdout
    assert "plain,BLD045" in out.splitlines()


def test_check_from_several_files_reports_each_and_fails_only_when_none_is_recognised(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("we rebooted the box yesterday and it still fails\n")
    r = run_cli(["check", "--from", str(junk), "--from", NVSMI, "--format", "json"])
    assert r.code == 0, r.err
    inputs = r.json()["meta"]["inputs"]
    assert [i["recognised"] for i in inputs] == [False, True]
    r = run_cli(["check", "--from", str(junk), "--from", NVSMI])
    assert "notes.txt: no tool output recognised in it; left out" in " ".join(r.out.split())
    r = run_cli(["check", "--from", str(junk)])
    assert r.code == 3 and r.err.count("\n") == 1


def test_check_from_env_output():
    r = run_cli(["check", "--from", str(REAL / "h200-cuda13/env.txt"), "--format", "json"])
    assert r.code == 0, r.err
    names = {row["name"] for row in r.json()["facts"]["env_vars"]}
    assert {"NVIDIA_VISIBLE_DEVICES", "CUDA_VERSION", "LD_LIBRARY_PATH"} <= names


TOML_SPELLINGS = [
    '[tool.gpuvet]\nselect=["DRV"]', '[ tool . "gpuvet" ]\nx=1', "[tool.'gpuvet'.ack]\nA='b'", 'tool.gpuvet.select = ["D"]',
    '[tool]\ngpuvet = {select=["DRV"]}', '[tool]\n"gpuvet".select = ["D"]', 'tool = { gpuvet = { select = ["D"] } }',
    '[tool]\ngpuvet.select = [\n "DRV",\n]', 'tool . gpuvet . x = 1', '[tool.ruff]\nx=1\n[tool.gpuvet]\ny=2',
    '[tool]\nd = """\n[project]\n"""\ngpuvet = {x = 1}',
    '[project]\nname="gpuvet"\n[project.scripts]\ngpuvet="gpuvet.cli:run"', '[tool.x]\nl=[\n"gpuvet",\n]',
    '[project]\nname="x"', '[tool]\nx = "gpuvet"',
]


@pytest.mark.parametrize("text", TOML_SPELLINGS)
def test_pyproject_prefilter_never_passes_over_a_gpuvet_table(text):
    """check skips parsing a pyproject.toml that certainly has no [tool.gpuvet] (start-up); whatever the
    TOML spelling of the table, the prefilter says it may be there."""
    import tomllib

    from gpuvet.app.config import may_hold_gpuvet_table

    doc = tomllib.loads(text)
    has = isinstance(doc.get("tool"), dict) and "gpuvet" in doc["tool"]
    assert may_hold_gpuvet_table(text.encode()) or not has
    if "[project]" in text and "d = " not in text:
        assert not may_hold_gpuvet_table(text.encode())  # only names gpuvet elsewhere: not parsed


def test_pyproject_naming_gpuvet_elsewhere_is_passed_over_for_the_parents(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpuvet]\nignore = ["PKG063"]\n')
    sub = tmp_path / "proj"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "gpuvet-user"\ndependencies = ["gpuvet"]\n')
    code, out, err = cli_in(sub, ["config", "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["config"]["value"] == str(tmp_path / "pyproject.toml")
