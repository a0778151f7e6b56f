"""gpuvet's pytest plugin (entry point ``pytest11``): run gpuvet's validation cases inside a team's own
suite, markers for GPU tests, and a fixture with the current stack's facts.

- markers: ``gpu`` (needs a GPU: skipped when the stack has none, unless ``--gpuvet-require-gpu``),
  ``memory`` (measures device memory), ``distributed`` (starts several processes);
- ``--gpuvet-level quick|standard|full``: gpuvet's own cases join the session as tests
  (``gpuvet::matmul_ref`` ...), each run in a child process with its time-out like ``gpuvet validate``;
- fixture ``gpuvet_stack``: the facts ``gpuvet check`` reads (framework build, GPUs, drivers), never
  importing the framework; ``gpuvet_validate(*cases)``: run cases and get their results.

Registered by gpuvet's installation; loading it costs nothing until a fixture or option is used.
"""
from __future__ import annotations

import sys
from typing import Any

import pytest

MARKERS = {
    "gpu": "needs a GPU (gpuvet skips it when the stack has none; --gpuvet-require-gpu makes that a failure)",
    "memory": "measures device memory (run it alone, not in parallel with other GPU tests)",
    "distributed": "starts several processes (torch.distributed; NCCL/RCCL on GPUs, gloo on the CPU)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("gpuvet")
    g.addoption("--gpuvet-level", choices=["quick", "standard", "full"], default=None,
                help="Also run gpuvet's validation cases of this level as tests.")
    g.addoption("--gpuvet-python", default=None, metavar="PATH",
                help="Interpreter whose framework the gpuvet cases and facts examine (default: this one).")
    g.addoption("--gpuvet-require-gpu", action="store_true",
                help="Fail, instead of skipping, tests marked gpu when no GPU is found.")


def pytest_configure(config: pytest.Config) -> None:
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


class StackFacts:
    """The current stack as ``gpuvet check`` reads it: ``facts`` (gpuvet.model.Facts), ``report``, and
    shortcuts ``torch`` (its framework_builds row values or None), ``gpus`` (gpu_devices rows), ``backend``."""

    def __init__(self, python: str | None):
        from gpuvet.app.check import CheckOptions, run
        from gpuvet.app.env import Environment

        import io

        env = Environment(stdout=io.StringIO(), stderr=io.StringIO())
        # a test fixture can wait longer than `gpuvet check`'s 3 s for the probes (cold disk, big ELF files)
        self.report = run(CheckOptions(python=python, deadline=20.0), env)
        self.facts = self.report.facts
        builds = [r.values for r in self.facts.table("framework_builds") if r.values.get("name") == "torch"]
        self.torch: dict[str, Any] | None = dict(builds[0]) if builds else None
        self.gpus = [dict(r.values) for r in self.facts.table("gpu_devices")]
        self.backend = (self.torch or {}).get("variant")

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)

    def __repr__(self) -> str:
        return f"StackFacts(torch={(self.torch or {}).get('version')}, backend={self.backend}, gpus={len(self.gpus)})"


_STACK: dict[str | None, StackFacts] = {}


def stack_facts(python: str | None = None) -> StackFacts:
    if python not in _STACK:
        _STACK[python] = StackFacts(python)
    return _STACK[python]


@pytest.fixture(scope="session")
def gpuvet_stack(request: pytest.FixtureRequest) -> StackFacts:
    """The current stack's facts (framework build, GPUs, drivers, libraries), read without importing the framework."""
    return stack_facts(request.config.getoption("--gpuvet-python"))


@pytest.fixture(scope="session")
def gpuvet_validate(request: pytest.FixtureRequest):
    """``gpuvet_validate("matmul_ref", "conv2d_ref", device="auto")`` -> list of case results (plain dicts,
    ``status`` ok|failed|error|crashed|timeout|unsupported) run in child processes."""
    python = request.config.getoption("--gpuvet-python") or sys.executable

    def run(*cases: str, device: str = "auto", **options: Any) -> list[dict[str, Any]]:
        return _run_cases(python, cases, device, **options)
    return run


def _run_cases(python: str, names, device: str = "auto", **options: Any) -> list[dict[str, Any]]:
    from gpuvet.validate.cases import BY_NAME
    from gpuvet.validate.runner import Runner, RunOptions

    specs = [BY_NAME[n] for n in names]
    return Runner(RunOptions(python=python, device=device, **options)).run(specs)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    level = config.getoption("--gpuvet-level")
    if level:
        from gpuvet.validate.cases import for_level

        specs = for_level(level)
        shared: dict[str, Any] = {}
        for spec in specs:
            items.append(GpuvetCase.from_parent(session, name=f"gpuvet::{spec.name}", spec=spec, shared=shared,
                                                specs=specs))
    gpu_items = [i for i in items if i.get_closest_marker("gpu") and not isinstance(i, GpuvetCase)]
    if gpu_items and not config.getoption("--gpuvet-require-gpu"):
        try:
            has_gpu = stack_facts(config.getoption("--gpuvet-python")).has_gpu
        except Exception:  # reading the stack must never break the team's collection
            has_gpu = True
        if not has_gpu:
            skip = pytest.mark.skip(reason="gpuvet: no GPU found on this stack")
            for item in gpu_items:
                item.add_marker(skip)


class GpuvetCase(pytest.Item):
    def __init__(self, *, spec, shared, specs, **kw):
        super().__init__(**kw)
        self.spec, self.shared, self.specs = spec, shared, specs
        for m in spec.markers:
            self.add_marker(m)

    def runtest(self) -> None:
        if "results" not in self.shared:  # one runner for all the cases: one framework import
            python = self.config.getoption("--gpuvet-python") or sys.executable
            results = _run_cases(python, [s.name for s in self.specs])
            self.shared["results"] = {r["case"]: r for r in results}
        res = self.shared["results"][self.spec.name]
        from gpuvet.validate.findings import case_finding

        f = case_finding(res)
        if res["status"] == "unsupported":
            pytest.skip(f.title)
        if res["status"] != "ok":
            raise GpuvetCaseFailed(f)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GpuvetCaseFailed):
            f = excinfo.value.finding
            return "\n".join([f"{f.code} {f.name}: {f.title}"] + [f"  {e.text}" for e in f.evidence[:10]])
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return "gpuvet", None, f"gpuvet::{self.spec.name}"


class GpuvetCaseFailed(Exception):
    def __init__(self, finding):
        super().__init__(finding.title)
        self.finding = finding
