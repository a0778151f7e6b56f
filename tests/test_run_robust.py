"""`gpuvet run` as a pipe: throughput, bounded capture, no predictable temp files, private bundle, signals
forwarded to the child's group, closed streams, an unwritable working directory, secrets."""
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from conftest import run_cli
from gpuvet.app.env import Environment
from gpuvet.cli.main import main
from fakes import FakeSystem
from secret_corpus import leaks, leaks_in_tree, secret_argv, secret_env, secret_log

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {"NO_COLOR": "1", "PATH": os.environ.get("PATH", "")}
CUDA_ERR = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def _default_signals():  # however the suite was started (nohup, `&` in a script): gpuvet starts with defaults
    for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)


def gpuvet_proc(args, **kw):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), GPUVET_NO_CACHE="1")
    env.update(kw.pop("env", {}))
    kw.setdefault("preexec_fn", _default_signals)
    return subprocess.Popen([PY, "-m", "gpuvet", "run", *args], env=env, **kw)


def test_many_lines_pass_through_fast(tmp_path):
    """The old pump handled ~3,500 lines/s (100,000 lines: 28 s); blocks pass at pipe speed."""
    script = "import sys\nw = sys.stdout.write\nfor i in range(200000): w('line %d of a busy training log\\n' % i)"
    t = time.monotonic()
    p = gpuvet_proc(["--no-here", "--bundle", str(tmp_path / "b"), "--", PY, "-c", script], stdout=subprocess.PIPE)
    out, _ = p.communicate(timeout=120)
    took = time.monotonic() - t
    assert p.returncode == 0
    assert out.count(b"\n") == 200000 and out.endswith(b"line 199999 of a busy training log\n")
    assert took < 8, took
    assert not (tmp_path / "b").exists()


def test_output_log_is_capped_head_and_tail_and_middle_error_is_found(tmp_path):
    b = tmp_path / "b"
    script = ("import sys\nfor i in range(60000): print('noise line %06d' % i)\n"
              f"print({CUDA_ERR!r})\n"
              "for i in range(60000): print('after line %06d' % i)\nsys.exit(1)")
    r = run_cli(["run", "--no-here", "--log-cap", "256k", "--bundle", str(b), "--", PY, "-c", script],
                system=FakeSystem(), environ=ENV)
    assert r.code == 1
    assert r.out.count("\n") == 120001  # the pass-through is complete
    log = (b / "output.log").read_bytes()
    assert len(log) < 256 * 1024 + 400
    assert log.startswith(b"noise line 000000\n") and log.endswith(b"after line 059999\n")
    assert b"bytes of output omitted here" in log
    doc = json.loads((b / "diagnosis.json").read_text())
    top = doc["diagnoses"][0]
    assert top["cause"] == "gpu-arch-unsupported"
    assert top["evidence"][0]["line"] == 60001  # the line number in the whole output, not in the capture


def test_no_predictable_temp_file_and_private_bundle(tmp_path):
    """The old run wrote /tmp/.gpuvet-run-<pid>.log (or ./.gpuvet-run-<pid>.log): pre-creatable, a symlink target."""
    b = tmp_path / "b"
    before = set(os.listdir("/tmp"))
    cwd_before = set(os.listdir(os.getcwd()))
    r = run_cli(["run", "--no-here", "--bundle", str(b), "--", PY, "-c",
                 "import os, sys; print(sorted(os.listdir('/tmp')) == sorted(os.listdir('/tmp'))); sys.exit(2)"],
                system=FakeSystem(), environ=ENV)
    assert r.code == 2
    assert not [n for n in set(os.listdir("/tmp")) - before if n.startswith(".gpuvet-run")]
    assert not [n for n in set(os.listdir(os.getcwd())) - cwd_before if n.startswith(".gpuvet-run")]
    assert stat.S_IMODE(b.stat().st_mode) == 0o700
    for f in b.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name


def test_bundle_file_planted_as_symlink_is_not_followed(tmp_path):
    b = tmp_path / "b"
    b.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (b / "output.log").symlink_to(victim)
    r = run_cli(["run", "--no-here", "--bundle", str(b), "--", PY, "-c", "import sys; print('x'); sys.exit(1)"],
                system=FakeSystem(), environ=ENV)
    assert r.code == 1
    assert victim.read_text() == "precious\n"
    assert not (b / "output.log").is_symlink()


def test_unwritable_working_directory_bundle_goes_to_state_dir(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdin=io.StringIO(""), stdout=out, stderr=err, system_factory=FakeSystem,
                      environ=dict(ENV, XDG_STATE_HOME=str(tmp_path / "state")), cwd="/proc")
    code = main(["run", "--no-here", "--", PY, "-c", "import sys; sys.exit(5)"], env)
    assert code == 5  # the child's status, not 3
    crash = tmp_path / "state" / "gpuvet" / "crash"
    (bundle,) = list(crash.iterdir())
    assert (bundle / "command.json").is_file()
    assert str(crash) in err.getvalue()


def test_secrets_never_reach_the_bundle_or_stderr(tmp_path):
    b = tmp_path / "b"
    script = f"import sys\nsys.stderr.write({secret_log(CUDA_ERR)!r})\nsys.exit(1)"
    env = secret_env(ENV)
    r = run_cli(["run", "--bundle", str(b), "--", PY, "-c", script, *secret_argv()], system=FakeSystem(), environ=env)
    assert r.code == 1
    assert leaks(r.err.split("gpuvet: the command", 1)[1]) == []  # the diagnosis (the pass-through is the child's)
    assert leaks_in_tree(b) == {}
    assert "--token=***" in (b / "command.json").read_text()
    assert "no kernel image" in (b / "output.log").read_text()


def _wait_for(path, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and os.path.getsize(path):
            return open(path).read().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


CHILD = """import os, signal, sys, time
open(sys.argv[1], 'w').write(str(os.getpid()))
mode = sys.argv[2]
if mode == 'ignore':
    signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)
if mode == 'exit3':
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))
time.sleep(60)
"""


@pytest.mark.parametrize("sig,mode,status", [
    (signal.SIGTERM, "default", 128 + signal.SIGTERM),
    (signal.SIGHUP, "default", 128 + signal.SIGHUP),
    (signal.SIGINT, "default", 128 + signal.SIGINT),  # Python dies of SIGINT on an uncaught KeyboardInterrupt
    (signal.SIGTERM, "exit3", 3),  # the child's own status, whatever it chooses
    (signal.SIGTERM, "ignore", 128 + signal.SIGKILL),  # the grace period, then the group is killed
])
def test_signals_are_forwarded_to_the_child(tmp_path, sig, mode, status):
    pidf = tmp_path / "pid"
    p = gpuvet_proc(["--no-here", "--bundle", str(tmp_path / "b"), "--", PY, "-c", CHILD, str(pidf), mode],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"GPUVET_RUN_GRACE": "1"})
    child = int(_wait_for(pidf))
    time.sleep(0.3)
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == status, err
    assert b"gpuvet/" not in err  # no traceback of gpuvet's (the child may print its own KeyboardInterrupt)
    assert b"and passed it on" in err
    assert not _alive(child)
    assert not (tmp_path / "b").exists()  # the user stopped it: no bundle


def test_a_signal_ignored_on_entry_stays_ignored(tmp_path):
    """`nohup gpuvet run -- job`: SIGHUP was ignored before gpuvet started, so neither gpuvet nor the job dies of
    it (as the job alone would not); a signal that was not ignored is still forwarded."""
    def hup_ignored():
        _default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    pidf = tmp_path / "pid"
    p = gpuvet_proc(["--no-here", "--bundle", str(tmp_path / "b"), "--", PY, "-c", CHILD, str(pidf), "default"],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"GPUVET_RUN_GRACE": "1"},
                    preexec_fn=hup_ignored)
    child = int(_wait_for(pidf))
    time.sleep(0.3)
    p.send_signal(signal.SIGHUP)
    time.sleep(1.5)  # longer than the grace period: a forwarded SIGHUP would have ended both by now
    assert p.poll() is None and _alive(child)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert not _alive(child)


def test_stdout_closed_child_runs_to_completion(tmp_path):
    """With stdout closed the old pump thread died and the child hung once the pipe filled."""
    script = "import sys\nfor i in range(100000): print('x' * 100)\nsys.exit(4)"
    # gpuvet's fd 1 closed for real (>&-): the shell runs it that way
    sh = subprocess.run(["sh", "-c", f"exec {PY} -m gpuvet run --no-here --bundle {tmp_path / 'b'} -- {PY} -c \"$0\" >&-",
                         script], env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")), capture_output=True,
                        timeout=60)
    assert sh.returncode == 4, sh.stderr
    assert b"Traceback" not in sh.stderr


def test_stderr_closed_keeps_the_childs_status(tmp_path):
    script = f"import sys\nprint({CUDA_ERR!r}, file=sys.stderr)\nsys.exit(3)"
    sh = subprocess.run(["sh", "-c", f"exec {PY} -m gpuvet run --no-here --bundle {tmp_path / 'b'} -- {PY} -c \"$0\" 2>&-",
                         script], env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")), capture_output=True,
                        timeout=60)
    assert sh.returncode == 3
    assert (tmp_path / "b" / "diagnosis.json").is_file()


def test_grandchildren_do_not_outlive_the_run(tmp_path):
    pidf = tmp_path / "gc"
    script = (f"import subprocess, sys\np = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(pidf)!r}, 'w').write(str(p.pid))\nsys.exit(0)")
    t = time.monotonic()
    p = gpuvet_proc(["--no-here", "--", PY, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.communicate(timeout=60)
    assert p.returncode == 0 and time.monotonic() - t < 20
    assert not _alive(int(_wait_for(pidf)))
