"""A writer process for the store's concurrency and crash tests (not a test module itself).

usage: python store_writer.py URL TAG COUNT [--forever]
Writes COUNT snapshots (each with a large document and one run tied to it) and prints
"committed <id> <uid>" after each commit, flushed, so a test can kill it at any moment and know what
was committed."""
from __future__ import annotations

import hashlib
import json
import sys
import uuid

from gpuvet.store import open_store


def doc_for(tag: str, i: int) -> dict:
    body = {"packages": [{"name": f"pkg-{tag}-{i}-{k}", "version": f"{k}.0"} for k in range(400)]}
    payload = json.dumps(body, sort_keys=True)
    return {"schema_version": 1, "id": str(uuid.uuid4()), "label": f"{tag}-{i}", "score": i % 101,
            "host": {"hostname": tag}, "python": {"executable": "/usr/bin/python3"}, "summary": {"i": i},
            "body": body, "digest": "sha256:" + hashlib.sha256(payload.encode()).hexdigest()}


def main() -> None:
    url, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    forever = "--forever" in sys.argv
    store = open_store(url, {})
    i = 0
    while forever or i < count:
        rec = store.add_snapshot(doc_for(tag, i))
        store.add_run("validate", rec.id, [{"case": f"c{k}", "ok": True, "ms": k} for k in range(50)],
                      status="ok", level="quick", summary={"tag": tag, "i": i})
        print(f"committed {rec.id} {rec.uid}", flush=True)
        i += 1


if __name__ == "__main__":
    main()
