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
