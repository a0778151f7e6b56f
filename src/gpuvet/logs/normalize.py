"""Normalise one log line as real logs carry it.

Handles: invalid UTF-8 (replaced), CRLF, carriage-return progress bars (tqdm, pip, wget redraw a line
with ``\\r``), ANSI colour and cursor escapes, leading timestamps (ISO, syslog, dmesg ``[  12.3]``, glog
``E0528 23:08:09.91 ...``, Python logging), distributed-rank prefixes (``[rank3]:``, ``[default0]:``,
``rank3: ``), docker-compose service prefixes (``vllm-1  | ``), quoting (``> ``) and very long lines
(truncated, keeping the head and the tail, where an error's message and its last words sit).

All functions are pure and bounded: the work per line is linear in its (truncated) length.
"""
from __future__ import annotations

import re
from ..model.lazyre import lazy

MAX_LINE = 64 * 1024  # characters kept of one line (head + tail)
_TAIL = 8 * 1024

ANSI_RE = lazy(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Progress bars: "10%|████      | 49/500 [00:02<...]", "  45.2/100.0 MB 3.1 MB/s eta 0:00:10", "[====>    ] 42%"
PROGRESS_RE = lazy(
    # (every repetition bounded or followed by a disjoint class: linear per '|', never the old cubic
    # backtracking of "\s*\S*\s*...\s*$" over a line of spaces)
    r"^[ \t]*(?:[^|\r\n]{0,60}:[ \t]*)?\d{1,3}%\|[^\r\n]*\|[ \t]*(?:\S{1,40}[ \t]*)?(?:\[[^\]\r\n]{0,120}\][ \t]*)?$"
    r"|^\s*[\d.]+/[\d.]+\s*[kMG]?i?B\s.*eta\s"
    r"|^\s*\[[=>#. -]{4,}\]\s*\d{1,3}%")
_PREFIXES = [
    # [rank3]:  [default0]:  rank3:  [1,0]<stderr>:
    r"\[(?:rank|default|local_rank)?\s*\d+\]\s*:\s?",
    r"rank\s?\d+\s*:\s",
    r"\[\d+,\d+\]<std(?:out|err)>:",
    # vLLM / Ray worker prefixes: (VllmWorker rank=1 pid=123)  (RayWorkerWrapper pid=42, ip=10.0.0.2)
    r"\([A-Za-z_]+(?: rank=\d+)? pid=\d+(?:, ip=[\d.]+)?\)\s*",
    # docker compose "service-1  | "
    r"[A-Za-z0-9_.-]{1,40}-\d+\s+\|\s?",
    # ISO / Python logging timestamps: 2024-05-01 12:00:00,123 / 2024-05-01T12:00:00.123Z / [2023-10-13 06:57:13,068]
    r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?:?\s",
    # logfmt: time=2024-03-02T00:34:16.166Z level=INFO source=gpu.go:311 msg=
    r"time=\S+\s+level=\S+\s+(?:source=\S+\s+)?(?:msg=)?",
    # dmesg: [    4.972801]  or  [  +0.000844]  or [Mon Nov  3 10:00:00 2025]
    r"\[\s*\+?\d+\.\d+\]\s?",
    r"\[[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d+ \d\d:\d\d:\d\d \d{4}\]\s?",
    # syslog: Nov 30 11:34:49 host kernel:
    r"[A-Z][a-z]{2}\s+\d+ \d\d:\d\d:\d\d \S+ [\w./-]+(?:\[\d+\])?:\s",
    # glog: E0528 23:08:09.915921 12345 file.cc:12]
    r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w./-]+:\d+\]\s",
    # vLLM style: INFO 06-03 08:39:32 [file.py:20]
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?: \[[^\]]+\])?\s",
    # markdown quote
    r">\s?",
]
PREFIX_RE = re.compile(r"^\s*(?:" + "|".join(_PREFIXES) + r")")


def decode(raw: bytes) -> str:
    """Bytes -> text; invalid UTF-8 is replaced, never raised."""
    return raw.decode("utf-8", errors="replace")


def truncate(text: str, limit: int = MAX_LINE) -> str:
    if len(text) <= limit:
        return text
    head = limit - _TAIL
    return text[:head] + f" …[{len(text) - limit} characters cut]… " + text[-_TAIL:]


def strip_progress(text: str) -> str:
    """A line redrawn with carriage returns keeps the parts that are not progress-bar frames."""
    if "\r" not in text:
        return text
    parts = [p for p in text.split("\r") if p.strip()]
    if not parts:
        return ""
    kept = [p for p in parts if not PROGRESS_RE.match(ANSI_RE.sub("", p))]
    if not kept:
        return parts[-1]
    # de-duplicate identical redraws, keep order
    seen: list[str] = []
    for p in kept:
        if p not in seen:
            seen.append(p)
    return " ".join(seen)


def strip_prefixes(text: str, rounds: int = 4) -> str:
    for _ in range(rounds):
        m = PREFIX_RE.match(text)
        if not m or m.end() == 0:
            break
        text = text[m.end():]
    return text


def normalize(line: str | bytes) -> str:
    """One raw line (bytes or text, with or without its newline) -> the clean text signatures match."""
    if isinstance(line, (bytes, bytearray)):
        raw = bytes(line)
        if len(raw) > 2 * MAX_LINE:  # cut bytes first so decoding a multi-MB line stays cheap
            raw = raw[: MAX_LINE - _TAIL] + b" ... " + raw[-_TAIL:]
        line = decode(raw)
    line = truncate(line.rstrip("\n"))
    if line.endswith("\r"):
        line = line.rstrip("\r")
    line = strip_progress(line)
    if "\x1b" in line:
        line = ANSI_RE.sub("", line)
    line = line.replace("\x00", "")
    return strip_prefixes(line).rstrip()
