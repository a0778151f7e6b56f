"""`gpuvet run` with real child processes: passthrough, exit status, signals, hangs, crash bundle, --debug."""
import json
import os
import signal
import subprocess
import sys

from conftest import run_cli
from fakes import FakeSystem

PY = sys.executable
CUDA_FAIL = ("import sys; print('epoch 1 step 3'); sys.stdout.flush(); "
             "print('RuntimeError: CUDA error: no kernel image is available for execution on the device', file=sys.stderr); "
             "sys.exit(1)")


def run(argv, tmp_path, **kw):
    env = {"NO_COLOR": "1", "PATH": os.environ.get("PATH", ""), **kw.pop("environ", {})}
    return run_cli(["run", *argv], system=FakeSystem(), environ=env)


def test_failure_passthrough_diagnosis_and_bundle(tmp_path):
    b = tmp_path / "bundle"
    r = run(["--bundle", str(b), "--no-here", "--", PY, "-c", CUDA_FAIL], tmp_path)
    assert r.code == 1
    assert r.out == "epoch 1 step 3\n"  # stdout passes through unchanged
    assert "no kernel image is available" in r.err and "gpu-arch-unsupported" in r.err
    for name in ("output.log", "command.json", "facts.json", "diagnosis.json", "gpu-state.txt"):
        assert (b / name).is_file(), name
    doc = json.loads((b / "diagnosis.json").read_text())
    assert doc["diagnoses"][0]["cause"] == "gpu-arch-unsupported"
    cmd = json.loads((b / "command.json").read_text())
    assert cmd["returncode"] == 1 and cmd["exit_status"] == 1 and not cmd["timed_out"]
    assert "no kernel image" in (b / "output.log").read_text()


def test_success_writes_no_bundle(tmp_path):
    b = tmp_path / "bundle"
    r = run(["--bundle", str(b), "--", PY, "-c", "print('ok')"], tmp_path)
    assert r.code == 0 and r.out == "ok\n" and not b.exists()


def test_exit_status_is_childs(tmp_path):
    r = run(["--bundle", str(tmp_path / "b"), "--no-here", "--", PY, "-c", "import sys; sys.exit(7)"], tmp_path)
    assert r.code == 7


def test_killed_by_signal(tmp_path):
    b = tmp_path / "b"
    r = run(["--bundle", str(b), "--no-here", "--", PY, "-c",
             "import os, signal; print('Segmentation fault incoming', flush=True); os.kill(os.getpid(), signal.SIGKILL)"], tmp_path)
    assert r.code == 128 + signal.SIGKILL
    assert json.loads((b / "command.json").read_text())["signal"] == signal.SIGKILL
    assert "killed by signal SIGKILL" in r.err


def test_hang_past_timeout(tmp_path):
    b = tmp_path / "b"
    r = run(["--timeout", "1", "--bundle", str(b), "--no-here", "--", PY, "-c",
             "import time; print('NCCL WARN Call to posix_fallocate failed : No space left on device', flush=True); time.sleep(60)"],
            tmp_path)
    assert r.code == 124
    cmd = json.loads((b / "command.json").read_text())
    assert cmd["timed_out"] and cmd["seconds"] < 30
    assert (b / "backtrace.txt").is_file()
    assert json.loads((b / "diagnosis.json").read_text())["diagnoses"][0]["cause"] == "collective-comm"


def test_debug_rerun_sets_vendor_switches(tmp_path):
    b = tmp_path / "b"
    script = ("import os, sys; print('CLB=' + os.environ.get('CUDA_LAUNCH_BLOCKING', '-') + "
              "' ASK=' + os.environ.get('AMD_SERIALIZE_KERNEL', '-'), flush=True); sys.exit(3)")
    r = run(["--debug", "--bundle", str(b), "--no-here", "--", PY, "-c", script], tmp_path)
    assert r.code == 3
    assert r.out.splitlines() == ["CLB=- ASK=-", "CLB=1 ASK=3"]
    assert "CLB=1 ASK=3" in (b / "debug-output.log").read_text()
    assert json.loads((b / "command.json").read_text())["debug_rerun"]["environment"]["NCCL_DEBUG"] == "INFO"


def test_command_not_found(tmp_path):
    r = run(["--", str(tmp_path / "no-such-binary")], tmp_path)
    assert r.code == 127 and "cannot run" in r.err


def test_real_subprocess_passthrough(tmp_path):
    b = tmp_path / "b"
    p = subprocess.run([PY, "-m", "gpuvet", "run", "--bundle", str(b), "--no-here", "--", PY, "-c",
                        "import sys; sys.stdout.write('a\\rb\\n'); sys.stderr.write('err line\\n'); sys.exit(2)"],
                       capture_output=True, timeout=120)
    assert p.returncode == 2
    assert p.stdout == b"a\rb\n"
    assert p.stderr.startswith(b"err line\n")


def test_hang_backtrace_is_evidence(tmp_path, monkeypatch):
    """A hung child's native backtrace (here a canned one: no debugger needed) feeds the diagnosis."""
    from gpuvet.app import run as run_cmd

    bt = ("$ gdb -p 1 -batch -ex 'thread apply all bt'\n"
          "#0  0x00007f in __futex_abstimed_wait_common () from /lib/x86_64-linux-gnu/libc.so.6\n"
          "#4  0x00007f3a1c2b in ncclCommInitRank () from /venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2\n")
    monkeypatch.setattr(run_cmd, "native_backtrace", lambda system, pid: bt)
    b = tmp_path / "b"
    r = run(["--timeout", "1", "--bundle", str(b), "--no-here", "--", PY, "-c", "import time; time.sleep(60)"], tmp_path)
    assert r.code == 124
    doc = json.loads((b / "diagnosis.json").read_text())
    assert doc["diagnoses"][0]["cause"] == "collective-comm"
    assert doc["run"]["backtrace_from_line"] == 1
