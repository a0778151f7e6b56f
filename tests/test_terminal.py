"""The terminal report a person reads at a glance: verdict first, failed findings with fixes, the
unknowns collapsed, the stack after, fitted to the terminal's width; scores what was checked."""
import json
import sys

import pytest

from conftest import REAL, run_cli
from gpuvet import kb as KB
from gpuvet.checks.registry import all_checks
from gpuvet.app.engine import build_report, gpu_usable, run_checks
from gpuvet.model import Facts, row
from gpuvet.render.terminal import render_terminal

H200 = REAL / "h200-gpuvet"


@pytest.fixture(scope="module")
def h200_report():
    doc = json.loads((H200 / "check.json").read_text())
    facts = Facts.from_dict(doc["facts"], doc["probe_errors"])
    return build_report("check", facts, run_checks(facts, all_checks(), KB.load()), KB.load())


def test_h200_leads_with_the_verdict_then_findings_then_stack(h200_report):
    text = render_terminal(h200_report, width=80)
    lines = text.splitlines()
    assert lines[0] == "GPU usable by torch: yes (2.11.0+cu130, CUDA 13.0, 1x H200 sm_90)"
    # the system cuDNN/NCCL copies nothing loads are information (BLD045): no deduction
    assert text.index("BLD045") < text.index("Stack") < text.index("Score 100/100")
    assert max(len(line) for line in lines) <= 80
    assert "fix [" in text


@pytest.mark.parametrize("width", [80, 140])
def test_nothing_runs_past_the_width(h200_report, width):
    for stack in (False, True):
        text = render_terminal(h200_report, width=width, stack=stack, verbose=stack)
        assert max(len(line) for line in text.splitlines()) <= width


def test_pasted_nvidia_smi_collapses_unknowns_and_scores_what_it_shows():
    r = run_cli(["check", "--from", str(REAL / "h200-cuda13/nvidia-smi.txt")],
                environ={"NO_COLOR": "1", "COLUMNS": "80"})
    assert r.code == 0, r.err
    unknown_lines = [line for line in r.out.splitlines() if line.startswith("? ")]
    flat = " ".join(r.out.split())
    assert len(unknown_lines) == 1 and "paste the output of" in flat and "pip list" in flat
    assert "ROCm" not in r.out and "RTM0" not in r.out  # AMD rules do not apply to an NVIDIA-only paste
    # skips of pasted facts are "not in the text" (issue 9): 2 more than the skips they were
    assert "Score 100/100 on 1 check" in flat and "39 could not be checked" in flat  # +ENV067, +5 compile-cache rules
    assert r.out.count("not collected: framework_builds") == 0  # each reason once, in words


def test_verdict_lines():
    kb = KB.load()
    f = Facts()
    f.add([row("framework_builds", "x", name="torch", version="2.13.0+cpu", cuda="", hip="", variant="cpu"),
           row("gpu_devices", "rocminfo", vendor="amd", index=0, name="AMD Instinct MI210", arch="gfx90a")])
    assert gpu_usable(f, run_checks(f, all_checks(), kb))["text"] == \
        "GPU usable by torch: no: CPU-only build (2.13.0+cpu) on a machine with an AMD GPU"
    empty = Facts()
    empty.mark("framework_builds", "packages")
    v = gpu_usable(empty, [])
    assert v["state"] == "no-framework" and "--python" in v["text"]


def test_fresh_venv_without_torch_says_there_is_nothing_to_check(tmp_path):
    r = run_cli(["check", "--format", "json"])
    doc = r.json()
    assert doc["usable"]["state"] in ("yes", "no", "no-framework", "unknown")
    assert doc["meta"]["coverage"]["checked"] >= 0


def test_diagnose_exit_follows_its_help():
    for name in ("oom", "assert"):  # the user's code or data: nothing in the stack is blamed
        r = run_cli(["diagnose", str(H200 / "runs" / f"{name}-output.log")])
        assert r.code == 0, (name, r.out)
    r = run_cli(["diagnose", str(H200 / "runs" / "assert-output.log")])
    flat = " ".join(r.out.split())
    assert "your code or data, not the stack" in flat and "index out of bounds" in flat


def test_rule_page_of_a_signature_has_no_python_reprs():
    r = run_cli(["rule", "LOG001"])
    assert r.code == 0 and "[{" not in r.out and "{'" not in r.out and "['" not in r.out
    assert "Other readings:" in r.out and "Example lines it matches:" in r.out


def test_run_prints_one_line_for_a_plain_failure(tmp_path):
    r = run_cli(["run", "--bundle", str(tmp_path / "b"), "--", sys.executable, "-c", "import sys; sys.exit(3)"])
    assert r.code == 3
    said = [line for line in r.err.splitlines() if line.strip()]
    # one message, wrapped to the terminal's width (never cut mid-word by the terminal)
    assert "nothing in its output points at the GPU stack" in " ".join(" ".join(said).split())
    assert said[0].startswith("gpuvet: the command") and all(line.startswith("  ") for line in said[1:])
    assert all(len(line) <= 80 for line in said if " " in line.strip())
    assert "Stack" not in r.err


def test_bld046_reads_the_loaded_cudart_a_pasted_collect_env_names():
    """collect_env names the pip cudart torch loads (no file path): BLD046 checks it, as the stack shows."""
    r = run_cli(["check", "--from", str(REAL / "h200-cuda13" / "collect_env.txt"), "--format", "json"])
    by = {f["code"]: f for f in r.json()["findings"]}
    assert by["BLD046"]["outcome"] == "passed" and "13.0.96" in by["BLD046"]["title"]
