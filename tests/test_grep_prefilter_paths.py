"""One answer whichever way a log comes in (day 8, issue 7).

Past 4 MiB the prefilter is ``grep -E`` with the catalog's key trie (``Catalog.grep_pattern``), for a file, for
standard input redirected from a file and for a pipe.  The 800 signature patterns grep was given before blew up
its DFA on varied text (a 3.5 MB log of real captured training lines: 30 s of grep's CPU); the trie is one small
DFA.  It selects the lines the Python trie selects, and they are read the same way (repeated traceback frames
skipped past the head, the next line given to a two-line reading), so each path gives the Python path's scan.
"""
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REAL

from gpuvet.app.diagnose import scan_file_fast, scan_stream, scan_stream_fast
from gpuvet.logs.signatures import ere_trie, load_catalog

needs_grep = pytest.mark.skipif(not shutil.which("grep"), reason="no grep")
ROOT = Path(__file__).resolve().parent.parent


def _summary(r):
    return {"matches": {k: [(m.line, m.text) for m in v] for k, v in r.matches.items()}, "counts": r.counts,
            "first": r.first_line, "hints": {k: (h.line, h.text) for k, h in r.hints.items()},
            "rows": [(x.table, x.source, sorted(x.values.items(), key=str)) for x in r.rows],
            "candidates": r.candidates, "errors": list(r.error_lines), "symptoms": list(r.symptom_lines),
            "lines": r.lines}


def _grep_lines(pattern: str, data: bytes) -> list[int]:
    p = subprocess.run(["grep", "-a", "-n", "-E", "-e", pattern], input=data, capture_output=True,
                       env=dict(os.environ, LC_ALL="C"), timeout=60)
    assert p.returncode in (0, 1), p.stderr
    return [int(x.split(b":", 1)[0]) for x in p.stdout.splitlines()]


@needs_grep
def test_the_ere_trie_selects_exactly_the_lines_holding_a_key():
    keys = ["a]b", "c\\d", "^x", "p|q", "(e)", "[f", "g.h", "i*j", "k+l?", "{m}", "n$o", "uvw", "uvx", "uv yz", "-z-"]
    lines = [f"..{k}.." for k in keys] + ["ab", "c d", "x^", "p", "q", "e", "f", "ghx", "ij", "kl", "m", "no", "uv",
                                         "uvy", "u v w", "z", "a]", "c\\", "g h", "i j", "k+l", "uvwxyz", "--z-"]
    data = "\n".join(lines).encode() + b"\n"
    want = [i for i, ln in enumerate(lines, 1) if any(k in ln for k in keys)]
    assert _grep_lines(ere_trie(keys), data) == want
    assert ere_trie([]) is None


@needs_grep
def test_the_catalogs_grep_pattern_selects_what_the_python_trie_selects():
    """On every line of this project's real captures (tool reports, tracebacks, training output)."""
    cat = load_catalog()
    texts = [p.read_bytes() for p in sorted(REAL.rglob("*")) if p.is_file() and p.suffix in (".txt", ".log")]
    lines = [ln for t in texts for ln in t.split(b"\n") if b"\x00" not in ln]
    data = b"\n".join(lines) + b"\n"
    want = [i for i, ln in enumerate(lines, 1) if cat.quick_bytes.search(ln)]
    assert len(want) > 100
    assert _grep_lines(cat.grep_pattern, data) == want


FILLER = "".join(f"2024-06-01 10:00:{i % 60:02d},001 INFO trainer.py:{i % 900} step {i} loss 0.{i % 97:02d} "
                 f"lr 1e-4 tokens/s {12000 + i}\n" for i in range(3000))  # ~300 KiB: past the head's hints


def _texts() -> dict[str, str]:
    real_tb = (REAL / "h200-faults" / "runs" / "cc" / "bundle" / "output.log").read_text()
    oom = (REAL / "h200-gpuvet" / "runs" / "oom-output.log").read_text()
    frames = "".join(f'  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module_{i % 3}.py", line {i}, '
                     f"in level_{i}\n    return recurse(x - 1, depth={i})\n" for i in range(3000))
    return {
        "a real traceback past the head": FILLER + real_tb,
        "a training log of real captured lines, then an OOM": FILLER + "".join(
            (REAL / "h200-gpuvet" / "runs" / f).read_text() for f in ("assert-output.log", "hang-output.log")) * 3
            + FILLER + oom,
        "a two-line reading past the head": FILLER + ">>> print(torch.cuda.is_available())\nFalse\n" + FILLER
            + "In [3]: torch.cuda.is_available()\n\nOut[3]: False\n",
        "a deep traceback": "Traceback (most recent call last):\n" + frames
            + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
        "a short paste": real_tb,
        # day 9: the file's own line count, not the last line grep printed (chatter after the error; no last newline)
        "a log that goes on after its error, no last newline": FILLER + real_tb + FILLER * 2 + "step 9 done",
    }


@needs_grep
@pytest.mark.parametrize("name", list(_texts()))
def test_the_grep_paths_scan_what_the_python_path_scans(tmp_path, name):
    text = _texts()[name]
    p = tmp_path / "x.log"
    p.write_text(text)
    with open(p, "rb") as fh:
        slow, head = scan_stream(fh)
    fast = scan_file_fast(str(p))
    assert fast is not None and fast[1] == head
    # the file's line count too (day 8: the last line grep printed): counted from that line on
    assert _summary(fast[0]) == _summary(slow)
    with open(p, "rb") as fh:  # standard input redirected from the file, read from an offset
        fd = os.dup(fh.fileno())
    try:
        got = scan_file_fast("<stdin>", fd=fd, offset=0)
    finally:
        os.close(fd)
    assert got is not None
    assert _summary(got[0]) == _summary(slow)
    # a pipe: the first bytes bounded in memory, then grep (min_bytes: as small as the head allows)
    res, head2, mode = scan_stream_fast(io.BytesIO(text.encode()), min_bytes=0)
    assert _summary(res) == _summary(slow) and head2 == head
    assert mode == ("grep-prefilter" if len(text.encode()) > (1 << 20) else "python")
    if "two-line" in name:  # both readings found, the second across a blank line
        n = FILLER.count("\n")
        assert [m.line for m in slow.matches["LOG242"]] == [n + 1, 2 * n + 3]


def test_a_short_stream_is_read_in_python_without_grep():
    res, head, mode = scan_stream_fast(io.BytesIO(b"RuntimeError: CUDA error: out of memory\n"))
    assert mode == "python" and head.startswith(b"RuntimeError") and res.lines == 1


# ----------------------------------------------------------------------------------------- the command line
def _sh(cmd: str, stdin=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run(["sh", "-c", cmd.replace("GPUVET", f"{sys.executable} -m gpuvet")], capture_output=True,
                          timeout=120, stdin=stdin, env=dict(os.environ, PYTHONPATH=os.path.join(root, "src")))


def _big_log(path: Path) -> None:
    """~4.5 MiB: a training log's lines, a real traceback's frames, the error."""
    with open(path, "w") as fh:
        fh.write("GPU 0: AMD Instinct MI250X (gfx90a)\n")
        for _ in range(18):
            fh.write(FILLER)
        fh.write((REAL / "h200-faults" / "runs" / "cc" / "bundle" / "output.log").read_text())
        fh.write("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.\n")


def _answer(r) -> tuple:
    import json

    assert r.returncode == 1, r.stderr[-500:]
    d = json.loads(r.stdout)
    return (d["scan"]["mode"], d["scan"]["lines"], d["scan"]["candidate_lines"], sorted(d["scan"]["hints"]),
            [(x["cause"], x["confidence"], [e.get("line") for e in x["evidence"]]) for x in d["diagnoses"]])


@needs_grep
def test_standard_input_from_a_file_or_a_pipe_answers_as_the_file_does(tmp_path):
    """``gpuvet diagnose - < big.log`` and ``cat big.log | gpuvet diagnose -`` read every byte in Python (day 7: a 3.5 MB
    log took 2.82 s against grep's 0.085 s); both now go through grep, with the file's answer."""
    p = tmp_path / "big.log"
    _big_log(p)
    assert p.stat().st_size >= 4 * 1024 * 1024
    by_path = _answer(_sh(f"GPUVET diagnose --format json {p}"))
    assert by_path[0] == "grep-prefilter" and by_path[4]
    by_file = _answer(_sh(f"GPUVET diagnose --format json - < {p}"))
    by_pipe = _answer(_sh(f"cat {p} | GPUVET diagnose --format json -"))
    by_python = _answer(_sh(f"cat {p} | GPUVET diagnose --no-grep --format json -"))
    assert by_file == by_path == by_pipe
    assert by_python[0] == "python" and by_python[1:] == by_path[1:]


@needs_grep
def test_standard_input_read_from_an_offset(tmp_path):
    """A redirected file whose offset has moved (``(read first; gpuvet diagnose -) < log``) is read from there on,
    as the Python path reads it: line 1 is the line at the offset."""
    p = tmp_path / "big.log"
    _big_log(p)
    skip = b"a line a wrapper script consumed first\n" * 3
    q = tmp_path / "prefixed.log"
    q.write_bytes(skip + p.read_bytes())
    with open(q, "rb") as fh:
        fh.seek(len(skip))
        moved = _answer(_sh("GPUVET diagnose --format json -", stdin=fh))
    assert moved == _answer(_sh(f"GPUVET diagnose --format json {p}"))


def test_standard_input_refusals_are_the_same_for_a_pipe_and_a_file(tmp_path):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)) * 20000)  # 5 MB of binary
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    for src, word in ((blob, b"binary"), (empty, b"empty")):
        a = _sh(f"GPUVET diagnose - < {src}")
        b = _sh(f"cat {src} | GPUVET diagnose -")
        assert a.returncode == b.returncode == 3 and word in a.stderr and a.stderr == b.stderr, (a.stderr, b.stderr)
    r = _sh("GPUVET diagnose - <&-")
    assert r.returncode == 3 and b"closed" in r.stderr and b"Traceback" not in r.stderr


# ----------------------------------------------------------------------------------------- the head's fact detectors
def _case_texts() -> list[str]:
    import yaml

    out = []
    for d in sorted((ROOT / "bench").glob("incidents-*")):
        for p in sorted(d.rglob("*.yaml")):
            if "frozen" in p.relative_to(d).parts and d.name in ("incidents-new8", "incidents-new9"):
                continue
            try:
                doc = yaml.safe_load(p.read_text(encoding="utf-8"))
            except Exception:
                continue
            inputs = (doc or {}).get("inputs") if isinstance(doc, dict) else None
            if isinstance(inputs, dict):
                out.append("\n".join(str(v) for v in inputs.values() if isinstance(v, str)))
    return out


def test_a_detectors_literal_gate_never_refuses_text_its_pattern_matches():
    """parse_report runs a detector's regex on a large text only where its literal gate lets it (the head of a large
    log: ~0.6 s of regex searches on 1 MiB of a deep traceback, ~0.05 s behind the gates)."""
    from gpuvet.probes import pasted

    texts = _case_texts() + [p.read_text(errors="replace") for p in sorted(REAL.rglob("*.txt"))]
    assert len(texts) > 100
    gates = pasted._gates()
    opened = 0
    for t in texts:
        t = pasted.clean(t)
        for (pattern, _, fname), gate in zip(pasted.DETECTORS, gates):
            if pattern.search(t):
                assert gate(t), (fname, t[:200])
                opened += 1
    assert opened > 100


def test_a_large_head_gives_the_facts_a_small_one_gives(monkeypatch):
    from gpuvet.probes import pasted

    ce = (REAL / "h200-cuda13" / "collect_env.txt").read_text()
    frames = "".join(f'  File "/opt/venv/lib/python3.11/site-packages/mylib/m.py", line {i}, in f_{i}\n'
                     f"    return g(x)\n" for i in range(8000))
    for text in (frames + ce, ce + frames, FILLER * 3 + ce):
        assert len(text) > pasted.GATED_TEXT
        gated = pasted.parse_report(text)
        monkeypatch.setattr(pasted, "GATED_TEXT", 1 << 40)
        plain = pasted.parse_report(text)
        monkeypatch.undo()
        assert [(r.table, r.source, r.values) for r in gated.rows] == [(r.table, r.source, r.values) for r in plain.rows]
        assert any(r.table == "framework_builds" for r in gated.rows)


@needs_grep
def test_multi_megabyte_lines_are_read_in_bounded_memory_with_their_line_numbers(tmp_path):
    """Issue 7's 10 MB-line shape (bench/diagnose_speed.py: five 10 MB lines, then the error), smaller: three 3 MB
    lines without a newline, then the error; past 4 MiB through grep.  Each path finds the error at line 4 and
    counts 4 lines; a cut line keeps its head and tail (logs.match.iter_blocks)."""
    p = tmp_path / "long.log"
    with open(p, "wb") as fh:
        for i in range(3):
            fh.write(b"metrics=" + b"0.123456," * ((3 << 20) // 9) + b"\n")
        fh.write(b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert p.stat().st_size > 4 << 20
    with open(p, "rb") as fh:
        slow, _ = scan_stream(fh)
    fast = scan_file_fast(str(p))
    assert fast is not None
    assert _summary(fast[0]) == _summary(slow)
    assert slow.lines == 4 and 4 in [m.line for ms in slow.matches.values() for m in ms]
    res, _, mode = scan_stream_fast(io.BytesIO(p.read_bytes()), min_bytes=0)
    assert mode == "grep-prefilter" and _summary(res) == _summary(slow)
