"""Stream log lines through the prefilter and the signatures, in bounded memory.

``Scanner.feed(lineno, raw)`` takes one raw line (bytes or text); lines the combined prefilter rejects
cost one regex search and are forgotten.  Candidate lines are normalised and matched against every
signature; matches keep at most ``max_evidence`` lines per signature (plus a count), so memory stays flat
however long the log.  ``iter_lines`` splits a binary stream into lines in fixed-size chunks, cutting
multi-megabyte lines instead of buffering them.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any, Iterator

from gpuvet.model import Row

from .extract import Hint, facts_in, hints_in
from .fallback import is_error_line, is_symptom_line
from .normalize import MAX_LINE, normalize
from .signatures import Catalog, Signature

CHUNK = 1 << 20
# A block of whole lines up to this size (a pasted report, the head of a log) finds its lines' prefilter keys
# by substring search (Catalog.keys_present) instead of compiling the trie regex.  No line of it can have been
# cut (a line is cut above 2 * MAX_LINE bytes), so every line's keys are among the block's.
SMALL_BLOCK = 64 * 1024
FRAME_PATHS = 4096  # the traceback files remembered past the head of a large log (Scanner._repeated_frame)
assert SMALL_BLOCK <= 2 * MAX_LINE


@dataclass(frozen=True)
class Match:
    signature: Signature
    line: int
    text: str


@dataclass
class ScanResult:
    matches: dict[str, list[Match]] = field(default_factory=dict)  # signature id -> first matches
    counts: dict[str, int] = field(default_factory=dict)
    first_line: dict[str, int] = field(default_factory=dict)
    hints: dict[str, Hint] = field(default_factory=dict)  # hint name -> first line showing it
    rows: list[Row] = field(default_factory=list)
    lines: int = 0
    candidates: int = 0
    # the last error-looking lines (bounded), for the fallback reading when no signature applies
    error_lines: deque = field(default_factory=lambda: deque(maxlen=40))
    # prose that tells a symptom (logs/fallback.is_symptom_line), for the learned fallback when no error line shows
    symptom_lines: deque = field(default_factory=lambda: deque(maxlen=20))

    @property
    def hint_names(self) -> set[str]:
        return set(self.hints)


class Scanner:
    """Feed lines (``feed``) or blocks of whole lines (``feed_block``); read ``result``.

    ``hints_everywhere``: look for context hints on every line (set it False after the head of a large log;
    hints are then read from candidate lines only)."""

    def __init__(self, catalog: Catalog, max_evidence: int = 4, max_rows: int = 50,
                 hints_everywhere: bool = True):
        self.catalog = catalog
        self.max_evidence = max_evidence
        self.max_rows = max_rows
        self.hints_everywhere = hints_everywhere
        self.result = ScanResult()
        # two-line readings waiting for the next non-blank line: (signature, its next-line regex, line, text)
        self._pending: list[tuple[Signature, Any, int, str]] = []
        self._present: list[tuple[bytes, str]] | None = None  # the keys of the block being fed (small blocks)
        self._frames: set[bytes] = set()  # the files of the traceback frames read past the head (_repeated_frame)

    def _keys(self, raw: bytes | str) -> list[str]:
        is_bytes = isinstance(raw, (bytes, bytearray))
        if self._present is not None and is_bytes:
            return [k for kb, k in self._present if kb in raw]
        quick = self.catalog.quick_bytes if is_bytes else self.catalog.quick
        if quick.search(raw) is None:
            return []
        rx = self.catalog.prefilter_bytes if is_bytes else self.catalog.prefilter
        out = []
        for m in rx.finditer(raw):
            k = m.group(1)
            out.append(k.decode("utf-8", "replace") if isinstance(k, bytes) else k)
        return out

    def feed(self, lineno: int, raw: bytes | str, prefiltered: bool = False) -> list[Match]:
        """Process one line; returns the signature matches it produced (for --follow)."""
        res = self.result
        if lineno > res.lines:
            res.lines = lineno
        out: list[Match] = []
        if self._pending and not self._settle(lineno, raw, out):
            return out  # a blank line between a call and its printed value
        keys = self._keys(raw)
        if not keys and not self.hints_everywhere:
            return out
        text = normalize(raw)
        if not text:
            return out
        for h in hints_in(text, lineno):
            if h.name not in res.hints:
                res.hints[h.name] = h
        if is_error_line(text):
            res.error_lines.append((lineno, text[:400]))
        elif not res.error_lines and len(text) <= 400 and is_symptom_line(text):
            # only read while no error line has shown: the model reads symptoms only in a text without one
            res.symptom_lines.append((lineno, text[:400]))
        if not keys:
            return out
        res.candidates += 1
        if len(res.rows) < self.max_rows:
            res.rows.extend(facts_in(text, lineno))
        sigs = self.catalog.route(keys) if not prefiltered else self.catalog.route(keys) or list(self.catalog.signatures)
        for sig in sigs:
            if sig.hit(text):
                self._record(sig, lineno, text, out)
            elif sig.pairs:
                for first, nxt in sig.pairs:
                    if first.search(text):
                        self._pending.append((sig, nxt, lineno, text))
                        break
        return out

    def _record(self, sig: Signature, lineno: int, text: str, out: list[Match]) -> None:
        res = self.result
        n = res.counts.get(sig.id, 0)
        res.counts[sig.id] = n + 1
        if n == 0:
            res.first_line[sig.id] = lineno
        if n < self.max_evidence:
            m = Match(sig, lineno, text[:600])
            res.matches.setdefault(sig.id, []).append(m)
            out.append(m)

    def _settle(self, lineno: int, raw: bytes | str, out: list[Match]) -> bool:
        """Read the line after a two-line reading's first line: the pair matches when it is the next non-blank
        line (one blank line may stand between) and its regex matches.  False while only a blank line came."""
        text = normalize(raw)
        pend = [p for p in self._pending if lineno - p[2] <= 2]
        if not text and pend and all(lineno - p[2] == 1 for p in pend):
            return False
        self._pending = []
        for sig, nxt, first_no, first in pend:
            if text and nxt.search(text):
                self._record(sig, first_no, f"{first[:400]} / {text[:180]}", out)
        return True

    def feed_block(self, first_lineno: int, block: bytes) -> int:
        """Process a block of whole lines (newline-separated, no trailing partial line) starting at line
        ``first_lineno``; only lines with a prefilter hit (or all lines while ``hints_everywhere``) reach
        Python code.  Returns the number of lines in the block."""
        nlines = block.count(b"\n") + (0 if block.endswith(b"\n") or not block else 1)
        if self.hints_everywhere:
            self._present = self.catalog.keys_present(block) if len(block) <= SMALL_BLOCK else None
            try:
                for i, line in enumerate(block.split(b"\n")[:nlines]):
                    self.feed(first_lineno + i, _cut(line))
            finally:
                self._present = None
            return nlines
        last_pos, last_no, done_upto = 0, first_lineno, -1
        for m in self.catalog.quick_bytes.finditer(block):
            start = block.rfind(b"\n", 0, m.start()) + 1
            if start <= done_upto:
                continue
            end = block.find(b"\n", m.end())
            end = len(block) if end < 0 else end
            last_no += block.count(b"\n", last_pos, start)
            last_pos = start
            done_upto = end
            if not self._pending and self._repeated_frame(block, start, end):
                continue
            self.feed(last_no, _cut(block[start:end]))
            while self._pending and end < len(block):  # a two-line reading needs the next line, hit or not
                start, last_pos, last_no = end + 1, end + 1, last_no + 1
                end = block.find(b"\n", start)
                end = len(block) if end < 0 else end
                self.feed(last_no, _cut(block[start:end]))
                done_upto = end
        res = self.result
        if first_lineno + nlines - 1 > res.lines:
            res.lines = first_lineno + nlines - 1
        return nlines

    def has_pending(self) -> bool:
        """A two-line reading waits for the next line."""
        return bool(self._pending)

    def repeated_frame_line(self, line: bytes) -> bool:
        """``_repeated_frame`` of one line (a candidate line grep found)."""
        return self._repeated_frame(line, 0, len(line))

    def _repeated_frame(self, block: bytes, start: int, end: int) -> bool:
        """A Python traceback's frame line (``  File "PATH", line N, in NAME``) of a file already seen in a frame:
        its path has given what it can (a key hit on a path, a hint from a package's directory) the first time, so
        a deep traceback's thousands of frames through the same few files are read once per file, not once per
        frame (200,000 frames of one module were 100,000 candidate lines: 10 s of Python).  Only past the head of
        a large log (the head's lines are all read); the set of paths is bounded."""
        if not block.startswith(b'  File "', start):
            return False
        q = block.find(b'", line ', start + 8, end)
        if q < 0:
            return False
        path = block[start + 8:q]
        seen = self._frames
        if path in seen:
            return True
        if len(seen) >= FRAME_PATHS:
            seen.clear()
        seen.add(path)
        return False

    def feed_text(self, text: str, start: int = 1) -> None:
        for i, line in enumerate(text.splitlines(), start):
            self.feed(i, line)


def _cut(line: bytes, limit: int = 2 * MAX_LINE) -> bytes:
    if len(line) <= limit:
        return line
    return line[: limit // 2] + b" ... " + line[-(limit // 8):]


def iter_blocks(stream: IO[bytes], chunk: int = CHUNK, max_line: int = 2 * MAX_LINE) -> Iterator[tuple[int, bytes]]:
    """(first line number, block of whole lines) from a binary stream, in bounded memory.  A line longer
    than ``max_line`` bytes is cut (head and tail kept)."""
    lineno = 1
    buf = b""
    overflow_head: bytes | None = None
    while True:
        data = stream.read(chunk)
        if not data:
            break
        buf += data
        nl = buf.rfind(b"\n")
        if nl >= 0:
            block, buf = buf[: nl + 1], buf[nl + 1:]
            if overflow_head is not None:
                first_nl = block.find(b"\n")
                block = overflow_head + b" ... " + block[max(0, first_nl - max_line // 8): first_nl] + block[first_nl:]
                overflow_head = None
            yield lineno, block
            lineno += block.count(b"\n")
        if len(buf) > max_line:
            if overflow_head is None:
                overflow_head = buf[: max_line // 2]
            buf = buf[-(max_line // 8):]
    if buf or overflow_head is not None:
        if overflow_head is not None:
            buf = overflow_head + b" ... " + buf
        yield lineno, buf


def iter_lines(stream: IO[bytes], chunk: int = CHUNK, max_line: int = 2 * MAX_LINE) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw bytes without the newline) from a binary stream, in bounded memory:
    the lines of ``iter_blocks`` (so a line longer than ``max_line`` bytes is cut the same way)."""
    for first, block in iter_blocks(stream, chunk, max_line):
        parts = block.split(b"\n")
        if block.endswith(b"\n"):
            parts.pop()
        for i, line in enumerate(parts):
            yield first + i, line
