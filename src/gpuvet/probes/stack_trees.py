"""For snapshots: the OS packages of the GPU stack (dpkg or rpm), the ROCm / CUDA trees installed on
disk and which one is active, and the container this runs in (or, with ``docker``, another one).
Every read goes through ``System`` with a time-out; what cannot be read is recorded as an error
string in the result, never raised."""
from __future__ import annotations

import json
import re
from typing import Any

from .system import System

GPU_PACKAGE = re.compile(
    r"^(rocm.*|hip.*|hsa.*|amdgpu.*|amd-smi.*|comgr|hipcc|miopen.*|libmiopen.*|rocblas.*|librocblas.*|hipblas.*|"
    r"librocm.*|libhsa.*|libamdhip.*|rccl.*|librccl.*|rocminfo|rocm-smi.*|roctracer.*|rocprofiler.*|composablekernel.*|"
    r"cuda.*|libcuda.*|libcudnn.*|cudnn.*|libnccl.*|nccl.*|libcublas.*|libcufft.*|libcurand.*|libcusparse.*|"
    r"libcusolver.*|libnpp.*|libnvjitlink.*|libnvidia.*|nvidia.*|xserver-xorg-video-nvidia.*|tensorrt.*|libnvinfer.*|"
    r"datacenter-gpu-manager.*|libnvrtc.*|linux-modules-nvidia.*|dkms|firmware-amd-graphics|amdgpu-dkms.*|"
    r"mesa-va-drivers|libdrm-amdgpu.*)$")


def _dpkg_status(text: str) -> list[dict[str, str]]:
    out = []
    for para in text.split("\n\n"):
        f: dict[str, str] = {}
        for line in para.splitlines():
            if line[:1] in " \t":
                continue
            k, sep, v = line.partition(":")
            if sep and k in ("Package", "Version", "Architecture", "Status", "Source"):
                f[k] = v.strip()
        name = f.get("Package", "")
        if not name or not GPU_PACKAGE.match(name):
            continue
        if f.get("Status", "").split()[-1:] != ["installed"]:
            continue
        out.append({"name": name, "version": f.get("Version", ""), "arch": f.get("Architecture", "")})
    return sorted(out, key=lambda p: p["name"])


def os_packages(system: System) -> dict[str, Any]:
    status = system.read_text("/var/lib/dpkg/status", limit=64 * 1024 * 1024)
    if status:
        return {"manager": "dpkg", "packages": _dpkg_status(status)}
    if system.which("rpm"):
        res = system.run(["rpm", "-qa", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\t%{ARCH}\n"], timeout=5)
        if not res.ok:
            return {"manager": "rpm", "packages": [], "error": res.describe()}
        pkgs = []
        for line in res.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and GPU_PACKAGE.match(parts[0]):
                pkgs.append({"name": parts[0], "version": parts[1], "arch": parts[2]})
        return {"manager": "rpm", "packages": sorted(pkgs, key=lambda p: p["name"])}
    return {"manager": "none", "packages": []}


def _tree_version(system: System, vendor: str, path: str) -> str:
    if vendor == "amd":
        v = (system.read_text(f"{path}/.info/version", limit=256) or "").strip()
        return v.split("-")[0] if v else ""
    text = system.read_text(f"{path}/version.json", limit=65536)
    if text:
        try:
            return str(json.loads(text).get("cuda", {}).get("version", ""))
        except (ValueError, AttributeError):
            pass
    t = system.read_text(f"{path}/version.txt", limit=256) or ""
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", t)
    if m:
        return m.group(1)
    h = system.read_text(f"{path}/include/cuda_runtime_api.h", limit=1024 * 1024) or ""
    m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", h)
    if m:  # 13000 -> 13.0
        n = int(m.group(1))
        return f"{n // 1000}.{(n % 1000) // 10}"
    return ""


def gpu_trees(system: System) -> dict[str, Any]:
    """ROCm trees (/opt/rocm-*, /opt/rocm) and CUDA trees (/usr/local/cuda-*, /usr/local/cuda) with
    their versions; ``active`` says which one each generic path (the /opt/rocm and /usr/local/cuda
    links, update-alternatives, ROCM_PATH / CUDA_HOME, the compilers on PATH) resolves to."""
    trees: list[dict[str, Any]] = []
    for vendor, pattern, generic, alt, env_names, tool in (
            ("amd", "/opt/rocm-*", "/opt/rocm", "/etc/alternatives/rocm", ("ROCM_PATH", "ROCM_HOME", "HIP_PATH"), "hipcc"),
            ("nvidia", "/usr/local/cuda-*", "/usr/local/cuda", "/etc/alternatives/cuda", ("CUDA_HOME", "CUDA_PATH"), "nvcc")):
        found = sorted(p for p in system.glob(pattern) if re.search(r"-\d", p) and system.is_dir(p))
        real = {p: system.realpath(p) for p in found}
        active: dict[str, str] = {}
        if system.exists(generic):
            active[generic] = system.realpath(generic)
            if active[generic] not in real.values():
                found.append(generic)
                real[generic] = active[generic]
        if system.exists(alt):
            active[alt] = system.realpath(alt)
        for name in env_names:
            v = system.environ.get(name)
            if v and system.exists(v):
                active[name] = system.realpath(v.rstrip("/"))
        exe = system.which(tool)
        if exe:
            rp = system.realpath(exe)
            active[f"PATH:{tool}"] = rp.rsplit("/bin/", 1)[0] if "/bin/" in rp else rp
        for p in found:
            via = sorted(k for k, v in active.items() if v == real[p] or v.startswith(real[p] + "/"))
            version = _tree_version(system, vendor, p)
            if not version:  # the directory's own name: /opt/rocm-5.6.1, /usr/local/cuda-12.1
                m = re.search(r"-(\d+(?:\.\d+)+)$", real[p])
                version = m.group(1) if m else ""
            trees.append({"vendor": vendor, "path": p, "realpath": real[p], "version": version,
                          "active": bool(via), "via": via})
    return {"trees": trees}


def _container_id(system: System) -> str:
    for path, pat in (("/proc/self/mountinfo", r"/(?:docker|containers|overlay-containers)/([0-9a-f]{64})/"),
                      ("/proc/self/cgroup", r"([0-9a-f]{64})")):
        m = re.search(pat, system.read_text(path, limit=1024 * 1024) or "")
        if m:
            return m.group(1)
    return ""


def container_identity(system: System, name: str | None = None) -> dict[str, Any]:
    """Inside a container: its kind, id and image where the runtime leaves them readable (the
    container id from mountinfo / cgroup; the image from the env the image set, /run/.containerenv
    or common labels).  With ``name``: ``docker inspect NAME`` and ``docker diff NAME`` from the host."""
    out: dict[str, Any] = {"inside": False}
    kinds = []
    if system.exists("/.dockerenv"):
        kinds.append("docker")
    cenv = system.read_text("/run/.containerenv", limit=65536)
    if cenv is not None:
        kinds.append("podman")
        for k in ("image", "imageid", "name", "id"):
            m = re.search(rf'^{k}="([^"]*)"', cenv, re.M)
            if m:
                out[f"podman_{k}"] = m.group(1)
    if system.environ.get("KUBERNETES_SERVICE_HOST"):
        kinds.append("kubernetes")
    for var in ("APPTAINER_CONTAINER", "SINGULARITY_CONTAINER"):
        if system.environ.get(var):
            kinds.append(var.split("_")[0].lower())
            out["image"] = system.environ[var]
    if kinds:
        out.update(inside=True, kind=kinds[0], kinds=kinds)
        cid = _container_id(system)
        if cid:
            out["id"] = cid
        for var in ("CONTAINER_IMAGE", "IMAGE_NAME", "DOCKER_IMAGE", "NVIDIA_PYTORCH_VERSION", "PYTORCH_VERSION",
                    "ROCM_VERSION", "NVIDIA_BUILD_ID", "CUDA_VERSION"):
            if system.environ.get(var):
                out.setdefault("image_env", {})[var] = system.environ[var]
        if out.get("podman_image"):
            out["image"] = out["podman_image"]
    if name:
        out["host_view"] = docker_view(system, name)
    return out


def docker_view(system: System, name: str) -> dict[str, Any]:
    exe = system.which("docker") or system.which("podman")
    if not exe:
        return {"name": name, "error": "docker: not installed"}
    res = system.run([exe, "inspect", "--type", "container", name], timeout=8)
    if not res.ok:
        return {"name": name, "error": res.describe()}
    try:
        info = json.loads(res.stdout)[0]
    except (ValueError, IndexError, TypeError):
        return {"name": name, "error": "docker inspect printed no JSON"}
    cfg = info.get("Config") or {}
    view: dict[str, Any] = {
        "name": name, "id": info.get("Id", ""), "image": cfg.get("Image", ""), "image_id": info.get("Image", ""),
        "created": info.get("Created", ""), "state": (info.get("State") or {}).get("Status", ""),
        "labels": cfg.get("Labels") or {},
        "env": [e for e in (cfg.get("Env") or []) if isinstance(e, str)],
        "devices": [d.get("PathOnHost", "") for d in ((info.get("HostConfig") or {}).get("Devices") or [])
                    if isinstance(d, dict)],
        "runtime": (info.get("HostConfig") or {}).get("Runtime", ""),
    }
    diff = system.run([exe, "diff", name], timeout=15)
    if diff.ok:
        lines = diff.stdout.splitlines()
        view["diff"] = lines[:5000]
        view["diff_truncated"] = len(lines) > 5000
    else:
        view["diff_error"] = diff.describe()
    return view
