"""The one option scanner of the Click-free fast paths (check_run.py, diagnose_run.py).

It takes only the forms it reads exactly as Click does: a flag, ``--opt V``, ``--opt=V`` and ``-o V`` (a short
option's value is the next word only), and, where the command has one, a plain word or ``-`` as its argument.
Anything else (an unknown option, a missing value, a value that starts with ``-``) makes it give up: the caller
returns None and Click parses the invocation, so help and every usage error stay Click's.
"""
from __future__ import annotations

from typing import Mapping, Sequence


def scan(args: Sequence[str], flags: Mapping[str, str], valued: Mapping[str, str],
         positional: bool = False) -> list[tuple[str | None, str | bool]] | None:
    """``(key, True)`` for a flag, ``(key, value)`` for an option with a value, ``(None, word)`` for a plain word
    (only with ``positional``); None when any word is not one of these."""
    out: list[tuple[str | None, str | bool]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in flags:
            out.append((flags[arg], True))
            continue
        if positional and (arg == "-" or not arg.startswith("-")):
            out.append((None, arg))
            continue
        name, eq, value = arg.partition("=")
        if not name.startswith("--"):
            name, eq = arg, ""  # a short option takes its value from the next word only (no -fjson here)
        if name not in valued:
            return None
        if not eq:
            if i >= len(args):
                return None  # Click: "requires an argument"
            value = args[i]
            i += 1
        if value.startswith("-") and value != "-":
            return None  # Click would take it as the value; leave such words to Click
        out.append((valued[name], value))
    return out
