"""The stack, layer by layer, as (layer, component, version, read-from) lines for every renderer."""
from __future__ import annotations

import re

from gpuvet.model import Facts

MAX_VALUE = 80
# Packages shown in the stack: the framework, its companions, extensions and GPU wheels.  Every
# package is still in the facts (JSON) and used by checks.
STACK_PACKAGES = re.compile(
    r"^(torch.*|triton|pytorch-triton.*|xformers|flash-attn.*|bitsandbytes|apex|deepspeed|vllm|numpy|"
    r"jax.*|tensorflow.*|onnxruntime.*|cupy.*|transformers|accelerate|mmcv.*|transformer-engine.*|"
    r"nvidia-.*|rocm.*|amdsmi|pynvml|nvidia-ml-py|paddlepaddle.*|mxnet.*)$")


def _short(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 1] + "…"


def _v(*parts: object) -> str:
    return " ".join(str(p) for p in parts if p not in (None, "", [], False))


def stack_lines(facts: Facts) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for r in facts.table("os_info"):
        out.append(("os", r.get("name", "?"), _v(r.get("kernel"), r.get("glibc") and f"glibc {r.get('glibc')}"), r.source))
    for r in facts.table("gpu_devices"):
        mem = f"{r.get('memory_mib')} MiB" if r.get("memory_mib") else ""
        out.append(("gpu", f"{r.get('vendor', '?')} #{r.get('index', '?')} {r.get('name', '')}".strip(),
                    _v(r.get("arch"), mem), r.source))
    for r in facts.table("drivers"):
        cuda = f"(CUDA ≤ {r.get('cuda_version')})" if r.get("cuda_version") else ""
        out.append(("driver", f"{r.get('vendor')} {r.get('component')}", _v(r.get("version"), r.get("flavor"), cuda), r.source))
    for r in facts.table("runtimes"):
        out.append(("runtime", r.get("name", "?"), _v(r.get("version"), r.get("origin") and f"[{r.get('origin')}]"), r.get("path") or r.source))
    for r in facts.table("compilers"):
        plat = f"→ {r.get('platform')}" if r.get("platform") else ""
        cuda = f"(CUDA {r.get('cuda_version')})" if r.get("cuda_version") and r.get("name") != "nvcc" else ""
        out.append(("compiler", r.get("name", "?"), _v(r.get("version"), plat, cuda), r.get("path") or r.source))
    for r in facts.table("libraries"):
        mark = "loaded" if r.get("selected") else ("" if r.get("selected") is None else "not loaded")
        out.append(("library", r.get("name", "?"), _v(r.get("version"), r.get("origin") and f"[{r.get('origin')}]", mark), r.get("path") or r.source))
    for r in facts.table("framework_builds"):
        gpu = f"CUDA {r.get('cuda')}" if r.get("cuda") else (f"HIP {r.get('hip')}" if r.get("hip") else (r.get("variant") or ""))
        targets = r.get("targets") or []
        tg = f"targets {','.join(targets[:12])}{'…' if len(targets) > 12 else ''}" if targets else ""
        out.append(("framework", r.get("name", "?"), _v(r.get("version"), gpu, r.get("channel"), tg), r.get("path") or r.source))
    for r in facts.table("packages"):
        if STACK_PACKAGES.match(r.get("name", "")):
            out.append(("package", r.get("name", "?"), r.get("version", ""), r.get("location") or r.source))
    for r in facts.table("env_vars"):
        if r.get("name") != "PATH":
            out.append(("env", r.get("name", "?"), _short(r.get("value", "")), r.source))
    for r in facts.table("device_nodes"):
        acc = "rw" if r.get("readable") and r.get("writable") else ("r" if r.get("readable") else "no access")
        out.append(("device", r.get("path", "?"), _v(acc if r.get("exists") else "missing", r.get("group") and f"group {r.get('group')}", r.get("mode")), r.source))
    for r in facts.table("containers"):
        out.append(("container", r.get("kind", "?"), r.get("detail", ""), r.source))
    for r in facts.table("kernel_caches"):
        state = ("writable" if r.get("writable") else "read-only") if r.get("exists") else "missing"
        out.append(("cache", r.get("name", "?"), state, r.get("path") or r.source))
    return out
