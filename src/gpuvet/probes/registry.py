"""The explicit list of live probes ``gpuvet check`` runs (nothing registers itself on import)."""
from __future__ import annotations

from .base import Probe

# one module per source of facts, grouped by the vendor stack it reads (``amd`` is the ROCm stack)
GROUPS: dict[str, tuple[str, ...]] = {
    "host": ("host",),
    "nvidia": ("nvidia",),
    "amd": ("kfd", "dpkg", "hip", "rocminfo", "rocm_smi", "miopen"),
    "framework": ("framework", "extensions", "compile_caches"),
}


def group_probes(group: str) -> list[Probe]:
    """The probes of one group (e.g. ``amd``: every ROCm-stack source), in declaration order."""
    import importlib

    return [p for mod in GROUPS[group] for p in importlib.import_module(f"{__package__}.{mod}").PROBES]


def all_probes() -> list[Probe]:
    probes: list[Probe] = [p for group in GROUPS for p in group_probes(group)]
    return sorted(probes, key=lambda p: p.name)
