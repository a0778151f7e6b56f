"""What every case gets: the framework, the device, timers, memory readings and reference comparisons.

Standard library only at import time; the framework is imported by ``Env.start_framework``.
"""
from __future__ import annotations

import importlib
import math
import os
import statistics
import time
from typing import Any

# Relative Frobenius error ||out - ref|| / ||ref|| against a float64 reference, per compute dtype.
# fp32 lands far under 1e-4 for these sizes; tf32 near 3e-4; fp16 near 5e-4; bf16 between 1e-3 and 1e-2.
TOLERANCE = {"fp64": 1e-9, "fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3, "bf16": 3e-2, "fp8": 0.15}

# case name -> (module, function, needs the framework)
CASES = {
    # quick
    "device": ("cases_ops", "case_device", True),
    "kernels": ("cases_ops", "case_kernels", True),
    "handles": ("cases_ops", "case_handles", True),
    "matmul_ref": ("cases_ops", "case_matmul_ref", True),
    "conv2d_ref": ("cases_ops", "case_conv2d_ref", True),
    "alloc_roundtrip": ("cases_ops", "case_alloc_roundtrip", True),
    # standard
    "sdpa": ("cases_ops", "case_sdpa", True),
    "conv": ("cases_ops", "case_conv", True),
    "layer_norm": ("cases_ops", "case_layer_norm", True),
    "interpolate": ("cases_ops", "case_interpolate", True),
    "scatter_reduce": ("cases_ops", "case_scatter_reduce", True),
    "matmul": ("cases_ops", "case_matmul", True),
    "train_step": ("cases_train", "case_train_step", True),
    # full
    "leak_loop": ("cases_train", "case_leak_loop", True),
    "stability": ("cases_train", "case_stability", True),
    "collective": ("cases_dist", "case_collective", True),
    "distributed": ("cases_dist", "case_distributed", True),
    "bench_alloc": ("cases_bench", "case_alloc", True),
    "bench_launch": ("cases_bench", "case_launch", True),
    "bench_coldstart": ("cases_bench", "case_coldstart", True),
    "bench_matmul": ("cases_bench", "case_matmul_tflops", True),
    "bench_bandwidth": ("cases_bench", "case_bandwidth", True),
    # fault injection (never run unless asked for)
    "fault_segfault": ("cases_faults", "case_segfault", False),
    "fault_abort": ("cases_faults", "case_abort", False),
    "fault_hang": ("cases_faults", "case_hang", False),
    "fault_wrong": ("cases_faults", "case_wrong", True),
    "fault_leak": ("cases_faults", "case_leak", True),
}


def load_case(name: str):
    mod, func, needs = CASES[name]
    return getattr(importlib.import_module(mod), func), needs


class Unsupported(Exception):
    """This build or device does not offer what the case tests (reported as skipped, not failed)."""


class Env:
    """The process-wide state: the plan, the framework once imported, the device."""

    def __init__(self, plan: dict):
        self.plan = plan
        self.small = bool(plan.get("small"))
        self.want_device = plan.get("device", "auto")
        self.inject = plan.get("inject") or {}
        self.torch: Any = None  # the framework module, imported by start_framework() (never in gpuvet's process)
        self.device = "cpu"
        self.info: dict = {}
        self.process_t0 = plan.get("_t0")

    def start_framework(self) -> dict:
        from worker import T0

        t = time.perf_counter()
        import torch

        t_import = time.perf_counter() - t
        self.torch = torch
        gpu = torch.cuda.is_available()
        if self.want_device == "cpu" or (self.want_device == "auto" and not gpu):
            self.device = "cpu"
        else:
            self.device = "cuda"
        info = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
                "gpu_available": gpu, "device": self.device, "import_s": round(t_import, 4),
                "since_process_start_s": round(time.perf_counter() - T0, 4), "small": self.small}
        info["backend"] = "rocm" if info["hip"] else ("cuda" if info["cuda"] else "cpu")
        if gpu:
            info["device_count"] = torch.cuda.device_count()
        if self.device == "cuda":
            t = time.perf_counter()
            torch.cuda.init()
            x = torch.ones(16, device="cuda")
            torch.cuda.synchronize()
            info["init_s"] = round(time.perf_counter() - t, 4)
            t = time.perf_counter()
            (x + 1).sum().item()
            info["first_kernel_ms"] = round((time.perf_counter() - t) * 1e3, 4)
            p = torch.cuda.get_device_properties(0)
            info.update(device_name=p.name, total_memory=p.total_memory,
                        capability=f"{p.major}.{p.minor}", multiprocessors=p.multi_processor_count,
                        arch=getattr(p, "gcnArchName", None) or f"sm_{p.major}{p.minor}")
            info["init_peak_bytes"] = torch.cuda.max_memory_reserved()
            del x
        else:
            info["device_name"] = "cpu"
            if self.small:  # small CPU runs (CI) are faster on one thread than fighting for shared cores
                torch.set_num_threads(int(self.plan.get("threads") or 1))
            info["threads"] = torch.get_num_threads()
        self.info = info
        return info


class Ctx:
    Unsupported = Unsupported

    def __init__(self, env: Env, case: str, params: dict):
        self.env = env
        self.case = case
        self.params = params
        self.torch = env.torch
        self.device = env.device
        self.gpu = env.device != "cpu"
        self.small = env.small
        self.checks: list[dict] = []
        self.metrics: dict[str, dict] = {}
        self.curves: dict[str, list] = {}
        self.tables: dict[str, dict] = {}
        self.notes: list[str] = []
        self.info: dict = {}
        sleep = self.env.inject.get("sleep") or {}
        self._sleep = float(sleep.get(case, 0.0))

    # ------------------------------------------------------------------ framework helpers
    def sync(self) -> None:
        if self.gpu:
            self.torch.cuda.synchronize()

    def dtype(self, label: str):
        t = self.torch
        return {"fp64": t.float64, "fp32": t.float32, "tf32": t.float32, "fp16": t.float16,
                "bf16": t.bfloat16}[label]

    def precision(self, label: str):
        """Context manager: the float32 matmul/conv precision for ``label`` (tf32 on, otherwise off)."""
        return _Precision(self.torch, label == "tf32")

    def rand(self, *shape, dtype=None, seed=None, scale=1.0):
        """Fresh random data (a float64 CPU tensor): never zeros, which hide unwritten outputs."""
        g = self.torch.Generator().manual_seed(seed if seed is not None else (hash((self.case, shape)) & 0xFFFF))
        return self.torch.randn(*shape, generator=g, dtype=self.torch.float64) * scale

    def mem(self) -> dict:
        t = self.torch
        if self.gpu:
            return {"allocated": t.cuda.memory_allocated(), "reserved": t.cuda.memory_reserved(),
                    "peak": t.cuda.max_memory_allocated()}
        return {"allocated": _rss(), "reserved": _rss(), "peak": _rss()}

    def reset_peak(self) -> None:
        if self.gpu:
            self.torch.cuda.reset_peak_memory_stats()

    def time(self, fn, warmup: int = 3, reps: int = 10) -> dict:
        """Median and spread of ``fn`` in milliseconds: device events on a GPU, perf_counter on the CPU."""
        for _ in range(warmup):
            fn()
        self.sync()
        samples = []
        if self.gpu:
            ev = self.torch.cuda.Event
            for _ in range(reps):
                a, b = ev(enable_timing=True), ev(enable_timing=True)
                a.record()
                fn()
                if self._sleep:
                    time.sleep(self._sleep)
                b.record()
                b.synchronize()
                samples.append(a.elapsed_time(b))
        else:
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                if self._sleep:
                    time.sleep(self._sleep)
                samples.append((time.perf_counter() - t) * 1e3)
        return summarize(samples)

    # ------------------------------------------------------------------ recording
    def compare(self, name: str, got, ref, label: str, tol: float | None = None, **info) -> bool:
        """Record ||got - ref|| / ||ref|| (float64) against the tolerance of ``label``."""
        t = self.torch
        g = got.detach().to("cpu", t.float64)
        r = ref.detach().to("cpu", t.float64)
        tol = TOLERANCE[label] if tol is None else tol
        if g.shape != r.shape:
            self.checks.append({"name": name, "dtype": label, "ok": False, "tol": tol, "err": None,
                                "detail": f"shape {tuple(g.shape)} != reference {tuple(r.shape)}", **info})
            return False
        finite = bool(t.isfinite(g).all())
        denom = float(t.linalg.vector_norm(r)) or 1.0
        err = float(t.linalg.vector_norm(g - r)) / denom if finite else float("nan")
        ok = finite and err <= tol
        rec = {"name": name, "dtype": label, "ok": ok, "tol": tol, "err": _r(err), **info}
        if not finite:
            rec["detail"] = "non-finite values in the output"
        self.checks.append(rec)
        return ok

    def expect(self, name: str, ok: bool, detail: str = "", **info) -> bool:
        self.checks.append({"name": name, "ok": bool(ok), "detail": detail, **info})
        return bool(ok)

    def metric(self, name: str, value, unit: str, better: str = "lower", samples=None, **extra) -> None:
        m = {"value": _r(value), "unit": unit, "better": better, **extra}
        if samples:
            m["samples"] = [_r(s) for s in samples]
        self.metrics[name] = m

    def timed(self, name: str, fn, warmup: int = 3, reps: int = 10, **extra) -> dict:
        s = self.time(fn, warmup, reps)
        self.metric(name, s["median"], "ms", "lower", samples=s["samples"], **extra)
        return s

    def curve(self, name: str, points) -> None:
        self.curves[name] = points

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finish(self) -> None:
        pass

    def result(self) -> dict:
        return {"checks": self.checks, "metrics": self.metrics, "curves": self.curves, "tables": self.tables,
                "notes": self.notes, "info": self.info, "device": self.device}


class _Precision:
    def __init__(self, torch, tf32: bool):
        self.torch, self.tf32 = torch, tf32

    def __enter__(self):
        b = self.torch.backends
        self.saved = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
        b.cuda.matmul.allow_tf32 = self.tf32
        b.cudnn.allow_tf32 = self.tf32
        return self

    def __exit__(self, *exc):
        b = self.torch.backends
        b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = self.saved
        return False


def summarize(samples: list[float]) -> dict:
    s = sorted(samples)
    med = statistics.median(s)
    q = lambda p: s[min(len(s) - 1, max(0, int(round(p * (len(s) - 1)))))]  # noqa: E731
    return {"median": med, "min": s[0], "max": s[-1], "p10": q(0.1), "p90": q(0.9),
            "samples": s if len(s) <= 50 else [q(i / 49) for i in range(50)]}


def _r(x):
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return x
    if math.isnan(x) or math.isinf(x):
        return x
    return float(f"{x:.6g}")


def _rss() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
