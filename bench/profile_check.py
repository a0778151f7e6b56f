#!/usr/bin/env python3
"""Where `gpuvet check`'s time and memory go on this machine: each probe alone (sequentially, so
the numbers add up), then the KB and the checks.  usage: python bench/profile_check.py"""
from __future__ import annotations

import resource
import time

T0 = time.perf_counter()


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    from gpuvet.cli.main import cli  # noqa: F401  (the CLI's own imports)
    t = time.perf_counter()
    print(f"{'import cli':32s} {t - T0:7.3f}s  peak {rss_mib():6.1f} MiB")
    from gpuvet.probes.registry import all_probes
    from gpuvet.probes.system import System

    probes = all_probes()
    print(f"{'import probes':32s} {time.perf_counter() - t:7.3f}s  peak {rss_mib():6.1f} MiB")
    system = System()
    for p in probes:
        t = time.perf_counter()
        try:
            n = len(list(p.func(system)))
        except Exception as exc:  # noqa: BLE001
            n = f"error: {type(exc).__name__}"
        print(f"{'probe ' + p.name:32s} {time.perf_counter() - t:7.3f}s  peak {rss_mib():6.1f} MiB  rows {n}")
    t = time.perf_counter()
    from gpuvet import kb as kbmod
    from gpuvet.checks.registry import all_checks

    kb, checks = kbmod.load(), all_checks()
    print(f"{'kb + checks import':32s} {time.perf_counter() - t:7.3f}s  peak {rss_mib():6.1f} MiB")
    print(f"{'total':32s} {time.perf_counter() - T0:7.3f}s  peak {rss_mib():6.1f} MiB")


if __name__ == "__main__":
    main()
