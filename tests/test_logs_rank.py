"""Version facts inside tracebacks, context hints, and ranking (facts + signatures + user-code signals)."""
from gpuvet.app.diagnose import scan_text as scan
from gpuvet.logs.extract import facts_in, hints_in
from gpuvet.logs.rank import blames_nothing, rank, user_code_signals
from gpuvet.model import Evidence, Finding, Outcome, Severity




def causes(diags):
    return [d.cause for d in diags]


def finding(cause, component="framework-build", sev=Severity.ERROR, code="BLD999"):
    return Finding(code=code, name="x", severity=sev, outcome=Outcome.FAILED, title="fact title",
                   evidence=(Evidence("torch 2.3.0+rocm5.7 targets gfx900 gfx906", "pasted"),), cause=cause,
                   component=component)


def test_facts_in_tracebacks_become_rows():
    rows = facts_in("    PyTorch 2.1.0+cu121 built for: PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)", 3)
    assert rows == [] or rows[0].table == "framework_builds"
    rows = facts_in("xFormers was built for: PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)", 4)
    fb = [r for r in rows if r.table == "framework_builds"][0]
    assert fb["version"] == "2.2.0+cpu" and fb["variant"] == "cpu" and fb.source == "log line 4"
    rows = facts_in("UserWarning: The NVIDIA driver on your system is too old (found version 11040).", 9)
    assert rows[0].table == "drivers" and rows[0]["cuda_version"] == "11.4"
    rows = facts_in("ROCk module version 6.3.6 is loaded", 1)
    assert rows[0]["vendor"] == "amd" and rows[0]["version"] == "6.3.6"
    rows = facts_in("| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |", 2)
    assert rows[0]["version"] == "550.54.14" and rows[0]["cuda_version"] == "12.4"


def test_hints():
    names = {h.name for h in hints_in("GPU: AMD Radeon RX 6700 XT (gfx1031)", 1)}
    assert "amd" in names
    names = {h.name for h in hints_in("[pip3] torch==2.4.0+cu121", 1)}
    assert {"nvidia", "cuda-build"} <= names
    assert "prerelease" in {h.name for h in hints_in("torch 2.6.0.dev20241112+rocm6.2", 1)}
    assert not hints_in("epoch 3 loss 0.25", 1)


def test_signature_alone_gives_prior():
    d = rank(scan("RuntimeError: HIP error: invalid device function"))
    assert causes(d)[0] == "gpu-arch-unsupported" and 0 < d[0].confidence <= 1
    assert d[0].evidence[0]["line"] == 1


def test_fact_that_explains_the_error_outranks_prior():
    s = scan("RuntimeError: HIP error: invalid device function")
    d = rank(s, [finding("runtime-mismatch", "runtime", code="RTM999")])
    assert causes(d)[0] == "runtime-mismatch"
    assert "explains the error" in d[0].why or "explains the error" in d[0].title or d[0].checks == ["RTM999"]
    assert d[0].facts and d[0].facts[0]["check"] == "RTM999"


def test_unrelated_fact_stays_below_specific_signature():
    s = scan("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    d = rank(s, [finding("driver-too-old", "driver", code="DRV999")])
    assert causes(d)[0] == "memory-allocator" and "driver-too-old" in causes(d)


def test_fact_alone_when_no_signature():
    d = rank(scan(">>> import torch\n>>> print('hello')"), [finding("cpu-only-build")])
    assert causes(d) == ["cpu-only-build"]


def test_context_settles_ambiguous_message():
    amd = scan("GPU: AMD Radeon RX 7900 XTX\nRuntimeError: Found no NVIDIA driver on your system.")
    assert causes(rank(amd))[0] == "wrong-vendor-build"
    cpu = scan("[pip3] torch==2.3.0+cpu\n>>> torch.cuda.is_available()\nFalse")
    assert causes(rank(cpu))[0] == "cpu-only-build"
    nightly = scan("torch 2.7.0.dev20250301+cu128\nImportError: libcudnn_graph.so.9: cannot open shared object file")
    assert causes(rank(nightly))[0] == "prerelease-regression"
    stable = scan("torch 2.5.1+cu124\nImportError: libcudnn_graph.so.9: cannot open shared object file")
    assert causes(rank(stable))[0] == "runtime-mismatch"


def test_is_available_read_with_the_value_printed_on_the_next_line():
    """LOG242's REPL form: the call on one line, its value on the next.  A healthy True next to an OOM adds no
    cpu-only-build reading (day 3's false positive); False on the next line (or after one blank line) does."""
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
           "of 79.25 GiB of which 1.02 GiB is free.")
    healthy = scan(f">>> import torch\n>>> print(torch.cuda.is_available())\nTrue\n{oom}")
    assert "LOG242" not in healthy.matches
    assert "cpu-only-build" not in causes(rank(healthy))
    for value in ("False", "\nFalse"):
        unhealthy = scan(f">>> import torch\n>>> print(torch.cuda.is_available())\n{value}\n")
        m = unhealthy.matches["LOG242"][0]
        assert m.line == 2 and m.text.endswith("/ False"), m
    late = scan(">>> torch.cuda.is_available()\n>>> x = 1\nFalse")  # not the call's value
    assert "LOG242" not in late.matches


def test_oom_whose_numbers_show_the_workload_filling_the_gpu_blames_nothing():
    """torch's OOM message carries its numbers: a request over what is free while the process's own tensors hold the
    GPU (both message formats) is the workload, not the stack; a large unallocated reserve (fragmentation), or a
    request on a GPU the process barely uses, stays memory-allocator."""
    full_new = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacty of "
                "8.00 GiB of which 0 bytes is free. Of the allocated memory 7.44 GiB is allocated by PyTorch, and 3.16 MiB "
                "is reserved by PyTorch but unallocated.")
    full_old = ("RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 6.00 GiB total capacity; 4.11 GiB "
                "already allocated; 34.82 MiB free; 4.42 GiB reserved in total by PyTorch)")
    for text in (full_new, full_old):
        s = scan(text)
        assert "oom-workload" in s.hints and blames_nothing(rank(s)), text
        assert user_code_signals(s)[0]["signature"] == "LOG100"
    fragmented = ("HIP out of memory. Tried to allocate 8.54 GiB. GPU 0 has a total capacity of 15.92 GiB of which 0 bytes "
                  "is free. Of the allocated memory 3.97 GiB is allocated by PyTorch, and 9.27 GiB is reserved by PyTorch "
                  "but unallocated.")
    old_fragmented = ("CUDA out of memory. Tried to allocate 2.93 GiB (GPU 0; 23.80 GiB total capacity; 12.04 GiB already "
                      "allocated; 2.82 GiB free; 19.69 GiB reserved in total by Pytorch)")
    barely_used = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of "
                   "15.24 GiB of which 15.09 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 "
                   "bytes is reserved by PyTorch but unallocated.")
    for text in (fragmented, old_fragmented, barely_used, "RuntimeError: CUDA error: out of memory"):
        s = scan(text)
        assert "oom-workload" not in s.hints and causes(rank(s))[:1] == ["memory-allocator"], text


def test_installer_and_capability_facts_name_their_cause():
    """A build variant is a fact whoever prints it (a Windows wheel without +cu, pip keeping a Windows torch, a
    conda-forge cpu_ build, is_built_with_cuda() answering False); vLLM's capability gate and the report tying the
    failure to a nightly name their causes; xFormers refusing CPU inputs is the user's code."""
    for text in ("Collecting torch===1.7.1\n  Downloading torch-1.7.1-cp38-cp38-win_amd64.whl (184.0 MB)\n"
                 "Successfully installed torch-1.7.1",
                 "Requirement already satisfied: torch in d:\\coding\\anaconda\\lib\\site-packages (2.0.0)",
                 "  + pytorch                         2.5.1  cpu_mkl_py312_h4b2c6b2_108       conda-forge     Cached",
                 ">>> tf.test.is_built_with_cuda()\nFalse"):
        assert causes(rank(scan(text)))[:1] == ["cpu-only-build"], text
    assert causes(rank(scan("  Downloading torch-2.5.1+cu124-cp312-cp312-win_amd64.whl (2449.4 MB)"))) == []
    q = scan("ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. "
             "Current capability: 70.")
    assert causes(rank(q))[:1] == ["math-library-unsupported"]
    pre = scan("After installed latest vllm nightly, it started to fail:\nRuntimeError: CUDA error: an illegal memory access")
    assert "prerelease-regression" in causes(rank(pre))[:2]
    pip = scan("ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.0.0)\n"
               "ERROR: No matching distribution found for torch==1.13.1")
    assert causes(rank(pip))[:1] == ["other"]
    xf = scan("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
              "`cutlassF-pt` is not supported because:\n    device=cpu (supported: {'cuda'})")
    assert blames_nothing(rank(xf))


def test_container_driver_requirement_is_the_driver():
    """nvidia-container-cli refusing an image whose CUDA the host driver is too old for is driver-too-old, not a
    container started without GPUs."""
    c = scan("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to "
             "a newer version, or use an earlier cuda container: unknown")
    assert causes(rank(c))[:1] == ["driver-too-old"]
    assert causes(rank(scan("nvidia-container-cli: initialization error: nvml error: driver not loaded")))[:1] != [
        "driver-too-old"]


def test_user_code_errors_blame_nothing():
    for text in (
        "Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\nRuntimeError: CUDA error: device-side assert triggered",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x100 and 64x10)",
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "epoch 1 step 10 loss nan",
    ):
        assert blames_nothing(rank(scan(text))), text


def test_generic_symptom_discounted_by_user_code_signal():
    d = rank(scan("RuntimeError: CUDA error: device-side assert triggered\nSegmentation fault (core dumped)"))
    assert all(x.confidence < 0.2 for x in d) or blames_nothing(d)


def test_more_facts_in_warnings():
    rows = facts_in("RuntimeError: The detected CUDA version (12.4) mismatches the version that was used to compile "
                    "PyTorch (11.8). Please make sure to use the same CUDA versions.", 5)
    assert {r.table for r in rows} == {"compilers", "framework_builds"}
    assert [r for r in rows if r.table == "compilers"][0]["cuda_version"] == "12.4"
    rows = facts_in("NVIDIA B200 with CUDA capability sm_100 is not compatible with the current PyTorch installation.", 2)
    assert rows[0]["arch"] == "sm_100" and rows[0]["compute_capability"] == "10.0"
    rows = facts_in("The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.", 3)
    assert rows[0]["targets"][-1] == "sm_90"
    rows = facts_in("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1036", 1)
    assert rows[0]["arch"] == "gfx1036"


def test_worker_prefixes_normalised():
    from gpuvet.logs.normalize import normalize

    assert normalize("(VllmWorker rank=1 pid=4242) ERROR x") == "ERROR x"
    assert normalize("(RayWorkerWrapper pid=42, ip=10.0.0.2) RuntimeError: y") == "RuntimeError: y"


def test_fact_alone_dropped_when_text_shows_user_code_error():
    s = scan("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)")
    assert blames_nothing(rank(s, [finding("runtime-mismatch", "system-library")]))
    s = scan("epoch 1 loss 0.3")
    assert causes(rank(s, [finding("runtime-mismatch", "system-library")])) == ["runtime-mismatch"]
    assert causes(rank(s, [finding("runtime-mismatch", "system-library", sev=Severity.WARNING)])) == []


def test_unlisted_amd_arch_strengthens_arch_reading():
    plain = rank(scan("RuntimeError: HIP error: invalid device function"))
    ctx = rank(scan("GPU models and configuration: AMD Radeon RX 6700 XT (gfx1031)\nRuntimeError: HIP error: invalid device function"))
    assert causes(ctx)[0] == "gpu-arch-unsupported" and ctx[0].confidence > plain[0].confidence
    assert any(e.get("hint") == "amd-unlisted-arch" for e in ctx[0].evidence)


def test_vendor_source_builds_are_not_prereleases():
    # ROCm and NGC images ship torch source builds versioned 2.x.0a0+git...; they are not nightlies
    assert "prerelease" not in {h.name for h in hints_in("torch 2.4.0a0+git96dd291", 1)}
    assert "prerelease" in {h.name for h in hints_in("rocm 7.0.0rc20250828", 1)}


def test_torch_version_fragments_become_rows():
    r = facts_in("torch                    2.3.0+cu121", 4)[0]
    assert (r["version"], r["variant"], r["cuda"]) == ("2.3.0+cu121", "cuda", "12.1")
    r = facts_in("[pip3] torch==2.1.2+rocm5.6", 1)[0]
    assert (r["variant"], r["hip"]) == ("rocm", "5.6")
    assert facts_in("torch 2.4.1 is great", 1) == []


def test_oom_fragmentation_from_numbers_not_boilerplate():
    from gpuvet.logs.extract import oom_fragmented

    cap = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 90.00 MiB. Of the allocated memory 7.13 GiB is "
           "allocated by PyTorch, and 127.09 MiB is reserved by PyTorch but unallocated. If reserved but unallocated "
           "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
    frag = cap.replace("127.09 MiB is reserved", "5.50 GiB is reserved")
    assert not oom_fragmented(cap) and oom_fragmented(frag)
    assert rank(scan(cap))[0].component == "user-code"
    assert rank(scan(frag))[0].component == "config-env"


def test_plain_python_exception_discounts_fact_alone():
    s = scan("ValueError: Expected input batch_size (32) to match target batch_size (16).")
    assert blames_nothing(rank(s, [finding("cpu-only-build")]))
    s = scan("ValueError: Expected a cuda device, but got: cpu")
    assert causes(rank(s, [finding("cpu-only-build")], learned=None)) == ["cpu-only-build"]
    # the learned model may only fill the places after the fact's cause
    ranked = rank(s, [finding("cpu-only-build")])
    assert causes(ranked)[0] == "cpu-only-build" and all(d.signatures == ["learned"] for d in ranked[1:])


def test_warning_fact_is_no_diagnosis_of_an_empty_log():
    """A hang with no output (gpuvet run on the H200): a shadowed library copy, a warning, must not be
    blamed for a failure nothing in the text describes; an error-level fact still stands alone."""
    shadowed = [finding("runtime-mismatch", "system-library", Severity.WARNING, "BLD045"),
                finding("runtime-mismatch", "system-library", Severity.WARNING, "BLD045")]
    assert causes(rank(scan(""), shadowed)) == []
    assert causes(rank(scan(""), [finding("driver-too-old", "driver", Severity.ERROR, "DRV001")])) == ["driver-too-old"]
