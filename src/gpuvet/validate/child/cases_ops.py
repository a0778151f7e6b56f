"""Operator cases: each runs on the device and is compared with a float64 CPU reference.

Sizes shrink with ``ctx.small`` (the CPU run in CI executes the same code on small tensors).
"""
from __future__ import annotations

import math

LOW = ("fp32", "tf32", "fp16", "bf16")


def _labels(ctx, default=LOW):
    want = ctx.params.get("dtypes")
    labels = [d for d in default if not want or d in want]
    if not ctx.gpu:
        labels = [d for d in labels if d != "tf32"]  # tf32 is a GPU matrix-unit mode
    return labels


def _unsupported(exc: Exception) -> bool:
    text = str(exc)
    return any(s in text for s in ("not implemented for", "No available kernel", "No viable backend", "not supported",
                                   "Unsupported", "unsupported", "NotImplementedError"))


def _try(ctx, name, label, fn, **info):
    """Run one sub-test; an operator the build does not offer for this dtype is a note, not a failure."""
    try:
        return fn()
    except (RuntimeError, NotImplementedError, TypeError, ValueError) as exc:
        if _unsupported(exc) or isinstance(exc, NotImplementedError):
            ctx.checks.append({"name": name, "dtype": label, "ok": True, "skipped": True,
                               "detail": f"not offered: {str(exc).splitlines()[0][:200]}", **info})
            return None
        raise


# ---------------------------------------------------------------------------------------------- quick
def case_device(ctx):
    t = ctx.torch
    info = dict(ctx.env.info)
    ctx.info.update(info)
    if ctx.env.want_device == "cuda" and not t.cuda.is_available():
        ctx.expect("gpu-visible", False, "torch.cuda.is_available() is False: the framework sees no GPU")
        return
    host = ctx.rand(1024, seed=1)
    dev = host.to(ctx.device)
    back = (dev * 2).to("cpu")
    ctx.expect("round-trip", bool(t.equal(back, host * 2)), "host -> device -> host copy of 1024 float64 values")
    if ctx.gpu:
        ctx.expect("gpu-visible", t.cuda.device_count() >= 1, f"{t.cuda.device_count()} device(s)")
        free, total = t.cuda.mem_get_info()
        ctx.info.update(free_bytes=free, total_bytes=total)
        ctx.expect("memory-reported", total > 0 and 0 < free <= total, f"free {free} of {total} bytes")


def case_kernels(ctx):
    """A tiny elementwise kernel and a reduction per dtype, checked exactly."""
    t = ctx.torch
    n = 4096
    for label, dt in (("fp64", t.float64), ("fp32", t.float32), ("fp16", t.float16), ("bf16", t.bfloat16),
                      ("int64", t.int64), ("int32", t.int32), ("int8", t.int8), ("uint8", t.uint8),
                      ("bool", t.bool)):
        x = t.arange(n, device=ctx.device) % 7
        x = x.to(dt) if dt is not t.bool else (x > 3)
        if dt is t.bool:
            got = int((x & x).sum().item())
            want = int(((t.arange(n) % 7) > 3).sum())
        else:
            got = float((x + 1).to(t.float64).sum().item())
            want = float(((t.arange(n) % 7) + 1).sum())
        ctx.expect(f"add-sum-{label}", got == want, f"got {got}, want {want}", dtype=label)
    for label in ("float8_e4m3fn", "float8_e5m2"):
        dt = getattr(t, label, None)
        if dt is None:
            continue
        x = t.tensor([0.5, 1.0, -2.0, 4.0], device=ctx.device)
        def roundtrip(x=x, dt=dt):
            return x.to(dt).to(t.float32).cpu()
        got = _try(ctx, f"cast-{label}", "fp8", roundtrip)
        if got is not None:
            ctx.expect(f"cast-{label}", bool(t.equal(got, x.cpu())), f"{got.tolist()}", dtype="fp8")


def case_handles(ctx):
    """The BLAS and DNN libraries load and answer (cuBLAS/hipBLAS(Lt), cuDNN/MIOpen)."""
    t = ctx.torch
    a = ctx.rand(64, 64, seed=2)
    got = (a.to(ctx.device, t.float32) @ a.to(ctx.device, t.float32)).cpu()
    ctx.compare("blas-handle-matmul", got, a @ a, "fp32")
    ctx.info["blas"] = "hipBLAS" if ctx.env.info.get("hip") else ("cuBLAS" if ctx.gpu else "cpu")
    if ctx.gpu:
        ctx.info["dnn_available"] = bool(t.backends.cudnn.is_available())
        ctx.info["dnn_version"] = t.backends.cudnn.version()
        ctx.info["dnn"] = "MIOpen" if ctx.env.info.get("hip") else "cuDNN"
        ctx.expect("dnn-available", t.backends.cudnn.is_available(), f"{ctx.info['dnn']} version {ctx.info['dnn_version']}")
    else:
        ctx.info["mkldnn"] = bool(t.backends.mkldnn.is_available())
    x, w = ctx.rand(2, 3, 16, 16, seed=3), ctx.rand(4, 3, 3, 3, seed=4)
    with ctx.precision("fp32"):
        got = t.nn.functional.conv2d(x.to(ctx.device, t.float32), w.to(ctx.device, t.float32), padding=1)
    ctx.compare("dnn-handle-conv2d", got, t.nn.functional.conv2d(x, w, padding=1), "fp32")


def case_matmul_ref(ctx):
    """The post-rollback test: matmul on the device against float64 on the CPU."""
    t = ctx.torch
    n = 128 if ctx.small else 1024
    a, b = ctx.rand(n, n, seed=5), ctx.rand(n, n, seed=6)
    ref = a @ b
    for label in _labels(ctx, ("fp32", "tf32", "fp16", "bf16")):
        def run(label=label):
            with ctx.precision(label):
                return a.to(ctx.device, ctx.dtype(label)) @ b.to(ctx.device, ctx.dtype(label))
        got = _try(ctx, f"matmul-{n}", label, run)
        if got is not None:
            ctx.compare(f"matmul-{n}", got, ref, label)


def case_conv2d_ref(ctx):
    t = ctx.torch
    F = t.nn.functional
    x = ctx.rand(4, 16, 32 if ctx.small else 64, 32 if ctx.small else 64, seed=7)
    w = ctx.rand(32, 16, 3, 3, seed=8, scale=0.2)
    ref = F.conv2d(x, w, padding=1)
    for label in _labels(ctx):
        def run(label=label):
            with ctx.precision(label):
                return F.conv2d(x.to(ctx.device, ctx.dtype(label)), w.to(ctx.device, ctx.dtype(label)), padding=1)
        got = _try(ctx, "conv2d-3x3", label, run)
        if got is not None:
            ctx.compare("conv2d-3x3", got, ref, label)


def case_alloc_roundtrip(ctx):
    """Allocate, touch and free; the allocator gives the memory back."""
    t = ctx.torch
    if not ctx.gpu:
        xs = [t.empty(1 << 16).fill_(1.0) for _ in range(64)]
        ctx.expect("alloc-touch", all(float(x[0]) == 1.0 for x in xs))
        del xs
        ctx.note("CPU: the caching allocator is a GPU feature; only allocation was exercised")
        return
    t.cuda.synchronize()
    t.cuda.empty_cache()
    base = t.cuda.memory_allocated()
    sizes = [1 << k for k in range(10, 29, 2)]  # 1 KiB .. 256 MiB
    xs = [t.empty(s, dtype=t.uint8, device="cuda").fill_(7) for s in sizes]
    t.cuda.synchronize()
    held = t.cuda.memory_allocated() - base
    ok_vals = all(int(x[-1].item()) == 7 for x in xs)
    del xs
    t.cuda.synchronize()
    after = t.cuda.memory_allocated()
    t.cuda.empty_cache()
    reserved = t.cuda.memory_reserved()
    ctx.expect("alloc-values", ok_vals, "every block holds what was written")
    ctx.expect("alloc-accounted", held >= sum(sizes), f"allocated grew by {held} bytes for {sum(sizes)} requested")
    ctx.expect("alloc-returned", after == base, f"allocated {after} bytes after free (started at {base})")
    ctx.info.update(reserved_after_empty_cache=reserved, requested=sum(sizes))


# ---------------------------------------------------------------------------------------------- standard
def _sdpa_ref(t, q, k, v, mask=None, causal=False):
    """float64 attention on the CPU: softmax(q k^T / sqrt(d) + mask) v."""
    d = q.shape[-1]
    s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
    L, S = s.shape[-2], s.shape[-1]
    if causal:
        keep = t.ones(L, S, dtype=t.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == t.bool else s + mask
    return t.softmax(s, dim=-1) @ v


def case_sdpa(ctx):
    """scaled_dot_product_attention through each backend the build offers, with masks and odd lengths."""
    t = ctx.torch
    F = t.nn.functional
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as exc:
        raise ctx.Unsupported(f"torch.nn.attention is missing ({exc})")
    backends = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        backends["cudnn"] = SDPBackend.CUDNN_ATTENTION
    B, H, D = (2, 2, 32) if ctx.small else (4, 8, 64)
    lengths = (17, 64) if ctx.small else (17, 128, 513)
    offered: dict[str, list] = {k: [] for k in backends}
    for L in lengths:
        q, k, v = (ctx.rand(B, H, L, D, seed=10 + i + L) for i in range(3))
        # variable sequence lengths in one batch: item i attends to its first valid[i] keys
        valid = t.tensor([L - (i * L) // (B + 1) for i in range(B)])
        pad = (t.arange(L)[None, :] < valid[:, None])[:, None, None, :].expand(B, 1, L, L)
        masks = {"none": (None, False), "causal": (None, True), "padding": (pad, False)}
        for mname, (mask, causal) in masks.items():
            ref = _sdpa_ref(t, q, k, v, mask, causal)
            for label in _labels(ctx, ("fp32", "fp16", "bf16")):
                dt = ctx.dtype(label)
                for bname, backend in backends.items():
                    def run(backend=backend, dt=dt, mask=mask, causal=causal):
                        with sdpa_kernel([backend]):
                            m = None if mask is None else mask.to(ctx.device)
                            return F.scaled_dot_product_attention(q.to(ctx.device, dt), k.to(ctx.device, dt),
                                                                  v.to(ctx.device, dt), attn_mask=m, is_causal=causal)
                    name = f"sdpa-{bname}-{mname}-L{L}"
                    got = _try(ctx, name, label, run, backend=bname)
                    if got is not None:
                        offered[bname].append(f"{label}/{mname}")
                        ctx.compare(name, got, ref, label, backend=bname)
    ctx.info["backends_offered"] = {k: len(v) for k, v in offered.items()}
    if not any(offered.values()):
        ctx.expect("sdpa-any-backend", False, "no attention backend ran at all")


def case_conv(ctx):
    """conv2d and conv3d, contiguous and channels_last, per dtype."""
    t = ctx.torch
    F = t.nn.functional
    s = 12 if ctx.small else 32
    shapes = {"conv2d": ((4, 8, s, s), (16, 8, 3, 3), t.channels_last),
              "conv3d": ((2, 4, s // 2, s // 2, s // 2), (8, 4, 3, 3, 3), t.channels_last_3d)}
    for op, (xs, ws, cl) in shapes.items():
        x, w = ctx.rand(*xs, seed=20), ctx.rand(*ws, seed=21, scale=0.2)
        fn = getattr(F, op)
        ref = fn(x, w, padding=1, stride=1)
        for layout in ("contiguous", "channels_last"):
            for label in _labels(ctx):
                def run(label=label, layout=layout):
                    xd = x.to(ctx.device, ctx.dtype(label))
                    wd = w.to(ctx.device, ctx.dtype(label))
                    if layout == "channels_last":
                        xd, wd = xd.to(memory_format=cl), wd.to(memory_format=cl)
                    with ctx.precision(label):
                        out = fn(xd, wd, padding=1, stride=1)
                    return out
                got = _try(ctx, f"{op}-{layout}", label, run, layout=layout)
                if got is not None:
                    ctx.compare(f"{op}-{layout}", got, ref, label, layout=layout)


def case_layer_norm(ctx):
    t = ctx.torch
    F = t.nn.functional
    n, h = (64, 96) if ctx.small else (512, 1024)
    x = ctx.rand(n, h, seed=30) * 3 + 1
    w, b = ctx.rand(h, seed=31), ctx.rand(h, seed=32)
    ref = F.layer_norm(x, (h,), w, b, eps=1e-5)
    for label in _labels(ctx, ("fp32", "fp16", "bf16")):
        dt = ctx.dtype(label)
        got = _try(ctx, "layer_norm", label, lambda dt=dt: F.layer_norm(
            x.to(ctx.device, dt), (h,), w.to(ctx.device, dt), b.to(ctx.device, dt), eps=1e-5))
        if got is not None:
            ctx.compare("layer_norm", got, ref, label)


def case_interpolate(ctx):
    t = ctx.torch
    F = t.nn.functional
    s = 9 if ctx.small else 33
    inputs = {1: ctx.rand(2, 3, s, seed=40), 2: ctx.rand(2, 3, s, s, seed=41), 3: ctx.rand(1, 2, s // 2 + 1, s // 2 + 1, s // 2 + 1, seed=42)}
    modes = [("nearest", (1, 2, 3), None), ("nearest-exact", (1, 2, 3), None), ("linear", (1,), False),
             ("linear", (1,), True), ("bilinear", (2,), False), ("bilinear", (2,), True), ("bicubic", (2,), False),
             ("bicubic", (2,), True), ("trilinear", (3,), False), ("trilinear", (3,), True), ("area", (1, 2, 3), None)]
    for mode, dims, align in modes:
        for nd in dims:
            x = inputs[nd]
            kw = {"scale_factor": 1.7, "mode": mode}
            if align is not None:
                kw["align_corners"] = align
            if mode == "area":
                kw = {"size": tuple(max(1, (d * 2) // 3) for d in x.shape[2:]), "mode": "area"}
            ref = F.interpolate(x, **kw)
            name = f"interpolate-{mode}-{nd}d" + ("" if align is None else f"-align{int(align)}")
            for label in _labels(ctx, ("fp32", "fp16", "bf16")):
                dt = ctx.dtype(label)
                got = _try(ctx, name, label, lambda dt=dt, x=x, kw=kw: F.interpolate(x.to(ctx.device, dt), **kw))
                if got is not None:
                    ctx.compare(name, got, ref, label, mode=mode)


def case_scatter_reduce(ctx):
    t = ctx.torch
    n, m = (200, 16) if ctx.small else (20000, 2000)  # about ten values per bin: low-precision products stay in range
    g = t.Generator().manual_seed(50)
    src = ctx.rand(n, seed=51).abs() + 0.5
    index = t.randint(0, m, (n,), generator=g)
    base = ctx.rand(m, seed=52).abs() + 0.5
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            s = src if reduce != "prod" else 1 + 0.01 * src  # keep products in range
            ref = base.clone().scatter_reduce(0, index, s, reduce=reduce, include_self=include_self)
            for label in _labels(ctx, ("fp32", "fp16", "bf16")):
                dt = ctx.dtype(label)
                name = f"scatter_reduce-{reduce}-self{int(include_self)}"
                got = _try(ctx, name, label, lambda dt=dt, s=s: base.to(ctx.device, dt).scatter_reduce(
                    0, index.to(ctx.device), s.to(ctx.device, dt), reduce=reduce, include_self=include_self))
                if got is not None:
                    ctx.compare(name, got, ref, label, reduce=reduce)


def case_matmul(ctx):
    """matmul at awkward shapes (odd, skinny, batched) per dtype; median time recorded per dtype."""
    t = ctx.torch
    shapes = [(33, 65, 17), (1, 257, 129), (4, 63, 31, 95)] if ctx.small else \
        [(1023, 2049, 513), (1, 4096, 4096), (8, 255, 129, 511), (4096, 4096, 4096)]
    for shape in shapes:
        if len(shape) == 3:
            a, b = ctx.rand(shape[0], shape[1], seed=60), ctx.rand(shape[1], shape[2], seed=61)
        else:
            a, b = ctx.rand(shape[0], shape[1], shape[2], seed=60), ctx.rand(shape[0], shape[2], shape[3], seed=61)
        ref = a @ b
        for label in _labels(ctx):
            dt = ctx.dtype(label)
            name = "matmul-" + "x".join(map(str, shape))
            def run(dt=dt, label=label):
                with ctx.precision(label):
                    return a.to(ctx.device, dt) @ b.to(ctx.device, dt)
            got = _try(ctx, name, label, run)
            if got is not None:
                ctx.compare(name, got, ref, label)
                if shape is shapes[-1]:
                    ad, bd = a.to(ctx.device, dt), b.to(ctx.device, dt)
                    with ctx.precision(label):
                        ctx.timed(f"time-{name}-{label}", lambda: ad @ bd, warmup=2, reps=5 if ctx.small else 10)
