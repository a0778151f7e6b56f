"""Error signatures: knowledge-base data (``kb/data/signatures.yaml``) loaded and compiled once.

A signature names one message the stack prints (HIP, CUDA, cuDNN/MIOpen, rocBLAS/hipBLASLt, NCCL/RCCL,
Xid, triton/inductor, nvcc/hipcc, the allocators, the loaders, ...): its regular expressions, the cause
and component it usually means, how decisive it is (``weight``), the other causes it can mean
(``alternatives``), how context settles it (``resolve``: when the text also shows e.g. an AMD GPU, a
nightly build, a container), what it means, the fix and references.

Patterns are written in the subset shared by POSIX ERE (``grep -E``) and Python ``re`` (no ``\\d``,
``\\w``, ``\\s``, ``\\b``, ``(?:``, look-arounds or inline flags) so the same patterns drive the fast
``grep`` prefilter and the benchmark against ``grep -E -f``; a test enforces this.

Signatures whose cause is ``none`` are user-code signals (a device-side assert on a target index, a
shape mismatch): they blame nothing and weaken generic stack readings.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

CAUSES = ("gpu-arch-unsupported", "driver-too-old", "runtime-mismatch", "cpu-only-build", "wrong-vendor-build",
          "device-access", "companion-mismatch", "extension-abi", "prerelease-regression",
          "math-library-unsupported", "kernel-cache-db", "memory-allocator", "collective-comm", "toolchain",
          "hardware-fault", "other")
COMPONENTS = ("driver", "runtime", "framework-build", "companion-package", "extension", "system-library",
              "config-env", "container", "hardware", "user-code")
# Constructs valid in Python re but not in POSIX ERE (or with another meaning there).
_NON_ERE = re.compile(r"\\[dDwWsSbBAZ]|\(\?|\\[0-9]|\{,|[*+?}]\?|[*+?]\+")


class SignatureError(ValueError):
    pass


@dataclass(frozen=True)
class Hypothesis:
    cause: str
    component: str
    weight: float
    when: tuple[str, ...] = ()  # hint names that must all be present ("!name": must be absent)
    note: str = ""

    def applies(self, hints: Iterable[str]) -> bool:
        hs = set(hints)
        for w in self.when:
            if w.startswith("!"):
                if w[1:] in hs:
                    return False
            elif w not in hs:
                return False
        return True


@dataclass(frozen=True)
class Signature:
    id: str
    name: str
    title: str
    cause: str
    component: str
    weight: float
    patterns: tuple[str, ...]
    meaning: str
    fix: str
    source: str
    references: tuple[str, ...] = ()
    alternatives: tuple[Hypothesis, ...] = ()
    resolve: tuple[Hypothesis, ...] = ()
    generic: bool = False
    examples: tuple[str, ...] = ()
    counter_examples: tuple[str, ...] = ()
    regex: Any = field(default=None, compare=False, repr=False)

    @property
    def user_code(self) -> bool:
        return self.cause == "none"

    def hypotheses(self, hints: Iterable[str]) -> list[Hypothesis]:
        """The readings of this signature given the context hints, strongest rule first."""
        hs = list(hints)
        out = [Hypothesis(self.cause, self.component, self.weight)] if self.cause != "none" else []
        out += [a for a in self.alternatives if a.applies(hs)]
        out += [r for r in self.resolve if r.applies(hs)]
        return out

    def search(self, text: str):
        return self.regex.search(text)


def _hyp(d: dict[str, Any], default_component: str) -> Hypothesis:
    when = d.get("when", ())
    if isinstance(when, str):
        when = (when,)
    return Hypothesis(d["cause"], d.get("component", default_component), float(d.get("weight", 0.5)),
                      tuple(when), d.get("note", ""))


def compile_signature(e: dict[str, Any]) -> Signature:
    pats = tuple(e["patterns"])
    for p in pats:
        if _NON_ERE.search(p):
            raise SignatureError(f"{e.get('id')}: pattern {p!r} uses a construct POSIX ERE lacks")
    try:
        rx = re.compile("|".join(f"({p})" for p in pats))
    except re.error as exc:
        raise SignatureError(f"{e.get('id')}: bad pattern: {exc}") from None
    ex = e.get("examples") or {}
    comp = e["component"]
    return Signature(
        id=e["id"], name=e["name"], title=e.get("title", e["name"]), cause=e["cause"], component=comp,
        weight=float(e.get("weight", 0.5)), patterns=pats, meaning=e.get("meaning", "").strip(),
        fix=e.get("fix", "").strip(), source=e.get("source", ""), references=tuple(e.get("references", ())),
        alternatives=tuple(_hyp(a, comp) for a in e.get("alternatives", ())),
        resolve=tuple(_hyp(a, comp) for a in e.get("resolve", ())), generic=bool(e.get("generic", False)),
        examples=tuple(ex.get("match", ())), counter_examples=tuple(ex.get("no_match", ())), regex=rx)


@dataclass(frozen=True)
class Catalog:
    signatures: tuple[Signature, ...]
    prefilter: Any  # one combined regex (text) of every pattern: the cheap first pass
    prefilter_bytes: Any

    def get(self, sid: str) -> Signature | None:
        for s in self.signatures:
            if s.id == sid:
                return s
        return None

    def patterns(self) -> list[str]:
        return [p for s in self.signatures for p in s.patterns]


def build_catalog(entries: Iterable[dict[str, Any]], extra_patterns: Iterable[str] = ()) -> Catalog:
    sigs = tuple(compile_signature(e) for e in entries)
    ids = [s.id for s in sigs]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SignatureError(f"duplicate signature ids: {dupes}")
    allp = [p for s in sigs for p in s.patterns] + list(extra_patterns)
    combined = "|".join(f"(?:{p})" for p in allp) or "(?!)"
    return Catalog(sigs, re.compile(combined), re.compile(combined.encode("utf-8")))


@functools.lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    from gpuvet import kb

    from .extract import PREFILTER_PATTERNS

    return build_catalog(kb.load().table("signatures"), PREFILTER_PATTERNS)
