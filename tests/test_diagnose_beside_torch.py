"""Diagnosis of the stacks beside torch and of build-vendor facts read from pasted text (issue 9, d9g).

Each test feeds short real-shaped text (messages as the projects print them; sources in signatures.yaml) through
the whole `diagnose` pipeline (scan -> facts -> checks -> rank) and asserts the ranked causes, with a
counter-example that must not get the same answer.
"""
from gpuvet.app.diagnose import diagnose_text
from gpuvet.logs.match import Scanner
from gpuvet.logs.rank import rank, vendor_contradiction
from gpuvet.logs.signatures import load_catalog
from gpuvet.logs.rank import blames_nothing


def causes(text: str) -> list[str]:
    rep = diagnose_text(text, "case.txt")
    return [f.cause for f in rep.findings if f.code.startswith(("LOG", "BLD", "DRV", "RTM", "PKG", "EXT", "LIB", "ENV",
                                                                "CTR", "HW"))
            and f.name.startswith("diagnosis-")]


def ranked(text: str) -> list[str]:
    sc = Scanner(load_catalog())
    sc.feed_text(text)
    return [d.cause for d in rank(sc.result, (), learned=None)]


def test_cuda_library_looked_for_on_an_amd_gpu_is_a_wrong_vendor_build():
    err = "OSError: libcublas.so.10: cannot open shared object file: No such file or directory"
    amd = "GPU: AMD Radeon RX 7900 XTX\n" + err + "\n"
    nv = "GPU: NVIDIA GeForce RTX 3090\n" + err + "\n"
    assert ranked(amd)[0] == "wrong-vendor-build"
    assert "wrong-vendor-build" not in ranked(nv)
    # ZLUDA runs CUDA builds on AMD GPUs on purpose: no contradiction
    sc = Scanner(load_catalog())
    sc.feed_text("ZLUDA on AMD Radeon RX 7900 XTX\n" + err + "\n")
    assert vendor_contradiction(sc.result) is None


def test_rocm_build_on_an_nvidia_gpu_is_a_wrong_vendor_build():
    text = ("GPU 0: NVIDIA GeForce RTX 3060\n"
            "pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/rocm6.0\n"
            "RuntimeError: No HIP GPUs are available\n")
    assert ranked(text)[0] == "wrong-vendor-build"
    assert ranked("RuntimeError: No HIP GPUs are available\n")[:1] != ["wrong-vendor-build"]


def test_both_vendors_named_without_an_error_blame_nothing():
    # a test run / listing naming rocminfo and a +cu130 wheel is not a failure
    text = "SKIPPED [1] tests/test_rocm.py:41: rocminfo is not installed\ntorch 2.11.0+cu130\n3 passed\n"
    assert ranked(text) == []


def test_nvidia_smi_without_driver_is_the_module_on_a_host_and_access_in_a_job_or_container():
    msg = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
           "Make sure that the latest NVIDIA driver is installed and running.\n")
    assert causes(msg)[0] == "other"
    assert causes("srun --gres=gpu:1 --pty bash\n$ nvidia-smi\n" + msg)[0] == "device-access"
    assert causes("$ docker run --rm ubuntu nvidia-smi\n" + msg)[0] == "device-access"


def test_jax_cuda_component_check_is_a_runtime_mismatch_not_a_cpu_build():
    text = ("CUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:\n"
            "Outdated cuDNN installation found.\nVersion JAX was built against: 8907\nMinimum supported: 9100\n"
            "Installed version: 8907\nThe local installation version must be no lower than 9100..\n")
    got = causes(text)
    assert got[0] == "runtime-mismatch"
    old = ("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, "
           "which is newer. The copy of cuDNN that is installed must be at least as new as the version against "
           "which JAX was built.\n")
    assert causes(old)[0] == "runtime-mismatch"
    # a jaxlib without the GPU plugin is still a CPU-only build
    assert causes("An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. "
                  "Falling back to cpu.\n")[0] == "cpu-only-build"


def test_tensorrt_plan_of_another_release_is_a_stale_engine_first():
    text = ("[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::35] Error Code 1: Serialization (Serialization "
            "assertion safeVersionRead == safeSerializationVersion failed.Version tag does not match. Note: Current "
            "Version: 0, Serialized Engine Version: 43)\n"
            "[TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)\n")
    got = causes(text)
    assert got[0] == "kernel-cache-db" and "runtime-mismatch" in got[:3]


def test_onnxruntime_provider_lists():
    cpu = "Available providers: ['AzureExecutionProvider', 'CPUExecutionProvider']\n"
    assert ranked(cpu)[0] == "cpu-only-build"
    assert ranked("Available providers: ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']\n") == []
    other = ("UserWarning: Specified provider 'ROCMExecutionProvider' is not in available provider names."
             "Available providers: 'TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider'\n")
    assert ranked(other)[0] == "wrong-vendor-build"


def test_is_available_false_alone_reads_as_a_cpu_build_and_visible_devices_as_access():
    assert ranked("torch.cuda.is_available() returns False\n")[0] == "cpu-only-build"
    assert ranked("export CUDA_VISIBLE_DEVICES=1\ntorch.cuda.is_available() returns False\n")[0] == "device-access"


def test_prose_symptoms_feed_the_learned_fallback_only_without_error_lines():
    from gpuvet.logs.fallback import is_symptom_line
    from gpuvet.logs.learned import features

    for t in ("ComfyUI is starting and is trying to detect an nVidia GPU",
              "This command installs cpu version instead of cuda.",
              "after gentoo linux sleep, ollama only use cpu",
              "Stuck on `ncclGroupEnd`",
              "[Bug]: AMD GPU not Recognized by Stable-Diffusion-WebUI"):
        assert is_symptom_line(t), t
    for t in ("Is CUDA available: True", "GPU 0: NVIDIA H200", "Vulnerability Tsx async abort:      Not affected",
              "torch 2.11.0+cu130"):
        assert not is_symptom_line(t), t
    prose = [(3, "This command installs cpu version instead of cuda.")]
    f = features([], (), prose)
    assert f.get("<prose>") == 1.0 and "cpu" in f and "<no-error-lines>" not in f
    f = features([(5, "RuntimeError: CUDA error: no kernel image is available")], (), prose)
    assert "<prose>" not in f and "instead" not in f
    assert "<no-error-lines>" in features([], ())


def test_cpu_build_message_from_someone_without_a_gpu_blames_nothing():
    msg = "AssertionError: Torch not compiled with CUDA enabled\n"
    for text in ("Since I don't have a GPU I don't need CUDA, so I installed the CPU-only torch.\n" + msg,
                 "How can i run this code on CPU\nI get this error:\n" + msg):
        assert blames_nothing(diagnose_text(text, "case.txt").extra["diagnoses"]), text
    # with a GPU named, or no such statement, the CPU-only build is the cause
    assert causes("GPU: NVIDIA GeForce RTX 3090\n" + msg)[0] == "cpu-only-build"
    assert causes(msg)[0] == "cpu-only-build"
