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
        try:
            data = stream.read(max_bytes + 1) or b""
        except (OSError, ValueError):
            raise GpuvetError(f"{what} <stdin>: standard input is closed or unreadable") from None
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        source = "<stdin>"
    else:
        st = stat_input(path, what)
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            raise GpuvetError(f"{what} {path} is {st.st_size / 2**20:.0f} MiB; a pasted report is expected "
                              f"to be under {max_bytes // 2**20} MiB (use `gpuvet diagnose` for large logs)")
        try:
            with open_input(path, what, st) as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise GpuvetError(f"cannot read {what} {path}: {exc.strerror}") from None
        source = path
        if stat.S_ISREG(st.st_mode) and len(data) < min(st.st_size, max_bytes):
            warn_shrank(env, path, st.st_size, len(data))
    if len(data) > max_bytes:
        raise GpuvetError(f"{what} {source} is larger than {max_bytes // 2**20} MiB; a pasted report is expected to be smaller")
    if not data.strip():
        raise GpuvetError(f"{what} {source} is empty")
    if looks_binary(data):
        raise GpuvetError(f"{what} {source} is binary data, not text output of a tool")
    return data.decode("utf-8", errors="replace"), source


def warn_shrank(env: Environment, path: str, before: int, after: int) -> None:
    """One warning line on stderr: the file got shorter while gpuvet read it (truncated, rotated, rewritten);
    what was read is used, and may end mid-line."""
    try:
        env.stderr.write(f"gpuvet: warning: {path} shrank while it was read ({before} -> {after} bytes)\n")
    except (OSError, ValueError):
        pass


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



FIFO_WAIT_S = 10.0  # how long a FIFO / character device may stay silent before it is refused
BLANK_SCAN = 64 * 1024 * 1024  # how much leading blank space is read looking for text


def open_input(path: str, what: str = "input", st: os.stat_result | None = None) -> IO[bytes]:
    """A binary file object for ``path``.  A FIFO or character device is opened without blocking and
    waited on for at most ``FIFO_WAIT_S`` (``GPUVET_FIFO_WAIT``): one with no writer is refused, never
    waited on forever."""
    st = st or stat_input(path, what)
    if stat.S_ISREG(st.st_mode):
        return open(path, "rb")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        import select

        try:
            wait = float(os.environ.get("GPUVET_FIFO_WAIT", "") or FIFO_WAIT_S)
        except ValueError:
            wait = FIFO_WAIT_S
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        if not poller.poll(int(wait * 1000)):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device"
            raise GpuvetError(f"{what} {path} is {kind} with nothing written to it after {wait:g}s")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _blank_prefix(fh: IO[bytes], first: bytes) -> bytes:
    """``first`` plus what follows while it is all blank (bounded): the text's first non-blank bytes, or b""."""
    head = first
    while not head.strip() and len(head) < BLANK_SCAN:  # past that much blank space the scan decides
        more = fh.read(1 << 20)
        if not more:
            return b""
        head += more
    return head


def check_log_file(path: str) -> int:
    """Refuse a log that is a directory, unreadable, empty (blank space only: the same rule as ``check
    --from``), or binary.  Returns the size of a regular file, -1 for anything else."""
    st = stat_input(path, "log")
    if not stat.S_ISREG(st.st_mode):
        return -1  # read once, as a stream (open_log_stream): a FIFO cannot be read twice
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
            if not head.strip():
                head = _blank_prefix(fh, head)
    except OSError as exc:
        raise GpuvetError(f"cannot read log {path}: {exc.strerror}") from None
    if not head:
        raise GpuvetError(f"log {path} is empty")
    if looks_binary(head.lstrip()[:8192]):
        raise GpuvetError(f"log {path} is binary data, not text output")
    return st.st_size


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
        try:
            data = env.stdin.read()
        except (OSError, ValueError):
            raise GpuvetError("log <stdin>: standard input is closed or unreadable") from None
        stream = io.BytesIO(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
    return open_log_stream(stream, "<stdin>")


def open_log_stream(stream: IO[bytes], name: str) -> Peek:
    """A binary stream (stdin, a FIFO) as a log, refused early when it is empty (blank) or binary."""
    try:
        first = stream.read(8192) or b""
        head = _blank_prefix(stream, first) if not first.strip() else first
    except OSError as exc:
        raise GpuvetError(f"cannot read log {name}: {exc.strerror or exc}") from None
    except ValueError:  # a closed stream
        raise GpuvetError(f"log {name}: the stream is closed") from None
    if not head:
        raise GpuvetError(f"log {name} is empty")
    if looks_binary(head.lstrip()[:8192]):
        raise GpuvetError(f"log {name} is binary data, not text output")
    return Peek(head, stream)
