"""The grep-safe (POSIX ERE) prefilter patterns of the facts read from tracebacks and warnings
(``logs/extract.py``), in a module of their own so that ``gpuvet run`` can hand them to grep without
importing (and compiling) the extractors."""
from __future__ import annotations

PREFILTER_PATTERNS = (
    r"built for:? *PyTorch [0-9]",
    r"NVIDIA driver on your system is too old",
    r"ROCk module version [0-9]",
    r"Driver Version: *[0-9]+\.[0-9]",
    r"NVRM version: NVIDIA",
    r"detected CUDA version \([0-9.]+\) mismatches",
    r"with CUDA capability sm_[0-9]+",
    r"current PyTorch install supports CUDA capabilities",
    r"torch( *==| +)[0-9]+\.[0-9]+\.[0-9]+",
)
