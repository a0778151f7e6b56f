"""The diagnosis of a failed `gpuvet run` is bounded whatever the job printed: of 200,000 short log lines (11 MB, through a 2 MiB cap) only
a few thousand reach the Python scanner (the rest goes through the grep prefilter), and the error lines are
still found with their real line numbers, by the grep path and by the Python-only path alike."""
from __future__ import annotations

import shutil

import pytest

from gpuvet.app import run as run_mod
from gpuvet.logs.match import Scanner
from gpuvet.logs.signatures import load_catalog

ERR = b"RuntimeError: CUDA error: out of memory"
N = 200_000  # ~11 MB through a 2 MiB --log-cap
IN_HEAD_BULK, IN_TAIL_BULK = 8_000, N - 8_000  # past the fully scanned start / before the fully scanned end


def _failed_run():
    lines = [b"[rank0] step %d | loss 2.%04d | lr 3.0e-04 | tok/s 12345" % (i, i % 9973) for i in range(1, N + 1)]
    for at in (IN_HEAD_BULK, IN_TAIL_BULK, N):
        lines[at - 1] = ERR
    data = b"\n".join(lines) + b"\n"
    cap = run_mod.Capture(2 << 20)
    for i in range(0, len(data), 1 << 16):
        cap.add(data[i:i + (1 << 16)])
    cap.trim()
    cap.finish(None)
    assert cap.evicted and cap.lines == N
    return run_mod.Outcome(["job"], returncode=1, capture=cap)


@pytest.mark.parametrize("with_grep", [True, False])
def test_huge_short_line_output_is_diagnosed_in_bounded_work(with_grep, monkeypatch):
    grep = shutil.which("grep")
    if with_grep and not grep:
        pytest.skip("needs grep")
    fed = []
    orig = Scanner.feed

    def counting(self, lineno, raw, prefiltered=False):
        fed.append(lineno)
        return orig(self, lineno, raw, prefiltered)

    monkeypatch.setattr(Scanner, "feed", counting)
    patterns = run_mod.middle_patterns()
    prefilter = (lambda: run_mod.MiddleScan(grep, patterns, None, run_mod.DIAG_GREP_LINES)) if with_grep else None
    res, _ = run_mod._scan(_failed_run(), load_catalog(), (), prefilter)
    hits = {sid: [m.line for m in ms] for sid, ms in res.matches.items()}
    assert any(lines == [IN_HEAD_BULK, IN_TAIL_BULK, N] for lines in hits.values()), hits
    assert res.lines == N
    if with_grep:  # the hint lines, the few candidates of the two fully scanned ends, grep's three hits
        assert len(fed) < run_mod.DIAG_HINT_LINES + 1000, len(fed)
