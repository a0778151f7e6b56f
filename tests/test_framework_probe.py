"""probes/framework.py: torch/jax/tensorflow builds read without importing them."""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from gpuvet.probes import elf, framework
from gpuvet.probes.base import run_probes
from gpuvet.probes.system import System
from fakes import FakeSystem

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
needs_cc = pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")


@pytest.fixture(autouse=True)
def _fresh_cache():
    elf.clear_cache()
    yield
    elf.clear_cache()


# -- version.py -------------------------------------------------------------------------------------
def test_parse_h200_version_py():
    [r] = framework.parse_torch_version_py(elfbuild.h200_version_py(), "torch/version.py", "/x/torch")
    assert r.table == "framework_builds"
    assert r["version"] == "2.11.0+cu130" and r["cuda"] == "13.0" and r["hip"] == ""
    assert r["git_version"] == "70d99e998b4955e0049d13a98d77ae1b14db1f45"
    assert r["debug"] is False and r["channel"] == "stable" and r["variant"] == "cuda" and r["path"] == "/x/torch"


def test_parse_debian_cpu_version_py():
    text = (REAL / "debian12-cpu-rocm52" / "torch-version-py.txt").read_text()
    [r] = framework.parse_torch_version_py(text, "pasted")
    assert (r["version"], r["cuda"], r["variant"], r["channel"]) == ("2.13.0+cpu", "", "cpu", "stable")


def test_parse_rocm_and_truncated_version_py():
    text = ("__version__ = '2.5.1+rocm6.2'\ndebug = False\ncuda: Optional[str] = None\n"
            "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = '6.2.41133-dd7f95766'\n")
    [r] = framework.parse_torch_version_py(text, "x")
    assert (r["variant"], r["hip"], r["cuda"]) == ("rocm", "6.2.41133-dd7f95766", "")
    [r] = framework.parse_torch_version_py("__version__ = '2.6.0.dev20241101+cu124'\ncuda = '12.4'\nhip = Non", "x")
    assert (r["version"], r["channel"], r["variant"]) == ("2.6.0.dev20241101+cu124", "nightly", "cuda")
    assert framework.parse_torch_version_py("nothing here", "x") == []


@pytest.mark.parametrize("version,channel", [
    ("2.11.0+cu130", "stable"), ("2.6.0.dev20241101+cu124", "nightly"), ("2.6.0rc1", "prerelease"),
    ("0.5.0b1", "prerelease"), ("2.6.0a0+ecf3bae40a.nv25.01", "source"), ("2.4.0a0+git1c6f2c1", "source"),
    ("2.1.0a0", "prerelease"), ("not a version", "source")])
def test_channel(version, channel):
    assert framework.channel_of(version) == channel


@pytest.mark.parametrize("version,cuda,hip,xpu,variant", [
    ("2.13.0+cpu", None, None, None, "cpu"), ("2.13.0", "13.0", None, None, "cuda"),
    ("2.5.1+rocm6.2", None, None, None, "rocm"), ("2.7.0+xpu", None, None, "20250101", "xpu"),
    ("2.7.0+cu128", None, None, None, "cuda"), ("2.7.0", None, None, None, "cpu")])
def test_variant(version, cuda, hip, xpu, variant):
    assert framework.variant_of(version, cuda, hip, xpu) == variant


# -- live, on the torch 2.13.0 CPU build installed in the test venv ----------------------------------------
def _installed_torch_version_py() -> str:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return ""
    import os

    try:
        with open(os.path.join(list(spec.submodule_search_locations)[0], "version.py")) as fh:
            return fh.read()
    except OSError:
        return ""


@pytest.mark.skipif("+cpu'" not in _installed_torch_version_py(),
                    reason="needs the CPU build of torch (pip install torch==2.13.0); a CUDA build is checked "
                           "live by tests/test_gpu_live.py")
def test_live_cpu_torch():
    t = time.perf_counter()
    rows = list(framework.probe_frameworks(System(), None))
    elapsed = time.perf_counter() - t
    torch = [r for r in rows if r.table == "framework_builds" and r["name"] == "torch"]
    assert len(torch) == 1
    r = torch[0]
    assert r["version"].startswith("2.13.0") and r["version"].endswith("+cpu")
    assert r["variant"] == "cpu" and r["targets"] == [] and r["cuda"] == "" and r["hip"] == ""
    assert "no libtorch_cuda.so" in r["targets_source"]
    assert not [r for r in rows if r.table in ("libraries", "shared_libraries")]
    assert "torch" not in sys.modules or sys.modules["torch"] is None  # never imported
    assert elapsed < 1.0


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_live_probe_through_runner():
    facts = run_probes(System(), framework.PROBES, deadline=10)
    assert not facts.errors
    assert facts.status("framework_builds") == "ok"
    assert facts.status("libraries") in ("empty", "ok")


# -- the H200 as a FakeSystem -------------------------------------------------------------------------
@needs_cc
def test_h200_torch_build(tmp_path):
    fake = elfbuild.h200_system(tmp_path)
    t = time.perf_counter()
    rows = list(framework._probe(fake))
    elapsed = time.perf_counter() - t
    [b] = [r for r in rows if r.table == "framework_builds"]
    assert b["version"] == "2.11.0+cu130" and b["cuda"] == "13.0" and b["variant"] == "cuda"
    assert b["targets"] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert "sm_90a (4)" in b["targets_source"] and "sm_100a (59)" in b["targets_source"]
    loaded = {r["name"]: r["version"] for r in rows if r.table == "libraries" and r["selected"]}
    assert loaded["cudnn"] == "9.19.0.56" and loaded["nccl"] == "2.28.9"
    shadowed = {r["name"]: r["version"] for r in rows if r.table == "libraries" and not r["selected"]}
    assert shadowed["cudnn"] == "9.14.0"
    assert elapsed < 1.0


@needs_cc
def test_rocm_torch_build(tmp_path):
    ids = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
           "hipv4-amdgcn-amd-amdhsa--gfx942", "hipv4-amdgcn-amd-amdhsa--gfx1100"]
    section = elfbuild.align(elfbuild.offload_bundle(ids)) * 4
    lib = elfbuild.shared_lib(tmp_path, "libtorch_hip.so", needed=("libamdhip64.so", "libMIOpen.so.1"),
                              runpath="$ORIGIN", sections={".hip_fatbin": section})
    site = "/venv/lib/python3.12/site-packages"
    fake = FakeSystem(files={
        f"{site}/torch/version.py": "__version__ = '2.5.1+rocm6.2'\ncuda = None\nhip = '6.2.41133-dd7f95766'\n",
        f"{site}/torch/lib/libtorch_hip.so": lib.read_bytes(),
        f"{site}/torch/lib/libamdhip64.so": b"x", f"{site}/torch/lib/libMIOpen.so.1": b"x",
        "/opt/rocm-6.0.2/lib/libamdhip64.so": b"x", "/opt/rocm-6.0.2/lib/libamdhip64.so.6.0.60002": b"x"},
        env={"LD_LIBRARY_PATH": "/opt/rocm-6.0.2/lib"}, paths=[site])
    rows = list(framework._probe(fake))
    [b] = [r for r in rows if r.table == "framework_builds"]
    assert (b["variant"], b["hip"], b["targets"]) == ("rocm", "6.2.41133-dd7f95766", ["gfx90a", "gfx942", "gfx1100"])
    assert "hip-offload-bundle" in b["targets_source"]
    hip = [r for r in rows if r.table == "libraries" and r["name"] == "amdhip64"]
    sel = [r for r in hip if r["selected"]]
    # RUNPATH comes after LD_LIBRARY_PATH: the /opt/rocm-6.0.2 copy wins over the bundled one
    assert [(r["path"], r["origin"], r["version"]) for r in sel] == [
        ("/opt/rocm-6.0.2/lib/libamdhip64.so", "system", "6.0.60002")]
    assert [r["origin"] for r in hip if not r["selected"]] == ["framework-bundled"]


# -- jax, tensorflow --------------------------------------------------------------------------------
def _dists(site: str, *names: str) -> dict[str, str]:
    return {f"{site}/{n}.dist-info/METADATA": "Metadata-Version: 2.1\n" for n in names}


def test_jax_with_cuda_plugin():
    site = "/s"
    fake = FakeSystem(files=_dists(site, "jax-0.7.2", "jaxlib-0.7.2", "jax_cuda13_plugin-0.7.2",
                                   "jax_cuda13_pjrt-0.7.2"), paths=[site])
    rows = {r["name"]: r for r in framework._probe(fake)}
    assert (rows["jax"]["variant"], rows["jax"]["cuda"], rows["jax"]["version"]) == ("cuda", "13", "0.7.2")
    assert rows["jaxlib"]["variant"] == "cuda"
    assert rows["jax-cuda13-plugin"]["cuda"] == "13" and rows["jax-cuda13-pjrt"]["variant"] == "cuda"
    assert "torch" not in rows


def test_jax_rocm_plugin_and_cpu_jax():
    fake = FakeSystem(files=_dists("/s", "jax-0.4.35", "jaxlib-0.4.35", "jax_rocm60_plugin-0.4.35"), paths=["/s"])
    rows = {r["name"]: r for r in framework._probe(fake)}
    assert (rows["jax"]["variant"], rows["jax"]["hip"]) == ("rocm", "6.0")
    fake = FakeSystem(files=_dists("/s", "jax-0.4.35", "jaxlib-0.4.35"), paths=["/s"])
    rows = {r["name"]: r for r in framework._probe(fake)}
    assert rows["jax"]["variant"] == "cpu" and rows["jaxlib"]["variant"] == "cpu"
    fake = FakeSystem(files=_dists("/s", "jaxlib-0.4.20+cuda12.cudnn89"), paths=["/s"])
    [r] = list(framework._probe(fake))
    assert (r["variant"], r["cuda"]) == ("cuda", "12")


def test_tensorflow_build_info():
    info = ("build_info = {'cpu_compiler': '/usr/lib/llvm-17/bin/clang', 'cuda_compute_capabilities': ['sm_60'], "
            "'cuda_version': '12.3', 'cudnn_version': '8', 'is_cuda_build': True, 'is_rocm_build': False, "
            "'is_tensorrt_build': False}\n")
    fake = FakeSystem(files={**_dists("/s", "tensorflow-2.18.0"),
                             "/s/tensorflow/python/platform/build_info.py": info}, paths=["/s"])
    [r] = list(framework._probe(fake))
    assert (r["name"], r["version"], r["variant"], r["cuda"]) == ("tensorflow", "2.18.0", "cuda", "12.3")
    fake = FakeSystem(files=_dists("/s", "tensorflow_cpu-2.18.0"), paths=["/s"])
    [r] = list(framework._probe(fake))
    assert r["variant"] == "cpu"


def test_first_path_entry_wins_and_metadata_fallback():
    fake = FakeSystem(files={
        "/a/torch/__init__.py": "", "/a/torch-2.4.0.dist-info/METADATA": "Name: torch\nVersion: 2.4.0+cu121\n",
        "/b/torch/version.py": "__version__ = '2.5.0+cpu'\n"}, paths=["/a", "/b"])
    [r] = list(framework._probe(fake))
    assert (r["version"], r["variant"], r["path"]) == ("2.4.0+cu121", "cuda", "/a/torch")
    assert list(framework._probe(FakeSystem(paths=["/nothing"]))) == []


def test_unreadable_gpu_library_gives_reason():
    fake = FakeSystem(files={"/s/torch/version.py": "__version__ = '2.11.0+cu130'\ncuda = '13.0'\n",
                             "/s/torch/lib/libtorch_cuda.so": b"garbage" * 100}, paths=["/s"])
    [r] = list(framework._probe(fake))
    assert r["targets"] == [] and r["targets_source"].startswith("could not read")


# -- the real H200 run (tests/fixtures/elf/h200-probe-capture.txt) ----------------------------------------
def test_h200_capture():
    """What the probe printed on the H200 itself agrees with torch's own answers captured there."""
    import ast as _ast
    import json

    text = (Path(__file__).resolve().parent / "fixtures" / "elf" / "h200-probe-capture.txt").read_text()
    lines = text.splitlines()
    arch_list = _ast.literal_eval(lines[-1])
    rows = [json.loads(line.split(" ", 1)[1].rsplit(" | ", 1)[0]) | {"table": line.split(" ", 1)[0]}
            for line in lines if line.split(" ", 1)[0] in ("framework_builds", "libraries", "shared_libraries")
            and line.split(" ", 1)[1].startswith("{")]
    torch = next(r for r in rows if r["table"] == "framework_builds" and r["name"] == "torch")
    assert torch["targets"] == arch_list == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    cudnn = {r["selected"]: (r["version"], r["origin"]) for r in rows if r["table"] == "libraries" and r["name"] == "cudnn"}
    assert cudnn == {True: ("9.19.0.56", "pip"), False: ("9.14.0", "system")}
    assert "shared_libraries vs ldd mismatches: []" in text
    assert "binary cache == ldconfig -p: True" in text
    counts = _ast.literal_eval(next(line for line in lines if line.startswith("counts ")).split(" ", 1)[1].split(" containers")[0])
    assert counts == elfbuild.h200_fatbin_counts()  # the walker's counts equal cuobjdump's
    first = float(lines[0].split("first probe ")[1].split("s")[0])
    assert first < 1.0
