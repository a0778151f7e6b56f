"""The one door to the machine: every probe reads through a ``System``.

``RealSystem`` runs commands with a time-out (killing the whole process group of a hung tool) and
reads files.  Tests use ``tests/fakes.py``'s ``FakeSystem``, which serves captured real outputs.
"""
from __future__ import annotations

import glob as _glob
import os
import signal
import stat as _stat
import subprocess
import threading
from typing import Any, Mapping, Sequence

from gpuvet.model.record import record

DEFAULT_TIMEOUT = 3.0
MAX_READ = 4 * 1024 * 1024
MAX_OUTPUT = 4 * 1024 * 1024  # bytes of one command's stdout (and of its stderr) that are read
PYTHON_TIMEOUT = 2.5  # asking another interpreter for its sys.path: below check's 3 s deadline


def _which(cmd: str, path: str) -> str | None:
    """``shutil.which(cmd, path=path)`` on POSIX, without importing shutil (and its bz2/lzma) at start-up."""

    def ok(fn: str) -> bool:
        return os.path.exists(fn) and os.access(fn, os.F_OK | os.X_OK) and not os.path.isdir(fn)

    if os.path.dirname(cmd):
        return cmd if ok(cmd) else None
    if not path:
        return None
    seen: set[str] = set()
    for d in path.split(os.pathsep):
        if d not in seen:
            seen.add(d)
            name = os.path.join(d, cmd)
            if ok(name):
                return name
    return None


class InterpreterError(Exception):
    """The interpreter examined (``--python`` / ``GPUVET_PYTHON``) did not answer: it hung, crashed, or
    printed no ``sys.path``.  ``run_probes`` turns it into an error row of every probe that needed it."""

    def __init__(self, message: str, kind: str = "error"):
        super().__init__(message)
        self.kind = kind


@record(frozen=True)
class CommandResult:
    """What one command run gave: its exit status, its output, or why it did not run."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None  # None | "missing" | "timeout" | "oserror: ..."

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def output(self) -> str:
        return self.stdout + ("\n" + self.stderr if self.stderr else "")

    def describe(self) -> str:
        cmd = " ".join(self.argv)
        if self.error == "missing":
            return f"{self.argv[0]}: not installed"
        if self.error == "timeout":
            return f"`{cmd}` timed out"
        if self.error:
            return f"`{cmd}`: {self.error}"
        tail = (self.stderr or self.stdout).strip().splitlines()[-1:] or [""]
        return f"`{cmd}` exited {self.returncode}: {tail[0][:200]}"


@record(frozen=True)
class FileStat:
    """The parts of a file's stat that probes and caches use."""

    size: int
    mtime: float
    mode: int
    uid: int
    gid: int

    @property
    def is_dir(self) -> bool:
        return _stat.S_ISDIR(self.mode)


class System:
    """Interface (and real implementation) of the machine as probes see it."""

    def __init__(self, environ: Mapping[str, str] | None = None, root: str = "/", python: str | None = None):
        self.environ: Mapping[str, str] = dict(os.environ if environ is None else environ)
        self.root = root
        self.python = python  # another interpreter whose environment to examine (--python)
        self._paths: list[str] | None = None
        self._paths_error: InterpreterError | None = None
        self._runs: dict[tuple, "_Pending"] = {}
        self._runs_lock = threading.Lock()

    # -- the Python environment examined ---------------------------------------------------------
    def python_paths(self) -> list[str]:
        """sys.path of the interpreter whose packages are examined: this one, or ``python`` (asked
        once, without importing anything but sys).  Raises InterpreterError when ``python`` hangs,
        crashes or does not print a sys.path (every caller gets the same error)."""
        if self._paths_error is not None:
            raise self._paths_error
        if self._paths is None:
            paths: list[str] = []
            if self.python:
                res = self.run([self.python, "-S", "-c",
                                "import sys, site, json; site.main(); print(json.dumps(sys.path))"],
                               timeout=PYTHON_TIMEOUT)
                if not res.ok:
                    self._paths_error = InterpreterError(f"interpreter {self.python}: {res.describe()}",
                                                         "timeout" if res.error == "timeout" else "error")
                    raise self._paths_error
                import json

                try:
                    paths = [p for p in json.loads(res.stdout) if isinstance(p, str)]
                except ValueError:
                    self._paths_error = InterpreterError(
                        f"interpreter {self.python} did not print its sys.path (is it Python?)")
                    raise self._paths_error from None
            else:
                import sys

                paths = list(sys.path)
            self._paths = [p for p in dict.fromkeys(paths) if p and self.is_dir(p)]
        return self._paths

    def interpreter_problem(self, path: str) -> str | None:
        """Why ``path`` cannot be a Python interpreter, in a few words, or None when it may be one: it
        must exist, be a file, be executable, and be a program (ELF) or a script (``#!``).  Whether it
        answers like Python is only known when it runs (``python_paths``)."""
        st = self.stat(path)
        if st is None:
            return "no such file"
        if st.is_dir:
            return "is a directory, not a Python interpreter"
        if not self.access(path, os.X_OK):
            return "not executable (not a Python interpreter)"
        head = self.read_bytes(path, 0, 4) or b""
        if not (head.startswith(b"\x7fELF") or head.startswith(b"#!")):
            return "not a Python interpreter (neither a program nor a #! script)"
        return None

    def python_version(self) -> str:
        if self.python:
            res = self.run([self.python, "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"])
            return res.stdout.strip() if res.ok else ""
        import sys

        return "%d.%d.%d" % sys.version_info[:3]

    def hostname(self) -> str:
        try:
            return os.uname().nodename  # what platform.node() reads on POSIX, without importing platform
        except AttributeError:  # pragma: no cover (no os.uname: Windows)
            import platform

            return platform.node()

    def uname(self) -> tuple[str, str, str]:
        """(system, kernel release, machine) of this machine: ('Linux', '6.1.0-18-amd64', 'x86_64')."""
        try:
            u = os.uname()  # platform.uname() reads the same on POSIX; importing platform costs start-up
            return u.sysname, u.release, u.machine
        except AttributeError:  # pragma: no cover (no os.uname: Windows)
            import platform

            return platform.system(), platform.release(), platform.machine()

    def libc_version(self) -> str:
        """The C library this process runs on, as glibc names itself ('glibc 2.36'); '' when unknown
        (musl, no confstr) or when this System reads another root than the machine's own."""
        if self.root != "/":
            return ""
        try:
            return os.confstr("CS_GNU_LIBC_VERSION") or ""
        except (ValueError, OSError, AttributeError):
            return ""

    def nvml(self) -> dict[str, Any] | None:
        """The NVIDIA driver's own answer through NVML (:func:`nvml_query`); None when this System reads
        another root than the machine's own (NVML would describe the real machine).  Raises ImportError
        without nvidia-ml-py, NVML's errors on its failures."""
        if self.root != "/":
            return None
        return nvml_query()

    # -- commands -------------------------------------------------------------------------------
    def which(self, name: str) -> str | None:
        return _which(name, self.environ.get("PATH", os.defpath))

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        """Run a command once per System: probes that need the same output (hipcc and hipconfig both
        want ``hipconfig --full``) share one run, the later caller waiting for the first."""
        key = (tuple(argv), timeout)
        with self._runs_lock:
            found = self._runs.get(key)
            owner = found is None
            pending = self._runs[key] = _Pending() if found is None else found
        if owner:
            try:
                pending.result = self._run(tuple(argv), timeout)
            finally:
                pending.done.set()
        else:
            pending.done.wait(timeout + 2)
        return pending.result or CommandResult(tuple(argv), None, error="timeout")

    def spawn(self, argv: Sequence[str], extra_env: Mapping[str, str] | None = None, *,
              environ: Mapping[str, str] | None = None, stdin_pipe: bool = False, stderr_pipe: bool = False,
              new_session: bool = False, stdin: Any = None) -> subprocess.Popen:
        """Start a long-running process whose stdout the caller streams (``grep`` over a large log, the
        command ``gpuvet run`` supervises); stdin and stderr are closed unless asked for as pipes.  Its
        environment: ``environ`` (default this System's) plus ``extra_env``; ``new_session``: its own
        process group, so the caller can signal all of it; ``stdin``: a file descriptor (or subprocess
        constant) it reads instead (``gpuvet run``'s child reads gpuvet's own stdin).  The caller waits for
        it or kills it.  Raises OSError (or ValueError)."""
        env = dict(self.environ if environ is None else environ)
        env.update(extra_env or {})
        if stdin is None:
            stdin = subprocess.PIPE if stdin_pipe else subprocess.DEVNULL
        return subprocess.Popen(list(argv), stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE if stderr_pipe else subprocess.DEVNULL,
                                env=env, start_new_session=new_session)

    def _run(self, argv: tuple[str, ...], timeout: float) -> CommandResult:
        exe = argv[0] if os.sep in argv[0] else self.which(argv[0])
        if not exe:
            return CommandResult(argv, None, error="missing")
        env = dict(self.environ)
        env.setdefault("LC_ALL", "C")
        try:
            proc = subprocess.Popen(
                (exe,) + argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env, start_new_session=True,
            )
        except FileNotFoundError:
            return CommandResult(argv, None, error="missing")
        except OSError as exc:
            return CommandResult(argv, None, error=f"oserror: {exc.strerror or exc}")
        try:
            out, err, status = _collect(proc, timeout, MAX_OUTPUT)
        finally:
            _kill_group(proc)  # every exit path: a tool's children never outlive the probe
        if status == "timeout":
            return CommandResult(argv, None, _decode(out), _decode(err), error="timeout")
        if status == "too-much":
            return CommandResult(argv, None, _decode(out), _decode(err),
                                 error=f"output over {MAX_OUTPUT // 2**20} MiB: stopped")
        return CommandResult(argv, proc.returncode, _decode(out), _decode(err))

    # -- files ----------------------------------------------------------------------------------
    def _p(self, path: str) -> str:
        if self.root == "/" or not os.path.isabs(path):
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def read_text(self, path: str, limit: int = MAX_READ) -> str | None:
        """The file's text (at most ``limit`` bytes), or None when it cannot be read."""
        try:
            with open(self._p(path), "rb") as fh:
                return _decode(fh.read(limit))
        except OSError:
            return None

    def read_bytes(self, path: str, offset: int = 0, size: int = MAX_READ) -> bytes | None:
        try:
            with open(self._p(path), "rb") as fh:
                fh.seek(offset)
                return fh.read(size)
        except OSError:
            return None

    def open_binary(self, path: str):
        """A seekable binary file object (for ELF parsing); raises OSError."""
        return open(self._p(path), "rb")

    def exists(self, path: str) -> bool:
        return os.path.lexists(self._p(path))

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(self._p(path))

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(self._p(path)))
        except OSError:
            return []

    def list_some(self, path: str, limit: int) -> tuple[list[str], bool]:
        """At most ``limit`` names of a directory, in the filesystem's order (no full listing of a huge cache
        directory), and whether they are all of them."""
        out: list[str] = []
        try:
            with os.scandir(self._p(path)) as it:
                for e in it:
                    if len(out) >= limit:
                        return out, False
                    out.append(e.name)
        except OSError:
            return out, False
        return out, True

    def glob(self, pattern: str) -> list[str]:
        base = self._p(pattern)
        hits = sorted(_glob.glob(base))
        if self.root != "/":
            hits = ["/" + os.path.relpath(h, self.root) for h in hits]
        return hits

    def stat(self, path: str) -> FileStat | None:
        try:
            st = os.stat(self._p(path))
        except OSError:
            return None
        return FileStat(st.st_size, st.st_mtime, st.st_mode, st.st_uid, st.st_gid)

    def realpath(self, path: str) -> str:
        return os.path.realpath(self._p(path)) if self.root == "/" else path

    def walk_so(self, root: str, max_depth: int = 6, max_entries: int = 20000,
                skip: Sequence[str] = ("__pycache__",), deadline: float = 2.0) -> tuple[list[str], bool]:
        """Shared objects (``*.so``, ``*.so.N``) under ``root``, depth-first with bounds; (paths, complete)."""
        import time

        out: list[str] = []
        seen = 0
        stack = [(self._p(root), 0)]
        end = time.monotonic() + deadline
        while stack:
            if time.monotonic() > end:
                return sorted(out), False
            d, depth = stack.pop()
            try:
                with os.scandir(d) as it:
                    entries = list(it)
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > max_entries:
                    return out, False
                try:
                    if e.is_dir(follow_symlinks=False):
                        if depth < max_depth and e.name not in skip and not e.name.endswith((".dist-info", ".egg-info")):
                            stack.append((e.path, depth + 1))
                    elif ".so" in e.name and (e.name.endswith(".so") or ".so." in e.name):
                        p = e.path
                        out.append(p if self.root == "/" else "/" + os.path.relpath(p, self.root))
                except OSError:
                    continue
        return sorted(out), True

    def cache_dir(self) -> str | None:
        """Where gpuvet may keep derived data between runs (GPUVET_CACHE_DIR, XDG_CACHE_HOME, ~/.cache)."""
        env = self.environ
        if env.get("GPUVET_NO_CACHE"):
            return None
        base = env.get("XDG_CACHE_HOME") or (os.path.join(env["HOME"], ".cache") if env.get("HOME") else "")
        if not base or not os.path.isabs(base):  # the XDG spec: a relative path is ignored
            return None
        return os.path.join(base, "gpuvet")

    def access(self, path: str, mode: int) -> bool:
        return os.access(self._p(path), mode)

    def readlink(self, path: str) -> str | None:
        try:
            return os.readlink(self._p(path))
        except OSError:
            return None

    # -- identity -------------------------------------------------------------------------------
    def uid(self) -> int:
        return os.getuid()

    def groups(self) -> list[int]:
        try:
            return sorted(set(os.getgroups()) | {os.getgid()})
        except OSError:
            return []

    def group_name(self, gid: int) -> str:
        try:
            import grp

            return grp.getgrgid(gid).gr_name
        except (KeyError, ImportError):
            return str(gid)

    def user_name(self) -> str:
        try:
            import pwd

            return pwd.getpwuid(os.getuid()).pw_name
        except (KeyError, ImportError):
            return str(os.getuid())


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: CommandResult | None = None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _collect(proc: subprocess.Popen, timeout: float, cap: int) -> tuple[bytes, bytes, str]:
    """Read stdout and stderr until both close, ``timeout`` passes ("timeout") or one exceeds ``cap`` bytes
    ("too-much"); the deadline holds for reading too, however fast or slow the tool prints."""
    import selectors
    import time

    deadline = time.monotonic() + timeout
    out, err = bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    for f, into in ((proc.stdout, out), (proc.stderr, err)):
        if f is not None:
            os.set_blocking(f.fileno(), False)
            sel.register(f, selectors.EVENT_READ, into)
    status = "ok"
    drain_until: float | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                status = "timeout"
                break
            if drain_until is None and proc.poll() is not None:
                drain_until = now + 0.2  # the tool exited: what its leftover children still hold is not waited for
            if drain_until is not None and now > drain_until:
                break
            for key, _ in sel.select(min(left, 0.05 if drain_until else 0.25)):
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf: bytearray = key.data
                buf += chunk
                if len(buf) > cap:
                    del buf[cap:]
                    status = "too-much"
                    break
            if status != "ok":
                break
        if status == "ok":
            try:
                proc.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                status = "timeout"
    finally:
        sel.close()
    return bytes(out), bytes(err), status


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=1)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
    for f in (proc.stdout, proc.stderr):
        try:
            if f is not None:
                f.close()
        except OSError:
            pass


def nvml_query() -> dict[str, Any]:
    """Ask NVML (nvidia-ml-py: the one place that calls it) for the driver, its CUDA version and every
    device.  Raises on any NVML failure, ImportError without nvidia-ml-py.

    Returns ``{"driver": "580.159.04", "cuda": 13000, "devices": [{"index", "name", "cc": (9, 0),
    "memory_bytes", "pci_bus"}]}``.  Always calls ``nvmlShutdown`` after a successful init.
    """
    import pynvml  # lazily: only the live probe on a machine with an NVIDIA driver pays for it

    def _s(v: Any) -> str:
        return v.decode() if isinstance(v, bytes) else str(v)

    pynvml.nvmlInit()
    try:
        driver = _s(pynvml.nvmlSystemGetDriverVersion())
        try:
            cuda = int(pynvml.nvmlSystemGetCudaDriverVersion_v2())
        except (AttributeError, pynvml.NVMLError):
            cuda = int(pynvml.nvmlSystemGetCudaDriverVersion())
        devices = []
        for i in range(int(pynvml.nvmlDeviceGetCount())):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            dev: dict[str, Any] = {"index": i, "name": _s(pynvml.nvmlDeviceGetName(h))}
            try:
                dev["cc"] = tuple(pynvml.nvmlDeviceGetCudaComputeCapability(h))
            except pynvml.NVMLError:
                pass
            try:
                dev["memory_bytes"] = int(pynvml.nvmlDeviceGetMemoryInfo(h).total)
            except pynvml.NVMLError:
                pass
            try:
                dev["pci_bus"] = _s(pynvml.nvmlDeviceGetPciInfo(h).busId)
            except pynvml.NVMLError:
                pass
            devices.append(dev)
        return {"driver": driver, "cuda": cuda, "devices": devices}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # pragma: no cover - shutdown after a failed query
            pass


RealSystem = System
