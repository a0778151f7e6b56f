"""ROCm readings of day 7 (issue 9, d13r), each with look-alikes that must stay silent.

- LOG500: TensorFlow / XLA (JAX) drop an AMD GPU whose gfx target their build does not list (the messages of
  tensorflow/core/common_runtime/gpu/gpu_device.cc and xla/service/platform_util.cc).
- The reporter saying the work runs on the CPU (``gpu-unused``) is a symptom: with a GPU no official ROCm build
  carries (``amd-unlisted-arch``) it reads gpu-arch-unsupported, as an error line does.  DirectML and Vulkan
  alone (``dml-vulkan``, no ROCm/HIP named) do not depend on ROCm's target lists: no arch reading there.
- A CUDA build of the stack on an AMD machine, read from what only a CUDA build prints or installs: ONNX Runtime's
  CUDA execution provider failing (onnxruntime/core/providers/cuda/cuda_call.cc), the nvidia-*-cuXX pip packages a
  CUDA torch depends on, a program that looks for an NVIDIA GPU.
"""
from gpuvet.app.diagnose import scan_text as scan
from gpuvet.logs.rank import rank




def causes(text):
    return [d.cause for d in rank(scan(text), learned=None)]


# ---------------------------------------------------------------- LOG500
TF_OLD = ("2018-11-11 22:30:37.207580: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1605] Ignoring visible gpu "
          "device (device: 0, name: Device 67a1, pci bus id: 0000:04:00.0) with AMDGPU ISA gfx701. The minimum required "
          "AMDGPU ISA is gfx803.\n")
TF_NEW = ("2024-01-08 08:53:52.438031: I tensorflow/core/common_runtime/gpu/gpu_device.cc:2015] Ignoring visible gpu "
          "device (device: 0, name: Radeon RX 7900 XTX, pci bus id: 0000:0c:00.0) with AMDGPU version : gfx1100. The "
          "supported AMDGPU versions are gfx1030, gfx900, gfx906, gfx908, gfx90a, gfx940, gfx941, gfx942.\n"
          "[]\n")
XLA = ("I0000 00:00:1712345678.1 platform_util.cc:190] StreamExecutor ROCM device (0) is of unsupported AMDGPU version "
       ": gfx1031. The supported AMDGPU versions are gfx900, gfx906, gfx908, gfx90a, gfx942, gfx1030, gfx1100.\n")


def test_tensorflow_and_xla_dropping_the_amd_gpu_read_gpu_arch_unsupported():
    for text in (TF_OLD, TF_NEW, XLA):
        got = rank(scan(text), learned=None)
        assert got and got[0].cause == "gpu-arch-unsupported" and "LOG500" in got[0].signatures, text


def test_the_cuda_twin_and_the_core_count_filter_are_not_log500():
    cuda = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu device (device: 0, name: "
            "GeForce GT 710, pci bus id: 0000:01:00.0, compute capability: 3.5) with Cuda compute capability 3.5. The "
            "minimum required Cuda capability is 3.7.\n")
    cores = ("Ignoring visible gpu device (device: 1, name: AMD Radeon Graphics, pci bus id: 0000:10:00.0) with core "
             "count: 2. The minimum required count is 8. You can adjust this requirement with the env var "
             "TF_MIN_GPU_MULTIPROCESSOR_COUNT.\n")
    created = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device "
               "/job:localhost/replica:0/task:0/device:GPU:0 with 15360 MB memory:  -> device: 0, name: AMD Instinct "
               "MI210, pci bus id: 0000:83:00.0\n")
    for text in (cuda, cores, created):
        assert "LOG500" not in scan(text).matches, text
    assert causes(created) == []


# ---------------------------------------------------------------- the GPU not used, on a GPU no build carries
def test_work_on_the_cpu_with_an_unlisted_radeon_reads_gpu_arch_unsupported():
    texts = [
        # an app that picks the device itself (ollama, LM Studio, koboldcpp), told in prose
        "The responses are slow as the CPU is prioritised. I wish to make use of my RX 6600 XT GPU but it is not "
        "utilising it at all.\n### OS\nWindows\n### Ollama version\n0.1.32\n",
        "the cpu is very high,but the gpu no use\nos: windows 11 23h2\ngpu: 680m\nollama: 0.5.4\n"
        "Driver: 24.20.33.01 AMD-Software-Adrenalin-Edition 24.12.1\n",
        "I removed all overrides from my 5700xt and rebuilt; now btop shows my cpu is being pegged.\n",
        "koboldcpp falls back to the CPU on my Radeon RX 6700 XT\n",
    ]
    for text in texts:
        got = rank(scan(text), learned=None)
        assert got and got[0].cause == "gpu-arch-unsupported", text
        assert any(e.get("hint") == "amd-unlisted-arch" for e in got[0].evidence)


def test_work_on_the_cpu_without_an_unlisted_gpu_is_no_arch_reading():
    # a GPU the official builds carry, or no GPU named: the symptom alone names no layer
    assert "gpu-arch-unsupported" not in causes("ollama falls back to the CPU on my Radeon RX 7900 XTX\n")
    assert causes("ollama falls back to the CPU after the update\n") == []
    # a Ryzen CPU of the same number is no Radeon ("5700X", "5700X3D")
    assert causes("It runs on the CPU only. Ryzen 7 5700X, 32 GB RAM\n") == []
    # the GPU named but nothing wrong said
    assert causes("My system has an AMD Radeon RX 6600 XT (gfx1032) and it runs fine on the GPU.\n") == []


def test_directml_or_vulkan_alone_do_not_read_rocm_target_lists():
    dml = ("dml_command_recorder.cc:366 Check failed: (((HRESULT)((dml_device_->GetDeviceRemovedReason()))) >= 0) == "
           "true (0 vs. 1)\nI also ran into this problem with ai_benchmark. My GPU is Rx 580.\n")
    vulkan = ("llama.cpp Vulkan backend crashes on pipeline creation (Mesa RADV 25.0.7)\nGPU: Radeon RX 580 (Polaris)\n"
              "Segmentation fault (core dumped)\n")
    for text in (dml, vulkan):
        assert "gpu-arch-unsupported" not in causes(text), text
    # ... while ROCm itself named next to them keeps the reading (the ROCm build fails, the Vulkan one runs)
    both = ("With the ROCm build llama.cpp crashes on my Radeon RX 580, the Vulkan build works.\n"
            "Segmentation fault (core dumped)\n")
    assert causes(both)[:1] == ["gpu-arch-unsupported"]


# ---------------------------------------------------------------- a CUDA build on an AMD machine
ORT = ("RuntimeError: D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:121 onnxruntime::CudaCall "
       "CUDA failure 100: no CUDA-capable device is detected ; GPU=0 ; hostname=PC\n")


def test_onnxruntime_cuda_provider_failing_on_a_radeon_is_a_wrong_vendor_build():
    got = causes(ORT + "I think there is a problem with my GPU (Vega 64) but I don't know how to disable it\n")
    assert got[:1] == ["wrong-vendor-build"]
    # the same failure on an NVIDIA machine is not a vendor mix-up
    assert "wrong-vendor-build" not in causes(ORT + "GPU: GeForce RTX 3060\n")


def test_a_program_looking_for_an_nvidia_gpu_on_a_radeon():
    text = ("Linux: AMD Radeon 9070XT : ComfyUI is starting and is trying to detect an nVidia GPU when I have installed "
            "all the AMD dependencies.\n")
    assert causes(text)[:1] == ["wrong-vendor-build"]
    assert "wrong-vendor-build" not in causes(text.replace("AMD Radeon 9070XT", "GeForce RTX 4090"))
    # an AMD GPU and the message, but a ROCm build in use: no contradiction
    assert "wrong-vendor-build" not in causes(text + "torch 2.8.0+rocm6.4\n")


def test_nvidia_cuda_pip_packages_are_a_cuda_build():
    pip = ("Collecting nvidia-cudnn-cu12==9.1.0.70 (from torch)\n"
           "Successfully installed nvidia-cublas-cu12-12.4.5.8 nvidia-cudnn-cu12-9.1.0.70 torch-2.5.1\n")
    assert "cuda-build" in scan(pip).hint_names
    err = "RuntimeError: the model fails to load on the GPU\n"
    assert causes(pip + "My GPU is an AMD Radeon RX 7900 XTX.\n" + err)[:1] == ["wrong-vendor-build"]
    assert "wrong-vendor-build" not in causes(pip + "My GPU is a GeForce RTX 4090.\n" + err)
    # the ROCm pip packages are not
    assert "cuda-build" not in scan("Successfully installed rocm-sdk-core-7.1.1 torch-2.9.1+rocm7.1.1\n").hint_names


# ---------------------------------------------------------------- LOG501; ollama's CPU runners (d13c's LOG458)
def test_miopen_database_file_unreadable_reads_kernel_cache_db():
    for text in ("running auto-tune for Convolve\nMIOpen(HIP): Warning [ReadFile] File is unreadable.\n",
                 'MIOpen(HIP): Warning [ParseAndLoadDb] File is unreadable: "/venv/lib/python3.12/site-packages/'
                 '_rocm_sdk_libraries_gfx1151/share/miopen/db/gfx1151_20.HIP.fdb.txt"\n',
                 'File is unreadable: "/opt/rocm/lib/miopen_system_db/gfx942_64.HIP.fdb.txt"\n'):
        assert causes(text)[:1] == ["kernel-cache-db"], text
    # MIOpen's Info-level note on a first run (the user database not written yet), another program's file
    assert "LOG501" not in scan("MIOpen(HIP): Info [Prefetch] File is unreadable: /root/.config/miopen//"
                                "gfx90878.HIP.2_20_0_.ufdb.txt\n").matches
    assert causes("ERROR: File is unreadable: /etc/myapp/config.yaml\n")[:1] != ["kernel-cache-db"]


def test_an_ollama_build_with_cpu_runners_only_is_a_cpu_only_build():
    for line in ('time=2024-04-01T22:37:03.358-06:00 level=INFO source=payload_common.go:140 msg="Dynamic LLM '
                 'libraries [cpu_avx2 cpu cpu_avx]"\n',
                 'time=2026-06-04T15:23:45.234Z level=INFO source=common.go:149 msg="Dynamic LLM libraries" '
                 'runners="[cpu cpu_avx cpu_avx2]"\n',
                 'time=2024-12-27T13:46:01.758 level=INFO source=routes.go:1339 msg="Dynamic LLM libraries" '
                 'runners=[cpu]\n'):
        assert causes(line + 'level=INFO source=gpu.go:347 msg="no compatible GPUs were discovered"\n')[:1] == [
            "cpu-only-build"]
    for line in ('msg="Dynamic LLM libraries [rocm_v5.7 cpu cpu_avx cpu_avx2]"\n',
                 'msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12 rocm]"\n',
                 'msg="Dynamic LLM libraries" runners=[metal]\n'):
        assert "LOG458" not in scan(line).matches, line


# ---------------------------------------------------------------- the linker's diagnostics are the build phase
def test_a_link_error_reads_toolchain_not_a_loaded_library_abi():
    text = ("lld: error: undefined symbol: __oclc_ABI_version\n"
            ">>> referenced by /tmp/hip-stream-778a9f/hip-stream-gfx1100.o:(void copy_looper<float, 1>(float const*))\n")
    assert causes(text)[:1] == ["toolchain"]
    assert causes("ld.lld: error: unable to find library -lamdhip64\n")[:1] == ["toolchain"]
    # a library loaded at run time that misses a symbol stays the extension's ABI
    assert causes("./bench: symbol lookup error: ./bench: undefined symbol: _ZN8hip_impl14function_namesB5cxx11Eb\n")[:1] == [
        "extension-abi"]
    assert causes("ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
                  "undefined symbol: _ZN3c104cuda9SetDeviceEi\n")[:1] == ["extension-abi"]
    # "capability" holds the letters a-b-i: no ABI reading from it
    assert "extension-abi" not in causes("RuntimeError: the GPU compute capability is not supported by this "
                                         "operation\n")


# ---------------------------------------------------------------- an integrated GPU next to the discrete one
def test_an_integrated_gpu_with_an_amd_gpu_and_a_crash_reads_gpu_arch_unsupported():
    text = ("If a user is running an AMD GPU on an AMD CPU with an iGPU, the model loader crashes unless "
            "HIP_VISIBLE_DEVICES=0 is set.\nRuntimeError: loading the model on device 1 failed\n")
    got = rank(scan(text), learned=None)
    assert got and got[0].cause == "gpu-arch-unsupported"
    assert any(e.get("hint") == "igpu-said" for e in got[0].evidence)


def test_an_integrated_gpu_look_alikes():
    # Strix Halo's graphics (gfx1151) is the machine's GPU and ROCm carries it
    assert "gpu-arch-unsupported" not in causes(
        "Ryzen AI Max+ 395 with the Radeon 8060S iGPU on an AMD GPU stack\nRuntimeError: loading the model on device 0 failed\n")
    # an iGPU named on an NVIDIA laptop, no AMD GPU: nothing about ROCm targets
    assert "gpu-arch-unsupported" not in causes(
        "Laptop with an Intel iGPU and a GeForce RTX 4060\nRuntimeError: loading the model on device 0 failed\n")
    # a message of its own keeps its reading: the iGPU is only said to be there
    assert causes("My AMD GPU machine also has an iGPU.\nSegmentation fault (core dumped)\n")[:1] != [
        "gpu-arch-unsupported"]
    # no error or symptom: nothing
    assert causes("My AMD GPU setup: an RX 7900 XTX and the CPU's integrated graphics.\n") == []


# ---------------------------------------------------------------- a pre-release build and an error nothing reads
def test_a_nightly_with_an_unknown_error_reads_prerelease_regression():
    text = ("PyTorch version: 2.11.0a0+rocm7.11.0a20260119\nKeyError: 'hipsparselt'\n"
            "RuntimeError: the training step failed\n")
    got = rank(scan(text), learned=None)
    assert got and got[0].cause == "prerelease-regression" and got[0].confidence < 0.5
    assert any(e.get("hint") == "prerelease" for e in got[0].evidence)


def test_the_prerelease_reading_yields_to_any_other_reading_and_needs_an_error():
    # a known message keeps its own reading, the nightly does not join it here
    text = "torch 2.6.0.dev20241213+rocm6.2.4\nRuntimeError: HIP error: invalid device function\n"
    assert causes(text)[:1] == ["gpu-arch-unsupported"] and "prerelease-regression" not in causes(text)
    # a stable build, the same unknown error: nothing
    assert causes("torch 2.5.1+rocm6.2\nRuntimeError: the training step failed\n") == []
    # a nightly named, no error
    assert causes("I installed torch 2.11.0.dev20260101+rocm7.1 from the nightly index.\n") == []
    # out of memory on a nightly is capacity
    assert "prerelease-regression" not in causes(
        "torch 2.11.0.dev20260101+rocm7.1\ntorch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n")
    # the framework refusing the program's own data (a reshape of the wrong size) on a nightly blames nothing
    assert "prerelease-regression" not in causes(
        "torch 2.11.0.dev20260101+rocm7.1\nRuntimeError: shape '[4, 64]' is invalid for input of size 300\n")
    # a user-code error on a nightly blames nothing
    assert causes("torch 2.11.0.dev20260101+rocm7.1\nRuntimeError: mat1 and mat2 shapes cannot be multiplied "
                  "(64x512 and 256x10)\n") == []
