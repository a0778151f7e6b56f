"""gpuvet's validation worker: runs in the *examined* interpreter, never inside gpuvet.

Started by ``gpuvet.validate.runner`` as ``python worker.py PLAN.json``.  It imports only the standard
library and the framework under test (lazily, on the first case that needs it), runs the plan's cases one
after the other and reports each as one JSON line on the protocol stream (the original standard output;
everything the cases or the framework print goes to standard error, which the parent keeps as the log).
A case that crashes the process, hangs or faults the GPU is the parent's to report: it starts a fresh
worker for the cases that remain.

This directory must stay importable with nothing but the standard library on ``sys.path``.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import IO

T0 = time.perf_counter()
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

_PROTO: IO[str] | None = None  # the protocol pipe, opened by main()


def emit(event: str, **data) -> None:
    data["event"] = event
    line = json.dumps(data, default=_jsonable, allow_nan=True)
    assert _PROTO is not None, "emit() before main() opened the protocol pipe"
    _PROTO.write(line + "\n")
    _PROTO.flush()


def _jsonable(obj):
    try:
        return float(obj)
    except Exception:
        return str(obj)


def main(argv: list[str]) -> int:
    global _PROTO
    try:  # a crashing case must not leave a core file behind
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    # the protocol keeps the real stdout; anything printed by cases or native code goes to stderr
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    _PROTO = os.fdopen(proto_fd, "w", buffering=1)
    sys.stdout = sys.stderr
    with open(argv[1], encoding="utf-8") as fh:
        plan = json.load(fh)
    from harness import Ctx, Env, load_case

    env = Env(plan)
    emit("hello", pid=os.getpid(), python=sys.version.split()[0], executable=sys.executable)
    for item in plan["cases"]:
        name = item["name"]
        try:
            func, needs_torch = load_case(name)
        except Exception as exc:  # unknown case name: the parent's bug, not the stack's
            emit("result", case=name, status="error", error=f"unknown case: {exc}", elapsed_s=0.0)
            continue
        if needs_torch and env.torch is None:
            try:
                info = env.start_framework()
            except Exception as exc:
                emit("framework", ok=False, error=f"{type(exc).__name__}: {exc}",
                     trace=traceback.format_exc()[-4000:])
                return 3
            emit("framework", ok=True, **info)
        emit("start", case=name)
        ctx = Ctx(env, name, item.get("params") or {})
        started = time.perf_counter()
        status, error, trace = "ok", "", ""
        try:
            func(ctx)
            ctx.finish()
        except ctx.Unsupported as exc:
            status, error = "unsupported", str(exc)
        except Exception as exc:
            status, error, trace = "error", f"{type(exc).__name__}: {exc}", traceback.format_exc()[-4000:]
        result = ctx.result()
        if status == "ok" and any(not c["ok"] for c in result["checks"]):
            status = "failed"
        emit("result", case=name, status=status, error=error[:2000], trace=trace,
             elapsed_s=round(time.perf_counter() - started, 4), **result)
    emit("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
