"""Collective cases: one process per GPU (gloo with two processes on the CPU), started by the runner.

The runner sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT (env:// rendezvous on
loopback).  Each rank checks every result against a value it computes independently.

``distributed`` is the stress: all-reduce, all-gather, reduce-scatter and broadcast from 1 KiB to 1 GiB
(100 iterations each on a GPU; 1 KiB to 256 KiB and a few iterations on the CPU), every iteration's output
compared with the closed-form expected value, algbw and busbw per size computed the way nccl-tests does.
Before any collective the ranks exchange, through the rendezvous store, which physical GPU each one got
(UUID), what CUDA_VISIBLE_DEVICES it saw and the P2P access matrix, so the parent can name
misconfigurations (two ranks on one GPU, GPUs hidden from some ranks) even when NCCL then refuses or hangs.
Every collective runs under a watchdog: past ``collective_timeout_s`` the rank reports the collective and
size that hung (status ``timeout``, with what it had measured so far) and exits; the parent attaches the
rank's log, where NCCL's ``NCCL_DEBUG=INFO`` output is.
"""
from __future__ import annotations

import datetime
import json
import os
import threading
import time

KIB = 1024
# nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md of NVIDIA/nccl-tests)
BUS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}
COLLECTIVES = tuple(BUS_FACTOR)
GPU_SIZES = tuple(KIB << (2 * i) for i in range(11))  # 1 KiB, 4 KiB, ... 1 GiB
CPU_SIZES = (KIB, 16 * KIB, 256 * KIB)


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


# ---------------------------------------------------------------------------------------------- the stress
class Watchdog:
    """Bounds every collective: past the time-out the rank reports what hung and exits."""

    def __init__(self, ctx, timeout_s: float):
        self.ctx, self.timeout_s = ctx, timeout_s
        self.what: str | None = None
        self.since = 0.0
        self.limit = timeout_s
        self.lock = threading.Lock()
        self.stop = threading.Event()
        threading.Thread(target=self._watch, daemon=True, name="gpuvet-collective-watchdog").start()

    def guard(self, what: str, timeout_s: float | None = None):
        wd = self

        class _G:
            def __enter__(self):
                with wd.lock:
                    wd.what, wd.since, wd.limit = what, time.monotonic(), timeout_s or wd.timeout_s

            def __exit__(self, *exc):
                with wd.lock:
                    wd.what = None
                return False

        return _G()

    def _watch(self):
        while not self.stop.wait(0.2):
            with self.lock:
                what, since, limit = self.what, self.since, self.limit
            if what is not None and time.monotonic() - since > limit:
                self._report(what, limit)

    def _report(self, what: str, limit: float):
        import sys
        import traceback

        try:
            me = threading.get_ident()
            stacks = "".join("".join(traceback.format_stack(f)) for tid, f in sys._current_frames().items()
                             if tid != me)
            sys.stderr.write(f"gpuvet: rank {os.environ.get('RANK')}: {what} did not finish within "
                             f"{limit:g} s; where the rank waits:\n{stacks[-2000:]}\n")
            sys.stderr.flush()
            res = self.ctx.result()
            res["info"]["hung"] = what
            worker = sys.modules["__main__"]  # the running worker.py, which owns the protocol stream
            worker.emit("result", case=self.ctx.case, status="timeout",
                        error=f"{what} did not finish within {limit:g} s (rank {os.environ.get('RANK')})",
                        trace="", elapsed_s=round(time.monotonic() - self.since, 3), **res)
        finally:
            os._exit(124)


def _exchange(store, rank: int, world: int, key: str, value) -> list:
    store.set(f"gpuvet/{key}/{rank}", json.dumps(value))
    return [json.loads(store.get(f"gpuvet/{key}/{r}")) for r in range(world)]


def _device_facts(t, gpu: bool, index: int | None) -> dict:
    facts = {"pid": os.getpid(), "host": os.uname().nodename,
             "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
             "HIP_VISIBLE_DEVICES": os.environ.get("HIP_VISIBLE_DEVICES"),
             "ROCR_VISIBLE_DEVICES": os.environ.get("ROCR_VISIBLE_DEVICES"),
             "nccl_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}
    if gpu:
        facts["device_count"] = t.cuda.device_count()
        facts["device"] = index
        p = t.cuda.get_device_properties(index)
        facts["name"] = p.name
        uuid = getattr(p, "uuid", None)
        facts["uuid"] = str(uuid) if uuid is not None else None
        bus = getattr(p, "pci_bus_id", None)
        facts["pci_bus_id"] = f"{bus:02x}" if isinstance(bus, int) else None
        n = t.cuda.device_count()
        facts["p2p"] = [[i == j or bool(t.cuda.can_device_access_peer(i, j)) for j in range(n)] for i in range(n)]
    return facts


def case_distributed(ctx):
    t = ctx.torch
    dist = t.distributed
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    p = ctx.params
    timeout = float(p.get("collective_timeout_s") or (10 if ctx.small else 120))
    hang_rank, wrong_rank = p.get("inject_hang_rank"), p.get("inject_wrong_rank")
    if p.get("pid_dir"):  # lets a test prove the ranks are gone afterwards
        with open(os.path.join(p["pid_dir"], f"rank{rank}.pid"), "w") as fh:
            fh.write(str(os.getpid()))
    if ctx.gpu:
        count = t.cuda.device_count()
        index = local % count
        t.cuda.set_device(index)
        dev, backend = f"cuda:{index}", "nccl"
        os.environ.setdefault("NCCL_DEBUG", "INFO")  # NCCL reads it when the communicator starts
        os.environ["NCCL_NVLS_ENABLE"] = "0"  # never NVLink multicast
    else:
        index, dev, backend = None, "cpu", "gloo"
    wd = Watchdog(ctx, timeout)
    ctx.info.update(backend=backend, rank=rank, world_size=world, collective_timeout_s=timeout,
                    nccl_version=_nccl_version(t) if ctx.gpu else None)
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, rank == 0,
                          timeout=datetime.timedelta(seconds=timeout))
    with wd.guard("rendezvous (store exchange of device facts)"):
        ranks = _exchange(store, rank, world, "facts", _device_facts(t, ctx.gpu, index))
    ctx.info["ranks"] = ranks
    uuids = [r.get("uuid") or (r.get("host"), r.get("pci_bus_id")) for r in ranks] if ctx.gpu else []
    shared = ctx.gpu and len({json.dumps(u) for u in uuids}) < world
    ctx.info["shared_gpu"] = bool(shared)
    with wd.guard("init_process_group"):
        dist.init_process_group(backend, store=store, rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=timeout + 30))
    try:
        if shared and not p.get("run_on_shared_gpu"):
            # NCCL refuses two ranks on one device ("Duplicate GPU detected"); record what it says, once
            x = t.ones(256, device=dev)
            try:
                with wd.guard("all_reduce on a GPU shared by two ranks", min(timeout, 45.0)):
                    dist.all_reduce(x)
                    t.cuda.synchronize()
                ctx.note("NCCL accepted two ranks on one GPU; the collective sweep was not run")
            except Exception as exc:
                ctx.info["shared_gpu_error"] = f"{type(exc).__name__}: {str(exc)[:600]}"
                ctx.note(f"NCCL with two ranks on one GPU: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            raise ctx.Unsupported(f"{world} ranks share one GPU: the collective sweep was not run")
        sizes = tuple(int(s) for s in p.get("sizes") or (CPU_SIZES if ctx.small else GPU_SIZES))
        iters = int(p.get("iterations") or (3 if ctx.small else 100))
        warmup = int(p.get("warmup") if p.get("warmup") is not None else (1 if ctx.small else 5))
        which = tuple(p.get("collectives") or COLLECTIVES)
        rows = []
        for name in which:
            for size in sizes:
                rows.append(_one(ctx, wd, dist, t, dev, name, size, rank, world, iters, warmup,
                                 hang=(hang_rank == rank and size == sizes[-1] and name == which[0]),
                                 wrong=(wrong_rank == rank and size == sizes[0] and name == which[0])))
        ctx.tables["collectives"] = {"columns": ["collective", "bytes", "count", "iterations", "time_us", "algbw_GBps",
                                                 "busbw_GBps", "wrong_iterations"], "rows": rows}
        for name in which:
            big = [r for r in rows if r[0] == name][-1]
            ctx.metric(f"{name}-busbw", big[6], "GB/s", "higher", bytes=big[1], algbw=big[5])
        with wd.guard("barrier"):
            dist.barrier()
    finally:
        try:
            with wd.guard("destroy_process_group"):
                dist.destroy_process_group()
        except Exception:
            pass
        wd.stop.set()


def _nccl_version(t):
    try:
        v = t.cuda.nccl.version()
        return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception:
        return None


def _one(ctx, wd, dist, t, dev, name, size, rank, world, iters, warmup, hang=False, wrong=False):
    """One (collective, size): ``iters`` checked iterations, then ``iters`` timed ones; a row of the table.

    Inputs are small integers in float32, so every expected value is exact: rank r's element i holds
    ``r + 1 + i % 7``; all-reduce (sum) gives ``world*(world+1)/2 + world*(i % 7)``; all-gather gives rank
    r's shard at offset r; reduce-scatter gives the sum of shard ``rank``; broadcast gives root 0's data.
    """
    f32 = t.float32
    per = size // 4
    if name in ("all_gather", "reduce_scatter"):
        per = max(world, per - per % world)
    shard = per // world if name in ("all_gather", "reduce_scatter") else per
    i7 = (t.arange(per, device=dev) % 7).to(f32)
    nbytes = per * 4
    if name == "all_reduce":
        src = i7 + (rank + 1)
        want = i7 * world + world * (world + 1) / 2
        out = t.empty_like(src)

        def step():
            out.copy_(src)
            dist.all_reduce(out)
            return out

        def bare():
            dist.all_reduce(out)
    elif name == "all_gather":
        src = i7[:shard] + (rank + 1)
        want = t.cat([i7[:shard] + (r + 1) for r in range(world)])
        out = t.empty(shard * world, device=dev, dtype=f32)

        def step():
            dist.all_gather_into_tensor(out, src)
            return out

        bare = step
    elif name == "reduce_scatter":
        src = i7 + (rank + 1)
        want = i7[rank * shard:(rank + 1) * shard] * world + world * (world + 1) / 2
        out = t.empty(shard, device=dev, dtype=f32)

        def step():
            dist.reduce_scatter_tensor(out, src)
            return out

        bare = step
    else:  # broadcast from rank 0
        src = i7 + 1 if rank == 0 else t.full_like(i7, -1.0)
        want = i7 + 1
        out = t.empty_like(src)

        def step():
            out.copy_(src)
            dist.broadcast(out, 0)
            return out

        def bare():
            dist.broadcast(out, 0)
    label = f"{name} of {nbytes} B"
    bad = t.zeros(iters, dtype=t.int64, device=dev)
    with wd.guard(label):
        if hang:  # injected: this rank never joins the collective
            while True:
                time.sleep(0.5)
        for k in range(iters):
            got = step()
            if wrong:
                got[per // 3 if name != "all_gather" else 0] += 1.0  # injected: a wrong element on this rank
            bad[k] = (got != want).sum()
        ctx.sync()
    bad_cpu = bad.cpu()
    wrong_iters = int((bad_cpu > 0).sum())
    detail = ""
    if wrong_iters:
        first_iter = int((bad_cpu > 0).nonzero()[0])
        detail = (f"rank {rank}: {wrong_iters} of {iters} iterations wrong (first: iteration {first_iter}, "
                  f"{int(bad_cpu.max())} wrong elements at most)")
        got, ref = out.cpu(), want.cpu()
        where = (got != ref).nonzero()
        if len(where):
            idx = int(where[0])
            detail += f"; last output, element {idx}: {float(got[idx]):g}, expected {float(ref[idx]):g}"
    ctx.expect(f"{name}-{nbytes}", wrong_iters == 0, detail,
               rank=rank, collective=name, bytes=nbytes)
    with wd.guard(label + " (timed)"):
        out.zero_()  # sums of zeros stay zeros: no overflow over the timed iterations
        for _ in range(warmup):
            bare()
        ctx.sync()
        dist.barrier()
        if ctx.gpu:
            a, b = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(iters):
                bare()
            b.record()
            b.synchronize()
            sec = a.elapsed_time(b) / 1e3 / iters
        else:
            t0 = time.perf_counter()
            for _ in range(iters):
                bare()
            sec = (time.perf_counter() - t0) / iters
    algbw = nbytes / sec / 1e9 if sec > 0 else float("nan")
    busbw = algbw * BUS_FACTOR[name](world)
    return [name, nbytes, per, iters,
            _sig(sec * 1e6), _sig(algbw), _sig(busbw), wrong_iters]


def _sig(x: float) -> float:
    return float(f"{x:.5g}")
