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
from typing import Any, Callable, Iterable

try:  # Python 3.11+
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

MIN_NEEDLE = 2


def _runs(items: Any, ci: bool) -> list[tuple[str, bool]]:
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


def _branches(items: Any, ci: bool) -> list[tuple[str, bool] | None]:
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

    @classmethod
    def from_needles(cls, exact: tuple[str, ...], folded: tuple[str, ...], always: bool) -> "LiteralGate":
        """The gate whose needles were read before (MultiGate's plan), without parsing the pattern again."""
        g = cls.__new__(cls)
        g.always, g.exact, g.folded = always, tuple(exact), tuple(folded)
        return g

    def __call__(self, text: str, low: str | None = None) -> bool:
        """``low``: ``text.lower()`` when the caller has it (several gates on one large text lower it once)."""
        if self.always:
            return True
        for n in self.exact:
            if n in text:
                return True
        if self.folded:
            if low is None:
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


def trie_pattern(words: Iterable[str], char: Callable[[str], str] = re.escape, group: str = "(?:") -> str | None:
    """The words as one trie-shaped alternation (a shared prefix is written once), or None when there are none.
    ``char`` writes one literal character and ``group`` opens a group: Python's ``re`` by default; POSIX ERE for
    ``grep -E`` with ``logs.signatures._ere_char`` and ``"("``.  A word that ends where a longer one goes on ends
    the branch: the shorter already proves the hit."""
    root: dict = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        if "" in node:
            return ""
        alts = [char(ch) + emit(sub) for ch, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else group + "|".join(alts) + ")"

    return emit(root) if root else None


def _trie(words: list[str]) -> str:
    return trie_pattern(words) or "(?!)"


class MultiGate:
    """Several named patterns, each split into its alternatives, each alternative behind its own literal
    gate.  ``matches(text)`` returns the names whose pattern matches: exactly ``{n for n, rx in patterns if
    rx.search(text)}``.

    One pass finds the candidates: a trie regex of every alternative's literals (a plain search first: most
    lines hold none), then, on a line that holds one, the same trie under a look-ahead lists every literal
    there, and only the alternatives owning those literals are tried (a ``[rank3]:`` prefix on every line of a
    distributed log used to send each line through all ~160 gates in Python).  An alternative's regex is
    compiled the first time its gate lets a line through."""

    def __init__(self, patterns: dict[str, str], plan: dict | None = None):
        """``plan``: what :func:`gate_plan` computed for these very patterns (read from package data); without
        one it is computed here (parsing every alternative: ~20 ms for the context hints)."""
        if plan is None:
            plan = gate_plan(patterns)
        self.alts: list[tuple[str, str]] = [(a[0], a[1]) for a in plan["alts"]]  # (name, alternative's regex)
        self._rx: list[re.Pattern | None] = [None] * len(self.alts)
        self.gates: list[LiteralGate] = [LiteralGate.from_needles(tuple(a[2]), tuple(a[3]), bool(a[4]))
                                         for a in plan["alts"]]
        # no strong literal: (alternative, relaxed regex or None)
        self.weak: list[tuple[int, str | None]] = [(int(i), r) for i, r in plan["weak"]]
        self._weak_rx: dict[int, re.Pattern] = {}
        self._exact_src = plan["exact_trie"]
        self._folded_src = plan["folded_trie"]
        self.exact_routes = {k: tuple(v) for k, v in plan["exact_routes"].items()}
        self.folded_routes = {k: tuple(v) for k, v in plan["folded_routes"].items()}
        self.any_exact = re.compile(self._exact_src)
        self.any_folded = re.compile(self._folded_src) if self.folded_routes else None
        self._each_exact: re.Pattern | None = None  # the look-ahead tries: compiled on the first line with a hit
        self._each_folded: re.Pattern | None = None

    def _search(self, i: int, text: str) -> bool:
        rx = self._rx[i]
        if rx is None:
            rx = self._rx[i] = re.compile(self.alts[i][1])
        return rx.search(text) is not None

    def candidates(self, text: str) -> list[int]:
        """The alternatives (indexes into ``alts``) whose literals the text holds, in order."""
        cand: set[int] = set()
        if self.any_exact.search(text) is not None:
            if self._each_exact is None:
                self._each_exact = re.compile("(?=(" + self._exact_src + "))")
            for m in self._each_exact.finditer(text):
                cand.update(self.exact_routes[m.group(1)])
        if self.any_folded is not None:
            low = text.lower()
            if self.any_folded.search(low) is not None:
                if self._each_folded is None:
                    self._each_folded = re.compile("(?=(" + self._folded_src + "))")
                for m in self._each_folded.finditer(low):
                    cand.update(self.folded_routes[m.group(1)])
        return sorted(cand)

    def matches(self, text: str) -> set[str]:
        found: set[str] = set()
        for i in self.candidates(text):
            name = self.alts[i][0]
            if name not in found and self.gates[i](text) and self._search(i, text):
                found.add(name)
        for i, relaxed in self.weak:
            name = self.alts[i][0]
            if name in found:
                continue
            if relaxed is not None:
                g = self._weak_rx.get(i)
                if g is None:
                    g = self._weak_rx[i] = re.compile(relaxed)
                if g.search(text) is None:
                    continue
            elif not self.gates[i](text):
                continue
            if self._search(i, text):
                found.add(name)
        return found


GATE_FORMAT = "gpuvet-multigate/1"


def gate_plan(patterns: dict[str, str]) -> dict:
    """Everything MultiGate derives from its patterns, as JSON data: each alternative (name, source, exact and
    case-folded needles, whether it has no literal at all), the weak ones (no strong literal: their relaxed
    regex, or None), and the two tries with their routes."""
    alts: list[list] = []
    weak: list[list] = []
    exact: dict[str, set[int]] = {}
    folded: dict[str, set[int]] = {}
    for name, pat in patterns.items():
        for alt in split_top(pat):
            i = len(alts)
            g = LiteralGate(alt)
            alts.append([name, alt, list(g.exact), list(g.folded), g.always])
            needles = g.exact + g.folded
            if g.always or any(len(n) < MIN_NEEDLE for n in needles):
                # no strong literal: the alternative without its leading \b (a superset that the
                # engine searches by its first character class, ~20x faster) is the gate
                weak.append([i, alt[2:] if alt.startswith("\\b") else None])
            else:
                for n in g.exact:
                    exact.setdefault(n, set()).add(i)
                for n in g.folded:
                    folded.setdefault(n, set()).add(i)
    exact_src, exact_routes = _routes(exact)
    folded_src, folded_routes = _routes(folded)
    return {"format": GATE_FORMAT, "alts": alts, "weak": weak, "exact_trie": exact_src,
            "exact_routes": {k: list(v) for k, v in exact_routes.items()}, "folded_trie": folded_src,
            "folded_routes": {k: list(v) for k, v in folded_routes.items()}}


def _routes(needles: dict[str, set[int]]) -> tuple[str, dict[str, tuple[int, ...]]]:
    """The trie regex of the needles and, for each key it can report (the shortest needle that is a prefix of
    what the text holds: the trie stops there), the alternatives of every needle extending that key."""
    words = sorted(needles)
    keys: list[str] = []
    for w in sorted(words, key=len):
        if not any(w.startswith(k) for k in keys):
            keys.append(w)
    routes: dict[str, set[int]] = {k: set() for k in keys}
    for w, idx in needles.items():
        for k in keys:
            if w.startswith(k):
                routes[k].update(idx)
    return _trie(words), {k: tuple(sorted(v)) for k, v in routes.items()}
