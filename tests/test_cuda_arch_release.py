"""Issue 9, day 6 (d12c): facts and families of the CUDA side that do not depend on one case's wording.

* the CUDA release a build was made with bounds the GPU architectures it can carry code for (KB gpu_models
  ``min_cuda``): BLD102 judges a torch release the KB has no arch list for by that bound;
* an NVIDIA GPU and a torch build named in prose (``I am using RTX 4090``, ``pip install torch==1.10.0+cu113``)
  are facts of a pasted report, unless a tool in the text printed the GPU;
* NVRTC's "invalid value for --gpu-architecture" is the framework build not knowing the GPU (LOG440), not the
  system toolkit (LOG072);
* under MIG an invalid device ordinal and a device count of 0/1 are device access, not user code (hint ``mig``,
  LOG364's context rule, LOG441).
"""
from __future__ import annotations

from gpuvet import kb as KB
from gpuvet.app.diagnose import diagnose_text
from gpuvet.app.engine import run_checks
from gpuvet.checks.bld import gpu_target_missing_from_official_wheel
from gpuvet.kb import query as q
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.probes.pasted import parse_report

S = "test"


def _facts(*rows):
    f = Facts()
    f.add(rows)
    return f


def _torch(version, cuda):
    return row("framework_builds", S, name="torch", version=version, cuda=cuda, hip="", debug=False, git_version="",
               channel="stable", targets=[], targets_source="", variant="cuda", path="")


def _gpu(name):
    return row("gpu_devices", S, vendor="nvidia", index=0, name=name, arch="", compute_capability="",
               memory_mib=None, pci_bus="")


def _bld102(*rows):
    return [f for f in run_checks(_facts(*rows), [gpu_target_missing_from_official_wheel], KB.load())]


def test_kb_cuda_bounds():
    kb = KB.load()
    assert q.cuda_min_for_arch(kb, "sm_89")[0] == "11.8"
    assert q.cuda_min_for_arch(kb, "sm_120")[0] == "12.8"
    assert q.cuda_min_for_arch(kb, "sm_37") is None  # not sourced: no bound, no verdict
    assert q.cuda_newest_arch(kb, "11.3") == "sm_86"
    assert q.cuda_newest_arch(kb, "9.0") == "sm_70"
    assert q.cuda_newest_arch(kb, "12.6") == "sm_90"


def test_bld102_bounds_a_release_the_kb_lacks_by_its_cuda():
    # torch 1.10 is older than the KB's torch_releases: the CUDA 11.3 it was built with knows sm_86 at most
    same_major = _bld102(_torch("1.10.0+cu113", "11.3"), _gpu("GeForce RTX 4090"))
    assert [f.outcome for f in same_major] == [Outcome.FAILED]
    assert same_major[0].severity is Severity.WARNING and "sm_89" in same_major[0].title
    assert "11.8" in same_major[0].title
    across = _bld102(_torch("1.12.1+cu116", "11.6"), _gpu("NVIDIA GeForce RTX 5090"))
    assert across[0].outcome is Outcome.FAILED and across[0].severity is Severity.CRITICAL
    ok = _bld102(_torch("1.10.0+cu113", "11.3"), _gpu("GeForce RTX 3090"))
    assert [f.outcome for f in ok] == [Outcome.PASSED]
    unknown = _bld102(_torch("1.10.0+cu113", "11.3"), _gpu("Tesla K80"))  # no sourced bound for Kepler
    assert [f.outcome for f in unknown] == [Outcome.UNKNOWN]


def test_prose_names_gpu_and_build():
    facts = parse_report("I am using RTX 4090\nCUDA 11.3\nand pytorch is installed using \"pip3 install "
                         "torch==1.10.0+cu113 torchvision==0.11.1+cu113 -f https://download.pytorch.org/whl/cu113\"\n")
    gpus = facts.table("gpu_devices")
    assert [g.get("name") for g in gpus] == ["GeForce RTX 4090"]
    torch = facts.first("framework_builds", name="torch")
    assert torch.get("version") == "1.10.0+cu113" and torch.get("cuda") == "11.3"
    facts = parse_report("GPU Type: RTX4070\nTesla T4 on colab, PyTorch 2.8.0 + cu129\n")
    assert sorted(g.get("name") for g in facts.table("gpu_devices")) == ["GeForce RTX 4070", "Tesla T4"]
    assert facts.first("framework_builds", name="torch").get("cuda") == "12.9"


def test_prose_gpu_yields_to_a_tool_printed_one():
    text = ("| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
            "|   0  NVIDIA A100 80GB PCIe          Off |   00000000:31:00.0 Off |                   On |\n"
            "on my RTX 3090 at home it works\n")
    names = [g.get("name") for g in parse_report(text).table("gpu_devices")]
    assert names and not any("3090" in n for n in names)


def test_prose_without_gpu_or_tag_names_nothing():
    facts = parse_report("pip list\nPackage Version\ntorch 1.10.0\n")
    assert not facts.table("gpu_devices")
    # an RTX-like word that is no GPU model, and a torch without a CUDA tag in prose
    assert not parse_report("see RTXGI docs; torch 1.10 works\nPackage Version\nnumpy 1.0\n").table("gpu_devices")


def _first(text):
    """The first stack cause blamed; None when nothing is (an empty list, or an honest `none` first)."""
    d = diagnose_text(text).extra["diagnoses"]
    return d[0]["cause"] if d and d[0]["cause"] != "none" else None


def test_nvrtc_arch_error_is_the_build_not_knowing_the_gpu():
    text = ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
            "I am using RTX 4090\npip3 install torch==1.10.0+cu113 torchvision==0.11.1+cu113\n")
    diags = diagnose_text(text).extra["diagnoses"]
    assert diags[0]["cause"] == "gpu-arch-unsupported"
    assert "BLD102" in diags[0]["checks"] and "LOG440" in diags[0]["signatures"]
    # nvcc's own message at build time stays the toolchain's
    assert _first("nvcc fatal   : Unsupported gpu architecture 'compute_120'\n") == "toolchain"


def test_invalid_device_ordinal_under_mig_is_device_access():
    err = "RuntimeError: cuda runtime error (101) : invalid device ordinal at /opt/pytorch/torch/csrc/cuda/Module.cpp:33\n"
    assert _first(err) in (None, "none")  # the program's device choice: blames nothing (or `none` first: the honest list)
    assert _first("the A100 is in MIG mode (3g.40gb instances)\n" + err) == "device-access"


def test_device_count_symptom():
    assert _first("`torch.cuda.device_count()` returns `0`, when used on an A100 in MIG-Mode:\n"
                  "CUDA_VISIBLE_DEVICES=MIG-feee0c61-26ec-5616-bb59-b6d777cc4f34 ipython\n") == "device-access"


# -- second landing: `none` precision and the CPU-only guard -------------------------------------------------------
def test_oom_tied_to_the_batch_size_is_the_workload():
    oom = ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 8.00 GiB total capacity; 4.78 GiB "
           "already allocated; 0 bytes free; 6.10 GiB reserved in total by PyTorch)\n")
    assert _first(oom) == "memory-allocator"  # the numbers alone read as fragmentation
    assert _first("training works with --batch=8; with any bigger batch, es: 12:\n" + oom) is None


def test_flash_attn_input_checks_blame_nothing_but_its_arch_check_does():
    assert _first("  A = flash_attn_func(Q, K, V, causal = True)\n"
                  "RuntimeError: FlashAttention only support fp16 and bf16 data type\n") is None
    assert _first("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n") == "gpu-arch-unsupported"


def test_ctranslate2_compute_type_on_cpu_is_a_setting():
    err = ("ValueError: Requested float16 compute type, but the target device or backend do not support efficient "
           "float16 computation.\n")
    assert _first('    model = WhisperModel(model_path, device="cpu", compute_type="float16")\n' + err) is None
    assert _first('    model = WhisperModel(model_path, device="cuda", compute_type="float16")\n' + err) == \
        "gpu-arch-unsupported"


def test_program_guard_on_is_available_reads_as_no_usable_gpu():
    text = ('  File "D:\\\\proj\\\\models\\\\networks.py", line 86, in define_G\n'
            "    assert(torch.cuda.is_available())\nAssertionError\n")
    assert _first(text) == "cpu-only-build"


# -- third landing: families read from fresh cases after their first score ------------------------------------------
def test_companion_calls_an_api_the_installed_framework_lacks():
    assert _first("torch==2.5.1\nAttributeError: module 'torch.library' has no attribute 'wrap_triton'\n") == \
        "companion-mismatch"
    assert _first("AttributeError: 'NoneType' object has no attribute 'shape'\n") in (None, "none")


def test_families_of_cpu_only_builds_and_companions():
    # detectron2 / maskrcnn-benchmark ops built without CUDA
    assert _first("RuntimeError: Not compiled with GPU support (nms at /src/maskrcnn_benchmark/csrc/nms.h:22)\n") == \
        "cpu-only-build"
    # Lightning's device parser, and the defaults channel's CPU build selector in conda list
    assert _first("MisconfigurationException:\n    You requested GPUs: [0]\n    But your machine only has: []\n") == \
        "cpu-only-build"
    assert _first("# Name    Version   Build  Channel\n_pytorch_select           0.1                       cpu_0\n"
                  "RuntimeError: no GPU\n") == "cpu-only-build"
    # torch's dispatcher listing a torchvision op with only its CPU kernel (Windows paths: not triton's rule)
    assert _first("CPU: registered at C:\\actions-runner\\_work\\vision\\vision\\pytorch\\vision\\torchvision\\csrc\\ops"
                  "\\cpu\\nms_kernel.cpp:112 [kernel]\nMeta: registered at /dev/null:440 [kernel]\n") == "companion-mismatch"
    # DeepSpeed's op builder, shortened by the reporter
    assert _first("Installed CUDA version 11.7 does not match torch version\n") == "extension-abi"
