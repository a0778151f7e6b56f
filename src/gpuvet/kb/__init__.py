"""The knowledge base: YAML data under ``kb/data`` (one file per table), validated by the JSON
Schemas under ``kb/schemas`` in the test suite, loaded lazily and cached.

Every data file is a mapping ``{table: NAME, description: ..., entries: [...]}`` named ``NAME.yaml``;
``kb.yaml`` holds the KB's version and date, which are stamped into every report.  A table is parsed
the first time a command asks for it (``gpuvet check`` never parses the log signatures).

The parsed table is cached as JSON (data only: reading it cannot run code, unlike a pickle) under
``$XDG_CACHE_HOME/gpuvet/kb/``, keyed by the SHA-256 of the YAML file's bytes.  A cache entry is used
only when the directories ``gpuvet/`` and ``gpuvet/kb/`` and the file are owned by this user and not
writable by group or others, the file is a regular file (opened without following links and without
blocking, so a FIFO planted there is never waited on), under a size cap, names the same key and holds
a document of the table's shape.  Anything else is a miss: the YAML is parsed and the entry rewritten.
"""
from __future__ import annotations

import functools
import json
import os
import stat
from typing import Any, Callable, Union

from gpuvet.model.digest import sha256_hex

# a path is a str internally (pathlib and its urllib/ipaddress imports cost `gpuvet check` start-up);
# callers may pass any os.PathLike
PathArg = Union[str, "os.PathLike[str]"]

CACHE_FORMAT = 2
MAX_CACHE_BYTES = 16 * 1024 * 1024  # the largest table is ~130 KB of YAML


class KBError(Exception):
    """The knowledge base itself is malformed (a packaging bug, reported as gpuvet's own failure)."""


def _data_dir() -> str:
    # the package is a directory (importlib.resources costs start-up)
    return os.path.join(os.path.dirname(os.path.realpath(__file__)), "data")


def _cache_dir() -> str | None:
    if os.environ.get("GPUVET_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # the XDG spec: a relative path is invalid and must be ignored
        return None
    return os.path.join(base, "gpuvet", "kb")


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _yaml_load(path: str, raw: bytes | None = None) -> Any:
    import yaml  # lazily: only a cache miss pays for parsing

    try:
        from yaml import CSafeLoader as Loader  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover
        from yaml import SafeLoader as Loader  # type: ignore[assignment]
    try:
        text = (raw if raw is not None else _read_bytes(path)).decode("utf-8")
        return yaml.load(text, Loader=Loader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise KBError(f"kb/data/{os.path.basename(path)}: {exc}") from None


def _private(st: os.stat_result) -> bool:
    """Owned by this (effective) user and not writable by group or others."""
    return st.st_uid == os.geteuid() and not (st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _open_dir(path: str, create: bool) -> int | None:
    """A file descriptor of our own cache directory ``path`` (``.../gpuvet/kb``), or None when it (or
    ``.../gpuvet``) is missing, a link, not ours, or writable by others.  ``create`` makes them 0700."""
    fd: int | None = None
    parent_dir = os.path.dirname(path)
    if create:
        try:
            os.makedirs(os.path.dirname(parent_dir), 0o700, exist_ok=True)
        except OSError:
            return None
    try:
        parent = os.open(os.path.dirname(parent_dir), os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fd = parent
        for name in (os.path.basename(parent_dir), os.path.basename(path)):
            if create:
                try:
                    os.mkdir(name, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nfd
            if not _private(os.fstat(fd)):
                os.close(fd)
                return None
        return fd
    except OSError:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        return None


def _read_cache(dfd: int, name: str, key: str) -> Any:
    """The cached document, or raise ValueError/OSError (a miss) for anything untrustworthy."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st) or st.st_size > MAX_CACHE_BYTES:
            raise ValueError("not a private regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(MAX_CACHE_BYTES + 1)
    finally:
        os.close(fd)
    entry = json.loads(raw)
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
        raise ValueError("another key")
    return entry.get("doc")


def _write_cache(dfd: int, name: str, key: str, doc: Any) -> None:
    import secrets

    tmp = f".tmp-{secrets.token_hex(8)}"  # unpredictable, created exclusively, 0600
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"format": CACHE_FORMAT, "key": key, "doc": doc}, fh, separators=(",", ":"))
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass


def _load_file(path: str, valid: Callable[[Any], bool] = lambda doc: True) -> Any:
    """Parse one data file, through the JSON cache when an entry there is trustworthy and ``valid``."""
    raw = _read_bytes(path)
    key = sha256_hex(b"%d|" % CACHE_FORMAT + raw)[:32]
    cdir = _cache_dir()
    name = f"{os.path.splitext(os.path.basename(path))[0]}-{key}.json"
    dfd = _open_dir(cdir, create=False) if cdir is not None else None
    try:
        if dfd is not None:
            try:
                doc = _read_cache(dfd, name, key)
                if valid(doc):
                    return doc
            except (OSError, ValueError, RecursionError):
                pass  # a bad entry is a miss
        doc = _yaml_load(path, raw)
        if cdir is not None and valid(doc):
            if dfd is None:
                dfd = _open_dir(cdir, create=True)
            if dfd is not None:
                _write_cache(dfd, name, key, doc)
        return doc
    finally:
        if dfd is not None:
            os.close(dfd)


def _table_shape(name: str) -> Callable[[Any], bool]:
    def ok(doc: Any) -> bool:
        return (isinstance(doc, dict) and doc.get("table") == name and isinstance(doc.get("entries"), list)
                and all(isinstance(e, dict) for e in doc["entries"]))
    return ok


class KB:
    """The knowledge base.  ``table(name)`` parses ``data/<name>.yaml`` on first use."""

    def __init__(self, data_dir: PathArg | None = None):
        self.data_dir: str = os.fspath(data_dir) if data_dir else _data_dir()
        meta = _load_file(os.path.join(self.data_dir, "kb.yaml"), lambda d: isinstance(d, dict)) or {}
        if not isinstance(meta, dict):
            raise KBError("kb/data/kb.yaml: needs a mapping with version and date")
        self.version = str(meta.get("version", "0"))
        self.date = str(meta.get("date", ""))
        self._tables: dict[str, list[dict[str, Any]]] = {}
        self.descriptions: dict[str, str] = {}

    def table_names(self) -> list[str]:
        return sorted(n[:-5] for n in _yaml_names(self.data_dir) if n != "kb.yaml")

    def table(self, name: str) -> list[dict[str, Any]]:
        if name not in self._tables:
            path = os.path.join(self.data_dir, f"{name}.yaml")
            if not os.path.exists(path):
                self._tables[name] = []
                return []
            doc = _load_file(path, _table_shape(name))
            if not isinstance(doc, dict) or doc.get("table") != name or not isinstance(doc.get("entries"), list):
                raise KBError(f"kb/data/{name}.yaml: needs 'table: {name}' and a list 'entries'")
            self._tables[name] = doc["entries"]
            self.descriptions[name] = str(doc.get("description", ""))
        return self._tables[name]

    @property
    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every table (parses them all)."""
        return {name: self.table(name) for name in self.table_names()}

    def stamp(self) -> dict[str, str]:
        return {"version": self.version, "date": self.date}


def _yaml_names(root: str) -> list[str]:
    """The ``*.yaml`` names in ``root``, sorted (what ``Path.glob("*.yaml")`` found)."""
    try:
        return sorted(n for n in os.listdir(root) if n.endswith(".yaml"))
    except OSError:
        return []


def data_files() -> list[tuple[str, str]]:
    """(file name, text) of every YAML data file, sorted."""
    root = _data_dir()
    out = []
    for n in _yaml_names(root):
        with open(os.path.join(root, n), encoding="utf-8") as fh:
            out.append((n, fh.read()))
    return out


@functools.lru_cache(maxsize=1)
def load() -> KB:
    return KB()
