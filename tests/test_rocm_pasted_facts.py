"""Facts about the AMD stack read from pasted text (probes/mentions.py), each on the verbatim lines of a public
thread (URL beside each), and the rule that judges a GPU no official ROCm build carries (BLD110).

Every text below is copied from the thread named (user names and paths as posted); none is made up."""
from __future__ import annotations

from conftest import make_facts, run_cli

from gpuvet import kb as KB
from gpuvet.app.engine import run_checks
from gpuvet.checks.bld import gpu_target_in_no_official_rocm_build as bld110
from gpuvet.model import Outcome, row
from gpuvet.model.versions import channel_of
from gpuvet.probes.mentions import parse_mentions


def rows(text, table, **match):
    return [r for r in parse_mentions(text, "t") if r.table == table and all(r.get(k) == v for k, v in match.items())]


# -- versions of the stack -----------------------------------------------------------------------------
def test_apt_show_rocm_libs_gives_the_release():
    # https://github.com/Dao-AILab/flash-attention/issues/1652
    text = ("flash_attn               2.7.4.post1\ntorch                    2.4.1+rocm6.0\n\napt show rocm-libs -a\n"
            "Package: rocm-libs\nVersion: 6.4.0.60400-47~22.04\n")
    (r,) = rows(text, "runtimes", name="rocm")
    assert r.get("version") == "6.4.0" and "line 6" in r.source and "rocm-libs" in r.source
    (t,) = rows(text, "framework_builds")
    assert t.get("hip") == "6.0"


def test_apt_show_of_an_old_release_without_build_field():
    # https://github.com/ROCm/legacy-rocm-build/issues/419
    text = ("apt show rocm-libs -a\nPackage: rocm-libs\nVersion: 1.8.118\nPriority: optional\nSection: devel\n"
            "Maintainer: Advanced Micro Devices Inc.\nInstalled-Size: 1,024 B\nDepends: rocfft, rocrand, hipblas, rocblas\n")
    assert [r.get("version") for r in rows(text, "runtimes", name="rocm")] == ["1.8"]


def test_a_package_paragraph_of_another_package_is_not_rocm():
    text = "Package: python3-numpy\nVersion: 1:1.24.2-1\n"
    assert not parse_mentions(text, "t")


def test_pytorch_cmake_dpkg_summary():
    # https://github.com/vllm-project/vllm/issues/10855
    text = ("***** Library versions from dpkg *****\n\nrocm-dev VERSION: 6.2.0.60200-66~20.04\n"
            "rocm-device-libs VERSION: 1.0.0.60200-66~20.04\nrocm-libs VERSION: 6.2.0.60200-66~20.04\n"
            "hsakmt-roct-dev VERSION: 20240607.3.8.60200-66~20.04\n")
    assert [r.get("version") for r in rows(text, "runtimes", name="rocm")] == ["6.2.0"]


def test_pip_show_torch():
    # https://github.com/vladmandic/sdnext/issues/3531 (a CUDA build on that machine: the parser reads either)
    text = ("(venv) C:\\Users\\user\\Documents\\Artificial Intelligence\\automatic>pip show torch\nName: torch\n"
            "Version: 2.4.0+cu121\n(venv) C:\\Users\\user\\Documents\\Artificial Intelligence\\automatic>pip show torchvision\n"
            "Name: torchvision\nVersion: 0.20.1+cu124\n")
    (t,) = rows(text, "framework_builds")
    assert t.get("version") == "2.4.0+cu121" and t.get("variant") == "cuda" and "pip show" in t.source


def test_torch_version_hip_printed_alone():
    # https://github.com/deepspeedai/DeepSpeed/issues/5274
    text = '$ python -c "import torch; print(torch.version.hip)"\n6.0.32830-d62f6a171\n'
    (t,) = rows(text, "framework_builds")
    assert t.get("hip") == "6.0.32830-d62f6a171" and t.get("variant") == "rocm" and not t.get("version")


def test_a_bare_version_line_without_the_command_is_not_torch():
    assert not rows("6.0.32830-d62f6a171\n", "framework_builds")


def test_modinfo_amdgpu():
    # https://github.com/ROCm/legacy-rocm-build/issues/1584
    text = ("  - Output of `modinfo amdgpu`\n```\nfilename:       /lib/modules/5.11.0-37-generic/updates/dkms/amdgpu.ko\n"
            "version:        5.11.14\nlicense:        GPL and additional rights\ndescription:    AMD GPU\n")
    (d,) = rows(text, "drivers", vendor="amd")
    assert d.get("version") == "5.11.14" and d.get("component") == "kernel-module" and "modinfo" in d.source


def test_modinfo_of_another_module_is_not_amdgpu():
    # https://github.com/ROCm/legacy-rocm-build/issues/384 (modinfo amdkfd)
    text = ("mnagy@radeon:~$ modinfo amdkfd\nfilename:       /lib/modules/4.16.1-041601-lowlatency/kernel/drivers/gpu/drm/"
            "amd/amdkfd/amdkfd.ko\nversion:        0.7.2\n")
    assert not rows(text, "drivers")


def test_sys_module_amdgpu_version():
    # https://github.com/ROCm/legacy-rocm-build/issues/1889
    text = "I try to run a pytorch project with my RX 6800 (clinfo: gfx_1030)\n/sys/module/amdgpu/version: 5.18.2.22.40\n"
    (d,) = rows(text, "drivers", vendor="amd")
    assert d.get("version") == "5.18.2.22.40"


def test_ldd_shows_which_hip_runtime_is_loaded():
    # https://github.com/ROCm/TheRock/issues/1113
    text = ("(venv) root@beast:/test# ldd ~/venv/lib/python3.12/site-packages/torch/lib/libtorch.so\n"
            "\tlibtorch_hip.so => /root/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so (0x0000710854de6000)\n"
            "\tlibamdhip64.so.7 => /root/venv/lib/python3.12/site-packages/_rocm_sdk_core/lib/libamdhip64.so.7 "
            "(0x0000710852f42000)\n")
    (lib,) = rows(text, "libraries", name="amdhip64")
    assert lib.get("selected") and lib.get("origin") == "pip" and lib.get("version") == "7"


def test_therock_dated_builds_are_prereleases():
    # version strings from https://github.com/ROCm/TheRock/issues (TheRock nightlies and release candidates)
    assert channel_of("2.9.0+rocm7.10.0a20251117") == "nightly"
    assert channel_of("2.7.1+rocm7.0.0rc20250805") == "prerelease"
    assert channel_of("2.5.1+rocm6.2") == "stable"


# -- the GPU, as apps print it ----------------------------------------------------------------------------
def test_gpu_named_by_comfyui_fooocus():
    # https://github.com/lllyasviel/Fooocus/issues/1288
    text = "Always offload VRAM\nDevice: cuda:0 AMD Radeon RX 6600 : native\nVAE dtype: torch.float32\n"
    (g,) = rows(text, "gpu_devices")
    assert g.get("vendor") == "amd" and g.get("name") == "AMD Radeon RX 6600" and g.get("index") == 0


def test_gpus_named_by_llama_cpp():
    # https://github.com/ggml-org/llama.cpp/issues/22013
    text = ("  Device 0: AMD Radeon RX 9070, gfx1201 (0x1201), VMM: no, Wave Size: 32, VRAM: 16304 MiB\n"
            "  Device 1: AMD Radeon 740M Graphics, gfx1103 (0x1103), VMM: no, Wave Size: 32, VRAM: 15594 MiB\n")
    assert [(g.get("index"), g.get("arch")) for g in rows(text, "gpu_devices")] == [(0, "gfx1201"), (1, "gfx1103")]


def test_gpu_named_by_ollama():
    # https://github.com/ollama/ollama/issues/3107
    text = ('time=2024-03-15T21:26:12.458+01:00 level=INFO source=amd_windows.go:87 msg="[0] Name: AMD Radeon RX 6700 XT"\n'
            'time=2024-03-15T21:26:12.459+01:00 level=INFO source=amd_windows.go:90 msg="[0] GcnArchName: gfx1031"\n')
    (g,) = rows(text, "gpu_devices")
    assert g.get("arch") == "gfx1031"


def test_hsa_override_in_a_command_line():
    # https://github.com/ollama/ollama/issues/8765
    (e,) = rows("HSA_OVERRIDE_GFX_VERSION=10.3.0 ./ollama serve\n", "env_vars")
    assert e.get("name") == "HSA_OVERRIDE_GFX_VERSION" and e.get("value") == "10.3.0"


# -- BLD110 ---------------------------------------------------------------------------------------------------
def _bld110(*facts_rows):
    got = run_checks(make_facts(*facts_rows), [bld110], KB.load())
    return got


def gpu(name="", arch=None, index=0):
    return row("gpu_devices", "t", vendor="amd", index=index, name=name, arch=arch)


def test_bld110_fires_on_a_target_no_official_build_carries():
    (f,) = _bld110(gpu("AMD Radeon RX 6600", "gfx1032"))
    assert f.outcome == Outcome.FAILED and "gfx1032" in f.title
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in x.text for x in f.fixes)


def test_bld110_names_the_igpu_next_to_a_supported_gpu():
    got = _bld110(gpu("AMD Radeon RX 9070", "gfx1201", 0), gpu("AMD Radeon 740M Graphics", "gfx1103", 1))
    fails = [f for f in got if f.outcome == Outcome.FAILED]
    assert len(fails) == 1 and "gfx1103" in fails[0].title
    assert any("HIP_VISIBLE_DEVICES=0" in x.text for x in fails[0].fixes)


def test_bld110_passes_a_carried_target_and_an_override():
    assert [f.outcome for f in _bld110(gpu("AMD Radeon RX 7900 XTX", "gfx1100"))] == [Outcome.PASSED]
    ov = row("env_vars", "t", name="HSA_OVERRIDE_GFX_VERSION", value="10.3.0")
    assert [f.outcome for f in _bld110(gpu("AMD Radeon RX 6700 XT", "gfx1031"), ov)] == [Outcome.PASSED]


def test_bld110_leaves_a_known_torch_build_to_bld102():
    t = row("framework_builds", "t", name="torch", version="2.5.1+rocm6.2", variant="rocm", hip="6.2")
    assert all(f.outcome != Outcome.FAILED for f in _bld110(gpu("AMD Radeon RX 6600", "gfx1032"), t))


def test_diagnose_blames_the_gpu_target_for_a_crash_on_it():
    # the Fooocus lines above, then the crash the thread reports
    text = ("Device: cuda:0 AMD Radeon RX 6600 : native\nVAE dtype: torch.float32\nUsing sub quadratic\n"
            "Segmentation fault (core dumped)\n")
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    top = doc["diagnoses"][0]
    assert top["cause"] == "gpu-arch-unsupported" and "BLD110" in top["checks"]


def test_diagnose_hip_api_symbol_is_a_runtime_mismatch():
    # https://github.com/ROCm/legacy-rocm-build/issues/764
    text = ("On upgrading to ROCm 2.3, now importing tensorflow throws this message:\nImportError: /home/user/.local/lib/"
            "python3.6/site-packages/tensorflow/python/../libtensorflow_framework.so: undefined symbol: hipModuleGetGlobal\n")
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    assert doc["diagnoses"][0]["cause"] == "runtime-mismatch" and "LOG200" in doc["diagnoses"][0]["signatures"]


def test_diagnose_onnxruntime_nvidia_build_on_amd():
    # https://github.com/microsoft/onnxruntime/issues/22171
    text = ("lib/python3.12/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py:70: UserWarning: Specified "
            "provider 'ROCMExecutionProvider' is not in available provider names.Available providers: "
            "'TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider'\n")
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    assert doc["diagnoses"][0]["cause"] == "wrong-vendor-build"


def test_gpus_named_by_older_llama_cpp():
    # https://github.com/ggml-org/llama.cpp/issues/8618 (a dGPU and the 780M iGPU; the iGPU's gfx1103 from the KB)
    text = ("Device 0: AMD Radeon RX 7700S, compute capability 11.0, VMM: no\n"
            "Device 1: AMD Radeon 780M, compute capability 11.0, VMM: no\n")
    got = rows(text, "gpu_devices")
    assert [(g.get("index"), g.get("name"), g.get("arch")) for g in got] == [
        (0, "AMD Radeon RX 7700S", None), (1, "AMD Radeon 780M", None)]
    fails = [f for f in _bld110(*got) if f.outcome == Outcome.FAILED]
    assert len(fails) == 1 and "780M" in fails[0].title and "gfx1103" in fails[0].title


def test_diagnose_cpp_extension_found_rocm_but_torch_is_not_hip():
    # https://github.com/vllm-project/vllm/issues/17445 (pip's isolated build env installed the PyPI CUDA torch)
    text = ("/tmp/pip-build-env-hozjdhze/overlay/lib/python3.12/site-packages/torch/_subclasses/functional_tensor.py:276: "
            "UserWarning: Failed to initialize NumPy: No module named 'numpy' (Triggered internally at "
            "/pytorch/torch/csrc/utils/tensor_numpy.cpp:81.)\n"
            "        cpu = _conversion_method_template(device=torch.device(\"cpu\"))\n"
            "      No ROCm runtime is found, using ROCM_HOME='/opt/rocm-6.4.1'\n"
            "      None   12.6\n")
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    assert doc["diagnoses"][0]["cause"] == "wrong-vendor-build" and "LOG201" in doc["diagnoses"][0]["signatures"]
