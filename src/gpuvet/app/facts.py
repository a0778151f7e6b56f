"""Where a use case's facts come from: this machine (the live probes) or pasted text (the parsers).

One path each, shared by every use case: ``check`` and ``recommend`` read the machine; ``check --from``,
``diagnose`` (a file, standard input, ``--follow``) and ``run`` parse text with the same ``parse_report``."""
from __future__ import annotations

import threading
from typing import Callable, Iterable

from gpuvet.model import Facts, ProbeError
from gpuvet.model.errors import GpuvetError, UsageError

from .env import Environment

DEFAULT_DEADLINE = 3.0


def start_live_facts(env: Environment, python: str | None = None,
                     deadline: float = DEFAULT_DEADLINE) -> Callable[[], Facts]:
    """Start the live probes in the background (they mostly wait on tools) and return a function that
    waits for them and returns the facts, so the caller can load the KB and the checks meanwhile."""
    from gpuvet.probes.base import run_probes
    from gpuvet.probes.registry import all_probes

    flag = "--python"
    if not python and env.environ.get("GPUVET_PYTHON"):
        python, flag = env.environ["GPUVET_PYTHON"], "GPUVET_PYTHON"
    result: dict[str, Facts] = {}
    system = env.system(python)
    if python:
        why = system.interpreter_problem(python)
        if why:
            raise UsageError(f"{flag} {python}: {why}")
    probes = all_probes()
    thread = threading.Thread(target=lambda: result.update(facts=run_probes(system, probes, deadline=deadline)),
                              name="gpuvet-probes", daemon=True)
    thread.start()

    def join() -> Facts:
        thread.join()
        return result["facts"]

    return join


def live_facts(env: Environment, python: str | None = None, deadline: float = DEFAULT_DEADLINE) -> Facts:
    return start_live_facts(env, python, deadline)()


def pasted_facts(texts: Iterable[tuple[str, str]], strict: bool = True) -> Facts:
    """The facts in pasted text: each (text, source name) through ``probes.pasted.parse_report``.

    ``strict``: text in which no tool output is recognised is a one-line error (``check --from``);
    otherwise it gives no facts (a log that merely holds a traceback)."""
    from gpuvet.probes.pasted import parse_report

    facts = Facts(origin="pasted")
    for text, source in texts:
        try:
            facts.merge(parse_report(text, source))
        except ValueError as exc:
            if strict:
                raise GpuvetError(str(exc)) from None
        except Exception as exc:  # a parser bug must not sink a diagnosis, but it is recorded
            if strict:
                raise
            facts.fail(ProbeError("pasted-parser", (), f"parsing {source} failed: {type(exc).__name__}: {exc}"))
    facts.origin = "pasted"
    return facts
