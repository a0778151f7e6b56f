"""The one redactor: keeps secrets out of everything gpuvet prints or writes.

Three ways a secret is recognised, all applied by ``redact_text``:

* by name: an assignment ``NAME=value`` / ``NAME: value`` / ``--name value`` whose NAME has a secret-like
  word in any position (key, token, secret, password, passwd, pwd, credential, auth, webhook, cookie,
  session, private, signature, passphrase): ``NVIDIA_NGC_KEY``, ``VLLM_HF_KEY``, ``MY_PASSWORD``;
* by the shape of the value: the token formats of Hugging Face, GitHub, GitLab, OpenAI, Anthropic, AWS,
  Slack, Google, NVIDIA NGC, PyPI, npm, Stripe; ``user:pass@`` in URLs; ``Bearer`` / ``Basic`` headers;
  JWTs; PEM private-key blocks; Slack / Discord webhook URLs; a long high-entropy string right after a
  secret-like word;
* by value: the values of this process's secret-named environment variables (and of any environment
  registered with ``register_environ``), wherever they appear.

Useful values stay visible: ``CUDA_VISIBLE_DEVICES``, ``HSA_OVERRIDE_GFX_VERSION``, ``NCCL_SOCKET_IFNAME``,
``TOKENIZERS_PARALLELISM``, paths, versions, numbers.  Every pattern is linear in its input (bounded
repetitions, no nested quantifiers), so a hostile log cannot make redaction slow.

Pure functions of the text (plus the registered environment); used by probes (env vars), evidence texts,
every renderer, and every file gpuvet writes.
"""
from __future__ import annotations

import functools
import os
import re
import threading
from typing import Callable, Iterable, Mapping
from .lazyre import lazy

MASK = "***"
MIN_ENV_SECRET = 8  # shorter values of secret variables ("1", "true", "x11") are not masked everywhere

# one segment of a name (split on _ . - and spaces), lower-cased
_SEG_SECRET = lazy(
    r"(?:token(?!iz|s$)|secret|passw|passphrase|credential|webhook|cookie|session|private|signature(?!s)"
    r"|^auth(?!or)|oauth|^pwd$|pwd$|^keys?$|.{2,}key$|^apikey|^api_?key)")
# "signature" alone is gpuvet's own evidence field (the rule code that matched a line); a signature inside a
# longer name (X-Amz-Signature, URL_SIGNATURE) stays secret.
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "TOKENIZERS_PARALLELISM", "KEYBOARD", "MONKEY", "SIGNATURE"})


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Does this variable / option / field name hold a secret?  A secret-like word in any position."""
    if not name or len(name) > 128:
        return False
    if name.upper().lstrip("-") in _NOT_SECRET_NAMES:
        return False
    for seg in re.split(r"[_.\-\s]+", name.strip("-").lower()):
        if seg and _SEG_SECRET.search(seg):
            if seg in ("monkey", "turkey", "hotkey", "keyboard") or seg.endswith(("error", "exception", "warning")):
                continue
            return True
    return False


# Token shapes: (literal prefix, pattern starting with that literal).  A pattern that starts with a literal
# is searched at C speed; the word boundary before it is checked in Python (``_TOKEN_BOUNDARY``).
_TOKEN_SPECS = (
    ("hf_", r"hf_[A-Za-z0-9]{20,200}"),  # Hugging Face
    ("api_org_", r"api_org_[A-Za-z0-9]{20,200}"),  # Hugging Face organisation
    ("gh", r"gh[pousr]_[A-Za-z0-9]{30,200}"),  # GitHub
    ("github_pat_", r"github_pat_[A-Za-z0-9_]{30,300}"),
    ("glpat-", r"glpat-[A-Za-z0-9_-]{20,200}"),  # GitLab
    ("sk-", r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,300}"),  # OpenAI, Anthropic
    ("k_", r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,200}"),  # Stripe
    ("AKIA", r"AKIA[0-9A-Z]{16}(?![0-9A-Za-z])"),  # AWS access key ids
    ("ASIA", r"ASIA[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("xox", r"xox[abprse]-[A-Za-z0-9-]{10,300}"),  # Slack
    ("xapp-", r"xapp-[A-Za-z0-9-]{10,300}"),
    ("AIza", r"AIza[0-9A-Za-z_-]{35}"),  # Google API key
    ("nvapi-", r"nvapi-[A-Za-z0-9_-]{20,200}"),  # NVIDIA NGC / API catalog
    ("pypi-", r"pypi-[A-Za-z0-9_-]{50,300}"),  # PyPI upload token
    ("npm_", r"npm_[A-Za-z0-9]{36}"),  # npm
    # JWT: consumes the whole run and succeeds (the callback checks the shape): never a failed long scan
    ("eyJ", r"eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,2}"),
    ("hooks.slack.com/", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,300}"),  # webhook
    ("discord", r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_-]{10,200}"),
)
_TOKENS = tuple((lit, re.compile(p if not p[0] == "[" else p)) for lit, p in _TOKEN_SPECS)
# Prefixes distinctive enough to mask even glued to what precedes them (`DRV001glpat-...`, `x=nvapi-...`
# is the usual case, but a paste may lose the separator): no ordinary word contains them.
_GLUED_OK = ("hooks.", "discord", "glpat-", "github_pat_", "nvapi-", "pypi-", "api_org_", "xapp-", "sk-ant-",
             "sk-proj-")
_WORDCH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_URL_CRED = lazy(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://)(?P<cred>[^/@\s:\"'<>\\]{1,300}(?::[^/@\s\"'<>\\]{0,300})?)@")
# After a secret-like name: the separator and the value (anchored at the end of the name).
_SEP_VALUE = lazy(r"(?P<q>[\"']?)(?P<sep>\s{0,3}[=:]\s{0,3})(?P<o>[\"']?)(?P<v>[^\s\"'&,;\\<>\[\]{}()]{1,4096})")
_OPT_VALUE = lazy(r"(?P<sep>\s{1,3}|=)(?P<v>[^\s\"'&,;\\<>-][^\s\"'&,;\\<>]{0,4095})")
_HEADER_VALUE = re.compile(r"\s{1,5}(?P<v>[A-Za-z0-9._~+/=-]{8,4000})")
_NAMECH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NEAR_WORDS = ("key", "token", "secret", "password", "passwd", "credential")
_NEAR_TAIL = lazy(r"[^\n\"\\]{0,20}?(?<![A-Za-z0-9+/_=-])(?P<v>[A-Za-z0-9+/_=-]{20,4000})")
_PEM_BEGIN = lazy(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=\s\\]{0,16384}")
_BORING = lazy(r"(?i)(?:[0-9]+|true|false|none|null|yes|no|on|off|\*+|<[^>]*>|\$\{?\w+\}?)")

_env_lock = threading.Lock()
_env_values: set[str] = set()
_env_seen: set[int] = set()
_env_sorted: tuple[str, ...] = ()


def register_environ(environ: Mapping[str, str] | Iterable[tuple[str, str]]) -> None:
    """Also mask, wherever they appear, the values of this environment's secret-named variables."""
    global _env_sorted
    items = environ.items() if isinstance(environ, Mapping) else environ
    new = {v for k, v in items if v and len(v) >= MIN_ENV_SECRET and is_secret_name(k) and not _BORING.fullmatch(v)}
    with _env_lock:
        if new - _env_values:
            _env_values.update(new)
            _env_sorted = tuple(sorted(_env_values, key=len, reverse=True))


def _ensure_process_env() -> None:
    key = id(os.environ)
    if key not in _env_seen:
        _env_seen.add(key)
        register_environ(dict(os.environ))


def _near_words(text: str) -> str:
    """A long high-entropy string right after a secret-like word ("API key provided: X", "token X")."""
    low = _lower(text)
    cuts: list[tuple[int, int]] = []
    for w in _NEAR_WORDS:
        i = low.find(w)
        while i >= 0:
            end = i + len(w)
            if end >= len(low) or not low[end].isalnum():
                m = _NEAR_TAIL.match(text, end)
                if m and _high_entropy(m.group("v")):
                    cuts.append((m.start("v"), m.end("v")))
                    end = m.end()
            i = low.find(w, end)
    return _apply_cuts(text, cuts)


def _high_entropy(v: str) -> bool:
    if v.startswith("/") or v.count("/") > 3 or v.count(".") > 2:  # a path, a version, a module name
        return False
    kinds = sum((any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v)))
    return kinds >= 2 and len(set(v)) >= 10


def _pem(text: str) -> str:
    out = []
    pos = 0
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < pos:
            continue
        body = _PEM_BODY.match(text, m.end())
        end = body.end() if body else m.end()
        tail = re.match(r"-----END [A-Z0-9 ]{1,60}-----", text[end:end + 80])
        if tail:
            end += tail.end()
        out.append(text[pos:m.start()])
        out.append(f"[private key {MASK}]")
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}
_HINT_WORDS = ("key", "token", "secret", "passw", "pwd", "credential", "auth", "webhook", "cookie", "session",
               "private", "signature")
_HEADER_WORDS = ("bearer", "basic", "token", "digest")
_SMALL = 8192


def _lower(text: str) -> str:
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _gated(text: str, triggers: tuple[str, ...], fn: Callable[[str], str], lower: bool = True) -> str:
    """``fn`` applied to the lines of ``text`` that hold a trigger word (to all of a short text that holds
    one): the slower patterns never run over lines that cannot match."""
    hay = _lower(text) if lower else text
    if len(text) <= _SMALL:
        return fn(text) if any(t in hay for t in triggers) else text
    spans: list[tuple[int, int]] = []
    for t in triggers:
        i = hay.find(t)
        while i >= 0:
            s = text.rfind("\n", 0, i) + 1
            e = text.find("\n", i)
            e = len(text) if e < 0 else e
            spans.append((s, e))
            i = hay.find(t, e)
    if not spans:
        return text
    spans.sort()
    out, pos = [], 0
    cur_s, cur_e = spans[0]
    for s, e in spans[1:] + [(len(text) + 1, len(text) + 1)]:
        if s <= cur_e + 1:
            cur_e = max(cur_e, e)
            continue
        out.append(text[pos:cur_s])
        out.append(fn(text[cur_s:cur_e]))
        pos = cur_e
        cur_s, cur_e = s, e
    out.append(text[pos:])
    return "".join(out)


def _tokens(text: str) -> str:
    for lit, rx in _TOKENS:
        if lit in text:
            text = rx.sub(_token_sub, text)
    return text


def _token_sub(m: re.Match) -> str:
    s = m.string
    i = m.start()
    tok = m.group(0)
    if i > 0 and s[i - 1] in _WORDCH and not tok.startswith(_GLUED_OK):
        return tok  # inside a longer word: not a token (a short prefix such as hf_ or sk- there is a word's part)
    if tok.startswith("eyJ"):
        parts = tok.split(".")
        if len(parts) != 3 or not parts[1].startswith("eyJ") or len(parts[1]) < 4:
            return tok
    return MASK


def _apply_cuts(text: str, cuts: list[tuple[int, int]]) -> str:
    if not cuts:
        return text
    out, pos = [], 0
    for s, e in sorted(cuts):
        if s < pos:
            continue
        out.append(text[pos:s])
        out.append(MASK)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _names(text: str, low: str) -> list[tuple[int, int]]:
    """Values of assignments whose name holds a secret-like word: found from the words (str.find, C speed),
    never by a pattern tried at every position."""
    cuts: list[tuple[int, int]] = []
    n = len(text)
    for w in _HINT_WORDS:
        i = low.find(w)
        while i >= 0:
            s = i
            while s > 0 and i - s < 64 and text[s - 1] in _NAMECH:
                s -= 1
            e = i + len(w)
            while e < n and e - i < 64 and text[e] in _NAMECH:
                e += 1
            nxt = low.find(w, e)
            if s > 0 and text[s - 1] in _NAMECH:  # longer than a name
                i = nxt
                continue
            name = text[s:e]
            if is_secret_name(name.lstrip("-")):
                m = _SEP_VALUE.match(text, e)
                if m is None and name.startswith("-"):
                    m = _OPT_VALUE.match(text, e)
                if m is not None:
                    v = m.group("v")
                    if not _BORING.fullmatch(v) and not v.startswith(("/", "~/", "./")):
                        cuts.append((m.start("v"), m.end("v")))
                        nxt = low.find(w, m.end())  # the value is consumed: linear however it repeats
            i = nxt
    return cuts


def _headers(text: str, low: str) -> list[tuple[int, int]]:
    cuts: list[tuple[int, int]] = []
    for w in _HEADER_WORDS:
        i = low.find(w)
        while i >= 0:
            e = i + len(w)
            if text[i].isupper() and (i == 0 or text[i - 1] not in _WORDCH):
                m = _HEADER_VALUE.match(text, e)
                if m is not None:
                    cuts.append((m.start("v"), m.end("v")))
                    e = m.end()
            i = low.find(w, e)
    return cuts


def redact_text(text: str) -> str:
    """Mask every secret the three ways above.  Linear time; idempotent."""
    if not text:
        return text
    _ensure_process_env()
    for v in _env_sorted:
        if v in text:
            text = text.replace(v, MASK)
    if "PRIVATE KEY" in text:
        text = _pem(text)
    text = _tokens(text)
    if "://" in text and "@" in text:
        text = _gated(text, ("@",), lambda t: _URL_CRED.sub(lambda m: f"{m.group('scheme')}{MASK}@", t), lower=False)
    low = _lower(text)
    if not any(w in low for w in _HINT_WORDS + _HEADER_WORDS):
        return text
    text = _apply_cuts(text, _headers(text, low))
    low = _lower(text)
    text = _apply_cuts(text, _names(text, low))
    return _near_words(text)


def redact_env(name: str, value: str) -> str:
    """The value of one environment variable as gpuvet shows it."""
    if is_secret_name(name):
        return MASK if value else value
    return redact_text(value)


def redact_argv(argv: Iterable[str]) -> list[str]:
    """A command line with secret option values masked (``--token X``, ``--token=X``, ``KEY=X``)."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-")):
            hide_next = True
            out.append(arg)
            continue
        name, sep, _ = arg.partition("=")
        if sep and is_secret_name(name.lstrip("-")):
            out.append(name + "=" + MASK)
            continue
        out.append(redact_text(arg))
    return out


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    if text is None or len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + "…"
