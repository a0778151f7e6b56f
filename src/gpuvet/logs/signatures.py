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
from typing import Any, Iterable, Sequence

from gpuvet.model.gate import trie_pattern
from gpuvet.model.taxonomy import CAUSES, COMPONENTS, LABELS  # noqa: F401 (the one declaration; re-exported)

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
    # two-line readings: (regex of a line, regex the next non-blank line must match), e.g. a REPL call and the
    # value it printed; the first regex routes through the prefilter like a pattern, the pair counts as one match
    pair_patterns: tuple[tuple[str, str], ...] = ()

    @functools.cached_property
    def pairs(self) -> tuple[tuple[Any, Any], ...]:
        try:
            return tuple((re.compile(a), re.compile(b)) for a, b in self.pair_patterns)
        except re.error as exc:
            raise SignatureError(f"{self.id}: bad pattern: {exc}") from None
    # per routing pattern (its patterns, then its pairs' first lines), literal strings one of which every match
    # of it contains (``anchors``); () when unknown
    anchors: tuple[tuple[str, ...], ...] = field(default=(), compare=False, repr=False)

    def hit(self, text: str) -> bool:
        """``regex.search(text)`` is not None, trying only the patterns one of whose anchors the text holds,
        each compiled the first time a line gets that far (a line routed here by one pattern's key rarely
        holds another's anchors)."""
        if len(self.anchors) < len(self.patterns):  # (the anchors of the pairs' first lines follow)
            return self.regex.search(text) is not None
        rxs = self._pattern_rx
        for j, anc in enumerate(self.anchors[:len(self.patterns)]):
            for a in anc:
                if a in text:
                    break
            else:
                continue
            rx = rxs[j]
            if rx is None:
                try:
                    rx = rxs[j] = re.compile(self.patterns[j])
                except re.error as exc:
                    raise SignatureError(f"{self.id}: bad pattern: {exc}") from None
            if rx.search(text) is not None:
                return True
        return False

    @functools.cached_property
    def _pattern_rx(self) -> list[Any]:
        return [None] * len(self.patterns)

    @functools.cached_property
    def regex(self) -> Any:
        """The signature's patterns as one compiled regex, compiled the first time a line reaches it (a case
        routes lines to a few signatures; compiling all of them cost ~0.1 s a process)."""
        try:
            return re.compile("|".join(f"({p})" for p in self.patterns))
        except re.error as exc:
            raise SignatureError(f"{self.id}: bad pattern: {exc}") from None

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


def compile_signature(e: dict[str, Any], lazy: bool = False) -> Signature:
    """The signature of one knowledge-base entry, validated.  ``lazy``: leave its regex to be compiled on first
    use (the shipped index, ``data/signature_index.json``, was built from these very patterns, which compiled
    then); otherwise it is compiled now and a bad pattern raises SignatureError."""
    pats = tuple(e["patterns"])
    pair_pats = tuple((d["line"], d["next"]) for d in e.get("pairs", ()))
    for p in pats + tuple(q for pp in pair_pats for q in pp):
        if _NON_ERE.search(p):
            raise SignatureError(f"{e.get('id')}: pattern {p!r} uses a construct POSIX ERE lacks")
    ex = e.get("examples") or {}
    comp = e["component"]
    sig = Signature(
        id=e["id"], name=e["name"], title=e.get("title", e["name"]), cause=e["cause"], component=comp,
        weight=float(e.get("weight", 0.5)), patterns=pats, meaning=e.get("meaning", "").strip(),
        fix=e.get("fix", "").strip(), source=e.get("source", ""), references=tuple(e.get("references", ())),
        alternatives=tuple(_hyp(a, comp) for a in e.get("alternatives", ())),
        resolve=tuple(_hyp(a, comp) for a in e.get("resolve", ())), generic=bool(e.get("generic", False)),
        examples=tuple(ex.get("match", ())), counter_examples=tuple(ex.get("no_match", ())), pair_patterns=pair_pats)
    if not lazy:
        _ = sig.regex, sig.pairs  # compiled now: a bad pattern is an error of the catalog being built
    readings: list[Signature | Hypothesis] = [sig, *sig.alternatives, *sig.resolve]
    for h in readings:  # the vocabulary is gpuvet.model.taxonomy's, nothing else
        if h.cause not in LABELS:
            raise SignatureError(f"{sig.id}: cause {h.cause!r} is not in the taxonomy")
        if h.component not in COMPONENTS:
            raise SignatureError(f"{sig.id}: component {h.component!r} is not in the taxonomy")
    return sig


# ----------------------------------------------------------------------------- the cheap prefilter
# Every pattern has at least one *anchor*: a literal run it cannot match without (the longest top-level
# literal, or one literal per branch of a top-level alternation).  From each anchor a short *key* is cut,
# starting at its least frequent character; all keys are merged into one trie-shaped regex, so the regex
# engine skips quickly over ordinary text.  A key hit routes the line to the few signatures owning the key.
try:  # Python >= 3.11
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re._constants import BRANCH, LITERAL, SUBPATTERN  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    from sre_constants import BRANCH, LITERAL, SUBPATTERN  # type: ignore[no-redef]

# Characters by how common they are in logs (most common first); anything else counts as rare.
_COMMON = " etaoinsrhldcumfpgwybvkxjqz0123456789.,:/-_=[]()'\"ETAOINSRHLDCUMFPGWYBVKXJQZ|>"
_COST = {c: len(_COMMON) - i for i, c in enumerate(_COMMON)}
KEY_LEN = 5


def _runs(items) -> list[str]:
    out, cur = [], ""
    for op, av in items:
        if op is LITERAL:
            cur += chr(av)
        else:
            if cur:
                out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def anchors(pattern: str) -> list[str]:
    """Literal strings of which every match of ``pattern`` contains at least one ([] if none is found).

    The first choice is the longest top-level literal, else the first top-level alternation whose branches all
    hold one.  Where that choice holds a *weak* anchor (a word or path piece that ordinary log lines are full of:
    ``was``, ``memory``, ``module``, ``/opt/``; ``_weak``), another top-level alternation (or the longest literal)
    whose anchors are all strong is taken instead: a weak key makes every line that holds it a candidate read in
    Python (a training log's lines with "memory" or "was", a traceback's frames under /opt/)."""
    items = list(_sre_parse.parse(pattern))
    runs = _runs(items)
    best = max(runs, key=len) if runs else ""
    groups: list[list[str]] = []
    for op, av in items:
        if op is SUBPATTERN:
            sub = list(av[-1])
            if len(sub) == 1 and sub[0][0] is BRANCH:
                alts: list[str] = []
                for br in sub[0][1][1]:
                    r = _runs(list(br))
                    b = max(r, key=len) if r else ""
                    if len(b) < 3:
                        alts = []
                        break
                    alts.append(b)
                if alts:
                    groups.append(alts)
    if len(best) >= 4 and len(best.strip()) >= 4:  # " in " is in every traceback frame line: not an anchor
        first = [best]
    elif groups:
        first = groups[0]
    else:
        return [best] if len(best) >= 3 else []
    if not any(_weak(a) for a in first):
        return first
    options = ([[best]] if len(best.strip()) >= 3 else []) + groups
    strong = [o for o in options if not any(_weak(a) for a in o)]
    return strong[0] if strong else first


# words and path pieces on a large share of ordinary log lines (a training log's metrics and warnings, the frames of
# a traceback): an anchor that is one of them, or whose key would be one, routes those lines to Python
_WEAK_WORDS = frozenset(
    "was were is are got get then just after since with from only size pool memory error code status module kernel "
    "build wheel version system warning info debug torch cuda gpu binary binaries install installed file time step "
    "loss data model".split())  # plurals and a trailing colon are folded by _weak
_PATH_PIECES = ("/opt/", "/usr/", "/bin/", "/lib/", "/tmp/", "/var/", "/home", "/etc/", "/dev/")


def _weak(anchor: str) -> bool:
    a = anchor.strip().lower()
    if len(a) <= 3 and a.isalpha() and anchor.strip().islower():  # "for", "was", "not" (not "GPU", "802", "sm_")
        return True
    return a in _WEAK_WORDS or a.rstrip("s:") in _WEAK_WORDS or any(a == p.strip("/") or a == p for p in _PATH_PIECES)


def _rare(c: str) -> bool:
    return not (c.islower() or c in " .,-")


_BOILERPLATE = ('  File "', '", line ', ", in ", "Traceback (most recent call last):")


def _boilerplate(window: str) -> bool:
    return any(window in b for b in _BOILERPLATE) or window in _PATH_PIECES


def _counter_like(window: str) -> bool:
    """No letter, and a run of three digits."""
    return not any(c.isalpha() for c in window) and any(window[i:i + 3].isdigit() for i in range(len(window) - 2))


def key_of(anchor: str) -> str:
    """A short piece of the anchor that ordinary text rarely contains: 5 characters around an uncommon one
    (capital, digit, '_', ':', '(' ...) when the anchor has one, starting at its least common character;
    otherwise (plain lower-case words) 8 characters from the least common letter, since long word sequences are rare."""
    if len(anchor) <= KEY_LEN:
        return anchor
    starts = [i for i in range(len(anchor) - KEY_LEN + 1) if any(_rare(c) for c in anchor[i:i + KEY_LEN])]
    # not a number among punctuation where the anchor offers a window with a letter: ': 999' (of 'cudart init
    # failure: 999') is what step counters and metrics print ('iter: 9990'), on line after line
    # nor a piece of what every Python traceback frame line prints ('", li' of 'cache.py", line ': every frame
    # of a deep traceback was a candidate line)
    worded = [i for i in starts if not _counter_like(anchor[i:i + KEY_LEN]) and not _boilerplate(anchor[i:i + KEY_LEN])]
    starts = worded or starts
    if not starts:  # plain words: 8 characters from the least common letter on
        n = min(8, len(anchor))
        i = min(range(len(anchor) - n + 1), key=lambda j: (_COST.get(anchor[j], 0), j))
        return anchor[i:i + n]
    best_i = min(starts, key=lambda i: (_COST.get(anchor[i], 0), i))
    return anchor[best_i:best_i + KEY_LEN]


def _trie_regex(words: list[str]) -> str:
    return trie_pattern(words) or "(?!)"


def _ere_char(ch: str) -> str:
    """One literal character in POSIX ERE (``grep -E``): specials in a bracket, where only ``]``, ``\\`` and ``^`` need
    care; no backslash before an ordinary character (GNU grep warns of a "stray \\")."""
    if ch == "]":
        return "[]]"
    if ch == "\\":
        return "[\\]"
    if ch == "^":
        return "\\^"
    if ch in ".[()*+?{}|$":
        return "[" + ch + "]"
    return ch


def ere_trie(words: Sequence[str]) -> str | None:
    """The keys as one POSIX ERE alternation, trie-shaped like ``_trie_regex`` (None when there are none).  ``grep -E``
    runs it as one small DFA at ~300 MB/s on any text, where the 800 signature patterns themselves, each with its
    ``[^\\n]{0,60}`` and alternations, blow up grep's DFA on varied log text: a 3.5 MB log of real captured training
    lines took grep 30 s of CPU (day 8).  It selects exactly the lines the key trie selects in Python."""
    return trie_pattern(words, char=_ere_char, group="(")


@dataclass(frozen=True)
class Catalog:
    """The signatures and their prefilter: ``trie`` (the regex source of every key) is compiled on first use,
    for text or for bytes, as the plain "any key here?" test (``quick``) or with a look-ahead that reports
    overlapping keys (``prefilter``)."""
    signatures: tuple[Signature, ...]
    trie: str
    routes: dict = field(default_factory=dict)  # key -> tuple of signature indexes
    extra_keys: frozenset = frozenset()  # keys of fact patterns (no signature)
    keys: tuple[str, ...] = ()  # every key of the trie (none is a prefix of another)

    @functools.cached_property
    def keys_bytes(self) -> tuple[tuple[bytes, str], ...]:
        return tuple((k.encode("utf-8"), k) for k in self.keys)

    def keys_present(self, block: bytes) -> list[tuple[bytes, str]]:
        """The keys that occur in ``block``: one substring search each.  No key is a prefix of another, so at
        any position at most one key starts, and a line's keys are exactly those of this list it contains:
        what the trie's look-ahead reports, without compiling the trie (~25 ms, more than searching a small
        text ~600 times)."""
        return [kb for kb in self.keys_bytes if kb[0] in block]

    @functools.cached_property
    def quick(self) -> Any:  # the trie without look-ahead: fast "any key here?" test
        return re.compile(self.trie)

    @functools.cached_property
    def quick_bytes(self) -> Any:
        return re.compile(self.trie.encode("utf-8"))

    @functools.cached_property
    def grep_pattern(self) -> str | None:
        """The key trie in POSIX ERE, for ``grep -E``: the lines it selects are the lines ``quick`` selects."""
        return ere_trie(self.keys)

    @functools.cached_property
    def prefilter(self) -> Any:  # look-ahead: overlapping keys are all reported (slower; candidate lines only)
        return re.compile("(?=(" + self.trie + "))")

    @functools.cached_property
    def prefilter_bytes(self) -> Any:
        return re.compile(("(?=(" + self.trie + "))").encode("utf-8"))

    def route(self, keys: Iterable[str]) -> list[Signature]:
        idx: set[int] = set()
        for k in keys:
            idx.update(self.routes.get(k, ()))
        return [self.signatures[i] for i in sorted(idx)]

    def get(self, sid: str) -> Signature | None:
        for s in self.signatures:
            if s.id == sid:
                return s
        return None

    def patterns(self) -> list[str]:
        return [p for s in self.signatures for p in s.patterns]


# The routing of a catalog (keys, routes, trie) depends only on the patterns (in order) and on the code above;
# it is computed once, when the signatures change, into data/signature_index.json (logs/index.py,
# tools/gen_signature_index.py; tests/test_signature_index.py fails while it is stale).  A catalog whose patterns
# the index does not describe (a stale index, a test's own signatures) is routed by computing it here: slower,
# never different.  Change ROUTING when the key rules change.
ROUTING = "keys/5"  # day 7: weak anchors and path-piece keys avoided


def index_digest(patterns: Sequence[Sequence[str]], extra_patterns: Sequence[str]) -> str:
    """What the routing is a function of: every signature's patterns in order, the fact patterns, the key rules."""
    from . import index

    return index.digest(ROUTING, KEY_LEN, _COMMON, [list(p) for p in patterns], list(extra_patterns))


def compute_index(patterns: Sequence[Sequence[str]], extra_patterns: Sequence[str], ids: Sequence[str] = ()) -> dict[str, Any]:
    """The routing of signatures with these patterns: keys (minimal, trie order), key -> signature indexes,
    the fact patterns' keys.  Raises SignatureError for a pattern without a literal anchor."""
    routes: dict[str, set[int]] = {}
    extra: set[str] = set()
    sig_anchors: list[list[list[str]]] = []
    for i, pats in enumerate(patterns):
        sig_anchors.append([])
        for p in pats:
            anc = anchors(p)
            if not anc:
                sid = ids[i] if i < len(ids) else f"#{i}"
                raise SignatureError(f"{sid}: pattern {p!r} has no literal anchor of 3+ characters")
            sig_anchors[-1].append(anc)
            for a in anc:
                routes.setdefault(key_of(a), set()).add(i)
    for p in extra_patterns:
        for a in anchors(p):
            extra.add(key_of(a))
    keys = sorted(set(routes) | extra, key=len)
    minimal: list[str] = []  # drop keys that contain a shorter key as prefix (the trie stops there)
    for k in keys:
        if not any(k.startswith(m) for m in minimal):
            minimal.append(k)
    # a key that extends a shorter one routes through the shorter one too
    final_routes: dict[str, list[int]] = {}
    for k, idx in routes.items():
        m = next(m for m in minimal if k.startswith(m))
        final_routes[m] = sorted(set(final_routes.get(m, ())) | idx)
    return {"digest": index_digest(patterns, extra_patterns), "trie": _trie_regex(minimal),
            "keys": sorted(minimal), "routes": dict(sorted(final_routes.items())), "extra_keys": sorted(extra),
            "anchors": sig_anchors}


def routing_patterns(entries: Iterable[dict[str, Any]]) -> list[tuple[str, ...]]:
    """What routes a line to each signature: its patterns, then the first lines of its two-line readings (pairs)."""
    return [tuple(e["patterns"]) + tuple(d["line"] for d in e.get("pairs", ())) for e in entries]


def build_catalog(entries: Iterable[dict[str, Any]], extra_patterns: Iterable[str] = (), use_index: bool = True) -> Catalog:
    entries = list(entries)
    extra = tuple(extra_patterns)
    pats = routing_patterns(entries)
    from . import index

    doc = index.section("signatures", index_digest(pats, extra)) if use_index else None
    sigs = tuple(compile_signature(e, lazy=doc is not None) for e in entries)
    ids = [s.id for s in sigs]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise SignatureError(f"duplicate signature ids: {dupes}")
    if doc is None:
        doc = compute_index(pats, extra, ids)
    anc = doc["anchors"]
    for sig, a in zip(sigs, anc):  # the anchors come with the routing (computed with it, or shipped)
        object.__setattr__(sig, "anchors", tuple(tuple(x) for x in a))
    routes = {k: tuple(v) for k, v in doc["routes"].items()}
    return Catalog(sigs, doc["trie"], routes, frozenset(doc["extra_keys"]), tuple(doc["keys"]))
@functools.lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    from gpuvet import kb

    from .extract import PREFILTER_PATTERNS

    return build_catalog(kb.load().table("signatures"), PREFILTER_PATTERNS)
