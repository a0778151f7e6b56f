"""Checks of the host: device access, *_VISIBLE_DEVICES, containers, Python distributions."""
from __future__ import annotations

import re
from collections import defaultdict


from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix

VISIBLE_VARS = {
    "amd": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"),
    "nvidia": ("CUDA_VISIBLE_DEVICES",),
}


def _env(ctx: Context) -> dict[str, tuple[str, object]]:
    return {r.get("name"): (r.get("value", ""), r) for r in ctx.facts.table("env_vars")}


def _hides_all(value: str, count: int) -> str | None:
    """Why this *_VISIBLE_DEVICES value leaves no device, or None when it leaves at least one."""
    v = value.strip()
    if v == "":
        return "it is set but empty"
    if v in ("-1", "none", "NoDevFiles", "void"):
        return f"'{v}' selects no device"
    items = [i.strip() for i in v.split(",") if i.strip()]
    idx = []
    for i in items:
        if re.fullmatch(r"-?\d+", i):
            n = int(i)
            if n < 0:
                break  # the list ends at the first invalid index
            idx.append(n)
        elif re.match(r"(GPU|MIG)-", i):
            return None  # UUIDs: cannot judge against indices
        else:
            break
    if count and idx and all(n >= count for n in idx):
        return f"index(es) {','.join(map(str, idx))} but only {count} GPU(s) exist (0..{count - 1})"
    if not idx:
        return f"'{v}' names no valid device index"
    return None


@check(code="ENV060", name="visible-devices-hide-every-gpu", severity="error",
       tables=("env_vars",), cause="device-access", component="config-env")
def visible_devices_hide_all(ctx: Context):
    """What it does:
    Reads CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL and
    reports a value that leaves the process with no GPU at all.

    Why is this bad?
    An empty value, ``-1`` or indices past the last GPU hide every device: the framework then reports
    "no GPU" or "CUDA driver initialization failed" / "No HIP GPUs are available", which looks like a
    driver or install problem but is configuration. On ROCm, ROCR_VISIBLE_DEVICES is applied first and
    HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES index into what it left.

    Example:
    ``CUDA_VISIBLE_DEVICES=""`` exported by a job script on a machine with 8 GPUs.

    Fix:
    Unset the variable, or set it to existing indices (0..N-1) or GPU UUIDs.

    References:
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars
    https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html
    """
    env = _env(ctx)
    present = [v for v in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL") if v in env]
    if not present:
        yield Skip("no *_VISIBLE_DEVICES variable is set")
        return
    status = ctx.facts.status("gpu_devices")
    gpus = ctx.facts.table("gpu_devices")
    if status == "empty":
        yield Skip("no GPU on this machine: nothing to hide")
        return
    if not gpus:
        yield Unknown("the GPUs of this machine are not known", [ev(env[v][1], f"{v}={env[v][0]!r}") for v in present])
        return
    for var in present:
        vendors = [vd for vd, names in VISIBLE_VARS.items() if var in names]
        count = sum(1 for g in gpus if g.get("vendor") in vendors)
        if not count:
            continue  # e.g. HIP_VISIBLE_DEVICES on an NVIDIA-only machine does nothing
        value, r = env[var]
        why = _hides_all(str(value), count)
        if why:
            yield Fail(f"{var}={value!r} hides every GPU: {why}",
                       why="The framework will see no GPU and report it as missing or as a driver failure.",
                       evidence=[ev(r, f"{var}={value!r}")] + [ev(g, f"GPU {g.get('index')}: {g.get('name')}") for g in gpus[:4]],
                       fixes=[fix(f"unset {var}, or set it to indices 0..{count - 1}", f"unset {var}", safe=True)])


GROUP_HINT = {"/dev/kfd": ("render", "video"), "/dev/dri": ("render", "video")}


@check(code="ENV061", name="gpu-device-node-not-accessible", severity="error",
       tables=("device_nodes",), cause="device-access", component="config-env")
def device_node_access(ctx: Context):
    """What it does:
    Checks that this user can open the GPU device nodes: /dev/kfd and /dev/dri/renderD* (ROCm),
    /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN (CUDA).

    Why is this bad?
    ROCm needs read-write access to /dev/kfd and a render node; without it hipInit fails with
    "hipErrorNoDevice" / "No HIP GPUs are available" even though rocminfo run as root works. On NVIDIA,
    a node the user cannot open gives "cudaErrorNoDevice" or "CUDA driver initialization failed".

    Example:
    /dev/kfd is crw-rw---- root:render and the user is not in the render group.

    Fix:
    Add the user to the group owning the node (usually render, on older distributions video) and log
    in again; in a container pass the devices (``--device /dev/kfd --device /dev/dri`` and
    ``--group-add render``, or ``--gpus all`` with the NVIDIA container toolkit).

    References:
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html
    https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/
    """
    nodes = [r for r in ctx.facts.table("device_nodes") if r.get("exists", True)]
    if not nodes and not ctx.facts.table("device_nodes"):
        yield Skip("no GPU device nodes on this machine")
        return
    users = ctx.facts.table("user")
    groups = set(users[0].get("groups", [])) if users else set()
    uname = users[0].get("name", "$USER") if users else "$USER"
    if not nodes and any(r.get("exists") is False for r in ctx.facts.table("device_nodes")):
        yield Skip("the GPU device nodes are absent (see the driver and container checks)")
        return
    undecided = [r for r in nodes if r.get("readable") is None or r.get("writable") is None]
    nodes = [r for r in nodes if r not in undecided]
    if undecided and not nodes:
        yield Unknown("access to the pasted device nodes is not known (an `ls -l` shows modes, not this user's groups)",
                      [ev(r, f"{r.get('path')} {r.get('mode')} group {r.get('group')}") for r in undecided])
        return
    bad = [r for r in nodes if not (r.get("readable") and r.get("writable"))]
    for r in bad:
        grp = r.get("group") or ""
        in_group = grp in groups
        fixes = []
        if grp and grp != "root" and not in_group:
            fixes.append(fix(f"add {uname} to the '{grp}' group, then log out and in", f"sudo usermod -aG {grp} {uname}", root=True))
        fixes.append(fix("in a container, pass the device and its group (--device, --group-add)"))
        yield Fail(f"{r.get('path')} is not read-write for this user (mode {r.get('mode') or '?'}, group {grp or '?'})",
                   why="The runtime opens this node to reach the GPU; without access the GPU looks absent.",
                   evidence=[ev(r, f"{r.get('path')} mode {r.get('mode')} group {grp}; user groups: {', '.join(sorted(groups)) or '?'}")],
                   fixes=fixes)
    if not bad:
        yield Pass(f"{len(nodes)} GPU device node(s) are read-write for this user")


@check(code="CTR062", name="container-without-gpu-devices", severity="error",
       tables=("containers", "device_nodes", "framework_builds"), cause="device-access", component="container")
def container_without_devices(ctx: Context):
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


def _ver(v: str):
    from packaging.version import InvalidVersion, Version

    try:
        return Version(v)
    except InvalidVersion:
        return None


@check(code="PKG063", name="distribution-installed-twice", severity="warning",
       tables=("packages",), cause="companion-mismatch", component="companion-package")
def distribution_installed_twice(ctx: Context):
    """What it does:
    Finds a Python distribution installed in two places on the interpreter's path (a venv and the
    user site, two site-packages, conda and pip) with different versions.

    Why is this bad?
    Only the first copy on sys.path is imported, while pip and collect_env may report the other: a
    torch or companion upgrade "does nothing", or extensions compiled against one copy load with the
    other ("undefined symbol").

    Example:
    torch 2.1.0 in ~/.local/lib/python3.10/site-packages and torch 2.3.1 in the venv.

    Fix:
    Uninstall the copy you do not want (``pip uninstall`` in that environment, or remove the user-site
    copy), or run with ``PYTHONNOUSERSITE=1``.

    References:
    https://packaging.python.org/en/latest/specifications/recording-installed-packages/
    """
    by_name = defaultdict(list)
    for r in ctx.facts.table("packages"):
        if r.get("location") in ("pip", "conda"):  # pasted lists: one line per tool, not an install
            continue
        by_name[r.get("name")].append(r)
    for name, rows in sorted(by_name.items()):
        versions = {r.get("version") for r in rows}
        locations = {r.get("location") for r in rows}
        if len(rows) > 1 and len(versions) > 1 and len(locations) > 1:
            first = rows[0]
            yield Fail(f"{name} is installed {len(rows)} times: " + ", ".join(f"{r.get('version')} in {r.get('location')}" for r in rows),
                       why=f"Python imports {first.get('version')} from {first.get('location')}; tools may report another copy.",
                       evidence=[ev(r, f"{name} {r.get('version')} at {r.source}") for r in rows],
                       fixes=[fix(f"remove the copy you do not use, e.g. pip uninstall {name} in that environment", safe=False)])


@check(code="PKG064", name="distribution-metadata-broken", severity="warning",
       tables=("packages",), cause="other", component="companion-package")
def distribution_metadata_broken(ctx: Context):
    """What it does:
    Reports installed distributions whose metadata has no readable version (an interrupted install,
    a half-removed package, a ``~orch`` leftover directory).

    Why is this bad?
    pip's resolver and importlib.metadata see a broken entry: upgrades fail or skip the package, and
    checks that compare versions cannot run for it.

    Example:
    ``~orch-2.1.0.dist-info`` left in site-packages by an interrupted ``pip install``.

    Fix:
    Remove the broken directory and reinstall the distribution.

    References:
    https://packaging.python.org/en/latest/specifications/recording-installed-packages/
    """
    for r in ctx.facts.table("packages"):
        name = r.get("name", "")
        if not r.get("version") or name.startswith("~"):
            yield Fail(f"{name or '?'} has broken metadata at {r.source}",
                       evidence=[ev(r, f"{r.source}: no version")],
                       fixes=[fix(f"delete {r.source} and reinstall the distribution")])


CHECKS = [visible_devices_hide_all, device_node_access, container_without_devices,
          distribution_installed_twice, distribution_metadata_broken]
