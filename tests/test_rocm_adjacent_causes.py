"""Adjacent ROCm causes decided by what the text shows (issue 9, day 5): the same message family ranks a different
cause first when a fact in the text (which library needs the symbol, an ISA override, which library is missing)
says so.  Each pair differs only in that fact."""
from __future__ import annotations

import pytest

from conftest import run_cli


def _causes(text: str) -> list[str]:
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    return [d["cause"] for d in r.json()["diagnoses"]]


GLIBCXX = "ImportError: {lib}: version `GLIBCXX_3.4.30' not found (required by {by})\n"


def test_glibcxx_for_a_rocm_library_is_a_mixed_load_path_not_a_compiler_problem():
    # ROCr needs the newer libstdc++ that conda's older copy shadows: two C++ runtimes' libraries on one path
    rocm = _causes(GLIBCXX.format(lib="/opt/conda/lib/libstdc++.so.6", by="/opt/rocm-6.2.0/lib/libhsa-runtime64.so.1"))
    assert rocm[0] == "runtime-mismatch", rocm
    # the same message for torch's own library stays the toolchain reading
    other = _causes(GLIBCXX.format(lib="/lib/x86_64-linux-gnu/libstdc++.so.6", by="/venv/lib/libtorch_python.so"))
    assert other[0] == "toolchain", other


def test_an_unreadable_code_object_is_its_format_unless_the_isa_is_overridden():
    line = ("Error in hsa_executable_load_agent_code_object: HSA_STATUS_ERROR_INVALID_CODE_OBJECT: "
            "The code object is invalid.\n")
    plain = _causes(line)
    assert plain[0] == "toolchain" and "runtime-mismatch" in plain[:3], plain
    overridden = _causes("export HSA_OVERRIDE_GFX_VERSION=10.3.0\n" + line)
    assert overridden[0] == "gpu-arch-unsupported", overridden
    # an ISA the loader refuses is the arch, as before
    assert _causes("hsa_code_object_reader_create_from_memory failed: HSA_STATUS_ERROR_INVALID_ISA_NAME\n")[0] == \
        "gpu-arch-unsupported"


def test_a_vbios_that_does_not_post_is_the_card_not_an_old_driver():
    post = _causes("[drm:atom_op_jump [amdgpu]] *ERROR* atombios stuck in loop for more than 5secs aborting\n"
                   "amdgpu 0000:67:00.0: gpu post error!\namdgpu 0000:67:00.0: Fatal error during GPU init\n")
    assert post[0] == "hardware-fault" and "driver-too-old" in post, post
    firmware = _causes("amdgpu 0000:0b:00.0: Direct firmware load for amdgpu/gc_11_0_0_mes.bin failed with error -2\n"
                       "amdgpu 0000:0b:00.0: Fatal error during GPU init\n")
    assert firmware[0] == "driver-too-old", firmware


@pytest.mark.parametrize("lib,first", [("libdrm.so.2", "other"), ("libamdhip64.so.6", "runtime-mismatch")])
def test_which_library_is_missing_decides(lib, first):
    # a system library ROCm needs (a package dependency left out) is no mix of ROCm releases; ROCm's own is
    causes = _causes(f"OSError: {lib}: cannot open shared object file: No such file or directory\n")
    assert causes[0] == first, causes


def test_miopen_cache_directory_is_the_cache_not_the_library():
    causes = _causes("MIOpen Error: filesystem error: cannot create directories: Permission denied "
                     "[/tmp/miopen-cache/3.5.2.]\n")
    assert causes[0] == "kernel-cache-db", causes


def test_ggml_rocm_backend_prints_hip_strings_under_its_own_label():
    text = ("ggml_cuda_init: found 1 ROCm devices:\n  Device 0: AMD Radeon RX 6800, compute capability 10.3, VMM: no\n"
            "CUDA error: shared object initialization failed\n"
            "  current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2300\n")
    assert _causes(text)[0] == "gpu-arch-unsupported"


def test_render_node_permission_is_device_access_and_other_errnos_are_not():
    assert _causes("amdgpu_device_initialize: amdgpu_query_info(ACCEL_WORKING) failed (-13)\n")[0] == "device-access"
    assert "device-access" not in _causes("amdgpu_device_initialize: amdgpu_query_info(ACCEL_WORKING) failed (-19)\n")[:1]
