"""Run validation cases in child processes of the examined interpreter.

gpuvet never imports the framework: ``child/worker.py`` runs in the interpreter under test, reports each
case as one JSON line, and this module enforces a time-out per case.  A worker that segfaults, aborts,
hangs or faults the GPU ends only the case it was running: that case gets a result saying so (with the
end of the worker's log) and a fresh worker takes the cases that remain.

Three ways a case is started (``CaseSpec``):
- plain: sharing one worker with its neighbours (one framework import for many cases);
- ``fresh``: in a worker of its own (cold-start measurements);
- ``ranks``: N workers at once with ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT`` set for an
  ``env://`` rendezvous on loopback (collectives); the case's result merges every rank's.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from gpuvet.model.redact import redact_text

CHILD_DIR = Path(__file__).resolve().parent / "child"
WORKER = CHILD_DIR / "worker.py"
LOG_TAIL = 4000
# environment every worker gets: NVLink multicast off (it can take a shared host's GPUs down)
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
            "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}

# a crash's signal, named as people search for it
SIGNALS = {int(s): s.name for s in signal.Signals}


@dataclass(frozen=True)
class CaseSpec:
    name: str
    level: str  # quick | standard | full | bench | fault
    title: str
    code: str  # the VAL code of the problem the case looks for
    timeout_s: float = 60.0  # on a GPU
    cpu_timeout_s: float = 60.0
    ops: tuple[str, ...] = ()  # framework operators it exercises (for --ops-from)
    dtypes: tuple[str, ...] = ()
    ranks: int | str = 1  # processes at once; "auto": one per GPU (two on the CPU)
    fresh: bool = False
    markers: tuple[str, ...] = ("gpu",)
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass
class RunOptions:
    python: str
    device: str = "auto"  # auto | cpu | cuda
    small: bool | None = None  # None: small when the device turns out to be the CPU
    inject: dict[str, Any] = field(default_factory=dict)
    timeout_scale: float = 1.0
    case_timeout: float | None = None  # overrides every case's own
    startup_timeout: float = 180.0  # framework import + device initialisation
    environ: dict[str, str] | None = None
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # case -> extra params


Progress = Callable[[str, CaseSpec, "dict[str, Any] | None"], None]


class Runner:
    def __init__(self, options: RunOptions, progress: Progress | None = None):
        self.o = options
        self.progress = progress or (lambda *a: None)
        self.framework: dict[str, Any] | None = None  # the first worker's framework report
        self.framework_error: dict[str, Any] | None = None
        self.workers_started = 0

    # ------------------------------------------------------------------ public
    def run(self, specs: Sequence[CaseSpec]) -> list[dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        pending = list(specs)
        while pending:
            if self.framework_error is not None:
                for spec in pending:
                    results[spec.name] = self._framework_result(spec)
                break
            head = pending[0]
            if head.ranks != 1:
                pending.pop(0)
                self.progress("start", head, None)
                results[head.name] = self._run_ranks(head)
                self.progress("done", head, results[head.name])
                continue
            if head.fresh:
                batch = [pending.pop(0)]
            else:
                batch = []
                while pending and pending[0].ranks == 1 and not pending[0].fresh:
                    batch.append(pending.pop(0))
            done, leftover = self._run_worker(batch)
            results.update(done)
            pending = leftover + pending
        return [results[s.name] for s in specs]

    @property
    def on_cpu(self) -> bool:
        if self.o.device == "cpu":
            return True
        return self.framework is not None and self.framework.get("device") == "cpu"

    def timeout_of(self, spec: CaseSpec) -> float:
        if self.o.case_timeout is not None:
            return self.o.case_timeout
        base = spec.cpu_timeout_s if self.on_cpu else spec.timeout_s
        return base * self.o.timeout_scale

    # ------------------------------------------------------------------ one worker, several cases
    def _plan(self, batch: Sequence[CaseSpec]) -> dict[str, Any]:
        small = self.o.small if self.o.small is not None else None
        return {"cases": [{"name": s.name, "params": {**s.params, **self.o.params.get(s.name, {})}} for s in batch],
                "device": self.o.device, "small": small if small is not None else self._guess_small(),
                "inject": self.o.inject}

    def _guess_small(self) -> bool:
        if self.o.device == "cpu":
            return True
        if self.framework is not None:
            return self.framework.get("device") == "cpu"
        return self.o.device != "cuda" and not _has_gpu_node()

    def _spawn(self, plan: dict[str, Any], extra_env: dict[str, str] | None = None):
        fd, path = tempfile.mkstemp(prefix="gpuvet-plan-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(plan, fh)
        log = tempfile.TemporaryFile(prefix="gpuvet-worker-log-")
        env = dict(self.o.environ if self.o.environ is not None else os.environ)
        env.update(SAFE_ENV)
        env.update(extra_env or {})
        self.workers_started += 1
        try:
            proc = subprocess.Popen([self.o.python, "-u", str(WORKER), path], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=log, env=env, start_new_session=True,
                                    cwd=tempfile.gettempdir())
        except OSError as exc:
            os.unlink(path)
            log.close()
            raise WorkerStartError(f"cannot start {self.o.python}: {exc.strerror or exc}") from None
        lines: queue.Queue = queue.Queue()

        def read():
            assert proc.stdout is not None
            for raw in proc.stdout:
                try:
                    lines.put(json.loads(raw))
                except ValueError:
                    continue
            lines.put(None)

        threading.Thread(target=read, daemon=True, name="gpuvet-worker-reader").start()
        return proc, lines, log, path

    def _run_worker(self, batch: Sequence[CaseSpec]):
        plan = self._plan(batch)
        by_name = {s.name: s for s in batch}
        order = [s.name for s in batch]
        try:
            proc, lines, log, plan_path = self._spawn(plan)
        except WorkerStartError as exc:
            self.framework_error = {"error": str(exc), "status": "framework-error"}
            return {s.name: self._framework_result(s) for s in batch}, []
        done: dict[str, dict[str, Any]] = {}
        current: CaseSpec | None = None
        started_at = time.monotonic()
        deadline = started_at + self.o.startup_timeout
        try:
            while True:
                try:
                    msg = lines.get(timeout=max(0.05, deadline - time.monotonic()))
                except queue.Empty:
                    msg = "timeout"
                if msg == "timeout":
                    _kill(proc)
                    if current is not None:
                        done[current.name] = self._failure(current, "timeout", proc, log, time.monotonic() - started_at)
                        self.progress("done", current, done[current.name])
                    elif self.framework is None:
                        self.framework_error = {"status": "framework-timeout",
                                                "error": f"the framework did not import and initialise within "
                                                         f"{self.o.startup_timeout:.0f} s", "log": _tail(log)}
                    break
                if msg is None:  # the worker's standard output closed: it exited or died
                    rc = _wait(proc)
                    if current is not None:
                        done[current.name] = self._failure(current, "crashed", proc, log,
                                                           time.monotonic() - started_at, rc=rc)
                        self.progress("done", current, done[current.name])
                    elif len(done) < len(batch) and self.framework is None and self.framework_error is None:
                        self.framework_error = {"status": "framework-error", "error": f"worker exited ({_rc_text(rc)}) "
                                                "before running a case", "log": _tail(log)}
                    break
                ev = msg.get("event")
                if ev == "framework":
                    if msg.get("ok"):
                        self.framework = self.framework or {k: v for k, v in msg.items() if k not in ("event", "ok")}
                    else:
                        self.framework_error = {"status": "framework-error", "error": msg.get("error", ""),
                                                "log": redact_text(msg.get("trace", ""))[-LOG_TAIL:]}
                elif ev == "start":
                    current = by_name.get(msg.get("case"))
                    if current is not None:
                        self.progress("start", current, None)
                        started_at = time.monotonic()
                        deadline = started_at + self.timeout_of(current)
                elif ev == "result":
                    spec = by_name.get(msg.get("case"))
                    if spec is None:
                        continue
                    res = _clean(msg)
                    if res["status"] in ("error",):
                        res["log"] = _tail(log)
                    res["level"], res["code"], res["title"] = spec.level, spec.code, spec.title
                    done[spec.name] = res
                    self.progress("done", spec, res)
                    current = None
                    deadline = time.monotonic() + self.o.startup_timeout
                elif ev == "bye":
                    _wait(proc)
                    break
        finally:
            _kill(proc)
            log.close()
            try:
                os.unlink(plan_path)
            except OSError:
                pass
        leftover = [by_name[n] for n in order if n not in done]
        return done, leftover

    # ------------------------------------------------------------------ several processes, one case
    def _run_ranks(self, spec: CaseSpec) -> dict[str, Any]:
        if spec.ranks == "auto":
            if self.on_cpu or self.o.device == "cpu":
                world = 2
            elif self.framework:
                world = int(self.framework.get("device_count") or 1)
            else:  # no worker has reported the framework yet: ask it how many GPUs it sees
                count = self._device_count()
                world = 2 if count == 0 and self.o.device != "cuda" else max(1, count)
        else:
            world = int(spec.ranks)
        world = int(self.o.params.get(spec.name, {}).get("world_size", world))
        port = _free_port()
        plan = self._plan([spec])
        procs = []
        for rank in range(world):
            procs.append(self._spawn(plan, {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
                                            "LOCAL_WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1",
                                            "MASTER_PORT": str(port)}))
        t0 = time.monotonic()
        deadline = t0 + self.o.startup_timeout + self.timeout_of(spec)
        per_rank: list[dict[str, Any] | None] = [None] * world
        open_ = set(range(world))
        try:
            while open_ and time.monotonic() < deadline:
                for r in sorted(open_):
                    proc, lines, log, _ = procs[r]
                    try:
                        msg = lines.get(timeout=0.05)
                    except queue.Empty:
                        continue
                    if msg is None:
                        rc = _wait(proc)
                        if per_rank[r] is None:
                            per_rank[r] = self._failure(spec, "crashed", proc, log, time.monotonic() - t0, rc=rc)
                        open_.discard(r)
                    elif msg.get("event") == "framework" and msg.get("ok") and self.framework is None:
                        self.framework = {k: v for k, v in msg.items() if k not in ("event", "ok")}
                    elif msg.get("event") == "result":
                        res = per_rank[r] = _clean(msg)
                        if res["status"] in ("error", "timeout"):  # timeout: a rank's own watchdog
                            res["log"] = _tail(log)
                    elif msg.get("event") == "bye":
                        open_.discard(r)
            for r in open_:  # still running at the deadline: hung
                proc, _, log, _ = procs[r]
                _kill(proc)
                per_rank[r] = self._failure(spec, "timeout", proc, log, time.monotonic() - t0)
        finally:
            for proc, _, log, path in procs:
                _kill(proc)
                log.close()
                try:
                    os.unlink(path)
                except OSError:
                    pass
        return _merge_ranks(spec, per_rank)

    def _device_count(self) -> int:
        """GPUs the examined framework sees (0 when none or when it cannot say within the start-up time-out)."""
        env = dict(self.o.environ if self.o.environ is not None else os.environ)
        env.update(SAFE_ENV)
        try:
            p = subprocess.run([self.o.python, "-c", "import torch; print(torch.cuda.device_count())"],
                               capture_output=True, text=True, env=env, timeout=self.o.startup_timeout,
                               stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir())
            return int(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else 0
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
            return 0

    # ------------------------------------------------------------------ results
    def _failure(self, spec: CaseSpec, status: str, proc, log, elapsed: float, rc: int | None = None) -> dict[str, Any]:
        if status == "timeout":
            error = f"no result within {self.timeout_of(spec):.0f} s: the case hung and was killed"
        else:
            error = f"the worker process died while running the case ({_rc_text(rc)})"
        return {"case": spec.name, "status": status, "error": error, "returncode": rc,
                "signal": SIGNALS.get(-rc) if rc is not None and rc < 0 else None,
                "elapsed_s": round(elapsed, 3), "log": _tail(log), "checks": [], "metrics": {}, "curves": {},
                "tables": {}, "notes": [], "info": {}, "level": spec.level, "code": spec.code, "title": spec.title}

    def _framework_result(self, spec: CaseSpec) -> dict[str, Any]:
        fe = self.framework_error or {}
        return {"case": spec.name, "status": fe.get("status", "framework-error"), "error": fe.get("error", ""),
                "log": fe.get("log", ""), "checks": [], "metrics": {}, "curves": {}, "tables": {}, "notes": [],
                "info": {}, "elapsed_s": 0.0, "level": spec.level, "code": spec.code, "title": spec.title}


class WorkerStartError(Exception):
    pass


def _merge_ranks(spec: CaseSpec, per_rank: list) -> dict[str, Any]:
    worst_order = ["crashed", "timeout", "error", "failed", "unsupported", "ok"]
    statuses = [r["status"] for r in per_rank]
    status = min(statuses, key=lambda s: worst_order.index(s) if s in worst_order else 0)
    merged = {"case": spec.name, "status": status, "level": spec.level, "code": spec.code, "title": spec.title,
              "checks": [], "metrics": {}, "curves": {}, "tables": {}, "notes": [], "info": {"world_size": len(per_rank)},
              "elapsed_s": max(r.get("elapsed_s", 0) for r in per_rank), "ranks": []}
    errors = []
    for i, r in enumerate(per_rank):
        merged["ranks"].append({"rank": i, "status": r["status"], "error": r.get("error", ""),
                                "signal": r.get("signal")})
        merged["checks"] += [{**c, "rank": i} for c in r.get("checks", [])]
        if i == 0:
            merged["metrics"] = r.get("metrics", {})
            merged["info"].update(r.get("info", {}))
            merged["tables"] = r.get("tables") or {}
            merged["notes"] = r.get("notes") or []
        if r["status"] != "ok":
            errors.append(f"rank {i}: {r['status']}" + (f" ({r['error']})" if r.get("error") else ""))
            merged.setdefault("log", r.get("log", ""))
    # what hung is known only to the rank that timed out; when the peer fails first (its connection closed) rank 0's
    # info has no "hung", and the VAL002 finding lost its "hung in: <collective>" evidence
    hung = [r["info"]["hung"] for r in per_rank if r.get("status") == "timeout" and (r.get("info") or {}).get("hung")]
    if hung and not merged["info"].get("hung"):
        merged["info"]["hung"] = hung[0]
    merged["error"] = "; ".join(errors)
    return merged


def _clean(msg: dict[str, Any]) -> dict[str, Any]:
    res = {k: v for k, v in msg.items() if k != "event"}
    for k in ("error", "trace"):
        if res.get(k):
            res[k] = redact_text(res[k])
    res.setdefault("checks", [])
    res.setdefault("metrics", {})
    return res


def _tail(log) -> str:
    try:
        log.flush()
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - LOG_TAIL))
        return redact_text(log.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return ""


def _kill(proc) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    if proc.stdout:
        proc.stdout.close()


def _wait(proc, timeout: float = 10.0) -> int | None:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return proc.returncode


def _rc_text(rc: int | None) -> str:
    if rc is None:
        return "no exit status"
    if rc < 0:
        return f"killed by {SIGNALS.get(-rc, f'signal {-rc}')}"
    return f"exit status {rc}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _has_gpu_node() -> bool:
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/kfd")
