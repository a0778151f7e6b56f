"""`gpuvet run -- job > train.log`: when gpuvet's stdout or stderr is a regular file, the job writes straight into
it (as it would without gpuvet: no pipe, the bare job's own cost) and gpuvet reads the file back for its capture
(app/run_start.py ``follow_file``).  Everything else stays as with a pipe: the diagnosis, a bounded output.log,
the exit status, nothing left behind; and the file keeps every byte even when gpuvet dies."""
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA_ERR = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
PROBE = ("import os, stat, sys\n"
         "for fd in (1, 2):\n"
         "    st = os.fstat(fd)\n"
         "    print(fd, 'file' if stat.S_ISREG(st.st_mode) else 'fifo' if stat.S_ISFIFO(st.st_mode) else 'other', "
         "st.st_ino, flush=True)\n")


def _env(**kw):
    return dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), GPUVET_NO_CACHE="1", NO_COLOR="1", **kw)


def _default_signals():
    for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)


def _gpuvet(args, stdout, stderr=subprocess.PIPE, **kw):
    return subprocess.Popen([PY, "-m", "gpuvet", "run", "--no-here", *args], stdout=stdout, stderr=stderr,
                            env=kw.pop("env", _env()), preexec_fn=_default_signals, **kw)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (ProcessLookupError, OSError):
        return False


@pytest.mark.parametrize("mode", ["truncate", "append", "both-streams"])
def test_job_writes_straight_into_a_file_sink(tmp_path, mode):
    """The job's stdout IS the file (the same inode, a regular file: the old code gave it a pipe), every byte
    lands there in order, after what the file held before (`>>`)."""
    log = tmp_path / "train.log"
    log.write_bytes(b"earlier line\n" if mode == "append" else b"")
    with open(log, "ab" if mode == "append" else "wb") as fh:
        p = _gpuvet(["--", PY, "-c", PROBE + "for i in range(50000): print('step', i)\n"], fh,
                    subprocess.STDOUT if mode == "both-streams" else subprocess.PIPE)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    lines = log.read_text().splitlines()
    if mode == "append":
        assert lines[0] == "earlier line"
        lines = lines[1:]
    ino = str(os.stat(log).st_ino)
    assert lines[0].split() == ["1", "file", ino]
    assert lines[1].split()[1] == ("file" if mode == "both-streams" else "fifo")
    assert lines[2:] == [f"step {i}" for i in range(50000)]


def test_failure_in_a_file_sink_is_diagnosed_from_the_file(tmp_path):
    """A failing job writing into `>> train.log` (which already held something): the capture is read back from
    the file, from the job's first byte on, so the diagnosis's line numbers are the job's own, and output.log
    stays within --log-cap."""
    log, b = tmp_path / "train.log", tmp_path / "b"
    log.write_bytes(b"an earlier run's line\n" * 1000)
    script = ("import sys\nfor i in range(60000): print('noise line %06d' % i)\n"
              f"print({CUDA_ERR!r})\n"
              "for i in range(60000): print('after line %06d' % i)\nsys.exit(1)")
    with open(log, "ab") as fh:
        p = _gpuvet(["--log-cap", "256k", "--bundle", str(b), "--", PY, "-c", script], fh)
        _, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    assert log.read_text().count("\n") == 1000 + 120001  # the file holds it all
    out_log = (b / "output.log").read_bytes()
    assert len(out_log) < 300_000 and out_log.startswith(b"noise line 000000\n")
    assert out_log.endswith(b"after line 059999\n")
    doc = json.loads((b / "diagnosis.json").read_text())
    assert doc["diagnoses"][0]["cause"] == "gpu-arch-unsupported"
    assert doc["diagnoses"][0]["evidence"][0]["line"] == 60001
    assert doc["run"]["output_bytes"] == len(log.read_bytes()) - len(b"an earlier run's line\n" * 1000)
    assert b"gpu-arch-unsupported" in err  # gpuvet's own report goes to its stderr (a pipe here), as always


def test_the_file_keeps_every_byte_when_gpuvet_dies(tmp_path):
    """gpuvet killed (SIGKILL: no handler runs) while the job runs: the job goes on writing into the file (through
    a pipe it would have died of SIGPIPE, or lost its output)."""
    log, go, pidf = tmp_path / "train.log", tmp_path / "go", tmp_path / "pid"
    script = ("import os, sys, time\n"
              f"open({str(pidf)!r} + '.tmp', 'w').write(str(os.getpid())); os.rename({str(pidf)!r} + '.tmp', {str(pidf)!r})\n"
              "print('before', flush=True)\n"
              f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\n"
              "print('after gpuvet died', flush=True)\n")
    with open(log, "wb") as fh:
        p = _gpuvet(["--", PY, "-c", script], fh)
    end = time.monotonic() + 30
    while not (pidf.exists() and log.read_bytes()) and time.monotonic() < end:
        time.sleep(0.01)
    job = int(pidf.read_text())
    try:
        p.kill()
        p.wait(timeout=10)
        go.write_text("")
        end = time.monotonic() + 30
        while _alive(job) and time.monotonic() < end:
            time.sleep(0.01)
        assert log.read_text() == "before\nafter gpuvet died\n"
    finally:
        try:
            os.killpg(job, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("how", ["middle-of-file", "opt-out"])
def test_what_cannot_be_followed_goes_through_the_pipe(tmp_path, how):
    """A file written in its middle (`1<> file`: what gpuvet would read back there is not all the job's) or
    GPUVET_RUN_DIRECT=0: the job gets a pipe, as before, and the output still reaches the file."""
    log = tmp_path / "f.log"
    log.write_bytes(b"x" * 100 if how == "middle-of-file" else b"")
    fd = os.open(log, os.O_RDWR)
    try:
        env = _env(GPUVET_RUN_DIRECT="0") if how == "opt-out" else _env()
        p = _gpuvet(["--", PY, "-c", PROBE], fd, env=env)
        _, err = p.communicate(timeout=60)
    finally:
        os.close(fd)
    assert p.returncode == 0, err
    first = log.read_text().lstrip("x").splitlines()[0]
    assert first.split()[:2] == ["1", "fifo"]


def test_truncation_while_running_is_followed(tmp_path):
    """The log truncated under the job (copytruncate, `: > train.log`) with `>>`: what the job writes after it
    is still captured, and diagnosed."""
    log, b = tmp_path / "train.log", tmp_path / "b"
    script = ("import os, sys, time\nfor i in range(20000): print('noise line %06d' % i)\nsys.stdout.flush()\n"
              "time.sleep(0.5)\nos.truncate(" + repr(str(log)) + ", 0)\ntime.sleep(0.3)\n"
              f"print({CUDA_ERR!r})\nsys.exit(1)")
    with open(log, "ab") as fh:
        p = _gpuvet(["--bundle", str(b), "--", PY, "-c", script], fh)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    assert log.read_text() == CUDA_ERR + "\n"
    assert (b / "output.log").read_text().endswith("noise line 019999\n" + CUDA_ERR + "\n")
    doc = json.loads((b / "diagnosis.json").read_text())
    assert doc["diagnoses"][0]["cause"] == "gpu-arch-unsupported"


def test_a_background_process_holding_the_file_does_not_outlive_the_run(tmp_path):
    """The job leaves a process of its group writing into the file: as one holding a pipe, it is stopped after the
    grace second (never left running), and what it wrote meanwhile is in the capture."""
    log, pidf, b = tmp_path / "train.log", tmp_path / "gc", tmp_path / "b"
    bg = "import time\nprint('from the background', flush=True)\ntime.sleep(60)"
    script = (f"import subprocess, sys\np = subprocess.Popen([{PY!r}, '-c', {bg!r}])\n"
              f"open({str(pidf)!r}, 'w').write(str(p.pid))\nimport time; time.sleep(0.3)\nsys.exit(2)")
    t = time.monotonic()
    with open(log, "wb") as fh:
        p = _gpuvet(["--bundle", str(b), "--", PY, "-c", script], fh)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert time.monotonic() - t < 20
    assert not _alive(int(pidf.read_text()))
    assert b"from the background" in (b / "output.log").read_bytes()
    assert stat.S_IMODE(os.stat(b / "output.log").st_mode) == 0o600


def test_the_middles_prefilter_yields_to_the_job(tmp_path):
    """grep, gpuvet's bulk CPU while a long job runs (the omitted middle's prefilter), runs 10 nicer than gpuvet:
    on a machine whose cores are busy it waits for the job instead of slowing it."""
    job = ("import os, sys, time\n"  # several blocks: the capture's tail overflows (and grep starts) block by block
           "for i in range(5000):\n    sys.stdout.write('noise line %06d ' % i + 'y' * 60 + '\\n')\n"
           "    if i % 500 == 0:\n        sys.stdout.flush(); time.sleep(0.02)\nsys.stdout.flush()\n"
           "me, parent, found = os.getpid(), os.getppid(), None\nend = time.time() + 20\n"
           "while found is None and time.time() < end:\n"
           "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
           "        try:\n"
           "            f = open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()\n"
           "            comm = open('/proc/%s/comm' % pid).read().strip()\n"
           "        except OSError:\n"
           "            continue\n"
           "        if int(f[1]) == parent and comm == 'grep':\n"
           "            found = int(f[16])\n"
           "    time.sleep(0.01)\n"
           "sys.stderr.write('grep-nice %s own-nice %s\\n' % (found, os.getpriority(os.PRIO_PROCESS, 0)))\n")
    p = _gpuvet(["--log-cap", "64k", "--", PY, "-c", job], subprocess.DEVNULL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    words = err.decode().split()
    assert words[0] == "grep-nice" and words[1] != "None", err
    assert int(words[1]) == min(19, int(words[3]) + 10)


def test_group_pids_lists_the_live_members_of_one_group_only(tmp_path):
    """The one /proc walk behind `_group_alive` and `_group_holds`: the group's live processes, not its zombies,
    not another group's; and both callers answer through it (a member holding the file; the group gone)."""
    from gpuvet.app import run as runmod

    log = tmp_path / "held.log"
    log.write_text("")
    # a group: a shell (the leader) that leaves a zombie child and a live one holding the log open
    leader = subprocess.Popen(["sh", "-c", f"sleep 30 >> {log} & true & sleep 0.2; exec sleep 30"],
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(list(runmod._group_pids(leader.pid))) < 2:
            time.sleep(0.02)
        time.sleep(0.3)
        pids = set(runmod._group_pids(leader.pid))
        assert str(leader.pid) in pids and len(pids) == 2, pids  # the leader and the background sleep, no zombie
        assert str(os.getpid()) not in pids
        assert runmod._group_alive(leader.pid)
        st = os.stat(log)
        assert runmod._group_holds(leader.pid, [(st.st_dev, st.st_ino)])
        assert not runmod._group_holds(leader.pid, [(st.st_dev, st.st_ino + 1)])
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and runmod._group_alive(leader.pid):
        time.sleep(0.02)
    assert list(runmod._group_pids(leader.pid)) == [] and not runmod._group_alive(leader.pid)
