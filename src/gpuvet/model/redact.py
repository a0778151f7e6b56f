"""Keep secrets out of everything gpuvet writes: env values, URLs with credentials, tokens in text.

Pure functions; used by probes (env vars), snapshots, logs and renderers."""
from __future__ import annotations

import re

MASK = "***"
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSW|PASSWD|PWD|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|SESSION|COOKIE|SIGNATURE)", re.I)
_URL_CRED = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<cred>[^/@\s:]+(?::[^/@\s]*)?)@")
_TOKENS = [
    re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),  # Hugging Face
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),  # OpenAI-style
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),  # Slack
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b"),  # JWT
]
_ASSIGN = re.compile(r"(?P<k>\b[A-Za-z0-9_]*?(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY)[A-Za-z0-9_]*\s*[=:]\s*)(?P<v>[^\s'\"]+)", re.I)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask credentials in URLs, well-known token formats and KEY=value assignments of secrets."""
    if not text:
        return text
    text = _URL_CRED.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    for pat in _TOKENS:
        text = pat.sub(MASK, text)
    return _ASSIGN.sub(lambda m: m.group("k") + MASK, text)


def redact_env(name: str, value: str) -> str:
    if is_secret_name(name):
        return MASK if value else value
    return redact_text(value)
