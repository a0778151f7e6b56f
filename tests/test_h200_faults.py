"""The issue-10 faults as gpuvet saw them on the real H200 (tests/fixtures/real/h200-faults, made by
bench/h200/faults.sh): each fault a named, failed finding with its cause, component and fix, exit 1;
`gpuvet run` ranks that finding first and carries its fix; the healthy machine scores 100, exit 0."""
import json

import pytest

from conftest import REAL

D = REAL / "h200-faults" / "runs"
RC = dict(line.rsplit(" rc=", 1) for line in (D / "rc.txt").read_text().splitlines() if " rc=" in line)

CASES = {  # scenario: (check code, cause, component, text in the check fix's command, run's first check)
    "preload": ("BLD049", "runtime-mismatch", "system-library", "unset LD_PRELOAD", "BLD049"),
    "ldpath": ("BLD048", "runtime-mismatch", "system-library", "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "BLD048"),
    "cc": ("ENV065", "toolchain", "config-env", "unset CC", "ENV065"),
    "archlist": ("ENV066", "gpu-arch-unsupported", "config-env", 'TORCH_CUDA_ARCH_LIST="8.0;9.0"', "ENV066"),
    "archlist-only": ("ENV066", "gpu-arch-unsupported", "config-env", 'TORCH_CUDA_ARCH_LIST="8.0;9.0"', None),
    "sm80ext": ("EXT007", "gpu-arch-unsupported", "extension", "rm -rf /tmp/h10-torch-extensions/h10_sm80_ext", "EXT007"),
}


def _check(name):
    return json.loads((D / name / "check.json").read_text())


def test_healthy_h200_scores_100_and_exits_0():
    doc = _check("healthy")
    assert doc["score"] == 100 and RC["healthy check"] == "0" and RC["healthy run"] == "0"
    failed = [f for f in doc["findings"] if f["outcome"] == "failed"]
    # the system cuDNN / NCCL that nothing loads: information only, with the setting that would load them
    assert {f["code"] for f in failed} == {"BLD045"} and all(f["severity"] == "info" for f in failed)
    assert all("loaded only with LD_PRELOAD=" in f["title"] for f in failed)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fault_is_named_with_its_cause_component_and_fix(name):
    code, cause, component, command, run_check = CASES[name]
    doc = _check(name)
    assert RC[f"{name} check"] == "1"
    errors = [f for f in doc["findings"] if f["outcome"] == "failed" and f["severity"] in ("error", "critical")]
    assert [f["code"] for f in errors] == [code]
    f = errors[0]
    assert (f["cause"], f["component"]) == (cause, component)
    assert command in (f["fixes"][0].get("command") or "")
    if run_check is None:
        return
    assert RC[f"{name} run"] == "1"
    diag = json.loads((D / name / "bundle" / "diagnosis.json").read_text())["diagnoses"][0]
    assert (diag["cause"], diag["component"]) == (cause, component)
    assert diag["checks"][0] == run_check and diag["confidence"] >= 0.9
    assert "NCCL" not in diag["fix"]  # never another finding's fix


def test_the_real_loader_agrees_with_the_model_for_ldpath():
    maps = (D / "ldpath" / "proc-maps.txt").read_text().split()
    assert any(p.endswith("site-packages/nvidia/cudnn/lib/libcudnn.so.9") for p in maps)
    assert any(p.endswith("libcudnn_graph.so.9.14.0") and "site-packages" not in p for p in maps)
    bld048 = next(f for f in _check("ldpath")["findings"] if f["code"] == "BLD048")
    assert "libcudnn_graph.so.9" in bld048["title"] and "via ld_library_path" in bld048["title"]
