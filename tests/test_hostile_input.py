"""Bounded work on hostile input: huge values, regex bombs, endless tools, special files, closed streams."""
import os
import time

import pytest

from conftest import run_cli


def test_a_10mb_version_value_is_capped(tmp_path):
    p = tmp_path / "ce.txt"
    p.write_text("PyTorch version: 2.3.0" + "x" * 10_000_000 + "\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n")
    r = run_cli(["check", "--from", str(p), "--format", "json"])
    assert r.code in (0, 1, 3), r.err
    assert len(r.out) < 200_000
