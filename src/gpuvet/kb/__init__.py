"""The knowledge base: YAML data under ``kb/data`` (one file per table), validated by the JSON
Schemas under ``kb/schemas`` in the test suite, loaded lazily and cached.

Every data file is a mapping ``{table: NAME, description: ..., entries: [...]}`` named ``NAME.yaml``;
``kb.yaml`` holds the KB's version and date, which are stamped into every report.  A table is parsed
the first time a command asks for it (``gpuvet check`` never parses the log signatures), and the
parsed table is kept in a pickle under the user's cache directory keyed by the data file's size and
modification time, so the YAML is parsed once per installed version, not once per run.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
from importlib import resources
from pathlib import Path
from typing import Any

CACHE_FORMAT = 1


class KBError(Exception):
    """The knowledge base itself is malformed (a packaging bug, reported as gpuvet's own failure)."""


def _data_dir() -> Path:
    return Path(str(resources.files("gpuvet.kb") / "data"))


def _cache_dir() -> Path | None:
    if os.environ.get("GPUVET_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuvet" / "kb"


def _yaml_load(path: Path) -> Any:
    import yaml  # lazily: only a cache miss pays for parsing

    try:
        from yaml import CSafeLoader as Loader  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover
        from yaml import SafeLoader as Loader  # type: ignore[assignment]
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    except yaml.YAMLError as exc:
        raise KBError(f"kb/data/{path.name}: {exc}") from None


def _load_file(path: Path) -> Any:
    """Parse one data file, through the pickle cache when it is usable (never trusted blindly: the key
    holds the file's path, size and mtime, and any error falls back to parsing)."""
    st = path.stat()
    key = hashlib.sha256(f"{CACHE_FORMAT}|{path}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:24]
    cdir = _cache_dir()
    cfile = cdir / f"{path.stem}-{key}.pickle" if cdir else None
    if cfile is not None:
        try:
            with open(cfile, "rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            pass
    doc = _yaml_load(path)
    if cfile is not None:
        try:
            cdir.mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]
            tmp = cfile.with_suffix(f".tmp{os.getpid()}")
            with open(tmp, "wb") as fh:
                pickle.dump(doc, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, cfile)
        except OSError:
            pass  # a read-only home is fine: parse every time
    return doc


class KB:
    """The knowledge base.  ``table(name)`` parses ``data/<name>.yaml`` on first use."""

    def __init__(self, data_dir: Path | None = None):
        self.data_dir = data_dir or _data_dir()
        meta = _load_file(self.data_dir / "kb.yaml") or {}
        self.version = str(meta.get("version", "0"))
        self.date = str(meta.get("date", ""))
        self._tables: dict[str, list[dict[str, Any]]] = {}
        self.descriptions: dict[str, str] = {}

    def table_names(self) -> list[str]:
        return sorted(p.stem for p in self.data_dir.glob("*.yaml") if p.name != "kb.yaml")

    def table(self, name: str) -> list[dict[str, Any]]:
        if name not in self._tables:
            path = self.data_dir / f"{name}.yaml"
            if not path.exists():
                self._tables[name] = []
                return []
            doc = _load_file(path)
            if not isinstance(doc, dict) or doc.get("table") != name or not isinstance(doc.get("entries"), list):
                raise KBError(f"kb/data/{path.name}: needs 'table: {name}' and a list 'entries'")
            self._tables[name] = doc["entries"]
            self.descriptions[name] = str(doc.get("description", ""))
        return self._tables[name]

    @property
    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every table (parses them all)."""
        return {name: self.table(name) for name in self.table_names()}

    def stamp(self) -> dict[str, str]:
        return {"version": self.version, "date": self.date}


def data_files() -> list[tuple[str, str]]:
    """(file name, text) of every YAML data file, sorted."""
    root = _data_dir()
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(root.glob("*.yaml"))]


@functools.lru_cache(maxsize=1)
def load() -> KB:
    return KB()
