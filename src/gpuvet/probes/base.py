"""Probe declarations and the concurrent runner.

A probe is a read plus a pure parse: ``func(system) -> Iterable[Row]``.  The runner runs every probe
in its own daemon thread under one deadline; a probe that raises, or is still running at the
deadline, becomes a ``ProbeError`` for its tables, never an exception.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Iterable, Sequence

from gpuvet.model import Facts, ProbeError, Row
from gpuvet.model.record import record

from .system import InterpreterError, System


class ProbeFailed(Exception):
    """Raised by a probe to report a clean failure (``kind``: error | missing | timeout)."""

    def __init__(self, message: str, kind: str = "error", tables: tuple[str, ...] | None = None):
        super().__init__(message)
        self.kind = kind
        self.tables = tables  # the tables the failure leaves unknown (default: all the probe's tables)


@record(frozen=True)
class Probe:
    """One source of facts: its name, the tables it fills, and how it reads them."""

    name: str
    tables: tuple[str, ...]
    func: Callable[[System], Iterable[Row]]
    doc: str = ""


def run_probes(system: System, probes: Sequence[Probe], deadline: float = 4.0) -> Facts:
    facts = Facts(origin="live")
    results: dict[str, object] = {}
    lock = threading.Lock()

    def work(p: Probe) -> None:
        try:
            rows = list(p.func(system))
            out: object = rows
        except ProbeFailed as exc:
            out = ProbeError(p.name, tuple(exc.tables or p.tables), str(exc), exc.kind)
        except InterpreterError as exc:  # --python hung or crashed: what needs it is unknown, not empty
            out = ProbeError(p.name, p.tables, str(exc), exc.kind)
        except Exception as exc:  # a probe bug must not sink the report
            out = ProbeError(p.name, p.tables, f"{type(exc).__name__}: {exc}", "error")
        with lock:
            results[p.name] = out

    threads = []
    for p in probes:
        t = threading.Thread(target=work, args=(p,), name=f"probe-{p.name}", daemon=True)
        t.start()
        threads.append(t)
    end = time.monotonic() + deadline
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    with lock:
        snapshot = dict(results)
    for p in probes:
        out = snapshot.get(p.name)
        facts.mark(*p.tables)
        if out is None:
            facts.fail(ProbeError(p.name, p.tables, f"probe {p.name} did not finish within {deadline:.1f}s", "timeout"))
        elif isinstance(out, ProbeError):
            facts.fail(out)
        else:
            facts.add(out)  # type: ignore[arg-type]
    return facts
