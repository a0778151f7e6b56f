"""The explicit list of live probes ``gpuvet check`` runs (nothing registers itself on import)."""
from __future__ import annotations

from .base import Probe


def all_probes() -> list[Probe]:
    from . import amd, extensions, framework, host, nvidia

    probes: list[Probe] = [*host.PROBES, *nvidia.PROBES, *amd.PROBES, *framework.PROBES, *extensions.PROBES]
    return sorted(probes, key=lambda p: p.name)
