from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from gpuvet.cli.env import Environment
from gpuvet.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL = FIXTURES / "real"
SHARED = ROOT.parent / "shared"


def fixture_text(rel: str) -> str:
    return (FIXTURES / rel).read_text(encoding="utf-8")


class Run:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


def run_cli(argv, system=None, stdin: str | bytes = "", environ=None) -> Run:
    out, err = io.StringIO(), io.StringIO()
    data = stdin.encode() if isinstance(stdin, str) else stdin
    stdin_stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    env = Environment(stdin=stdin_stream, stdout=out, stderr=err,
                      environ=dict(environ if environ is not None else {"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")}),
                      system_factory=(lambda: system) if system is not None else None)
    code = main(list(argv), env)
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


def make_facts(*rows, probed=(), errors=()):
    """A Facts of these rows (and tables marked probed, probe errors) for a check test."""
    from gpuvet.model import Facts

    f = Facts()
    f.add(rows)
    f.mark(*probed)
    for e in errors:
        f.fail(e)
    return f


def pytest_collection_modifyitems(config, items):
    """`slow` tests (16 writer processes, real virtual environments) always run in CI (CI=true) and with
    GPUVET_SLOW_TESTS=1; a developer's quick local run skips them so that parallel work stays fast."""
    if os.environ.get("CI") or os.environ.get("GPUVET_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow test: runs in CI, or locally with GPUVET_SLOW_TESTS=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
