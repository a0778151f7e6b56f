"""Fault injection: cases that misbehave on purpose, to prove each becomes the right finding."""
from __future__ import annotations

import os
import time


def case_segfault(ctx):
    import ctypes
    ctypes.string_at(0)  # read address 0: SIGSEGV


def case_abort(ctx):
    os.abort()


def case_hang(ctx):
    while True:
        time.sleep(0.5)


def case_wrong(ctx):
    """A matmul whose result is perturbed, as a broken kernel would return."""
    t = ctx.torch
    a, b = ctx.rand(64, 64, seed=90), ctx.rand(64, 64, seed=91)
    got = a.to(ctx.device, t.float32) @ b.to(ctx.device, t.float32)
    got[::7] *= 1.05
    ctx.compare("matmul-64", got, a @ b, "fp32")


def case_leak(ctx):
    from cases_train import case_leak_loop
    ctx.params.setdefault("leak", True)
    ctx.params.setdefault("iterations", 300)
    ctx.params.setdefault("n", 256)
    case_leak_loop(ctx)
