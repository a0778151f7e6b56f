"""`gpuvet compat --format json` on combinations whose answer is known from release notes, build
matrices and real incidents (both vendors, every KB table), run in-process through main(argv, env).

Each case: the described stack, the expected verdict, the check expected to decide it (for breaks), and
where the answer comes from."""
from __future__ import annotations

import pytest

from conftest import run_cli

T = "--torch"
CASES = [
    # --- GPU targets of the official wheel lines (torch_releases + gpu_models) ---------------------------
    ([T, "2.6", "--cuda", "12.6", "--gpu", "NVIDIA GeForce RTX 5090", "--driver", "570.86.10"], "breaks", "BLD040",
     "cu126 lines stop at sm_90; Blackwell sm_120 needs cu128 (pytorch build_cuda.sh, vllm#21633)"),
    ([T, "2.7", "--cuda", "12.8", "--gpu", "RTX 5090", "--driver", "570.86.10", "--python", "3.12"], "works", None,
     "2.7 cu128 carries sm_120 (release/2.7 build_cuda.sh)"),
    ([T, "2.7.1+cu118", "--gpu", "RTX 5080", "--driver", "570.86.10"], "breaks", "BLD040",
     "cu118 line ends at sm_90"),
    ([T, "2.5.1", "--rocm", "6.2", "--gpu", "AMD Radeon RX 5700 XT"], "breaks", "BLD040",
     "pytorch#132570: ROCm 6.2 wheels have no gfx1010"),
    ([T, "2.5.1", "--rocm", "6.2", "--gpu", "AMD Instinct MI300X"], "works", None, "gfx942 in the ROCm 6.x lines"),
    ([T, "2.0.1", "--rocm", "5.4.2", "--gpu", "Radeon RX 7900 XTX"], "breaks", "BLD040",
     "ROCm 5.4-era wheels predate RDNA3 (legacy-rocm-build#1911)"),
    ([T, "2.1.2", "--rocm", "5.6", "--gpu", "Radeon RX 7900 XTX"], "works", None, "gfx1100 added with ROCm 5.6 lines"),
    ([T, "2.3.1", "--rocm", "6.0", "--gpu", "AMD Instinct MI300X"], "works", None, "gfx942 from ROCm 6.0"),
    ([T, "2.2.2", "--rocm", "5.7", "--gpu", "AMD Instinct MI300X"], "breaks", "BLD040", "gfx942 only for ROCm >= 6.0"),
    ([T, "2.12", "--rocm", "7.2", "--gpu", "AMD Radeon 8060S"], "works", None, "pytorch#167299 adds gfx1151 (Strix Halo)"),
    ([T, "2.12", "--rocm", "7.2", "--gpu", "AMD Radeon 780M"], "breaks", "BLD040",
     "pytorch#179653: gfx1103 missing from the wheel arch list"),
    ([T, "2.7", "--rocm", "6.3", "--gpu", "AMD Radeon RX 9070 XT"], "works", None, "pytorch#148562 adds gfx1200/gfx1201"),
    ([T, "2.11", "--rocm", "7.2", "--gpu", "AMD Radeon RX 6700 XT"], "breaks", "BLD040", "gfx1031 is not a wheel target"),
    ([T, "2.12", "--rocm", "7.2", "--gpu", "gfx90a"], "works", None, "MI200 target in every ROCm line"),
    ([T, "2.4.1", "--cuda", "12.4", "--gpu", "NVIDIA L4", "--driver", "550.54.15"], "works", None,
     "sm_89 runs sm_86/sm_80 cubins (CUDA binary compatibility)"),
    ([T, "2.8", "--cuda", "12.8", "--gpu", "Tesla V100-SXM2-32GB", "--driver", "570.86.10"], "works", None,
     "pytorch#157517 keeps sm_70 in the 12.8 line of 2.8"),
    ([T, "2.11", "--cuda", "12.8", "--gpu", "Tesla V100-SXM2-32GB", "--driver", "570.86.10"], "breaks", "BLD040",
     "pytorch#172352: Volta dropped from the 12.8 line in 2.11"),
    ([T, "2.11", "--cuda", "12.6", "--gpu", "Tesla V100-SXM2-32GB", "--driver", "560.35.03"], "works", None,
     "the 12.6 legacy line keeps Volta (RELEASE.md CUDA support matrix)"),
    ([T, "2.9", "--cuda", "13.0", "--gpu", "Tesla V100", "--driver", "580.65.06"], "breaks", "BLD040",
     "CUDA 13 lines start at sm_75"),
    ([T, "2.8", "--cuda", "12.8", "--gpu", "NVIDIA GeForce GTX 1080 Ti", "--driver", "570.86.10"], "breaks", "BLD040",
     "Maxwell/Pascal removed from the 12.8/12.9 lines"),
    ([T, "2.8", "--cuda", "12.6", "--gpu", "NVIDIA GeForce GTX 1080 Ti", "--driver", "570.86.10"], "works", None,
     "sm_60 cubins run on sm_61; cu126 keeps Pascal"),
    ([T, "2.1.2", "--cuda", "11.8", "--gpu", "Tesla K80", "--driver", "520.61.05"], "works", None, "cu118 lines carry sm_37"),
    ([T, "2.1.2", "--cuda", "12.1", "--gpu", "Tesla K80", "--driver", "530.30.02"], "breaks", "BLD040",
     "CUDA 12 lines dropped sm_37"),
    # --- driver (cuda_toolkits, the NVIDIA engineer's DRV checks on described facts) ----------------------
    ([T, "2.9", "--cuda", "13.0", "--gpu", "H200", "--driver", "535.104.05"], "breaks", "DRV001",
     "CUDA 13.0 needs driver >= 580.65.06"),
    ([T, "2.11.0+cu130", "--gpu", "NVIDIA H200", "--driver", "580.159.04", "--python", "3.12",
      "--package", "torchvision==0.26.0", "--package", "torchaudio==2.11.0", "--package", "triton==3.6.0",
      "--package", "numpy==2.5.2", "--glibc", "2.39"], "works", None,
     "the real H200 of tests/fixtures/real/h200-cuda13"),
    ([T, "2.5.1", "--cuda", "12.4", "--gpu", "NVIDIA A100-SXM4-80GB", "--driver", "470.82.01"], "breaks", "DRV001",
     "CUDA 12.4 build on a CUDA 11.4 driver"),
    # --- Python range (torch_releases) -------------------------------------------------------------------
    ([T, "2.0.1", "--cuda", "11.8", "--python", "3.12"], "breaks", "BLD103", "RELEASE.md: 2.0 is >=3.8, <=3.11"),
    ([T, "2.9.1", "--cuda", "12.8", "--python", "3.9"], "breaks", "BLD103", "RELEASE.md: 2.9 is >=3.10"),
    ([T, "2.9.1", "--cuda", "12.8", "--gpu", "H100", "--python", "3.14", "--driver", "570.86.10"], "works", None,
     "RELEASE.md: 2.9 is <=3.14"),
    ([T, "1.13.1", "--cuda", "11.7", "--python", "3.11"], "breaks", "BLD103", "RELEASE.md: 1.13 is <=3.10"),
    # --- companions (torch_releases pins) ------------------------------------------------------------------
    ([T, "2.2.2", "--cuda", "12.1", "--package", "triton==2.3.0"], "breaks", "PKG100",
     "coreweave/ml-containers#64: torch 2.2 with triton 2.3"),
    ([T, "2.3.1", "--cuda", "12.1", "--package", "torchvision==0.18.1", "--package", "torchaudio==2.3.1",
      "--package", "triton==2.3.1"], "works", None, "the 2.3.1 release set (previous-versions)"),
    ([T, "2.4.1", "--cuda", "12.1", "--package", "torchvision==0.20.1"], "breaks", "PKG100",
     "torchvision 0.20 pairs with torch 2.5 (vision README)"),
    # --- extensions (companions table) ---------------------------------------------------------------------
    ([T, "2.1.0", "--cuda", "12.1", "--package", "xformers==0.0.20"], "breaks", "EXT101",
     "xformers 0.0.20 wheels require torch==2.0.1"),
    ([T, "2.0.1", "--cuda", "11.8", "--package", "xformers==0.0.20"], "works", None, "xformers 0.0.20 release notes"),
    ([T, "2.5.1", "--cuda", "12.4", "--package", "vllm==0.8.0"], "breaks", "EXT101", "vllm 0.8.0 pins torch==2.6.0"),
    ([T, "2.6.0", "--cuda", "12.4", "--gpu", "A100", "--driver", "550.54.15", "--package", "vllm==0.8.0"], "works",
     None, "vllm 0.8.0 requirements/cuda.txt"),
    # --- known issues ----------------------------------------------------------------------------------------
    ([T, "2.1.2", "--cuda", "12.1", "--package", "flash-attn==2.5.8"], "breaks", "BLD106",
     "Dao-AILab/flash-attention#950"),
    ([T, "2.12.0.dev20260301+rocm7.2", "--gpu", "Radeon RX Vega 56"], "breaks", "BLD106",
     "pytorch#179865: nightly rocBLAS without gfx900"),
    ([T, "2.12", "--rocm", "7.2", "--gpu", "AMD Instinct MI50"], "breaks", "BLD106",
     "ROCm/legacy-rocm-build#4625: rocBLAS of ROCm >= 6.4 has no gfx906 kernels"),
    # --- NumPy 2 and manylinux (python_rules) ---------------------------------------------------------------
    ([T, "2.1.2", "--cuda", "12.1", "--package", "numpy==2.0.1"], "breaks", "PKG105", "NumPy 2 migration guide"),
    ([T, "2.3.1", "--cuda", "12.1", "--package", "numpy==2.0.1"], "works", None, "torch 2.3 is built against NumPy 2"),
    ([T, "2.7.1", "--cuda", "12.6", "--glibc", "2.17"], "breaks", "LIB107", "2.7 wheels are manylinux_2_28"),
    ([T, "2.5.1", "--cuda", "12.4", "--glibc", "2.17"], "works", None, "2.5 wheels are manylinux2014 (glibc 2.17)"),
    # --- host compiler (host_compilers) ----------------------------------------------------------------------
    (["--cuda", "12.1", "--gcc", "13.2"], "breaks", "EXT104", "CUDA 12.1 accepts GCC <= 12"),
    (["--cuda", "12.4", "--gcc", "13.2"], "works", None, "CUDA 12.4 accepts GCC 13"),
    (["--nvcc", "13.0", "--gcc", "15.1"], "works", None, "CUDA 13.0 host_config.h: GCC <= 15"),
    (["--nvcc", "13.0", "--gcc", "16.1"], "breaks", "EXT104", "CUDA 13.0 host_config.h: GCC <= 15"),
    # --- what the KB does not know: unknown, never a guess ----------------------------------------------------
    ([T, "2.9.1", "--rocm", "6.4", "--gpu", "AMD Instinct MI300X"], "unknown", None, "no verified 2.9 ROCm arch list"),
    ([T, "3.0.0", "--cuda", "13.2", "--gpu", "H100"], "unknown", None, "a release the KB does not record"),
    ([T, "2.8", "--cuda", "12.8", "--gpu", "Frobnicator X1"], "unknown", None, "a GPU the KB does not know"),
    ([T, "2.8", "--cuda", "12.2", "--gpu", "H100"], "unknown", None, "2.8 has no cu122 wheels"),
]


@pytest.mark.parametrize("argv,verdict,code,why", CASES, ids=[f"{i:02d}" for i in range(len(CASES))])
def test_compat_verdict(argv, verdict, code, why):
    r = run_cli(["compat", *argv, "--format", "json"])
    assert r.err == "", r.err
    doc = r.json()
    assert doc["command"] == "compat" and doc["meta"]["facts_origin"] == "described"
    assert doc["meta"]["kb"]["version"]
    assert doc["verdict"] == verdict, (why, doc["verdict_reasons"])
    failed = {f["code"] for f in doc["findings"] if f["outcome"] == "failed" and f["severity"] in ("error", "critical")}
    if verdict == "breaks":
        assert code in failed, (why, doc["verdict_reasons"])
        assert r.code == 1
        assert doc["sources"], "a broken verdict names its source"
    else:
        assert not failed, (why, failed)
        assert r.code == 0


def test_table_is_large_and_covers_both_vendors_and_every_table():
    assert len(CASES) >= 40
    text = " ".join(" ".join(a) for a, *_ in CASES)
    assert "--rocm" in text and "--cuda" in text
    assert {"BLD040", "DRV001", "BLD103", "PKG100", "EXT101", "BLD106", "PKG105", "LIB107", "EXT104"} <= {c for *_, c, _ in CASES}
    assert {v for _, v, *_ in CASES} == {"works", "breaks", "unknown"}


def test_terminal_output_says_the_verdict():
    r = run_cli(["compat", T, "2.6", "--cuda", "12.6", "--gpu", "RTX 5090"])
    assert r.out.startswith("Verdict: breaks") and "BLD040" in r.out and "source: https://" in r.out


@pytest.mark.parametrize("argv,msg", [
    ([], "describe a stack"),
    ([T, "2.8", "--cuda", "12.8", "--rocm", "6.4"], "not both"),
    ([T, "banana"], "not a version"),
    (["--package", "xformers"], "NAME==VERSION"),
    ([T, "2.8.0+cu128", "--cuda", "12.6"], "contradicts"),
])
def test_usage_errors(argv, msg):
    r = run_cli(["compat", *argv])
    assert r.code == 2 and msg in r.err and r.out == ""
