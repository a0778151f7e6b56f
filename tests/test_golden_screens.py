"""Golden terminal screens: what `check`, `check --from`, `diagnose`, `compat` and `run` show at 80 and
140 columns, captured under tmux by tools/capture_screens.py (a real terminal: the width comes from the
tty).  Here the same commands run in-process with that width; the screens must match line for line."""
import re
import sys

import pytest

from conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "tools"))
from capture_screens import SCREENS, WIDTHS  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "screens"


def _norm(text: str) -> list[str]:
    text = re.sub(r" · \d+\.\d\ds$", " · <elapsed>", text, flags=re.M)
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def _wrap_child_output(text: str, width: int) -> str:
    """A terminal wraps the child's own long lines at its width (gpuvet passes them through as-is)."""
    out = []
    for line in text.splitlines():
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(SCREENS))
def test_screen(name, width, monkeypatch):
    monkeypatch.chdir(ROOT)
    golden = GOLDEN / f"{name}-{width}.txt"
    r = run_cli(SCREENS[name], environ={"NO_COLOR": "1", "COLUMNS": str(width), "PATH": "/usr/bin:/bin"})
    shown = _wrap_child_output(r.out, width) + "\n" + r.err if name.startswith("run") else r.out + r.err
    assert _norm(shown) == _norm(golden.read_text()), f"{golden} differs: rerun tools/capture_screens.py and review"
    assert max(len(line) for line in _norm(shown)) <= width


def test_the_first_screen_answers_first():
    h200 = (GOLDEN / "check-h200-80.txt").read_text().splitlines()
    assert h200[0] == "GPU usable by torch: yes (2.11.0+cu130, CUDA 13.0, 1x H200 sm_90)"
    assert h200[2].startswith("i BLD045 ")  # the findings come right after the verdict, before the stack
    text = "\n".join(h200)
    assert text.index("i BLD045") < text.index("Stack") < text.index("Score ")
    assert "✗" not in text  # information notes are not drawn as failures
    amd = (GOLDEN / "check-from-rocminfo-lspci-amd-80.txt").read_text().splitlines()
    assert amd[0].startswith("GPU usable: no: ") and amd[3].startswith("✗ DRV026 amdgpu-driver-not-loaded [error]")
