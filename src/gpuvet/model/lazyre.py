"""Regular expressions compiled on first use.

``re.compile`` is Python code (``re``'s parser and compiler): gpuvet's modules compile some 270 patterns when
imported, about a third of a ``gpuvet diagnose`` process's CPU time on a short pasted log, and a typical log never
reaches many of them (the nvidia-smi table parser on a ROCm log, the out-of-memory splitter where nothing ran out of
memory, the redactor's PEM and URL-credential rules on text holding neither).  ``lazy(pattern, flags)`` stands for
such a module-level pattern: it compiles on its first method call and then binds the compiled pattern's methods to
itself, so every later call costs one instance-attribute lookup.  ``pattern`` is there without compiling.

Only for patterns used through their methods (``X.search(...)``): ``re.search(X, ...)`` or ``isinstance(X,
re.Pattern)`` need the compiled object, ``X.compiled()``."""
from __future__ import annotations

import re
from typing import Any, cast

_BOUND = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner", "flags",
          "groups", "groupindex")


class LazyPattern:
    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern[str]:
        rx = re.compile(self.pattern, self._flags)
        d = self.__dict__
        for name in _BOUND:
            d[name] = getattr(rx, name)
        return rx

    def __getattr__(self, name: str) -> Any:  # only for attributes not bound yet: the first call compiles
        if name.startswith("__") or name not in _BOUND:
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled on first use, typed as the compiled pattern it behaves as."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))


class LineStartPattern:
    """A MULTILINE alternation whose every branch is anchored at a line start (``^(?:B1|B2|...)``), for a yes/no
    ``search`` on large texts.

    CPython's ``re`` tries ``^`` (and then every branch) at every position of the text: ~0.1-0.2 s for 1 MiB of a
    log.  Here only the branches whose literal gate (``model.gate.LiteralGate``: a literal every match of the branch
    holds) the text passes are searched, as ``(?:Bi|...)`` at the text's start, then ``\n(?:Bi|...)``: a pattern
    that begins with a literal newline is scanned for it at memchr speed and tried at line starts only.  The same
    texts match (``^`` under MULTILINE is the start or the position after a newline; a gate never refuses a text its
    branch matches); a match found after a newline begins at that newline.  ``pattern`` and ``flags`` are the
    ``^(?:...)`` form; nothing compiles before the first search."""

    def __init__(self, branches: list[str], flags: int = 0) -> None:
        self.branches = list(branches)
        self.pattern = "^(?:" + "|".join(self.branches) + ")"
        self.flags = flags | re.M
        self._gates: list[Any] | None = None
        self._rx: dict[tuple[int, ...], tuple[re.Pattern[str], re.Pattern[str]]] = {}

    def search(self, text: str) -> re.Match[str] | None:
        if self._gates is None:
            from gpuvet.model.gate import LiteralGate

            self._gates = [LiteralGate(b, self.flags) for b in self.branches]
        low = text.lower() if any(g.folded for g in self._gates) else None
        active = tuple(i for i, g in enumerate(self._gates) if g(text, low))
        if not active:
            return None
        pair = self._rx.get(active)
        if pair is None:
            body = "(?:" + "|".join(self.branches[i] for i in active) + ")"
            pair = self._rx[active] = (re.compile(body, self.flags), re.compile("\n" + body, self.flags))
        return pair[0].match(text) or pair[1].search(text)
