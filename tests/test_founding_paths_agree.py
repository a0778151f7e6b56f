"""Issue 9: live `gpuvet check` on the founding machine, `check --from` of what its users pasted, and
`diagnose` (of the paste, and of the bare error with `--here`) reach one verdict: the framework's HIP 5.7
against the system's ROCm 5.6.1 (RTM021), with both versions and where each was read.

The live machine is a FakeSystem holding the files the probes read there (the examined interpreter's
torch/version.py, /opt/rocm*/.info/version); the pasted forms are tests/fixtures/founding."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_cli
from fakes import FakeSystem

FOUNDING = ROOT / "tests" / "fixtures" / "founding"
SITE = "/opt/conda/envs/sd/lib/python3.10/site-packages"
ERROR = "RuntimeError: HIP error: HIP_ERROR_NoDeviceMemory: failed to allocate workspace\n"


def founding_machine() -> FakeSystem:
    return FakeSystem(files={
        f"{SITE}/torch/version.py": ("__version__ = '2.3.0.dev20240215+rocm5.7'\ndebug = False\ncuda = None\n"
                                     "hip = '5.7.31921-d1770ee1b'\n"),
        "/opt/rocm-5.6.1/.info/version": "5.6.1-93\n", "/opt/rocm/.info/version": "5.6.1-93\n",
        "/usr/bin/gcc": b"\x7fELF", "/usr/bin/g++": b"\x7fELF"},
        commands={"/usr/bin/gcc --version": "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n",
                  "/usr/bin/g++ --version": "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n"},
        executables={"gcc": "/usr/bin/gcc", "g++": "/usr/bin/g++"}, paths=[SITE], pyversion="3.10.13")


def verdict(title: str) -> tuple[str, str, str]:
    """(framework build, HIP major.minor, system ROCm) of an RTM021 title."""
    m = re.search(r"torch (\S+) is built for HIP (\d+\.\d+)\S* but the system ROCm is (\S+):", title)
    assert m, title
    return m.group(1), m.group(2), m.group(3)


def rtm021(doc) -> dict:
    [f] = [f for f in doc["findings"] if f["code"] == "RTM021" and f["outcome"] == "failed"]
    return f


def test_live_check_pasted_check_and_diagnose_agree(tmp_path):
    expected = ("2.3.0.dev20240215+rocm5.7", "5.7", "5.6.1")
    live = run_cli(["check", "--format", "json"], system=founding_machine())
    assert live.code == 1
    live_doc = live.json()
    assert verdict(rtm021(live_doc)["title"]) == expected
    # the GPU verdict names the skew on the live machine as on the paste
    assert live_doc["usable"]["state"] == "no" and "HIP 5.7" in live_doc["usable"]["text"], live_doc["usable"]
    sources = " ".join(e.get("source", "") for e in rtm021(live_doc)["evidence"])
    assert "torch/version.py" in sources and "/opt/rocm/.info/version" in sources, sources

    p = tmp_path / "collect_env.txt"
    p.write_text((FOUNDING / "collect_env.txt").read_text(encoding="utf-8"), encoding="utf-8")
    pasted = run_cli(["check", "--from", str(p), "--format", "json"])
    assert pasted.code == 1
    pasted_doc = pasted.json()
    assert verdict(rtm021(pasted_doc)["title"]) == expected
    assert pasted_doc["usable"]["state"] == "no" and "HIP 5.7" in pasted_doc["usable"]["text"]

    diag = run_cli(["diagnose", "--format", "json", str(p)])
    assert diag.code == 1
    top = diag.json()["diagnoses"][0]
    assert top["cause"] == "runtime-mismatch" and top["checks"] == ["RTM021"]
    assert verdict(top["title"]) == expected

    here = run_cli(["diagnose", "--here", "--format", "json", "-"], system=founding_machine(), stdin=ERROR)
    assert here.code == 1
    top = here.json()["diagnoses"][0]
    assert top["cause"] == "runtime-mismatch" and top["checks"] == ["RTM021"]
    assert verdict(top["title"]) == expected
    where = " ".join(f.get("source", "") for f in top["facts"])
    assert "torch/version.py" in where and "/opt/rocm/.info/version" in where, where


@pytest.mark.parametrize("rocm", ["5.7.1", "5.7.0"])
def test_a_machine_whose_rocm_matches_is_no_skew_on_any_path(rocm):
    fake = founding_machine()
    fake.files.update({"/opt/rocm/.info/version": f"{rocm}-98\n", f"/opt/rocm-{rocm}/.info/version": f"{rocm}-98\n"})
    del fake.files["/opt/rocm-5.6.1/.info/version"]
    doc = run_cli(["check", "--format", "json"], system=fake).json()
    assert "RTM021" not in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}
    here = run_cli(["diagnose", "--here", "--format", "json", "-"], system=fake, stdin=ERROR).json()
    assert all("RTM021" not in d["checks"] for d in here["diagnoses"])


def test_live_verdict_names_the_skew_before_a_missing_compiler():
    # the founding machine without gcc: the missing host compiler is an error too, but the GPU verdict leads with
    # what stops the GPU (the HIP skew), not with what stops builds
    m = founding_machine()
    bare = FakeSystem(files={k: v for k, v in m.files.items() if not k.startswith("/usr/bin/")},
                      paths=[SITE], pyversion="3.10.13")
    doc = run_cli(["check", "--format", "json"], system=bare).json()
    assert rtm021(doc)
    assert doc["usable"]["state"] == "no" and "HIP 5.7" in doc["usable"]["text"], doc["usable"]
