"""Reading the user's input files and streams (pasted reports, logs): one clear error for what is not text.

Every refusal is an :class:`~gpuvet.model.errors.InputError` (one line, exit 3): a missing or unreadable
path, a directory, empty input, binary data, or more than the size limit."""
from __future__ import annotations

import io
import os
import stat
from typing import IO, Any

from gpuvet.model.errors import GpuvetError

from .env import Environment

MAX_PASTE_BYTES = 32 * 1024 * 1024  # a pasted bug report is kilobytes; refuse anything past this


def read_text_input(path: str, env: Environment, what: str = "input",
                    max_bytes: int = MAX_PASTE_BYTES) -> tuple[str, str]:
    """Read a pasted report (a file or '-' for stdin) fully, refusing what is not text.

    Returns (text, source name).  Raises GpuvetError (one line, exit 3) for a directory, a missing or
    unreadable file, empty input, binary data, or more than ``max_bytes``."""
    if path == "-":
        stream = getattr(env.stdin, "buffer", env.stdin)
        data = stream.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        source = "<stdin>"
    else:
        st = stat_input(path, what)
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            raise GpuvetError(f"{what} {path} is {st.st_size / 2**20:.0f} MiB; a pasted report is expected "
                              f"to be under {max_bytes // 2**20} MiB (use `gpuvet diagnose` for large logs)")
        try:
            with open(path, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise GpuvetError(f"cannot read {what} {path}: {exc.strerror}") from None
        source = path
    if len(data) > max_bytes:
        raise GpuvetError(f"{what} {source} is larger than {max_bytes // 2**20} MiB; a pasted report is expected to be smaller")
    if not data.strip():
        raise GpuvetError(f"{what} {source} is empty")
    if looks_binary(data):
        raise GpuvetError(f"{what} {source} is binary data, not text output of a tool")
    return data.decode("utf-8", errors="replace"), source


def stat_input(path: str, what: str) -> os.stat_result:
    """os.stat of an input file, or a one-line GpuvetError for a missing/unreadable path or a directory."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise GpuvetError(f"cannot read {what} {path}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise GpuvetError(f"{what} {path} is a directory, not a file")
    return st


def looks_binary(data: bytes, sample: int = 8192) -> bool:
    head = data[:sample]
    if b"\x00" in head:
        return True
    ctrl = sum(1 for b in head if b < 9 or 13 < b < 32 and b != 27)
    return len(head) > 0 and ctrl / len(head) > 0.10



def check_log_file(path: str) -> int:
    st = stat_input(path, "log")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        raise GpuvetError(f"cannot read log {path}: {exc.strerror}") from None
    if not head.strip():
        if stat.S_ISREG(st.st_mode) and st.st_size > len(head):
            pass  # leading blank space in a large file: let the scan decide
        else:
            raise GpuvetError(f"log {path} is empty")
    if looks_binary(head):
        raise GpuvetError(f"log {path} is binary data, not text output")
    return st.st_size if stat.S_ISREG(st.st_mode) else -1


class Peek:
    """A binary stream with its first bytes already read (to refuse binary/empty stdin early)."""

    def __init__(self, head: bytes, rest: Any) -> None:
        self.head, self.rest = head, rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            if n is None or n < 0:
                return out + self.rest.read()
            return out
        return self.rest.read(n)




def open_log_stdin(env: Environment) -> Peek:
    """Standard input as a binary stream, refused early when it is empty or binary."""
    stream: IO[bytes] | Any = getattr(env.stdin, "buffer", None)
    if stream is None:  # a text stream (tests): encode what it holds
        data = env.stdin.read()
        stream = io.BytesIO(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
    head = stream.read(8192)
    if not head.strip():
        more = stream.read(1 << 20)
        if not more.strip():
            raise GpuvetError("log <stdin> is empty")
        head += more
    if looks_binary(head):
        raise GpuvetError("log <stdin> is binary data, not text output")
    return Peek(head, stream)
