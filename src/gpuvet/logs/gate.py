"""Literal gates: a cheap, exact "can this pattern match here?" test in front of a slow regex.

CPython's ``re`` tries every branch of an alternation at every position, and a branch that starts with
``\\b`` or a character class defeats its literal-prefix search: the context-hint patterns cost ~600 us on
a 100-character line.  ``LiteralGate(pattern)`` reads the pattern's parse tree once and keeps, for every
top-level branch, the longest literal run that every match of that branch contains (lower-cased when the
branch is case-insensitive).  ``gate(text)`` is True when some needle occurs in the text (``str in``, C
speed) or when a branch has no usable literal: it never says False for text the pattern would match, so
``gate(t) and rx.search(t)`` equals ``rx.search(t)``.
"""
from __future__ import annotations

import re
from typing import Callable

try:  # Python 3.11+
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

MIN_NEEDLE = 2


def _runs(items, ci: bool) -> list[tuple[str, bool]]:
    """Literal runs of one sequence (and of case-flagged groups that are plain sequences)."""
    runs: list[tuple[str, bool]] = []
    cur = ""
    for op, av in items:
        if op is _c.LITERAL:
            cur += chr(av)
            continue
        if cur:
            runs.append((cur, ci))
            cur = ""
        if op is _c.SUBPATTERN:
            add_flags = av[1] if len(av) > 1 else 0
            sub = list(av[-1])
            sub_ci = ci or bool(add_flags & re.I)
            if not any(o is _c.BRANCH for o, _ in sub):
                runs.extend(_runs(sub, sub_ci))
    if cur:
        runs.append((cur, ci))
    return runs


def _branches(items, ci: bool) -> list[tuple[str, bool] | None]:
    """One needle per alternative of the top level (None: the alternative has no literal to rely on)."""
    core = [it for it in items if it[0] is not _c.AT]  # \b, ^, $ consume nothing
    if len(core) == 1 and len(items) > 1:
        return _branches(core, ci)
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        out: list[tuple[str, bool] | None] = []
        for br in items[0][1][1]:
            out.extend(_branches(list(br), ci))
        return out
    if len(items) == 1 and items[0][0] is _c.SUBPATTERN:
        av = items[0][1]
        add_flags = av[1] if len(av) > 1 else 0
        return _branches(list(av[-1]), ci or bool(add_flags & re.I))
    runs = _runs(items, ci)
    best = max(runs, key=lambda r: len(r[0])) if runs else None
    if best is not None and len(best[0]) >= MIN_NEEDLE:
        return [best]
    for op, av in items:  # a required group of alternatives: each one's needle
        if op is _c.BRANCH:
            alts = [a for br in av[1] for a in _branches(list(br), ci)]
            if alts and all(a is not None and len(a[0]) >= MIN_NEEDLE for a in alts):
                return alts
        if op is _c.SUBPATTERN and any(o is _c.BRANCH for o, _ in av[-1]):
            add_flags = av[1] if len(av) > 1 else 0
            alts = _branches(list(av[-1]), ci or bool(add_flags & re.I))
            if alts and all(a is not None and len(a[0]) >= MIN_NEEDLE for a in alts):
                return alts
    return [best] if best is not None else [None]  # a single character is still a (weak) gate


class LiteralGate:
    def __init__(self, pattern: str, flags: int = 0):
        tree = _p.parse(pattern, flags)
        ci = bool(flags & re.I) or bool(tree.state.flags & re.I)
        needles = _branches(list(tree), ci)
        self.always = any(n is None for n in needles)
        found = [n for n in needles if n is not None]
        self.exact = tuple(sorted({n for n, c in found if not c}))
        self.folded = tuple(sorted({n.lower() for n, c in found if c}))

    def __call__(self, text: str) -> bool:
        if self.always:
            return True
        for n in self.exact:
            if n in text:
                return True
        if self.folded:
            low = text.lower()
            for n in self.folded:
                if n in low:
                    return True
        return False


def split_top(pattern: str) -> list[str]:
    """The top-level alternatives of a regex source (``a|b(c|d)|e`` -> ``a``, ``b(c|d)``, ``e``)."""
    out, depth, cls, i, start = [], 0, False, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if cls:
            if ch == "]":
                cls = False
        elif ch == "[":
            cls = True
            if pattern[i + 1:i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def _trie(words: list[str]) -> str:
    root: dict = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        if "" in node:
            return ""
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root) if words else "(?!)"


class MultiGate:
    """Several named patterns, each split into its alternatives, each alternative behind its own literal
    gate; one trie regex of every strong literal answers "could any of them match?" in one C-speed pass.
    ``matches(text)`` returns the names whose pattern matches: exactly ``{n for n, rx in patterns if rx.search(text)}``."""

    def __init__(self, patterns: dict[str, str]):
        self.strong: list[tuple[str, LiteralGate, re.Pattern]] = []
        self.weak: list[tuple[str, Callable[[str], object], re.Pattern]] = []  # a gate or a relaxed search
        exact: set[str] = set()
        folded: set[str] = set()
        for name, pat in patterns.items():
            for alt in split_top(pat):
                g = LiteralGate(alt)
                rx = re.compile(alt)
                needles = g.exact + g.folded
                if g.always or any(len(n) < MIN_NEEDLE for n in needles):
                    # no strong literal: the alternative without its leading \b (a superset that the
                    # engine searches by its first character class, ~20x faster) is the gate
                    relaxed = alt[2:] if alt.startswith("\\b") else None
                    self.weak.append((name, re.compile(relaxed).search if relaxed else g, rx))
                else:
                    self.strong.append((name, g, rx))
                    exact.update(g.exact)
                    folded.update(g.folded)
        self.any_exact = re.compile(_trie(sorted(exact)))
        self.any_folded = re.compile(_trie(sorted(folded))) if folded else None

    def matches(self, text: str) -> set[str]:
        found: set[str] = set()
        hit = self.any_exact.search(text) is not None or (
            self.any_folded is not None and self.any_folded.search(text.lower()) is not None)
        groups = (self.strong, self.weak) if hit else (self.weak,)
        for group in groups:
            for name, g, rx in group:
                if name not in found and g(text) and rx.search(text):
                    found.add(name)
        return found
