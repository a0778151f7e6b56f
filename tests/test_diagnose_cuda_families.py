"""CUDA-side message families and the decisions between adjacent causes (issue 9, day 5, d11c).

Short real-shaped text (messages as pip, DGL, the CUDA driver, NGC images and jax print them; sources in
signatures.yaml) through the signatures and the ranker, each with a counter-example that must not get the
same answer.
"""
from gpuvet.app.diagnose import diagnose_text
from gpuvet.logs.match import Scanner
from gpuvet.logs.rank import rank
from gpuvet.logs.signatures import load_catalog


def ranked(text: str) -> list[str]:
    sc = Scanner(load_catalog())
    sc.feed_text(text)
    return [d.cause for d in rank(sc.result, (), learned=None)]


def test_a_companion_pulling_its_own_torch_pin_is_a_companion_mismatch():
    text = ("torch                         2.0.1+cu118\n"
            "Collecting xformers==0.0.19\n"
            "Collecting torch==2.0.0 (from xformers==0.0.19)\n"
            "  Downloading torch-2.0.0-cp310-cp310-manylinux1_x86_64.whl (619.9 MB)\n")
    assert ranked(text)[:1] == ["companion-mismatch"]
    conflict = "xformers 0.0.22.post4 requires torch==2.1.0, but you have torch 2.0.1 which is incompatible.\n"
    assert ranked(conflict)[:1] == ["companion-mismatch"]
    # a conflict between two ordinary packages is no GPU-stack finding
    other = "tensorboard 2.13.0 requires protobuf>=3.19.6, but you have protobuf 3.19.0 which is incompatible.\n"
    assert "companion-mismatch" not in ranked(other)


def test_pips_list_of_available_versions_is_not_a_cpu_build_fact():
    head = ("ERROR: Could not find a version that satisfies the requirement torch==1.8.0+cu102 (from versions: 1.7.1, "
            "1.7.1+cpu, 1.7.1+cu101, 1.8.0, 1.8.0+cpu, 1.8.0+cu101, 1.8.0+cu111)\n"
            "ERROR: No matching distribution found for torch==1.8.0+cu102\n")
    assert ranked(head)[:1] == ["other"]
    # a CPU build that *is* installed still settles it
    assert ranked("PyTorch version: 1.8.0+cpu\n" + head)[:1] == ["cpu-only-build"]


def test_conda_transaction_with_conda_forges_cpu_build():
    text = ("The following NEW packages will be INSTALLED:\n"
            "  pytorch            conda-forge/linux-64::pytorch-1.10.0-cpu_py37hf3cc979_0\n"
            "  pytorch-cpu        conda-forge/linux-64::pytorch-cpu-1.10.0-cpu_py37h718b53a_0\n")
    assert ranked(text)[:1] == ["cpu-only-build"]
    gpu = "  pytorch            conda-forge/linux-64::pytorch-1.10.0-cuda112py37h3bec1eb_1\n"
    assert "cpu-only-build" not in ranked(gpu)


def test_libcuda_without_a_driver_entry_point_is_an_old_driver():
    text = ("dlerr: /usr/lib64/libcuda.so.418.74: undefined symbol: cuCtxCreate_v3\n"
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module 418.74\n")
    assert ranked(text)[:1] == ["driver-too-old"]
    # an extension's own missing CUDA-library symbol is not the driver
    ext = "ImportError: /root/.cache/torch_extensions/cpu_adam/cpu_adam.so: undefined symbol: curandCreateGenerator\n"
    assert "driver-too-old" not in ranked(ext)[:1]


def test_container_image_older_than_the_gpu_and_extension_without_this_capability():
    ngc = ("WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in this version of the "
           "container\nERROR: No supported GPU(s) detected to run this container\n")
    assert ranked(ngc)[:1] == ["gpu-arch-unsupported"]
    tcnn = "OSError: Could not find compatible tinycudann extension for compute capability 75.\n"
    assert ranked(tcnn)[:1] == ["gpu-arch-unsupported"]
    no_driver = "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
    assert "gpu-arch-unsupported" not in ranked(no_driver)


def test_system_not_ready_and_allocator_assert():
    fm = "RuntimeError: CUDA error: system not yet initialized\n"
    assert ranked(fm)[:1] == ["other"]
    alloc = ('RuntimeError: !block->expandable_segment_ INTERNAL ASSERT FAILED at '
             '"../c10/cuda/CUDACachingAllocator.cpp":2814, please report a bug to PyTorch.\n')
    assert ranked(alloc)[:1] == ["memory-allocator"]


def test_old_driver_table_keeps_a_cuda8_build_on_a_390_driver_healthy():
    """Before CUDA 11 the KB had no driver floors, so a 390 driver read as "supports CUDA 0.0" and every old
    torch looked like an old-driver case."""
    env = ("PyTorch version: 0.4.0\nCUDA used to build PyTorch: 8.0.61\nNvidia driver version: 390.48\n"
           "GPU models and configuration: GPU 0: GeForce GTX 1080 Ti\n")
    err = "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58\n"
    rep = diagnose_text(env + err, "case.txt")
    assert not [f for f in rep.findings if f.code == "DRV001" and f.failed]
    old = env.replace("390.48", "361.42")  # a driver older than CUDA 8.0's 367.48
    rep = diagnose_text(old + err, "case.txt")
    assert [f for f in rep.findings if f.code == "DRV001" and f.failed]


def test_a_user_data_error_claims_the_workload_symptoms_after_it():
    blas = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n"
    assert ranked(blas)[:1] == ["memory-allocator"]
    # token ids beyond the embedding table: the cuBLAS failure is the same user-data error, seen later
    assert ranked(blas + "IndexError: index out of range in self\n") == []
    # a weak user-code signal (any ValueError) does not silence a stack message
    assert ranked(blas + "ValueError: bad value\n")[:1] == ["memory-allocator"]


def test_tensorrt_release_without_this_sm_is_gpu_arch():
    trt = ("[E] [TRT] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: Internal Error (Unsupported SM: 0x809)\n"
           "[E] Engine could not be created from network\n")
    assert ranked(trt)[:1] == ["gpu-arch-unsupported"]
    assert "gpu-arch-unsupported" not in ranked("[E] Engine could not be created from network\n")


def test_the_drivers_jit_linker_rejecting_newer_ptx_is_an_old_driver_not_the_toolchain():
    numba = ("numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR "
             "ptxas application ptx input, line 9; fatal : Unsupported .version 7.3; current version is '7.1'\n")
    assert ranked(numba)[:1] == ["driver-too-old"]
    # ptxas of a toolkit refusing PTX (no driver link involved) stays a toolchain problem
    ptxas = ("ptxas /tmp/tmpafhfmeeh.ptx, line 5; fatal   : Unsupported .version 8.6; current version is '8.5'\n"
             "ptxas fatal   : Ptx assembly aborted due to errors\n")
    assert ranked(ptxas)[:1] == ["toolchain"]


def test_windows_extension_procedure_not_found_is_extension_abi():
    proc = "ImportError: DLL load failed while importing exllamav2_ext: The specified procedure could not be found.\n"
    assert ranked(proc)[:1] == ["extension-abi"]
    module = "ImportError: DLL load failed while importing exllamav2_ext: The specified module could not be found.\n"
    assert ranked(module)[:1] != ["extension-abi"]


def test_shared_tmp_triton_cache_and_paddle_dynload():
    lock = "PermissionError: [Errno 13] Permission denied: '/tmp/triton/d645ef562cfc8f31ab6c7b88eccac0f6.lock'\n"
    assert ranked(lock)[:1] == ["kernel-cache-db"]
    assert "kernel-cache-db" not in ranked("PermissionError: [Errno 13] Permission denied: '/data/out.csv'\n")
    paddle = "RuntimeError: (PreconditionNotMet) Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.\n"
    assert ranked(paddle)[:1] == ["runtime-mismatch"]


def test_a_cuda_library_symbol_of_another_release_is_a_runtime_mismatch():
    nvjit = ("ImportError: /venv/lib/python3.10/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: "
             "undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12\n")
    assert ranked(nvjit)[:1] == ["runtime-mismatch"]
    nccl = "OSError: /venv/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree\n"
    assert ranked(nccl)[:1] == ["runtime-mismatch"]
    # an extension built against another torch is its own ABI problem
    ext = "ImportError: flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    assert ranked(ext)[:1] != ["runtime-mismatch"]


def test_invalid_device_ordinal_is_the_programs_device_choice():
    text = ("I have an Nvidia 1080Ti and CUDA_VISIBLE_DEVICES=0. Perhaps your code is looking for multiple GPUs?\n"
            "RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59\n")
    assert ranked(text) == []
    # a stack message next to it still speaks
    assert ranked(text + "RuntimeError: Found no NVIDIA driver on your system.\n")[:1] != []


def test_jax_preallocation_settings_and_a_libcuda_dlopen_failure():
    jax = 'Despite os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false", jax still holds 75% of the GPU memory\n'
    assert ranked(jax)[:1] == ["memory-allocator"]
    assert "memory-allocator" not in ranked("preallocated temp allocation:    4.44GiB\n")
    wsl = "RuntimeError: Failed to dlopen libcuda.so\n"
    assert ranked(wsl)[:1] == ["device-access"]


def test_torchs_own_argument_and_autograd_checks_blame_nothing():
    for line in ("RuntimeError: expected scalar type Half but found Float",
                 "RuntimeError: The size of tensor a (77) must match the size of tensor b (64) at non-singleton dimension 1",
                 "ValueError: Expected input batch_size (32) to match target batch_size (64).",
                 "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"):
        assert ranked("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n" + line + "\n") == []
    # with a stack message beside it, the stack message still ranks
    assert ranked("RuntimeError: expected scalar type Half but found Float\n"
                  "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n")[:1] != []
