"""The knowledge base: YAML data under ``kb/data`` (one file per table), validated by the JSON
Schemas under ``kb/schemas`` in the test suite, loaded once and cached.

Every data file is a mapping ``{table: NAME, description: ..., entries: [...]}``; ``kb.yaml`` holds
the KB's version and date, which are stamped into every report.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any


class KBError(Exception):
    """The knowledge base itself is malformed (a packaging bug, reported as gpuvet's own failure)."""


@dataclass
class KB:
    version: str
    date: str
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)

    def table(self, name: str) -> list[dict[str, Any]]:
        return self.tables.get(name, [])

    def stamp(self) -> dict[str, str]:
        return {"version": self.version, "date": self.date}


def data_files() -> list[tuple[str, str]]:
    """(file name, text) of every YAML data file, sorted."""
    root = resources.files("gpuvet.kb") / "data"
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            out.append((entry.name, entry.read_text(encoding="utf-8")))
    return out


@functools.lru_cache(maxsize=1)
def load() -> KB:
    import yaml  # lazily: only commands that need the KB pay for it

    try:
        from yaml import CSafeLoader as Loader  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover
        from yaml import SafeLoader as Loader  # type: ignore[assignment]
    version, date = "0", ""
    tables: dict[str, list[dict[str, Any]]] = {}
    descriptions: dict[str, str] = {}
    for name, text in data_files():
        try:
            doc = yaml.load(text, Loader=Loader)
        except yaml.YAMLError as exc:
            raise KBError(f"kb/data/{name}: {exc}") from None
        if not isinstance(doc, dict):
            raise KBError(f"kb/data/{name}: not a mapping")
        if name == "kb.yaml":
            version, date = str(doc.get("version", "0")), str(doc.get("date", ""))
            continue
        tname = doc.get("table")
        if not tname or not isinstance(doc.get("entries"), list):
            raise KBError(f"kb/data/{name}: needs 'table' and a list 'entries'")
        tables.setdefault(tname, []).extend(doc["entries"])
        descriptions[tname] = str(doc.get("description", ""))
    return KB(version, date, tables, descriptions)
