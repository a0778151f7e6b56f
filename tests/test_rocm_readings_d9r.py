"""ROCm readings of day 9 (d9r): the build variant and the GPU vendor, wherever a report states them.

A CUDA (NVIDIA) build on an AMD machine is the wrong-vendor-build cause whatever the error says.  Day 8 read the AMD
side only from a GPU model the text names ("RX 7900 XTX", "gfx1100"); reports as often state it in words: "I
installed ROCm", "installed for AMD", "comfy install --amd", "Ubuntu, AMD GPU".  And they state the CUDA side in words
too: "installs CUDA torch instead of ROCm torch", "left the container with a CUDA torch build".  Both are facts of the
text (PyTorch's install matrix: one wheel per vendor, https://pytorch.org/get-started/locally/); the look-alikes
below (an NVIDIA GPU named, an AMD CPU, collect_env's empty ROCm rows, a ROCm build or ZLUDA beside it, the
"not compiled with CUDA" message of a CPU build) must stay silent.
"""
import re

from gpuvet.logs.extract import HINTS
from gpuvet.logs.match import Scanner
from gpuvet.logs.rank import rank, vendor_contradiction
from gpuvet.logs.signatures import load_catalog


def scan(text: str):
    sc = Scanner(load_catalog())
    sc.feed_text(text)
    return sc.result


def ranked(text: str) -> list[str]:
    return [d.cause for d in rank(scan(text), (), learned=None)]


AMD_SAID = re.compile(HINTS["amd-said"])
CUDA_SAID = re.compile(HINTS["cuda-build-said"])

# the shapes of real reports (paraphrased): ROCm installed, then a CUDA-only framework build imported
ROCM_THEN_TF_GPU = """\
I installed ROCm and the HelloWorld example ran through without any issues. Afterwards, I installed tensorflow-gpu.
Traceback (most recent call last):
  File "/home/user/.local/lib/python3.5/site-packages/tensorflow/python/pywrap_tensorflow.py", line 58, in <module>
ImportError: libcublas.so.9.0: cannot open shared object file: No such file or directory
"""
# an installer's AMD option that fetched the CUDA wheel (the reporter says so)
INSTALLER_AMD_OPTION = """\
comfy install --amd installs CUDA torch instead of ROCm torch. pip sees PyPI and the ROCm index at once and picks the
higher-versioned CUDA torch from PyPI over the ROCm build.
"""
# an AMD GPU named and the CUDA build stated in words
AMD_GPU_CUDA_TORCH_SAID = """\
- 2x AMD Radeon RX 7900 XTX, ROCm 6.4 at /opt/rocm
Later dependency installs replaced torch from the default index: the running container had a CUDA torch build, no HIP
runtime, and gpu_available: false.
"""


def test_the_amd_side_said_in_words():
    for said in ("I use an AMD GPU", "I installed this for AMD", "comfy install --amd", "I installed ROCm 6.2",
                 "Ubuntu, AMD GPU; ComfyUI installed", "running on an AMD card", "torch from whl/rocm6.2"):
        assert AMD_SAID.search(said), said
    for not_said in ("AMD Ryzen 9 5950X 16-Core Processor", "on AMD EPYC 7763", "with AMD Threadripper",
                     "ROCM used to build PyTorch: N/A", "ROCm: N/A", "ROCm version: None", "HIP runtime version: N/A",
                     "Linux-5.15.0-x86_64 amd64", "Architecture: x86_64, vendor AuthenticAMD"):
        assert not AMD_SAID.search(not_said), not_said


def test_the_cuda_build_said_in_words():
    for said in ("installs CUDA torch instead of ROCm torch", "pip installed the CUDA version of PyTorch",
                 "a CUDA torch build", "it pulled torch for CUDA 12.1", "the NVIDIA build of torch", "torch cu121 wheel"):
        assert CUDA_SAID.search(said), said
    # a CPU build's message, and a statement about CUDA support, name no CUDA build
    for not_said in ("AssertionError: Torch not compiled with CUDA enabled", "is torch with CUDA support needed?",
                     "CUDA error: out of memory", "I installed CUDA 12.4 and cuDNN"):
        assert not CUDA_SAID.search(not_said), not_said


def test_rocm_said_and_a_cuda_only_library_looked_for_is_a_wrong_vendor_build():
    assert vendor_contradiction(scan(ROCM_THEN_TF_GPU)) is not None
    assert ranked(ROCM_THEN_TF_GPU)[0] == "wrong-vendor-build"


def test_the_cuda_build_said_on_an_amd_machine_is_a_wrong_vendor_build():
    assert ranked(INSTALLER_AMD_OPTION)[0] == "wrong-vendor-build"
    assert ranked(AMD_GPU_CUDA_TORCH_SAID)[0] == "wrong-vendor-build"


def test_look_alikes_stay_silent():
    # an NVIDIA GPU named: the CUDA library is that machine's own (ROCm only mentioned)
    nv = "GPU 0: NVIDIA GeForce RTX 4090\nI also tried ROCm on another box.\n" + ROCM_THEN_TF_GPU.split("\n", 1)[1]
    assert vendor_contradiction(scan(nv)) is None
    # an AMD CPU is no AMD GPU
    cpu = ("CPU: AMD Ryzen 9 7950X 16-Core Processor\n"
           "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n")
    assert vendor_contradiction(scan(cpu)) is None
    assert "wrong-vendor-build" not in ranked(cpu)
    # collect_env of a CUDA build on a machine without a GPU prints empty ROCm rows
    env = ("PyTorch version: 2.3.0+cu121\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\n"
           "HIP runtime version: N/A\nMIOpen runtime version: N/A\nCPU:\nModel name: AMD EPYC 7763 64-Core Processor\n"
           "RuntimeError: Found no NVIDIA driver on your system.\n")
    assert vendor_contradiction(scan(env)) is None
    # the ROCm build is what got installed (its label is in the text): no contradiction
    rocm_won = INSTALLER_AMD_OPTION + "Successfully installed torch-2.5.1+rocm6.2\n"
    assert vendor_contradiction(scan(rocm_won)) is None
    # ZLUDA runs CUDA builds on AMD GPUs on purpose
    zluda = "I use ZLUDA on my AMD GPU with a CUDA torch build.\nRuntimeError: CUDA error: named symbol not found\n"
    assert vendor_contradiction(scan(zluda)) is None
    # a CPU build's message on an AMD machine is not a CUDA build
    cpu_build = "I use an AMD GPU.\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert vendor_contradiction(scan(cpu_build)) is None


# ----------------------------------------------------------------------------------- a CPU-only build on a GPU machine
from gpuvet.logs.rank import cpu_build_on_gpu  # noqa: E402

CPU_SAID = re.compile(HINTS["cpu-build-said"])

# an installer's log: it found the AMD GPU but not the ROCm version, and installed the CPU wheel
INSTALLER_CPU_FALLBACK = """\
[WARN] AMD GPU detected, but no ROCm/HIP install was found to select the matching
       GPU PyTorch build -- falling back to CPU-only PyTorch.
  gpu            AMD Radeon RX 9070 XT (gfx1201)
  deps           ... torch 2.10.0+cpu detected
"""


def test_the_cpu_build_said_or_shown():
    for said in ("falling back to CPU-only PyTorch", "pip install torch resulted in the CPU version of torch",
                 "torch 2.10.0+cpu detected", "PyTorch 2.7.0+cpu", "it installed the CPU-only build of torch"):
        assert CPU_SAID.search(said), said
    for not_said in ("torch.device('cpu')", "the CPU is at 100%", "torch 2.10.0+rocm7.1", "CPU: AMD Ryzen 9",
                     "Torch not compiled with CUDA enabled"):
        assert not CPU_SAID.search(not_said), not_said


def test_a_cpu_build_on_an_amd_gpu_machine_is_cpu_only_build():
    assert cpu_build_on_gpu(scan(INSTALLER_CPU_FALLBACK)) is not None
    assert ranked(INSTALLER_CPU_FALLBACK)[0] == "cpu-only-build"
    # the same on an NVIDIA machine, said in words
    nv = ("GPU 0: NVIDIA GeForce RTX 4070\nEverything runs slowly: pip install torch resulted in the CPU version of "
          "torch, and the GPU is not used at all.\n")
    assert ranked(nv)[0] == "cpu-only-build"


def test_cpu_build_look_alikes_stay_silent():
    # DirectML and ZLUDA set-ups run a CPU torch on purpose
    dml = "AMD Radeon RX 6700 XT with torch-directml; torch 2.3.1+cpu\nRuntimeError: DirectML device lost\n"
    assert cpu_build_on_gpu(scan(dml)) is None
    zluda = "ZLUDA on an AMD Radeon RX 6800: Using CPU-only torch\nRuntimeError: ZLUDA not loaded\n"
    assert cpu_build_on_gpu(scan(zluda)) is None
    # a GPU build in the text too (before / after, or the other environment): not decided here
    both = INSTALLER_CPU_FALLBACK + "After reinstalling: torch 2.10.0+rocm7.1\n"
    assert cpu_build_on_gpu(scan(both)) is None
    # no GPU named, or only an AMD CPU
    assert cpu_build_on_gpu(scan("torch 2.7.0+cpu\nRuntimeError: boom\n")) is None
    assert cpu_build_on_gpu(scan("CPU: AMD Ryzen 7 5800X\ntorch 2.7.0+cpu\nRuntimeError: boom\n")) is None
    # the program asked for the CPU
    asked = "GPU: AMD Radeon RX 7900 XTX\ntorch 2.7.0+cpu\nmodel.to(device='cpu')\nRuntimeError: shape mismatch\n"
    assert cpu_build_on_gpu(scan(asked)) is None
    # a listing without any failure: nothing to explain
    assert "cpu-only-build" not in ranked("GPU: AMD Radeon RX 7900 XTX\ntorch 2.7.0+cpu\n")


# ------------------------------------------------------- LOG700: the GPU's target outside the program's own list
# AITER (aiter/jit/utils/chip_info.py) raises KeyError(f"Unknown GPU architecture: {gfx}. Supported architectures:
# {list(gfx_mapping.keys())}"); LM Studio's ROCm runtime survey reports the targets it was built for.
AITER_UNKNOWN_ARCH = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/aiter/jit/utils/chip_info.py", line 63, in get_gfx_custom_op_core
    return gfx_mapping[gfx]
KeyError: 'gfx1101'
During handling of the above exception, another exception occurred:
KeyError: "Unknown GPU architecture: gfx1101. Supported architectures: ['native', 'gfx90a', 'gfx908', 'gfx942', 'gfx1100', 'gfx950']"
"""
LMSTUDIO_SURVEY = """\
Radeon 890M (gfx1150) detected but not recognized by the ROCm llama.cpp engine, it falls back to Vulkan.
    "compatibility": {
      "status": "noSupportedGpus",
      "message": "No ROCm GPUs detected of supported targets: gfx1030, gfx1100, gfx1101, gfx1102, gfx1151, gfx1200, gfx1201"
    },
"""


def test_a_gpu_target_outside_the_programs_own_list_is_gpu_arch_unsupported():
    for text in (AITER_UNKNOWN_ARCH, LMSTUDIO_SURVEY):
        sc = scan(text)
        assert "LOG700" in sc.matches
        assert ranked(text)[0] == "gpu-arch-unsupported"


def test_log700_look_alikes_stay_silent():
    for text in ("WARNING: Unknown GPU architecture: 8.9, defaulting to sm_80\n",
                 "print_warning Unknown GPU architecture: NVIDIA GeForce RTX 4090\n",
                 "Supported architectures: gfx90a, gfx942\n",
                 "No ROCm GPUs detected\n",
                 "ROCm GPUs detected of supported targets: gfx1100 (RX 7900 XTX) ok\n"):
        assert "LOG700" not in scan(text).matches, text
