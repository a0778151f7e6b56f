"""`gpuvet run` reaches the machine through System too: the supervised command and the grep prefilter of
its omitted middle are started by ``System.spawn`` (real processes here, recorded on the way)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import run_cli
from fakes import FakeSystem


class Recording(FakeSystem):
    def spawn(self, argv, extra_env=None, **kw):  # type: ignore[override]
        self.spawned = getattr(self, "spawned", []) + [(list(argv), dict(extra_env or {}), kw)]
        return super().spawn(argv, extra_env, **kw)


def _run(argv, tmp_path, system):
    env = {"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")}
    return run_cli(["run", "--bundle", str(tmp_path / "b"), "--no-here", *argv], system=system, environ=env)


def test_the_supervised_command_is_spawned_through_system(tmp_path):
    sysm = Recording()
    r = _run(["--", sys.executable, "-c", "print('hello from the child')"], tmp_path, sysm)
    assert r.code == 0 and "hello from the child" in r.out
    (argv, extra, kw), = sysm.spawned
    assert argv == [sys.executable, "-c", "print('hello from the child')"]
    assert kw == {"environ": kw["environ"], "stdin": subprocess.DEVNULL, "stderr_pipe": True, "new_session": True}
    assert kw["environ"]["NO_COLOR"] == "1"  # stdin: the test's StringIO has no fd, so /dev/null


@pytest.mark.skipif(shutil.which("grep") is None, reason="needs grep")
def test_the_middle_prefilter_is_spawned_through_system(tmp_path):
    sysm = Recording()
    code = ("import sys\nfor i in range(4000): print('step', i, 'loss 0.5')\n"
            "print('RuntimeError: CUDA error: out of memory', file=sys.stderr)\nsys.exit(1)")
    r = _run(["--log-cap", "8k", "--", sys.executable, "-c", code], tmp_path, sysm)
    assert r.code == 1
    greps = [(a, e, kw) for a, e, kw in sysm.spawned if os.path.basename(a[0]) == "grep"]
    assert len(greps) == 1 and greps[0][1] == {"LC_ALL": "C"} and greps[0][2]["stdin_pipe"] is True
