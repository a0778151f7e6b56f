"""Microbenchmarks (``gpuvet bench`` and the full level): the framework's own timing, warm-up, medians."""
from __future__ import annotations

import time


def case_alloc(ctx):
    """Allocation latency per size, and fragmentation after a fragmenting pattern."""
    t = ctx.torch
    sizes = [1 << 10, 1 << 20, 1 << 26] if not ctx.small else [1 << 10, 1 << 20]
    for s in sizes:
        def alloc(s=s):
            x = t.empty(s, dtype=t.uint8, device=ctx.device)
            del x
        reps = 200
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps):
                alloc()
            samples.append((time.perf_counter() - t0) / reps * 1e6)
        samples.sort()
        ctx.metric(f"alloc-latency-{s >> 10}KiB", samples[len(samples) // 2], "us", "lower", samples=samples)
    if not ctx.gpu:
        ctx.note("fragmentation is measured on a GPU's caching allocator only")
        return
    t.cuda.synchronize()
    t.cuda.empty_cache()
    # fragmenting pattern: many blocks of mixed sizes, free every other one, then ask for a large block
    blocks = [t.empty(((i % 7) + 1) << 20, dtype=t.uint8, device="cuda") for i in range(512)]
    for i in range(0, len(blocks), 2):
        blocks[i] = None
    t.cuda.synchronize()
    alloc, reserved = t.cuda.memory_allocated(), t.cuda.memory_reserved()
    largest = 0
    try:
        for seg in t.cuda.memory_snapshot():
            for blk in seg.get("blocks", []):
                if blk.get("state") == "inactive":
                    largest = max(largest, blk.get("size", 0))
    except Exception as exc:  # snapshot needs the native allocator
        ctx.note(f"memory_snapshot unavailable: {exc}")
    frag = 1 - alloc / reserved if reserved else 0.0
    ctx.metric("alloc-fragmentation", frag * 100, "%", "lower", allocated=alloc, reserved=reserved)
    ctx.metric("alloc-largest-free-block", largest / 2**20, "MiB", "higher")
    del blocks
    t.cuda.empty_cache()


def case_launch(ctx):
    """First launch, small-kernel throughput, synchronisation latency."""
    t = ctx.torch
    info = ctx.env.info
    if "first_kernel_ms" in info:
        ctx.metric("launch-first-kernel", info["first_kernel_ms"] * 1e3, "us", "lower")
    x = t.ones(32, device=ctx.device)
    n = 200 if ctx.small else 2000
    def burst():
        for _ in range(n):
            x.add_(1.0)
    s = ctx.time(burst, warmup=1, reps=5)
    ctx.metric("launch-small-kernel", s["median"] * 1e3 / n, "us", "lower", samples=[v * 1e3 / n for v in s["samples"]])
    samples = []
    for _ in range(50 if ctx.small else 500):
        t0 = time.perf_counter()
        ctx.sync()
        samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    ctx.metric("launch-sync", samples[len(samples) // 2], "us", "lower", samples=samples[:: max(1, len(samples) // 50)])
    if ctx.gpu and hasattr(t.cuda, "CUDAGraph"):
        g = t.cuda.CUDAGraph()
        y = t.ones(32, device="cuda")
        s_ = t.cuda.Stream()
        s_.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(s_):
            for _ in range(3):
                y.add_(1.0)
        t.cuda.current_stream().wait_stream(s_)
        with t.cuda.graph(g):
            for _ in range(100):
                y.add_(1.0)
        s = ctx.time(g.replay, warmup=2, reps=10)
        ctx.metric("launch-graph-kernel", s["median"] * 1e3 / 100, "us", "lower")


def case_coldstart(ctx):
    """Import, initialisation and first iteration of a fresh process (the runner gives this case its own)."""
    info = ctx.env.info
    t = ctx.torch
    ctx.metric("cold-import", info.get("import_s", 0) * 1e3, "ms", "lower")
    if "init_s" in info:
        ctx.metric("cold-init", info["init_s"] * 1e3, "ms", "lower")
        ctx.metric("cold-init-peak-memory", info.get("init_peak_bytes", 0) / 2**20, "MiB", "lower")
    t0 = time.perf_counter()
    a = t.randn(512, 512, device=ctx.device)
    (a @ a).sum().item()
    ctx.metric("cold-first-iteration", (time.perf_counter() - t0) * 1e3, "ms", "lower")
    from worker import T0
    ctx.metric("cold-total", (time.perf_counter() - T0) * 1e3, "ms", "lower")


def case_matmul_tflops(ctx):
    t = ctx.torch
    n = int(ctx.params.get("n") or (256 if ctx.small else 8192))
    labels = ["fp32", "tf32", "fp16", "bf16"] if ctx.gpu else ["fp32", "bf16"]
    for label in labels:
        a = t.randn(n, n, device=ctx.device).to(ctx.dtype(label))
        b = t.randn(n, n, device=ctx.device).to(ctx.dtype(label))
        with ctx.precision(label):
            s = ctx.time(lambda: a @ b, warmup=3, reps=10 if not ctx.small else 3)
        flops = 2 * n ** 3
        ctx.metric(f"matmul-tflops-{label}", flops / (s["median"] * 1e-3) / 1e12, "TFLOP/s", "higher",
                   samples=[flops / (v * 1e-3) / 1e12 for v in s["samples"]], n=n)
        del a, b
    from cases_train import fp8_supported
    if fp8_supported(ctx):
        a = t.randn(n, n, device="cuda").to(t.float8_e4m3fn)
        b = t.randn(n, n, device="cuda").to(t.float8_e4m3fn).t()
        one = t.tensor(1.0, device="cuda")
        s = ctx.time(lambda: t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16), warmup=3, reps=10)
        ctx.metric("matmul-tflops-fp8", 2 * n ** 3 / (s["median"] * 1e-3) / 1e12, "TFLOP/s", "higher", n=n)


def case_bandwidth(ctx):
    """Device-to-device copy: bytes read plus bytes written over the median time."""
    t = ctx.torch
    nbytes = int(ctx.params.get("bytes") or ((64 << 20) if ctx.small else (2 << 30)))
    src = t.empty(nbytes // 4, dtype=t.float32, device=ctx.device).uniform_()
    dst = t.empty_like(src)
    s = ctx.time(lambda: dst.copy_(src), warmup=3, reps=10 if not ctx.small else 5)
    moved = 2 * nbytes
    ctx.metric("bandwidth-copy", moved / (s["median"] * 1e-3) / 1e12, "TB/s", "higher",
               samples=[moved / (v * 1e-3) / 1e12 for v in s["samples"]], bytes=nbytes)
    ctx.expect("bandwidth-copy-correct", bool(t.equal(dst[:1024], src[:1024])), "copied values match")
