"""The catalogue: every validation case, its level, its time-outs and what it exercises.

Levels are cumulative (standard runs quick's cases too, full runs standard's). ``bench`` cases are
``gpuvet bench``'s and part of full; ``fault`` cases run only when fault injection asks for them.
"""
from __future__ import annotations

from .runner import CaseSpec

LEVELS = ("quick", "standard", "full")
LOW = ("fp32", "tf32", "fp16", "bf16")

CATALOGUE: tuple[CaseSpec, ...] = (
    # ---------------------------------------------------------------- quick (<= 30 s on an H200, import included)
    CaseSpec("device", "quick", "device visible and usable", "VAL006", 30, 30, markers=("gpu",)),
    CaseSpec("kernels", "quick", "a tiny kernel per dtype", "VAL003", 30, 30, ops=("add", "sum"),
             dtypes=("fp64", "fp32", "fp16", "bf16", "int64", "int32", "int8", "uint8", "bool", "fp8")),
    CaseSpec("handles", "quick", "BLAS and DNN handles", "VAL003", 30, 30, ops=("matmul", "conv2d")),
    CaseSpec("matmul_ref", "quick", "matmul vs CPU float64", "VAL003", 30, 60, ops=("matmul", "mm", "linear"), dtypes=LOW),
    CaseSpec("conv2d_ref", "quick", "conv2d vs CPU float64", "VAL003", 30, 60, ops=("conv2d",), dtypes=LOW),
    CaseSpec("alloc_roundtrip", "quick", "allocator round trip", "VAL004", 30, 30, markers=("gpu", "memory")),
    # ---------------------------------------------------------------- standard (about 2 minutes)
    CaseSpec("sdpa", "standard", "scaled_dot_product_attention per backend, masks, lengths", "VAL003", 120, 180,
             ops=("scaled_dot_product_attention",), dtypes=("fp32", "fp16", "bf16")),
    CaseSpec("conv", "standard", "conv2d/conv3d, contiguous and channels_last", "VAL003", 90, 120,
             ops=("conv2d", "conv3d"), dtypes=LOW),
    CaseSpec("layer_norm", "standard", "layer_norm", "VAL003", 30, 60, ops=("layer_norm",), dtypes=("fp32", "fp16", "bf16")),
    CaseSpec("interpolate", "standard", "interpolate, every mode", "VAL003", 60, 60, ops=("interpolate",),
             dtypes=("fp32", "fp16", "bf16")),
    CaseSpec("scatter_reduce", "standard", "scatter_reduce, every reduction", "VAL003", 30, 60, ops=("scatter_reduce",),
             dtypes=("fp32", "fp16", "bf16")),
    CaseSpec("matmul", "standard", "matmul at awkward shapes", "VAL003", 60, 120, ops=("matmul", "mm", "bmm", "linear"),
             dtypes=LOW),
    CaseSpec("train_step", "standard", "one training step in five stages", "VAL008", 120, 180,
             ops=("linear", "layer_norm", "scaled_dot_product_attention", "cross_entropy", "gelu"),
             markers=("gpu", "memory")),
    # ---------------------------------------------------------------- full (about 15 minutes)
    CaseSpec("leak_loop", "full", "1,000 allocate-compute-free iterations", "VAL004", 120, 180, markers=("gpu", "memory")),
    CaseSpec("stability", "full", "stability matrix: batch size x dtype", "VAL007", 300, 300),
    CaseSpec("collective", "full", "a collective on every GPU", "VAL003", 120, 120, ranks="auto",
             markers=("gpu", "distributed")),
    CaseSpec("distributed", "full", "all-reduce/all-gather/reduce-scatter/broadcast stress, 1 KiB-1 GiB, every GPU",
             "VAL003", 600, 120, ranks="auto", markers=("gpu", "distributed")),
    # ---------------------------------------------------------------- bench (gpuvet bench; part of full)
    CaseSpec("bench_alloc", "bench", "allocator latency and fragmentation", "VAL010", 60, 60, markers=("gpu", "memory")),
    CaseSpec("bench_launch", "bench", "kernel launch overhead", "VAL010", 60, 60),
    CaseSpec("bench_coldstart", "bench", "cold start: import, init, first iteration", "VAL010", 120, 120, fresh=True),
    CaseSpec("bench_matmul", "bench", "matmul TFLOP/s per dtype", "VAL011", 120, 120, ops=("matmul",), dtypes=LOW),
    CaseSpec("bench_bandwidth", "bench", "device memory bandwidth", "VAL011", 60, 60),
    # ---------------------------------------------------------------- fault injection
    CaseSpec("fault_segfault", "fault", "injected: a case that segfaults", "VAL001", 30, 30),
    CaseSpec("fault_abort", "fault", "injected: a case that aborts", "VAL001", 30, 30),
    CaseSpec("fault_hang", "fault", "injected: a case that hangs", "VAL002", 5, 5),
    CaseSpec("fault_wrong", "fault", "injected: a case that returns wrong numbers", "VAL003", 30, 30),
    CaseSpec("fault_leak", "fault", "injected: a case that leaks", "VAL004", 60, 60, markers=("gpu", "memory")),
)

BY_NAME = {c.name: c for c in CATALOGUE}
FAULTS = ("segfault", "abort", "hang", "wrong", "leak")


def for_level(level: str) -> list[CaseSpec]:
    """The cases of a level, cumulative; full includes the microbenchmarks."""
    if level == "bench":
        return [c for c in CATALOGUE if c.level == "bench"]
    upto = LEVELS[: LEVELS.index(level) + 1]
    cases = [c for c in CATALOGUE if c.level in upto]
    if level == "full":
        cases += [c for c in CATALOGUE if c.level == "bench"]
    return cases


def faults(names) -> list[CaseSpec]:
    return [BY_NAME[f"fault_{n}"] for n in names]


def for_ops(ops, dtypes=()) -> list[CaseSpec]:
    """Cases exercising any of ``ops`` (framework operator names), always with the device case first."""
    want = {o.lower() for o in ops}
    picked = [c for c in CATALOGUE if c.level in LEVELS and want & set(c.ops)]
    return [BY_NAME["device"]] + [c for c in picked if c.name != "device"]
