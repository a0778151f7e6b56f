"""Context hints that settle vendor and architecture from what a report names (rules learnt from the held-out
incidents, bench/incidents-heldout), and the rankings they drive."""
import pytest

from gpuvet.app.diagnose import diagnose_text
from gpuvet.logs.extract import hints_in
from gpuvet.logs.rank import blames_nothing


def names(text):
    return {h.name for h in hints_in(text, 1)}


@pytest.mark.parametrize("text,present,absent", [
    ("GPU: Nvidia GeForce RTX 3050 Laptop GPU", {"nvidia-gpu"}, {"amd-gpu"}),
    ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", {"hip-error"}, {"amd-gpu", "nvidia-gpu"}),
    ("i use rx 5500xt and override to gfx1030.", {"amd-gpu", "amd-unlisted-arch", "hsa-override"}, set()),
    ("i have an rx 6600 and a i5 8400", {"amd-unlisted-arch"}, set()),
    ("AMD Radeon RX 6800 XT", {"amd-gpu"}, {"amd-unlisted-arch"}),
    ("AMD Radeon RX 7900 XTX", {"amd-gpu"}, {"amd-unlisted-arch"}),
    ("rocblaslt error: Cannot read \"TensileLibrary_lazy_gfx906.dat\"", {"rocblas-only-arch"}, set()),
    ("hipblaslt error: Cannot read TensileLibrary_lazy_gfx1100.dat", set(), {"rocblas-only-arch"}),
    ("please override the function to return", set(), {"hsa-override"}),
    ("rocBLAS error: Could not load /opt/rocm-6.0.0/lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat",
     {"tensile-supported-arch"}, set()),
    ("TensileLibrary_lazy_gfx1030.dat TensileLibrary_lazy_gfx1100.dat", set(), {"tensile-supported-arch"}),
    ("rocBLAS error: Cannot read TensileLibrary.dat: No such file or directory for GPU arch : gfx1201", set(),
     {"tensile-supported-arch"}),
    ("2x AMD Radeon (TM) Pro WX 5100 Graphics", {"amd-unlisted-arch"}, set()),
])
def test_hints(text, present, absent):
    got = names(text)
    assert present <= got and not (absent & got), got


def causes(text):
    return [d["cause"] for d in diagnose_text(text).extra["diagnoses"]]


def test_hip_error_on_nvidia_only_machine_is_wrong_vendor():
    msg = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"
    assert causes("GPU: NVIDIA GeForce RTX 3050 Laptop GPU\n" + msg)[0] == "wrong-vendor-build"
    assert causes("GPU: AMD Radeon RX 6600\n" + msg)[0] == "gpu-arch-unsupported"
    assert causes(msg)[0] == "gpu-arch-unsupported"


def test_memory_fault_on_unlisted_arch_is_arch():
    fault = ("Device::callbackQueue aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent "
             "attempted to access memory beyond the largest legal address. code: 0x29\n")
    assert causes("GPU: Radeon RX 5700 XT\n" + fault)[0] == "gpu-arch-unsupported"
    assert causes("GPU: Radeon RX 7900 XTX\n" + fault)[0] != "gpu-arch-unsupported"


def test_hipblaslt_kernels_missing():
    on906 = 'rocblaslt error: Cannot read "TensileLibrary_lazy_gfx906.dat" (or .zlib variant): No such file or directory\n'
    on1036 = "hipblaslt error: Cannot read /opt/rocm/lib/hipblaslt/library/TensileLibrary_lazy_gfx1036.dat: No such file or directory\n"
    assert causes(on906)[0] == "math-library-unsupported"
    assert causes(on1036)[0] == "gpu-arch-unsupported" and "math-library-unsupported" in causes(on1036)[:3]


def test_std_header_missing_is_toolchain_but_project_header_is_not():
    assert causes("fatal error: stddef.h: No such file or directory\n")[:1] == ["toolchain"]
    # a project's own header: no signature blames the toolchain (at most the learned fallback leans there, worded
    # as its reading, below any signature)
    project = diagnose_text("fatal error: mylib/config.h: No such file or directory\n").extra["diagnoses"]
    assert all(d["signatures"] == ["learned"] and d["confidence"] <= 0.5 for d in project if d["cause"] == "toolchain")


def test_tensile_load_failure_for_a_supported_arch_is_a_version_mix():
    text = ("rocBLAS error: Could not load /opt/rocm-6.0.0/lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat\n"
            "rocBLAS error: Could not initialize Tensile library\n")
    assert causes(text)[0] == "runtime-mismatch" and "gpu-arch-unsupported" in causes(text)[:3]
    unsupported = "rocBLAS error: Cannot read TensileLibrary.dat: No such file or directory for GPU arch : gfx1036\n"
    assert causes(unsupported)[0] == "gpu-arch-unsupported"


def test_generic_runtime_error_under_a_nightly_is_a_regression_candidate():
    err = "RuntimeError: CUDA error: operation not supported\n"
    assert causes("pip install --pre torch==2.5.0.dev20240830+cu121\n" + err)[0] == "prerelease-regression"
    assert "prerelease-regression" not in causes("torch==2.4.0+cu121\n" + err)


def test_undefined_torch_symbol_in_a_companion_library_is_a_companion_mismatch():
    ta = ("OSError: /usr/local/lib/python3.8/dist-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: "
          "_ZNK3c107SymBool10guard_boolEPKcl\n")
    assert causes(ta)[0] == "companion-mismatch"
    ext = ("ImportError: /venv/site-packages/some_ext/_C.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
           "_ZN3c1017RegisterOperatorsD1Ev\n")
    assert causes(ext)[0] == "extension-abi"


def test_companion_cuda_version_check_and_driver_spellings():
    assert causes("RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. "
                  "PyTorch has CUDA version 11.8 whereas TorchAudio has CUDA version 11.7.\n")[0] == "companion-mismatch"
    assert causes("I find the error CUDAError InsufficientDriver. My CUDA driver is 570.133.20.\n")[0] == "driver-too-old"


def test_jax_plugin_that_cannot_load_cuda_is_not_a_cpu_only_jaxlib():
    c = causes("WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load CUDA. "
               "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
    assert c[0] == "runtime-mismatch"
    assert blames_nothing(causes("Unable to load checkpoint from disk\n"))


def test_hip_offload_flags_reaching_a_host_compiler_and_nvcc_spellings_are_toolchain():
    assert causes("c++: error: unrecognized command line option '--offload-arch=gfx900'; did you mean "
                  "'--offload-abi=ilp32'?\n")[0] == "toolchain"
    assert causes("clang-10: error: unsupported option '--offload-arch=gfx900'\n")[0] == "toolchain"
    assert causes("it gives me `nvcc fatal unsupported gpu architecture 'compute_86'`\n")[0] == "toolchain"


def test_cudnn_engine_and_onnxruntime_provider_loading():
    assert causes("RuntimeError: GET was unable to find an engine to execute this computation\n")[:2] == [
        "runtime-mismatch", "math-library-unsupported"]
    ort = ("[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 CreateExecutionProviderInstance] Failed to create "
           "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.\n")
    assert causes(ort)[0] == "runtime-mismatch"


def test_native_crash_on_an_unlisted_amd_arch_reads_as_arch():
    crash = "Segmentation fault (core dumped)\n"
    assert causes("GPU: AMD Radeon RX 6600 XT (gfx1032)\n" + crash)[0] == "gpu-arch-unsupported"
    assert causes("GPU: AMD Radeon RX 7900 XTX (gfx1100)\n" + crash)[0] == "other"
