"""markdown and junit follow the terminal's layout: the verdict first, the failed findings with their
fixes, the unknowns collapsed per reason, not-applicable vendor checks left out; an information note
is not drawn (or counted) as a failure in any of them."""
import xml.etree.ElementTree as ET

from conftest import FIXTURES, REAL, run_cli

H200 = str(REAL / "h200-gpuvet" / "check.json")  # healthy H200: two BLD045 information notes
AMD_DEAD = ["--from", str(REAL / "debian12-cpu-rocm52" / "rocminfo.txt"),
            "--from", str(FIXTURES / "amd/pasted/lspci-grep-vga-vega10.txt")]


def test_terminal_draws_information_apart_from_failures():
    r = run_cli(["check", "--from", H200], environ={"NO_COLOR": "1", "COLUMNS": "100"})
    assert "i BLD045 gpu-library-shadowed-copy [info]" in r.out and "✗ BLD045" not in r.out
    score = next(line for line in r.out.splitlines() if line.startswith("Score"))
    assert "0 failed" in score and "2 information" in score
    r = run_cli(["compat", "--torch", "2.1", "--cuda", "11.8", "--driver", "470.82", "--gpu", "A100"],
                environ={"NO_COLOR": "1", "COLUMNS": "100"})
    assert "! DRV001 driver-too-old-for-framework-cuda [warning]" in r.out


def test_markdown_leads_with_the_verdict_then_failures_then_collapsed_unknowns():
    r = run_cli(["check", *AMD_DEAD, "--format", "markdown"])
    lines = [line for line in r.out.splitlines() if line.strip()]
    assert lines[1].startswith("**GPU usable: no: ") and "amdgpu kernel module is not loaded" in lines[1]
    heads = [line for line in lines if line.startswith("## ")]
    assert heads[:2] == ["## Findings (1)", "## Could not check"]
    assert "### ❌ `DRV026` amdgpu-driver-not-loaded — error" in lines
    assert any("sudo modprobe amdgpu" in line for line in lines)
    unknown = lines[lines.index("## Could not check") + 1:]
    unknown = unknown[:next(i for i, line in enumerate(unknown) if line.startswith("## "))]
    assert len(unknown) == 1 and "checks could not run" in unknown[0]  # one line per reason, not 45
    assert "DRV001" not in r.out  # NVIDIA checks are not applicable here: not listed
    r = run_cli(["check", "--from", H200, "--format", "markdown"])
    assert "### ℹ️ `BLD045`" in r.out and "❌" not in r.out and "0 failed · 2 information" in r.out


def test_junit_fails_only_real_failures_and_collapses_unknowns():
    r = run_cli(["check", *AMD_DEAD, "--format", "junit"])
    suite = ET.fromstring(r.out)
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["usable"] == "no" and props["verdict"].startswith("GPU usable: no: ")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases if c.find("failure") is not None] == ["DRV026 amdgpu-driver-not-loaded"]
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == 1 and "could not run" in skipped[0].find("skipped").get("message")
    assert int(suite.get("tests")) == len(cases) == 2 and suite.get("failures") == "1"
    r = run_cli(["check", "--from", H200, "--format", "junit"])
    suite = ET.fromstring(r.out)
    assert suite.get("failures") == "0"
    notes = [c for c in suite.findall("testcase") if c.get("name").startswith("BLD045")]
    assert len(notes) == 2 and all(c.find("system-out") is not None for c in notes)
    assert not any(c.get("name").startswith("DRV026") for c in suite.findall("testcase"))  # AMD: n/a


def test_no_framework_verdict_names_the_interpreter_given(tmp_path):
    import subprocess
    import sys

    from gpuvet.app.engine import gpu_usable
    from gpuvet.model import Facts

    assert gpu_usable(Facts(origin="live"), [])["text"].startswith("no framework in this environment")
    venv = tmp_path / "empty"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    r = run_cli(["check", "--python", py, "--format", "json"])
    import json

    usable = json.loads(r.out)["usable"]
    assert usable["state"] == "no-framework" and py in usable["text"] and "--python" not in usable["text"]
