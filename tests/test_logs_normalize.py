"""Normalisation of what real logs carry, and bounded line/block splitting."""
import io

from gpuvet.logs.match import iter_blocks, iter_lines
from gpuvet.logs.normalize import MAX_LINE, normalize


def test_ansi_removed():
    assert normalize("\x1b[31mRuntimeError\x1b[0m: HIP error: \x1b[1minvalid device function\x1b[0m") == \
        "RuntimeError: HIP error: invalid device function"


def test_timestamps_stripped():
    assert normalize("2024-05-01 12:00:01,123 - ERROR x") == "- ERROR x"
    assert normalize("[2023-10-13 06:57:13,068] torch.distributed: boom") == "torch.distributed: boom"
    assert normalize("[    4.972801] amdgpu 0000:c5:00.0: ring gfx timeout") == "amdgpu 0000:c5:00.0: ring gfx timeout"
    assert normalize("[  +0.000844] nvidia 0000:03:00.0: AER: can't recover").startswith("nvidia 0000")
    assert normalize("time=2024-03-02T00:34:16.166Z level=INFO source=gpu.go:311 msg=\"Radeon GPU detected\"") \
        == "\"Radeon GPU detected\""
    assert normalize("E0528 23:08:09.915921 4242 cuda_dnn.cc:385] could not create cudnn handle") == \
        "could not create cudnn handle"


def test_rank_and_compose_prefixes():
    assert normalize("[rank7]: ImportError: boom") == "ImportError: boom"
    assert normalize("[rank12]:[W1030 ...] x").startswith("[W1030")
    assert normalize("vllm-1  | RuntimeError: x") == "RuntimeError: x"
    assert normalize("> > quoted error") == "quoted error"


def test_crlf_and_progress_bars():
    assert normalize("CUDA error: out of memory\r\n") == "CUDA error: out of memory"
    bar = "\r 10%|█         | 1/10 [00:01<00:09]\r 20%|██        | 2/10 [00:02<00:08]"
    assert normalize(bar + "\rRuntimeError: CUDA error: out of memory") == "RuntimeError: CUDA error: out of memory"
    assert normalize(bar).startswith("20%") or "20%" in normalize(bar)


def test_invalid_utf8_never_raises():
    out = normalize(b"bad \xff\xfe bytes: HIP error: invalid device function")
    assert "invalid device function" in out and "\ufffd" in out


def test_huge_line_truncated_keeps_head_and_tail():
    raw = b"A" * (10 * MAX_LINE) + b" CUDA error: out of memory"
    out = normalize(raw)
    assert len(out) <= 2 * MAX_LINE and out.endswith("CUDA error: out of memory") and out.startswith("AAA")


def test_iter_lines_bounded_and_numbered():
    data = b"one\n" + b"x" * (5 << 20) + b" tail\nthree\nfour"
    lines = list(iter_lines(io.BytesIO(data), chunk=1 << 16))
    assert [n for n, _ in lines] == [1, 2, 3, 4]
    assert len(lines[1][1]) < 1 << 20 and lines[1][1].endswith(b" tail")
    assert lines[3][1] == b"four"


def test_iter_blocks_line_numbers_and_long_lines():
    data = b"a\nb\n" + b"y" * (3 << 20) + b"END\nc\nd"
    blocks = list(iter_blocks(io.BytesIO(data), chunk=1 << 16))
    lines = []
    for first, block in blocks:
        for i, ln in enumerate(block.split(b"\n")[: block.count(b"\n") + (0 if block.endswith(b"\n") else 1)]):
            lines.append((first + i, ln))
    assert [n for n, _ in lines] == [1, 2, 3, 4, 5]
    assert lines[2][1].endswith(b"END") and len(lines[2][1]) < 1 << 20
    assert lines[4][1] == b"d"
