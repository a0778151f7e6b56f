"""Build variants read from install transcripts and package metadata (issue 9, day 8, c8).

PyPI's torch (and torchvision, torchaudio, vllm) wheels for Linux x86_64 are the CUDA builds and carry no local
label; the PyTorch index labels every other variant (+cpu, +cuXY, +rocmX.Y, +xpu) and its old unlabelled CPU wheels
are tagged linux_x86_64, never manylinux (https://pypi.org/project/torch/#files,
https://pytorch.org/get-started/previous-versions/).  PyPI's Linux torch also declares the nvidia-*-cuNN runtime
wheels as requirements, which `pip show torch` prints in its Requires field.  Each reading is a fact whoever prints
it; the look-alikes below (labelled wheels, other platforms, a ROCm build beside it) must stay silent.
"""
from gpuvet.app.diagnose import diagnose_text
from gpuvet.logs.match import Scanner
from gpuvet.logs.rank import rank, vendor_contradiction
from gpuvet.logs.signatures import load_catalog
from gpuvet.probes.mentions import parse_mentions


def torch_rows(text: str) -> list[dict]:
    return [dict(r.values) for r in parse_mentions(text, "case.txt") if r.table == "framework_builds"]


def ranked(text: str) -> list[str]:
    sc = Scanner(load_catalog())
    sc.feed_text(text)
    return [d.cause for d in rank(sc.result, (), learned=None)]


def contradiction(text: str):
    sc = Scanner(load_catalog())
    sc.feed_text(text)
    return vendor_contradiction(sc.result)


# pip's transcript of an install that had both PyPI and the ROCm index to choose from
ROCM_INDEX_PYPI_WHEEL = """\
Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/rocm6.0
Collecting torch
  Downloading torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl.metadata (28 kB)
RuntimeError: No CUDA GPUs are available
"""


def test_an_unlabelled_manylinux_x86_64_torch_wheel_is_pypis_cuda_build():
    rows = torch_rows("  Downloading torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl (766.7 MB)\n")
    assert [(r["version"], r["variant"]) for r in rows] == [("2.6.0", "cuda")]
    rows = torch_rows("Downloading https://files.pythonhosted.org/packages/69/60/f685/"
                      "torch-1.1.0-cp36-cp36m-manylinux1_x86_64.whl (676.9MB)\n")
    assert [r["variant"] for r in rows] == ["cuda"]
    rows = torch_rows("torch-2.5.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl\n")
    assert [r["variant"] for r in rows] == ["cuda"]


def test_labelled_or_other_platform_wheels_keep_their_own_variant():
    assert [r["variant"] for r in torch_rows("torch-2.6.0+rocm6.2.4-cp312-cp312-manylinux_2_28_x86_64.whl\n")] == ["rocm"]
    assert [r["variant"] for r in torch_rows("torch-2.6.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl\n")] == ["cpu"]
    assert [r["variant"] for r in torch_rows("torch-2.1.0%2Bcu121-cp310-cp310-linux_x86_64.whl\n")] == ["cuda"]
    # PyPI's aarch64 wheel was a CPU build for years and a CUDA one later: unknown, not guessed
    assert [r["variant"] for r in torch_rows("torch-2.6.0-cp312-cp312-manylinux_2_28_aarch64.whl\n")] == [""]
    # the PyTorch index's old unlabelled CPU wheels are linux_x86_64, not manylinux
    assert [r["variant"] for r in torch_rows("https://download.pytorch.org/whl/cpu/torch-0.4.1-cp36-cp36m-linux_x86_64.whl\n")] == [""]


def test_pip_show_torch_requiring_the_nvidia_runtime_wheels_is_a_cuda_build():
    text = ("$ pip show torch\nName: torch\nVersion: 2.0.1\nSummary: Tensors and Dynamic neural networks\n"
            "Location: /home/user/.local/lib/python3.11/site-packages\n"
            "Requires: filelock, jinja2, networkx, nvidia-cublas-cu11, nvidia-cuda-runtime-cu11, nvidia-cudnn-cu11, "
            "sympy, triton, typing-extensions\nRequired-by: torchvision\n")
    rows = torch_rows(text)
    assert [(r["version"], r["variant"]) for r in rows] == [("2.0.1", "cuda")]
    assert "nvidia-cublas-cu11" in parse_mentions(text, "case.txt")[0].source
    # a ROCm (or CPU) torch requires no NVIDIA wheel: the version alone decides nothing
    plain = text.replace("nvidia-cublas-cu11, nvidia-cuda-runtime-cu11, nvidia-cudnn-cu11, ", "")
    assert [r["variant"] for r in torch_rows(plain)] == [""]
    # the Requires field of the next paragraph (another package) is not torch's
    other = ("Name: torch\nVersion: 2.0.1\nRequires: filelock, sympy\n\nName: jax-cuda12-plugin\nVersion: 0.4.30\n"
             "Requires: nvidia-cublas-cu12\n")
    assert [r["variant"] for r in torch_rows(other)] == [""]


def test_pypis_cuda_wheel_fetched_for_an_amd_install_is_a_wrong_vendor_build():
    assert contradiction(ROCM_INDEX_PYPI_WHEEL) is not None
    assert ranked(ROCM_INDEX_PYPI_WHEEL)[0] == "wrong-vendor-build"
    # the same transcript with an aarch64 wheel (no CUDA build) reads the error alone
    assert "wrong-vendor-build" not in ranked(ROCM_INDEX_PYPI_WHEEL.replace("manylinux1_x86_64", "manylinux_2_28_aarch64"))
    # an AMD GPU named, and pip fetching PyPI's torch
    amd = ("GPU: AMD Radeon RX 7900 XTX\nCollecting torch\n  Downloading torch-2.3.0-cp310-cp310-manylinux1_x86_64.whl\n"
           "AssertionError: Torch not compiled with CUDA enabled\n")
    assert contradiction(amd) is not None


def test_pypi_wheel_look_alikes_stay_silent():
    # the ROCm build won (its wheel or label is in the text): the PyPI companion beside it is no contradiction
    rocm_won = ROCM_INDEX_PYPI_WHEEL.replace("Collecting torch\n", "Collecting torch\n  Downloading "
                                             "torch-2.6.0+rocm6.0-cp312-cp312-manylinux_2_28_x86_64.whl\n")
    assert contradiction(rocm_won) is None
    # an NVIDIA machine fetching PyPI's wheel is the ordinary install
    nv = ROCM_INDEX_PYPI_WHEEL.replace("https://download.pytorch.org/whl/rocm6.0", "https://download.pytorch.org/whl/cu124")
    assert contradiction("GPU 0: NVIDIA GeForce RTX 4090\n" + nv) is None
    assert "wrong-vendor-build" not in ranked("GPU 0: NVIDIA GeForce RTX 4090\n" + nv)
    # an aarch64 wheel is no CUDA build
    arm = ROCM_INDEX_PYPI_WHEEL.replace("manylinux1_x86_64", "manylinux_2_28_aarch64")
    assert contradiction(arm) is None


def test_a_healthy_install_transcript_on_nvidia_diagnoses_nothing():
    text = ("Collecting torch\n  Downloading torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl (766.7 MB)\n"
            "Successfully installed torch-2.6.0 nvidia-cublas-cu12-12.4.5.8\n"
            ">>> torch.cuda.is_available()\nTrue\n")
    rep = diagnose_text(text, "case.txt")
    assert [f.cause for f in rep.findings if f.name.startswith("diagnosis-")] == []


# ---------------------------------------------------------------- CPU-only builds, as each stack prints it
# llama.cpp common/arg.cpp, when llama_supports_gpu_offload() is false (as ggml-org/ci's CPU runs print it)
LLAMA_NO_GPU = """\
+ ./bin/llama-cli --model models/7B/ggml-model-q4_0.gguf -p 'hello' -ngl 99
warning: no usable GPU found, --gpu-layers option will be ignored
warning: one possible reason is that llama.cpp was compiled without GPU support
warning: consult docs/build.md for compilation instructions
build: 4589 (eb7cf15a) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu
"""


def test_llama_cpp_without_a_gpu_backend_is_a_cpu_only_build():
    assert ranked(LLAMA_NO_GPU)[0] == "cpu-only-build"
    # the same run inside a container started without the GPU: the device, not the build, is the first reading
    assert ranked("docker run --rm ghcr.io/ggml-org/llama.cpp:full-cuda\n" + LLAMA_NO_GPU)[0] == "device-access"


def test_llama_cpp_offloading_to_the_gpu_says_nothing():
    healthy = ("ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n"
               "load_tensors: offloading 32 repeating layers to GPU\nload_tensors: offloaded 33/33 layers to GPU\n"
               "warning: consult docs/build.md for compilation instructions\n")
    assert ranked(healthy) == []


def test_dgl_cpu_wheel_asked_for_cuda_is_a_cpu_only_build():
    # dgl src/runtime/c_runtime_api.cc: DeviceAPIManager::GetAPI's CHECK(allow_missing)
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    g = g.to('cuda:0')\n"
            "dgl._ffi.base.DGLError: [10:32:01] /opt/dgl/src/runtime/c_runtime_api.cc:88: Check failed: allow_missing: "
            "Device API cuda is not enabled. Please install the cuda version of dgl.\n")
    assert ranked(text)[0] == "cpu-only-build"
    assert ranked("DGL backend not selected or invalid.  Assuming PyTorch for now.\n") == []


def test_jax_without_a_gpu_platform_is_a_cpu_only_build():
    # jax/_src/xla_bridge.py: canonicalize_platform's error
    text = ("Traceback (most recent call last):\n  File \"t.py\", line 2, in <module>\n    print(jax.devices('gpu'))\n"
            "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. "
            "Platforms present are: cpu\n")
    got = ranked(text)
    assert got[0] == "cpu-only-build" and "device-access" in got
    # a CPU-only jaxlib named beside it settles it; a TPU asked for on a GPU machine is not this
    assert ranked("jaxlib 0.4.30 cpu\n" + text)[0] == "cpu-only-build"
    assert "cpu-only-build" not in ranked("RuntimeError: Unknown backend: 'tpu' requested, but no platforms that are "
                                          "instances of tpu are present. Platforms present are: cpu,cuda\n")


def test_autocast_disabled_for_want_of_cuda_reads_as_no_usable_gpu():
    # torch/amp/autocast_mode.py warns when the build or the machine cannot use the device type asked for
    warn = ("/venv/lib/python3.10/site-packages/torch/amp/autocast_mode.py:265: UserWarning: User provided device_type "
            "of 'cuda', but CUDA is not available. Disabling\n")
    assert ranked(warn)[0] == "cpu-only-build"
    assert ranked("torch 2.3.0+cpu\n" + warn)[0] == "cpu-only-build"
    # the reporter has no GPU: nothing in the stack is to blame
    assert "cpu-only-build" not in ranked("I don't have a GPU, I run it on my laptop's CPU.\n" + warn)[:1]


# ---------------------------------------------------------------- runtime libraries and allocations (piece 3)
def test_paddle_missing_its_cudnn_is_a_runtime_mismatch():
    # paddle/phi/backends/dynload/dynamic_loader.cc, as Windows and Linux print it
    win = ("RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on "
           "is not configured correctly. (error code is 126)\n  Suggestions:\n  1. Check if the third-party dynamic "
           "library (e.g. CUDA, CUDNN) is installed correctly and its version is matched with paddlepaddle you installed.\n")
    assert ranked(win)[0] == "runtime-mismatch"
    linux = ("W0623 12:29:30.035391 62732 dynamic_loader.cc:305] The third-party dynamic library (libcublas.so) that "
             "Paddle depends on is not configured correctly. (error code is libcublas.so: cannot open shared object file: "
             "No such file or directory)\n")
    assert ranked(linux)[0] == "runtime-mismatch"
    # Paddle's own CPU math library missing from a frozen app is packaging, not the CUDA runtime
    mkl = ("PreconditionNotMetError: The third-party dynamic library (mklml.dll) that Paddle depends on is not "
           "configured correctly. (error code is 126)\n")
    assert "runtime-mismatch" not in ranked(mkl)[:1]


def test_ggml_device_allocation_failures_are_memory():
    cuda = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: cudaMalloc failed: out of memory\n"
            "alloc_tensor_range: failed to allocate CUDA0 buffer of size 2147483648\n"
            "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n")
    assert ranked(cuda)[0] == "memory-allocator"
    rocm = "ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 18035509504\n"
    assert ranked(rocm)[0] == "memory-allocator"
    vulkan = ("ggml_vulkan: Device memory allocation of size 1879048192 failed.\n"
              "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
              "llama_kv_cache_init: failed to allocate buffer for kv cache\n")
    assert ranked(vulkan)[0] == "memory-allocator"


def test_ggml_buffer_sizes_of_a_healthy_load_say_nothing():
    healthy = ("llm_load_tensors: offloading 32 repeating layers to GPU\nllm_load_tensors: offloaded 33/33 layers to GPU\n"
               "llm_load_tensors:      ROCm0 buffer size =  3917.87 MiB\nllama_kv_cache_init:      ROCm0 KV buffer size =   256.00 MiB\n")
    assert ranked(healthy) == []


def test_torchvisions_cuda_check_wrapped_over_lines_is_still_read():
    # torchvision/extension.py's _check_cuda_version, as a terminal of 80 columns wraps it
    wrapped = ("RuntimeError: Detected that PyTorch and torchvision were compiled with different\n"
               "CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA \n"
               "Version=11.8. Please reinstall the torchvision that matches your PyTorch \ninstall.\n")
    assert ranked(wrapped)[0] == "companion-mismatch"
    audio = ("RuntimeError: Detected that PyTorch and TorchAudio were compiled with different\nCUDA versions. "
             "PyTorch has CUDA version 11.8 whereas TorchAudio has CUDA version 11.7. Please install the TorchAudio "
             "version that matches your PyTorch version.\n")
    assert ranked(audio)[0] == "companion-mismatch"
    # a matching pair printed by a version check names no mismatch
    assert ranked("PyTorch CUDA: 11.8, torchvision CUDA: 11.8\n") == []


def test_older_ggml_and_hip_vmm_allocation_failures_are_memory():
    old = ("CUDA error 2 at /go/src/github.com/jmorganca/ollama/llm/llama.cpp/gguf/ggml-cuda.cu:9132: out of memory\n"
           "current device: 0\n")
    assert ranked(old)[0] == "memory-allocator"
    assert ranked("ggml/src/ggml-cuda/ggml-cuda.cu:444: HipVMM Failure: out of memory\n")[0] == "memory-allocator"
    # the same check's other errors are other causes: a kernel missing for the GPU is not memory
    assert ranked("CUDA error 98 at /source/llama.cpp/ggml-cuda.cu:7788: invalid device function\n")[0] != "memory-allocator"
