"""The precomputed prefilter data of the log patterns (``data/signature_index.json``), read once.

Two things gpuvet derives from its patterns are pure functions of them and cost a ``gpuvet diagnose`` process
~0.1 s to compute: the signatures' prefilter keys and routing (``signatures.compute_index``) and the literal
gates of the context hints (``gate.gate_plan``).  ``tools/gen_signature_index.py`` computes both into this file;
each section carries the digest of what it was computed from, and a section whose digest does not match what
gpuvet is about to compute is not used (gpuvet computes it then: slower, never different).
tests/test_signature_index.py fails while the file is stale.
"""
from __future__ import annotations

import functools
import json
import os
from typing import Any

INDEX_FORMAT = "gpuvet-logs-index/3"
INDEX_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "signature_index.json")


def digest(*parts: Any) -> str:
    """SHA-256 of the JSON of ``parts`` (what a section is a function of)."""
    from gpuvet.model.digest import sha256_hex  # not hashlib: importing it loads OpenSSL (start-up)

    return sha256_hex(json.dumps([INDEX_FORMAT, *parts], ensure_ascii=True).encode("ascii"))


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    # package data beside this module, read as logs/learned.py reads its model (not the machine): an installed wheel
    # is a directory too (tests/test_wheel_data.py diagnoses from a built one); importlib.resources, which
    # kb/schema.py uses off the start-up path, costs diagnose ~17 ms more to import (bench/results/issue9-q12.md)
    from pathlib import Path

    try:
        doc = json.loads(Path(INDEX_PATH).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) and doc.get("format") == INDEX_FORMAT else {}


def section(name: str, want_digest: str) -> dict[str, Any] | None:
    """The shipped section ``name`` when it was computed from what ``want_digest`` names, else None."""
    sec = _shipped().get(name)
    if isinstance(sec, dict) and sec.get("digest") == want_digest:
        return sec
    return None
