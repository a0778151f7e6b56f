"""KB fixes of issue 9: a second ROCm wheel line per release (test-infra's build matrix), short GPU names,
and GPU-specific known issues that do not make a GPU-less description unknown."""
from __future__ import annotations

import pytest

from conftest import run_cli
from gpuvet import kb
from gpuvet.kb import query as q


@pytest.mark.parametrize("release, rocm", [("2.2", "5.6"), ("2.3", "5.7"), ("2.4", "6.0"), ("2.4", "6.1"),
                                           ("2.10", "7.0"), ("2.10", "7.1"), ("2.11", "7.1"), ("2.13", "7.1")])
def test_release_ships_both_rocm_lines(release, rocm):
    r = q.torch_release(kb.load(), release)
    assert q.find_variant(r, rocm=rocm) is not None


def test_newest_stable_for_rocm():
    rel, var = q.newest_with_rocm(kb.load(), "5.6")
    assert rel.version == "2.2" and var.index_url.endswith("/rocm5.6")


@pytest.mark.parametrize("name, arch", [("RX 7900 XTX", "gfx1100"), ("rx 7900 xtx", "gfx1100"),
                                        ("Radeon RX 7900 XTX", "gfx1100"), ("MI210", "gfx90a"),
                                        ("7900 XTX", "gfx1100"), ("7900xtx", None), ("RTX 4090", "sm_89")])
def test_short_gpu_names_resolve(name, arch):
    g = q.resolve_gpu(kb.load(), name)
    assert (g.arch if g else None) == arch


def test_core_name_resolves_only_when_unambiguous():
    # 'Radeon RX 7900 XTX' typed without its series word; a core name two architectures share names neither
    kb_ = kb.load()
    assert q._core_name(q._short_name(q._norm_name("AMD Radeon RX 7900 XTX"))) == "7900 xtx"
    assert q._core_name(q._short_name(q._norm_name("GeForce RTX 4090"))) == ""
    cores: dict[str, set[str]] = {}
    for e in kb_.table("gpu_models"):
        for a in e.get("names", []):
            c = q._core_name(q._short_name(q._norm_name(a)))
            if c:
                cores.setdefault(c, set()).add(e["arch"])
    for c, arches in cores.items():
        g = q.resolve_gpu(kb_, c)
        if len(arches) > 1:
            assert g is None or g.arch in arches, c
        else:
            assert g is not None and g.arch in arches, c


def test_bare_number_does_not_resolve():
    assert q.resolve_gpu(kb.load(), "4090") is None


def test_gpu_specific_known_issue_does_not_make_gpu_less_description_unknown():
    doc = run_cli(["compat", "--torch", "2.9.1", "--rocm", "6.4", "--format", "json"]).json()
    bld106 = next(f for f in doc["findings"] if f["code"] == "BLD106")
    assert bld106["outcome"] == "passed" and "GPU-specific" in bld106["title"]
    doc = run_cli(["compat", "--torch", "2.9.1", "--rocm", "6.4", "--gpu", "gfx906", "--format", "json"]).json()
    assert next(f for f in doc["findings"] if f["code"] == "BLD106")["outcome"] == "failed"


def _rocm_lines():
    out = []
    for r in q.torch_releases(kb.load()):
        for v in r.variants:
            if v.kind == "rocm" and v.version:
                out.append((r.latest or r.version, v.version, v.arch is not None))
    return out


@pytest.mark.parametrize("torch, rocm, has_arch", _rocm_lines())
def test_gpu_less_description_is_not_unknown_for_want_of_an_arch_list(torch, rocm, has_arch):
    """Which GPU targets a wheel line carries only matters for a GPU: a description naming none is judged on
    what it names (issue 9), never 'not known' because the KB lacks that line's arch list."""
    doc = run_cli(["compat", "--torch", torch, "--rocm", rocm, "--format", "json"]).json()
    reasons = " ".join(doc.get("verdict_reasons", []))
    assert "arch list" not in reasons, (doc["verdict"], reasons)
    assert doc["verdict"] != "unknown" or reasons, doc


def test_a_named_gpu_still_needs_the_arch_list():
    lines = [(t, r) for t, r, has in _rocm_lines() if not has]
    if not lines:
        pytest.skip("every ROCm wheel line of the KB has its arch list")
    torch, rocm = lines[0]
    doc = run_cli(["compat", "--torch", torch, "--rocm", rocm, "--gpu", "MI210", "--format", "json"]).json()
    assert doc["verdict"] == "unknown" and "arch list" in " ".join(doc["verdict_reasons"]), doc["verdict_reasons"]


@pytest.mark.parametrize("tv, outcome", [("0.29.0", "failed"), ("0.29.1", "passed")])
def test_torchvision_pin_of_2_14_1(tv, outcome):
    """torchvision 0.29.0's wheel requires torch==2.14.0, so it refuses the latest 2.14 patch; 0.29.1 admits it
    (both wheels' METADATA).  Same minor release, so only the exact pin can tell."""
    doc = run_cli(["compat", "--torch", "2.14.1", "--cuda", "13.0", "--package", f"torchvision=={tv}",
                   "--format", "json"]).json()
    f = next(f for f in doc["findings"] if f["code"] == "PKG100")
    assert f["outcome"] == outcome, f
    if outcome == "failed":
        assert "torch==2.14.0" in f["title"] and "0.29.1" in " ".join(x["text"] for x in f["fixes"]), f
    pasted = run_cli(["check", "--from", "-", "--format", "json"],
                     stdin=f"Package     Version\n----------- -------\ntorch       2.14.1+cu130\n"
                           f"torchvision {tv}+cu130\n").json()
    assert next(f for f in pasted["findings"] if f["code"] == "PKG100")["outcome"] == outcome
