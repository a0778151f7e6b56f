"""Format gate for the new incident set (bench/incidents-new: real bug threads that are in neither the dev set nor
bench/incidents-heldout, split by thread URL into a tuning half and a frozen half).  Data only: nothing here runs
gpuvet, so the frozen half stays unscored."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from gpuvet.model.taxonomy import CAUSES, COMPONENTS, LABELS

NEW = ROOT / "bench" / "incidents-new"
HALVES = ("tuning", "frozen")
CASES = sorted(p for h in HALVES for p in (NEW / h).glob("*.yaml"))
# the taxonomy of ../shared/benchmarks/incidents/CASE_FORMAT.md
TAXONOMY = LABELS  # gpuvet.model.taxonomy: the causes plus none
KEYS = {"id", "source", "platform", "gpu", "inputs", "label", "confidence"}
LABEL_KEYS = {"cause", "component", "detail", "fix", "evidence_in_inputs"}


def _load(p: Path) -> dict:
    return yaml.safe_load(p.read_text(encoding="utf-8"))


def _sources(d: Path) -> set[str]:
    return {_thread(_load(p)["source"]) for p in d.glob("*.yaml")} if d.is_dir() else set()


# one GitHub thread can be cited under renamed orgs/repos (RadeonOpenCompute/ROCm -> ROCm/ROCm ->
# ROCm/legacy-rocm-build, ROCmSoftwarePlatform/*, ROCm-Developer-Tools/* -> ROCm/*) and as issues/N or pull/N
_ALIASES = (("radeonopencompute/rocm/", "rocm/legacy-rocm-build/"), ("/rocm/rocm/", "/rocm/legacy-rocm-build/"),
            ("rocmsoftwareplatform/", "rocm/"), ("rocm-developer-tools/", "rocm/"), ("radeonopencompute/", "rocm/"))


def _thread(url: str) -> str:
    key = url.strip().rstrip("/").lower()
    for old, new in _ALIASES:
        key = key.replace(old, new)
    return re.sub(r"/(?:issues|pull)/(\d+)$", r"/thread/\1", key)


def half_of(source: str) -> str:  # the split rule of bench/incidents-new/README.md
    return "tuning" if hashlib.sha256(source.encode("utf-8")).digest()[0] % 2 == 0 else "frozen"


def test_taxonomy_is_the_case_format_one():
    assert set(TAXONOMY) == set(CAUSES) | {"none"}


def test_enough_cases_both_halves_and_rocm_share():
    assert len(CASES) >= 40
    per_half = {h: len(list((NEW / h).glob("*.yaml"))) for h in HALVES}
    assert min(per_half.values()) >= 0.35 * len(CASES), per_half
    rocm = sum(_load(p)["platform"] == "rocm" for p in CASES)
    assert rocm >= 0.4 * len(CASES), (rocm, len(CASES))
    assert any(_load(p)["label"]["cause"] == "none" for p in CASES)


@pytest.mark.parametrize("half", HALVES)
def test_ids_numbered_per_half(half):
    ids = sorted(p.stem for p in (NEW / half).glob("*.yaml"))
    assert ids == [f"new-{half[0]}{i:04d}" for i in range(1, len(ids) + 1)]


def test_cases_well_formed():
    for p in CASES:
        c = _load(p)
        assert set(c) - {"gpu"} <= KEYS and KEYS - {"gpu"} <= set(c), p.name
        assert c["id"] == p.stem, p.name
        assert c["platform"] in ("rocm", "cuda"), p.name
        assert c["confidence"] in ("confirmed", "likely"), p.name
        lab = c["label"]
        assert set(lab) == LABEL_KEYS, p.name
        assert lab["cause"] in TAXONOMY, (p.name, lab["cause"])
        assert lab["component"] in COMPONENTS, (p.name, lab["component"])
        assert all(isinstance(lab[k], str) and len(lab[k].strip()) >= 10 for k in ("detail", "fix")), p.name
        assert set(c["inputs"]) <= {"log", "env"} and c["inputs"].get("log"), p.name
        assert 1 <= len(c["inputs"]["log"].strip().splitlines()) <= 60, p.name
        assert re.fullmatch(r"https://[\w.-]+/\S+", c["source"]), p.name


def test_split_by_thread_url():
    for p in CASES:
        assert p.parent.name == half_of(_load(p)["source"]), p.name


def test_sources_unique_and_new():
    seen: dict[str, str] = {}
    for p in CASES:
        src = _load(p)["source"].rstrip("/")
        assert "#" not in src, p.name
        key = _thread(src)
        assert key not in seen, (p.name, seen.get(key))
        seen[key] = p.name
    old = _sources(ROOT / "bench" / "incidents-heldout") | _sources(ROOT.parent / "shared" / "benchmarks"
                                                                      / "incidents" / "dev")
    assert len(old) >= 100 or not (ROOT.parent / "shared").is_dir()
    assert not set(seen) & old, sorted(set(seen) & old)


def test_thread_key_folds_renamed_orgs_and_issue_pull():
    assert _thread("https://github.com/RadeonOpenCompute/ROCm/issues/1214") == \
        _thread("https://github.com/ROCm/legacy-rocm-build/issues/1214/") == \
        _thread("https://github.com/ROCm/ROCm/pull/1214")
    assert _thread("https://github.com/ROCmSoftwarePlatform/MIOpen/issues/87") == \
        _thread("https://github.com/ROCm/MIOpen/issues/87")
    assert _thread("https://github.com/pytorch/pytorch/issues/1") != _thread("https://github.com/pytorch/vision/issues/1")
