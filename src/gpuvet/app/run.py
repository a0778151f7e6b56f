"""``gpuvet run -- CMD ...``: supervise a command, pass its output through, diagnose it when it fails.

The child's standard output and standard error are passed through in blocks, as they come (not line by
line: a log-heavy job runs at pipe speed).  Where one of gpuvet's streams is a regular file, the child writes
straight into it and gpuvet reads it back (``run_start.Follow``): no pipe, no copy on the way out.  What it printed is kept in bounded memory by a
:class:`Capture`: the first and the last ``log_cap / 2`` bytes, plus the lines of the middle that the
signatures' prefilter picks (the lines that matter), with their line numbers.  Nothing is written to disk
while the job runs, so there is no temporary file to guess, hijack or leave behind.

When the child fails (non-zero status, a signal, or still running at ``timeout``) the capture is
diagnosed by the same pipeline as ``gpuvet diagnose`` and a crash bundle is written: a 0700 directory of
0600 files, every text redacted (``model/redact.py``).  When the bundle cannot be created where asked (an
unwritable working directory) it goes to ``$XDG_STATE_HOME/gpuvet/crash/``.

Signals: SIGINT, SIGTERM and SIGHUP sent to gpuvet are forwarded to the child's process group; the child
gets ``grace`` seconds to exit, then the group is killed.  gpuvet then exits with the child's status
(128+N for a signal N), writes no bundle (the user stopped the job) and leaves no process behind.  A signal
that was ignored when gpuvet started (``nohup``, a background job of a script) stays ignored, as for the job alone.

The exit status is always the child's: its own code; 128+N when signal N ended it; 124 when gpuvet
stopped it after ``timeout``; 127 when it could not be started.  Closed or broken standard streams
never change it: output to a closed stream is dropped and the child keeps running.
"""
from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import deque
from itertools import islice

# The pass-through path imports only these few standard modules (not even typing, json or re), so that
# `gpuvet run` starts the job fast; the names below are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping, Sequence

    from gpuvet.probes.system import System

    from .env import Environment

from .run_start import DEFAULT_LOG_CAP, GRACE_S, PIPE_SIZE, Follow, RunOptions, Started, parse_size, plan_follows, unique_follows
from .run_start import grow_pipe as _grow_pipe

MAX_KEPT_LINES = 4000  # lines of the omitted middle kept for the diagnosis (prefilter hits)
MAX_KEPT_LINE = 4096

# --debug: synchronous launches and verbose logging, per the vendors' debugging guides
# (HIP: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/debugging.html ;
#  CUDA: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables ;
#  NCCL: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
DEBUG_ENV = {
    "AMD_SERIALIZE_KERNEL": "3",  # serialize kernel launches before and after: errors surface at the real call
    "AMD_SERIALIZE_COPY": "3",
    "AMD_LOG_LEVEL": "3",  # 3 = info: API calls that fail and why, without level 4's per-call flood
    "HIP_LAUNCH_BLOCKING": "1",
    "CUDA_LAUNCH_BLOCKING": "1",
    "TORCH_SHOW_CPP_STACKTRACES": "1",
    "TORCH_CPP_LOG_LEVEL": "INFO",
    "NCCL_DEBUG": "INFO",
    "RCCL_DEBUG": "INFO",
    "TORCH_DISTRIBUTED_DEBUG": "DETAIL",
    "PYTHONFAULTHANDLER": "1",
    "MIOPEN_ENABLE_LOGGING": "1",
    "MIOPEN_LOG_LEVEL": "4",
}
ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
            "LD_LIBRARY_PATH", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
            "NCCL_DEBUG", "CUDA_HOME", "ROCM_PATH", "TRITON_CACHE_DIR", "MIOPEN_USER_DB_PATH")
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# The redactor (model/redact.py) compiles its patterns and pulls in the model package when imported: only a
# failure (a message, the bundle) needs it, so it is imported then.
def redact_text(text: str) -> str:
    from gpuvet.model.redact import redact_text as _redact

    return _redact(text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    from gpuvet.model.redact import redact_argv as _redact

    return _redact(argv)


def _redacted_environment(environ: Mapping[str, str]) -> dict[str, str]:
    from gpuvet.model.redact import MASK, is_secret_name, redact_env

    return {k: (MASK if is_secret_name(k) else redact_env(k, environ[k])) for k in ENV_KEYS if k in environ}


def _spawn(system: "System | None", argv: Sequence[str], environ: Mapping[str, str] | None = None,
           extra_env: Mapping[str, str] | None = None, *, stdin: Any = None, stdin_pipe: bool = False,
           stderr_pipe: bool = False, stdout_fd: int | None = None, stderr_fd: int | None = None) -> subprocess.Popen:
    """Start a streamed process in its own session: through ``system`` (``System.spawn``, the seam tests spy
    on) when one is given, else as ``System.spawn`` does, without importing the probes layer.  ``stdout_fd``,
    ``stderr_fd`` (without a ``system`` only): descriptors it writes into instead of the pipes (a followed file)."""
    if system is not None:
        kw: dict[str, Any] = {"new_session": True}
        if environ is not None:
            kw["environ"] = environ
        if stdin is not None:
            kw["stdin"] = stdin
        if stdin_pipe:
            kw["stdin_pipe"] = True
        if stderr_pipe:
            kw["stderr_pipe"] = True
        return system.spawn(argv, extra_env, **kw)
    env = dict(os.environ if environ is None else environ)
    env.update(extra_env or {})
    if stdin is None:
        stdin = subprocess.PIPE if stdin_pipe else subprocess.DEVNULL
    errs: Any = stderr_fd if stderr_fd is not None else (subprocess.PIPE if stderr_pipe else subprocess.DEVNULL)
    return subprocess.Popen(list(argv), stdin=stdin, stdout=stdout_fd if stdout_fd is not None else subprocess.PIPE,
                            stderr=errs, env=env, start_new_session=True)


# ----------------------------------------------------------------------------------------- capture
SENTINEL = "gpuvet-end-of-output-7f3a9c"  # fed last to grep: its line number counts the middle's lines
_SENTINEL_B = SENTINEL.encode()
SHAPE_KEEP = 2  # kept lines of one shape (MiddleScan's keep policy)
SHAPE_BYTES = 256
MAX_SHAPES = 1 << 16
MIDDLE_QUEUE = 64 * 1024 * 1024  # bytes of omitted output waiting for grep; past that, only their newlines
COALESCE_BYTES = 64 * 1024  # a read smaller than this: wait COALESCE_S before the next one
COALESCE_S = 0.004
FOLLOW_MS = 50  # a followed file (the job writes straight into gpuvet's own file) is read back this often
FOLLOW_ROUND = 16 * 1024 * 1024  # at most this much of one file per round, so the pipes and grep are served too
FEED_MIN = 256 * 1024  # omitted output is handed to grep in writes of at least this much
WRITEV_BLOCKS = 64  # queued blocks per writev to grep (IOV_MAX is 1024)
CATCH_UP_BYTES = 8 * 1024 * 1024  # a yielding grep this far behind takes its full CPU share until it has caught up
PACE_S = 0.1
PREFILTER_SWITCH_S = 0.0005  # the GIL switch interval while the prefilter's patterns load (see _Pump._evict)


def middle_patterns() -> list[str]:
    """The prefilter for the omitted middle: the catalog's key trie (``Catalog.grep_pattern``, one small POSIX ERE:
    the lines it selects are the lines ``gpuvet diagnose``'s prefilter selects), from the shipped signature index
    (the KB table's patterns, not compiled: compiling the catalog costs ~0.2 s and is only needed at the end).
    Until day 9 it was every signature and fact pattern (829), whose DFA grep built at ~0.1 MB/s on varied real log
    text (bench/results/diagnose_speed-day8.md): on such output the middle fell behind and went unscanned."""
    from gpuvet import kb
    from gpuvet.logs import index
    from gpuvet.logs.fact_patterns import PREFILTER_PATTERNS  # not logs.extract: its import compiles it all
    from gpuvet.logs.signatures import compute_index, ere_trie, index_digest, routing_patterns

    pats = routing_patterns(kb.load().table("signatures"))
    extra = list(PREFILTER_PATTERNS)
    doc = index.section("signatures", index_digest(pats, extra)) or compute_index(pats, extra)
    trie = ere_trie(doc["keys"])
    return [trie] if trie else []


def _await_exit(pid: int, timeout: float, fallback_sleep: float = 0.0) -> None:
    """Sleep until process ``pid`` has exited (not reaped), at most ``timeout`` seconds, woken by its pidfd the
    moment it exits (``Popen.wait(timeout)`` polls with growing sleeps, a few milliseconds late).  Without
    pidfds (old kernels, other systems) it returns at once and the caller's wait does the work (after
    ``fallback_sleep`` seconds at most: the caller polls)."""
    try:
        import select

        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        if fallback_sleep > 0:
            time.sleep(min(timeout, fallback_sleep))
        return
    try:
        select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        pass
    finally:
        os.close(fd)


class MiddleScan:
    """The omitted middle of the output, streamed through ``grep -a -n -A 2 -E -f PATTERNS`` (a DFA matcher in its
    own process, off the pass-through path; PATTERNS: :func:`middle_patterns`, the key trie).  No thread of its own:
    the pump's poll loop writes to grep's (non-blocking) stdin when it can take more and reads grep's output when
    there is some.  Line numbers are grep's (1 = the middle's first line).  Should grep fall behind by more than
    ``MIDDLE_QUEUE`` bytes, a queued block is replaced by its newlines, so the numbering stays right.

    The keep policy (which of the lines grep selects are kept for the diagnosis, in bounded memory):

    * a selected line is kept while fewer than ``SHAPE_KEEP`` kept lines have its shape (the line without its digits,
      its first ``SHAPE_BYTES``): a message a job repeats every step (a warning with a step number, a progress line
      holding a key) is kept twice, every other message is kept, wherever it sits in the middle;
    * the one or two lines grep prints after a kept line (``-A 2``) are kept with it, as context: the Python path
      gives a two-line reading (a REPL call, then the value it printed) its next line, so this path does too;
    * at most ``max_kept`` lines: the first half stays, the rest is a ring of the newest (a late message, nearest the
      tail where jobs print their error, always finds room); what is dropped is counted (``dropped_lines``)."""

    def __init__(self, grep: str, patterns: Sequence[str], system: System | None = None,
                 max_kept: int = MAX_KEPT_LINES):
        import tempfile

        self.max_kept = max_kept

        fd, self.pfile = tempfile.mkstemp(prefix="gpuvet-patterns-", suffix=".txt")  # 0600, unpredictable
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(list(patterns) + [SENTINEL]) + "\n")
        self._first: list[tuple[int, bytes]] = []  # the first max_kept/2 kept lines
        self._last: deque[tuple[int, bytes]] = deque(maxlen=max(1, max_kept - max_kept // 2))  # then the newest
        self._shapes: dict[bytes, int] = {}  # shape -> kept lines of that shape (bounded: MAX_SHAPES)
        self._kept_at = -10  # grep's number of the last line kept (its context lines follow it)
        self.newlines = 0  # newlines in what was fed: from the line number grep gives the sentinel
        self.dropped_lines = 0
        self.skipped_bytes = 0
        self._q: deque[bytes] = deque()
        self._small: list[bytes] = []  # fed, not yet handed to the write queue (under FEED_MIN)
        self._small_bytes = 0
        self._off = 0  # bytes of _q[0] already written
        self._queued = 0
        self._partial = b""  # grep's last, incomplete output line
        self._skip_rest = False  # inside an over-long output line: drop until its newline
        self.closing = False
        self.in_open = True
        self.out_open = True
        self.yield_nice: int | None = None  # the group's nice value while grep yields to the job (_lower_priority)
        self.group_niced = False  # the group is at that value now (not while grep catches up: _pace)
        self.catch_ups = 0  # times grep fell CATCH_UP_BYTES behind and took its full share until it caught up
        self._ended = False
        self._next_pace = 0.0
        try:
            self.proc = _spawn(system, [grep, "-a", "-n", "-A", "2", "-E", "-f", self.pfile], None, {"LC_ALL": "C"},
                               stdin_pipe=True)
        except (OSError, ValueError):
            self._unlink()
            raise
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.in_fd, self.out_fd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.in_fd, False)  # our own pipe: a full one never stalls the pass-through
        _grow_pipe(self.in_fd)
        _grow_pipe(self.out_fd)

    def feed(self, data: bytes, replaced: bool = False) -> None:
        """Queue a block for grep (``replaced``: already only the newlines of a block nobody will scan)."""
        if not replaced and self._queued + len(data) > MIDDLE_QUEUE:
            self.skipped_bytes += len(data)
            data = b"\n" * data.count(b"\n")
        if data:  # small blocks are gathered: one write to grep (and one wake-up of grep) per FEED_MIN
            self._small.append(data)
            self._small_bytes += len(data)
            self._queued += len(data)
            if self._small_bytes >= FEED_MIN:
                self._flush_small()
        self._pace()

    def _flush_small(self) -> None:
        if self._small:  # as they are: one writev hands them to grep, no join (a copy of every byte of the middle)
            self._q.extend(self._small)
            self._small, self._small_bytes = [], 0

    @property
    def wants_write(self) -> bool:
        return self.in_open and bool(self._q)

    def on_writable(self) -> None:
        """Write what grep's pipe takes now (the queued blocks, several in one writev); close its stdin once
        everything (and the sentinel) is in."""
        q = self._q
        while q:
            bufs: list[bytes | memoryview] = [memoryview(q[0])[self._off:]]
            bufs += islice(q, 1, WRITEV_BLOCKS)
            want = sum(len(b) for b in bufs)
            try:
                n = os.writev(self.in_fd, bufs)
            except BlockingIOError:
                return
            except OSError:  # grep died: what is queued is lost, the numbering with it (counted at the end)
                q.clear()
                self._queued = 0
                self._off = 0
                break
            left = n
            while left:
                rest = len(q[0]) - self._off
                if left < rest:
                    self._off += left
                    break
                left -= rest
                self._queued -= len(q.popleft())
                self._off = 0
            if n < want:  # grep's pipe is full
                self._pace()
                return
        self._pace()
        if self.closing:
            self._close_in()

    def _close_in(self) -> None:
        if self.in_open:
            self.in_open = False
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass

    def on_readable(self) -> None:
        try:
            data = os.read(self.out_fd, PIPE_SIZE)
        except OSError:
            data = b""
        if not data:
            self.out_open = False
            return
        lines = data.split(b"\n")
        lines[0] = self._partial + lines[0] if not self._skip_rest else b""
        if self._skip_rest and len(lines) > 1:
            self._skip_rest = False
            lines = lines[1:]
        elif self._skip_rest:
            return
        self._partial = lines.pop()
        if len(self._partial) > 2 * MAX_KEPT_LINE:  # an endless matching line: keep its start only
            self._take(self._partial)
            self._partial, self._skip_rest = b"", True
        for raw in lines:
            self._take(raw)

    def _take(self, raw: bytes) -> None:
        """One line of grep's output: ``N:line`` (selected), ``N-line`` (context after a selected line) or ``--``."""
        c, d = raw.find(b":", 0, 24), raw.find(b"-", 0, 24)
        k = c if d < 0 or 0 <= c < d else d
        if k <= 0 or not raw[:k].isdigit():
            return
        n, rest = int(raw[:k]), raw[k + 1:]
        if k == d:  # context: kept with the line it follows, when that was kept
            if n - self._kept_at <= 2:
                self._keep(n, rest)
            return
        if rest == _SENTINEL_B:
            self.newlines = n - 2  # fed + "\n" + sentinel: the sentinel is line newlines + 2
            return
        shape = rest[:SHAPE_BYTES].translate(None, b"0123456789")
        seen = self._shapes.get(shape, 0)
        if seen >= SHAPE_KEEP:
            self.dropped_lines += 1
            return
        if len(self._shapes) >= MAX_SHAPES:
            self._shapes.clear()
        self._shapes[shape] = seen + 1
        self._kept_at = n
        self._keep(n, rest)

    def _keep(self, n: int, rest: bytes) -> None:
        item = (n, rest[:MAX_KEPT_LINE])
        if len(self._first) < self.max_kept // 2:
            self._first.append(item)
            return
        last = self._last
        if len(last) == last.maxlen:
            self.dropped_lines += 1
        last.append(item)

    @property
    def kept(self) -> list[tuple[int, bytes]]:
        """(grep's line number, line) of the kept lines, in order (the keep policy: the class's docstring)."""
        return self._first + list(self._last)

    def close_input(self) -> None:
        """Everything is fed: the sentinel goes last; grep's stdin closes once the queue is written."""
        if not self.closing:
            self.closing = True
            self._flush_small()
            self._q.append(b"\n" + SENTINEL.encode() + b"\n")  # never dropped: it carries the count

    def drain(self, timeout: float = 30.0, cancel: threading.Event | None = None) -> None:
        """Finish on our own (no more output to pass through): write the rest, read all of grep's output
        (unless ``cancel`` is set meanwhile: then grep is stopped where it is)."""
        import select

        self.close_input()
        end = time.monotonic() + timeout
        while self.out_open and time.monotonic() < end and not (cancel is not None and cancel.is_set()):
            want = [self.out_fd]
            wr = [self.in_fd] if self.wants_write else []
            if not wr and self.in_open:
                self._close_in()
            try:
                r, w, _ = select.select(want, wr, [], max(0.0, end - time.monotonic()))
            except InterruptedError:  # pragma: no cover - PEP 475 retries
                continue
            if w:
                self.on_writable()
            if r:
                self.on_readable()
        self.stop()

    def yielding(self, nice: int | None) -> None:
        """grep's group was made nicer (``nice``; None: it could not be) as it started."""
        self.yield_nice = nice
        self.group_niced = nice is not None
        self._next_pace = time.monotonic() + PACE_S

    def _pace(self) -> None:
        """grep yields to the job, unless it falls more than CATCH_UP_BYTES behind: then its group takes its full
        share (nice 0) until it is within a quarter of that again.  The queue it falls behind by is gpuvet's memory
        (up to MIDDLE_QUEUE) and, at the end, gpuvet's exit, which frees it: on the loaded VM, a yielding grep that
        was let fall behind without this held ~60 MB more at a flooding job's end, and the run ended ~30 ms later."""
        if self.yield_nice is None or self._ended:
            return
        behind = self._queued
        if self.group_niced and behind > CATCH_UP_BYTES:
            nice = 0
        elif not self.group_niced and behind <= CATCH_UP_BYTES // 4:
            nice = self.yield_nice
        else:
            return
        now = time.monotonic()
        if now < self._next_pace:  # an unprivileged process gets EAGAIN for a change within 100 ms of the last
            return
        self._next_pace = now + PACE_S
        if _set_group_nice(self.proc.pid, nice):
            self.group_niced = nice != 0
            self.catch_ups += nice == 0

    def job_ended(self) -> None:
        """The job's output has ended: grep's group back to the nice value it started with (once)."""
        self._ended = True
        if self.group_niced:
            self.group_niced = False
            _restore_group(self.proc.pid)

    def stop(self) -> None:
        self._close_in()
        if self.proc.poll() is None and self.out_open:
            _killpg(self.proc.pid, signal.SIGKILL)
        _await_exit(self.proc.pid, 5.0)  # grep has closed its output: it is exiting
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _killpg(self.proc.pid, signal.SIGKILL)
        try:
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        except OSError:
            pass
        self._unlink()

    def _unlink(self) -> None:
        try:
            os.unlink(self.pfile)
        except OSError:
            pass


class Capture:
    """The child's output in bounded memory: the head (the first ``cap/2`` bytes), the tail (a ring of the
    blocks read, whole: nothing is copied or sliced while the job runs; it may hold one block more than
    ``cap/2`` until ``trim``), and the lines of the omitted middle that the signatures' prefilter picks.
    Evicted blocks go to ``on_evict`` (the pump hands them to grep)."""

    def __init__(self, cap: int = DEFAULT_LOG_CAP):
        self.head_cap = max(1, cap // 2)
        self.tail_cap = max(1, cap - self.head_cap)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_bytes = 0
        self.total = 0
        self._lines = 0  # newlines seen (counted when first asked for: see finish)
        self.evicted = 0  # bytes dropped from the middle
        self.middle_lines = 0  # newlines in the omitted middle
        self.unscanned = 0  # bytes of the middle the prefilter never saw (it fell too far behind): only counted
        self._middle_first_line = 0  # line number of the middle's first byte (once there is a middle)
        self._kept: list[tuple[int, bytes]] = []  # (line number, line) of the middle
        self._scan_kept: list[tuple[int, bytes]] = []  # the prefilter's, numbered from the middle's first line
        self._counted = True  # nothing to count yet
        self.on_evict: Callable[[bytes], None] | None = None
        self.last = b"\n"
        self.closed = False  # finished: nothing more is added
        self.lock = threading.Lock()

    @property
    def ends_with_newline(self) -> bool:
        return self.last == b"\n"

    def add(self, data: bytes) -> None:
        if not data:
            return
        self.last = data[-1:]
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            if len(data) <= room:
                return
            data = data[room:]
        tail = self.tail
        tail.append(data)
        self.tail_bytes += len(data)
        while self.tail_bytes - len(tail[0]) >= self.tail_cap:  # whole blocks only: no copy
            self._evict(tail.popleft())

    def trim(self) -> None:
        """The end of the output: cut the tail to exactly ``cap/2`` bytes (the cut goes to the middle)."""
        excess = self.tail_bytes - self.tail_cap
        if excess > 0:
            blk = self.tail.popleft()
            self._evict(blk[:excess])
            self.tail.appendleft(blk[excess:])

    def _evict(self, blk: bytes) -> None:
        self.tail_bytes -= len(blk)
        self.evicted += len(blk)
        if self.on_evict is not None:
            self.on_evict(blk)
        else:
            self.middle_lines += blk.count(b"\n")

    def finish(self, scan: MiddleScan | None = None) -> None:
        """The output has ended (``scan``: the prefilter that read the middle, finished).  The caller holds
        ``lock``.  Counting the lines of the head and the tail (8 MB at the default cap: ~10 ms) waits until
        someone asks (``lines``, ``kept``, ``blocks``: the failure path); a job that succeeded never pays it."""
        if scan is not None:
            self.middle_lines = scan.newlines
            self.unscanned += scan.skipped_bytes
            self._scan_kept = scan.kept
        self._counted = False

    def _count(self) -> None:
        if not self._counted:
            self._counted = True
            head_nl = self.head.count(b"\n")
            self._middle_first_line = head_nl + 1
            self._kept = [(self._middle_first_line + n - 1, ln) for n, ln in self._scan_kept]
            self._lines = head_nl + self.middle_lines + sum(b.count(b"\n") for b in self.tail)

    @property
    def lines(self) -> int:
        """Lines in the whole output (its newlines), once finished."""
        self._count()
        return self._lines

    @property
    def middle_first_line(self) -> int:
        self._count()
        return self._middle_first_line

    @property
    def kept(self) -> list[tuple[int, bytes]]:
        """(line number in the whole output, line) of the omitted middle's lines the prefilter picked."""
        self._count()
        return self._kept

    def tail_bytes_joined(self) -> bytes:
        return b"".join(self.tail)

    def regions(self) -> tuple[bytes, list[tuple[int, bytes]], tuple[int, bytes] | None]:
        """(the head: whole lines from line 1 (all of the output when nothing was omitted), the middle's kept
        lines with their numbers, the tail's whole lines with the number of the first: None when nothing was
        omitted or the tail holds no whole line)."""
        with self.lock:
            head = bytes(self.head)
            tail = self.tail_bytes_joined()
            if not self.evicted:
                return head + tail, [], None
            hcut = head.rfind(b"\n") + 1
            first_nl = tail.find(b"\n")  # the tail's first line is partial
            rest = (self.lines - tail.count(b"\n") + 2, tail[first_nl + 1:]) if first_nl >= 0 else None
            return head[:hcut], list(self.kept), rest

    def blocks(self) -> list[tuple[int, bytes]]:
        """(first line number, block of whole lines) to scan: the head, the kept middle lines, the tail."""
        with self.lock:
            head = bytes(self.head)
            tail = self.tail_bytes_joined()
            out: list[tuple[int, bytes]] = []
            if not self.evicted and not tail:
                return [(1, head)] if head else []
            if not self.evicted:
                return [(1, head + tail)]
            hcut = head.rfind(b"\n") + 1
            out.append((1, head[:hcut]))
            for n, ln in self.kept:
                out.append((n, ln + b"\n"))
            first_nl = tail.find(b"\n")  # the tail's first line is partial
            if first_nl >= 0:
                out.append((self.lines - tail.count(b"\n") + 2, tail[first_nl + 1:]))
            return out

    def log_bytes(self) -> bytes:
        """output.log: everything when it fits, else head + a marker + tail."""
        with self.lock:
            tail = self.tail_bytes_joined()
            if not self.evicted:
                return bytes(self.head) + tail
            marker = (f"\n[gpuvet: {self.evicted} bytes of output omitted here; output.log keeps the first "
                      f"{len(self.head)} and the last {len(tail)} bytes of {self.total} (--log-cap)]\n").encode()
            return bytes(self.head) + marker + tail




# ----------------------------------------------------------------------------------------- streams
class Sink:
    """Write the child's bytes to one of our streams, in blocks.  A closed or broken stream is dropped
    (the child keeps running and its output is still captured), never an exception."""

    def __init__(self, stream: Any):
        self.stream = stream
        self.fd: int | None = None
        self.dead = stream is None
        self.lock = threading.Lock()
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
            try:
                fd = stream.fileno()
                os.fstat(fd)
                self.fd = fd
            except (OSError, ValueError, AttributeError, TypeError):  # StringIO in tests, or a closed fd
                self.fd = None
                if getattr(stream, "closed", False):
                    self.dead = True

    def write(self, data: bytes) -> None:
        if self.dead:
            return
        with self.lock:
            try:
                if self.fd is not None:
                    view = memoryview(data)
                    while view:
                        n = os.write(self.fd, view)
                        view = view[n:]
                else:
                    buf = getattr(self.stream, "buffer", None)
                    if buf is not None:
                        buf.write(data)
                        buf.flush()
                    else:
                        self.stream.write(data.decode("utf-8", "replace"))
            except (OSError, ValueError, AttributeError):  # EPIPE, EBADF, closed: stop writing there
                self.dead = True

    def text(self, message: str) -> None:
        self.write(message.encode("utf-8", "replace"))


# ----------------------------------------------------------------------------------------- supervise
class Outcome:
    """How a supervised command ended.  (A plain class, not a dataclass: ``dataclasses`` imports ``inspect``,
    which costs `gpuvet run` more start-up than all of the supervision code.)"""

    def __init__(self, argv: list[str], returncode: int | None = None, signal: int | None = None,
                 timed_out: bool = False, started_error: str | None = None, forwarded: int | None = None,
                 seconds: float = 0.0, backtrace: str = "", capture: Capture | None = None):
        self.argv = argv
        self.returncode = returncode
        self.signal = signal
        self.timed_out = timed_out
        self.started_error = started_error
        self.forwarded = forwarded  # a signal gpuvet received and passed on
        self.seconds = seconds
        self.backtrace = backtrace
        self.capture = capture

    @property
    def failed(self) -> bool:
        return self.timed_out or self.started_error is not None or (self.returncode or 0) != 0

    @property
    def exit_status(self) -> int:
        if self.started_error is not None:
            return 127
        if self.timed_out:
            return 124
        if self.signal:
            return 128 + self.signal
        return int(self.returncode or 0)

    def describe(self) -> str:
        if self.started_error:
            return f"could not start: {self.started_error}"
        if self.timed_out:
            return f"still running after the timeout ({self.seconds:.1f}s): stopped"
        if self.signal:
            return f"killed by signal {_signame(self.signal)}"
        return f"exited with status {self.returncode}"


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _Forwarder:
    """Install handlers for SIGINT/SIGTERM/SIGHUP that pass the signal to the child's group (main thread only)."""

    def __init__(self, grace: float):
        self.grace = grace
        self.pid: int | None = None
        self.received: int | None = None
        self.old: dict[int, Any] = {}
        self.timer: threading.Timer | None = None

    def __enter__(self) -> "_Forwarder":
        if threading.current_thread() is threading.main_thread():
            for sig in FORWARDED:
                try:
                    if signal.getsignal(sig) == signal.SIG_IGN:
                        continue  # ignored on entry (nohup, a background job): stays ignored, as for the job alone
                    self.old[sig] = signal.signal(sig, self._handle)
                except (ValueError, OSError):
                    pass
        return self

    def _handle(self, sig: int, frame) -> None:
        again = self.received is not None
        self.received = sig
        if self.pid is None:
            return
        _killpg(self.pid, signal.SIGKILL if again else sig)  # a second signal: no more waiting
        if self.timer is None:
            pid = self.pid
            self.timer = threading.Timer(self.grace, lambda: _killpg(pid, signal.SIGKILL))
            self.timer.daemon = True
            self.timer.start()

    def __exit__(self, *exc) -> None:
        if self.timer is not None:
            self.timer.cancel()
        for sig, old in self.old.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError, TypeError):
                pass


class _Pump:
    """The one I/O loop, in one thread (so the main thread stays free for the time-out and the signals even
    while a stalled reader of ours blocks a write): ``poll`` over the child's stdout and stderr and, once the
    output overflows the cap, grep's pipes.  Reads are up to 1 MiB (the child's pipes are grown to 1 MiB),
    each block goes straight to its stream with ``os.write`` and, by reference, into the capture; no line is
    looked at here."""

    def __init__(self, streams: list[tuple[int, Sink]], cap: Capture,
                 middle: Callable[[], MiddleScan | None] | None, follows: Sequence[Follow] = (), pgid: int = 0):
        self.streams = dict(streams)
        self.follows = list(follows)  # files the job writes straight into: read back from their ``pos``
        self.pgid = pgid  # the job's process group: whether one of them still writes into a followed file
        self.job_ended = threading.Event()
        # the job's end wakes the loop: a followed file is then read to its end, and a gathering pause (COALESCE_S)
        # under way ends at once (the job's last output goes out, and gpuvet exits, without waiting it out)
        try:
            self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:  # out of descriptors: a followed file is then read every FOLLOW_MS, the pause is a sleep
            self._wake_r = self._wake_w = -1
        self.cap = cap
        self.middle = middle
        self.scan: MiddleScan | None = None
        self._starting: threading.Thread | None = None
        self._started: list[MiddleScan | None] = []  # filled by the starter thread
        self._pending: list[tuple[bytes, bool]] = []  # evicted before grep was ready (block, replaced)
        self._pending_bytes = 0
        self._count_here = middle is None  # no prefilter: count the middle's newlines ourselves
        self.streams_done = threading.Event()
        self.done = threading.Event()
        self.middle_unneeded = threading.Event()  # the job succeeded: grep's picks will never be read
        self.thread = threading.Thread(target=self._run, name="gpuvet-run-pump", daemon=True)
        cap.on_evict = self._evict

    def skip_middle(self) -> None:
        """The job succeeded, so no diagnosis will read the middle's lines: at the end, stop grep instead of
        waiting for it to finish the queued middle (milliseconds on the exit path of every long, successful
        run).  The capture's middle line count is then unknown (0); only the failure path reads it."""
        self.middle_unneeded.set()
        scan = self.scan
        if scan is not None and self.streams_done.is_set():
            scan.job_ended()  # (its exit needs the CPU: not at the nicer group's pace)
            _killpg(scan.proc.pid, signal.SIGKILL)  # wakes a drain already under way

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        """The wake-up pipe's descriptors, once the loop is over (``done``)."""
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def end_of_job(self) -> None:
        """The job has exited (reaped): a followed file is read to its end, and done once no process of the job's
        group holds it any more (a pipe says so by its end of file; a file cannot)."""
        self.job_ended.set()
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"x")
            except OSError:
                pass

    def _follow(self, f: Follow, buf: bytearray, view: memoryview) -> int:
        """Read what the job added to followed file ``f`` since the last round (at most FOLLOW_ROUND) into the
        capture; bytes read."""
        cap = self.cap
        got = 0
        while got < FOLLOW_ROUND and f.rfd >= 0:
            try:
                n = os.preadv(f.rfd, (buf,), f.pos)
            except OSError:  # an I/O error reading it back: the job's output still reaches the file
                f.close()
                break
            if not n:
                try:
                    size = os.fstat(f.rfd).st_size
                except OSError:
                    break
                if size < f.pos:  # truncated under the job (copytruncate, `: > log`): go on where it writes now
                    f.truncated += 1
                    f.pos = 0
                    if not f.append:  # the job writes on at its own offset (shared with gpuvet's descriptor)
                        try:
                            f.pos = os.lseek(f.wfd, 0, os.SEEK_CUR)
                        except OSError:
                            f.pos = size
                break
            f.pos += n
            got += n
            chunk = view[:n].tobytes()
            with cap.lock:
                if not cap.closed:
                    cap.add(chunk)
        return got

    # the middle -------------------------------------------------------------------------------------------
    def _evict(self, blk: bytes) -> None:
        if self.scan is not None:
            self.scan.feed(blk)
            return
        if self._count_here:
            self.cap.middle_lines += blk.count(b"\n")
            return
        if self._starting is None:  # the first eviction: load the patterns and start grep off this thread
            assert self.middle is not None
            factory = self.middle

            def start() -> None:
                # loading the patterns is ~30-140 ms of Python (the KB table, the model package it imports)
                # while the pump passes output through: with the default 5 ms switch interval every system
                # call of the pump's (poll, read, write) waited up to 5 ms for the GIL, a ~15 ms round per
                # 1 MiB read, slower than a log-heavy job fills its pipe: the job blocked.  A short interval
                # while it loads gives the GIL back to the pump within PREFILTER_SWITCH_S.
                old = sys.getswitchinterval()
                sys.setswitchinterval(min(old, PREFILTER_SWITCH_S))
                try:
                    scan = factory()
                    if scan is not None:
                        scan.yielding(_lower_priority(scan.proc.pid))
                    self._started.append(scan)
                except Exception:  # noqa: BLE001 - without it the middle lines are not kept; the run goes on
                    self._started.append(None)
                finally:
                    sys.setswitchinterval(old)

            self._starting = threading.Thread(target=start, name="gpuvet-run-prefilter", daemon=True)
            self._starting.start()
        replaced = self._pending_bytes + len(blk) > MIDDLE_QUEUE
        if replaced:
            self.cap.unscanned += len(blk)
            blk = b"\n" * blk.count(b"\n")
        self._pending.append((blk, replaced))
        self._pending_bytes += len(blk)

    def _adopt(self) -> None:
        """The starter thread has finished: hand the pending blocks to grep (or count them)."""
        scan = self._started[0]
        if scan is None:
            self._count_here = True
            self.cap.middle_lines += sum(b.count(b"\n") for b, _ in self._pending)
        else:
            for blk, replaced in self._pending:
                scan.feed(blk, replaced)
            self.scan = scan
        self._pending, self._pending_bytes = [], 0

    # the loop ---------------------------------------------------------------------------------------------
    def _run(self) -> None:
        import select

        cap, streams = self.cap, self.streams
        # a read takes what the pipe holds (FIONREAD), into a block of that size, which is passed on and kept as it is:
        # one copy of each byte (os.read(fd, 1 MiB) would map, fault in and unmap a fresh 1 MiB each time; a read into
        # one reused buffer needs a second copy out of it).  The buffer serves where FIONREAD does not answer, and the
        # followed files
        buf = bytearray(PIPE_SIZE)
        view = memoryview(buf)
        available = _pipe_counter()
        poller = select.poll()
        for fd in streams:
            _grow_pipe(fd)
            poller.register(fd, select.POLLIN)
        follows = list(self.follows)
        if follows and self._wake_r >= 0:
            poller.register(self._wake_r, select.POLLIN)
        nap = select.poll()  # the gathering pause: COALESCE_S, or until the job's end (end_of_job)
        if self._wake_r >= 0:
            nap.register(self._wake_r, select.POLLIN)
        scan_in = scan_out = behind = False
        try:
            while streams or follows:
                if self.scan is None and self._started:
                    self._adopt()
                scan = self.scan
                if scan is not None:
                    if not scan_out and scan.out_open:
                        poller.register(scan.out_fd, select.POLLIN)
                        scan_out = True
                    if scan.wants_write != scan_in:
                        if scan_in:
                            poller.unregister(scan.in_fd)
                        else:
                            poller.register(scan.in_fd, select.POLLOUT)
                        scan_in = not scan_in
                # while grep is being started, look again soon for it to be adopted
                wait = 50 if (self._starting is not None and self.scan is None and not self._count_here) else None
                if follows:
                    wait = 0 if behind else (FOLLOW_MS if wait is None else min(wait, FOLLOW_MS))
                got = 0
                for fd, ev in poller.poll(wait):
                    if fd == self._wake_r:
                        try:
                            os.read(fd, 64)
                        except OSError:
                            pass
                        continue
                    sink = streams.get(fd)
                    if sink is not None:
                        try:
                            avail = available(fd) if available is not None else -1
                            if avail > 0:
                                chunk = os.read(fd, min(avail, MAX_READ))
                                n = len(chunk)
                            else:  # the end of the output (or no FIONREAD here)
                                n = os.readv(fd, (buf,))
                                chunk = view[:n].tobytes()
                        except BlockingIOError:  # pragma: no cover - a spurious wake-up
                            continue
                        except OSError:
                            n = 0
                        if not n:
                            poller.unregister(fd)
                            del streams[fd]
                            continue
                        sink.write(chunk)
                        got += len(chunk)
                        with cap.lock:
                            if not cap.closed:
                                cap.add(chunk)
                    elif scan is not None and fd == scan.out_fd:
                        scan.on_readable()
                        if not scan.out_open:
                            poller.unregister(fd)
                            scan_out = False
                    elif scan is not None and fd == scan.in_fd:
                        if ev & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                            scan.in_open = False  # grep is gone
                        else:
                            scan.on_writable()
                        if not scan.wants_write:
                            poller.unregister(fd)
                            scan_in = False
                if follows:
                    ended = self.job_ended.is_set()  # before the read: what the job wrote last is then read
                    behind = False
                    for f in follows:
                        behind = self._follow(f, buf, view) >= FOLLOW_ROUND or behind
                    if ended and not streams and not _group_holds(self.pgid, [f.key for f in follows if f.rfd >= 0]):
                        for f in follows:
                            self._follow(f, buf, view)
                        follows = []
                if 0 < got < COALESCE_BYTES and COALESCE_S > 0 and not self.job_ended.is_set():
                    # a child writing line by line (stderr, `print(flush=True)`, `python -u`) would wake us
                    # for every line: let a little gather in the (1 MiB) pipe first; at most ~4 ms later
                    if self._wake_r >= 0:
                        nap.poll(COALESCE_S * 1000)
                    else:
                        time.sleep(COALESCE_S)
        finally:
            self.streams_done.set()
            for f in self.follows:
                f.close()
        try:
            with cap.lock:
                if not cap.closed:
                    cap.trim()
            if self._starting is not None:
                self._starting.join(60)
                if self.scan is None and self._started:
                    self._adopt()
            if self.scan is not None:
                self.scan.job_ended()
                if self.middle_unneeded.is_set():
                    self.scan.stop()
                else:
                    self.scan.drain(cancel=self.middle_unneeded)
            with cap.lock:
                if not cap.closed:
                    cap.closed = True
                    cap.finish(self.scan)
        finally:
            self.done.set()


MAX_READ = 4 * PIPE_SIZE  # the most one read takes (a pipe grown past PIPE_SIZE by someone else)


def _pipe_counter() -> Callable[[int], int] | None:
    """A function that says how many bytes a pipe holds (-1: it cannot tell), from the FIONREAD ioctl (Linux, the
    BSDs, macOS); None without it."""
    try:
        import fcntl
        import termios

        req = int(termios.FIONREAD)
    except (ImportError, AttributeError):  # pragma: no cover - every POSIX CPython has them
        return None
    ioctl, zero, order = fcntl.ioctl, b"\0\0\0\0", sys.byteorder

    def available(fd: int) -> int:
        try:
            return int.from_bytes(ioctl(fd, req, zero), order, signed=True)
        except OSError:
            return -1

    return available


GREP_NICE = 10  # the middle's grep runs this much nicer than gpuvet: on a busy machine it yields to the job


def _lower_priority(pid: int) -> int | None:
    """The prefilter of the running job's middle is gpuvet's bulk CPU (~0.2 s per 60 MB): on a machine whose cores
    are all busy (data loaders, other jobs) it waits for the job rather than competing with it.  Should it fall
    more than MIDDLE_QUEUE behind, the rest of the middle is only counted (``run.output_unscanned_bytes``).

    Its nice value alone did not do that where the scheduler groups tasks by session (autogroups,
    ``kernel.sched_autogroup_enabled``, on in this project's VM; see sched(7)): a task's nice value only weighs
    against the tasks of its own group, and grep leads a session of its own (a group of one), which got a full share
    of a busy CPU against the job's group (on the 2-CPU VM, a job sharing one CPU with such a grep ran 33% longer;
    with its group's nice value at 10, 5%).  So the group's nice value is set too (``/proc/PID/autogroup``), only where grep
    leads its session: a group shared with anything else (the user's terminal session) is never touched.  The group's
    value when it was set, else None (:func:`_restore_group` undoes it once the job has ended; ``MiddleScan._pace``
    lifts it while grep catches up)."""
    try:
        nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + GREP_NICE)
        os.setpriority(os.PRIO_PROCESS, pid, nice)
        if os.getsid(pid) != pid:
            return None
    except (OSError, AttributeError):
        return None
    return nice if _set_group_nice(pid, nice) else None


def _set_group_nice(pid: int, nice: int) -> bool:
    try:
        with open(f"/proc/{pid}/autogroup", "w") as fh:
            fh.write(str(nice))
        return True
    except OSError:  # no autogroups in this kernel, not ours to change, or EAGAIN (an unprivileged process's change
        return False  # within 100 ms of the last one): the task's nice value is all there is


def _restore_group(pid: int) -> None:
    """The job has ended: grep no longer competes with it, and what is left of its work is gpuvet's end (finishing
    the middle for a diagnosis, or dying when killed: a killed process still needs the CPU to exit, which a nice-10
    group on a busy CPU got ~100-200 ms late; the VM's successful runs ended that much later).  Its group's nice value
    goes back to 0 (raising a value is allowed to anyone, lowering it back to 0 too)."""
    _set_group_nice(pid, 0)


def _child_stdin(stdin: Any) -> Any:
    """The child reads gpuvet's own standard input (``echo hi | gpuvet run -- cat``); a stream without a file
    descriptor (a closed one, or a test's StringIO) gives it /dev/null."""
    if stdin is None or getattr(stdin, "closed", False):
        return subprocess.DEVNULL
    try:
        fd = stdin.fileno()
        os.fstat(fd)
        return fd
    except (OSError, ValueError, AttributeError, TypeError):
        return subprocess.DEVNULL


class _Spawned:
    """What ``run_child`` needs of a ``Popen``, for a job ``run_start.start`` started before ``subprocess`` was
    imported: ``pid``, ``returncode`` (negative for a signal, as Popen's), ``poll``, ``wait(timeout)`` (woken by
    the job's pidfd, raising ``subprocess.TimeoutExpired``) and the two pipes as unbuffered files."""

    def __init__(self, started: Started, argv: Sequence[str]):
        self.pid = started.pid
        self.args = list(argv)
        self.returncode: int | None = None
        self.stdout = open(started.out_fd, "rb", buffering=0) if started.out_fd >= 0 else None
        self.stderr = open(started.err_fd, "rb", buffering=0) if started.err_fd >= 0 else None

    def _reap(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere: nothing more to learn
                self.returncode = 0
                return 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            rc = self._reap(0)
            assert rc is not None
            return rc
        end = time.monotonic() + timeout
        while self.poll() is None:
            left = end - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            _await_exit(self.pid, left, fallback_sleep=0.01)
        assert self.returncode is not None
        return self.returncode


def run_child(argv: Sequence[str], env_vars: dict[str, str], out: Sink, err: Sink, timeout: float | None,
              on_hang: Callable[[int], str] | None = None, log_cap: int = DEFAULT_LOG_CAP,
              grace: float = GRACE_S, middle: Callable[[], MiddleScan | None] | None = None,
              stdin: Any = None, system: System | None = None, started: Started | None = None) -> Outcome:
    """Run ``argv`` (through ``system``, the machine by default); pass its output to ``out``/``err``; capture
    it; return how it ended.  ``stdin``: the stream the child reads (gpuvet's own; /dev/null when it has no
    file descriptor).  ``started``: the job is already running (``run_start.start``: ``argv``, ``env_vars`` and
    ``stdin`` were used then); its forwarded signals are blocked until the handlers are in place.  A stream of
    ours that is a regular file the job writes straight into (``run_start.follow_file``) is read back from it."""
    oc = Outcome(list(argv))
    cap = Capture(log_cap)
    oc.capture = cap
    t0 = started.t0 if started is not None else time.monotonic()
    follows: list[Follow] = []
    with _Forwarder(grace) as fwd:
        proc: Any
        try:
            if started is not None:
                follows = started.follows
                if started.error is not None:
                    raise OSError(errno.ENOENT, started.error)
                started.adopted = True
                proc = _Spawned(started, argv)
            else:
                # straight into our own files only on the real machine (an injected System spawns with pipes)
                plan = plan_follows((out.fd, err.fd), env_vars) if system is None else [None, None]
                follows = unique_follows(plan)
                proc = _spawn(system, argv, env_vars, stdin=_child_stdin(stdin), stderr_pipe=True,
                              stdout_fd=out.fd if plan[0] is not None else None,
                              stderr_fd=err.fd if plan[1] is not None else None)
        except (OSError, ValueError) as exc:
            oc.started_error = getattr(exc, "strerror", None) or str(exc)
            for f in follows:
                f.close()
            if started is not None:
                started.unblock()
            return oc
        fwd.pid = proc.pid
        if started is not None:
            started.unblock()  # a signal that came in meanwhile is handled (forwarded) now
            if timeout is not None:
                timeout = max(0.0, timeout - (time.monotonic() - t0))
        if fwd.received is not None:  # a signal arrived while starting
            _killpg(proc.pid, fwd.received)
        pipes = [(f.fileno(), sink) for f, sink in ((proc.stdout, out), (proc.stderr, err)) if f is not None]
        pump = _Pump(pipes, cap, middle, follows, proc.pid)
        pump.start()
        try:
            try:
                proc.wait(timeout=timeout)
                if proc.returncode == 0 and fwd.received is None:
                    pump.skip_middle()
            except subprocess.TimeoutExpired:
                if fwd.received is None:
                    oc.timed_out = True
                    if on_hang is not None:
                        try:
                            oc.backtrace = on_hang(proc.pid)
                        except Exception as exc:  # a debugger problem must not hide the diagnosis
                            oc.backtrace = f"backtrace failed: {exc}"
                _stop(proc)
        finally:
            if proc.returncode is None:  # an exception on our side: never leave the child behind
                _stop(proc, term_wait=1.0)
            pump.end_of_job()
            # grandchildren that still hold the pipes (or a followed file) open: the whole group goes with the child
            if not pump.streams_done.wait(1.0):
                _killpg(proc.pid, signal.SIGTERM)
                if not pump.streams_done.wait(2.0):
                    _killpg(proc.pid, signal.SIGKILL)
                    pump.streams_done.wait(2.0)
                # their pipes close early in their exit: wait until the group is really gone (gpuvet exits
                # right after this, and nothing of the job may outlive it)
                _await_group_gone(proc.pid, 2.0)
            if pump.streams_done.is_set():
                pump.done.wait(60)  # grep finishing the middle
            with cap.lock:
                if not cap.closed:  # the pump is stuck (a write to a reader that stopped reading): go on
                    cap.closed = True
                    cap.finish(None)
            if pump.done.is_set():
                pump.close()
                for f in (proc.stdout, proc.stderr):
                    try:
                        if f is not None:
                            f.close()
                    except OSError:
                        pass
        oc.forwarded = fwd.received
    oc.seconds = time.monotonic() - t0
    rc = proc.returncode
    if rc is not None and rc < 0:
        oc.signal = -rc
    oc.returncode = rc
    return oc


def _await_group_gone(pgid: int, timeout: float) -> None:
    """Until no process of group ``pgid`` is left but zombies (which their new parent reaps whenever it does),
    at most ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not _group_alive(pgid):
            return
        time.sleep(0.002)


def _group_pids(pgid: int) -> Iterator[str]:
    """The pids (as /proc names them) of group ``pgid``'s live processes, zombies left out, read from
    /proc/<pid>/stat.  Raises OSError (on the first ``next``) when /proc cannot be listed: the callers cannot tell."""
    pids = [d for d in os.listdir("/proc") if d.isdigit()]
    want = str(pgid).encode()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold anything
        except (OSError, IndexError):  # gone meanwhile
            continue
        if len(fields) > 2 and fields[2] == want and fields[0] != b"Z":
            yield pid


def _group_holds(pgid: int, keys: Sequence[tuple[int, int]]) -> bool:
    """Whether a live process of group ``pgid`` (the job's, after the job itself has exited) has one of the files
    ``keys`` ((device, inode)) open: it may still write into a followed file.  True where it cannot tell."""
    if not keys or not pgid:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False  # the group is gone: the usual case, one system call
    except PermissionError:
        pass
    want = set(keys)
    try:
        for pid in _group_pids(pgid):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except FileNotFoundError:
                continue
            except OSError:
                return True  # not ours to look into: assume it writes there
            for fd in fds:
                try:
                    st = os.stat(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) in want:
                    return True
    except OSError:  # /proc unreadable
        return True
    return False


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is alive, not a zombie (from /proc; True where it cannot tell)."""
    try:
        return next(_group_pids(pgid), None) is not None
    except OSError:
        return True


def _stop(proc: subprocess.Popen, term_wait: float = 5.0) -> None:
    for sig, wait in ((signal.SIGTERM, term_wait), (signal.SIGKILL, 5.0)):
        _killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ----------------------------------------------------------------------------------------- bundle
def _state_dir(environ) -> str:
    base = environ.get("XDG_STATE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "gpuvet", "crash")


def make_bundle_dir(requested: str | None, cwd: str, environ) -> tuple[str, str | None]:
    """Create the bundle directory (0700).  Returns (path, note): ``note`` says why it is not where it
    was asked for.  Raises OSError only when no place at all is writable."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"gpuvet-crash-{stamp}"
    first_error: str | None = None
    if requested:
        try:
            if not os.path.isdir(requested):
                os.makedirs(requested, mode=0o700)
            st = os.lstat(requested)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                raise OSError(errno.EPERM, "not a directory of this user")
            if not os.access(requested, os.W_OK | os.X_OK):
                raise OSError(errno.EACCES, "not writable")
            return requested, None
        except OSError as exc:
            first_error = f"cannot use {requested}: {exc.strerror or exc}"
    for parent in ([] if requested else [cwd]) + [_state_dir(environ)]:
        try:
            os.makedirs(parent, mode=0o700, exist_ok=True)
            for i in range(100):
                path = os.path.join(parent, name if i == 0 else f"{name}-{i}")
                try:
                    os.mkdir(path, 0o700)
                    return path, first_error
                except FileExistsError:
                    continue
        except OSError as exc:
            first_error = first_error or f"cannot write in {parent}: {exc.strerror or exc}"
    raise OSError(errno.EACCES, first_error or "no writable place for the crash bundle")


def write_private(bdir: str, name: str, data: bytes | str) -> None:
    """One bundle file: created 0600, never through a link, replaced if it exists."""
    path = os.path.join(bdir, name)
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    try:
        if os.path.islink(path):
            os.unlink(path)
    except OSError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def redacted_log(data: bytes) -> bytes:
    """The child's output with every secret masked, in blocks of whole lines (linear time)."""
    out = []
    step = 1 << 20
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", min(len(data), pos + step))
        end = len(data) if end < 0 else end + 1
        out.append(redact_text(data[pos:end].decode("utf-8", "replace")).encode("utf-8"))
        pos = end
    return b"".join(out)


def native_backtrace(system, pid: int) -> str:
    """Backtrace of a hung process: rocgdb / cuda-gdb / gdb when installed, plus py-spy for Python."""
    parts: list[str] = []
    for dbg in ("rocgdb", "cuda-gdb", "gdb"):
        if system.which(dbg):
            res = system.run([dbg, "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
                              "-ex", "thread apply all bt"], timeout=60)
            parts.append(f"$ {dbg} -p {pid} -batch -ex 'thread apply all bt'\n{res.output or res.describe()}")
            break
    else:
        parts.append("no debugger (rocgdb, cuda-gdb, gdb) installed: no native backtrace")
    if system.which("py-spy"):
        res = system.run(["py-spy", "dump", "--pid", str(pid)], timeout=30)
        parts.append(f"$ py-spy dump --pid {pid}\n{res.output or res.describe()}")
    return "\n\n".join(parts) + "\n"


def gpu_state(system) -> str:
    """gpu-state.txt: the GPU tools that are installed (only those), run at the same time, each with its time-out."""
    def one(argv: list[str]) -> str:
        res = system.run(argv, timeout=15)
        return f"$ {' '.join(argv)}\n{res.output or res.describe()}"

    waits = [_background(one, argv) for argv in (["nvidia-smi"], ["nvidia-smi", "-q"], ["rocm-smi"], ["amd-smi", "metric"])
             if system.which(argv[0])]
    parts = [w() for w in waits]
    return "\n\n".join(parts) + "\n" if parts else "no GPU state tool (nvidia-smi, rocm-smi, amd-smi) found\n"


# ----------------------------------------------------------------------------------------- use case
class RunResult:
    def __init__(self, exit_status: int, outcome: Outcome, bundle: str | None = None, report: Any = None,
                 messages: list[str] | None = None):
        self.exit_status = exit_status
        self.outcome = outcome
        self.bundle = bundle
        self.report = report
        self.messages: list[str] = messages if messages is not None else []


class RunEnv:
    """What the supervision needs of an :class:`~gpuvet.app.env.Environment` (the streams, the environment
    variables, the working directory), without importing it: `gpuvet run`'s fast start (``cli/fast.py``)
    passes one, and the failure path turns it into the real Environment (``full``)."""

    system_factory = None

    def __init__(self, stdin: Any, stdout: Any, stderr: Any, environ: Mapping[str, str], cwd: str,
                 started: Started | None = None):
        self.stdin, self.stdout, self.stderr, self.environ, self.cwd = stdin, stdout, stderr, environ, cwd
        self.started = started  # the job, already started with these (``run_start.start``), or None

    def full(self) -> "Environment":
        from .env import Environment

        return Environment(stdin=self.stdin, stdout=self.stdout, stderr=self.stderr, environ=self.environ,
                           cwd=self.cwd)


def _full_env(env: Any) -> "Environment":
    return env.full() if isinstance(env, RunEnv) else env


def run(opts: RunOptions, env: "Environment | RunEnv") -> RunResult:
    """The run use case: supervise, pass through, and on failure diagnose and write the bundle.  Messages
    for the user go to ``env.stderr`` (if it is open); the result's ``exit_status`` is the child's."""
    factory = getattr(env, "system_factory", None)
    system = factory() if factory is not None else None  # None: spawned as System.spawn does, without its import
    out, err = Sink(env.stdout), Sink(env.stderr)
    child_env = dict(env.environ)

    def machine():  # what the failure path asks the machine (debuggers, GPU state)
        return system if system is not None else _full_env(env).system()

    def middle(max_kept: int = MAX_KEPT_LINES) -> MiddleScan | None:
        import shutil

        grep = shutil.which("grep", path=env.environ.get("PATH") or os.defpath)
        if not grep:
            return None
        return MiddleScan(grep, middle_patterns(), system, max_kept)

    def hang(pid: int) -> str:
        return native_backtrace(machine(), pid)

    oc = run_child(opts.argv, child_env, out, err, opts.timeout, hang, opts.log_cap, opts.grace, middle,
                   stdin=env.stdin, system=system, started=getattr(env, "started", None))
    res = RunResult(oc.exit_status, oc)
    if oc.started_error is not None:
        err.text(redact_text(f"gpuvet: cannot run {opts.argv[0]}: {oc.started_error}\n"))
        return res
    if oc.forwarded is not None:
        err.text(f"gpuvet: received {_signame(oc.forwarded)} and passed it on; the command {oc.describe()}; "
                 "no crash bundle\n")
        return res
    if not oc.failed:
        return res
    env = _full_env(env)
    try:
        bdir, note = make_bundle_dir(opts.bundle, env.cwd, env.environ)
    except OSError as exc:
        err.text(redact_text(f"gpuvet: the command {oc.describe()}; no crash bundle: {exc.strerror or exc}\n"))
        return res
    if note:
        err.text(redact_text(f"gpuvet: {note}; the crash bundle goes to {bdir}\n"))
    res.bundle = bdir
    assert oc.capture is not None
    # what waits on tools (the live probes, nvidia-smi / rocm-smi for gpu-state.txt: up to seconds each) runs in
    # the background from now on, while the output is redacted and scanned (CPU work) in this thread
    live = None
    if opts.here:
        try:
            from gpuvet.app.facts import start_live_facts

            live = start_live_facts(env, deadline=6.0)
        except Exception:
            live = None
    gpu = _background(gpu_state, machine())
    write_private(bdir, "output.log", redacted_log(oc.capture.log_bytes()))
    debug_oc = None
    if opts.debug:
        err.text(f"gpuvet: {oc.describe()}; re-running with debug switches: "
                 f"{' '.join(f'{k}={v}' for k, v in DEBUG_ENV.items())}\n")
        debug_oc = run_child(opts.argv, dict(child_env, **DEBUG_ENV), out, err, opts.timeout, hang, opts.log_cap,
                             opts.grace, middle, stdin=env.stdin, system=system)
        if debug_oc.capture is not None:
            write_private(bdir, "debug-output.log", redacted_log(debug_oc.capture.log_bytes()))
    from gpuvet.logs.signatures import load_catalog

    try:
        res.report = _write_bundle(bdir, oc, debug_oc, env, machine(), opts.here, load_catalog(),
                                   lambda: middle(DIAG_GREP_LINES), live=live, gpu=gpu)
    except OSError as exc:
        err.text(redact_text(f"gpuvet: could not complete the crash bundle {bdir}: {exc.strerror or exc}\n"))
        return res
    report = res.report
    diags = report.extra.get("diagnoses") or []
    # an honest `none` first (rank._honest_none) blames nothing in the stack: the one line, as with no diagnosis
    if (not diags or diags[0].get("cause") == "none") and not report.extra.get("user_code_signals"):
        # a plain failure: nothing in the output points anywhere; one line, not the whole stack
        import textwrap  # wrapped to the terminal's width, like every other screen

        line = (f"gpuvet: the command {oc.describe()}; nothing in its output points at the GPU stack. "
                f"Crash bundle: {bdir} (gpuvet diagnose {os.path.join(bdir, 'output.log')} --here for the stack)")
        wrapped = textwrap.wrap(line, width=max(40, int(env.width or 80)), subsequent_indent="  ",
                                break_long_words=False, break_on_hyphens=False)
        err.text(redact_text("\n" + "\n".join(wrapped) + "\n"))
        return res
    from gpuvet.render import render

    report.extra["hide_stack"] = True  # the diagnosis and its evidence; the stack is in the bundle
    text = render(report, "terminal", color=False, width=env.width)
    err.text(redact_text(f"\ngpuvet: the command {oc.describe()}. Crash bundle: {bdir}\n{text}"))
    return res


# The diagnosis of a failed run is bounded whatever the job printed (a failing job that printed 8 MB of short
# lines took 2-4 s in the signatures' Python prefilter, ~3 MB/s on such lines): context hints on every line of
# the head's first HINT_BYTES but at most DIAG_HINT_LINES lines; the full Python scan (signatures, hints on
# candidate lines, error lines for the learned fallback, facts) over the DIAG_FULL_BYTES after that and the
# last DIAG_FULL_BYTES of the output (where a failure prints its error); the bytes between through the same
# grep prefilter as the omitted middle (every signature and fact pattern, at grep's speed), of which at most
# DIAG_GREP_LINES hits per region are scanned; of the middle's kept lines the first and last DIAG_MIDDLE_LINES/2.
DIAG_HINT_LINES = 1000
DIAG_FULL_BYTES = 128 * 1024
DIAG_GREP_LINES = 1000
DIAG_MIDDLE_LINES = 2000
RUN_FACT_BYTES = 256 * 1024


def _cut_at_line(block: bytes, pos: int) -> int:
    """The offset just after the last newline at or before ``pos`` (0 when there is none)."""
    if pos >= len(block):
        return len(block)
    return block.rfind(b"\n", 0, max(0, pos)) + 1


def _scan(oc: Outcome, catalog, extra_lines: Sequence[str] = (), prefilter: Callable[[], MiddleScan | None] | None = None):
    """Scan what the run kept (bounded: see DIAG_*).  ``prefilter``: starts a grep prefilter for the bulk
    between the fully scanned parts (None, or one that returns None: those bytes are scanned in Python)."""
    from gpuvet.app.diagnose import HINT_BYTES
    from gpuvet.logs.match import Scanner

    sc = Scanner(catalog)
    cap = oc.capture
    assert cap is not None
    head, kept, tail = cap.regions()
    head_first = 1
    if not cap.evicted and len(head) > HINT_BYTES + 2 * DIAG_FULL_BYTES:  # one large block: its end is the tail
        end_cut = _cut_at_line(head, len(head) - DIAG_FULL_BYTES)
        head, tail = head[:end_cut], (1 + head.count(b"\n", 0, end_cut), head[end_cut:])
    # 1. context hints on every line of the start
    hint_end = _cut_at_line(head, HINT_BYTES)
    nl = -1
    for _ in range(DIAG_HINT_LINES):
        nl = head.find(b"\n", nl + 1, hint_end)
        if nl < 0:
            break
    if nl >= 0:
        hint_end = nl + 1
    sc.feed_block(head_first, head[:hint_end])
    sc.hints_everywhere = False
    line = head_first + head.count(b"\n", 0, hint_end)
    # 2. the full scan after it; the rest of the head through grep
    full_end = max(hint_end, _cut_at_line(head, hint_end + DIAG_FULL_BYTES)) if cap.evicted or tail else len(head)
    sc.feed_block(line, head[hint_end:full_end])
    line += head.count(b"\n", hint_end, full_end)
    _scan_bulk(sc, line, head[full_end:], prefilter)
    # 3. the middle's kept lines (already prefilter hits), bounded
    if len(kept) > DIAG_MIDDLE_LINES:
        kept = kept[: DIAG_MIDDLE_LINES // 2] + kept[-(DIAG_MIDDLE_LINES // 2):]
    for n, blk in kept_blocks(kept):
        sc.feed_block(n, blk)
    # 4. the tail: through grep but its last DIAG_FULL_BYTES, which get the full scan
    if tail is not None:
        t_first, t_block = tail
        t_cut = _cut_at_line(t_block, len(t_block) - DIAG_FULL_BYTES)
        _scan_bulk(sc, t_first, t_block[:t_cut], prefilter)
        sc.feed_block(t_first + t_block.count(b"\n", 0, t_cut), t_block[t_cut:])
    sc.result.lines = max(sc.result.lines, cap.lines + (0 if cap.ends_with_newline else 1))
    first_bt = None
    if extra_lines:  # a hung child: what its threads were waiting in is evidence too (NCCL, device sync, ...)
        first_bt = sc.result.lines + 1
        for i, text in enumerate(extra_lines):
            sc.feed(first_bt + i, "backtrace: " + text)
    return sc.result, first_bt


def _scan_bulk(sc, first: int, block: bytes, prefilter: Callable[[], MiddleScan | None] | None) -> None:
    """Whole lines from line ``first`` on: only the lines the grep prefilter picks (at most DIAG_GREP_LINES)
    reach the scanner; without grep, all of them go through the scanner's own (slower) prefilter."""
    if not block:
        return
    scan = None
    if prefilter is not None:
        try:
            scan = prefilter()
        except Exception:  # noqa: BLE001 - no grep after all: the Python path below
            scan = None
    if scan is None:
        sc.feed_block(first, block)
        return
    scan.feed(block)
    scan.drain()
    for n, blk in kept_blocks(scan.kept):
        sc.feed_block(first + n - 1, blk)


def kept_blocks(kept: Sequence[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """Kept lines as blocks of consecutive lines (first line number, the lines with their newlines): a selected line
    and the context after it are read together, as the Python path reads them (a two-line reading gets its next
    line; ``Scanner.feed_block`` reads a context line only for that)."""
    out: list[tuple[int, bytes]] = []
    start, prev = 0, -2
    lines: list[bytes] = []
    for n, ln in kept:
        if n != prev + 1 and lines:
            out.append((start, b"\n".join(lines) + b"\n"))
            lines = []
        if not lines:
            start = n
        lines.append(ln)
        prev = n
    if lines:
        out.append((start, b"\n".join(lines) + b"\n"))
    return out


def _background(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """Run ``fn(*args)`` in a daemon thread now; the returned function waits for it and returns its result
    (raising what it raised)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            box["error"] = exc

    thread = threading.Thread(target=target, name="gpuvet-run-bundle", daemon=True)
    thread.start()

    def wait() -> Any:
        thread.join()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    return wait


def _write_bundle(bdir: str, oc: Outcome, debug_oc: Outcome | None, env: "Environment", system, here: bool, catalog,
                  prefilter: Callable[[], MiddleScan | None] | None = None,
                  live: Callable[[], Any] | None = None, gpu: Callable[[], str] | None = None):
    """The diagnosis and the bundle's other files.  ``live``, ``gpu``: the live facts and the GPU state, started
    in the background by the caller (waited for here); else (None) taken here, the live facts when ``here``."""
    import json

    from gpuvet.app import diagnose
    from gpuvet.render.json import report_dict

    if live is None and here:
        from gpuvet.app.facts import start_live_facts

        try:
            live = start_live_facts(env, deadline=6.0)
        except Exception:
            live = None
    use = oc
    if debug_oc is not None and debug_oc.capture is not None:
        dscan, _ = _scan(debug_oc, catalog, prefilter=prefilter)
        if dscan.matches:
            use = debug_oc  # the synchronous re-run points at the real call
    bt_text = use.backtrace or (oc.backtrace if use is not oc else "")
    scan, first_bt_line = _scan(use, catalog, bt_text.splitlines() if bt_text else (), prefilter)
    try:
        live_facts = live() if live is not None else None
    except Exception:
        live_facts = None
    assert use.capture is not None
    # the facts (tool outputs a job prints as it starts: collect_env, nvidia-smi, pip list) from the start of the
    # output: RUN_FACT_BYTES, not diagnose's HEAD_BYTES (the pasted-report detectors cost ~50 ms per MiB each)
    head = bytes(use.capture.head[: min(diagnose.HEAD_BYTES, RUN_FACT_BYTES)]).decode("utf-8", "replace")
    facts = diagnose.facts_from_text(head, "output.log", scan, live_facts)
    findings = diagnose.findings_for(facts, live_facts is not None)
    report = diagnose.build_report(scan, facts, findings, os.path.join(bdir, "output.log"), None,
                                   "run" if use is oc else "run --debug")
    cap = oc.capture
    report.extra["run"] = {"argv": redact_argv(oc.argv), "result": oc.describe(), "exit_status": oc.exit_status,
                           "seconds": round(oc.seconds, 3), "bundle": bdir, "backtrace_from_line": first_bt_line,
                           "output_bytes": cap.total if cap else 0, "output_omitted_bytes": cap.evicted if cap else 0,
                           "output_unscanned_bytes": cap.unscanned if cap else 0}
    doc = report_dict(report)
    write_private(bdir, "diagnosis.json", redact_text(json.dumps(doc, indent=2, default=str) + "\n"))
    write_private(bdir, "facts.json", redact_text(json.dumps(
        {"facts": facts.to_dict(), "probe_errors": [e.to_dict() for e in facts.errors]}, indent=2, default=str) + "\n"))
    environ = env.environ
    cmd: dict[str, Any] = {
        "argv": redact_argv(oc.argv), "result": oc.describe(), "returncode": oc.returncode, "signal": oc.signal,
        "timed_out": oc.timed_out, "exit_status": oc.exit_status, "seconds": round(oc.seconds, 3),
        "output_bytes": cap.total if cap else 0, "output_lines": cap.lines if cap else 0,
        "environment": _redacted_environment(environ)}
    if debug_oc is not None:
        cmd["debug_rerun"] = {"result": debug_oc.describe(), "exit_status": debug_oc.exit_status,
                              "environment": DEBUG_ENV}
    write_private(bdir, "command.json", redact_text(json.dumps(cmd, indent=2) + "\n"))
    try:
        state = gpu() if gpu is not None else gpu_state(system)
    except Exception as exc:  # a tool's trouble is the file's content, never the bundle's end
        state = f"could not read the GPU state: {type(exc).__name__}: {exc}\n"
    write_private(bdir, "gpu-state.txt", redact_text(state))
    bt = oc.backtrace or (debug_oc.backtrace if debug_oc else "")
    if bt:
        write_private(bdir, "backtrace.txt", redact_text(bt))
    return report


__all__ = ["RunOptions", "RunResult", "Outcome", "Capture", "Sink", "run", "run_child", "make_bundle_dir",
           "write_private", "DEBUG_ENV", "DEFAULT_LOG_CAP", "GRACE_S", "parse_size"]
