"""Issue 7 (day 9, r9): the head of a large log (1 MiB of a deep traceback) through ``parse_report``'s detectors
without a regex scan of the whole head where a literal proves it cannot match.  Each rewrite must match exactly the
texts its original form matched: compared here on every tuning case's text and every real capture, plus look-alikes
written for each branch."""
from __future__ import annotations

import re

import pytest

from test_grep_prefilter_paths import REAL, _case_texts

# the forms before day 9, verbatim
OLD_ENVBLOCK = re.compile(
    r"^(?:[ \t>]*(?:[-*+•][ \t]+|\d{1,2}[.)][ \t]+)?[*`_]*(?:\U0001F917[ \t]*)?"
    r"(?:(?:py)?torch|rocm|amd[ \t]+rocm|cuda|nvidia|driver|gpu|graphics|video card|hardware|accelerator|card|os\b|"
    r"operating|distr|platform|kernel|torchvision|torchaudio|triton|numpy|transformers|accelerate|diffusers|"
    r"huggingface|safetensors|installed rocm|system rocm|host rocm|amd arch)[^\n]{0,80}?[:=|]"
    r"|[ \t]*\|[^\n]{0,200}\|[ \t]*$|[ \t]*#{2,4}[ \t]+\w|[^\n•]{0,120}•[^\n•]{0,80}•"
    r"|(?:torch|nvcc)[\w ]{0,20} \.{3,} )", re.M | re.I)
OLD_NV_ANY = re.compile(r"\b(?:RTX|GTX|Tesla|A100|A800|H100|H800|H200|V100|L40S|B200|A10G|Jetson|A[24-6][05]00)\b"
                        r"|RTX ?[1-9]\d{2,3}|GTX ?[1-9]\d{2,3}|\+ *cu\d{3}")

LOOKALIKES = [
    "GPU: gfx1100\n", "x\n  OS: Ubuntu 22.04\n", "- **PyTorch version**: 2.3\n", "1. torch=2.1\n", "> Kernel: 6.8\n",
    "| a | b |\n", "text\n  | col | col |  \n", "## Environment\n", "#### x\n", "##### too deep\n", "# one\n",
    "version: 1 • python: 3.10 • torch: 2.1\n", "a • b\n", "torch ........ 2.3.0\n", "nvcc ... 12\n",
    "  File \"x.py\", line 3, in f\n    return g(x)\n", "osx: 1\n", "Os: linux\n", "cards = 3\n", "\U0001F917 Transformers: 4\n",
    "NVIDIA RTX A6000\n", "RTX A5500 Laptop\n", "A6500\n", "A3000\n", "A2000x\n", "torch 2.1.0+cu121\n",
    "torch 2.1.0+ cu118\n", "torch 2.1.0+  cu118\n", "+cu12\n", "RTX 4090\n", "GTX1080\n", "Tesla T4\n", "A10G\n",
    "recurse(x - 1, depth=2000)\n",
]


def _texts() -> list[str]:
    from gpuvet.probes.pasted import clean

    texts = _case_texts() + [p.read_text(errors="replace") for p in sorted(REAL.rglob("*.txt"))]
    assert len(texts) > 100
    return [clean(t) for t in texts] + LOOKALIKES + ["".join(LOOKALIKES)]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


def test_the_line_start_search_matches_what_the_multiline_pattern_matched(texts):
    from gpuvet.probes.envblock import _ANY, has_envblock

    hits = 0
    for t in texts:
        old = OLD_ENVBLOCK.search(t) is not None
        assert (_ANY.search(t) is not None) == old, t[:300]
        assert has_envblock(t) == old
        hits += old
    assert hits > 50


def test_the_written_out_gpu_names_match_what_the_class_form_matched(texts):
    from gpuvet.probes.mentions import NV_ANY

    hits = 0
    for t in texts + [ln for t in LOOKALIKES for ln in t.splitlines()]:
        old = OLD_NV_ANY.search(t) is not None
        assert (NV_ANY.search(t) is not None) == old, t[:300]
        hits += old
    assert hits > 20


def test_nvidia_smi_errors_behind_their_literals_are_found_as_before(texts):
    from gpuvet.probes import nvidia

    def old(text: str) -> str | None:
        for pat in nvidia._SMI_ERRORS:
            m = pat.search(text)
            if m:
                return " ".join(m.group(0).split())
        return None

    samples = ["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure ...",
               "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.104",
               "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error", "No devices were found",
               "$ nvidia-smi\nbash: nvidia-smi: command not found", "sh: 1: nvidia-smi: not found",
               "Unable to determine the device handle for GPU 0: GPU is lost.  Reboot the system"]
    found = 0
    for t in texts + samples:
        want = old(t)
        assert nvidia.nvidia_smi_error(t) == want, t[:300]
        found += want is not None
    assert found >= len(samples)


def _deep_head() -> str:
    frames = "".join(f'  File "/opt/venv/lib/python3.11/site-packages/mylib/recursive_module.py", line {i % 900 + 1}, '
                     f"in recurse_level_{i % 50}\n    return recurse(x - 1, depth={i})\n" for i in range(7000))
    return "Traceback (most recent call last):\n" + frames


def test_a_deep_tracebacks_head_opens_neither_slow_detector():
    """The defect (day 8): on 1 MiB of frames, parse_nvidia_mentions' gate opened on "00" (line 100) and "cu"
    (recurse), parse_envblock had no gate (its "##" branch had no literal), and each searched the whole head."""
    from gpuvet.probes import pasted

    text = _deep_head()
    assert len(text) > pasted.GATED_TEXT
    gates = dict(zip((d[2] for d in pasted.DETECTORS), pasted._gates()))
    assert not gates["parse_nvidia_mentions"](text)
    env = pasted._ENVBLOCK
    env.search(text)
    # the label-word branch ("os" of "most recent") is the only one its gate lets through
    assert [i for i, g in enumerate(env._gates) if g(text, text.lower())] == [0]
    assert pasted.nvidia.nvidia_smi_error(text) is None


def test_a_deep_tracebacks_head_gives_the_same_facts_through_the_gates():
    from gpuvet.probes import pasted

    text = _deep_head() + "NVIDIA RTX A6000\nGPU: NVIDIA RTX A6000\n| torch | 2.3.0+cu121 |\n"
    big = pasted.parse_report(text)
    small = pasted.parse_report(text[-200:])
    assert sorted((r.table, sorted(r.values.items(), key=str)) for r in big.rows) == \
        sorted((r.table, sorted(r.values.items(), key=str)) for r in small.rows)
