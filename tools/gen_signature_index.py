#!/usr/bin/env python3
"""Write src/gpuvet/logs/data/signature_index.json (logs/index.py): the prefilter keys and the key -> signature
routing of the shipped signatures (kb/data/signatures.yaml) and fact patterns (logs/fact_patterns.py), and the
literal gates of the context hints (logs/extract.HINTS).

They are a pure function of the patterns, so they are computed here, once, instead of in every `gpuvet diagnose`
process (~0.1 s of regex parsing).  A stale file is never wrong, only slow (gpuvet then computes the routing
itself); tests/test_signature_index.py fails while it is stale.  Run this after changing a signature's patterns or a hint:

    .venv/bin/python tools/gen_signature_index.py          # (re)write it
    .venv/bin/python tools/gen_signature_index.py --check  # exit 1 when it is stale
"""
from __future__ import annotations

import argparse
import json
import sys


def render() -> str:
    from gpuvet import kb
    from gpuvet.logs import extract, index
    from gpuvet.logs.fact_patterns import PREFILTER_PATTERNS
    from gpuvet.logs.gate import gate_plan
    from gpuvet.logs.signatures import build_catalog, compute_index, routing_patterns

    entries = kb.load().table("signatures")
    build_catalog(entries, PREFILTER_PATTERNS, use_index=False)  # validates every signature (compiles each regex)
    doc = {"format": index.INDEX_FORMAT,
           "signatures": compute_index(routing_patterns(entries), PREFILTER_PATTERNS,
                                       [e["id"] for e in entries]),
           "hint_gates": {"digest": extract.hints_digest(), "plan": gate_plan(extract.HINTS)}}
    return json.dumps(doc, indent=0, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    from gpuvet.logs.index import INDEX_PATH

    text = render()
    try:
        with open(INDEX_PATH, encoding="utf-8") as fh:
            old = fh.read()
    except OSError:
        old = ""
    if args.check:
        if old != text:
            print(f"{INDEX_PATH} is stale: run tools/gen_signature_index.py", file=sys.stderr)
            return 1
        return 0
    if old != text:
        with open(INDEX_PATH, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {INDEX_PATH}")
    else:
        print(f"{INDEX_PATH} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
