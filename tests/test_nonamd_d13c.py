"""Issue 9, day 7 (d13c): non-AMD mechanisms that do not depend on one case's wording.

* a torch version named without its wheel line ("torch 2.5.1" in a pip list, "pytorch=1.4.0") is a build of unknown
  variant, never a CPU-only one; BLD102 fails it for an NVIDIA GPU that no CUDA line of the release carries (the
  KB's arch lists), or, for releases older than torch_releases, that came after the newest CUDA any official binary
  of the release was built with (KB torch_legacy_cuda, from PyTorch's previous-versions page);
* an NVIDIA GPU named at the end of a sentence ("I have an RTX 5090.") is read;
* message families from their upstream sources: Triton's OutOfResources for shared memory (LOG452; a request beyond
  any NVIDIA GPU's 227 KiB per block is the program's settings), ONNX Runtime's and XLA's allocator failures
  (LOG100), OpenMMLab's and transformers' version guards (LOG453);
* hardware symptoms told in prose: the machine itself going down under GPU load (LOG450), failures that follow the
  clocks or the power limit (LOG451).
"""
from __future__ import annotations

from gpuvet import kb as KB
from gpuvet.app.diagnose import diagnose_text
from gpuvet.app.engine import run_checks
from gpuvet.checks.bld import cpu_only_build_with_gpu, gpu_target_missing_from_official_wheel
from gpuvet.kb import query as q
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.probes.mentions import parse_nvidia_mentions
from gpuvet.probes.pasted import parse_report
from gpuvet.logs.rank import blames_nothing

S = "test"


def _facts(*rows):
    f = Facts()
    f.add(rows)
    return f


def _torch(version, cuda="", variant=""):
    return row("framework_builds", S, name="torch", version=version, cuda=cuda, hip="", debug=False, git_version="",
               channel="stable", targets=[], targets_source="", variant=variant, path="")


def _gpu(name, vendor="nvidia"):
    return row("gpu_devices", S, vendor=vendor, index=0, name=name, arch="", compute_capability="",
               memory_mib=None, pci_bus="")


def _bld102(*rows):
    return [f for f in run_checks(_facts(*rows), [gpu_target_missing_from_official_wheel], KB.load())]


def _diagnoses(text):
    return diagnose_text(text).extra["diagnoses"]


def _causes(text):
    return [d["cause"] for d in _diagnoses(text)]


# --------------------------------------------------------------------------- facts: a version without its line
def test_legacy_table_gives_the_newest_cuda_of_an_old_release():
    kb = KB.load()
    assert q.legacy_torch_cuda(kb, "1.4.0")[0] == "10.1"
    assert q.legacy_torch_cuda(kb, "1.7.1")[0] == "11.0"
    assert q.legacy_torch_cuda(kb, "0.4.1")[0] == "9.2"
    assert q.legacy_torch_cuda(kb, "1.3.1") is None  # not sourced: no bound, no verdict
    assert q.legacy_torch_cuda(kb, "2.5.1") is None  # torch_releases records it


def test_untagged_version_in_pasted_text_is_no_cpu_build():
    facts = parse_report("pip list | grep torch\ntorch                     2.0.1\nGPU: RTX 3090\n")
    torch = facts.first("framework_builds", name="torch")
    assert torch.get("version") == "2.0.1" and torch.get("variant") in ("", None)
    fs = run_checks(facts, [cpu_only_build_with_gpu], KB.load())
    assert not [f for f in fs if f.outcome is Outcome.FAILED]
    # a +cpu label is still a CPU build, and so is a build that answers None for its CUDA
    facts = parse_report("torch                     2.0.1+cpu\nGPU: RTX 3090\n")
    assert facts.first("framework_builds", name="torch").get("variant") == "cpu"
    facts = parse_report(">>> print(torch.__version__, torch.version.cuda)\n2.0.1 None\n")
    assert facts.first("framework_builds", name="torch").get("variant") == "cpu"


def test_gpu_named_at_the_end_of_a_sentence():
    rows = parse_nvidia_mentions("I have an RTX 5090.\nIt fails.\n", S)
    assert [r.get("name") for r in rows if r.table == "gpu_devices"] == ["GeForce RTX 5090"]
    rows = parse_nvidia_mentions("RTX 3090.1 firmware\n", S)  # a version after the model number: no sentence end
    assert [r for r in rows if r.table == "gpu_devices"] == []


def test_bld102_untagged_release_no_cuda_line_carries_the_gpu():
    fs = _bld102(_torch("2.5.1"), _gpu("GeForce RTX 5090"))
    assert [f.outcome for f in fs] == [Outcome.FAILED] and fs[0].severity is Severity.CRITICAL
    assert "sm_120" in fs[0].title and "no CUDA wheel line of torch 2.5" in fs[0].title
    # some line of the release carries an Ada GPU's major (sm_86 cubins run on sm_89): no verdict on an unnamed line
    fs = _bld102(_torch("2.5.1"), _gpu("GeForce RTX 4090"))
    assert not [f for f in fs if f.outcome is Outcome.FAILED]
    # an AMD GPU is not judged by the CUDA lines
    fs = _bld102(_torch("2.5.1"), _gpu("AMD Radeon RX 7900 XTX", vendor="amd"))
    assert not [f for f in fs if f.outcome is Outcome.FAILED]


def test_bld102_untagged_legacy_release_bounded_by_its_newest_cuda():
    across = _bld102(_torch("1.6.0"), _gpu("GeForce RTX 3090"))  # 1.6: CUDA 10.2 at most, sm_86 needs 11.1
    assert [f.outcome for f in across] == [Outcome.FAILED] and across[0].severity is Severity.CRITICAL
    assert "10.2" in across[0].title
    within = _bld102(_torch("1.7.1"), _gpu("GeForce RTX 3090"))  # 11.0: sm_80 cubins run on sm_86
    assert [f.outcome for f in within] == [Outcome.FAILED] and within[0].severity is Severity.WARNING
    ok = _bld102(_torch("1.12.1"), _gpu("GeForce RTX 3090"))  # 1.12 had CUDA 11.6 builds
    assert not [f for f in ok if f.outcome is Outcome.FAILED]
    unknown = _bld102(_torch("1.3.1"), _gpu("GeForce RTX 3090"))  # 1.3 is not in the table
    assert not [f for f in unknown if f.outcome is Outcome.FAILED]
    cpu = _bld102(_torch("1.6.0", variant="cpu"), _gpu("GeForce RTX 3090"))
    assert not [f for f in cpu if f.outcome is Outcome.FAILED]


def test_untagged_old_torch_on_new_gpu_explains_a_cudnn_failure():
    text = ("My environment: RTX 3090, torch==1.6.0, python 3.7\n"
            "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n")
    assert _causes(text)[0] == "gpu-arch-unsupported"
    # the same error with a torch whose CUDA 11.6 builds carry the GPU: the fact says nothing
    text = ("My environment: RTX 3090, torch==1.12.1, python 3.7\n"
            "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n")
    assert "BLD102" not in str([d["checks"] for d in _diagnoses(text)])


# --------------------------------------------------------------------------- message families
def test_triton_shared_memory_family():
    consumer = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, "
                "Hardware limit: 65536. Reducing block sizes or `num_stages` may help.\nGPU: RTX 2080 Ti\n")
    assert _causes(consumer)[0] == "gpu-arch-unsupported"
    beyond_any_gpu = ("triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 663808, "
                      "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n")
    assert _causes(beyond_any_gpu) == []
    threads = "triton.runtime.errors.OutOfResources: out of resource: threads, Required: 2048, Hardware limit: 1024.\n"
    assert "gpu-arch-unsupported" not in _causes(threads)[:1]


def test_ort_and_xla_allocator_failures_are_out_of_memory():
    ort = ("[E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] Non-zero status code returned while running "
           "Conv node. Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* "
           "onnxruntime::BFCArena::AllocateRawInternal(size_t, bool) Failed to allocate memory for requested buffer "
           "of size 1125366016\n")
    assert _causes(ort)[0] == "memory-allocator"
    xla = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB "
           "(184549376B) on device ordinal 0\n")
    assert _causes(xla)[0] == "memory-allocator"


def test_version_guards_name_a_companion():
    assert _causes("AssertionError: MMCV==1.3.9 is used but incompatible. Please install mmcv>=[1, 1, 4], "
                   "<=[1, 2, 0].\n")[0] == "companion-mismatch"
    assert _causes("ImportError: accelerate>=0.21.0 is required for a normal functioning of this module, but found "
                   "accelerate==0.20.3.\n")[0] == "companion-mismatch"
    # a tokenizers pin is no GPU-stack companion: LOG453 stays silent
    ds = _diagnoses("ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of this "
                    "module, but found tokenizers==0.14.1.\n")
    assert all("LOG453" not in d["signatures"] for d in ds)


def test_machine_going_down_under_load_is_hardware():
    text = ("When I train on the GPU, after a few minutes my PC does a cold reboot. It just turns off hard.\n"
            "GPU: GTX 1080 Ti\n")
    assert _causes(text)[0] == "hardware-fault"
    clocks = ("CUDA error: an illegal memory access was encountered\n"
              "It happens at random points. After underclocking the card the crashes are gone.\n")
    assert _causes(clocks)[0] == "hardware-fault"


def test_hardware_look_alikes_stay_silent():
    for text in ("Your system will restart to complete the installation.\n",
                 "I rebooted the system and now nvidia-smi works.\n",
                 "Please reboot the machine after installing the driver.\n",
                 "Power Limit                       : 350.00 W\n    Graphics                          : 1410 MHz\n"):
        assert "hardware-fault" not in _causes(text), text


# --------------------------------------------------------------------------- landing 2: families from upstream sources
def test_flash_attn_build_refuses_old_nvcc_is_toolchain():
    text = ("      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a "
            "supported version by running nvcc -V.\n      torch.__version__  = 2.3.1+cu121\n")
    assert _causes(text)[0] == "toolchain"
    # the GPU-capability message of the same package is not the toolkit's
    ds = _diagnoses("ImportError: FlashAttention is only supported on CUDA devices with compute capability >= 8.0\n")
    assert all("LOG454" not in d["signatures"] for d in ds)


def test_operation_not_supported_reads_its_context():
    comfy = ("Traceback (most recent call last):\n  File \"C:\\ComfyUI\\comfy\\model_management.py\", line 105, in "
             "get_total_memory\n    _, mem_total_cuda = torch.cuda.mem_get_info(dev)\n"
             "RuntimeError: CUDA error: operation not supported\n")
    assert _causes(comfy)[0] == "memory-allocator"
    env = "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python train.py\nRuntimeError: CUDA error: operation not supported\n"
    assert _causes(env)[0] == "memory-allocator"
    nightly = ("pip install --pre torch==2.5.0.dev20240830+cu121 --index-url https://download.pytorch.org/whl/nightly/cu121\n"
               "RuntimeError: CUDA error: operation not supported\n")
    assert _causes(nightly)[0] == "prerelease-regression"
    bare = "RuntimeError: CUDA error: operation not supported\n"
    assert "memory-allocator" not in _causes(bare)[:1]


def test_blas_arch_mismatch_is_the_library_refusing_the_gpu():
    text = "what():  [FT][ERROR] CUDA runtime error: CUBLAS_STATUS_ARCH_MISMATCH open_attention.h:171\nDevice Tesla K40m\n"
    causes = _causes(text)
    assert causes[0] == "math-library-unsupported" and "gpu-arch-unsupported" in causes[:3]


def test_adapter_init_failure_is_hardware_not_a_missing_module():
    text = "[   38.773115] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)\n"
    assert _causes(text)[0] == "hardware-fault"
    # a driver library the process cannot open is still device access
    assert _causes("OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n")[0] != "hardware-fault"


def test_pyannote_version_notice_blames_nothing():
    text = ("Model was trained with pyannote.audio 0.0.1, yours is 3.1.0. Bad things might happen unless you revert "
            "pyannote.audio to 0.x.\nModel was trained with torch 1.10.0+cu102, yours is 2.1.1+cu118. Bad things might "
            "happen unless you revert torch to 1.x.\n")
    assert _causes(text) == []
    # beside a real stack error, the error is still read
    text2 = text + "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file\n"
    assert _causes(text2) != []


def test_ollama_with_cpu_runners_only_is_a_cpu_build():
    cpu = 'time=2024-12-27T13:46:01.758 level=INFO source=routes.go:1339 msg="Dynamic LLM libraries" runners=[cpu]\n'
    assert _causes(cpu)[0] == "cpu-only-build"
    gpu = 'level=INFO source=payload.go:44 msg="Dynamic LLM libraries [cuda_v12 cpu cpu_avx cpu_avx2]"\n'
    assert "cpu-only-build" not in _causes(gpu)


def test_rocm_image_tag_on_an_nvidia_gpu_is_the_wrong_vendor():
    text = ("docker run -itd --gpus=all ollama/ollama:0.4.0-rc5-rocm\nGPU: A100\n"
            "I monitored the GPU usage by `nvidia-smi` that it did not work.\n")
    assert _causes(text)[0] == "wrong-vendor-build"
    ok = "docker run -itd --gpus=all ollama/ollama:0.4.0\nGPU: A100\nI monitored the GPU usage by `nvidia-smi` that it did not work.\n"
    assert "wrong-vendor-build" not in _causes(ok)


def test_nightly_title_case_is_a_prerelease():
    from gpuvet.logs.extract import hints_in

    assert "prerelease" in {h.name for h in hints_in("Nightly broken on cu92.", 1)}
    assert "prerelease" in {h.name for h in hints_in("PyTorch: Nightly", 1)}
    assert "prerelease" not in {h.name for h in hints_in("PyTorch: 2.4.1 (stable)", 1)}


# --------------------------------------------------------------------------- landing 3
def test_paddle_cudnn_warning_blames_only_an_older_loaded_cudnn():
    older = ("W1114 22:57:33.949204    32 device_context.h:397] WARNING: device: 0. The installed Paddle is compiled "
             "with CUDNN 8.1, but CUDNN version in your machine is 8.0, which may cause serious incompatible bug. "
             "Please recompile or reinstall Paddle with compatible CUDNN version.\n")
    assert _causes(older)[0] == "runtime-mismatch"
    same = older.replace("CUDNN 8.1", "CUDNN 8.9").replace("machine is 8.0", "machine is 8.9")
    assert blames_nothing(_causes(same))


def test_ort_provider_dll_that_cannot_load_is_a_runtime_mismatch():
    text = "  Loadlibrary failed with error 126 when trying to load onnxruntime_providers_cuda.dll\n"
    assert _causes(text)[0] == "runtime-mismatch"


def test_nvidia_gpu_names_in_prose():
    def names(text):
        return [r.get("name") for r in parse_nvidia_mentions(text, S) if r.table == "gpu_devices"]

    assert names("I have 2x RTX 3090s") == ["GeForce RTX 3090"]
    assert names("GPU: A6000") == ["RTX A6000"] and names("RTX A4500") == ["RTX A4500"]
    # workstation numbers are no GeForce cards: the Quadro (Turing), Ada and PRO (Blackwell) generations by their word
    assert names("Quadro RTX 5000") == ["Quadro RTX 5000"]
    assert names("RTX 5000 Ada") == ["RTX 5000 Ada"]
    assert names("RTX PRO 6000 Blackwell Server Edition") == ["RTX PRO 6000 Blackwell"]
    assert names("an RTX 6000 card") == ["RTX 6000"]  # generation not known, the vendor is
    kb = KB.load()
    from gpuvet.checks.common import gpu_arch

    def arch(name):
        return gpu_arch(row("gpu_devices", S, vendor="nvidia", name=name), kb)

    assert arch("Quadro RTX 5000") == "sm_75" and arch("RTX 5000 Ada") == "sm_89"
    assert arch("RTX PRO 6000 Blackwell") == "sm_120" and arch("RTX A6000") == "sm_86"
    assert names("model A5000x rev 2") == []


def test_cuda_malloc_async_on_an_old_driver_is_the_driver():
    text = ("RuntimeError: backend:cudaMallocAsync requires CUDA runtime 11.4 or newer, but cudaDriverGetVersion "
            "returned 11020\n")
    causes = _causes(text)
    assert causes[0] == "driver-too-old" and "memory-allocator" in causes[:3]


def test_comfyui_on_rocm_is_no_cuda_malloc_async():
    # ComfyUI turns cudaMallocAsync on only for CUDA torch (cuda_malloc.py: "+cu" in the version)
    text = ("Total VRAM 24560 MB, total RAM 64217 MB\nDevice: cuda:0 AMD Radeon RX 7900 XTX : native\n"
            "  File \"/home/user/ComfyUI/comfy/model_management.py\", line 105, in get_total_memory\n"
            "RuntimeError: HIP error: operation not supported\n")
    assert "memory-allocator" not in _causes(text)[:1]


def test_conda_build_string_names_the_variant():
    def torch_of(line):
        return parse_report(line + "\n").first("framework_builds", name="torch")

    t = torch_of("pytorch                   1.12.1          py3.9_cuda11.3_cudnn8.3.2_0    pytorch")
    assert (t.get("cuda"), t.get("variant")) == ("11.3", "cuda")
    t = torch_of("pytorch                   2.1.2           cuda118py310h5cdf07d_300    conda-forge")
    assert (t.get("cuda"), t.get("variant")) == ("11.8", "cuda")
    assert torch_of("pytorch                   1.12.1          py3.9_cpu_0    pytorch").get("variant") == "cpu"
    assert torch_of("pytorch                   2.1.2           cpu_generic_py310h1e4ec9c_0    conda-forge").get("variant") == "cpu"
    assert torch_of("[conda] pytorch                   2.1.2           py3.10_cuda12.1_cudnn8.9.2_0    pytorch").get("cuda") == "12.1"
    # a pip list row names no variant; a +label still decides
    assert torch_of("torch                     2.0.1").get("variant") in ("", None)
    assert torch_of("torch                     2.0.1+cu118").get("cuda") == "11.8"
