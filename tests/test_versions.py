"""model/versions.py: the one parser of versions, channels, variants and package names, and the proof that
one build string is classified the same on every path (live probe, pasted report, log)."""
from __future__ import annotations

import pytest

from gpuvet import kb as kbmod
from gpuvet.app.diagnose import diagnose_text
from gpuvet.app.engine import run_checks
from gpuvet.checks.bld import prerelease_framework
from gpuvet.logs.extract import facts_in
from gpuvet.model import Facts, Outcome
from gpuvet.model.versions import (
    Version,
    channel_of,
    cuda_of_local,
    find_version,
    hip_of_local,
    local_tag,
    major_minor,
    normalise_name,
    parse_version,
    pep440,
    release,
    same_release,
    variant_of,
)
from gpuvet.probes import framework
from gpuvet.probes.pasted import parse_report
from fakes import FakeSystem

NGC = "2.6.0a0+ecf3bae40a.nv25.01"  # torch in NVIDIA's NGC PyTorch 25.01 container: built from a commit


def test_parse_version_lenient_and_strict():
    assert parse_version("2.8.0+cu128") == Version("2.8.0+cu128")
    assert parse_version("v2.1") == Version("2.1")
    assert parse_version("6.1.40092-038397aaa") == Version("6.1.40092")
    assert parse_version("") is None and parse_version(None) is None and parse_version("banana") is None
    assert pep440("1.0-custom") is None and pep440("1.0") == Version("1.0")
    assert find_version("NVIDIA driver 580.159.04") == Version("580.159.4")
    assert major_minor("5.7.31921-d1770ee1b") == (5, 7) and major_minor("CUDA 13.0.88") == (13, 0)
    assert major_minor("13") is None
    assert release("v12.4.1.2") == (12, 4, 1) and release("x") is None
    assert same_release("9.1.0", "9.1") and not same_release("9.1.0", "9.2.0") and same_release("?", "9.2")


@pytest.mark.parametrize("version,channel", [
    ("2.11.0+cu130", "stable"), ("2.6.0.dev20241101+cu124", "nightly"), ("2.6.0rc1", "prerelease"),
    ("0.5.0b1", "prerelease"), (NGC, "source"), ("2.4.0a0+git1c6f2c1", "source"), ("2.1.0a0", "prerelease"),
    ("2.1.0.dev0", "source"), ("not a version", "source")])
def test_channel(version, channel):
    assert channel_of(version) == channel


@pytest.mark.parametrize("version,kw,variant", [
    ("2.8.0+cu128", {}, "cuda"), ("2.5.1+rocm6.2", {}, "rocm"), ("2.8.0+xpu", {}, "xpu"), ("2.8.0+cpu", {}, "cpu"),
    ("2.8.0", {}, "cpu"), ("2.8.0", {"default": ""}, ""), ("2.8.0+cpu", {"default": ""}, "cpu"),
    (NGC, {"cuda": "12.8"}, "cuda"), ("2.5.1", {"hip": "6.2.41133"}, "rocm")])
def test_variant(version, kw, variant):
    assert variant_of(version, **kw) == variant


def test_local_labels_and_names():
    assert local_tag("2.8.0+cu128") == "cu128" and local_tag("2.8.0") == ""
    assert cuda_of_local("2.8.0+cu128") == "12.8" and cuda_of_local("2.8.0+cu118") == "11.8"
    assert cuda_of_local("2.8.0+cpu") == "" and hip_of_local("2.5.1+rocm6.2") == "6.2"
    assert normalise_name("PyTorch_Triton.ROCm") == "pytorch-triton-rocm"
    assert normalise_name(" nvidia-cudnn-cu12 ") == "nvidia-cudnn-cu12"


# -- one build, three paths: the same channel, variant and BLD043 outcome ---------------------------
def _torch_row(facts: Facts):
    [b] = [r for r in facts.table("framework_builds") if r.get("version")]
    return b


def _live() -> Facts:
    site = "/venv/lib/python3.12/site-packages"
    fake = FakeSystem(files={f"{site}/torch/version.py": f"__version__ = '{NGC}'\ncuda = '12.8'\nhip = None\n"},
                      paths=[site])
    facts = Facts(origin="live")
    facts.add(list(framework._probe(fake)))
    return facts


def _pasted() -> Facts:
    text = (f"Collecting environment information...\nPyTorch version: {NGC}\nIs debug build: False\n"
            "CUDA used to build PyTorch: 12.8\nROCM used to build PyTorch: N/A\n")
    return parse_report(text, "pasted")


def _log() -> Facts:
    facts = Facts(origin="pasted")
    facts.add(facts_in(f"torch=={NGC}", 7))
    return facts


@pytest.mark.parametrize("path", [_live, _pasted, _log], ids=["live", "pasted", "log"])
def test_ngc_build_is_a_source_build_on_every_path(path):
    b = _torch_row(path())
    assert b["version"] == NGC
    assert b["channel"] == "source"
    [f] = run_checks(path(), [prerelease_framework], kbmod.load())
    assert f.outcome is Outcome.PASSED, f.title  # BLD043 never fires on an NGC build, whatever the path


def test_ngc_build_in_a_diagnosed_log_is_not_blamed_as_prerelease():
    report = diagnose_text(f"[pip3] torch=={NGC}\nRuntimeError: CUDA error: out of memory\n")
    assert not [f for f in report.findings if f.code == "BLD043"]
    assert "BLD043" not in report.extra["scan"]["check_findings"]


def test_variant_agrees_between_live_and_pasted():
    assert _torch_row(_live())["variant"] == _torch_row(_pasted())["variant"] == "cuda"


# -- row identity keys (model/facts.py KEYS) ----------------------------------------------------------
def test_every_fact_table_declares_identity_columns_it_has():
    from gpuvet.model.facts import KEYS, TABLES

    assert set(KEYS) == set(TABLES)
    for name, spec in TABLES.items():
        assert set(spec.key) <= set(spec.column_names), name


def test_row_identity_tells_two_gpus_apart_and_matches_one_across_reports():
    from gpuvet.model import row

    a = row("gpu_devices", "nvidia-smi", vendor="nvidia", index=0, name="H200", arch="sm_90", pci_bus="0:1")
    b = row("gpu_devices", "nvidia-smi", vendor="nvidia", index=1, name="H200", arch="sm_90", pci_bus="0:2")
    a_later = row("gpu_devices", "pasted", vendor="nvidia", index=0, name="NVIDIA H200", arch="sm_90", pci_bus="0:1")
    assert a.identity() != b.identity() and a.identity() == a_later.identity()
    p1 = row("packages", "pip", name="torch", version="2.8.0", location="pip")
    p2 = row("packages", "pip", name="torch", version="2.9.0", location="pip")
    assert p1.identity() == p2.identity() == ("packages", "torch", "pip")


def test_parse_requirement_agrees_with_packaging_on_every_installed_requires_dist():
    """The light PEP 508 split (no marker grammar imported: check's start-up) gives packaging's own
    name and specifier for every Requires-Dist line of this environment, and rejects what it rejects."""
    import importlib.metadata as md

    from packaging.requirements import InvalidRequirement, Requirement

    from gpuvet.model.versions import parse_requirement

    lines = {line for d in md.distributions() for line in (d.requires or [])}
    lines |= {"torch (>=2.1)", "torch==2.4.0; extra == 'gpu'", "torch[opt]>=2", "torch @ https://h/t.whl",
              "Torch ( >=1.8 , <2 )", "torch>=2;", "1torch", "-torch", "torch ==2.0.*", "torch>=", "torch~=2.1",
              "torch>=2.0,<3 ; python_version >= '3.9'", ""}
    assert len(lines) > 50
    for line in sorted(lines):
        try:
            r = Requirement(line)
            want = (r.name, str(r.specifier))
        except InvalidRequirement:
            want = None
        got = parse_requirement(line)
        assert (got and (got[0], str(got[1]))) == want or (got is None and want is None), line
