"""`gpuvet run` starts the job before importing its supervision (app/run_start.py): the job must get what
``Popen(start_new_session=True, close_fds=True, restore_signals=True)`` gave it, and a signal that reaches gpuvet
in the moments before its handlers exist must still be forwarded."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable


def _env(**kw):
    return dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), **kw)


def test_job_starts_before_the_supervision_is_imported():
    code = ("import sys\nimport gpuvet.app.run_start as rs\nseen = []\norig = rs.start\n"
            "def spy(*a, **k):\n"
            "    seen.append(sorted(m for m in sys.modules if m.startswith(('gpuvet.app.run', 'gpuvet.kb', "
            "'gpuvet.model', 'click'))))\n"
            "    return orig(*a, **k)\n"
            "rs.start = spy\n"
            "sys.argv = ['gpuvet', 'run', '--no-here', '--', sys.executable, '-c', 'print(42)']\n"
            "from gpuvet.cli.fast import run\nrc = run(exit_now=False)\nprint(rc, seen)")
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, env=_env())
    assert p.stdout.splitlines() == ["42", "0 [['gpuvet.app.run_start']]"], p.stdout + p.stderr


def test_job_gets_a_clean_signal_state_its_own_session_and_no_stray_descriptor(tmp_path):
    # grep reads its own status (a Python job would ignore SIGPIPE itself at its start)
    p = subprocess.run([PY, "-m", "gpuvet", "run", "--no-here", "--", "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"],
                       capture_output=True, text=True, timeout=60, env=_env())
    masks = {k: int(v, 16) for k, v in (ln.split(":") for ln in p.stdout.splitlines())}
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ):
        assert not masks["SigBlk"] & (1 << (s - 1)), s  # gpuvet blocks the forwarded ones while it starts
    for s in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not masks["SigIgn"] & (1 << (s - 1)), s  # gpuvet (Python) ignores SIGPIPE: the job must not
    probe = ("import os\nprint('own-session', os.getsid(0) == os.getpid())\n"
             "fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
             "print('extra-fds', [f for f in fds if f > 2 and f != fds[-1]])\n")  # the last: listdir's own
    r, w = os.pipe()
    os.set_inheritable(w, True)  # an inherited descriptor of gpuvet's: Popen(close_fds=True) closed it
    try:
        p = subprocess.run([PY, "-m", "gpuvet", "run", "--no-here", "--", PY, "-c", probe], capture_output=True,
                           text=True, timeout=60, env=_env(), pass_fds=(w,))
    finally:
        os.close(r)
        os.close(w)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["own-session True", "extra-fds []"]


def test_signal_in_the_first_moments_is_forwarded(tmp_path):
    """SIGTERM the moment the job exists: gpuvet may not have its handlers yet (the forwarded signals wait,
    blocked, until it has); it must pass it on, exit as the job did and leave nothing behind."""
    pidf = tmp_path / "pid"
    job = f"echo $$ > {pidf}.tmp && mv {pidf}.tmp {pidf} && exec sleep 30"
    for _ in range(3):
        if pidf.exists():
            pidf.unlink()
        p = subprocess.Popen([PY, "-m", "gpuvet", "run", "--no-here", "--bundle", str(tmp_path / "b"), "--", "sh", "-c",
                              job], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
        end = time.monotonic() + 30
        while not pidf.exists() and time.monotonic() < end:
            time.sleep(0.0005)
        child = int(pidf.read_text())
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 128 + signal.SIGTERM, err
        assert b"and passed it on" in err and b"Traceback" not in err
        try:
            os.kill(child, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        assert not alive
        assert not (tmp_path / "b").exists()


def test_command_not_found_and_not_executable(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("echo hi\n")
    script.chmod(0o600)
    for cmd, word in (("no-such-command-r10", "No such file"), (str(script), "Permission denied")):
        p = subprocess.run([PY, "-m", "gpuvet", "run", "--no-here", "--", cmd], capture_output=True, text=True,
                           timeout=60, env=_env(), cwd=tmp_path)
        assert p.returncode == 127 and word in p.stderr, p.stderr
    assert sorted(os.listdir(tmp_path)) == ["job.sh"]


def test_successful_long_run_stops_grep_and_leaves_nothing_behind(tmp_path):
    """A job that exits 0 after overflowing --log-cap: grep (the middle's prefilter) is stopped rather than waited
    for, every byte still passes, and no pattern file or grep process outlives gpuvet."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    job = ("import sys\nw = sys.stdout.write\n"
           "for i in range(300000): w('[rank0] step %d | loss 2.5 | lr 3.0e-04\\n' % i)\n")
    p = subprocess.run([PY, "-m", "gpuvet", "run", "--no-here", "--log-cap", "64k", "--", PY, "-c", job],
                       capture_output=True, timeout=120, env=_env(TMPDIR=str(tmp)), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(b"\n") == 300000 and p.stdout.endswith(b"step 299999 | loss 2.5 | lr 3.0e-04\n")
    assert os.listdir(tmp) == []  # the prefilter's pattern file is gone
    assert sorted(os.listdir(tmp_path)) == ["tmp"]  # no bundle for a success
    stray = []
    for pid in (d for d in os.listdir("/proc") if d.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if str(tmp).encode() in fh.read():
                    stray.append(pid)
        except OSError:
            continue
    assert stray == [], stray  # no grep left reading a pattern file under our TMPDIR
