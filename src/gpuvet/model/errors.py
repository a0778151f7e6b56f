"""gpuvet's error types: what a use case raises when the user can act on it (one line, an exit status)."""
from __future__ import annotations

from .findings import ExitCode


class GpuvetError(Exception):
    """An error the user can act on: printed as one line, with a non-zero exit status."""

    def __init__(self, message: str, code: ExitCode = ExitCode.BAD_INPUT):
        super().__init__(message)
        self.code = code


class UsageError(GpuvetError):
    """A bad command line or option value (exit 2)."""

    def __init__(self, message: str):
        super().__init__(message, ExitCode.USAGE)


class InputError(GpuvetError):
    """An input that cannot be used: missing, unreadable, a directory, binary, empty, too large (exit 3)."""

    def __init__(self, message: str):
        super().__init__(message, ExitCode.BAD_INPUT)
