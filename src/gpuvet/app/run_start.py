"""`gpuvet run`'s first moments: its options and the start of the job, before anything else is imported.

Every millisecond between gpuvet's start and the job's is added to the wrapped job's wall time, so
``cli/fast.py`` starts the job with this module alone (``os`` and two built-in modules), and only then imports
the supervision (``app/run.py``: subprocess, threading, the pump), whose start-up then overlaps the job's own.
The job is started as ``subprocess.Popen(start_new_session=True, close_fds=True, restore_signals=True)`` and
``System.spawn`` start it: its own session, gpuvet's standard input, its stdout and stderr into two pipes
(grown to ``PIPE_SIZE`` first, so that a job writing at once never blocks on a 64 KiB pipe while gpuvet is
still importing), no descriptor of gpuvet's but those, SIGPIPE and SIGXFSZ at their defaults.  A stream of
gpuvet's that is a regular file (``> train.log``) is the job's own instead of a pipe (:func:`follow_file`).

SIGINT, SIGTERM and SIGHUP are blocked from just before the job starts (not in the job: it gets gpuvet's
original signal mask) until ``app/run.py`` has installed the handlers that forward them to the job's group
(``unblock``): a signal that comes in between waits, and is then forwarded, as one that comes later is.
"""
from __future__ import annotations

import os
import time  # built into the interpreter: free

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

DEFAULT_LOG_CAP = 8 * 1024 * 1024  # bytes of output.log: the first half and the last half kept
GRACE_S = 10.0
PIPE_SIZE = 1 << 20  # F_SETPIPE_SZ for the child's pipes and grep's: fewer, larger reads and wake-ups
F_SETPIPE_SZ = 1031  # Linux fcntl.h (fcntl.F_SETPIPE_SZ from Python 3.10 on)


class RunOptions:
    def __init__(self, argv: list[str], timeout: float | None = None, debug: bool = False, bundle: str | None = None,
                 here: bool = True, log_cap: int = DEFAULT_LOG_CAP, grace: float = GRACE_S):
        self.argv = argv
        self.timeout = timeout
        self.debug = debug
        self.bundle = bundle
        self.here = here
        self.log_cap = log_cap
        self.grace = grace


def parse_size(text: str) -> int:
    """``--log-cap``'s value in bytes (``16M``, ``512k``, ``1.5MiB``, ``4096``).  Raises ValueError (the message
    to show) for anything else, and below 1 KiB."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:i?[bB])?\s*", text or "")
    if not m:
        raise ValueError(f"expected a size such as 16M or 512k, got {text!r}")
    n = float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    if n < 1024:
        raise ValueError("at least 1k")
    return int(n)


def grow_pipe(fd: int, size: int = PIPE_SIZE) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", F_SETPIPE_SZ), size)
    except (OSError, ImportError, ValueError):  # not Linux, or over the user's pipe-buffer quota: 64 KiB it is
        pass


class Follow:
    """One of gpuvet's standard streams that is a regular file (``> train.log``, ``>> train.log``, Slurm's
    ``--output``, ``nohup``): the job writes straight into it, as it would without gpuvet (no pipe, no copy by
    gpuvet, the bare job's own cost; every byte reaches the file even if gpuvet dies), and gpuvet reads the file
    back from ``pos`` (where the job's output begins) through ``rfd``, a read-only description of its own.
    ``wfd``: gpuvet's descriptor of it (1 or 2), whose offset the job shares (without O_APPEND)."""

    def __init__(self, wfd: int, rfd: int, pos: int, append: bool, key: tuple[int, int]):
        self.wfd, self.rfd, self.pos, self.append, self.key = wfd, rfd, pos, append, key
        self.truncated = 0  # times the file was seen shorter than what was read of it (copytruncate, `: > log`)

    def close(self) -> None:
        if self.rfd >= 0:
            try:
                os.close(self.rfd)
            except OSError:
                pass
            self.rfd = -1


def follow_file(fd: int) -> Follow | None:
    """A :class:`Follow` for gpuvet's descriptor ``fd`` when the job may write straight into it: a regular file,
    open for writing, inheritable, written at its end (a fresh ``>``, or O_APPEND), that gpuvet can open again for
    reading (``/proc/self/fd/N``: the same file, checked by device and inode).  None otherwise (a pipe, a terminal,
    /dev/null, a file it may not read, a write in the middle of a file): the job's output then goes through a pipe."""
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or not os.get_inheritable(fd):
            return None
        import fcntl

        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        if flags & os.O_ACCMODE == os.O_RDONLY:
            return None
        append = bool(flags & os.O_APPEND)
        pos = st.st_size if append else os.lseek(fd, 0, os.SEEK_CUR)
        if pos != st.st_size:
            return None  # its writes would land inside the file: what gpuvet reads there would not all be the job's
        rfd = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except (OSError, ImportError, ValueError):
        return None
    try:
        rst = os.fstat(rfd)
        if (rst.st_dev, rst.st_ino) == (st.st_dev, st.st_ino) and (rst.st_mode & 0o170000) == 0o100000:
            return Follow(fd, rfd, pos, append, (st.st_dev, st.st_ino))
    except OSError:
        pass
    os.close(rfd)
    return None


def plan_follows(fds: Sequence[int | None], environ: Mapping[str, str]) -> list[Follow | None]:
    """Per stream (gpuvet's stdout, stderr: their descriptors, None for one without): the :class:`Follow` when the
    job writes straight into it, else None (a pipe).  Both streams into one file (``> log 2>&1``) share one Follow.
    ``GPUVET_RUN_DIRECT=0`` in the environment: always pipes."""
    if environ.get("GPUVET_RUN_DIRECT", "") == "0":
        return [None for _ in fds]
    out: list[Follow | None] = []
    for fd in fds:
        f = follow_file(fd) if fd is not None and fd >= 0 else None
        for prev in out:
            if f is not None and prev is not None and prev.key == f.key:
                prev.pos = min(prev.pos, f.pos)
                f.close()
                f = prev
        out.append(f)
    return out


def unique_follows(plan: Sequence[Follow | None]) -> list[Follow]:
    seen: list[Follow] = []
    for f in plan:
        if f is not None and all(f is not g for g in seen):
            seen.append(f)
    return seen


class Started:
    """A job started by :func:`start`: its pid and the read ends of its stdout and stderr pipes (-1 for a stream
    it writes straight into: ``follows``), or why it could not be started (``error``, as ``OSError.strerror``
    words it)."""

    def __init__(self, pid: int = 0, out_fd: int = -1, err_fd: int = -1, error: str | None = None,
                 old_mask: object = None, follows: list[Follow] | None = None):
        self.pid, self.out_fd, self.err_fd, self.error = pid, out_fd, err_fd, error
        self.follows: list[Follow] = follows or []
        self.old_mask = old_mask  # gpuvet's signal mask before the forwarded signals were blocked
        self.t0 = time.monotonic()  # (just after) the job's start
        self.adopted = False  # run_child supervises it (else, on gpuvet's own failure, ``abandon``)

    def abandon(self) -> None:
        """gpuvet failed before supervising the job: stop it (its group), never leave it running unwatched."""
        for f in self.follows:
            f.close()
        if self.pid and not self.adopted:
            self.adopted = True
            try:
                os.killpg(self.pid, _signal_module().SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass

    def unblock(self) -> None:
        """Let the forwarded signals in again (the handlers are installed, or nothing is to be forwarded)."""
        if self.old_mask is not None:
            sig = _signal_module()
            sig.pthread_sigmask(sig.SIG_SETMASK, self.old_mask)
            self.old_mask = None


def _signal_module():  # type: ignore[no-untyped-def]
    """The C signal module (``signal`` is a wrapper of it that imports ``enum``): what ``start`` needs of it."""
    try:
        import _signal  # type: ignore[import-not-found,unused-ignore]

        return _signal
    except ImportError:  # pragma: no cover - every CPython has it
        import signal

        return signal


def _inherited_fds() -> list[int]:
    """Descriptors >= 3 that an exec would pass on (``close_fds=True`` closes them in the child)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return []
    fds = []
    for name in names:
        try:
            fd = int(name)
            if fd > 2 and os.get_inheritable(fd):
                fds.append(fd)
        except (ValueError, OSError):  # the listing's own descriptor, closed by now
            continue
    return fds


def start(argv: Sequence[str], environ: Mapping[str, str], stdin_ok: bool = True) -> Started | None:
    """Start the job now (see the module's text).  ``stdin_ok``: gpuvet's standard input is an open descriptor
    the job may read (else /dev/null).  None where ``os.posix_spawnp`` is missing (the caller starts it the
    usual way, later)."""
    spawn = getattr(os, "posix_spawnp", None)
    if spawn is None or not argv:
        return None
    sig = _signal_module()
    try:
        old_mask = sig.pthread_sigmask(sig.SIG_BLOCK, (sig.SIGINT, sig.SIGTERM, sig.SIGHUP))
    except (AttributeError, OSError, ValueError):
        return None
    fds: list[int] = []
    plan = plan_follows((1, 2), environ)
    follows = unique_follows(plan)
    try:
        actions: list[tuple] = []
        ends = []
        for fd, direct in zip((1, 2), plan):
            if direct is not None:  # the job writes straight into gpuvet's own file (inherited as it is)
                ends.append((-1, -1))
                continue
            r, w = os.pipe2(os.O_CLOEXEC)
            fds += [r, w]
            grow_pipe(r)
            actions.append((os.POSIX_SPAWN_DUP2, w, fd))
            ends.append((r, w))
        if not stdin_ok:
            actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds()]
        try:
            pid = spawn(argv[0], list(argv), dict(environ), file_actions=actions, setsid=True,
                        setsigmask=old_mask, setsigdef=(sig.SIGPIPE, sig.SIGXFSZ))  # as restore_signals
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            for f in follows:
                f.close()
            return Started(error=exc.strerror or str(exc), old_mask=old_mask)
    except BaseException:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        for f in follows:
            f.close()
        sig.pthread_sigmask(sig.SIG_SETMASK, old_mask)
        raise
    for _r, w in ends:
        if w >= 0:
            os.close(w)
    return Started(pid, ends[0][0], ends[1][0], old_mask=old_mask, follows=follows)
