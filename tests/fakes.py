"""Test doubles of gpuvet's seams (a fixture module: the package keeps only the real ``System``).

``FakeSystem`` is a ``System`` serving captured real outputs (tests/fixtures/real): command lines to
their output, paths to file contents, the environment, the examined interpreter's paths and version.
"""
from __future__ import annotations

import fnmatch
import io
import os
import stat as _stat
from dataclasses import dataclass, field
from typing import Any, Sequence

from gpuvet.probes.system import DEFAULT_TIMEOUT, MAX_READ, CommandResult, FileStat, System


@dataclass
class FakeSystem(System):
    """A System serving captured outputs: ``commands`` maps a command line (space-joined argv) to a
    CommandResult or to stdout text; ``files`` maps paths to text or bytes."""

    commands: dict[str, object] = field(default_factory=dict)
    files: dict[str, object] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    executables: dict[str, str] = field(default_factory=dict)
    uid_: int = 1000
    group_ids: list[int] = field(default_factory=lambda: [1000])
    group_names: dict[int, str] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    denied: set[str] = field(default_factory=set)

    paths: list[str] = field(default_factory=list)
    pyversion: str = "3.11.7"
    host: str = "fake-host"
    uname_: tuple[str, str, str] = ("Linux", "6.1.0-fake", "x86_64")
    libc: str = ""  # os.confstr's answer, e.g. "glibc 2.39"
    # NVML's answer (System.nvml): None = not the real machine (never asked), an exception = raised
    nvml_answer: dict[str, Any] | BaseException | None = None

    def __post_init__(self) -> None:
        self.environ = dict(self.env)
        self.root = "/"
        self.python = None
        self._paths = None

    def python_paths(self) -> list[str]:
        return list(self.paths)

    def python_version(self) -> str:
        return self.pyversion

    def hostname(self) -> str:
        return self.host

    def uname(self) -> tuple[str, str, str]:
        return self.uname_

    def libc_version(self) -> str:
        return self.libc

    def nvml(self) -> dict[str, Any] | None:
        self.nvml_calls = getattr(self, "nvml_calls", 0) + 1
        if isinstance(self.nvml_answer, BaseException):
            raise self.nvml_answer
        return self.nvml_answer

    def which(self, name: str) -> str | None:
        if name in self.executables:
            return self.executables[name]
        for key in self.commands:
            if key.split(" ")[0] in (name,) or os.path.basename(key.split(" ")[0]) == name:
                return key.split(" ")[0] if "/" in key.split(" ")[0] else f"/usr/bin/{name}"
        return None

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        argv = tuple(argv)
        keys = [" ".join(argv), " ".join((os.path.basename(argv[0]),) + argv[1:])]
        for key in keys:
            if key in self.commands:
                val = self.commands[key]
                if isinstance(val, CommandResult):
                    return CommandResult(argv, val.returncode, val.stdout, val.stderr, val.error)
                return CommandResult(argv, 0, str(val), "")
        return CommandResult(argv, None, error="missing")

    def _file(self, path: str):
        return self.files.get(path)

    def read_text(self, path: str, limit: int = MAX_READ) -> str | None:
        v = self._file(path)
        if v is None or isinstance(v, dict) or path in self.denied:
            return None
        if isinstance(v, bytes):
            return v[:limit].decode("utf-8", errors="replace")
        return str(v)[:limit]

    def read_bytes(self, path: str, offset: int = 0, size: int = MAX_READ) -> bytes | None:
        v = self._file(path)
        if v is None or isinstance(v, dict):
            return None
        data = v if isinstance(v, bytes) else str(v).encode()
        return data[offset:offset + size]

    def open_binary(self, path: str):
        data = self.read_bytes(path, 0, 1 << 40)
        if data is None:
            raise FileNotFoundError(path)
        return io.BytesIO(data)

    def _dirs(self) -> set[str]:
        out: set[str] = set()
        for p in self.files:
            parts = p.rstrip("/").split("/")
            for i in range(1, len(parts)):
                out.add("/".join(parts[:i]) or "/")
            if isinstance(self.files[p], dict):
                out.add(p.rstrip("/"))
        return out

    def exists(self, path: str) -> bool:
        path = path.rstrip("/") or "/"
        return path in self.files or path in self._dirs()

    def is_dir(self, path: str) -> bool:
        return (path.rstrip("/") or "/") in self._dirs()

    def listdir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/")[0] for p in self.files if p.startswith(prefix)}
        return sorted(n for n in names if n)

    def list_some(self, path: str, limit: int) -> tuple[list[str], bool]:
        names = self.listdir(path)
        return names[:limit], len(names) <= limit

    def glob(self, pattern: str) -> list[str]:
        cands = set(self.files) | self._dirs()
        return sorted(p for p in cands if fnmatch.fnmatchcase(p, pattern) and p.count("/") == pattern.count("/"))

    def stat(self, path: str) -> FileStat | None:
        if not self.exists(path):
            return None
        v = self._file(path)
        size = len(v) if isinstance(v, (str, bytes)) else 0
        mode = self.modes.get(path, (_stat.S_IFDIR | 0o755) if self.is_dir(path) and v is None else (_stat.S_IFREG | 0o644))
        return FileStat(size, 0.0, mode, 0, 0)

    def realpath(self, path: str) -> str:
        return path

    def walk_so(self, root: str, max_depth: int = 6, max_entries: int = 20000,
                skip: Sequence[str] = ("__pycache__",), deadline: float = 2.0) -> tuple[list[str], bool]:
        prefix = root.rstrip("/") + "/"
        out = []
        for p in self.files:
            if not p.startswith(prefix):
                continue
            parts = p[len(prefix):].split("/")
            if len(parts) - 1 > max_depth or any(x in skip or x.endswith((".dist-info", ".egg-info")) for x in parts[:-1]):
                continue
            name = parts[-1]
            if name.endswith(".so") or ".so." in name:
                out.append(p)
        return sorted(out), True

    def cache_dir(self) -> str | None:
        return None

    def access(self, path: str, mode: int) -> bool:
        return self.exists(path) and path not in self.denied

    def readlink(self, path: str) -> str | None:
        return None

    def uid(self) -> int:
        return self.uid_

    def groups(self) -> list[int]:
        return list(self.group_ids)

    def group_name(self, gid: int) -> str:
        return self.group_names.get(gid, str(gid))

    def user_name(self) -> str:
        return "user"
