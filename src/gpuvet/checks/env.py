"""ENV: configuration (environment variables that hide or override GPUs, device-node access)."""
from __future__ import annotations

import re
import shlex
from typing import Any, Iterable

from gpuvet.kb import query as q
from gpuvet.model import Facts, Row, Severity
from gpuvet.model.arch import gfx_from_override

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import _amd_gpus, _default_rocm, _rocm_entry, amd_gpu_state
from .common import _env_row, _nvidia_archs, _arch_list_value, parse_arch_list, _cuda_list_covers, _vnums  # noqa: F401
from .gpu import gpu_arch


# ---------------------------------------------------------------------------------------------------
def _natively_supported(kb: Any, arch: str, facts: Facts) -> tuple[bool | None, str]:
    """Is ``arch`` among the officially supported targets of the installed ROCm release (or, when
    none is known, of any ROCm release in the KB)?"""
    if kb is None:
        return None, ""
    rels = [r.get("version") for r in _default_rocm(facts)]
    for rel in rels:
        e = _rocm_entry(kb, str(rel))
        if e and e.get("gfx_targets"):
            return arch in e["gfx_targets"], f"ROCm {e['rocm']}"
    any_targets = [e for e in kb.table("rocm_releases") if e.get("gfx_targets")]
    if not any_targets:
        return None, ""
    hit = [e for e in any_targets if arch in e["gfx_targets"]]
    return bool(hit), (f"ROCm {hit[0]['rocm']}" if hit else "any ROCm release in the knowledge base")


@check(code="ENV024", name="hsa-override-gfx-version", severity="warning",
       tables=("env_vars",), cause="gpu-arch-unsupported", component="config-env", vendor="amd")
def hsa_override_gfx_version(ctx: Context) -> Iterable:
    """What it does:
    When HSA_OVERRIDE_GFX_VERSION (or HSA_OVERRIDE_GFX_VERSION_<n>) is set, says to what target it
    makes the runtime report the GPU (10.3.0 -> gfx1030, 9.0.10 -> gfx90a), and checks it: a
    malformed value is an error; a value the knowledge base (``hsa_overrides``, from public threads)
    records as failing for this GPU's real target is an error; an override of another GPU
    generation (major version) is an error; an override on a GPU the installed ROCm release
    supports natively is a warning; a value recorded as working passes.  The GPU's own target comes
    from the KFD topology (rocminfo reports the target after the override) or from its model name.

    Why is this bad?
    The override makes ROCm load code objects built for another target.  Within one family (RDNA2
    gfx1031 -> gfx1030) that is a known workaround; across families, or to a target the framework
    has no kernels for either, it crashes ("invalid device function", "hipErrorNoBinaryForGpu",
    segfaults) or computes wrong results.  Left set on a supported GPU (an MI210, a 7900 XTX) it
    only hides the real target and breaks the next framework upgrade.

    Example:
    HSA_OVERRIDE_GFX_VERSION=10.3.0 on an RX 6700 XT (gfx1031): passes (known to work).
    HSA_OVERRIDE_GFX_VERSION=11.0.2 on a Radeon 780M (gfx1103) with torch +rocm6.1: fires.
    HSA_OVERRIDE_GFX_VERSION=11.0.0 on an MI210 (gfx90a): fires.  HSA_OVERRIDE_GFX_VERSION=gfx1030:
    fires (malformed).

    Fix:
    Unset HSA_OVERRIDE_GFX_VERSION on natively supported GPUs; otherwise set it to the known-working
    value of the same family (X.Y.Z of the closest supported target), or install a framework build
    that carries kernels for the GPU's own target.

    References:
    https://github.com/ollama/ollama/blob/main/docs/gpu.md#overrides
    https://github.com/ROCm/ROCm/issues/2353
    https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
    """
    facts = ctx.facts
    env = {r.get("name"): r for r in facts.table("env_vars")}
    names = sorted(n for n in env if n == "HSA_OVERRIDE_GFX_VERSION" or re.fullmatch(r"HSA_OVERRIDE_GFX_VERSION_\d+", n or ""))
    if not names:
        yield Pass("HSA_OVERRIDE_GFX_VERSION is not set")
        return
    state, reason = amd_gpu_state(facts)
    gpus = _amd_gpus(facts)
    overrides = ctx.kb.table("hsa_overrides") if ctx.kb is not None else []
    for n in names:
        r = env[n]
        value = str(r.get("value") or "")
        eff = gfx_from_override(value)
        e_set = ev(r, f"{n}={value}")
        if eff is None:
            yield Fail(f"{n}={value!r} is malformed: the runtime expects X.Y.Z (e.g. 10.3.0 for gfx1030)",
                       why="A malformed override is ignored or misread by the HSA runtime.",
                       evidence=[e_set], severity=Severity.ERROR,
                       fixes=[fix(f"unset {n}, or set it to X.Y.Z", command=f"unset {n}", safe=True)])
            continue
        targets = gpus
        m = re.fullmatch(r"HSA_OVERRIDE_GFX_VERSION_(\d+)", n)
        if m:
            targets = [g for g in gpus if g.get("index") == int(m.group(1))] or gpus
        if not targets:
            if state == "unknown":
                yield Unknown(f"{n}={value} makes the GPU report {eff}; the GPU's own target is not known: {reason}",
                              [e_set])
            else:
                yield Fail(f"{n}={value} is set but no AMD GPU was found",
                           evidence=[e_set], severity=Severity.INFO,
                           fixes=[fix(f"unset {n}", command=f"unset {n}", safe=True)])
            continue
        for g in targets:
            real = gpu_arch(g, ctx.kb)
            from_kfd = "/kfd/" in g.source
            if not from_kfd:
                # rocminfo / amd-smi report the target *after* the override: prefer the model's own
                by_name = gpu_arch(Row(g.table, {**g.values, "arch": None, "compute_capability": None}, g.source),
                                   ctx.kb)
                real = by_name or real
            gname = g.get("name") or real or "GPU"
            e_gpu = ev(g, f"{gname}: {real or 'target unknown'}")
            if not real:
                yield Unknown(f"{n}={value} ({eff}); the real target of {gname} is not known", [e_set, e_gpu])
                continue
            if real == eff:
                if not from_kfd and not by_name:
                    yield Unknown(f"{n}={value}: {gname} reports {eff}, which may be the override itself; its own "
                                  "target is not known", [e_set, e_gpu])
                else:
                    yield Pass(f"{n}={value} names {gname}'s own target {real}", [e_set, e_gpu])
                continue
            known = [o for o in overrides if o.get("real") == real and str(o.get("override")) == value.strip()]
            if known and not known[0].get("works"):
                yield Fail(f"{n}={value} on {gname} ({real}) makes it report {eff}, which is known to fail",
                           why=str(known[0].get("note") or ""), evidence=[e_set, e_gpu, ev(None, str(known[0].get("source")))],
                           severity=Severity.ERROR,
                           fixes=[fix(f"unset {n}, or use a value known to work for {real}", safe=True)])
                continue
            if known and known[0].get("works"):
                yield Pass(f"{n}={value} on {gname} ({real} -> {eff}) is a known working override",
                           [e_set, e_gpu, ev(None, str(known[0].get("source")))])
                continue
            rm = re.match(r"gfx(\d+?)([0-9a-f]{2})$", real)
            em = re.match(r"gfx(\d+?)([0-9a-f]{2})$", eff)
            if rm and em and rm.group(1) != em.group(1):
                yield Fail(f"{n}={value} makes {gname} ({real}) report {eff}, another GPU generation",
                           why="Code objects of another generation do not run on this GPU.",
                           evidence=[e_set, e_gpu], severity=Severity.ERROR,
                           fixes=[fix(f"unset {n}", command=f"unset {n}", safe=True)])
                continue
            native, where = _natively_supported(ctx.kb, real, facts)
            if native:
                yield Fail(f"{n}={value} is set on {gname} ({real}), which {where} supports natively",
                           why="The override hides the GPU's real target and loads code built for another one.",
                           evidence=[e_set, e_gpu],
                           fixes=[fix(f"unset {n}", command=f"unset {n}", safe=True)])
                continue
            yield Unknown(f"{n}={value} makes {gname} ({real}) report {eff}; the knowledge base has no record "
                          "of this override", [e_set, e_gpu])


VISIBLE_VARS = {
    "amd": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"),
    "nvidia": ("CUDA_VISIBLE_DEVICES",),
}


def _host_env(ctx: Context) -> dict[str, tuple[str, Row]]:
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
def visible_devices_hide_every_gpu(ctx: Context):
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
    env = _host_env(ctx)
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


@check(code="ENV061", name="gpu-device-node-not-accessible", severity="error",
       tables=("device_nodes",), cause="device-access", component="config-env")
def gpu_device_node_not_accessible(ctx: Context):
    """What it does:
    Checks that this user can open the GPU device nodes: /dev/kfd and /dev/dri/renderD* (ROCm),
    /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN (CUDA).

    Why is this bad?
    ROCm needs read-write access to /dev/kfd and a render node; without it hipInit fails with
    "hipErrorNoDevice" / "No HIP GPUs are available" even though rocminfo run as root works. On NVIDIA,
    a node the user cannot open gives "cudaErrorNoDevice" or "CUDA driver initialization failed".

    Example:
    /dev/kfd is crw-rw---- root:render and the user is not in the render group.  In pasted text (an
    ``ls -l``, which shows modes but not the user's groups) only a node no group or other may open
    (``crw------- root root``) fails: it is root's alone.

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
    # a pasted `ls -l` decides one case without the user's groups: a node neither its group nor others may open
    # (crw-------) is the owner's (root's) alone, so no ordinary user reaches the GPU through it
    owner_only = [r for r in undecided if _owner_only(r.get("mode") or "")]
    for r in owner_only:
        yield Fail(f"{r.get('path')} can be opened by its owner only (mode {r.get('mode')}): the GPU is reachable as root "
                   "alone",
                   why="The runtime opens this node to reach the GPU; a node with no group or other read-write bits "
                       "(no udev rule gave it the render/video group) makes the GPU look absent to every other user.",
                   evidence=[ev(r, f"{r.get('path')} mode {r.get('mode')} group {r.get('group') or '?'}")],
                   fixes=[fix("install the udev rule that gives the node its group and mode (ROCm's packages ship "
                              "KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\"), or reboot after installing the "
                              "amdgpu driver package; then add the user to that group", root=True)])
    if owner_only:
        return
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



def _owner_only(mode: str) -> bool:
    """An ``ls -l`` mode string whose group and other bits both lack read-write (``crw-------``)."""
    return len(mode) == 10 and mode[0] == "c" and mode[4:6] != "rw" and mode[7:9] != "rw"


# -- build-time settings and host compilers --------------------------------------------------------
@check(code="ENV066", name="build-arch-list-misses-gpu", severity="error",
       tables=("env_vars", "gpu_devices"), cause="gpu-arch-unsupported", component="config-env")
def build_arch_list_misses_gpu(ctx: Context) -> Iterable:
    """What it does:
    Reads ``TORCH_CUDA_ARCH_LIST`` (NVIDIA) and ``PYTORCH_ROCM_ARCH`` (AMD), the settings every
    ``torch.utils.cpp_extension`` build (flash-attn, apex, xformers or deepspeed from source, JIT
    ``load()``) takes its GPU targets from, and checks that each GPU of this machine is covered:
    ``8.0`` gives sm_80 code (runs on 8.x GPUs), ``+PTX`` adds PTX for newer ones, ``9.0a`` only sm_90;
    AMD targets must name the exact gfx.

    Why is this bad?
    Every extension built here will lack this GPU's kernels and fail at its first launch with "no
    kernel image is available for execution on the device" / "invalid device function", while nvcc
    and the framework look healthy.

    Example:
    ``TORCH_CUDA_ARCH_LIST=8.0`` on the H200 (sm_90): fires.  ``9.0a`` or ``8.0;9.0``: passes.
    ``PYTORCH_ROCM_ARCH=gfx90a`` on an MI300X (gfx942): fires.

    Fix:
    Add the GPU's architecture (``export TORCH_CUDA_ARCH_LIST="8.0;9.0"``) or unset the variable
    (cpp_extension then builds for the GPUs it sees), and rebuild the extensions built with it.

    References:
    https://pytorch.org/docs/stable/cpp_extension.html
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
    """
    tcal, rocm = _env_row(ctx, "TORCH_CUDA_ARCH_LIST"), _env_row(ctx, "PYTORCH_ROCM_ARCH")
    if tcal is None and rocm is None:
        yield Skip("neither TORCH_CUDA_ARCH_LIST nor PYTORCH_ROCM_ARCH is set")
        return
    gpus = ctx.facts.table("gpu_devices")
    if not gpus:
        yield Skip("no GPU found")
        return
    if tcal is not None:
        items = parse_arch_list(tcal.get("value") or "")
        for g, arch in _nvidia_archs(ctx):
            ok, how = _cuda_list_covers(items, arch)
            gname = f"GPU {g.get('index', '')} {g.get('name', '')} ({arch})"
            if ok:
                yield Pass(f"TORCH_CUDA_ARCH_LIST={tcal.get('value')} gives {how} code for {gname}",
                           [ev(tcal, f"TORCH_CUDA_ARCH_LIST={tcal.get('value')}")])
                continue
            add = _arch_list_value(arch)
            new = ";".join([v + ("+PTX" if p else "") for v, p in items] + [add]) if items else add
            yield Fail(f"TORCH_CUDA_ARCH_LIST={tcal.get('value')!r} has no code for {gname}: every CUDA extension built "
                       "here will lack its kernels",
                       why="cpp_extension builds exactly the listed architectures; the extension then fails with 'no "
                           "kernel image is available for execution on the device' on this GPU.",
                       evidence=[ev(tcal, f"TORCH_CUDA_ARCH_LIST={tcal.get('value')}"), ev(g, gname)],
                       fixes=[fix(f"Add {add} to TORCH_CUDA_ARCH_LIST (or unset it), then rebuild the extensions built "
                                  "with it", f'export TORCH_CUDA_ARCH_LIST="{new}"', safe=True)])
    if rocm is not None:
        listed = [x.split(":")[0] for x in re.split(r"[;,\s]+", rocm.get("value") or "") if x]
        for g in gpus:
            if g.get("vendor") != "amd":
                continue
            gfx = gpu_arch(g, ctx.kb)
            if not gfx:
                continue
            arch = gfx
            if arch in listed:
                yield Pass(f"PYTORCH_ROCM_ARCH lists {arch}")
                continue
            yield Fail(f"PYTORCH_ROCM_ARCH={rocm.get('value')!r} does not list GPU {g.get('index', '')} "
                       f"{g.get('name', '')} ({arch}): every HIP extension built here will lack its code objects",
                       why="HIP code objects are specific to one gfx target: 'invalid device function'.",
                       evidence=[ev(rocm, f"PYTORCH_ROCM_ARCH={rocm.get('value')}"), ev(g, f"GPU {arch}")],
                       fixes=[fix(f"Add {arch} to PYTORCH_ROCM_ARCH", f'export PYTORCH_ROCM_ARCH="{";".join(listed + [arch])}"',
                                  safe=True)])


@check(code="ENV065", name="host-compiler-not-runnable", severity="error",
       tables=("host_compilers",), cause="toolchain", component="config-env")
def host_compiler_not_runnable(ctx: Context) -> Iterable:
    """What it does:
    Checks every host compiler the GPU stack will call -- ``CC`` (Triton builds its launcher with it;
    torch.utils.cpp_extension passes it to nvcc as ``-ccbin``), ``CXX`` (Inductor's C++ path,
    cpp_extension), ``NVCC_CCBIN`` / ``CUDAHOSTCXX`` (nvcc's host compiler), and when ``CC`` is unset the
    ``gcc`` or ``clang`` Triton looks for on PATH -- for existing and running (``--version``).

    Why is this bad?
    ``torch.compile`` fails at its first graph when Triton cannot run its C compiler
    ("InductorError: ... FileNotFoundError: '/nonexistent/gcc'", "Failed to find C compiler. Please
    specify via CC environment variable"); extension builds fail inside pip.  The job's error then
    looks like user code.

    Example:
    ``CC=/nonexistent/gcc`` with torch 2.11.0+cu130 and Triton: fires, naming CC.  ``CC`` unset and gcc
    13.3 on PATH: passes.

    Fix:
    Point the variable at a compiler that exists (``export CC=$(command -v gcc)``) or unset it; install
    gcc/g++ when none is on PATH.

    References:
    https://github.com/triton-lang/triton/blob/main/python/triton/runtime/build.py
    https://github.com/pytorch/pytorch/blob/main/torch/_inductor/cpp_builder.py
    https://pytorch.org/docs/stable/cpp_extension.html
    """
    rows = ctx.facts.table("host_compilers")
    if not rows:
        yield Skip("no host compiler was probed (pasted facts)")
        return
    gpu_build = any(b.get("variant") in ("cuda", "rocm") for b in ctx.facts.table("framework_builds"))
    for r in rows:
        if r.get("runs") is not False:
            continue
        req = r.get("requested") or ""
        var = req.split("=", 1)[0] if "=" in req else ""
        if var:
            val = req.split("=", 1)[1]
            cmd = f"unset {var}" if var != "CC" else "unset CC  # or: export CC=$(command -v gcc)"
            fixes = [fix(f"Point {var} at a compiler that exists, or unset it ({val!r}: {r.get('error')})", cmd, safe=True)]
        else:
            fixes = [fix("Install the GNU compilers (gcc, g++)", "sudo apt-get install -y gcc g++", root=True)]
        sev = None if (var or gpu_build) else Severity.WARNING
        yield Fail(f"{r.get('role')}: {req} -- {r.get('error') or 'does not run'}",
                   why=("torch.compile (Triton, Inductor) and extension builds call this compiler; they fail at their "
                        "first compile, with an error that looks like the job's own."),
                   evidence=[ev(r, f"{req}: {r.get('error') or 'does not run'}")], fixes=fixes, severity=sev)
    ok = [r for r in rows if r.get("runs") is not False]
    if ok:
        yield Pass("host compilers run: " + ", ".join(f"{r.get('requested')} -> {r.get('path')} {r.get('version')}"
                                                       for r in ok))


@check(code="ENV067", name="host-compiler-older-than-framework-needs", severity="error",
       tables=("host_compilers", "framework_builds"), cause="toolchain", component="config-env")
def host_compiler_older_than_framework_needs(ctx: Context) -> Iterable:
    """What it does:
    Reads the C++ standard the installed torch compiles its C++ code paths with -- Inductor's C++
    backend (``torch/_inductor/cpp_builder.py``: ``-std=c++20`` in torch 2.13.0) and
    ``torch.utils.cpp_extension`` (the same flag; ``TorchConfig.cmake``'s ``CXX_STANDARD``) -- and checks
    every host compiler that will be handed that flag (``CXX``: Inductor, cpp_extension; ``CC``: nvcc's
    ``-ccbin`` in cpp_extension; ``NVCC_CCBIN`` / ``CUDAHOSTCXX``) against the oldest GCC that accepts
    it, from the knowledge base's ``cxx_standards`` table (GCC's and Clang's C++ status pages), and
    hipcc's clang (``HIP_CLANG_PATH``) likewise.

    Why is this bad?
    An older GCC rejects the flag: ``g++: error: unrecognized command-line option '-std=c++20'`` (GCC 9
    knows only ``-std=c++2a``).  ``torch.compile`` on CPU (and the C++ wrapper on GPU) fails at its first
    graph with an InductorError, and every extension build fails, with an error that looks like the
    job's own.

    Example:
    torch 2.13.0 (``-std=c++20``) with ``CXX=g++-9`` (GCC 9.5): fires, naming GCC >= 10.  GCC 12.2 (Debian
    12): passes.

    Fix:
    Point ``CXX`` (and ``CC``) at a GCC that accepts the standard (``export CXX=g++-12 CC=gcc-12``), or
    install one (``apt-get install g++-12``).

    References:
    https://gcc.gnu.org/projects/cxx-status.html
    https://clang.llvm.org/cxx_status.html
    https://github.com/pytorch/pytorch/blob/main/torch/_inductor/cpp_builder.py
    https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py
    """
    builds = [b for b in ctx.facts.table("framework_builds") if b.get("name") == "torch" and b.get("cxx_standard")]
    rows = [r for r in ctx.facts.table("host_compilers") if r.get("runs") is not False and r.get("version")]
    if not builds:
        yield Skip("no torch build whose C++ standard was read")
        return
    if not rows:
        yield Skip("no host compiler version was recorded")
        return
    b = builds[0]
    std = str(b.get("cxx_standard"))
    entry = q.cxx_standard(ctx.kb, std)
    if entry is None:
        yield Unknown(f"the KB records no compiler minimum for C++{std}")
        return
    ok = []
    for r in {(x.get("role"), x.get("path")): x for x in rows}.values():
        name = str(r.get("name") or "")
        family = "clang" if name.startswith("clang") else "gcc" if name in ("gcc", "g++") else ""
        need = entry.get("gcc_min") if family == "gcc" else entry.get("clang_min") if family == "clang" else None
        have = _vnums(r.get("version"), 2)
        role = str(r.get("role") or "")
        if need is None or have is None:
            continue
        if have[0] >= int(need):
            ok.append(f"{r.get('path')} {r.get('version')}")
            continue
        sev = None if role.startswith("CXX") else Severity.WARNING  # CC gets C++ flags only through nvcc -ccbin
        var = (r.get("requested") or "").split("=", 1)[0] if "=" in (r.get("requested") or "") else ""
        cxx = "g++" if family == "gcc" else "clang++"
        yield Fail(f"{role}: {name} {r.get('version')} is older than torch {b.get('version')}'s C++{std} needs "
                   f"({family} >= {need}, {entry.get('flag')})",
                   why=(f"torch compiles Inductor's C++ code and extensions with {entry.get('flag')}, which {name} "
                        f"{r.get('version')} rejects ('unrecognized command-line option'): torch.compile's C++ path "
                        "and every extension build fail."),
                   evidence=[ev(r, f"{r.get('requested')}: {r.get('path')} {name} {r.get('version')}"),
                             ev(b, f"torch {b.get('version')}: {b.get('cxx_standard_source')}"),
                             ev(None, f"KB cxx_standards C++{std}: {family} >= {need} "
                                      f"({entry.get('source') if family == 'gcc' else entry.get('clang_source')})")],
                   fixes=[fix(f"Use a {family} >= {need} for {var or role}",
                              f"export {var or 'CXX'}={cxx if var != 'CC' else family}-{max(int(need), 12)}"),
                          fix(f"Install one: sudo apt-get install -y {cxx}-{max(int(need), 12)}", root=True)],
                   severity=sev)
    if ok:
        yield Pass(f"host compilers accept torch's C++{std} ({entry.get('flag')}): " + ", ".join(ok))



# -- compile / JIT caches (Triton, Inductor, torch_extensions, vLLM) -----------------------------------------
_CACHE_VAR = {"triton-cache": "TRITON_CACHE_DIR", "inductor-cache": "TORCHINDUCTOR_CACHE_DIR",
              "torch-extensions": "TORCH_EXTENSIONS_DIR", "vllm-cache": "VLLM_CACHE_ROOT"}
_CACHE_LABEL = {"triton-cache": "Triton kernel cache", "inductor-cache": "Inductor (torch.compile) cache",
                "torch-extensions": "torch_extensions JIT build cache", "vllm-cache": "vLLM cache"}
_TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-rocm", "pytorch-triton-xpu", "triton-xpu")
_NETWORK_FS = ("nfs", "nfs4", "lustre", "gpfs", "beegfs", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "fuse.sshfs",
               "fuse.glusterfs", "fuse.cephfs", "fuse.gcsfuse", "fuse.s3fs", "9p", "virtiofs", "fuse.juicefs", "wekafs",
               "fuse.weka")


def _cache_users(facts: Facts) -> set[str]:
    """The caches some installed software writes: Triton's when a triton distribution is installed, Inductor's
    and torch_extensions' when torch is, vLLM's when vllm is.  Without a packages table (pasted text), every one."""
    if facts.status("packages") != "ok" and facts.status("framework_builds") != "ok":
        return set(_CACHE_VAR)
    names = {str(r.get("name") or "").lower().replace("_", "-") for r in facts.table("packages")}
    torch = "torch" in names or facts.first("framework_builds", name="torch") is not None
    used = set()
    if names & set(_TRITON_DISTS):
        used.add("triton-cache")
    if torch:
        used |= {"inductor-cache", "torch-extensions"}
    if "vllm" in names:
        used.add("vllm-cache")
    return used


def _compile_caches(ctx: Context, names: Iterable[str] = tuple(_CACHE_VAR)) -> tuple[list[Row], Any]:
    """(rows of the compile caches in use, None) or ([], a Skip/Unknown result to yield)."""
    facts = ctx.facts
    if any(e.probe == "compile-caches" for e in facts.errors):
        err = next(e for e in facts.errors if e.probe == "compile-caches")
        return [], Unknown(f"the compile caches were not examined: {err.message}")
    rows = [r for r in facts.table("kernel_caches") if r.get("name") in _CACHE_VAR]
    if not rows:
        if facts.origin != "live":
            return [], Unknown("the compile caches are not in the pasted text")
        return [], Skip("no compile cache was examined")
    used = _cache_users(facts) & set(names)
    rows = [r for r in rows if r.get("name") in used]
    if not rows:
        return [], Skip("nothing installed writes these caches (no triton, torch or vllm)")
    return rows, None


def _private_dir_fix(name: str) -> Any:
    var = _CACHE_VAR[name]
    sub = {"triton-cache": "triton", "inductor-cache": "inductor", "torch-extensions": "torch_extensions",
           "vllm-cache": "vllm"}[name]
    return fix(f"Point {var} at a directory of your own on local disk", f"export {var}=/tmp/$USER/{sub}", safe=True)


@check(code="ENV070", name="compile-cache-unwritable", severity="error",
       tables=("kernel_caches",), cause="kernel-cache-db", component="config-env")
def compile_cache_unwritable(ctx: Context) -> Iterable:
    """What it does:
    Checks that this user can write (or create) the compile and JIT caches of the software installed: Triton's
    (TRITON_CACHE_DIR, default ~/.triton/cache), Inductor's (TORCHINDUCTOR_CACHE_DIR, default
    /tmp/torchinductor_<user>), torch_extensions' (TORCH_EXTENSIONS_DIR, default
    ~/.cache/torch_extensions/py<XY>_<cuda|rocm>) and vLLM's (VLLM_CACHE_ROOT, default ~/.cache/vllm).

    Why is this bad?
    The first torch.compile, Triton kernel launch or cpp_extension.load() writes there and fails:
    "PermissionError: [Errno 13] Permission denied: '/tmp/torch_extensions/fused'" when another user created the
    shared directory, "Permission denied: '/.cache'" in a container without a writable HOME, or a read-only
    filesystem.  The error surfaces deep inside compilation and reads like a bug of the job.

    Example:
    /tmp/torchinductor_root created by another uid with mode 0755 in a container; HOME unset so the caches
    resolve under '/.cache'.  Caches under a writable home: passes.

    Fix:
    Point the variable at a directory of your own on local disk (export TRITON_CACHE_DIR=/tmp/$USER/triton,
    TORCHINDUCTOR_CACHE_DIR, TORCH_EXTENSIONS_DIR, VLLM_CACHE_ROOT), or fix the directory's owner.

    References:
    https://github.com/pytorch/pytorch/issues/34238
    https://github.com/opendatahub-io/ilab-on-ocp/pull/26
    https://github.com/pytorch/pytorch/blob/main/torch/_inductor/runtime/cache_dir_utils.py
    """
    rows, res = _compile_caches(ctx)
    if res is not None:
        yield res
        return
    bad = [r for r in rows if r.get("writable") is False]
    for r in bad:
        name, path = str(r.get("name")), r.get("path")
        owner = r.get("owner_uid")
        state = (f"exists, owned by uid {owner}, mode {r.get('mode')}" if r.get("exists")
                 else "does not exist and cannot be created here")
        yield Fail(f"the {_CACHE_LABEL[name]} {path} is not writable by this user ({state})",
                   why="The first compile writes there and fails with PermissionError / Read-only file system, "
                       "deep inside torch.compile, a Triton launch or cpp_extension.load().",
                   evidence=[ev(r, f"{path}: exists={r.get('exists')}, writable=False"
                                   + (f", owner uid {owner}, mode {r.get('mode')}" if r.get("exists") else "")
                                   + (f", on {r.get('fs_type')}" if r.get("fs_type") else ""))],
                   fixes=[_private_dir_fix(name)])
    if not bad:
        yield Pass("compile caches are writable: " + ", ".join(str(r.get("path")) for r in rows),
                   [ev(r, f"{r.get('path')}: writable") for r in rows])


@check(code="ENV071", name="compile-cache-entries-of-another-user", severity="warning",
       tables=("kernel_caches",), cause="kernel-cache-db", component="config-env")
def compile_cache_entries_of_another_user(ctx: Context) -> Iterable:
    """What it does:
    Looks at a bounded sample of the entries of each compile cache in use (Triton, Inductor, torch_extensions,
    vLLM) and counts those owned by another user that this user cannot write.

    Why is this bad?
    A run under sudo or as root in a container leaves root-owned kernel directories in the user's own cache.
    Reading them works, so the problem hides until a kernel needs a new file there: Triton's cache put, Inductor's
    rename of a new artifact or a torch_extensions rebuild then fails with "PermissionError: [Errno 13]
    Permission denied" on a path inside the cache.

    Example:
    ~/.triton/cache/<hash>/ owned by uid 0 after `sudo python train.py`.  All entries the user's own: passes.

    Fix:
    Give the entries back (sudo chown -R $(id -u):$(id -g) <cache>) or remove them, or use a cache directory of
    your own (TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, TORCH_EXTENSIONS_DIR, VLLM_CACHE_ROOT).

    References:
    https://github.com/pytorch/pytorch/issues/34238
    https://github.com/kijai/ComfyUI-WanVideoWrapper/issues/220
    """
    rows, res = _compile_caches(ctx)
    if res is not None:
        yield res
        return
    bad = [r for r in rows if (r.get("foreign_entries") or 0) > 0]
    for r in bad:
        name, path, n = str(r.get("name")), r.get("path"), r.get("foreign_entries")
        sample = ", ".join(r.get("foreign_sample") or [])
        yield Fail(f"{n} entr{'y' if n == 1 else 'ies'} of the {_CACHE_LABEL[name]} {path} belong to another user "
                   "and are not writable by this one" + ("" if r.get("sampled_all") else " (in a bounded sample)"),
                   why="A kernel that needs a new file in one of them fails with PermissionError inside the cache.",
                   evidence=[ev(r, f"{path}: {sample}")],
                   fixes=[fix(f"Give the entries back to this user: sudo chown -R $(id -u):$(id -g) {path}",
                              f"sudo chown -R $(id -u):$(id -g) {path}", root=True), _private_dir_fix(name)])
    if not bad:
        yield Pass("the compile caches' entries are this user's", [ev(r, f"{r.get('path')}: ok") for r in rows])


@check(code="ENV072", name="jit-extension-built-by-another-torch", severity="warning",
       tables=("kernel_caches",), cause="kernel-cache-db", component="extension")
def jit_extension_built_by_another_torch(ctx: Context) -> Iterable:
    """What it does:
    Reads the build.ninja of (a bounded number of) the extensions in the torch_extensions cache the examined
    torch uses and compares the torch headers each was compiled against with the examined torch installation.

    Why is this bad?
    cpp_extension.load() (DeepSpeed, apex and other JIT ops) decides whether to rebuild from the extension's
    sources and flags, not from the torch it was built with.  A cache shared by several environments
    (TORCH_EXTENSIONS_DIR, or two venvs with the same Python and CUDA/ROCm, which share
    ~/.cache/torch_extensions/py<XY>_<cuda|rocm>) reuses a module built against another torch: "undefined
    symbol" at import, or crashes.

    Example:
    ~/.cache/torch_extensions/py310_cu121/fused_adam/build.ninja compiled with -isystem /opt/envA/lib/python3.10/
    site-packages/torch/include, loaded by the torch of /opt/envB.  Entries built by this torch: passes.

    Fix:
    Remove the foreign entries (they rebuild on the next load) and give each environment its own
    TORCH_EXTENSIONS_DIR.

    References:
    https://github.com/huggingface/transformers/issues/26015
    https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py
    """
    rows, res = _compile_caches(ctx, ("torch-extensions",))
    if res is not None:
        yield res
        return
    found = False
    for r in rows:
        others = list(r.get("other_builds") or [])
        if not others:
            continue
        found = True
        path = r.get("path")
        names = [o.split(":", 1)[0] for o in others]
        yield Fail(f"{len(others)} extension{'s' if len(others) > 1 else ''} in {path} were built against another "
                   f"torch ({', '.join(names[:4])})",
                   why="cpp_extension.load() reuses them without rebuilding; they need that other libtorch's symbols.",
                   evidence=[ev(r, o) for o in others[:5]],
                   fixes=[fix("Remove them (they rebuild on the next load)",
                              " && ".join(f"rm -rf {shlex.quote(f'{path}/{n}')}" for n in names[:5])),
                          fix("Give each environment its own build cache",
                              "export TORCH_EXTENSIONS_DIR=$VIRTUAL_ENV/torch_extensions", safe=True)])
    if not found:
        yield Pass("the torch_extensions entries were built by this torch (or none was read)",
                   [ev(r, f"{r.get('path')}: ok") for r in rows])


@check(code="ENV073", name="torch-extensions-stale-lock", severity="warning",
       tables=("kernel_caches",), cause="kernel-cache-db", component="extension")
def torch_extensions_stale_lock(ctx: Context) -> Iterable:
    """What it does:
    Looks for the `lock` files torch.utils.cpp_extension leaves in an extension's build directory
    (torch_extensions/<py_acc>/<name>/lock) that are older than 10 minutes.

    Why is this bad?
    cpp_extension takes the lock (torch.utils.file_baton.FileBaton) before building and removes it after; a build
    killed half-way (Ctrl-C, OOM, a preempted job) leaves it behind, and every later load of that extension waits
    for it forever: DeepSpeed jobs hang after "Using ... as PyTorch extensions root...", py-spy shows
    "wait (torch/utils/file_baton.py)".

    Example:
    ~/.cache/torch_extensions/py311_cu117/fused_adam/lock from a build killed an hour ago.  No lock, or a lock
    a few seconds old (a build in progress): passes.

    Fix:
    Make sure no build of that extension is running, then delete the lock file (or the extension's directory).

    References:
    https://github.com/deepspeedai/DeepSpeedExamples/issues/302
    https://github.com/pytorch/pytorch/blob/main/torch/utils/file_baton.py
    """
    rows, res = _compile_caches(ctx, ("torch-extensions",))
    if res is not None:
        yield res
        return
    locks = [(r, lock) for r in rows for lock in (r.get("stale_locks") or [])]
    for r, lock in locks:
        path = lock.rsplit(" (", 1)[0]
        yield Fail(f"stale extension build lock {lock}",
                   why="Every load() of this extension waits on the lock forever (the build that took it is gone).",
                   evidence=[ev(r, lock)],
                   fixes=[fix("Delete the lock once no build of this extension is running", f"rm -f {shlex.quote(str(path))}")])
    if not locks:
        yield Pass("no stale torch_extensions build lock", [ev(r, f"{r.get('path')}: no old lock") for r in rows])


@check(code="ENV074", name="compile-cache-on-network-filesystem", severity="warning",
       tables=("kernel_caches",), cause="kernel-cache-db", component="config-env")
def compile_cache_on_network_filesystem(ctx: Context) -> Iterable:
    """What it does:
    Reads the filesystem type of each compile cache in use (the mount holding it in /proc/self/mounts) and flags
    caches on network or shared filesystems (NFS, Lustre, GPFS, BeeGFS, CephFS, CIFS, 9p, virtiofs, ...).

    Why is this bad?
    Ranks on several nodes then compile the same kernels into one directory at once. Triton's and Inductor's
    write-then-rename and the metadata reads race over the network filesystem: "Stale file handle", "OSError:
    [Errno 16] Device or resource busy" from the cache put, FileNotFoundError reading back just-published group
    files, or a truncated JSON metadata file that fails every later run with json.decoder.JSONDecodeError.

    Example:
    TRITON_CACHE_DIR on an NFS home used by a 4-node job.  Caches on local ext4/xfs/tmpfs: passes.

    Fix:
    Put the caches on node-local disk (export TRITON_CACHE_DIR=/tmp/$USER/triton and TORCHINDUCTOR_CACHE_DIR=
    /tmp/$USER/inductor), one per node; share artifacts with torch.compiler.save_cache_artifacts if needed.

    References:
    https://github.com/triton-lang/triton/issues/11512
    https://github.com/pytorch/pytorch/issues/173679
    """
    rows, res = _compile_caches(ctx)
    if res is not None:
        yield res
        return
    bad = [r for r in rows if str(r.get("fs_type") or "") in _NETWORK_FS]
    for r in bad:
        name, path = str(r.get("name")), r.get("path")
        yield Fail(f"the {_CACHE_LABEL[name]} {path} is on a {r.get('fs_type')} filesystem",
                   why="Ranks on several nodes race on one directory over the network filesystem: stale handles, "
                       "EBUSY renames and truncated metadata files that poison later runs.",
                   evidence=[ev(r, f"{path}: filesystem {r.get('fs_type')}")],
                   fixes=[_private_dir_fix(name)])
    if not bad:
        known = [r for r in rows if r.get("fs_type")]
        if known:
            yield Pass("the compile caches are on local filesystems",
                       [ev(r, f"{r.get('path')}: {r.get('fs_type')}") for r in known])
        else:
            yield Unknown("the filesystem of the compile caches was not read")


CHECKS = [hsa_override_gfx_version, visible_devices_hide_every_gpu, gpu_device_node_not_accessible,
          build_arch_list_misses_gpu, host_compiler_not_runnable, host_compiler_older_than_framework_needs,
          compile_cache_unwritable, compile_cache_entries_of_another_user, jit_extension_built_by_another_torch,
          torch_extensions_stale_lock, compile_cache_on_network_filesystem]
