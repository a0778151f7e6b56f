"""ROCm readings of day 8 (issue 9, d8r), each with look-alikes that must stay silent.

The kernel's KFD (drivers/gpu/drm/amd/amdkfd/kfd_device.c) decides at boot whether an AMD GPU becomes a ROCm compute
device and prints one line for each refusal; which line it is says which layer is at fault:

- LOG600 ``DID %04x is missing in supported_devices`` / ``kgd2kfd_probe failed`` (kernels up to 5.x): the loaded
  amdkfd predates the GPU's device id (driver-too-old; a GPU no KFD ever added is the alternative).
- LOG601 ``%s %s not supported in kfd`` for a Southern Islands ASIC or Topaz: no kernel makes it a compute device
  (gpu-arch-unsupported).
- LOG602 ``GC IP %06x %s not supported in kfd``: the kernel's KFD predates the GPU's graphics IP (driver-too-old).
- LOG603 ``skipped device %x:%x, PCI rejects atomics %d<%d`` with a non-zero version after "<": the MEC firmware is
  older than the one that runs the GPU without PCIe atomics (driver-too-old: firmware); "<0" and the old form without
  numbers stay LOG123's (the platform lacks atomics: hardware-fault).
"""
import pytest

from gpuvet.app.diagnose import scan_text as scan
from gpuvet.logs.rank import rank


def ranked(text):
    return rank(scan(text), learned=None)


ROCMINFO_FAIL = ("$ rocminfo\nROCk module is loaded\nhsa api call failure at: /src/rocminfo/rocminfo.cc:1142\n"
                 "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
                 "resources. This error may also occur when the core runtime library needs to spawn threads or "
                 "create internal OS-specific events.\n")


# ---------------------------------------------------------------- LOG600
@pytest.mark.parametrize("dmesg", [
    "[    1.239801] kfd kfd: DID 15dd is missing in supported_devices\n[    1.239803] kfd kfd: kgd2kfd_probe failed\n",
    "[    2.244241] kfd kfd: DID 7340 is missing in supported_devices\n",
    "kfd kfd: kgd2kfd_probe failed\n",
])
def test_an_unknown_device_id_in_kfd_reads_driver_too_old_over_the_runtimes_init_failure(dmesg):
    got = ranked(ROCMINFO_FAIL + "$ dmesg | grep kfd\n" + dmesg)
    assert got[0].cause == "driver-too-old" and "LOG600" in got[0].signatures
    assert "gpu-arch-unsupported" in [d.cause for d in got[:3]]


def test_the_init_failure_alone_still_reads_device_access():
    got = ranked(ROCMINFO_FAIL)
    assert got[0].cause == "device-access"
    assert not {"LOG600", "LOG601", "LOG602", "LOG603"} & set(scan(ROCMINFO_FAIL).matches)


# ---------------------------------------------------------------- LOG601 / LOG602
@pytest.mark.parametrize("asic", ["TAHITI", "PITCAIRN", "VERDE", "OLAND", "HAINAN", "TOPAZ"])
def test_a_southern_islands_or_topaz_asic_refused_by_kfd_reads_gpu_arch_unsupported(asic):
    got = ranked(f"clinfo: Number of devices 0\n[   13.966785] kfd kfd: amdgpu: {asic}  not supported in kfd\n")
    assert got[0].cause == "gpu-arch-unsupported" and "LOG601" in got[0].signatures


@pytest.mark.parametrize("line", ["kfd kfd: amdgpu: GC IP 0b0004  not supported in kfd",
                                  "[    3.1] kfd kfd: amdgpu: GC IP 090100 VF not supported in kfd"])
def test_a_gc_ip_unknown_to_kfd_reads_driver_too_old(line):
    got = ranked("rocminfo lists only the CPU agent\n" + line + "\n")
    assert got[0].cause == "driver-too-old" and "LOG602" in got[0].signatures
    assert "LOG601" not in scan(line + "\n").matches


# ---------------------------------------------------------------- LOG603 vs LOG123
@pytest.mark.parametrize("line", ["[    7.218215] kfd kfd: amdgpu: skipped device 1002:744c, PCI rejects atomics 494<509",
                                  "kfd kfd: amdgpu: skipped device 1002:7550, PCI rejects atomics 2040<2090"])
def test_atomics_refused_with_a_firmware_alternative_reads_driver_too_old(line):
    got = ranked(line + "\n")
    assert got[0].cause == "driver-too-old" and "LOG603" in got[0].signatures
    assert "LOG123" not in scan(line + "\n").matches
    assert "hardware-fault" in [d.cause for d in got[:3]]


@pytest.mark.parametrize("line", ["kfd kfd: amdgpu: skipped device 1002:6fdf, PCI rejects atomics 730<0",
                                  "[    1.626379] kfd kfd: skipped device 1002:67df, PCI rejects atomics",
                                  "dmesg reports `PCI rejects atomics`",
                                  "I get PCI rejects atomics in dmesg for the second card"])
def test_atomics_refused_with_no_firmware_alternative_stays_the_platform(line):
    got = ranked(line + "\n")
    assert got[0].cause == "hardware-fault" and "LOG123" in got[0].signatures
    assert "LOG603" not in scan(line + "\n").matches


# ---------------------------------------------------------------- healthy KFD lines stay silent
def test_a_healthy_kfd_boot_log_blames_nothing():
    healthy = ("[    4.312000] kfd kfd: amdgpu: Allocated 3969056 bytes on gart\n"
               "[    4.312100] amdgpu: Virtual CRAT table created for GPU\n"
               "[    4.312200] amdgpu: Topology: Add dGPU node [0x744c:0x1002]\n"
               "[    4.312300] kfd kfd: amdgpu: added device 1002:744c\n"
               "amdgpu: GC IP 0b0000 discovered\n")
    s = scan(healthy)
    assert not {"LOG123", "LOG600", "LOG601", "LOG602", "LOG603"} & set(s.matches)
    assert ranked(healthy) == []


# ---------------------------------------------------------------- LOG604: host GPU libraries in an Apptainer image
@pytest.mark.parametrize("text", [
    # apptainer exec --rocm on a Rocky 9 host with an Ubuntu 18.04 image: ROCm's dependency libraries from the host
    "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.33' not found (required by /.singularity.d/libs/libnuma.so.1)\n"
    "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.28' not found (required by /.singularity.d/libs/libdrm_amdgpu.so.1)\n",
    # --nv: the host's NVIDIA driver library
    "python: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by /.singularity.d/libs/libcuda.so.1)\n",
    "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by "
    "/.singularity.d/libs/libhsa-runtime64.so.1)\n",
])
def test_a_host_library_bound_into_an_apptainer_image_reads_runtime_mismatch(text):
    got = ranked(text)
    assert got[0].cause == "runtime-mismatch" and "LOG604" in got[0].signatures


def test_glibc_too_old_outside_the_containers_bind_dir_stays_the_toolchain_reading():
    text = "/lib64/libc.so.6: version `GLIBC_2.28' not found (required by /opt/env/lib/libfoo.so)\n"
    assert "LOG604" not in scan(text).matches
    assert ranked(text)[0].cause == "toolchain"
    verbose = "INFO:    Mounting /.singularity.d/libs/libnuma.so.1\nDEBUG   Binding /usr/lib64/libnuma.so.1\n"
    assert "LOG604" not in scan(verbose).matches and ranked(verbose) == []
