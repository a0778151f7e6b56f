"""probes/elf.py: dynamic tags, CUDA fatbin and HIP offload-bundle walking, on ELF files built here."""
from __future__ import annotations

import ast
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from gpuvet.probes import elf
from gpuvet.probes.system import System
from fakes import FakeSystem

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

pytestmark = pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")

H200 = Path(__file__).resolve().parent / "fixtures" / "real" / "h200-cuda13"


def h200_arch_list() -> list[str]:
    """torch.cuda.get_arch_list() as printed on the H200 (torch.txt)."""
    for line in (H200 / "torch.txt").read_text().splitlines():
        if line.startswith("arch_list "):
            return ast.literal_eval(line[len("arch_list "):])
    raise AssertionError("no arch_list in torch.txt")


@pytest.fixture(autouse=True)
def _fresh_cache():
    elf.clear_cache()
    yield
    elf.clear_cache()


def test_h200_fatbin_gives_get_arch_list(tmp_path):
    counts = elfbuild.h200_fatbin_counts()
    lib = elfbuild.shared_lib(tmp_path, "libtorch_cuda.so", sections={".nv_fatbin": elfbuild.fatbin_from_counts(counts)})
    co = elf.code_objects(System(), str(lib))
    assert co.kind == "cuda-fatbin"
    assert co.containers == 444
    assert dict(co.counts) == counts  # the same per-target counts cuobjdump printed
    full, partial = co.split()
    assert full == h200_arch_list() == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert partial == {"sm_89": 1, "sm_90a": 4, "sm_100a": 59, "sm_103a": 59, "sm_120a": 1, "sm_121a": 1}


def test_walk_reads_only_headers():
    counts = elfbuild.h200_fatbin_counts()
    blob = elfbuild.fatbin_from_counts(counts, payload=4096)
    read_bytes = 0
    calls = 0

    def read(off: int, n: int) -> bytes:
        nonlocal read_bytes, calls
        read_bytes += n
        calls += 1
        return blob[off:off + n]

    co = elf.walk_fatbin(read, 0, len(blob))
    assert co.entries == sum(counts.values())
    assert read_bytes < len(blob) / 50, (read_bytes, len(blob))
    assert calls == co.entries + co.containers


def test_padded_containers_and_ptx(tmp_path):
    counts = {"sm_80": 3, "sm_90": 3, "compute_90": 3, "sm_90a": 1}
    blob = elfbuild.fatbin_from_counts(counts, pad=24)  # containers separated by zero padding
    co = elf.walk_fatbin(lambda o, n: blob[o:o + n], 0, len(blob))
    assert co.containers == 3
    full, partial = co.split()
    assert full == ["sm_80", "sm_90", "compute_90"]
    assert partial == {"sm_90a": 1}


def test_target_names_from_flags():
    assert elf.fatbin_target_name(2, 90, 0x11) == "sm_90"
    assert elf.fatbin_target_name(2, 90, 0x100011) == "sm_90a"
    assert elf.fatbin_target_name(2, 100, 0x1200011) == "sm_100f"
    assert elf.fatbin_target_name(1, 120, 0x8011) == "compute_120"
    assert elf.fatbin_target_name(1, 90, 0x108011) == "compute_90a"
    assert elf.fatbin_target_name(0x40, 90, 0) is None


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_real_nvcc_fatbin(tmp_path):
    """The format claims checked against what nvcc itself writes."""
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *x){ x[threadIdx.x] += 1.0f; }\n"
                   "void launch(float *x){ k<<<1,32>>>(x); }\n")
    out = tmp_path / "libk.so"
    gencode = ["arch=compute_75,code=sm_75", "arch=compute_80,code=sm_80", "arch=compute_90a,code=sm_90a",
               "arch=compute_100f,code=sm_100f", "arch=compute_120,code=compute_120"]
    argv = ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-o", str(out), str(src)]
    for g in gencode:
        argv += ["-gencode", g]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        pytest.skip(f"nvcc failed: {r.stderr[-300:]}")
    co = elf.code_objects(System(), str(out))
    assert co.kind == "cuda-fatbin"
    assert set(co.counts) == {"sm_75", "sm_80", "sm_90a", "sm_100f", "compute_120"}


def test_hip_offload_bundles(tmp_path):
    ids = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
           "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx1100"]
    plain = elfbuild.offload_bundle(ids)
    section = (elfbuild.align(plain) * 3 + elfbuild.align(elfbuild.ccob(plain, 2))
               + elfbuild.align(elfbuild.ccob(elfbuild.offload_bundle(ids[:2] + ["hipv4-amdgcn-amd-amdhsa--gfx1030"]), 3)))
    lib = elfbuild.shared_lib(tmp_path, "libtorch_hip.so", sections={".hip_fatbin": section})
    co = elf.code_objects(System(), str(lib))
    assert co.kind == "hip-offload-bundle"
    assert co.containers == 5
    assert co.counts == Counter({"gfx90a": 5, "gfx942": 4, "gfx1100": 4, "gfx1030": 1})
    assert co.note == ""
    full, partial = co.split()
    assert full == ["gfx90a", "gfx942", "gfx1100"] and partial == {"gfx1030": 1}
    assert "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-" in co.ids


@pytest.mark.skipif(not shutil.which("zstd"), reason="needs the zstd command")
def test_hip_zstd_compressed_bundles():
    """PyTorch's ROCm wheels use clang --offload-compress (zstd): decoded through libzstd when no
    Python zstd module is installed."""
    ids = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
           "hipv4-amdgcn-amd-amdhsa--gfx942", "hipv4-amdgcn-amd-amdhsa--gfx1100"]
    inner = elfbuild.offload_bundle(ids, payload=300_000)
    comp = subprocess.run(["zstd", "-c", "-q"], input=inner, capture_output=True, check=True).stdout
    one = b"CCOB" + struct.pack("<HHIIQ", 2, 1, 24 + len(comp), len(inner), 0) + comp
    blob = elfbuild.align(one) * 3
    co = elf.walk_offload_bundles(lambda o, n: blob[o:o + n], 0, len(blob))
    if co.note:
        pytest.skip(f"no zstd decoder here: {co.note}")
    assert co.containers == 3
    assert co.counts == Counter({"gfx90a": 3, "gfx942": 3, "gfx1100": 3})


def test_hip_undecodable_bundle_is_noted():
    inner = elfbuild.offload_bundle(["hipv4-amdgcn-amd-amdhsa--gfx90a"])
    blob = b"CCOB" + struct.pack("<HHIIQ", 2, 1, 24 + 16, len(inner), 0) + b"\x28\xb5\x2f\xfd" + bytes(12)
    co = elf.walk_offload_bundles(lambda o, n: blob[o:o + n], 0, len(blob))
    assert co.containers == 1 and not co.counts
    assert "could not be read" in co.note


def test_hip_walk_reads_little():
    ids = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx942"]
    blob = elfbuild.align(elfbuild.offload_bundle(ids, payload=60_000)) * 200
    total = 0

    def read(o: int, n: int) -> bytes:
        nonlocal total
        total += min(n, max(0, len(blob) - o))
        return blob[o:o + n]

    co = elf.walk_offload_bundles(read, 0, len(blob))
    assert co.containers == 200 and co.counts == Counter({"gfx90a": 200, "gfx942": 200})
    assert total < len(blob) / 10, (total, len(blob))


def test_hip_target_of_id():
    assert elf.hip_target_of_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-") == "gfx90a"
    assert elf.hip_target_of_id("hip-amdgcn-amd-amdhsa-gfx1030") == "gfx1030"
    assert elf.hip_target_of_id("host-x86_64-unknown-linux-gnu-") is None


def test_dynamic_tags(tmp_path):
    lib = elfbuild.shared_lib(tmp_path, "liba.so", soname="liba.so.1", needed=("libcudnn.so.9", "libnccl.so.2"),
                              rpath="$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN")
    info = elf.elf_info(System(), str(lib))
    assert info.soname == "liba.so.1"
    assert info.needed[:2] == ("libcudnn.so.9", "libnccl.so.2")
    assert info.rpath == ("$ORIGIN/../../nvidia/cudnn/lib", "$ORIGIN") and info.runpath is None
    assert info.machine in ("EM_X86_64", "EM_AARCH64")
    lib2 = elfbuild.shared_lib(tmp_path / "r", "libb.so", runpath="/opt/x/lib")
    info2 = elf.elf_info(System(), str(lib2))
    assert info2.runpath == ("/opt/x/lib",) and info2.rpath is None


def test_not_elf():
    fake = FakeSystem(files={"/x/libnot.so": b"not an elf at all" * 10})
    with pytest.raises(elf.ElfError):
        elf.elf_info(fake, "/x/libnot.so")
    with pytest.raises(elf.ElfError):
        elf.code_objects(fake, "/x/libnot.so")
    with pytest.raises(OSError):
        elf.elf_info(fake, "/x/missing.so")


def test_cache_by_path_size_mtime(tmp_path):
    lib = elfbuild.shared_lib(tmp_path, "libc.so", sections={".nv_fatbin": elfbuild.fatbin_from_counts({"sm_90": 2})})
    sysm = System()
    opened = []
    real_open = sysm.open_binary

    def counting(path):
        opened.append(path)
        return real_open(path)

    sysm.open_binary = counting  # type: ignore[method-assign]
    a = elf.code_objects(sysm, str(lib))
    b = elf.code_objects(sysm, str(lib))
    assert a is b and len(opened) == 1


def test_real_debian_rocrand_bundle_header():
    """The real bundle header of Debian's librocrand 5.3.3 (see fixtures/elf/README.md)."""
    head = (Path(__file__).resolve().parent / "fixtures" / "elf" / "librocrand1-5.3.3-4-hip_fatbin-head.bin").read_bytes()
    ids = elf.parse_bundle_header(head)
    assert ids is not None and len(ids) == 8
    assert "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+" in ids and "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" in ids
    # walked as a section (the entries' code is beyond the excerpt: the walk stops there)
    co = elf.walk_offload_bundles(lambda o, n: head[o:o + n], 0, len(head))
    assert co.containers == 1
    full, partial = co.split()
    assert full == ["gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"] and partial == {}
