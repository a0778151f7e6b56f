"""The example pipelines under docs/ci/: valid YAML with the structure each CI expects, and every
gpuvet command in them parses with gpuvet's own command line."""
from __future__ import annotations

import re
import shlex

import click
import pytest
import yaml

from conftest import ROOT

CI = ROOT / "docs" / "ci"


def _gpuvet_commands(text: str) -> list[list[str]]:
    out = []
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith(("#", "//")))
    for m in re.finditer(r"(?<![\w/.-])gpuvet ([^\n'&|;>]*?)(?=\s*(?:$|\n|&&|\|\||;|>>|>|'|\)))", text, re.M):
        line = m.group(1).strip().rstrip("\\").strip()
        try:
            argv = shlex.split(line)
        except ValueError:
            argv = line.split()
        if argv and argv[0] not in ("bench",) and not argv[0].startswith("-"):
            out.append(argv)
    return out


def _parses(argv: list[str]) -> None:
    from gpuvet.cli.main import cli

    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, argv[0])
    assert cmd is not None, f"unknown gpuvet command {argv[0]!r}"
    cmd.make_context(argv[0], list(argv[1:]), parent=ctx)  # raises on an unknown option or a bad value


def test_github_actions_workflow():
    doc = yaml.safe_load((CI / "github-actions.yml").read_text())
    job = doc["jobs"]["gpu-stack"]
    names = [s.get("name", s.get("uses", "")) for s in job["steps"]]
    assert "Fail on version drift from the good snapshot" in names
    roll = next(s for s in job["steps"] if s.get("name", "").startswith("Auto-rollback"))
    assert "steps.drift.outcome == 'failure'" in roll["if"] and "--into" in roll["run"]
    assert True in doc or "on" in doc  # PyYAML reads the key `on` as True


def test_gitlab_ci_test_rocm_job():
    doc = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    job = doc["test_rocm"]
    assert doc[".rocm"]["image"].startswith("rocm/pytorch") and job["extends"] == ".rocm"
    assert job["artifacts"]["reports"]["junit"] == "test-results.xml"
    assert doc["auto_rollback"]["when"] == "on_failure"
    assert any("--fail-on warning" in line for line in doc["stack_check"]["script"])
    for name, j in doc.items():
        if isinstance(j, dict) and "stage" in j:
            assert j["stage"] in doc["stages"], name


def test_jenkinsfile_structure():
    text = (CI / "Jenkinsfile").read_text()
    assert text.count("{") == text.count("}")
    for stage in ("Setup", "Drift", "Test", "Benchmark"):
        assert f"stage('{stage}')" in text
    assert "archiveArtifacts" in text and "junit" in text and "failure {" in text


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml", "Jenkinsfile"])
def test_every_gpuvet_command_in_the_examples_parses(name):
    cmds = _gpuvet_commands((CI / name).read_text())
    assert len(cmds) >= 5
    assert {c[0] for c in cmds} >= {"snapshot", "diff", "rollback", "check"}
    for argv in cmds:
        _parses(argv)
