"""Issue 7 (day 9, r9): `gpuvet run`'s omitted middle (the output between the kept head and tail of output.log).

Until day 9 the middle went through ``grep -E -f`` with every signature and fact pattern (829): a DFA grep built at
~0.1 MB/s on varied real log text (bench/results/diagnose_speed-day8.md), so on such output the middle fell behind and
went unscanned.  It now runs the catalog's key trie (the lines ``gpuvet diagnose``'s prefilter selects), which selects
many more lines on a chatty log; the keep policy (``run.MiddleScan``) bounds what is kept: two lines of each shape,
the context after them, the first half of the budget and a ring of the newest.  A decisive line in the middle of a
real captured log, between thousands of key-holding chatter lines, is diagnosed with its real line number."""
from __future__ import annotations

import shutil
import time

import pytest

from conftest import REAL

from gpuvet.app import run as run_mod
from gpuvet.logs.fallback import is_error_line
from gpuvet.logs.match import Scanner
from gpuvet.logs.signatures import load_catalog

pytestmark = pytest.mark.skipif(not shutil.which("grep"), reason="no grep")
CC = REAL / "h200-faults" / "runs" / "cc" / "bundle" / "output.log"  # a real torch.compile failure: LOG071


def _chatter() -> list[bytes]:
    """Lines of this project's real captures (tool reports, training output) that hold a prefilter key but are no
    error and match no signature: what a chatty job prints around its error."""
    cat = load_catalog()
    out, seen = [], set()
    for p in sorted(REAL.rglob("*")):
        if not p.is_file() or p.suffix not in (".txt", ".log") or p == CC:
            continue
        for ln in p.read_bytes().split(b"\n"):
            ln = ln.rstrip(b"\r")
            if not ln or ln in seen or b"\x00" in ln or len(ln) > 300 or not cat.quick_bytes.search(ln):
                continue
            seen.add(ln)
            text = ln.decode("utf-8", "replace")
            sc = Scanner(cat)
            sc.feed(1, ln)
            if not is_error_line(text) and not sc.result.matches:
                out.append(ln)
    assert len(out) > 200
    return out


def _job_output(chatter: list[bytes], before: int, after: int) -> tuple[bytes, int]:
    """``before`` chatter lines (numbers varied), the real failure, ``after`` more; the line number of its
    decisive line."""
    def lines(n: int, start: int) -> list[bytes]:
        return [chatter[i % len(chatter)] + b" step %d" % (start + i) for i in range(n)]

    fail = CC.read_bytes().rstrip(b"\n").split(b"\n")
    sc = Scanner(load_catalog())  # where the real capture alone shows it
    sc.feed_block(1, b"\n".join(fail) + b"\n")
    at = before + sc.result.first_line["LOG071"]
    data = b"\n".join(lines(before, 0) + fail + lines(after, before)) + b"\n"
    return data, at


def test_the_middles_prefilter_is_the_key_trie():
    assert run_mod.middle_patterns() == [load_catalog().grep_pattern]


def test_the_middle_selects_the_lines_diagnose_selects_at_grep_speed(monkeypatch):
    """The defect: 829 patterns through grep's DFA on real captured lines (~0.1 MB/s).  The key trie is one small DFA;
    with the shape limit off, the middle keeps exactly the lines holding a key (and the context after them)."""
    monkeypatch.setattr(run_mod, "SHAPE_KEEP", 10**9)
    cat = load_catalog()
    data, _ = _job_output(_chatter(), 12000, 12000)  # ~1.5 MB of real lines
    scan = run_mod.MiddleScan("grep", run_mod.middle_patterns(), None, max_kept=10**7)
    t = time.monotonic()
    for i in range(0, len(data), 1 << 16):
        scan.feed(data[i:i + (1 << 16)])
        scan.on_writable()
    scan.drain(timeout=120)
    took = time.monotonic() - t
    lines = data.split(b"\n")[:-1]
    want = [i for i, ln in enumerate(lines, 1) if cat.quick_bytes.search(ln)]
    kept = {n for n, _ in scan.kept}
    assert set(want) <= kept and scan.newlines == len(lines)
    assert kept - set(want) <= {n + j for n in want for j in (1, 2)}  # the rest: context after a selected line
    assert took < 20, took  # (the 829 patterns: ~15 s of grep's CPU for this much, idle)


def test_a_decisive_line_in_the_omitted_middle_between_key_heavy_chatter_is_diagnosed():
    """Output.log keeps 64 KiB at each end; the failure sits in the middle with ~20,000 key-holding lines before it
    and ~20,000 after: under a first-come policy (the first 4,000 kept lines) it would be lost."""
    data, at = _job_output(_chatter(), 20000, 20000)
    cap = run_mod.Capture(128 * 1024)
    scan = run_mod.MiddleScan("grep", run_mod.middle_patterns(), None)
    cap.on_evict = lambda blk: (scan.feed(blk), scan.on_writable())
    for i in range(0, len(data), 1 << 16):
        cap.add(data[i:i + (1 << 16)])
    cap.trim()
    scan.drain(timeout=120)
    cap.finish(scan)
    assert cap.evicted and 64 * 1024 < data.index(b"InductorError") < len(data) - 64 * 1024
    assert len(scan.kept) <= run_mod.MAX_KEPT_LINES and scan.dropped_lines > 20000
    assert (at, data.split(b"\n")[at - 1][:run_mod.MAX_KEPT_LINE]) in cap.kept
    res, _ = run_mod._scan(run_mod.Outcome(["job"], returncode=1, capture=cap), load_catalog())
    assert [m.line for m in res.matches["LOG071"]][:1] == [at]
    assert res.lines == data.count(b"\n")


def test_the_keep_policy_is_bounded_and_keeps_both_ends():
    """More distinct messages than the budget: the first half and the newest half are kept, the rest counted."""
    scan = run_mod.MiddleScan("grep", ["MSG"], None, max_kept=100)
    for i in range(1, 1001):
        scan._take(b"%d:MSG %s" % (i, str(i).translate(str.maketrans("0123456789", "abcdefghij")).encode()))
    kept = [n for n, _ in scan.kept]
    assert kept == list(range(1, 51)) + list(range(951, 1001)) and scan.dropped_lines == 900
    scan.stop()


def test_a_repeated_message_is_kept_twice_with_its_context():
    scan = run_mod.MiddleScan("grep", ["MSG"], None)
    for i in range(1, 31, 3):
        scan._take(b"%d:MIOpen(HIP): Warning [step %d] slow kernel" % (i, i))
        scan._take(b"%d-context %d" % (i + 1, i))
    scan._take(b"--")
    scan._take(b"40:HIP error: invalid device function")
    scan._take(b"41-    at line 41")
    scan._take(b"44-a context line after nothing kept")
    assert scan.kept == [(1, b"MIOpen(HIP): Warning [step 1] slow kernel"), (2, b"context 1"),
                         (4, b"MIOpen(HIP): Warning [step 4] slow kernel"), (5, b"context 4"),
                         (40, b"HIP error: invalid device function"), (41, b"    at line 41")]
    assert scan.dropped_lines == 8
    scan.stop()


def test_kept_lines_are_read_in_runs_of_consecutive_lines():
    assert run_mod.kept_blocks([(3, b"a"), (4, b"b"), (9, b"c"), (10, b"d"), (11, b"e"), (20, b"f")]) == [
        (3, b"a\nb\n"), (9, b"c\nd\ne\n"), (20, b"f\n")]
    assert run_mod.kept_blocks([]) == []
