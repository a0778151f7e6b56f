"""The snapshot document: versioned JSON with a published JSON Schema (``schemas/snapshot.schema.json``,
also ``docs/snapshot-schema.json``), sealed with a SHA-256 digest of its canonical body.

``load_text`` refuses, with a one-line :class:`SnapshotError`, anything it cannot read faithfully: a
truncated or non-JSON file, a document of another kind, a newer or unknown schema version, one that
breaks the schema, and one whose digest no longer matches (edited by hand after gpuvet wrote it).
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from typing import Any, Mapping

SCHEMA_ID = "https://gpuvet.dev/schema/snapshot/1"
SCHEMA_VERSION = 1
KIND = "gpuvet-snapshot"
SCHEMA_FILE = os.path.join(os.path.dirname(__file__), "schemas", "snapshot.schema.json")


class SnapshotError(ValueError):
    """A snapshot that cannot be used; the message is one line."""


def canonical(doc: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in doc.items() if k != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


def digest(doc: Mapping[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical(doc)).hexdigest()


def seal(doc: dict[str, Any]) -> dict[str, Any]:
    """Round-trip through JSON (so what is sealed is what a reader will see) and add the digest."""
    doc = json.loads(json.dumps({k: v for k, v in doc.items() if k != "digest"}, default=str))
    doc["digest"] = digest(doc)
    return doc


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    with open(SCHEMA_FILE, encoding="utf-8") as fh:
        return json.load(fh)


def verify(doc: Any, source: str = "snapshot") -> dict[str, Any]:
    """Check a parsed document; return it, or raise SnapshotError (one line)."""
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise SnapshotError(f"{source} is not a gpuvet snapshot (no \"kind\": \"{KIND}\")")
    ver = doc.get("schema_version")
    if not isinstance(ver, int) or isinstance(ver, bool):
        raise SnapshotError(f"{source} has no valid schema_version")
    if ver > SCHEMA_VERSION:
        raise SnapshotError(f"{source} was written by a newer gpuvet (snapshot schema {ver}; this gpuvet reads "
                            f"up to {SCHEMA_VERSION}): upgrade gpuvet to read it")
    if ver < 1:
        raise SnapshotError(f"{source} has an unknown snapshot schema version {ver}")
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        msg = e.message if len(e.message) < 160 else e.message[:157] + "..."
        raise SnapshotError(f"{source} does not follow the snapshot schema at {where}: {msg}")
    if doc.get("digest") != digest(doc):
        raise SnapshotError(f"{source} was changed after gpuvet wrote it (its digest does not match); "
                            "take a new snapshot instead of editing one")
    return doc


def load_text(text: str, source: str = "snapshot") -> dict[str, Any]:
    if not text.strip():
        raise SnapshotError(f"{source} is empty")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        # a document gpuvet wrote ends with its closing brace: without it, the file was cut short
        last_line = exc.lineno >= len(text.rstrip().splitlines())
        at_end = text.lstrip().startswith("{") and (exc.pos >= len(text.rstrip()) - 1
                                                    or (last_line and not text.rstrip().endswith("}")))
        what = "is truncated" if at_end else "is not valid JSON"
        raise SnapshotError(f"{source} {what} (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    return verify(doc, source)


# -- what `history` shows and `diff` keys on -----------------------------------------------------------
def summary(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Key versions of a snapshot, from its facts: framework builds, runtimes, drivers, GPUs."""
    facts = doc.get("facts") or {}
    out: dict[str, Any] = {}
    for r in facts.get("framework_builds", []):
        out.setdefault("frameworks", {})[r.get("name", "?")] = r.get("version", "")
    for r in facts.get("runtimes", []):
        if r.get("name") in ("rocm", "cuda-runtime", "cuda-toolkit", "hip-runtime"):
            out.setdefault("runtimes", {}).setdefault(r["name"], r.get("version", ""))
    for r in facts.get("drivers", []):
        out.setdefault("drivers", {}).setdefault(f"{r.get('vendor')}-{r.get('component')}", r.get("version", ""))
    gpus = sorted({str(r.get("arch") or r.get("name") or "") for r in facts.get("gpu_devices", [])} - {""})
    if gpus:
        out["gpus"] = gpus
    out["packages"] = len(doc.get("distributions") or [])
    if doc.get("score") is not None:
        out["score"] = doc["score"]
    out["failed"] = sorted({f["code"] for f in doc.get("findings", []) if f.get("outcome") == "failed"})
    return out
