"""SHA-1 / SHA-256 hex digests without importing ``hashlib``.

``hashlib`` loads OpenSSL's ``_hashlib`` when it is imported, about 11 M instructions of `gpuvet check`'s
start-up for the two cache keys it computes (the KB cache, the ELF scan cache).  CPython's own built-in
modules compute the same digests; ``hashlib`` is the fallback where they are absent."""
from __future__ import annotations

from typing import Any, Callable


def _builtin(names: tuple[tuple[str, str], ...]) -> Callable[[bytes], Any] | None:
    import importlib

    for module, attr in names:
        try:
            return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    return None


_SHA256 = _builtin((("_sha2", "sha256"), ("_sha256", "sha256")))  # 3.12+, 3.11
_SHA1 = _builtin((("_sha1", "sha1"),))


def sha256_hex(data: bytes) -> str:
    if _SHA256 is not None:
        return str(_SHA256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def sha1_hex(data: bytes) -> str:
    if _SHA1 is not None:
        return str(_SHA1(data).hexdigest())
    import hashlib

    return hashlib.sha1(data).hexdigest()
