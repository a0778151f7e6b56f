"""One training step walked through its five stages, the leak loop and the stability matrix."""
from __future__ import annotations

import math
import time
import warnings


def _model(t, d, classes, dtype=None):
    nn = t.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(d, d)
            self.norm1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.norm2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
            self.head = nn.Linear(d, classes)

        def forward(self, x, mask):
            h = self.embed(x)
            q, k, v = self.qkv(self.norm1(h)).chunk(3, dim=-1)
            a = t.nn.functional.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], attn_mask=mask[:, None])
            h = h + self.proj(a[:, 0])
            h = h + self.mlp(self.norm2(h))
            keep = mask[:, 0, :].unsqueeze(-1).to(h.dtype)
            return self.head((h * keep).sum(1) / keep.sum(1))

    m = Block()
    return m.to(dtype) if dtype is not None else m


class _Mem:
    """Memory curve sampler: (seconds since stage start, bytes) points."""

    def __init__(self, ctx, stage):
        self.ctx, self.stage, self.t0, self.points = ctx, stage, time.perf_counter(), []

    def __call__(self, label=""):
        self.ctx.sync()
        m = self.ctx.mem()
        self.points.append([round(time.perf_counter() - self.t0, 6), m["allocated"], label])


def _syncs(ctx):
    """Count device synchronisations inside a block (CUDA/HIP sync-debug warnings); None on the CPU."""
    class Counter:
        count = None

        def __enter__(self):
            if not ctx.gpu:
                return self
            self._w = warnings.catch_warnings(record=True)
            self.rec = self._w.__enter__()
            warnings.simplefilter("always")
            ctx.torch.cuda.set_sync_debug_mode("warn")
            return self

        def __exit__(self, *exc):
            if ctx.gpu:
                ctx.torch.cuda.set_sync_debug_mode("default")
                self._w.__exit__(*exc)
                self.count = sum(1 for w in self.rec if "synchroniz" in str(w.message).lower())
            return False
    return Counter()


def case_train_step(ctx):
    t = ctx.torch
    nn = t.nn
    d, classes, seq = (32, 10, 16) if ctx.small else (256, 100, 128)
    n_samples, batch = (256, 32) if ctx.small else (8192, 64)
    amp = ctx.params.get("amp") or ("bf16" if ctx.gpu else None)
    stages = {}

    # ------------------------------------------------------------------ 1. data loading
    g = t.Generator().manual_seed(70)
    X = t.randn(n_samples, seq, d, generator=g)
    Y = t.randint(0, classes, (n_samples,), generator=g)
    lens = t.randint(seq // 2, seq + 1, (n_samples,), generator=g)
    ds = t.utils.data.TensorDataset(X, Y, lens)
    curve = _Mem(ctx, "data")
    curve("start")
    timings = {}
    for shuffle in (False, True):
        loader = t.utils.data.DataLoader(ds, batch_size=batch, shuffle=shuffle, num_workers=0,
                                         pin_memory=ctx.gpu, generator=t.Generator().manual_seed(71))
        t0 = time.perf_counter()
        nb = 0
        with _syncs(ctx) as sc:
            for xb, yb, lb in loader:
                xb = xb.to(ctx.device, non_blocking=True)
                nb += 1
        ctx.sync()
        timings[shuffle] = time.perf_counter() - t0
        if shuffle:
            stages["data"] = {"seconds": timings[True], "syncs": sc.count}
    curve("end")
    ctx.metric("data-throughput", n_samples / timings[True], "samples/s", "higher")
    ctx.metric("data-shuffle-cost", (timings[True] - timings[False]) / max(timings[False], 1e-9) * 100, "%", "lower")
    ctx.expect("data-all-batches", nb == math.ceil(n_samples / batch), f"{nb} batches")
    if sc.count is not None:
        ctx.expect("data-no-hidden-syncs", sc.count == 0, f"{sc.count} device synchronisation(s) while loading")
    ctx.curve("data", curve.points)

    # ------------------------------------------------------------------ 2. forward
    t.manual_seed(72)
    model64 = _model(t, d, classes, t.float64)
    model = _model(t, d, classes).to(ctx.device)
    model.load_state_dict({k: v.float() for k, v in model64.state_dict().items()})
    xb, yb, lb = X[:batch], Y[:batch], lens[:batch]
    mask = (t.arange(seq)[None, :] < lb[:, None])[:, None, :].expand(batch, seq, seq)
    xd, yd, md = xb.to(ctx.device), yb.to(ctx.device), mask.to(ctx.device)
    layer_t, out_dtypes = {}, {}
    curve = _Mem(ctx, "forward")
    hooks = []
    for name, mod in model.named_children():
        def pre(m, a, name=name):
            ctx.sync()
            layer_t[name] = time.perf_counter()

        def post(m, a, out, name=name):
            ctx.sync()
            layer_t[name] = (time.perf_counter() - layer_t[name]) * 1e3
            out_dtypes[name] = str(out.dtype).replace("torch.", "")
            curve(name)
        hooks += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    ctx.reset_peak()
    curve("start")
    amp_dtype = ctx.dtype(amp) if amp else None
    t0 = time.perf_counter()
    with _syncs(ctx) as sc:
        with t.autocast(device_type="cuda" if ctx.gpu else "cpu", dtype=amp_dtype or t.float32, enabled=bool(amp)):
            logits = model(xd, md)
    ctx.sync()
    stages["forward"] = {"seconds": time.perf_counter() - t0, "syncs": sc.count}
    for h in hooks:
        h.remove()
    curve("end")
    ctx.curve("forward", curve.points)
    for name, ms in layer_t.items():
        ctx.metric(f"forward-{name}", ms, "ms", "lower")
    ctx.info["forward_dtypes"] = out_dtypes
    if amp:
        want = str(amp_dtype).replace("torch.", "")
        ctx.expect("autocast-linear-dtype", out_dtypes.get("embed") == want and out_dtypes.get("head") == want,
                   f"Linear outputs {out_dtypes.get('embed')}/{out_dtypes.get('head')} under autocast {want}")
        ctx.expect("autocast-layernorm-fp32", out_dtypes.get("norm1") == "float32",
                   f"LayerNorm output {out_dtypes.get('norm1')} (autocast runs it in float32)")
    # the attention mask is honoured: changing padded positions leaves the outputs alone
    xd2 = xd.clone()
    padded = ~mask[:, 0, :]
    xd2[padded.to(ctx.device)] = 1e3
    with t.no_grad():
        same = model(xd2, md).float()
        plain = model(xd, md).float()
    ctx.compare("forward-mask-honoured", same, plain, "fp32", tol=1e-4)

    # ------------------------------------------------------------------ 3. loss
    curve = _Mem(ctx, "loss")
    curve("start")
    t0 = time.perf_counter()
    loss = nn.functional.cross_entropy(logits.float(), yd)
    scaler_scale = None
    if amp == "fp16":
        scaler = t.amp.GradScaler("cuda" if ctx.gpu else "cpu")
        scaled = scaler.scale(loss)
        scaler_scale = float(scaler.get_scale())
        ctx.compare("loss-scaled", scaled.detach().reshape(1), (loss.detach() * scaler_scale).reshape(1), "fp32")
    lv = float(loss.item())
    stages["loss"] = {"seconds": time.perf_counter() - t0, "syncs": None}
    curve("end")
    ctx.curve("loss", curve.points)
    ctx.expect("loss-finite", math.isfinite(lv), f"loss {lv}")
    lo, hi = 0.3 * math.log(classes), 3 * math.log(classes)
    ctx.expect("loss-in-range", lo <= lv <= hi, f"loss {lv:.4f}, expected near ln({classes}) = {math.log(classes):.3f} at init")
    ctx.info["loss"] = lv

    # ------------------------------------------------------------------ 4. backward (fp32, vs float64)
    curve = _Mem(ctx, "backward")
    model.zero_grad(set_to_none=True)
    ctx.reset_peak()
    curve("start")
    with ctx.precision("fp32"):
        out32 = model(xd, md)
        loss32 = nn.functional.cross_entropy(out32, yd)
        curve("forward")
        t0 = time.perf_counter()
        with _syncs(ctx) as sc:
            loss32.backward()
        ctx.sync()
    stages["backward"] = {"seconds": time.perf_counter() - t0, "syncs": sc.count}
    curve("end")
    ctx.curve("backward", curve.points)
    peak = ctx.mem()["peak"]
    ctx.metric("backward-peak-memory", peak, "bytes", "lower")
    loss64 = nn.functional.cross_entropy(model64(xb.double(), mask), yb)
    loss64.backward()
    p64 = dict(model64.named_parameters())
    worst = 0.0
    for name, p in model.named_parameters():
        ok = ctx.compare(f"grad-{name}", p.grad, p64[name].grad, "fp32", tol=1e-3)
        worst = max(worst, ctx.checks[-1]["err"] or 0.0)
        if not ok:
            break
    ctx.info["worst_grad_rel_err"] = worst

    # ------------------------------------------------------------------ 5. optimizer step
    curve = _Mem(ctx, "optimizer")
    curve("start")
    lr = 0.05
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    opt = t.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    t0 = time.perf_counter()
    opt.step()
    ctx.sync()
    stages["optimizer"] = {"seconds": time.perf_counter() - t0, "syncs": None}
    curve("step")
    moved = all(t.allclose(before[n] - p.detach(), lr * grads[n], rtol=1e-4, atol=1e-7)
                for n, p in model.named_parameters())
    ctx.expect("optimizer-moved-by-lr-times-grad", moved, "SGD step: w_new = w - lr * grad for every parameter")
    ctx.expect("optimizer-state", len(opt.state) == len(before) and all("momentum_buffer" in s for s in opt.state.values()),
               f"{len(opt.state)} momentum buffers for {len(before)} parameters")
    opt.zero_grad(set_to_none=True)
    ctx.expect("optimizer-grads-zeroed", all(p.grad is None for p in model.parameters()))
    curve("end")
    ctx.curve("optimizer", curve.points)
    for k, v in stages.items():
        ctx.metric(f"stage-{k}", v["seconds"] * 1e3, "ms", "lower", syncs=v["syncs"])
    ctx.info["stages"] = list(stages)
    ctx.info["amp"] = amp


def _train_once(ctx, batch, label, d, classes, seq):
    t = ctx.torch
    model = _model(t, d, classes).to(ctx.device)
    opt = t.optim.AdamW(model.parameters(), lr=1e-3)
    x = t.randn(batch, seq, d, device=ctx.device)
    y = t.randint(0, classes, (batch,), device=ctx.device)
    mask = t.ones(batch, seq, seq, dtype=t.bool, device=ctx.device)
    if label == "fp8":
        return _fp8_step(ctx, batch, d)
    dt = ctx.dtype(label)
    with t.autocast(device_type="cuda" if ctx.gpu else "cpu", dtype=dt, enabled=label in ("fp16", "bf16")):
        loss = t.nn.functional.cross_entropy(model(x, mask).float(), y)
    loss.backward()
    opt.step()
    ok = math.isfinite(float(loss)) and all(t.isfinite(p).all() for p in model.parameters())
    return bool(ok)


def _fp8_step(ctx, batch, d):
    t = ctx.torch
    a = t.randn(batch * 16, d * 4, device=ctx.device).to(t.float8_e4m3fn)
    b = t.randn(d * 4, d * 4, device=ctx.device).to(t.float8_e4m3fn).t()
    one = t.tensor(1.0, device=ctx.device)
    out = t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16)
    return bool(t.isfinite(out).all())


def fp8_supported(ctx) -> bool:
    t = ctx.torch
    if not ctx.gpu or not hasattr(t, "float8_e4m3fn") or not hasattr(t, "_scaled_mm"):
        return False
    p = t.cuda.get_device_properties(0)
    if ctx.env.info.get("hip"):
        return any(a in (p.gcnArchName or "") for a in ("gfx94", "gfx95", "gfx12"))
    return (p.major, p.minor) >= (8, 9)


def case_stability(ctx):
    """Success rate per (batch size x dtype) cell over repeated training steps."""
    t = ctx.torch
    batches = ctx.params.get("batches") or ([4, 8] if ctx.small else [32, 64, 128, 256])
    reps = int(ctx.params.get("repeats") or (2 if ctx.small else 5))
    labels = ["fp32", "fp16", "bf16"] + (["fp8"] if fp8_supported(ctx) else [])
    d, classes, seq = (16, 5, 8) if ctx.small else (256, 100, 128)
    cells = {}
    for label in labels:
        for b in batches:
            ok = 0
            errors = []
            for _ in range(reps):
                try:
                    ok += _train_once(ctx, b, label, d, classes, seq)
                except Exception as exc:  # a failing cell is data, not the end of the matrix
                    errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
                    if ctx.gpu:
                        t.cuda.empty_cache()
            cells[f"{label}/{b}"] = {"dtype": label, "batch": b, "ok": ok, "runs": reps,
                                     "rate": ok / reps, "errors": errors[:2]}
            ctx.expect(f"stability-{label}-b{b}", ok == reps, f"{ok}/{reps} steps succeeded" +
                       (f": {errors[0]}" if errors else ""), dtype=label, batch=b)
    ctx.tables["stability"] = {"rows": labels, "cols": batches, "cells": cells}
    if not fp8_supported(ctx):
        ctx.note("fp8 not tested: needs a GPU of compute capability 8.9+ (or gfx94x/gfx95x) and torch._scaled_mm")


def case_leak_loop(ctx):
    """1,000 allocate-compute-free iterations: allocated memory returns to within 10% of the start."""
    t = ctx.torch
    iters = int(ctx.params.get("iterations") or 1000)
    n = int(ctx.params.get("n") or (128 if ctx.small else 1024))
    use_matmul = ctx.gpu or not ctx.small  # a CPU run in CI keeps the compute elementwise (cheap)
    w = t.randn(n, n, device=ctx.device)
    # one warm-up iteration first: the BLAS library's workspace (32 MiB of cuBLAS on an H200, seen on the
    # first run there) is allocated once per handle and kept, which is not a leak
    x = t.randn(n, n, device=ctx.device)
    ((x @ w) if use_matmul else (x * w)).relu_().sum()
    del x
    ctx.sync()
    if ctx.gpu:
        t.cuda.empty_cache()
    start = ctx.mem()["allocated"]
    points = []
    leak = [] if ctx.params.get("leak") else None
    for i in range(iters):
        x = t.randn(n, n, device=ctx.device)
        y = ((x @ w) if use_matmul else (x * w)).relu_().sum()
        if leak is not None:
            leak.append(x)  # fault injection: keep every buffer alive
        del x, y
        if i % max(1, iters // 50) == 0 or i == iters - 1:
            ctx.sync()
            points.append([i, ctx.mem()["allocated"], ""])
    ctx.sync()
    end = ctx.mem()["allocated"]
    ctx.curve("leak", points)
    grown = (end - start) / max(start, 1)
    base = "allocated" if ctx.gpu else "resident (RSS)"
    if ctx.gpu:
        ok = end <= start * 1.10 + 1024
    else:  # RSS has allocator noise; a leak of every buffer is far above 10%
        ok = end <= start * 1.10 + (4 << 20)
    ctx.expect("leak-returned", ok, f"{base} memory {start} -> {end} bytes after {iters} iterations "
               f"({grown * 100:+.1f}%)")
    ctx.metric("leak-growth", grown * 100, "%", "lower")
    ctx.info["leak_buffers_held"] = len(leak) if leak is not None else 0
