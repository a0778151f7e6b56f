"""`gpuvet diagnose` end to end: JSON document, formats, stdin, bad input, large files (grep and Python
paths agree), --follow on a growing log, --here with a fake machine."""
import shutil
import subprocess
import sys
import threading
import time

import pytest

from conftest import REAL, run_cli
from gpuvet.app.diagnose import diagnose_path, scan_file_fast, scan_stream

LOG = """[2024-06-01 10:00:00,001] INFO loading model
\x1b[33mWARNING\x1b[0m something harmless
[rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 10, in <module>
[rank0]: RuntimeError: HIP error: invalid device function
[rank0]: HIP kernel errors might be asynchronously reported at some other API call
"""


def write(tmp_path, text, name="log.txt"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


def test_json_document(tmp_path):
    r = run_cli(["diagnose", "--format", "json", write(tmp_path, LOG)])
    assert r.code == 1, r.err
    doc = r.json()
    assert doc["command"] == "diagnose" and isinstance(doc["diagnoses"], list)
    top = doc["diagnoses"][0]
    assert {"cause", "component", "confidence", "evidence", "fix", "why"} <= set(top)
    assert top["cause"] == "gpu-arch-unsupported" and 0 < top["confidence"] <= 1
    assert top["evidence"][0]["line"] == 5 and "invalid device function" in top["evidence"][0]["text"]
    assert doc["findings"][0]["cause"] == "gpu-arch-unsupported"
    confs = [d["confidence"] for d in doc["diagnoses"]]
    assert confs == sorted(confs, reverse=True)


def test_user_code_error_gives_empty_list(tmp_path):
    text = ("../aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
            "thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.\nRuntimeError: CUDA error: device-side assert triggered\n")
    r = run_cli(["diagnose", "--format", "json", write(tmp_path, text)])
    assert r.code == 0 and r.json()["diagnoses"] == [] and r.json()["user_code_signals"]


def test_terminal_and_markdown(tmp_path):
    p = write(tmp_path, LOG)
    r = run_cli(["diagnose", p])
    assert "gpu-arch-unsupported" in r.out and "line 5" in r.out
    r = run_cli(["diagnose", "--format", "markdown", p])
    assert "gpu-arch-unsupported" in r.out


def test_stdin():
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=LOG)
    assert r.json()["diagnoses"][0]["cause"] == "gpu-arch-unsupported"


def test_pasted_report_facts_are_used():
    text = (REAL / "h200-cuda13" / "collect_env.txt").read_text() + "\nRuntimeError: CUDA error: out of memory\n"
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    doc = r.json()
    assert doc["diagnoses"][0]["cause"] == "memory-allocator"
    assert doc["facts"], "collect_env facts should be parsed"


@pytest.mark.parametrize("content,msg", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8, "binary"),
])
def test_bad_input_one_line_error(tmp_path, content, msg):
    r = run_cli(["diagnose", write(tmp_path, content)])
    assert r.code == 3 and msg in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err


def test_directory_missing_and_stdin_binary(tmp_path):
    r = run_cli(["diagnose", str(tmp_path)])
    assert r.code == 3 and "directory" in r.err
    r = run_cli(["diagnose", str(tmp_path / "nope.log")])
    assert r.code == 3 and "cannot read" in r.err
    r = run_cli(["diagnose", "-"], stdin=b"\x00\x01\x02" * 100)
    assert r.code == 3 and "binary" in r.err
    r = run_cli(["diagnose"])
    assert r.code == 2


def test_invalid_utf8_is_fine(tmp_path):
    p = write(tmp_path, b"caf\xe9 \xff\xfe\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    r = run_cli(["diagnose", "--format", "json", p])
    assert r.json()["diagnoses"][0]["cause"] == "gpu-arch-unsupported"


def test_large_file_grep_and_python_paths_agree(tmp_path):
    filler = ("2024-06-01 10:00:00,001 INFO step 12 loss 0.31 lr 1e-4 tokens/s 12000\n" * 4000).encode()
    p = tmp_path / "big.log"
    with open(p, "wb") as fh:
        fh.write(b"GPU 0: AMD Instinct MI250X (gfx90a)\n")
        for _ in range(80):
            fh.write(filler)
        fh.write(b"x" * (3 << 20) + b"\n")  # one multi-MB line
        fh.write(b"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.\n")
        for _ in range(20):
            fh.write(filler)
    with open(p, "rb") as fh:
        slow, _ = scan_stream(fh)
    if shutil.which("grep"):
        fast, _ = scan_file_fast(str(p))
        assert fast.matches.keys() == slow.matches.keys()
        assert fast.first_line == slow.first_line
    assert slow.first_line["LOG100"] == 1 + 80 * 4000 + 2
    rep = diagnose_path(str(p))
    assert rep.extra["diagnoses"][0]["cause"] == "memory-allocator"
    assert rep.extra["scan"]["hints"]["amd"]["line"] == 1


def test_follow_reports_first_diagnosis_as_it_appears(tmp_path):
    p = tmp_path / "train.log"
    p.write_text("step 1 loss 2.0\n")

    def writer():
        with open(p, "a") as fh:
            for i in range(3):
                time.sleep(0.2)
                fh.write(f"step {i + 2} loss 1.{i}\n")
                fh.flush()
            fh.write("NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)\n")
            fh.flush()
            time.sleep(0.5)
            fh.write("more lines after the error\n")

    t = threading.Thread(target=writer)
    t.start()
    started = time.monotonic()
    r = run_cli(["diagnose", "--follow", str(p), "--wait", "20", "--format", "json"])
    t.join()
    assert r.code == 1, r.err
    assert r.json()["diagnoses"][0]["cause"] == "collective-comm"
    assert time.monotonic() - started < 15


def test_follow_gives_up_after_wait(tmp_path):
    p = tmp_path / "quiet.log"
    p.write_text("all good\n")
    r = run_cli(["diagnose", "--follow", str(p), "--wait", "0.5"])
    assert r.code == 0 and "no diagnosis" in r.err


def test_here_adds_live_facts(tmp_path):
    from fakes import FakeSystem

    r = run_cli(["diagnose", "--here", "--format", "json", write(tmp_path, LOG)], system=FakeSystem())
    assert r.code == 1, r.err
    assert r.json()["meta"]["facts_origin"] == "pasted+live"


def test_real_subprocess_never_tracebacks(tmp_path):
    gpuvet = [sys.executable, "-m", "gpuvet"]
    for arg in (str(tmp_path), str(tmp_path / "missing")):
        p = subprocess.run(gpuvet + ["diagnose", arg], capture_output=True, text=True, timeout=60)
        assert p.returncode == 3 and "Traceback" not in p.stderr and p.stderr.startswith("gpuvet: error:")


H200_RUNS = REAL / "h200-gpuvet" / "runs"


@pytest.mark.skipif(not H200_RUNS.is_dir(), reason="H200 run captures not present")
def test_real_h200_captures():
    """Output captured by `gpuvet run` on the real H200 (tests/fixtures/real/h200-gpuvet/README.md):
    a real device-side assert from indexing past a tensor blames nothing; a real 200 GiB OOM is memory."""
    r = run_cli(["diagnose", "--format", "json", str(H200_RUNS / "assert-output.log")])
    assert r.code == 0 and r.json()["diagnoses"] == [] and r.json()["user_code_signals"]
    r = run_cli(["diagnose", "--format", "json", str(H200_RUNS / "oom-output.log")])
    top = r.json()["diagnoses"][0]
    assert top["cause"] == "memory-allocator" and top["component"] == "user-code"
    assert top["evidence"][0]["line"] == 3


def _deep_traceback(path, frames: int, files: int = 1) -> None:
    with open(path, "w") as fh:
        fh.write("Traceback (most recent call last):\n")
        for i in range(frames):
            fh.write(f'  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module_{i % files}.py", line {i}, '
                     f'in level_{i}\n'
                     f"    return recurse(x - 1, depth={i})\n")
        fh.write("RuntimeError: CUDA error: an illegal memory access was encountered\n")


def test_a_deep_tracebacks_frames_are_read_once_per_file_past_the_head(tmp_path):
    """Past the head of a large log, a traceback frame of a file already seen is not read again: 200,000 frames of
    one module were 100,000 candidate lines (their paths hold prefilter keys: here torch's, a fact pattern's) and 10 s
    of Python.  The head's frames
    are all read, each file's first frame past it too, and the error after them still decides."""
    from gpuvet.logs.match import Scanner
    from gpuvet.logs.signatures import load_catalog

    p = tmp_path / "deep.log"
    _deep_traceback(p, 20000, files=3)
    with open(p, "rb") as fh:
        slow, _ = scan_stream(fh)
    # the head (every line read: ~2,300 of the frames) and one frame per file past it, not 20,000
    assert slow.candidates < 3000, slow.candidates
    assert "LOG131" in slow.matches and slow.first_line["LOG131"] == 2 * 20000 + 2  # the error after the frames
    # every frame is read where the whole text is read (a pasted report, the head of a log)
    sc = Scanner(load_catalog())
    sc.feed_text(p.read_text())
    assert sc.result.candidates >= 20000
    # a two-line reading waiting for its next line is given that line even when it is a repeated frame
    sc = Scanner(load_catalog(), hints_everywhere=False)
    assert sc._repeated_frame(b'  File "/a.py", line 1, in f\n', 0, 28) is False
    assert sc._repeated_frame(b'  File "/a.py", line 2, in g\n', 0, 28) is True
    assert sc._repeated_frame(b'  File "/b.py", line 2, in g\n', 0, 28) is False
    assert sc._repeated_frame(b"    return f(x)\n", 0, 15) is False


def test_a_mid_sized_file_goes_through_the_grep_prefilter(tmp_path):
    """Files from 4 MiB on are scanned by grep with the same patterns (the trie in Python reads 5-11 MB/s): a 13.7 MiB
    deep traceback took 3.2 s in Python.  The answer is the one the Python path gives."""
    p = tmp_path / "deep.log"
    _deep_traceback(p, 60000)
    assert p.stat().st_size >= 4 * 1024 * 1024
    rep = diagnose_path(str(p))
    with open(p, "rb") as fh:
        slow, _ = scan_stream(fh)
    if shutil.which("grep"):
        assert rep.extra["scan"]["mode"] == "grep-prefilter"
        fast, _ = scan_file_fast(str(p))
        assert fast.matches.keys() == slow.matches.keys() and fast.first_line == slow.first_line
    py = diagnose_path(str(p), fast=False)
    assert py.extra["scan"]["mode"] == "python"
    assert [d["cause"] for d in rep.extra["diagnoses"]] == [d["cause"] for d in py.extra["diagnoses"]] != []
