"""ROCm readings that do not depend on a message's wording (issue 9, day 6): the GPU's gfx target against the
official builds' lists (``amd-unlisted-arch`` + an error), the build phase read from the structure of compiler /
CMake / make output, and ROCm's own tools named by the error line.  Lines are from real public threads (the
tuning incidents); each reading has a counter-example."""
from gpuvet.logs.fallback import error_lines_of, propose
from gpuvet.logs.match import Scanner
from gpuvet.logs.rank import rank
from gpuvet.logs.signatures import load_catalog


def scan(text):
    sc = Scanner(load_catalog())
    sc.feed_text(text)
    return sc.result


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
