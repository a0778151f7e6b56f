"""A learned fallback: a small linear model over the tokens of a log's error lines.

Signatures know exact messages, and the vocabulary fallback (``fallback.py``) knows each layer's words; real
logs keep inventing new wordings of the same few failures.  This model reads the same error lines as a bag of
*shape tokens* -- numbers, hex addresses, versions and paths are replaced by their shape, while library,
component and API names are kept (``hipErrorNoBinaryForGpu``, ``libcudnn``, ``gfx#``) -- together with the
context hints the scan saw (an AMD GPU, a CUDA build, a nightly) and proposes a cause with a probability.

It is data, not code: ``data/fallback_model.json`` holds the weights of a multinomial logistic regression
trained by ``tools/train_fallback.py`` on the project's tuning incidents only (the file records which case
directories and how many cases).  It is loaded lazily, the first time a text gets no decisive reading, and it
never outranks a fact-based finding or a decisive signature (``rank.py`` decides where it may speak).  The
classes include ``none`` (user code): when that is the model's reading, or when its best probability is under
the calibrated ``abstain`` threshold stored with the weights, it proposes nothing.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

MODEL_PATH = Path(__file__).with_name("data") / "fallback_model.json"
FORMAT = "gpuvet-fallback-logreg/2"
# /1: each weight row a mapping {"class index": weight}; /2 (day 6): a flat list [class, w, class, w, ...] of integers
# in units of 1/``scale`` (the file's "scale"), the same model in ~30% fewer bytes and read faster
FORMATS = ("gpuvet-fallback-logreg/1", FORMAT)

# shapes: order matters (a path before its parts, a version before a number)
_URL = re.compile(r"https?://\S+")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+@-]+){2,}[\\/]?")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{12,}\b")
_VER = re.compile(r"\b\d+(?:\.\d+){1,3}(?:[a-z]+\d*)?(?:\+[\w.]+)?\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.so)?|\d+")
_DIGITS = re.compile(r"\d+")
_STOP = frozenset("the a an of to in on at for is are was be by and or it this that with as from not no".split())
_KEEP_SHORT = frozenset({"no", "not"})


def _word_shape(w: str) -> str | None:
    lw = w.lower()
    if lw.isdigit():
        return None
    if len(lw) < 2 and lw not in _KEEP_SHORT:
        return None
    return _DIGITS.sub("#", lw)


def _path_tokens(p: str) -> list[str]:
    """A path: its shape plus the names of libraries and stack directories in it (libamdhip64.so, rocm, cuda)."""
    out = ["<path>"]
    for part in re.split(r"[\\/]", p):
        low = part.lower()
        if not low:
            continue
        if low.startswith("lib") and ".so" in low or low.endswith((".dll", ".py", ".cu", ".cpp", ".h")):
            stem = re.split(r"[.\-]", low)[0]
            out.append("f:" + _DIGITS.sub("#", stem))
        elif re.match(r"(rocm|cuda|hip|miopen|nccl|rccl|triton|torch|site-packages|dist-packages|conda|envs|"
                      r"torch_extensions|inductor|\.cache|nvidia|amdgpu)", low):
            out.append("d:" + _DIGITS.sub("#", re.split(r"[\-_.]\d", low)[0]))
    return out


def line_tokens(text: str) -> list[str]:
    """Shape tokens of one line: unigrams and adjacent bigrams of words, plus path/version/hex shapes."""
    toks: list[str] = []
    text = _URL.sub(" <url> ", text)

    def path_sub(m: re.Match[str]) -> str:
        toks.extend(_path_tokens(m.group(0)))
        return " "

    text = _PATH.sub(path_sub, text)
    if _HEX.search(text):
        toks.append("<hex>")
        text = _HEX.sub(" ", text)
    if _VER.search(text):
        toks.append("<ver>")
        text = _VER.sub(" <ver> ", text)
    words = [s for s in (_word_shape(w) for w in _WORD.findall(text.replace("<ver>", " ver_ "))) if s]
    toks.extend(w for w in words if w not in _STOP)
    toks.extend(f"{a}_{b}" for a, b in zip(words, words[1:]) if not (a in _STOP and b in _STOP))
    return toks


# Features that carry a known family over to wordings the training cases never used (issue 9, day 5): the parts of
# compound identifiers (``hipErrorNoBinaryForGpu`` -> hip, error, no, binary, for, gpu; ``CUBLAS_STATUS_NOT_SUPPORTED``
# -> cublas, status, not, supported), the component family a line names (a BLAS, a DNN library, a collective, a
# compiler, ... whichever vendor's), and the exception class of the last line.  Leave-one-set-out on 1,260 tuning
# cases: top-1 69.3% -> 69.5%, top-3 78.2% -> 78.5%, `none` 73 -> 74 of 97; on new5/tuning (64 cases no model had
# seen) 64.1% -> 65.6% / 75.0% -> 78.1% (bench/results/issue9-m11-learned.md).
_IDENT_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx, re.I)) for name, rx in (
    ("blas", r"rocblas|hipblas|cublas|tensile|gemm"),
    ("dnn", r"miopen|cudnn|hipdnn"),
    ("comm", r"nccl|rccl|\bgloo\b|\bmpi\b|allreduce|collective"),
    ("compiler", r"nvcc|hipcc|\bgcc\b|\bg\+\+|clang|\bninja\b|cmake|\bld\b|linker|compil"),
    ("jit", r"triton|inductor|dynamo|\bjit\b|nvrtc|hiprtc|ptxas|\bptx\b"),
    ("runtime", r"libcudart|libamdhip|\bhsa\b|\bhip\b|cuda runtime|\bcudart\b|\brocr\b"),
    ("driver", r"\bdriver\b|amdgpu|\bkfd\b|nvidia-smi|\bnvml\b|libcuda\.so"),
    ("loader", r"cannot open shared object|undefined symbol|dlopen|\.so\b|\.dll\b|ld_library_path|not found"),
    ("install", r"pip install|collecting|requirement|resolver|no matching distribution|wheel|conda|site-packages"
                r"|dist-packages"),
    ("device", r"/dev/kfd|/dev/dri|permission denied|render group|video group|no (?:cuda |hip |gpu )?devices?"),
    ("memory", r"out of memory|\boom\b|allocat|memory access fault|illegal memory|page fault|segmentation fault"
               r"|core dumped"),
    ("arch", r"gfx\d|sm_\d|compute capability|no kernel image|invalid device function|architecture"
             r"|no binary for gpu"),
))
_EXC = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception|Fault)\b")


def subword_tokens(text: str) -> set[str]:
    """``sw:`` tokens: the parts of each compound identifier (snake_case, camelCase, CAPS_WITH_UNDERSCORES) of a line."""
    out: set[str] = set()
    for tok in _IDENT_TOKEN.findall(text):
        parts = [p for seg in tok.split("_") for p in (_CAMEL.findall(seg) or [seg])]
        parts = [p.lower() for p in parts if len(p) > 1 and not p.isdigit()]
        if len(parts) >= 2:
            out.update("sw:" + p for p in parts)
    return out


# error-looking lines that report nothing failing in the stack: collect_env's "Could not collect" fields, and
# the complaints of the shell tools a user ran to paste a listing (``cat: /usr/local/cuda/version.json: No such
# file or directory``)
_NOT_ERRORS = re.compile(r"could not collect\s*$|^\s*(?:cat|ls|grep|head|tail|find|which|stat|file|readlink|"
                         r"realpath|du|wc|sed|awk|cut|sort|cp|mv|rm|ln|mkdir|chmod|chown|touch|tee): |: command not found\s*$"
                         # a tool's summary counts ("2 failed · 0 unknown · 25 passed", "1 failed, 3 passed")
                         r"|\b\d+ (?:failed|errors?)\b.{0,40}\b\d+ (?:passed|unknown|skipped|warnings?)\b"
                         # pytest's report framing: the FAILURES banner, its "E   " assertion lines, "file.py:79: AssertionError"
                         r"|^=+ (?:FAILURES|ERRORS) =+$|^E {2,}|\.py:\d+: AssertionError\s*$"
                         # torch's warning that numpy is absent (collect_env of a healthy venv prints it)
                         r"|UserWarning: Failed to initialize NumPy", re.I)


def model_lines(error_lines: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """The error lines the model reads (the last 40, without report fields that failed nothing)."""
    return [(n, t) for n, t in error_lines if not _NOT_ERRORS.search(t)][-40:]


def reading_lines(error_lines: Iterable[tuple[int, str]], symptom_lines: Iterable[tuple[int, str]] = ()) -> list[tuple[int, str]]:
    """The lines the model reads: the error lines, or -- when the text holds none -- the prose lines that tell a
    symptom (the last 20)."""
    return model_lines(error_lines) or list(symptom_lines)[-20:]


def features(error_lines: Sequence[tuple[int, str]], hints: Iterable[str] = (),
             symptom_lines: Sequence[tuple[int, str]] = ()) -> dict[str, float]:
    """The model's input: a binary bag of shape tokens of the (last) error lines, with the context hints
    around them as tokens of their own (``h:``: an AMD GPU, a CUDA build, a nightly, a container).  The last
    error line, usually the exception that matters, also adds ``last:`` tokens.  Matched signatures and failed
    checks are no input: they are ranked by their own rules, and as tokens they took the weight the words
    should carry (an unseen wording of a known failure then read as nothing) and added nothing in
    cross-validation."""
    feats: dict[str, float] = {}
    lines = model_lines(error_lines)
    if not lines and symptom_lines:
        lines = list(symptom_lines)[-20:]
        feats["<prose>"] = 1.0
    for i, (_n, text) in enumerate(lines):
        text = text[:400]
        for t in line_tokens(text):
            feats[t] = 1.0
        for t in subword_tokens(text):
            feats[t] = 1.0
        for name, rx in FAMILIES:
            if rx.search(text):
                feats["fam:" + name] = 1.0
        if i == len(lines) - 1:
            for t in line_tokens(text):
                if "_" not in t or t.startswith("f:"):
                    feats["last:" + t] = 1.0
            exc = _EXC.search(text)
            if exc:
                feats["exc:" + exc.group(0).lower()] = 1.0
    for h in hints:
        feats["h:" + h] = 1.0
    if not lines:
        feats["<no-error-lines>"] = 1.0
    return feats


@dataclass(frozen=True)
class Reading:
    cause: str
    probability: float
    terms: tuple[str, ...]  # the tokens that weighed most for it
    anchor: float = 0.0  # the weight the error lines' own tokens give it (context tokens h: excluded)


CONTEXT_PREFIXES = ("h:",)


class _Rows:
    """The weight rows of a model (token -> {class index: weight}), converted from the JSON document one row at
    a time, on first use: a text has a few dozen tokens of the thousands in the file, and converting every row
    cost each ``gpuvet diagnose`` process that reads the model ~20 ms.  A malformed row raises ValueError."""

    __slots__ = ("_raw", "_rows", "_unit")

    def __init__(self, raw: Any, scale: float = 1.0):
        if not isinstance(raw, dict):
            raise ValueError("weights: not a mapping")
        if not isinstance(scale, (int, float)) or scale <= 0:
            raise ValueError("scale: not a positive number")
        self._raw: dict[str, Any] = raw
        self._rows: dict[str, dict[int, float]] = {}
        self._unit = 1.0 / scale

    def get(self, token: str, default: Any = None) -> Any:
        row = self._rows.get(token)
        if row is None:
            raw = self._raw.get(token)
            if raw is None:
                return default
            try:
                if isinstance(raw, list):  # /2: [class, w, class, w, ...], w in units of 1/scale
                    if len(raw) % 2:
                        raise ValueError("odd length")
                    u = self._unit
                    row = {int(raw[i]): raw[i + 1] * u for i in range(0, len(raw), 2)}
                else:  # /1: {"class": w}
                    row = {int(k): float(v) for k, v in raw.items()}
            except (AttributeError, TypeError, ValueError) as exc:
                raise ValueError(f"weights of {token!r}: {exc}") from None
            self._rows[token] = row
        return row

    def __contains__(self, token: object) -> bool:
        return token in self._raw

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self):
        return iter(self._raw)


class Model:
    """Multinomial logistic regression over sparse binary features."""

    def __init__(self, doc: dict[str, Any]):
        if doc.get("format") not in FORMATS:
            raise ValueError(f"not a {FORMAT} model")
        self.classes: list[str] = list(doc["classes"])
        self.bias: list[float] = [float(b) for b in doc["bias"]]
        # token -> {class index: weight}, each row converted from the JSON when a text first uses its token
        self.weights = _Rows(doc["weights"], doc.get("scale", 1.0))
        self.abstain = float(doc.get("abstain", 0.5))
        self.components: dict[str, str] = dict(doc.get("components", {}))  # cause -> its usual layer
        self.meta: dict[str, Any] = dict(doc.get("trained_on", {}))

    def scores(self, feats: dict[str, float]) -> list[float]:
        z = list(self.bias)
        # in a fixed order: the features come from sets (hints, identifier parts), and a float sum in another order can
        # differ in its last bit, which flipped exact ties (weights are multiples of 1/scale) from one process to the next
        for t, v in sorted(feats.items()):
            row = self.weights.get(t)
            if row:
                for k, w in row.items():
                    z[k] += w * v
        return z

    def probabilities(self, feats: dict[str, float]) -> dict[str, float]:
        z = self.scores(feats)
        m = max(z)
        e = [math.exp(x - m) for x in z]
        s = sum(e)
        return {c: e[i] / s for i, c in enumerate(self.classes)}

    def read(self, feats: dict[str, float], limit: int = 3) -> list[Reading]:
        probs = self.probabilities(feats)
        out = []
        for cause, p in sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]:
            k = self.classes.index(cause)
            contrib = sorted(((self.weights.get(t, {}).get(k, 0.0) * v, t) for t, v in feats.items()), reverse=True)
            terms = tuple(t for w, t in contrib[:4] if w > 0)
            anchor = sum(w for w, t in contrib if not t.startswith(CONTEXT_PREFIXES))
            out.append(Reading(cause, p, terms, anchor))
        return out


@lru_cache(maxsize=4)
def load(path: str | None = None) -> Model | None:
    """The shipped model (cached); None when the file is absent or unreadable (the fallback then stays the
    vocabulary one)."""
    p = Path(path) if path else MODEL_PATH
    try:
        return Model(json.loads(p.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
