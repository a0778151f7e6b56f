"""Collective case: one process per GPU (gloo with two processes on the CPU), started by the runner.

The runner sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT (env:// rendezvous on
loopback).  Each rank checks every result against a value it computes independently.
"""
from __future__ import annotations

import datetime
import os


def case_collective(ctx):
    t = ctx.torch
    dist = t.distributed
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if ctx.gpu:
        t.cuda.set_device(local % t.cuda.device_count())
        dev = f"cuda:{local % t.cuda.device_count()}"
        backend = "nccl"
    else:
        dev, backend = "cpu", "gloo"
    timeout = float(ctx.params.get("collective_timeout_s") or 60)
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout))
    try:
        ctx.info.update(backend=backend, rank=rank, world_size=world)
        n = 1024 if ctx.small else (1 << 24)
        x = t.full((n,), float(rank + 1), device=dev)
        dist.all_reduce(x)
        want = world * (world + 1) / 2
        ctx.expect("all_reduce-sum", bool((x == want).all()), f"rank {rank}: every element {want}", rank=rank)
        s = ctx.time(lambda: dist.all_reduce(x), warmup=2, reps=5)
        size = x.numel() * x.element_size()
        algbw = size / (s["median"] * 1e-3) / 1e9
        ctx.metric("all_reduce-busbw", algbw * (2 * (world - 1) / world if world > 1 else 1), "GB/s", "higher",
                   bytes=size, algbw=algbw)
        dist.barrier()
    finally:
        dist.destroy_process_group()
