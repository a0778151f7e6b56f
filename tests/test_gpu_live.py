"""Live `gpuvet check` on a real NVIDIA GPU, compared with what torch itself reports.

Runs on the H200 machine (bench/h200/run.sh); skipped where there is no NVIDIA GPU or no CUDA torch.
torch is imported only in a child process, to get the ground truth: gpuvet itself never imports it.
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

TRUTH = r"""
import json, torch
torch.backends.cudnn.version()
x = torch.randn(1, 3, 16, 16, device="cuda")
torch.nn.functional.conv2d(x, torch.randn(4, 3, 3, 3, device="cuda"))
torch.cuda.synchronize()
maps = open("/proc/self/maps").read().split("\n")
libs = sorted({l.split()[-1] for l in maps if ".so" in l and ("libcudnn" in l or "libcudart" in l or "libnccl" in l or "libcublas" in l)})
print(json.dumps({"arch_list": torch.cuda.get_arch_list(), "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                  "version": torch.__version__, "cap": list(torch.cuda.get_device_capability(0)), "loaded": libs}))
"""


def _has_cuda_torch() -> bool:
    if not os.path.exists("/dev/nvidiactl"):
        return False
    r = subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"], capture_output=True)
    return r.returncode == 0


@pytest.fixture(scope="module")
def live():
    if not _has_cuda_torch():
        pytest.skip("needs an NVIDIA GPU and a CUDA build of torch (runs on the H200 machine)")
    truth = json.loads(subprocess.run([sys.executable, "-c", TRUTH], capture_output=True, text=True, check=True).stdout)
    out = subprocess.run([sys.executable, "-m", "gpuvet", "check", "--format", "json", "--fail-on", "never"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return truth, json.loads(out.stdout)


def test_framework_build_matches_torch(live):
    truth, doc = live
    torch = [r for r in doc["facts"]["framework_builds"] if r["name"] == "torch"][0]
    assert torch["version"] == truth["version"] and torch["cuda"] == truth["cuda"]
    sm = sorted(t for t in torch["targets"] if t.startswith("sm_"))
    assert sm == sorted(truth["arch_list"]), (sm, truth["arch_list"])


def test_gpu_and_driver(live):
    truth, doc = live
    gpu = doc["facts"]["gpu_devices"][0]
    assert gpu["arch"] == "sm_%d%d" % tuple(truth["cap"])
    drv = {r["component"]: r for r in doc["facts"]["drivers"] if r["vendor"] == "nvidia"}
    assert drv["kernel-module"]["version"] == drv["user-space"]["version"]
    assert drv["user-space"]["cuda_version"]


def test_loaded_cudnn_is_the_one_torch_loads(live):
    truth, doc = live
    loaded = [p for p in truth["loaded"] if "libcudnn.so" in p]
    assert loaded, truth["loaded"]
    sel = [r for r in doc["facts"]["libraries"] if r["name"] == "cudnn" and r.get("selected")]
    assert len(sel) == 1
    assert os.path.realpath(sel[0]["path"]) == os.path.realpath(loaded[0])
    major = truth["cudnn"] // 10000
    minor = truth["cudnn"] // 100 % 100
    assert sel[0]["version"].startswith(f"{major}.{minor}")
