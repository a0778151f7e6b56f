"""CTR: containers (GPU devices passed into the container)."""
from __future__ import annotations

from .base import Context, Fail, Pass, Skip, check, ev, fix


@check(code="CTR062", name="container-without-gpu-devices", severity="error",
       tables=("containers", "device_nodes", "framework_builds"), cause="device-access", component="container")
def container_without_gpu_devices(ctx: Context):
    """What it does:
    Inside a container (Docker, Podman, Kubernetes, Apptainer), reports a GPU framework build with no
    GPU device node at all.

    Why is this bad?
    A container started without ``--gpus`` (NVIDIA) or ``--device /dev/kfd --device /dev/dri`` (AMD)
    has the framework and libraries but no way to reach the GPU: "no CUDA GPUs are available",
    "hipErrorNoDevice", torch.cuda.is_available() False.

    Example:
    ``docker run rocm/pytorch`` without ``--device=/dev/kfd --device=/dev/dri``.

    Fix:
    Restart the container with the devices: ``--gpus all`` (NVIDIA Container Toolkit) or
    ``--device=/dev/kfd --device=/dev/dri --group-add video`` (ROCm); in Kubernetes request
    ``nvidia.com/gpu`` or ``amd.com/gpu``.

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html
    https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
    """
    ctrs = ctx.facts.table("containers")
    if not ctrs:
        yield Skip("not in a container")
        return
    gpu_builds = [b for b in ctx.facts.table("framework_builds") if b.get("variant") in ("cuda", "rocm")]
    if not gpu_builds:
        yield Skip("no GPU framework build installed")
        return
    if ctx.facts.table("device_nodes") or ctx.facts.table("gpu_devices"):
        yield Pass("the container has GPU devices")
        return
    b = gpu_builds[0]
    amd = b.get("variant") == "rocm"
    yield Fail(f"{ctrs[0].get('kind')} container has {b.get('name')} {b.get('version')} ({b.get('variant')}) but no GPU device node",
               why="The GPU build cannot reach any GPU from inside this container.",
               evidence=[ev(ctrs[0], f"container: {ctrs[0].get('kind')} ({ctrs[0].get('detail')})"),
                         ev(b, f"{b.get('name')} {b.get('version')}"),
                         ev(None, "no /dev/kfd, /dev/dri/renderD*, /dev/nvidia* in the container")],
               fixes=[fix("restart the container with " + ("--device=/dev/kfd --device=/dev/dri --group-add video" if amd
                                                          else "--gpus all (NVIDIA Container Toolkit)"))])


CHECKS = [container_without_gpu_devices]
