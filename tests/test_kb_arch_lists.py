"""Issue 9's KB facts: the ROCm wheel GPU-target lists (PYTORCH_ROCM_ARCH of the release builds) and the
latest 2.14 patch, each with the primary source it was read from; and that BLD102 turns them into findings
for a pasted report ("gfx1010 on torch 2.7+rocm6.3")."""
from __future__ import annotations

import pytest

from conftest import run_cli
from gpuvet import kb
from gpuvet.kb import query as q

V5 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]
V6 = V5 + ["gfx1100"]
V7 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
V11 = V7 + ["gfx1101", "gfx1102", "gfx1200", "gfx1201"]


@pytest.mark.parametrize("release, line, arch, source", [
    ("1.13", "rocm5.1.1", V5, "pytorch/builder/blob/d08f226"),
    ("2.0", "rocm5.3", V5, "pytorch/builder/blob/9f0fad9"),
    ("2.1", "rocm5.5", V6, "pytorch/builder/blob/55d40b1"),
    ("2.2", "rocm5.6", V6, "pytorch/builder/blob/af60d11"),
    ("2.3", "rocm5.7", V6, "pytorch/builder/blob/ba10bae"),
    ("2.4", "rocm6.0", V7, "pytorch/builder/blob/4ce1afe"),
    ("2.5", "rocm6.2", V7, "astral-sh/uv/issues/14086"),
    ("2.6", "rocm6.1", V7 + ["gfx1101"], "astral-sh/uv/blob/a82c210cab"),
    ("2.7", "rocm6.2.4", V11, "astral-sh/uv/issues/14086"),
    ("2.7", "rocm6.3", V11, "astral-sh/uv/issues/14086"),
])
def test_rocm_wheel_arch_lists_are_sourced(release, line, arch, source):
    v = q.torch_release(kb.load(), release).variant(line)
    assert v is not None and sorted(v.arch or ()) == sorted(arch)
    assert source in v.source and v.source.startswith("https://github.com/")


def _note(release: str, line: str) -> str:
    [e] = [e for e in kb.load().table("torch_releases") if e["version"] == release]
    [v] = [v for v in e["variants"] if v["name"] == line]
    return str(v.get("note", ""))


@pytest.mark.parametrize("release, line", [("2.8", "rocm6.3"), ("2.8", "rocm6.4"), ("2.9", "rocm6.3"), ("2.9", "rocm6.4"),
                                           ("2.13", "rocm7.1"), ("2.13", "rocm7.2"), ("2.14", "rocm7.2"),
                                           ("2.14", "rocm7.14")])
def test_unsourced_rocm_lines_stay_unknown(release, line):
    # no wheel's get_arch_list and no release-branch build script was read for these: no arch, so checks say unknown
    v = q.torch_release(kb.load(), release).variant(line)
    assert v.arch is None and "not verified" in _note(release, line)


@pytest.mark.parametrize("release, line, sibling", [("2.6", "rocm6.2.4", "rocm6.1"), ("2.10", "rocm7.0", "rocm7.1"),
                                                    ("2.11", "rocm7.1", "rocm7.2"), ("2.12", "rocm7.1", "rocm7.2")])
def test_inferred_lines_carry_their_siblings_list_and_say_so(release, line, sibling):
    """Day 5 (k11): a line built by the same release scripts as a sourced line of that release, with no
    per-ROCm-version arch logic between them, gets that line's list; its note says it was inferred, not read at
    the release branch, and its source is the pytorch/pytorch change that makes the lists one."""
    r = q.torch_release(kb.load(), release)
    v, s = r.variant(line), r.variant(sibling)
    assert v.arch is not None and v.arch == s.arch
    assert "inferred" in _note(release, line) and "not read at" in _note(release, line)
    assert v.source.startswith("https://github.com/pytorch/pytorch/pull/")


def test_latest_214_patch_and_its_torchvision():
    r = q.torch_release(kb.load(), "2.14")
    assert r.latest == "2.14.1"
    # torchvision 0.29.0 pins torch==2.14.0; 0.29.1 is the first that admits 2.14.1
    assert r.companions["torchvision"] == "0.29.1" and "torchaudio" not in r.companions


def _collect_env(torch: str, hip: str, gpu: str) -> str:
    return (f"PyTorch version: {torch}\nIs debug build: False\nCUDA used to build PyTorch: N/A\n"
            f"ROCM used to build PyTorch: {hip}\n\nOS: Ubuntu 22.04.4 LTS (x86_64)\n"
            "Python version: 3.12.3 (main, Apr 10 2024, 05:33:47) [GCC 13.2.0] (64-bit runtime)\n"
            f"Is CUDA available: True\nGPU models and configuration: {gpu}\n"
            f"HIP runtime version: {hip}\nMIOpen runtime version: 3.3.0\n")


def _bld102(text: str) -> dict:
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    return next(f for f in doc["findings"] if f["code"] == "BLD102")


def test_gfx1010_on_torch27_rocm63_is_a_fact_based_finding():
    f = _bld102(_collect_env("2.7.1+rocm6.3", "6.3.42131-fa1d09cbd", "AMD Radeon RX 5700 XT (gfx1010:xnack-)"))
    assert f["outcome"] == "failed" and "gfx1010" in f["title"] and "rocm6.3" in f["title"]
    text = " ".join(e.get("text", "") if isinstance(e, dict) else str(e) for e in f["evidence"])
    assert "astral-sh/uv/issues/14086" in text and "gfx1201" in text  # the KB list and where it was read


@pytest.mark.parametrize("torch, hip, gpu, outcome", [
    ("2.4.1+rocm6.0", "6.0.32830-d62f6a171", "AMD Radeon RX 5700 XT (gfx1010:xnack-)", "failed"),
    ("2.4.1+rocm6.0", "6.0.32830-d62f6a171", "AMD Instinct MI300X (gfx942:sramecc+:xnack-)", "passed"),
    ("2.6.0+rocm6.1", "6.1.40091-a8dbc0c19", "AMD Radeon RX 7800 XT (gfx1101)", "passed"),
    ("2.6.0+rocm6.1", "6.1.40091-a8dbc0c19", "AMD Radeon RX 7600 (gfx1102)", "failed"),
    ("2.6.0+rocm6.2.4", "6.2.41134-65d174c3e", "AMD Radeon RX 5700 XT (gfx1010:xnack-)", "failed"),
    ("2.6.0+rocm6.2.4", "6.2.41134-65d174c3e", "AMD Radeon RX 7600 (gfx1102)", "failed"),  # gfx1102 came in 2.7
    ("2.6.0+rocm6.2.4", "6.2.41134-65d174c3e", "AMD Radeon RX 7800 XT (gfx1101)", "passed"),
    ("2.10.0+rocm7.0", "7.0.51831", "AMD Radeon 8060S Graphics (gfx1151)", "passed"),
    ("2.10.0+rocm7.0", "7.0.51831", "AMD Radeon 780M Graphics (gfx1103)", "failed"),  # gfx1103 came after 2.12
    ("2.11.0+rocm7.1", "7.1.25424", "AMD Instinct MI355X (gfx950:sramecc+:xnack-)", "passed"),
    ("2.9.1+rocm6.4", "6.4.43484", "AMD Instinct MI355X (gfx950:sramecc+:xnack-)", "unknown"),  # not verified
])
def test_bld102_on_newly_sourced_lines(torch, hip, gpu, outcome):
    assert _bld102(_collect_env(torch, hip, gpu))["outcome"] == outcome


@pytest.mark.parametrize("capture, torch, hip, outcome", [
    ("amd/rocminfo-rx7900xtx-rocm602.txt", "2.0.1+rocm5.3", "5.3.22061-e8e78f1a", "failed"),  # gfx1100 came in 2.1
    ("amd/rocminfo-rx7900xtx-rocm602.txt", "2.1.2+rocm5.6", "5.6.31061-8c743ae5d", "passed"),
    ("amd/rocminfo-mi300x.txt", "2.3.1+rocm5.7", "5.7.31921-d1770ee1b", "failed"),  # gfx942 only on ROCm >= 6.0
    ("amd/rocminfo-mi300x.txt", "2.4.1+rocm6.0", "6.0.32830-d62f6a171", "passed"),
])
def test_bld102_live_when_the_build_targets_cannot_be_read(capture, torch, hip, outcome):
    # live facts: a real rocminfo capture and torch/version.py read by the framework probe's own parser, the
    # libraries unreadable (no targets) -- BLD102 judges from the KB's arch list of that wheel line
    from conftest import fixture_text
    from gpuvet.app.engine import run_checks
    from gpuvet.checks.bld import gpu_target_missing_from_official_wheel
    from gpuvet.model import Facts
    from gpuvet.probes.framework import parse_torch_version_py
    from gpuvet.probes.rocminfo import parse_rocminfo

    f = Facts(origin="live")
    f.add(parse_rocminfo(fixture_text(capture), "rocminfo"))
    f.add(parse_torch_version_py(f"__version__ = '{torch}'\ncuda = None\nhip = '{hip}'\n",
                                 "/v/site-packages/torch/version.py", "/v/site-packages/torch"))
    got = run_checks(f, [gpu_target_missing_from_official_wheel], kb.load())
    assert {x.outcome.value for x in got} == {outcome}
