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

import os
import re
import threading
from typing import Iterable, Mapping

MASK = "***"
MIN_ENV_SECRET = 8  # shorter values of secret variables ("1", "true", "x11") are not masked everywhere

# one segment of a name (split on _ . - and spaces), lower-cased
_SEG_SECRET = re.compile(
    r"(?:token(?!iz|s$)|secret|passw|passphrase|credential|webhook|cookie|session|private|signature(?!s)"
    r"|^auth(?!or)|oauth|^pwd$|pwd$|^keys?$|.{2,}key$|^apikey|^api_?key)")
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "TOKENIZERS_PARALLELISM", "KEYBOARD", "MONKEY"})


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


# Token shapes (each bounded: no pattern can take super-linear time).
_TOKENS = re.compile("|".join(r"(?:%s)" % p for p in (
    r"\bhf_[A-Za-z0-9]{20,200}",  # Hugging Face
    r"\bapi_org_[A-Za-z0-9]{20,200}",  # Hugging Face organisation
    r"\bgh[pousr]_[A-Za-z0-9]{30,200}",  # GitHub
    r"\bgithub_pat_[A-Za-z0-9_]{30,300}",
    r"\bglpat-[A-Za-z0-9_-]{20,200}",  # GitLab
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,300}",  # OpenAI, Anthropic
    r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,200}",  # Stripe
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
    r"\bxox[abprse]-[A-Za-z0-9-]{10,300}",  # Slack
    r"\bxapp-[A-Za-z0-9-]{10,300}",
    r"\bAIza[0-9A-Za-z_-]{35}",  # Google API key
    r"\bnvapi-[A-Za-z0-9_-]{20,200}",  # NVIDIA NGC / API catalog
    r"\bpypi-[A-Za-z0-9_-]{50,300}",  # PyPI upload token
    r"\bnpm_[A-Za-z0-9]{36}",  # npm
    r"\beyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{4,8000}\.[A-Za-z0-9_-]{0,4000}",  # JWT
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,300}",  # Slack webhook
    r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_-]{10,200}",
)))
_URL_CRED = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://)(?P<cred>[^/@\s:\"'<>\\]{1,300}(?::[^/@\s\"'<>\\]{0,300})?)@")
_HEADER = re.compile(r"\b(?P<k>(?:Bearer|Basic|Token|Digest)\s{1,5})(?P<v>[A-Za-z0-9._~+/=-]{8,4000})")
# NAME=value, NAME: value, "NAME": "value", --name value, --name=value.  The name is bounded and the
# callback decides with is_secret_name (so KeyError: ... and max_tokens: 512 stay visible).
_ASSIGN = re.compile(
    r"(?<![\w.-])(?P<n>[A-Za-z_][\w.-]{0,63})(?P<q>[\"']?)(?P<sep>\s{0,3}[=:]\s{0,3})"
    r"(?P<o>[\"']?)(?P<v>[^\s\"'&,;\\<>\[\]{}()]{1,4096})")
_OPTION = re.compile(r"(?<![\w.-])(?P<n>--?[A-Za-z][\w.-]{0,63})(?P<sep>\s{1,3})(?P<v>[^\s\"'&,;\\<>-][^\s\"'&,;\\<>]{0,4095})")
_HINT = re.compile(r"(?i)key|token|secret|passw|pwd|credential|auth|webhook|cookie|session|private|signature(?!s)")
_NEAR_WORD = re.compile(
    r"(?i)\b(?:key|token|secret|password|passwd|credential|apikey|api key|access key)\b[^\n\"\\]{0,20}?"
    r"(?<![A-Za-z0-9+/_=-])(?P<v>[A-Za-z0-9+/_=-]{20,4000})")
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=\s\\]{0,16384}")
_BORING = re.compile(r"(?i)(?:[0-9]+|true|false|none|null|yes|no|on|off|\*+|<[^>]*>|\$\{?\w+\}?)")

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


def _assign(m: re.Match) -> str:
    v = m.group("v")
    if not is_secret_name(m.group("n")) or _BORING.fullmatch(v) or v.startswith(("/", "~/", "./")):
        return m.group(0)
    return m.group(0)[: m.start("v") - m.start(0)] + MASK


def _near(m: re.Match) -> str:
    v = m.group("v")
    if _high_entropy(v):
        return m.group(0)[: m.start("v") - m.start(0)] + MASK
    return m.group(0)


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
    text = _TOKENS.sub(MASK, text)
    if "@" in text:
        text = _URL_CRED.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    text = _HEADER.sub(lambda m: m.group("k") + MASK, text)
    if not _HINT.search(text):
        return text
    text = _ASSIGN.sub(_assign, text)
    text = _OPTION.sub(_assign, text)
    return _NEAR_WORD.sub(_near, text)


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
