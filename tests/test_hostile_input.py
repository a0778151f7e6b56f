"""Bounded work on hostile input: huge values, regex bombs, endless tools, special files, closed streams."""
import os
import stat
import time

import pytest

from conftest import run_cli


def test_a_10mb_version_value_is_capped(tmp_path):
    p = tmp_path / "ce.txt"
    p.write_text("PyTorch version: 2.3.0" + "x" * 10_000_000 + "\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n")
    r = run_cli(["check", "--from", str(p), "--format", "json"])
    assert r.code in (0, 1, 3), r.err
    assert len(r.out) < 200_000


# ----------------------------------------------------------------------------------------- -o FILE
H200_CE = None


def _ce():
    from conftest import REAL

    return str(REAL / "h200-cuda13" / "collect_env.txt")


def test_output_keeps_mode_and_replaces_atomically(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    os.chmod(out, 0o640)
    ino = out.stat().st_ino
    r = run_cli(["check", "--from", _ce(), "--format", "json", "-o", str(out)])
    assert r.code in (0, 1), r.err
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # the old code gave 0644 (a new file's mode)
    assert out.stat().st_ino != ino and out.read_text().startswith("{")
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary left


def test_output_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "target.md"
    target.write_text("")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    r = run_cli(["check", "--from", _ce(), "--format", "markdown", "-o", str(link)])
    assert r.code in (0, 1), r.err
    assert link.is_symlink() and target.read_text().startswith("# gpuvet check")


def _device(tmp_path, name, minor):
    """A private copy of a character device (null: 1,3; full: 1,7), so a regression can only replace this one,
    never the machine's /dev node."""
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    path = tmp_path / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    return path


def test_output_to_a_device_is_not_replaced(tmp_path):
    # the old code renamed a temporary file over the device (as root: the node was gone, a file in its place)
    dev = _device(tmp_path, "null", 3)
    r = run_cli(["check", "--from", _ce(), "-o", str(dev)])
    assert r.code in (0, 1), r.err
    assert stat.S_ISCHR(os.stat(dev).st_mode) and os.stat(dev).st_rdev == os.makedev(1, 3)


def test_output_to_a_full_device_is_one_error_line(tmp_path):
    dev = _device(tmp_path, "full", 7)
    r = run_cli(["check", "--from", _ce(), "-o", str(dev)])
    assert r.code == 3 and "No space left" in r.err and "Traceback" not in r.err
    assert stat.S_ISCHR(os.stat(dev).st_mode)


def test_output_to_a_fifo_with_a_reader_and_without(tmp_path):
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    r = run_cli(["check", "--from", _ce(), "-o", str(fifo)])  # nobody reads: an error, not a hang
    assert r.code == 3 and "no reader" in r.err and time.monotonic() - t0 < 5
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there before gpuvet opens it
    os.set_blocking(fd, True)
    data = bytearray()

    def reader():
        end = time.monotonic() + 30
        while time.monotonic() < end:
            chunk = os.read(fd, 65536)
            if chunk:
                data.extend(chunk)
            elif data:
                return  # the writer closed
            else:
                time.sleep(0.01)  # no writer yet

    th = threading.Thread(target=reader)
    th.start()
    got = [run_cli(["check", "--from", _ce(), "-o", str(fifo)])]
    th.join(30)
    os.close(fd)
    assert got and got[0].code in (0, 1) and b"gpuvet 0." in data and len(data) > 200
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_output_into_a_directory_is_refused(tmp_path):
    r = run_cli(["check", "--from", _ce(), "-o", str(tmp_path)])
    assert r.code in (2, 3) and "Traceback" not in r.err


# ----------------------------------------------------------------------------------------- tools
def _tool(tmp_path, name, body):
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return str(p)


def test_a_tool_printing_without_end_is_capped_and_stopped(tmp_path):
    """A fake nvidia-smi printing 200 MB used 2.2 GB and 14.5 s despite the 3 s deadline."""
    from gpuvet.probes.system import MAX_OUTPUT, System

    exe = _tool(tmp_path, "nvidia-smi", "exec yes 'GPU 0: NVIDIA H200 (UUID: GPU-0000)'")
    t = time.monotonic()
    res = System({"PATH": str(tmp_path) + ":" + os.environ["PATH"]}).run([exe], timeout=3)
    assert time.monotonic() - t < 3.5
    assert len(res.stdout) <= MAX_OUTPUT and res.error and "stopped" in res.error


def test_deadline_holds_while_a_tool_trickles_output(tmp_path):
    from gpuvet.probes.system import System

    exe = _tool(tmp_path, "slowtool", "while true; do echo tick; sleep 0.1; done")
    t = time.monotonic()
    res = System({"PATH": str(tmp_path) + ":" + os.environ["PATH"]}).run([exe], timeout=1)
    assert res.error == "timeout" and time.monotonic() - t < 2.5


def test_no_process_of_a_probe_survives(tmp_path):
    from gpuvet.probes.system import System

    pidf = tmp_path / "pid"
    exe = _tool(tmp_path, "hangs", f"sleep 60 & echo $! > {pidf}; echo started; sleep 60")
    res = System({"PATH": str(tmp_path) + ":" + os.environ["PATH"]}).run([exe], timeout=1)
    assert res.error == "timeout"
    pid = int(pidf.read_text())
    time.sleep(0.2)
    try:
        os.kill(pid, 0)
        state = open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0]
        assert state == "Z", "the tool's child survived the probe"
    except (ProcessLookupError, FileNotFoundError):
        pass


def test_a_tool_that_exits_but_leaves_a_child_holding_the_pipe(tmp_path):
    from gpuvet.probes.system import System

    exe = _tool(tmp_path, "forks", "sleep 30 & echo done")
    t = time.monotonic()
    res = System({"PATH": str(tmp_path) + ":" + os.environ["PATH"]}).run([exe], timeout=3)
    assert res.ok and res.stdout.strip() == "done" and time.monotonic() - t < 2


def test_python_printing_without_end_gives_a_bounded_report(tmp_path):
    """--python printing 300 MB gave a 308 MB report."""
    exe = _tool(tmp_path, "python3", "exec yes '/usr/lib/python3/dist-packages'")
    r = run_cli(["check", "--python", exe, "--format", "json"])
    assert r.code in (0, 1, 3), r.err
    assert len(r.out) < 5_000_000


# ----------------------------------------------------------------------------------------- empty, FIFOs, streams
def test_blank_input_is_empty_for_check_and_diagnose_alike(tmp_path):
    """Whitespace over 8 KiB was exit 0 for diagnose and exit 3 for check."""
    p = tmp_path / "blank.log"
    p.write_text(" \n" * 80_000)
    for argv in (["diagnose", str(p)], ["check", "--from", str(p)]):
        r = run_cli(argv)
        assert r.code == 3 and "empty" in r.err, (argv, r.err)
    r = run_cli(["diagnose", "-"], stdin=" \n" * 80_000)
    assert r.code == 3 and "empty" in r.err


def test_blank_lines_then_an_error_is_still_read(tmp_path):
    p = tmp_path / "late.log"
    p.write_text("\n" * 80_000 + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    t = time.monotonic()
    r = run_cli(["diagnose", str(p), "--format", "json"])
    assert r.code == 1 and time.monotonic() - t < 10
    assert r.json()["diagnoses"][0]["evidence"][0]["line"] == 80_001


def test_fifo_with_no_writer_is_refused_not_waited_on(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_FIFO_WAIT", "0.5")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for argv in (["diagnose", str(fifo)], ["check", "--from", str(fifo)]):
        t = time.monotonic()
        r = run_cli(argv)
        assert r.code == 3 and "nothing written" in r.err and time.monotonic() - t < 5, (argv, r.err)


def test_fifo_with_a_writer_is_read_once(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "x.log"
    log.write_text("epoch 1\n" * 5000 + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.run(["bash", "-c", f'exec {sys.executable} -m gpuvet diagnose --format json <(cat "$0")', str(log)],
                       capture_output=True, timeout=60, env=dict(os.environ, PYTHONPATH=os.path.join(root, "src")))
    assert p.returncode == 1, p.stderr
    import json

    assert json.loads(p.stdout)["diagnoses"][0]["evidence"][0]["line"] == 5001


def _sh(cmd: str):
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run(["sh", "-c", cmd.replace("GPUVET", f"{sys.executable} -m gpuvet")], capture_output=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=os.path.join(root, "src")))


def test_closed_standard_streams(tmp_path):
    from conftest import REAL

    ce = REAL / "h200-cuda13" / "collect_env.txt"
    r = _sh("GPUVET diagnose - <&-")
    assert r.returncode == 3 and b"closed" in r.stderr and b"Traceback" not in r.stderr  # was exit 4
    r = _sh(f"GPUVET check --from {ce} >&-")
    assert r.returncode in (0, 1) and b"standard output is closed" in r.stderr  # was exit 4
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00\x01" * 100)
    r = _sh(f"GPUVET check --from {bad} 2>&-")
    assert r.returncode == 3  # stderr closed turned exit 3 into 1


def test_broken_pipe_is_silent(tmp_path):
    from conftest import REAL

    ce = REAL / "h200-cuda13" / "collect_env.txt"
    r = _sh(f"GPUVET check --from {ce} --verbose --format json | head -c 10 >/dev/null; echo ${{PIPESTATUS:-}}")
    assert r.stderr == b"", r.stderr
    r = _sh("GPUVET rules --format json | head -1 > /dev/null")
    assert r.stderr == b"", r.stderr


def test_snapshot_and_validate_outputs_are_written_like_every_report(tmp_path):
    """`snapshot -o` / `history -o` and `validate --html` used `<path>.tmp-<pid>` and renamed it over the target:
    a guessable name another user could plant as a symlink, and a symlink target replaced by a regular file."""
    from gpuvet.app.validate import write_html
    from gpuvet.cli.snapshot_cmd import write_atomic
    from gpuvet.model import Report

    target = tmp_path / "target.json"
    target.write_text("")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / f"link.json.tmp-{os.getpid()}").symlink_to(victim)  # the old, guessable temporary name
    write_atomic(str(link), '{"token": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"}')
    assert link.is_symlink() and target.read_text().startswith("{") and "hf_abcdefghij" not in target.read_text()
    assert victim.read_text() == "precious"
    out = tmp_path / "r.html"
    out.write_text("old")
    os.chmod(out, 0o640)
    write_html(Report(command="validate"), str(out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and out.read_text().lstrip().lower().startswith("<!doctype")
