"""The KB's JSON Schemas, with the taxonomy filled in from its one declaration.

A schema says ``{"x-gpuvet-taxonomy": "causes" | "labels" | "components"}`` where a cause or component
belongs; :func:`load_schema` replaces it with the enum of ``gpuvet.model.taxonomy`` (``labels``: the
causes plus ``none``), so the list is never copied into a schema file."""
from __future__ import annotations

import json
from importlib import resources
from typing import Any

from gpuvet.model import taxonomy

MARK = "x-gpuvet-taxonomy"
VOCAB: dict[str, tuple[str, ...]] = {"causes": taxonomy.CAUSES, "labels": taxonomy.LABELS,
                                     "components": taxonomy.COMPONENTS}


def fill(node: Any) -> Any:
    if isinstance(node, dict):
        if MARK in node:
            rest = {k: fill(v) for k, v in node.items() if k != MARK}
            return {"enum": list(VOCAB[node[MARK]]), **rest}
        return {k: fill(v) for k, v in node.items()}
    if isinstance(node, list):
        return [fill(v) for v in node]
    return node


def load_schema(table: str) -> dict[str, Any]:
    """The JSON Schema of a KB table (kb/schemas/TABLE.schema.json), taxonomy filled in."""
    text = (resources.files("gpuvet.kb") / "schemas" / f"{table}.schema.json").read_text(encoding="utf-8")
    return fill(json.loads(text))
