"""ROCm readings that do not depend on a message's wording (issue 9, day 6): the GPU's gfx target against the
official builds' lists (``amd-unlisted-arch`` + an error), the build phase read from the structure of compiler /
CMake / make output, and ROCm's own tools named by the error line.  Lines are from real public threads (the
tuning incidents); each reading has a counter-example."""
from gpuvet.app.diagnose import scan_text as scan
from gpuvet.logs.fallback import error_lines_of, propose
from gpuvet.logs.rank import rank




def causes(text):
    return [d.cause for d in rank(scan(text), learned=None)]


def top(lines):
    props = propose(error_lines_of(enumerate(lines, 1)))
    return props[0].cause if props else None


HAWAII = ("After updating my ROCm setup to v2.0 via apt my OpenCL setup is broken.\n"
          "but executing clinfo now runs into\n``ERROR: clGetPlatformIDs(-1001)``\n"
          "My system is a Ubuntu 18.04.1 (4.15.0-43-generic) with two R9 390 (Hawaii) GPUs\n")


def test_a_gpu_no_official_build_carries_leads_an_error_nothing_else_explains():
    got = rank(scan(HAWAII), learned=None)
    assert got[0].cause == "gpu-arch-unsupported" and got[0].confidence < 0.5
    assert any(e.get("hint") == "amd-unlisted-arch" for e in got[0].evidence)
    # the ROCm tool's own reading (the OpenCL runtime's error) follows it
    assert "other" in [d.cause for d in got]
    # a silent RDNA2 part (RX 6600, gfx1032) with an error no signature knows
    assert causes("ComfyUI on my AMD Radeon RX 6600\nRuntimeError: something went wrong in the sampler\n")[:1] == [
        "gpu-arch-unsupported"]


def test_the_same_error_on_a_supported_or_unnamed_gpu_is_not_an_arch_reading():
    assert "gpu-arch-unsupported" not in causes(HAWAII.replace("two R9 390 (Hawaii) GPUs", "two Radeon RX 7900 XTX GPUs"))
    assert "gpu-arch-unsupported" not in causes(HAWAII.replace("two R9 390 (Hawaii) GPUs", "two GPUs"))
    # no error and no symptom: the GPU's name alone diagnoses nothing
    assert causes("My system has an AMD Radeon RX 6600 (gfx1032) and ROCm 6.2.\n") == []


def test_a_user_code_error_on_such_a_gpu_blames_nothing():
    assert causes("AMD Radeon RX 6600\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\n") == []


def test_a_decisive_message_keeps_its_place():
    got = causes("AMD Radeon RX 6600\nhipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n")
    assert got[:1] == ["gpu-arch-unsupported"]
    got = causes("Radeon RX 6600 XT\nfailed to open /dev/kfd: Permission denied\n")
    assert got and got[0] == "device-access"


def test_build_phase_by_the_structure_of_compiler_output():
    assert top(["/src/oidn/external/composable_kernel/include/ck/block/blockwise_gemm_xdlops.hpp:785:32: error: "
                "no member named 'a_origin' in 'ck::X'"]) == "toolchain"
    assert top(["CMake Error at cmake/public/LoadHIP.cmake:154 (file):"]) == "toolchain"
    assert top(["make[1]: *** [CMakeFiles/Makefile2:644: CMakeFiles/idefix.dir/all] Error 2"]) == "toolchain"
    assert top(["error: Invalid value (Producer: 'LLVM14.0.0git' Reader: 'LLVM 12.0.1jl')"]) == "toolchain"
    # not the build phase: a report that counts no errors, a hint to make something
    assert top(["0 errors"]) is None
    assert top(["Error: make sure that ROCm is installed"]) != "toolchain"


def test_an_error_of_one_of_rocms_own_tools_reads_as_that_component():
    assert top(["[rocprofv3] Fatal error: rocprof-trace-decoder library path not found in ['', '/opt/rocm-7.1.1/lib']"]) \
        == "other"
    assert top(["aqlprofile API table load failed: HSA_STATUS_ERROR: A generic error has occurred."]) == "other"
    assert top(["**roctracer: Loading 'libkfdwrapper64.so' failed, (null)**", "Aborted (core dumped)"]) == "other"
    assert top(["terminate called after throwing an instance of 'migraphx::version_1::exception'"]) == "other"
    # a ROCm library whose own layer has words keeps that layer
    assert top(["ImportError: librocm_smi64.so.1: cannot open shared object file: No such file or directory"]) \
        == "runtime-mismatch"


def test_an_out_of_memory_report_is_not_read_as_the_gpus_target():
    # torch-directml's allocation failure on an RX 6700 XT (gfx1031): capacity, not missing kernels
    text = ('"Server execution error: Could not allocate tensor with 1073741824 bytes. There is not enough GPU video '
            'memory available."\ni have AMD GPU RX 6700 XT 12GB\n')
    assert "gpu-arch-unsupported" not in causes(text)


def test_a_pasted_node_only_root_can_open_is_device_access():
    from conftest import run_cli

    text = ("Hi, my `/dev/kfd` device has the wrong permissions, which means that ROCm only runs for root.\n"
            "$ ls -la /dev | grep kfd\ncrw-------   1 root    root    234,   0 Mai 21 05:13 kfd\n")
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert diags and diags[0]["cause"] == "device-access" and "ENV061" in diags[0]["checks"]
    # the usual mode (group render may read and write): no finding from the mode alone
    ok = text.replace("crw-------   1 root    root ", "crw-rw----   1 root    render")
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=ok).json()["diagnoses"]
    assert all("ENV061" not in d["checks"] for d in diags)
    # a directory or a regular file called kfd is no device node
    assert all("ENV061" not in d["checks"] for d in run_cli(
        ["diagnose", "--format", "json", "-"], stdin=text.replace("crw-------", "drwx------")).json()["diagnoses"])


def test_a_builds_target_list_is_not_the_gpu_of_the_machine():
    # jaxlib's ROCm build command lists the targets it compiles for (gfx803 among them): no GPU is named
    text = ("When building v0.4.16 on Arch Linux, I ran into an issue where the amdhip64 and roctracer libs can't be found.\n"
            '  python build/build.py --enable_rocm "--rocm_amdgpu_targets=gfx803,gfx900,gfx906,gfx908,gfx90a,gfx1030"\n')
    assert "gpu-arch-unsupported" not in causes(text)
    assert "gpu-arch-unsupported" not in causes("export PYTORCH_ROCM_ARCH=gfx1032\nRuntimeError: build failed\n")
