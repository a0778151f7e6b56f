#!/usr/bin/env python3
"""Capture the golden terminal screens under tmux, at 80 and 140 columns, as a user sees them.

Each command runs in a fresh detached tmux session of that width (a real terminal: gpuvet reads its
width from the tty, COLUMNS is not exported), with NO_COLOR=1; the pane (with its scroll-back) is
captured with ``tmux capture-pane`` and written to tests/golden/screens/NAME-WIDTH.txt.
tests/test_golden_screens.py renders the same commands in-process and compares.

usage: python tools/capture_screens.py  (from anywhere; needs tmux and the repo's .venv)
"""
from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "screens"
WIDTHS = (80, 140)
RUN_BUNDLE = "/tmp/gpuvet-golden-run"
# name -> argv after `gpuvet` (paths relative to the repository root; real captures only)
SCREENS: dict[str, list[str]] = {
    "check-h200": ["check", "--from", "tests/fixtures/real/h200-gpuvet/check.json"],
    "check-from-collect-env-nvidia-smi": ["check", "--from", "tests/fixtures/real/h200-cuda13/collect_env.txt",
                                          "--from", "tests/fixtures/real/h200-cuda13/nvidia-smi.txt"],
    "check-from-rocminfo-lspci-amd": ["check", "--from", "tests/fixtures/real/debian12-cpu-rocm52/rocminfo.txt",
                                      "--from", "tests/fixtures/amd/pasted/lspci-grep-vga-vega10.txt"],
    "diagnose-assert": ["diagnose", "tests/fixtures/real/h200-gpuvet/runs/assert-output.log"],
    "compat-cu118-driver-470": ["compat", "--torch", "2.1", "--cuda", "11.8", "--driver", "470.82", "--gpu", "A100"],
    # --no-here: the screen must not depend on the machine it is captured or tested on (with the live facts the
    # H200 drew its own BLD045 notes and failed there); tests/test_first_screen_q12.py draws the same failure with
    # the H200's live facts, read from its captured check.json
    "run-assert": ["run", "--no-here", "--bundle", RUN_BUNDLE, "--", "sh", "-c",
                   "cat tests/fixtures/real/h200-gpuvet/runs/assert-output.log; exit 1"],
}
START, END = "__gpuvet_screen_start__", "__gpuvet_screen_end__"


def capture(name: str, argv: list[str], width: int) -> str:
    session = f"gpuvet-golden-{name}-{width}"
    gpuvet = ROOT / ".venv" / "bin" / "gpuvet"
    # the markers are printed split ('__gpuvet_screen_st''art__') so the echoed command line never equals them
    cmd = (f"cd {shlex.quote(str(ROOT))} && clear && echo {START[:16]}''{START[16:]} && NO_COLOR=1 "
           f"{shlex.quote(str(gpuvet))} {shlex.join(argv)}; echo {END[:16]}''{END[16:]}")
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(width), "-y", "60", "bash", "--norc",
                    "--noprofile"], check=True)
    try:
        subprocess.run(["tmux", "set-option", "-t", session, "history-limit", "5000"], check=True)
        subprocess.run(["tmux", "send-keys", "-t", session, cmd, "Enter"], check=True)
        for _ in range(300):
            time.sleep(0.1)
            text = subprocess.run(["tmux", "capture-pane", "-p", "-J", "-S", "-", "-t", session],
                                  capture_output=True, text=True).stdout
            if END in text.splitlines():
                break
        else:
            raise SystemExit(f"{name} at {width}: no end marker")
        # -J would join wrapped lines; capture again without it so the screen is what was shown
        text = subprocess.run(["tmux", "capture-pane", "-p", "-S", "-", "-t", session],
                              capture_output=True, text=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    lines = [line.rstrip() for line in text.splitlines()]
    body = lines[lines.index(START) + 1:lines.index(END)]
    return "\n".join(body).strip("\n") + "\n"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, argv in SCREENS.items():
        for w in WIDTHS:
            text = capture(name, argv, w)
            (OUT / f"{name}-{w}.txt").write_text(text)
            print(f"{name}-{w}: {len(text.splitlines())} lines, widest {max(map(len, text.splitlines()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
