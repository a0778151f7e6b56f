"""Every compiled pattern of gpuvet.logs and gpuvet.probes (module level) and every pasted-report parser
stays linear on blank-line, space and repetition bombs: four times the input may cost at most ~10x the time.

Found this way: parse_amd_smi's ``^\\s*`` in multi-line mode (80,000 blank lines: ~60 s), the progress-bar
pattern (a 2,000-character line of spaces after ``0%||``: 50 s), rocm-smi's ``[ \\t]*([^:\\n]+?):`` and
the mentions detector's ``^\\s*Runtime Version:``."""
import importlib
import pkgutil
import re
import time

import pytest

import gpuvet.logs
import gpuvet.probes
from gpuvet.logs.gate import LiteralGate
from gpuvet.model.lazyre import LazyPattern, LineStartPattern

UNITS = ["\n", " ", " \t\n", "a", "1.", "a:", ": ", "| ", "a.", "-", "[", "x "]


def _patterns():
    out = []
    for pkg in (gpuvet.logs, gpuvet.probes):
        for m in pkgutil.iter_modules(pkg.__path__):
            mod = importlib.import_module(f"{pkg.__name__}.{m.name}")
            for name, v in vars(mod).items():
                if isinstance(v, LazyPattern):  # compiled on first use (model/lazyre.py): tested as compiled
                    v = v.compiled()
                if isinstance(v, LineStartPattern):  # searched as its branches after a newline: that form, whole
                    out.append((f"{m.name}.{name}", re.compile("\n(?:" + "|".join(v.branches) + ")", v.flags)))
                    v = re.compile(v.pattern, v.flags)
                if isinstance(v, re.Pattern) and isinstance(v.pattern, str):
                    out.append((f"{m.name}.{name}", v))
    return out


PATTERNS = _patterns()


def _needles(rx: re.Pattern) -> list[str]:
    try:
        g = LiteralGate(rx.pattern, rx.flags)
    except Exception:
        return [""]
    return [""] + [n for n in (g.exact + g.folded) if len(n) >= 2][:3]


def _cost(rx, text) -> float:
    best = 1e9
    for _ in range(3):  # the least of three: a scheduling hiccup is not a slow pattern
        t = time.perf_counter()
        rx.search(text)
        best = min(best, time.perf_counter() - t)
    return best


@pytest.mark.parametrize("name,rx", PATTERNS, ids=[n for n, _ in PATTERNS])
def test_pattern_is_linear_on_bombs(name, rx):
    for pre in _needles(rx):
        for unit in UNITS:
            # a super-linear pattern fails every attempt; a busy machine (a 4x slower slice between the two sizes)
            # fails one now and then, so the ratio is measured again, up to three times, before it counts
            for attempt in range(3):
                costs = []
                for n in (250, 1000, 4000):
                    text = pre + unit * n + pre + "!"
                    c = _cost(rx, text)
                    costs.append(c)
                    assert c < 0.5, (name, repr(pre), repr(unit), n, c)
                if all(b < 10 * max(a, 0.004) for a, b in zip(costs, costs[1:])):
                    break
            else:
                raise AssertionError((name, repr(pre), repr(unit), costs))


def test_pasted_parsers_on_blank_line_bombs():
    from gpuvet.probes.pasted import parse_report

    for pre in ["", "GPU: 0\n", "  MARKET_NAME:", "GPU[0] : ", "Marketing Name:", "HIP version: ", "AMDSMI Tool:\n",
                "PyTorch version: ", "Runtime Version:", "NVIDIA-SMI\n",
                # environment blocks (probes/envblock.py): a field, a table row, an issue-form heading, a footer
                "- ROCm: ", "| ROCm | ", "|---|---|\n| torch | ", "### PyTorch version\n", "- PyTorch version (GPU?): ",
                "version: v1.6.0 • torch: ", "**NVIDIA driver**: "]:
        for bomb in ("\n" * 40_000, " " * 40_000, " \t\n" * 15_000):
            t = time.perf_counter()
            try:
                parse_report(pre + bomb + "\n" + pre, "bomb")
            except ValueError:
                pass
            assert time.perf_counter() - t < 2.0, (repr(pre), repr(bomb[:3]))
