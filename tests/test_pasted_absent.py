"""Pasted text is partial: a table it never shows is "not in the text" (never "not installed", never a
pass), and when it holds an error but not the facts that would decide between causes, diagnose says
which one or two commands to paste."""
from __future__ import annotations

from conftest import ROOT, run_cli
from gpuvet.logs.settle import commands_to_settle
from gpuvet.model import Facts, row

FOUNDING = ROOT / "tests" / "fixtures" / "founding"


def _check_from(tmp_path, text):
    p = tmp_path / "paste.txt"
    p.write_text(text, encoding="utf-8")
    return run_cli(["check", "--from", str(p), "--format", "json"]).json()


def test_absent_tool_is_not_in_the_text_not_skipped(tmp_path):
    doc = _check_from(tmp_path, "$ pip list | grep torch\ntorch                     2.5.1+rocm6.2\n")
    by_code = {f["code"]: f for f in doc["findings"]}
    rtm022 = by_code["RTM022"]  # hipcc vs runtime: the text shows no hipcc
    assert rtm022["outcome"] == "unknown" and "not in the pasted text" in rtm022["title"]
    assert rtm022["missing"]
    for f in doc["findings"]:
        assert "not installed" not in f["title"] or f["outcome"] != "skipped", f
        assert not (f["outcome"] == "passed" and "not" in f["title"] and "installed" in f["title"]), f


def test_live_skips_stay_skips():
    from gpuvet import kb
    from gpuvet.app.engine import run_checks
    from gpuvet.checks.registry import get

    facts = Facts(origin="live")
    facts.add([row("framework_builds", "t", name="torch", version="2.5.1+rocm6.2", hip="6.2.41133", variant="rocm"),
               row("runtimes", "t", vendor="amd", name="rocm", version="6.2.4", path="/opt/rocm", origin="system"),
               row("compilers", "t", name="gcc", version="12.2.0")])
    [f] = run_checks(facts, [get("RTM022")], kb.load())
    assert f.outcome.value == "skipped"
    facts.origin = "pasted"
    [f] = run_checks(facts, [get("RTM022")], kb.load())
    assert f.outcome.value == "unknown" and f.missing


def test_error_without_versions_asks_for_the_versions():
    text = ("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasGemmEx( handle, opa, opb, "
            "m, n, k, &falpha, a, HIPBLAS_R_16F, lda, b, HIPBLAS_R_16F, ldb, &fbeta, c, HIPBLAS_R_16F, ldc, "
            "HIPBLAS_R_32F, HIPBLAS_GEMM_DEFAULT)`\n")
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    cmds = [c["command"] for c in doc["settle"]]
    assert 1 <= len(cmds) <= 2
    assert any("torch.version.hip" in c for c in cmds) and any(".info/version" in c for c in cmds)


def test_decided_by_a_fact_needs_no_paste():
    doc = run_cli(["diagnose", "--format", "json", "-"],
                  stdin=(FOUNDING / "ci_commands.txt").read_text(encoding="utf-8")).json()
    assert doc["diagnoses"][0]["cause"] == "runtime-mismatch" and doc["settle"] == []
    assert any(n["code"] == "RTM028" and "HSA" in n["title"] for n in doc["notes"])  # 1.1 is the HSA API


def test_settle_asks_only_for_what_is_missing():
    facts = Facts(origin="pasted")
    facts.add([row("framework_builds", "t", name="torch", version="2.3.0+cu121", cuda="12.1", variant="cuda")])
    cmds = commands_to_settle("driver-too-old", facts, {"nvidia"})
    assert [c["command"] for c in cmds] == ["nvidia-smi"]
    assert commands_to_settle("driver-too-old", facts, {"nvidia"}, decided=True) == []


def _collapsed(tmp_path, name: str) -> str:
    p = tmp_path / name
    p.write_text((FOUNDING / name).read_text(encoding="utf-8"), encoding="utf-8")
    r = run_cli(["check", "--from", str(p)], environ={"NO_COLOR": "1", "COLUMNS": "80"})
    text = r.out.replace("\n  ", " ")
    [line] = [x for x in text.splitlines() if x.startswith("? ") and "paste the output of" in x]
    return line


def test_the_collapsed_line_asks_only_for_this_vendors_commands_not_yet_shown(tmp_path):
    """An AMD paste is not asked for nvidia-smi, nvcc or /dev/nvidia*, nor for the output it already holds
    (hipcc's banner in the CI commands, collect_env's report itself)."""
    ci = _collapsed(tmp_path, "ci_commands.txt")
    assert "rocminfo" in ci and "ls -l /dev/kfd /dev/dri" in ci, ci
    for other in ("nvidia-smi", "nvcc", "/dev/nvidia", "hipcc --version"):
        assert other not in ci, (other, ci)
    env = _collapsed(tmp_path, "collect_env.txt")
    assert "torch.utils.collect_env" not in env and "nvidia-smi" not in env and "rocminfo" in env, env
    assert "hipcc --version" in env  # collect_env shows no hipcc


def test_an_nvidia_paste_is_not_asked_for_amd_tools(tmp_path):
    r = run_cli(["check", "--from", str(ROOT / "tests/fixtures/real/h200-cuda13/nvidia-smi.txt")],
                environ={"NO_COLOR": "1", "COLUMNS": "80"})
    flat = " ".join(r.out.split())
    assert "paste the output of" in flat and "pip list" in flat
    assert "rocminfo" not in flat and "/dev/kfd" not in flat and "hipcc" not in flat, flat
    assert "nvidia-smi" not in flat.split("paste the output of")[1].split(";")[0]  # it is the text itself
