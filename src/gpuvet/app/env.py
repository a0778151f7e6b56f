"""The injected environment a use case runs in: streams, environ, the System, the clock, the cwd.

Tests build an ``Environment`` with StringIO streams and a fake ``System`` and call ``main`` in-process.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import field
from typing import IO, Any, Callable, Mapping

from gpuvet.model.errors import GpuvetError
from gpuvet.model.record import record

__all__ = ["Environment", "GpuvetError"]


@record
class Environment:
    """What a use case runs in: the streams, environ, System, clocks and working directory."""

    stdin: IO[Any] = field(default_factory=lambda: sys.stdin)
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    system_factory: Callable[[], Any] | None = None
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time  # for the report header's start time
    cwd: str = field(default_factory=os.getcwd)

    def system(self, python: str | None = None) -> Any:
        """The machine.  ``python``: another interpreter whose installed packages to examine."""
        if self.system_factory is not None:
            return self.system_factory()
        from gpuvet.probes.system import System

        return System(self.environ, python=python or self.environ.get("GPUVET_PYTHON") or None)

    @property
    def color(self) -> bool:
        if "NO_COLOR" in self.environ:
            return False
        if self.environ.get("FORCE_COLOR"):
            return True
        isatty = getattr(self.stdout, "isatty", None)
        return bool(isatty and isatty())

    @property
    def width(self) -> int:
        """The terminal's real width: COLUMNS when exported, else the width of the terminal standard
        output is on, else 80 (a pipe or a file)."""
        try:
            cols = int(self.environ.get("COLUMNS", "") or 0)
        except ValueError:
            cols = 0
        if cols > 0:
            return cols
        try:
            return os.get_terminal_size(self.stdout.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            return 80
