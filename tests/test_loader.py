"""probes/loader.py: the dynamic loader's choice, checked against the real loader (ldd) and the H200."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.probes import elf, loader
from gpuvet.probes.system import System
from fakes import FakeSystem

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

H200 = Path(__file__).resolve().parent / "fixtures" / "real" / "h200-cuda13"
needs_cc = pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")


@pytest.fixture(autouse=True)
def _fresh_cache():
    elf.clear_cache()
    yield
    elf.clear_cache()


# -- the ld.so cache -----------------------------------------------------------------------------------
def test_parse_ldconfig_p_h200():
    entries = loader.parse_ldconfig_p((H200 / "libs.txt").read_text())
    cudnn = [e for e in entries if e.soname == "libcudnn.so.9"]
    assert [e.path for e in cudnn] == ["/lib/x86_64-linux-gnu/libcudnn.so.9"]
    assert cudnn[0].flags == 0x0303
    assert loader._cache_matches(cudnn[0], "EM_X86_64")
    assert not loader._cache_matches(cudnn[0], "EM_AARCH64")
    assert len(entries) == 180  # the file ends with a pip list, not ldconfig lines


@pytest.mark.skipif(not (os.path.exists("/etc/ld.so.cache") and (shutil.which("ldconfig") or os.path.exists("/sbin/ldconfig"))),
                    reason="needs /etc/ld.so.cache and ldconfig")
def test_binary_cache_equals_ldconfig_p():
    data = Path("/etc/ld.so.cache").read_bytes()
    parsed = loader.parse_ld_so_cache(data)
    exe = shutil.which("ldconfig") or "/sbin/ldconfig"
    text = subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=10).stdout
    listed = loader.parse_ldconfig_p(text)
    assert parsed
    assert sorted((e.soname, e.path, e.flags) for e in parsed) == sorted((e.soname, e.path, e.flags) for e in listed)


def test_cache_falls_back_to_ldconfig_p():
    fake = FakeSystem(commands={"ldconfig -p": (H200 / "libs.txt").read_text()})
    entries, src = loader.load_cache(fake)
    assert src == "ldconfig -p" and len(entries) == 180
    entries, src = loader.load_cache(FakeSystem())
    assert entries == [] and src == ""


def test_garbage_cache_is_ignored():
    assert loader.parse_ld_so_cache(b"glibc-ld.so.cache1.1" + b"\xff" * 10) == []
    assert loader.parse_ld_so_cache(b"") == []


# -- search order ---------------------------------------------------------------------------------------
def _info(rpath=None, runpath=None) -> elf.ElfInfo:
    return elf.ElfInfo("/t/lib/libreq.so", 64, "EM_X86_64", None, ("libfoo.so.1",),
                       tuple(rpath) if rpath is not None else None, tuple(runpath) if runpath is not None else None)


def _fake(env=None) -> FakeSystem:
    return FakeSystem(files={"/t/rp/libfoo.so.1": b"x", "/t/ld/libfoo.so.1": b"x", "/t/run/libfoo.so.1": b"x",
                             "/usr/lib/x86_64-linux-gnu/libfoo.so.1": b"x", "/opt/cache/libfoo.so.1": b"x"},
                      env=env or {})


CACHE = [loader.CacheEntry("libfoo.so.1", "/opt/cache/libfoo.so.1", 0x0303)]


def test_rpath_beats_ld_library_path():
    res = loader.resolve(_fake({"LD_LIBRARY_PATH": "/t/ld"}), _info(rpath=["$ORIGIN/../rp"]), "/t/lib/libreq.so",
                         "libfoo.so.1", CACHE)
    assert (res.path, res.via) == ("/t/rp/libfoo.so.1", "rpath")
    assert [p for p, _ in res.others] == ["/t/ld/libfoo.so.1", "/opt/cache/libfoo.so.1",
                                       "/usr/lib/x86_64-linux-gnu/libfoo.so.1"]


def test_runpath_disables_rpath_and_comes_after_ld_library_path():
    info = _info(rpath=["/t/rp"], runpath=["/t/run"])
    res = loader.resolve(_fake({"LD_LIBRARY_PATH": "/t/ld"}), info, "/t/lib/libreq.so", "libfoo.so.1", CACHE)
    assert (res.path, res.via) == ("/t/ld/libfoo.so.1", "ld_library_path")
    assert "/t/rp/libfoo.so.1" not in [p for p, _ in res.others]
    res = loader.resolve(_fake(), info, "/t/lib/libreq.so", "libfoo.so.1", CACHE)
    assert (res.path, res.via) == ("/t/run/libfoo.so.1", "runpath")


def test_cache_then_default_dirs_then_unresolved():
    res = loader.resolve(_fake(), _info(), "/t/lib/libreq.so", "libfoo.so.1", CACHE)
    assert (res.path, res.via) == ("/opt/cache/libfoo.so.1", "ldconfig")
    res = loader.resolve(_fake(), _info(), "/t/lib/libreq.so", "libfoo.so.1", [])
    assert (res.path, res.via) == ("/usr/lib/x86_64-linux-gnu/libfoo.so.1", "default")
    res = loader.resolve(_fake(), _info(), "/t/lib/libreq.so", "libbar.so.2", CACHE)
    assert (res.path, res.via, res.others) == ("", "unresolved", ())


def test_expand_origin():
    assert loader.expand("$ORIGIN/../../nvidia/cudnn/lib", "/s/torch/lib", "EM_X86_64") == "/s/nvidia/cudnn/lib"
    assert loader.expand("${ORIGIN}", "/s/torch/lib", "EM_X86_64") == "/s/torch/lib"


@needs_cc
@pytest.mark.skipif(not shutil.which("ldd"), reason="needs ldd")
@pytest.mark.parametrize("tag", ["rpath", "runpath"])
def test_agrees_with_the_real_loader(tmp_path, tag):
    """Two copies of libfoo.so.1; the requesting library names one through RPATH or RUNPATH and
    LD_LIBRARY_PATH names the other: gpuvet must pick what ld.so picks."""
    a = elfbuild.shared_lib(tmp_path / "a", "libfoo.so.1", soname="libfoo.so.1")
    b = elfbuild.shared_lib(tmp_path / "b", "libfoo.so.1", soname="libfoo.so.1")
    kw = {tag: "$ORIGIN/../a"}
    req = elfbuild.shared_lib(tmp_path / "req", "libreq.so", needed=("libfoo.so.1",), **kw)
    env = {"LD_LIBRARY_PATH": str(b.parent), "PATH": os.environ.get("PATH", "")}
    out = subprocess.run(["ldd", str(req)], capture_output=True, text=True, env=env, timeout=30).stdout
    real = next(line.split("=>")[1].split("(")[0].strip() for line in out.splitlines() if "libfoo.so.1" in line)
    sysm = System(environ=env)
    info = elf.elf_info(sysm, str(req))
    res = loader.resolve(sysm, info, str(req), "libfoo.so.1", [])
    assert os.path.realpath(res.path) == os.path.realpath(real)
    assert res.via == ("rpath" if tag == "rpath" else "ld_library_path")
    assert os.path.realpath(res.path) == os.path.realpath(a if tag == "rpath" else b)


# -- the H200 ----------------------------------------------------------------------------------------
@needs_cc
def test_h200_resolution_matches_ldd(tmp_path):
    """Every GPU/torch DT_NEEDED of libtorch_cuda.so resolves to the file the real loader took on the
    H200 (the ldd lines in torchlibs.txt), with LD_LIBRARY_PATH and the ldconfig cache as there."""
    fake = elfbuild.h200_system(tmp_path)
    lib = f"{elfbuild.H200_SITE}/torch/lib/libtorch_cuda.so"
    rows = loader.resolve_framework_libraries(fake, [lib], framework_dir=f"{elfbuild.H200_SITE}/torch",
                                              site_dir=elfbuild.H200_SITE)
    ldd = elfbuild.h200_ldd()
    shared = {r["soname"]: r for r in rows if r.table == "shared_libraries"}
    assert len(shared) == 14
    for soname, r in shared.items():
        assert r["path"] == ldd[soname], soname
        assert r["via"] == "rpath"
    assert shared["libcudnn.so.9"]["others"] == ["/lib/x86_64-linux-gnu/libcudnn.so.9"]


@needs_cc
def test_h200_cudnn_loaded_and_shadowed(tmp_path):
    fake = elfbuild.h200_system(tmp_path)
    rows = loader.resolve_framework_libraries(fake, [f"{elfbuild.H200_SITE}/torch/lib/libtorch_cuda.so"],
                                              framework_dir=f"{elfbuild.H200_SITE}/torch", site_dir=elfbuild.H200_SITE)
    cudnn = [r for r in rows if r.table == "libraries" and r["name"] == "cudnn"]
    loaded = [r for r in cudnn if r["selected"]]
    shadowed = [r for r in cudnn if not r["selected"]]
    assert [(r["version"], r["origin"], r["path"]) for r in loaded] == [
        ("9.19.0.56", "pip", f"{elfbuild.H200_SITE}/nvidia/cudnn/lib/libcudnn.so.9")]
    assert [(r["version"], r["origin"], r["path"]) for r in shadowed] == [
        ("9.14.0", "system", "/lib/x86_64-linux-gnu/libcudnn.so.9")]
    names = {r["name"] for r in rows if r.table == "libraries"}
    assert names == {"cudnn", "cublas", "cublaslt", "nccl", "cudart", "cusparselt"}
    cudart = next(r for r in rows if r.table == "libraries" and r["name"] == "cudart" and r["selected"])
    assert cudart["version"] == "13.0.96"


@needs_cc
def test_h200_ld_library_path_cannot_beat_rpath(tmp_path):
    """Pointing LD_LIBRARY_PATH at the system copy does not change what a DT_RPATH library loads."""
    fake = elfbuild.h200_system(tmp_path, env_overrides={"LD_LIBRARY_PATH": "/lib/x86_64-linux-gnu"})
    rows = loader.resolve_framework_libraries(fake, [f"{elfbuild.H200_SITE}/torch/lib/libtorch_cuda.so"],
                                              framework_dir=f"{elfbuild.H200_SITE}/torch", site_dir=elfbuild.H200_SITE)
    sel = next(r for r in rows if r.table == "libraries" and r["name"] == "cudnn" and r["selected"])
    assert sel["version"] == "9.19.0.56"


def test_origin_of():
    assert loader.origin_of("/s/torch/lib/libamdhip64.so", "/s/torch", {}, None) == "framework-bundled"
    assert loader.origin_of("/v/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9", "/x", {}, None) == "pip"
    assert loader.origin_of("/home/u/miniconda3/envs/a/lib/libcudnn.so.9", "", {}, None) == "conda"
    assert loader.origin_of("/envs/a/lib/libcudnn.so.9", "", {"CONDA_PREFIX": "/envs/a"}, None) == "conda"
    assert loader.origin_of("/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "", {}, None) == "system"


def test_file_version_prefers_real_name_then_sibling():
    fake = FakeSystem(files={"/l/libcudnn.so.9": b"x", "/l/libcudnn.so.9.14.0": b"x", "/l/libcudnn.so.8.9.7": b"x"})
    assert loader.file_version(fake, "/l/libcudnn.so.9", "libcudnn.so.9") == "9.14.0"
    fake = FakeSystem(files={"/l/libnccl.so.2": b"x"})
    assert loader.file_version(fake, "/l/libnccl.so.2", "libnccl.so.2") == "2"
