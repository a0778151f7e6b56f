"""The ROCm math libraries' run-time kernel files in the loader model (issue 10): which directory the
loaded rocBLAS / hipBLASLt / MIOpen copy reads, which gfx targets it has files for, which release it
belongs to -- on real temp trees laid out with the real file names of Debian's packages
(tests/fixtures/real/debian-rocm-libs: ``dpkg-deb -c`` of librocblas0 5.5.1, librocblas4 6.4.4,
libhipblaslt1 7.1.1, libmiopen1 6.4.3) and of a torch ROCm wheel (.ci/manywheel/build_rocm.sh copies
torch/lib/rocblas/library, torch/lib/hipblaslt/library, torch/share/miopen/db for its target list)."""
from __future__ import annotations

import gzip
import os
import sys
from pathlib import Path

import pytest

from gpuvet import kb as kbmod
from gpuvet.app.engine import run_checks
from gpuvet.checks import bld, lib
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.probes import elf, kernel_files, loader
from gpuvet.probes.system import System

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

REAL = Path(__file__).resolve().parent / "fixtures" / "real" / "debian-rocm-libs"
MULTI = "usr/lib/x86_64-linux-gnu"
# MIOpen's database files as its source tree ships them (ROCm/MIOpen src/kernels, installed without .bz2)
MIOPEN_DB = ("gfx1030.kdb", "gfx1030_36.HIP.fdb.txt", "gfx1030_36.db", "gfx908.kdb", "gfx90878.HIP.fdb.txt",
             "gfx90878.db", "gfx90a.kdb", "gfx90a68.HIP.fdb.txt", "gfx90a68.db", "gfx90a6e.HIP.fdb.txt", "gfx90a6e.db",
             "gfx942.kdb", "gfx942130.HIP.fdb.txt", "gfx942130.db")


def listing(pkg: str) -> list[str]:
    """The paths of one real ``dpkg-deb -c`` listing (directories end in '/')."""
    f = next(REAL.glob(f"dpkg-deb-c_{pkg}_*.txt.gz"))
    out = []
    for line in gzip.decompress(f.read_bytes()).decode().splitlines():
        path = line.split(None, 5)[5].split(" -> ")[0]
        out.append(path[2:] if path.startswith("./") else path)
    return out


def lay_out(root: Path, pkg: str, under: str = "", keep=lambda name: True) -> list[str]:
    """Create the package's files (empty) and symlinks below ``root``; returns the library files."""
    f = next(REAL.glob(f"dpkg-deb-c_{pkg}_*.txt.gz"))
    libs = []
    for line in gzip.decompress(f.read_bytes()).decode().splitlines():
        path = line.split(None, 5)[5]
        target = None
        if " -> " in path:
            path, target = path.split(" -> ")
        path = path[2:] if path.startswith("./") else path
        if not path or (under and not path.startswith(under)):
            continue
        p = root / path
        if path.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
            continue
        if not keep(p.name):
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        if target:
            p.symlink_to(target)
        else:
            p.write_bytes(b"")
        if ".so" in p.name:
            libs.append(str(p))
    return libs


def lib_row(name: str, path: Path | str, origin: str = "system", selected: bool = True):
    return row("libraries", f"{path} (loaded)", name=name, version="", path=str(path), origin=origin,
               selected=selected, requested_by="libtorch_hip.so", family=name, via="rpath")


def gpu(arch: str, name: str = "AMD Instinct"):
    return row("gpu_devices", "rocminfo", vendor="amd", index=0, name=name, arch=arch, compute_capability="",
               memory_mib=0, pci_bus="")


def facts_of(rows, gpus=(), env=None):
    f = Facts()
    f.add(list(rows) + list(gpus) + [row("env_vars", "environ", name=k, value=v) for k, v in (env or {}).items()])
    f.mark("kernel_libraries", "gpu_devices", "env_vars", "libraries")
    return f


def results(check, f):
    return list(run_checks(f, [check], kbmod.load()))


def failed(rs):
    return [r for r in rs if r.outcome is Outcome.FAILED]


def test_real_debian_listings_carry_the_names_the_model_reads():
    names = [p.rsplit("/", 1)[-1] for p in listing("librocblas4")]
    assert "TensileLibrary_lazy_gfx90a.dat" in names and "TensileLibrary_lazy_gfx942.dat" not in names
    assert any(p.startswith(f"{MULTI}/rocblas/4.4.1/library/") for p in listing("librocblas4"))
    assert kernel_files.archs_in(names) == ["gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx1010",
                                            "gfx1030", "gfx1100", "gfx1101", "gfx1102"]
    lt = [p.rsplit("/", 1)[-1] for p in listing("libhipblaslt1")]
    assert "gfx942" not in kernel_files.archs_in(lt) and "gfx1201" in kernel_files.archs_in(lt)
    # MIOpen's CU-suffixed names: gfx90a6e (110 CUs, hex), gfx1030_36, gfx942130 (304 CUs)
    assert kernel_files.archs_in(MIOPEN_DB) == ["gfx908", "gfx90a", "gfx942", "gfx1030"]
    # Debian's MIOpen ships no database at all
    assert not [p for p in listing("libmiopen1") if "miopen/db" in p]
    strings = (REAL / "library-path-strings.txt").read_text()
    assert "/rocblas/4.4.1/library" in strings and "/rocblas/2.47.0/library" in strings


def test_debian_rocblas_dir_found_beside_the_library_and_gfx942_has_no_kernels(tmp_path):
    lay_out(tmp_path, "librocblas4")
    lay_out(tmp_path, "librocblas0")  # another release's directory beside it: rocblas/2.47.0
    so = tmp_path / MULTI / "librocblas.so.4"
    sysm = System(environ={}, root="/")
    [r] = kernel_files.kernel_library_rows(sysm, [lib_row("rocblas", so)])
    assert r["dir"] == str(tmp_path / MULTI / "rocblas" / "4.4.1" / "library")
    assert r["via"] == "default" and r["exists"] is True and r["files"] == 1349
    assert "gfx942" not in r["archs"] and "gfx90a" in r["archs"]
    assert r["library_release"] == ["rocblas 4.4"] and r["dir_release"] == ["rocblas 4.4.1"]
    # MI300X (gfx942): rocBLAS aborts at its first GEMM -> an error naming the directory and what is there
    rs = results(lib.math_library_kernels_missing_for_gpu, facts_of([r], [gpu("gfx942", "AMD Instinct MI300X")]))
    [f] = failed(rs)
    assert f.severity is Severity.ERROR and "gfx942" in f.title and "4.4.1/library" in f.title
    assert "gfx90a" in f.title
    # an MI210 (gfx90a) has its kernels there
    assert not failed(results(lib.math_library_kernels_missing_for_gpu, facts_of([r], [gpu("gfx90a")])))
    # HSA_OVERRIDE_GFX_VERSION=9.0.10 makes a gfx942 report gfx90a, which the directory has
    ok = results(lib.math_library_kernels_missing_for_gpu,
                 facts_of([r], [gpu("gfx942")], env={"HSA_OVERRIDE_GFX_VERSION": "9.0.10"}))
    assert not failed(ok)
    assert not failed(results(lib.math_library_kernels_from_other_release, facts_of([r])))


def test_override_pointing_at_another_releases_directory(tmp_path):
    lay_out(tmp_path, "librocblas4")
    lay_out(tmp_path, "librocblas0")
    so = tmp_path / MULTI / "librocblas.so.4"
    other = tmp_path / MULTI / "rocblas" / "2.47.0" / "library"
    sysm = System(environ={"ROCBLAS_TENSILE_LIBPATH": str(other)}, root="/")
    [r] = kernel_files.kernel_library_rows(sysm, [lib_row("rocblas", so)])
    assert r["via"] == "ROCBLAS_TENSILE_LIBPATH" and r["dir"] == str(other)
    assert r["default_dir"].endswith("rocblas/4.4.1/library")
    assert r["dir_release"] == ["rocblas 2.47.0"]
    [f] = failed(results(lib.math_library_kernels_from_other_release, facts_of([r])))
    assert "2.47.0" in f.title and "ROCBLAS_TENSILE_LIBPATH" in f.title
    assert any(x.command == "unset ROCBLAS_TENSILE_LIBPATH" for x in f.fixes)


def test_debian_hipblaslt_has_no_gfx942_a_warning(tmp_path):
    lay_out(tmp_path, "libhipblaslt1")
    so = tmp_path / MULTI / "libhipblaslt.so.1"
    [r] = kernel_files.kernel_library_rows(System(environ={}, root="/"), [lib_row("hipblaslt", so)])
    assert r["dir"] == str(tmp_path / MULTI / "hipblaslt" / "library") and r["files"] == 1467
    [f] = failed(results(lib.math_library_kernels_missing_for_gpu, facts_of([r], [gpu("gfx942")])))
    assert f.severity is Severity.WARNING and "hipBLASLt" in f.title
    assert not failed(results(lib.math_library_kernels_missing_for_gpu, facts_of([r], [gpu("gfx1100")])))


def _torch_wheel(tmp: Path, archs=("gfx90a", "gfx942")) -> Path:
    """torch/lib with the libraries and the per-arch files build_rocm.sh copies (real rocBLAS names)."""
    tdir = tmp / "site-packages" / "torch"
    src = tmp / "_deb"
    lay_out(src, "librocblas4")
    lay_out(src, "libhipblaslt1")
    for name, sub in (("rocblas", "rocblas/4.4.1/library"), ("hipblaslt", "hipblaslt/library")):
        dst = tdir / "lib" / name / "library"
        dst.mkdir(parents=True)
        for n in os.listdir(src / MULTI / sub):  # `ls | grep -E $ARCH` and `ls | grep -v gfx`
            if any(a in n for a in archs) or "gfx" not in n:
                (dst / n).write_bytes(b"")
    db = tdir / "share" / "miopen" / "db"
    db.mkdir(parents=True)
    for n in MIOPEN_DB:
        if any(a in n for a in archs):
            (db / n).write_bytes(b"")
    for so in ("librocblas.so", "libhipblaslt.so", "libMIOpen.so", "libamdhip64.so"):
        (tdir / "lib" / so).write_bytes(b"")
    return tdir


def test_torch_wheel_bundled_directories_and_release(tmp_path):
    tdir = _torch_wheel(tmp_path, archs=("gfx90a",))  # Debian's rocBLAS has no gfx942: a gfx90a-only wheel
    sysm = System(environ={}, root="/")
    libs = [lib_row(n, tdir / "lib" / f, origin="framework-bundled")
            for n, f in (("rocblas", "librocblas.so"), ("hipblaslt", "libhipblaslt.so"), ("miopen", "libMIOpen.so"))]
    rows = kernel_files.kernel_library_rows(sysm, libs, framework_dir=str(tdir), framework_hip="6.2.41133-dd7f95766")
    by = {r["library"]: r for r in rows}
    assert by["rocblas"]["dir"] == str(tdir / "lib" / "rocblas" / "library")
    assert by["hipblaslt"]["dir"] == str(tdir / "lib" / "hipblaslt" / "library")
    assert by["miopen"]["dir"] == str(tdir / "share" / "miopen" / "db")
    assert by["rocblas"]["archs"] == ["gfx90a"] and by["miopen"]["archs"] == ["gfx90a"]
    assert by["rocblas"]["library_release"] == ["rocm 6.2"] == by["rocblas"]["dir_release"]
    # a Radeon RX 7900 XTX (gfx1100): rocBLAS error, hipBLASLt and MIOpen warnings, all naming torch's directory
    fs = failed(results(lib.math_library_kernels_missing_for_gpu, facts_of(rows, [gpu("gfx1100", "Radeon RX 7900 XTX")])))
    assert {(f.severity, f.title.split(" ")[0]) for f in fs} == {
        (Severity.ERROR, "rocBLAS"), (Severity.WARNING, "hipBLASLt"), (Severity.WARNING, "MIOpen")}
    assert all(str(tdir) in f.title for f in fs)
    assert not failed(results(lib.math_library_kernels_missing_for_gpu, facts_of(rows, [gpu("gfx90a")])))
    assert not failed(results(lib.math_library_kernels_from_other_release, facts_of(rows)))


def test_torch_rocblas_with_override_at_another_rocm_install(tmp_path):
    tdir = _torch_wheel(tmp_path)
    other = tmp_path / "opt" / "rocm-6.1.0" / "lib" / "rocblas" / "library"
    other.mkdir(parents=True)
    (other / "TensileLibrary_lazy_gfx90a.dat").write_bytes(b"")
    (tmp_path / "opt" / "rocm").symlink_to("rocm-6.1.0")
    sysm = System(environ={"ROCBLAS_TENSILE_LIBPATH": str(tmp_path / "opt" / "rocm" / "lib" / "rocblas" / "library")},
                  root="/")
    [r] = kernel_files.kernel_library_rows(sysm, [lib_row("rocblas", tdir / "lib" / "librocblas.so", "framework-bundled")],
                                           framework_dir=str(tdir), framework_hip="6.2.41133-dd7f95766")
    assert r["dir_release"] == ["rocm 6.1.0"] and r["library_release"] == ["rocm 6.2"]
    [f] = failed(results(lib.math_library_kernels_from_other_release, facts_of([r])))
    assert "rocm 6.1.0" in f.title and "rocm 6.2" in f.title and f.severity is Severity.ERROR


def test_nothing_for_a_cuda_stack():
    """The H200: no rocBLAS/hipBLASLt/MIOpen in the loader model -> no rows, both checks skip."""
    rows = kernel_files.kernel_library_rows(System(environ={}, root="/"), [
        lib_row("cudnn", "/x/libcudnn.so.9"), lib_row("cublas", "/x/libcublas.so.13")])
    assert rows == []
    f = facts_of([], [row("gpu_devices", "nvidia-smi", vendor="nvidia", index=0, name="NVIDIA H200", arch="sm_90",
                          compute_capability="9.0", memory_mib=0, pci_bus="")])
    for chk in (lib.math_library_kernels_missing_for_gpu, lib.math_library_kernels_from_other_release):
        assert not failed(results(chk, f))


def test_rocm_build_number_and_rocm_dir_releases(tmp_path):
    d = tmp_path / "opt" / "rocm-6.2.1" / "lib"
    d.mkdir(parents=True)
    (d / "librocblas.so.4.2.60201").write_bytes(b"")
    (d / "librocblas.so.4").symlink_to("librocblas.so.4.2.60201")
    (tmp_path / "opt" / "rocm").symlink_to("rocm-6.2.1")
    sysm = System(environ={}, root="/")
    path = tmp_path / "opt" / "rocm" / "lib" / "librocblas.so.4"
    assert kernel_files.library_releases(sysm, str(path), "rocblas") == ["rocm 6.2.1", "rocblas 4.2"]
    assert kernel_files.rocm_build_release("libamdhip64.so.6.2.60201") == "6.2.1"
    [r] = kernel_files.kernel_library_rows(sysm, [lib_row("rocblas", path)])
    assert r["dir"] == str(tmp_path / "opt" / "rocm" / "lib" / "rocblas" / "library") and r["exists"] is False
    assert r["dir_release"] == ["rocm 6.2.1"]  # the /opt/rocm -> rocm-6.2.1 link is followed
    [f] = failed(results(lib.math_library_kernels_missing_for_gpu, facts_of([r], [gpu("gfx90a")])))
    assert "does not exist" in f.title


needs_cc = pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")


@needs_cc
def test_loader_rocblas_from_another_rocm_via_ld_library_path_is_two_releases(tmp_path):
    """libtorch_hip.so (RUNPATH $ORIGIN, as a RUNPATH build) needs librocblas.so.4 and libamdhip64.so.6;
    LD_LIBRARY_PATH puts /opt/rocm-6.1.0/lib first, which has a rocBLAS but no HIP: one process, two
    ROCm releases (BLD050), the 6.1.0 rocBLAS reading its own 6.1.0 directory (LIB027 passes)."""
    elf.clear_cache()
    tdir = tmp_path / "site" / "torch"
    tlib = elfbuild.shared_lib(tdir / "lib", "libtorch_hip.so", soname="libtorch_hip.so", runpath="$ORIGIN",
                               needed=("librocblas.so.4", "libamdhip64.so.6"))
    for so in ("librocblas.so.4", "libamdhip64.so.6"):
        elfbuild.shared_lib(tdir / "lib", so, soname=so)
    rocm = tmp_path / "opt" / "rocm-6.1.0" / "lib"
    elfbuild.shared_lib(rocm, "librocblas.so.4.1.60100", soname="librocblas.so.4")
    (rocm / "librocblas.so.4").symlink_to("librocblas.so.4.1.60100")
    (rocm / "rocblas" / "library").mkdir(parents=True)
    (rocm / "rocblas" / "library" / "TensileLibrary_lazy_gfx90a.dat").write_bytes(b"")
    sysm = System(environ={"LD_LIBRARY_PATH": str(rocm)}, root="/")
    rows = loader.resolve_framework_libraries(sysm, [str(tlib)], framework_dir=str(tdir), site_dir=str(tdir.parent),
                                              framework_hip="6.2.41133-dd7f95766")
    libs = {r["name"]: r for r in rows if r.table == "libraries" and r["selected"]}
    assert libs["rocblas"]["path"] == str(rocm / "librocblas.so.4") and libs["rocblas"]["release"] == "6.1.0"
    assert libs["amdhip64"]["release"] == "6.2"
    kl = kernel_files.kernel_library_rows(sysm, list(libs.values()), framework_dir=str(tdir),
                                          framework_hip="6.2.41133-dd7f95766")
    f = facts_of(rows + kl, [gpu("gfx90a")], env={"LD_LIBRARY_PATH": str(rocm)})
    [m] = failed(results(bld.rocm_libraries_mixed_releases, f))
    assert "6.1" in m.title and "6.2" in m.title and "librocblas.so.4" in m.title
    assert any("LD_LIBRARY_PATH" in (x.command or "") for x in m.fixes)
    assert not failed(results(lib.math_library_kernels_from_other_release, f))
    assert not failed(results(lib.math_library_kernels_missing_for_gpu, f))
    # without the LD_LIBRARY_PATH entry everything is torch's own: one release
    elf.clear_cache()
    rows2 = loader.resolve_framework_libraries(System(environ={}, root="/"), [str(tlib)], framework_dir=str(tdir),
                                               site_dir=str(tdir.parent), framework_hip="6.2.41133-dd7f95766")
    assert not failed(results(bld.rocm_libraries_mixed_releases, facts_of(rows2)))


def test_diagnose_ranks_the_missing_kernels_fact_with_its_own_fix(tmp_path):
    """The rocBLAS abort of the KB's rocblas-tensile-arch-missing example (a gfx1036 iGPU) with live facts
    showing the loaded rocBLAS's directory has no gfx1036 files: the diagnosis carries LIB026 and its fix."""
    from gpuvet.app.diagnose import diagnose_text

    d = tmp_path / "opt" / "rocm-6.0.0" / "lib"
    lay_out(tmp_path / "_deb", "librocblas4")
    (d / "rocblas" / "library").mkdir(parents=True)
    for n in os.listdir(tmp_path / "_deb" / MULTI / "rocblas" / "4.4.1" / "library"):
        (d / "rocblas" / "library" / n).write_bytes(b"")
    (d / "librocblas.so.4.0.60000").write_bytes(b"")
    rows = kernel_files.kernel_library_rows(System(environ={}, root="/"), [lib_row("rocblas", d / "librocblas.so.4.0.60000")])
    live = facts_of(rows, [gpu("gfx1036", "AMD Radeon Graphics")])
    text = ("rocBLAS error: Cannot read /opt/rocm-6.0.0/lib/rocblas/library/TensileLibrary.dat: No such file or "
            "directory for GPU arch : gfx1036\n")
    rep = diagnose_text(text, "log", live)
    top = rep.extra["diagnoses"][0]
    assert top["cause"] == "gpu-arch-unsupported" and "LIB026" in top["checks"]
    assert "gfx1036" in top["fix"] and "rocBLAS" in top["fix"]
