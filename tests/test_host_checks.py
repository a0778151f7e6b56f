"""Each host check with only that rule enabled: cases that fire and cases that don't."""
import pytest

from gpuvet.app.engine import run_checks
from gpuvet.checks.ctr import container_without_gpu_devices
from gpuvet.checks.env import (
    gpu_device_node_not_accessible,
    visible_devices_hide_every_gpu,
)
from gpuvet.checks.pkg import distribution_installed_twice, distribution_metadata_broken
from gpuvet.model import Facts, Outcome, row


def facts(*rows, probed=()):
    f = Facts()
    f.add(rows)
    f.mark(*probed)
    return f


def outcomes(check, f):
    return [x.outcome for x in run_checks(f, [check], None)]


def gpu(i, vendor="nvidia"):
    return row("gpu_devices", "t", vendor=vendor, index=i, name="GPU")


@pytest.mark.parametrize("value,n,fires", [
    ("", 2, True), ("-1", 2, True), ("4,5", 2, True), ("NoDevFiles", 1, True),
    ("0", 2, False), ("1,0", 2, False), ("GPU-6a2c", 1, False), ("0,7", 2, False),
])
def test_env060_visible_devices(value, n, fires):
    f = facts(row("env_vars", "environ", name="CUDA_VISIBLE_DEVICES", value=value), *[gpu(i) for i in range(n)])
    out = outcomes(visible_devices_hide_every_gpu, f)
    assert (Outcome.FAILED in out) == fires


def test_env060_skips_without_gpus_and_is_unknown_when_gpus_not_known():
    f = facts(row("env_vars", "environ", name="HIP_VISIBLE_DEVICES", value=""), probed=("gpu_devices",))
    assert outcomes(visible_devices_hide_every_gpu, f) == [Outcome.SKIPPED]
    f = facts(row("env_vars", "environ", name="HIP_VISIBLE_DEVICES", value=""))
    assert outcomes(visible_devices_hide_every_gpu, f) == [Outcome.UNKNOWN]
    # HIP_VISIBLE_DEVICES on an NVIDIA-only machine does not hide the NVIDIA GPU
    f = facts(row("env_vars", "environ", name="HIP_VISIBLE_DEVICES", value=""), gpu(0))
    assert outcomes(visible_devices_hide_every_gpu, f) == [Outcome.PASSED]


def node(path, r=True, w=True, group="render"):
    return row("device_nodes", path, path=path, exists=True, readable=r, writable=w, group=group, mode="0660")


def test_env061_device_nodes():
    user = row("user", "os", name="alice", uid=1000, groups=["alice"])
    f = facts(node("/dev/kfd", False, False), node("/dev/dri/renderD128"), user)
    res = run_checks(f, [gpu_device_node_not_accessible], None)
    assert [x.outcome for x in res] == [Outcome.FAILED]
    assert "/dev/kfd" in res[0].title and "usermod -aG render alice" in res[0].fixes[0].command
    assert outcomes(gpu_device_node_not_accessible, facts(node("/dev/kfd"), user)) == [Outcome.PASSED]
    assert outcomes(gpu_device_node_not_accessible, facts(probed=("device_nodes",))) == [Outcome.SKIPPED]


def test_ctr062_container_without_devices():
    ctr = row("containers", "/.dockerenv", kind="docker", detail="/.dockerenv exists")
    rocm = row("framework_builds", "t", name="torch", version="2.3.0+rocm6.0", variant="rocm")
    cpu = row("framework_builds", "t", name="torch", version="2.3.0+cpu", variant="cpu")
    f = facts(ctr, rocm, probed=("device_nodes",))
    res = run_checks(f, [container_without_gpu_devices], None)
    assert res[0].outcome is Outcome.FAILED and "/dev/kfd" in res[0].fixes[0].text
    assert outcomes(container_without_gpu_devices, facts(ctr, cpu, probed=("device_nodes",))) == [Outcome.SKIPPED]
    assert outcomes(container_without_gpu_devices, facts(ctr, rocm, node("/dev/kfd"))) == [Outcome.PASSED]
    assert outcomes(container_without_gpu_devices, facts(rocm, probed=("device_nodes", "containers"))) == [Outcome.SKIPPED]
    # device nodes never probed (a pasted report): unknown, not passed
    assert outcomes(container_without_gpu_devices, facts(ctr, rocm)) == [Outcome.UNKNOWN]


def pkg(name, version, location):
    return row("packages", f"{location}/{name}", name=name, version=version, location=location, requires=[])


def test_pkg063_installed_twice():
    f = facts(pkg("torch", "2.3.1", "/venv/site"), pkg("torch", "2.1.0", "/home/u/.local/site"))
    assert outcomes(distribution_installed_twice, f) == [Outcome.FAILED]
    f = facts(pkg("torch", "2.3.1", "/venv/site"), pkg("numpy", "1.26.4", "/venv/site"))
    assert outcomes(distribution_installed_twice, f) == [Outcome.PASSED]
    # the same list pasted twice (pip freeze + collect_env) is not two installs
    f = facts(pkg("torch", "2.3.1", "pip"), pkg("torch", "2.3.1+cu121", "pip"))
    assert outcomes(distribution_installed_twice, f) == [Outcome.PASSED]


def test_pkg064_broken_metadata():
    assert outcomes(distribution_metadata_broken, facts(pkg("~orch", "", "/s"))) == [Outcome.FAILED]
    assert outcomes(distribution_metadata_broken, facts(pkg("torch", "2.3.1", "/s"))) == [Outcome.PASSED]
