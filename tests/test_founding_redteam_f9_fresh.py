"""Day 9 (f9), issue 9: a second red-team batch of founding-incident forms (tests/founding_redteam_fresh.py), written
after the first batch's fixes landed in the branch and run once before any fix aimed at them: the honest measure of
how far those fixes generalise.  11 of 22 passed then (10 of 22 on the tree before any of f9's fixes).

Same contract as test_founding_redteam_f9: the skew ranked first with both versions and where each was read,
``check --from`` failing RTM021; the consistent twin (ROCm 5.7.1) compared and passing."""
from __future__ import annotations

import pytest

from conftest import run_cli
from founding_redteam_forms import HIP, SKEW_SYS, TORCH, TWIN_SYS, _mm
from founding_redteam_fresh import FRESH, SOURCES

# failed when first run (after the first batch's fixes, before any fix aimed at these forms)
FRESH_FAILED_FIRST = {
    "dpkg-query-w", "dpkg-s-grep-version", "zypper-search", "chinese-no-space", "korean", "french", "buildkit-from",
    "podman-pull", "dist-info-path", "terminal-hard-wrap", "shorthand-only",
}
# still failing after the fixes that followed, and why
STILL_FAILING: dict[str, str] = {
    "terminal-hard-wrap": "the terminal wrapped the line inside the version (torch-2.3.0.dev2024 / 0215+rocm5.7): no "
                          "reader joins a version across a hard wrap",
    "shorthand-only": "'rocm 5.6.1 + torch nightly (...)': the release opens the line but is followed by more words, "
                      "so it is not read as a field, and nothing else says it is the system's",
}


def _params():
    for name in FRESH:
        marks = [pytest.mark.xfail(strict=True, reason=STILL_FAILING[name])] if name in STILL_FAILING else []
        yield pytest.param(name, marks=marks, id=name)


def test_every_fresh_form_names_its_upstream_format():
    assert set(SOURCES) == set(FRESH)


@pytest.mark.parametrize("name", list(_params()))
def test_the_skew_is_ranked_first_and_check_fails_rtm021(name):
    text = FRESH[name](TORCH, HIP, SKEW_SYS) + "\n"
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    assert r.code == 1, r.err
    diags = r.json()["diagnoses"]
    top = diags[0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], [(d["cause"], d["checks"]) for d in diags]
    facts = [f for f in top["facts"] if f.get("check") == "RTM021"]
    said = " ".join(f["text"] + " " + f.get("source", "") for f in facts)
    assert "HIP 5.7" in said and (f"rocm {_mm(SKEW_SYS)}" in said or f"hip-runtime {_mm(SKEW_SYS)}" in said), said
    assert all("line " in f.get("source", "") or "(" in f.get("source", "") for f in facts), facts
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


@pytest.mark.parametrize("name", list(_params()))
def test_the_consistent_twin_is_compared_and_no_skew(name):
    text = FRESH[name](TORCH, HIP, TWIN_SYS) + "\n"
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags), [(d["cause"], d["checks"]) for d in diags]
    r = run_cli(["check", "--from", "-", "--format", "json"], stdin=text)
    assert r.code in (0, 1), r.err
    codes = {f["code"]: f["outcome"] for f in r.json()["findings"] if f["code"] == "RTM021"}
    assert codes == {"RTM021": "passed"}, codes


# ---- look-alikes of the mechanisms the fresh batch led to
from gpuvet.probes.pasted import clean, parse_report  # noqa: E402
from gpuvet.probes.prose import parse_prose  # noqa: E402
from gpuvet.probes.transcripts import parse_transcripts  # noqa: E402


def _rows(text: str):
    try:
        return parse_report(text, "t").rows
    except ValueError:
        return []


def _rocm(rows) -> set[str]:
    return {str(r.get("version")) for r in rows if r.table == "runtimes" and r.get("name") == "rocm"}


def _torch(rows) -> set[str]:
    return {str(r.get("version")) for r in rows if r.table == "framework_builds" and r.get("version")}


def test_buildkit_steps_are_unstamped_and_issue_references_are_not():
    log = "#5 [1/4] FROM docker.io/rocm/dev-ubuntu-22.04:5.6.1\n#7 12.345 Collecting torch\n#7 DONE 412.3s\n"
    assert clean(log) == "[1/4] FROM docker.io/rocm/dev-ubuntu-22.04:5.6.1\nCollecting torch\nDONE 412.3s\n"
    refs = "#123 fixed it for me\n#124 same here\n"
    assert clean(refs) == refs  # no BuildKit step: GitHub references stay


def test_cjk_text_gets_a_space_between_scripts_and_keeps_its_lines():
    assert clean("显卡是MI210，ROCm版本5.6.1\nnext\n") == "显卡是 MI210,ROCm 版本 5.6.1\nnext\n"


@pytest.mark.parametrize("text,expected", [
    ("rocm-core\t5.6.1.50601-93~22.04\n", {"5.6.1"}),
    ("rocm-core\tinstalled\n", set()),
    ("v  | rocm-core | package | 6.0.2.60002-sles155.115 | x86_64 | rocm\n", set()),  # available, not installed
    ("i+ | rocm-core | package | 5.6.1.50601-sles155.93 | x86_64 | rocm\n", {"5.6.1"}),
    ("$ dpkg -s rocm-core | grep Version\ndpkg-query: package 'rocm-core' is not installed\n", set()),
    ("$ apt show rocm-core | grep Version\nVersion: 6.0.2.60002-115~22.04\n", set()),  # apt show: the candidate
    ("$ rpm -qi rocm-core | grep Version\nVersion     : 5.6.1.50601\n", {"5.6.1"}),
    ("# dpkg -s rocm-core | grep Version\nVersion: 5.6.1.50601-93~22.04\n", set()),  # commented out
])
def test_package_queries(text, expected):
    assert _rocm(parse_transcripts(text, "t")) == expected


@pytest.mark.parametrize("text,expected", [
    ("Trying to pull docker.io/rocm/dev-ubuntu-22.04:5.6.1...\n", {"5.6.1"}),
    ("FROM docker.io/rocm/dev-ubuntu-22.04:5.6.1@sha256:7e1a4b9c2d3f\n", {"5.6.1"}),
    ("FROM rocm/dev-ubuntu-22.04:latest@sha256:7e1a4b9c2d3f\n", set()),
    ("see rocm/dev-ubuntu-22.04:5.6.1.2 for details\n", set()),  # no such tag shape: a longer number
])
def test_container_tags_with_digests_and_pull_ellipses(text, expected):
    assert _rocm(_rows(text)) == expected


@pytest.mark.parametrize("text", [
    "ROCm 버전 5.7 또는 6.0\n",                 # Korean "or"
    "Version de ROCm : 5.7 ou 6.0\n",           # French "or"
    "The version of ROCm: 5.7 and 6.0 both fail\n",
])
def test_more_languages_naming_two_releases_give_no_system_fact(text):
    assert not _rocm(parse_prose(clean(text), "t"))


def test_another_packages_dist_info_is_no_torch_build():
    assert not _torch(_rows("torchvision-0.18.0.dev20240215+rocm5.7.dist-info\n"))
    assert _torch(_rows("torch-2.3.0.dev20240215+rocm5.7.dist-info\n")) == {"2.3.0.dev20240215+rocm5.7"}
