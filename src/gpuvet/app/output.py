"""Writing a report to ``-o FILE``.

* A new file, or an existing regular file with one link: written atomically (a private temporary file in
  the same directory, renamed over the target), so a reader never sees half a report; an existing file
  keeps its mode (and its owner and group where we may set them).
* Anything else is written straight, never replaced: a device (``-o /dev/stdout``, ``/dev/full``), a FIFO
  (opened without blocking: no reader is an error, not a hang), a symbolic link (its target is written,
  the link stays), a file with several hard links (all names keep seeing it).
* A directory, or a FIFO nobody reads: one clear error (exit 3).
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile

from gpuvet.model import ExitCode
from gpuvet.model.errors import GpuvetError


def _umask() -> int:
    old = os.umask(0o22)
    os.umask(old)
    return old


def write_output(path: str, text: str) -> None:
    data = text.encode("utf-8", "replace")
    try:
        try:
            lst = os.lstat(path)
        except FileNotFoundError:
            lst = None
        if lst is not None and stat.S_ISDIR(lst.st_mode):
            raise GpuvetError(f"cannot write {path}: it is a directory", ExitCode.BAD_INPUT)
        if lst is None or (stat.S_ISREG(lst.st_mode) and lst.st_nlink == 1):
            _atomic(path, data, lst)
        else:
            _straight(path, data)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise GpuvetError(f"cannot write {path}: a FIFO with no reader", ExitCode.BAD_INPUT) from None
        raise GpuvetError(f"cannot write {path}: {exc.strerror or exc}", ExitCode.BAD_INPUT) from None


def _atomic(path: str, data: bytes, old: os.stat_result | None) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=d)
    try:
        mode = stat.S_IMODE(old.st_mode) if old is not None else (0o666 & ~_umask())
        os.fchmod(fd, mode)
        if old is not None and (old.st_uid != os.geteuid() or old.st_gid != os.getegid()):
            try:
                os.fchown(fd, old.st_uid, old.st_gid)
            except OSError:
                pass
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _straight(path: str, data: bytes) -> None:
    st = os.stat(path)  # through a link: what is really there
    if stat.S_ISDIR(st.st_mode):
        raise GpuvetError(f"cannot write {path}: it is a directory", ExitCode.BAD_INPUT)
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISREG(st.st_mode):
        flags |= os.O_TRUNC
    if stat.S_ISFIFO(st.st_mode):
        flags |= os.O_NONBLOCK  # no reader: ENXIO at once instead of waiting forever
    fd = os.open(path, flags)
    try:
        if stat.S_ISFIFO(st.st_mode):
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
