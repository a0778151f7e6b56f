"""`gpuvet check --format json` as run on the real NVIDIA H200 machine (tests/fixtures/real/h200-gpuvet,
captured by bench/h200/run.sh), checked against what torch itself reported there."""
import json

import pytest

from conftest import REAL, run_cli
from gpuvet import kb as KB
from gpuvet.checks.registry import all_checks
from gpuvet.app.engine import run_checks
from gpuvet.model import Facts, Outcome, Severity

D = REAL / "h200-gpuvet"


@pytest.fixture(scope="module")
def doc():
    return json.loads((D / "check.json").read_text())


def test_gpu_driver_and_cuda(doc):
    f = doc["facts"]
    gpu = f["gpu_devices"][0]
    assert gpu["name"] == "NVIDIA H200" and gpu["arch"] == "sm_90" and gpu["memory_mib"] == 143771
    drv = {r["component"]: r for r in f["drivers"] if r["vendor"] == "nvidia"}
    assert drv["kernel-module"]["version"] == drv["user-space"]["version"] == "580.159.04"
    assert drv["user-space"]["cuda_version"] == "13.0" and drv["kernel-module"]["flavor"] == "open"


def test_torch_build_and_targets_equal_torch_get_arch_list(doc):
    torch = [r for r in doc["facts"]["framework_builds"] if r["name"] == "torch"][0]
    assert torch["version"] == "2.11.0+cu130" and torch["cuda"] == "13.0" and torch["channel"] == "stable"
    # torch.cuda.get_arch_list() on that machine (tests/fixtures/real/h200-cuda13/torch.txt)
    assert torch["targets"] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert "sm_90" in torch["targets"]


def test_cudnn_torch_really_loads(doc):
    """collect_env names the system cuDNN 9.14; torch loads the pip wheel's 9.19 through its RPATH
    (torch.backends.cudnn.version() == 91900 there, and /proc/self/maps showed the pip path:
    tests/test_gpu_live.py passed on the H200, see pytest-gpu.txt)."""
    cudnn = [r for r in doc["facts"]["libraries"] if r["name"] == "cudnn"]
    loaded = [r for r in cudnn if r["selected"]]
    assert len(loaded) == 1
    assert loaded[0]["version"].startswith("9.19") and loaded[0]["origin"] == "pip"
    assert loaded[0]["path"].endswith("site-packages/nvidia/cudnn/lib/libcudnn.so.9")
    shadowed = [r for r in cudnn if not r["selected"]]
    assert [r["version"] for r in shadowed] == ["9.14.0"]
    assert "3 passed" in (D / "pytest-gpu.txt").read_text()


def test_checks_on_the_h200_facts(doc):
    facts = Facts.from_dict(doc["facts"], doc["probe_errors"])
    found = run_checks(facts, all_checks(), KB.load())
    failed = sorted((f.code, f.title.split(":")[0]) for f in found if f.outcome is Outcome.FAILED)
    # the two real shadowed copies on that machine (information now: nothing loads them), nothing else wrong
    assert failed == [("BLD045", "NCCL"), ("BLD045", "cuDNN")]
    assert all(f.severity is Severity.INFO for f in found if f.outcome is Outcome.FAILED)
    by = {f.code: f.outcome for f in found}
    for code in ("DRV001", "DRV002", "DRV004", "BLD040", "BLD041", "BLD042", "BLD046", "EXT003", "PKG100"):
        assert by[code] is Outcome.PASSED, code
    # this capture predates the host-compiler and extension probes: only their rules are "not collected"
    newer = {"host_compilers", "extensions"}
    assert all(set(c.tables) & newer for c in all_checks()
               if c.code in {f.code for f in found if f.outcome is Outcome.UNKNOWN})


def test_recommend_there_names_an_installed_working_build():
    rec = json.loads((D / "recommend.json").read_text())
    text = json.dumps(rec)
    assert "cu130" in text and "download.pytorch.org/whl/cu130" in text


def test_real_hang_bundle_has_a_native_backtrace():
    """A hang past --timeout under `gpuvet run` on the H200: stopped, bundle with cuda-gdb's backtrace."""
    assert "still running after the timeout" in (D / "runs" / "hang-gpuvet-run.txt").read_text()
    bt = (D / "runs" / "hang-backtrace.txt").read_text()
    assert bt.startswith("$ cuda-gdb -p ") and "clock_nanosleep" in bt


def test_diagnoses_made_there():
    """What `gpuvet diagnose` said on the machine itself (with its live facts beside the text)."""
    got = {n: [d["cause"] for d in json.loads((D / "runs" / f"{n}-diagnosis.json").read_text())["diagnoses"]]
           for n in ("oom", "assert", "hang")}
    assert got["oom"][0] == "memory-allocator" and got["assert"] == [] and got["hang"] == []


@pytest.mark.parametrize("name,cause", [("oom", "memory-allocator"), ("assert", None)])
def test_real_failures_diagnosed(name, cause):
    """Real failures run under `gpuvet run` on the H200: a 200 GiB allocation, a user-code index out of
    range (device-side assert: blame nothing)."""
    r = run_cli(["diagnose", "--format", "json", str(D / "runs" / f"{name}-output.log")])
    causes = [d["cause"] for d in r.json()["diagnoses"]]
    if cause is None:
        assert causes == []
    else:
        assert causes[0] == cause
