"""Three more ways a user pastes the founding incident's versions, which gave no fact before day 7's last landing:
the Python prompt's answer to ``torch.__version__, torch.version.hip`` (a tuple's repr), ``pip show torch`` written
with its Version field on the command's line, and an environment written as snake_case / kebab-case keys (a config
file, a YAML, a script's dict printed line by line).  Each must make ``diagnose`` rank runtime-mismatch (RTM021)
first and ``check --from`` fail RTM021; each has a consistent twin that is no skew, and look-alikes that give no
fact."""
from __future__ import annotations

import pytest

from conftest import run_cli
from gpuvet.probes.envblock import label_kind
from gpuvet.probes.pasted import parse_report

ERR = ["hipBLAS error: HIPBLAS_STATUS_NOT_SUPPORTED",
       "RuntimeError: HIP_ERROR_NoDeviceMemory: failed to allocate workspace"]

FORMS = {
    "repl-tuple": lambda tv, hip, sys: [">>> import torch; torch.__version__, torch.version.hip",
                                        f"('{tv}', '{hip}-d1770ee1b')", f"ROCm: {sys}"],
    "repl-tuple-two-lines": lambda tv, hip, sys: [">>> import torch", ">>> torch.__version__, torch.version.hip",
                                                  f'("{tv}", "{hip}")', f"I'm running ROCm {sys} on an MI210."],
    "pip-show-inline": lambda tv, hip, sys: ["System Info", f"ROCm {sys}, Ubuntu 22.04, 2x MI250X",
                                             f"pip show torch -> Version: {tv}"],
    "pip-show-grep": lambda tv, hip, sys: [f"- ROCm: {sys}", f"$ pip3 show torch | grep Version  Version: {tv}"],
    "snake-keys": lambda tv, hip, sys: [f"rocm_version: {sys}", f"torch_version: {tv}", "gpu: MI210"],
    "kebab-keys": lambda tv, hip, sys: ["env:", f"  rocm-version: {sys}", f"  torch-version: {tv}"],
}
# (torch version, its HIP, the system's ROCm of the skew, that of the consistent twin)
PAIRS = [("2.3.0.dev20240215+rocm5.7", "5.7.31921", "5.6.1", "5.7.1"),
         ("2.5.0.dev20240801+rocm6.2", "6.2.41133", "6.1.3", "6.2.4")]


def _mm(v: str) -> str:
    return ".".join(v.split(".")[:2])


def _text(form: str, k: int, consistent: bool = False) -> str:
    tv, hip, skew, ok = PAIRS[k]
    return "\n".join(FORMS[form](tv, hip, ok if consistent else skew) + ERR) + "\n"


CASES = [(f, k) for f in FORMS for k in range(len(PAIRS))]


@pytest.mark.parametrize("form,k", CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_the_form_gives_both_versions(form, k):
    tv, hip, skew, ok = PAIRS[k]
    facts = parse_report(_text(form, k), "t")
    rocm = {_mm(r.get("version")) for r in facts.table("runtimes") if r.get("name") == "rocm"}
    builds = {(r.get("version"), _mm(r.get("hip") or "")) for r in facts.table("framework_builds") if r.get("version")}
    assert rocm == {_mm(skew)}, facts.rows
    assert builds == {(tv, _mm(hip))}, facts.rows


@pytest.mark.parametrize("form,k", CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_diagnose_ranks_the_skew_first_and_check_fails_rtm021(form, k):
    tv, hip, skew, ok = PAIRS[k]
    text = _text(form, k)
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    top = r.json()["diagnoses"][0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], top
    said = " ".join(f["text"] + " " + f.get("source", "") for f in top["facts"] if f.get("check") == "RTM021")
    assert f"HIP {_mm(hip)}" in said and f"rocm {skew}" in said and "line " in said, said
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


@pytest.mark.parametrize("form,k", CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_the_consistent_twin_is_no_skew(form, k):
    text = _text(form, k, consistent=True)
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags), [(d["cause"], d["checks"]) for d in diags]
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert {f["outcome"] for f in doc["findings"] if f["code"] == "RTM021"} == {"passed"}


@pytest.mark.parametrize("text", [
    # a tuple nobody says torch printed (no torch command just above it)
    "versions seen in the wild:\n\n\n('2.3.0.dev20240215+rocm5.7', '5.7.31921-d1770ee1b')\n",
    # another package's pip show
    "pip show torchvision -> Version: 0.18.0.dev20240215+rocm5.7\n",
    # a value that is no single version
    "torch_version: 2.3.0+rocm5.7 or 2.3.0+rocm6.0\n",
])
def test_look_alikes_give_no_torch_build(text):
    try:
        facts = parse_report(text + "ROCm 5.6.1 installed.\n", "t")  # a stated release: the text is read
    except ValueError as e:  # nothing recognisable at all
        pytest.fail(f"the stated release was not read either: {e}")
    assert [r for r in facts.table("runtimes") if r.get("name") == "rocm"], facts.rows
    assert not [r for r in facts.table("framework_builds") if r.get("version")], facts.rows


@pytest.mark.parametrize("label,kind", [
    ("rocm_version", "rocm"), ("torch_version", "torch"), ("torch-version", "torch"),
    ("nvidia_driver_version", "nvidia-driver"), ("huggingface_hub", "package:huggingface-hub"),
    ("pytorch-triton-rocm", "package:pytorch-triton-rocm"),
    # a bare CUDA version stays ambiguous in any spelling; words that name nothing known stay nothing
    ("cuda_version", None), ("rocm_path", None), ("torch_cuda_arch_list", None), ("rocm version notes", None),
])
def test_snake_and_kebab_keys_name_what_their_words_do(label, kind):
    assert label_kind(label) == kind
