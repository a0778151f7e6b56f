"""The compiled-extension scan (real .so files built here with gcc), TORCH_CUDA_ARCH_LIST /
PYTORCH_ROCM_ARCH, the host compilers, and which fix a diagnosis carries."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet import kb as kbmod
from gpuvet.checks import env as envchecks, ext
from gpuvet.app.engine import run_checks
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.probes import elf, extensions, host
from gpuvet.probes.system import System

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

needs_cc = pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")
TORCH_DIR = next((os.path.join(p, "torch") for p in sys.path if os.path.isfile(os.path.join(p, "torch", "lib", "libc10.so"))),
                 None)
needs_torch = pytest.mark.skipif(TORCH_DIR is None, reason="needs an installed torch (its libc10.so)")
REAL = Path(__file__).resolve().parent / "fixtures" / "real"


@pytest.fixture(autouse=True)
def _fresh_cache():
    elf.clear_cache()
    yield
    elf.clear_cache()


def _gpu(arch="sm_90", name="NVIDIA H200", vendor="nvidia"):
    return row("gpu_devices", "nvml", vendor=vendor, index=0, name=name, arch=arch)


def _run(check, *rows, probed=()):
    f = Facts()
    f.add(rows)
    f.mark(*probed)
    return run_checks(f, [check], kbmod.load())


def _a_c10_symbol_libc10_defines() -> str:
    """A real c10 symbol: one libtorch_cpu.so needs and libc10.so defines (read from their ELF)."""
    sysm = System()
    _, undef = elf.raw_elf(sysm, f"{TORCH_DIR}/lib/libtorch_cpu.so", extensions._is_torch_symbol)
    tab = elf.SymbolTable(sysm, f"{TORCH_DIR}/lib/libc10.so")
    try:
        return next(n for n in undef if n.startswith("_ZN3c10") and tab.defines(n))
    finally:
        tab.close()


def _build_ext(tmp: Path, name: str, c_symbols: list[str], link_c10: bool = True) -> Path:
    """gcc a real extension .so calling these (mangled) symbols, DT_NEEDED libc10.so."""
    tmp.mkdir(parents=True, exist_ok=True)
    src = tmp / f"{name}.c"
    decls = "".join(f"extern void {s}(void);\n" for s in c_symbols)
    calls = "".join(f"  {s}();\n" for s in c_symbols)
    src.write_text(decls + "void gpuvet_ext_entry(void) {\n" + calls + "}\n")
    out = tmp / f"{name}.cpython-311-x86_64-linux-gnu.so"
    argv = ["gcc", "-shared", "-fPIC", "-o", str(out), str(src), "-Wl,--no-as-needed"]
    if link_c10:
        argv += [f"-L{TORCH_DIR}/lib", "-lc10"]
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    return out


def _site_with(tmp: Path, rel: str, data: bytes, dist="gpuvet_fake_ext-0.1") -> Path:
    site = tmp / "lib" / "python3.11" / "site-packages"
    (site / rel).parent.mkdir(parents=True, exist_ok=True)
    (site / rel).write_bytes(data)
    (site / f"{dist}.dist-info").mkdir(parents=True, exist_ok=True)
    (site / f"{dist}.dist-info" / "RECORD").write_text(f"{rel},sha256=x,{len(data)}\ngpuvet_fake_ext/__init__.py,,\n")
    return site


# -- undefined torch symbols ------------------------------------------------------------------------------
@needs_cc
@needs_torch
def test_extension_needing_symbols_libtorch_lacks(tmp_path):
    real = _a_c10_symbol_libc10_defines()
    fake = "_ZN3c1017gpuvet_not_in_c10Ev"  # c10::gpuvet_not_in_c10(), which no torch exports
    so = _build_ext(tmp_path / "build", "_C", [real, fake])
    site = _site_with(tmp_path, "gpuvet_fake_ext/_C.cpython-311-x86_64-linux-gnu.so", so.read_bytes())
    sysm = System(environ={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    rows = extensions.probe_extensions(sysm, paths=[str(site)], torch_dir=TORCH_DIR)
    assert len(rows) == 1
    r = rows[0]
    assert r["dist"] == "gpuvet-fake-ext" and r["kind"] == "site-packages" and r["links_torch"] == ["libc10.so"]
    assert r["torch_symbols"] == 2 and r["missing_count"] == 1 and r["missing_symbols"] == [fake]
    res = _run(ext.extension_needs_symbols_torch_lacks, r)
    assert [x.outcome for x in res] == [Outcome.FAILED] and res[0].cause == "extension-abi"
    assert fake in res[0].title and "_C" in res[0].title
    assert "pip install --no-build-isolation --no-binary gpuvet-fake-ext" in res[0].fixes[0].command
    # the disk cache: private, and a second scan gives the same rows from it
    cache = tmp_path / "cache" / "gpuvet" / "elf" / extensions.cache_name(sysm)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    assert extensions.probe_extensions(sysm, paths=[str(site)], torch_dir=TORCH_DIR) == rows
    # a rebuilt file (new size/mtime) is read again: now every symbol is there
    good = _build_ext(tmp_path / "build2", "_C", [real])
    target = site / "gpuvet_fake_ext/_C.cpython-311-x86_64-linux-gnu.so"
    target.write_bytes(good.read_bytes())
    os.utime(target, (1, 1))
    again = extensions.probe_extensions(sysm, paths=[str(site)], torch_dir=TORCH_DIR)
    assert again[0]["missing_count"] == 0
    assert [x.outcome for x in _run(ext.extension_needs_symbols_torch_lacks, again[0])] == [Outcome.PASSED]


@needs_cc
@needs_torch
def test_untrusted_cache_is_ignored(tmp_path):
    so = _build_ext(tmp_path / "b", "_C", ["_ZN3c1017gpuvet_not_in_c10Ev"])
    site = _site_with(tmp_path, "gpuvet_fake_ext/_C.cpython-311-x86_64-linux-gnu.so", so.read_bytes())
    d = tmp_path / "cache" / "gpuvet" / "elf"
    d.mkdir(parents=True)
    os.chmod(d.parent, 0o700)
    os.chmod(d, 0o777)  # writable by others: never read, never written
    sysm = System(environ={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    (d / extensions.cache_name(sysm)).write_text('{"version": 1, "files": {}}')
    rows = extensions.probe_extensions(sysm, paths=[str(site)], torch_dir=TORCH_DIR)
    assert rows[0]["missing_count"] == 1
    assert (d / extensions.cache_name(sysm)).read_text() == '{"version": 1, "files": {}}'


# -- GPU targets, CUDA major, the JIT cache ------------------------------------------------------------
@needs_cc
def test_jit_extension_built_for_sm80_only(tmp_path):
    so = elfbuild.shared_lib(tmp_path / "b", "sm80_ext.so", soname="sm80_ext.so",
                             needed=("libc10.so", "libtorch_cuda.so", "libcudart.so.12"),
                             sections={".nv_fatbin": elfbuild.fatbin_from_counts({"sm_80": 3})})
    jit = tmp_path / "torch_extensions" / "py311_cu130" / "sm80_ext"
    jit.mkdir(parents=True)
    shutil.copy(so, jit / "sm80_ext.so")
    sysm = System(environ={"TORCH_EXTENSIONS_DIR": str(tmp_path / "torch_extensions")})
    rows = extensions.probe_extensions(sysm, paths=[], torch_dir=None)
    assert [(r["name"], r["kind"], r["gpu_code"], r["targets"], r["cuda_major"]) for r in rows] == [
        ("sm80_ext", "jit-cache", "cuda-fatbin", ["sm_80"], "12")]
    r = rows[0]
    res = _run(ext.extension_lacks_gpu_arch, r, _gpu())
    assert [x.outcome for x in res] == [Outcome.FAILED] and res[0].component == "extension"
    assert "no kernels for GPU 0 NVIDIA H200 (sm_90)" in res[0].title and "sm_80" in res[0].title
    assert res[0].fixes[0].command == f"rm -rf {jit}" and "TORCH_CUDA_ARCH_LIST=9.0" in res[0].fixes[0].text
    assert [x.outcome for x in _run(ext.extension_lacks_gpu_arch, r, _gpu("sm_86", "NVIDIA A40"))] == [Outcome.PASSED]
    torch = row("framework_builds", "v", name="torch", version="2.11.0+cu130", cuda="13.0", hip="", variant="cuda")
    res = _run(ext.extension_links_another_runtime_major, r, torch)
    assert [x.outcome for x in res] == [Outcome.FAILED] and "CUDA 12 but torch 2.11.0+cu130 for CUDA 13" in res[0].title


def test_ptx_only_extension_is_a_warning():
    r = row("extensions", "ELF x", path="/s/x.so", name="x", dist="x", kind="site-packages", links_torch=["libc10.so"],
            gpu_code="cuda-fatbin", targets=["compute_80"], cuda_major="13", hip_major="", torch_symbols=0,
            missing_symbols=[], missing_count=0, torch_dir="")
    res = _run(ext.extension_lacks_gpu_arch, r, _gpu())
    assert [x.severity for x in res] == [Severity.WARNING]


# -- TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH ------------------------------------------------------------
@pytest.mark.parametrize("value,ok", [("8.0", False), ("Ampere", False), ("8.0;8.6", False), ("9.0a", True),
                                      ("8.0;9.0", True), ("8.0+PTX", True), ("8.0 9.0", True), ("Hopper", True)])
def test_torch_cuda_arch_list_against_the_h200(value, ok):
    env = row("env_vars", "environ", name="TORCH_CUDA_ARCH_LIST", value=value)
    res = _run(envchecks.build_arch_list_misses_gpu, env, _gpu())
    assert [x.outcome for x in res] == [Outcome.PASSED if ok else Outcome.FAILED]
    if not ok:
        assert res[0].cause == "gpu-arch-unsupported" and res[0].component == "config-env"
        assert res[0].fixes[0].command.startswith('export TORCH_CUDA_ARCH_LIST="') and "9.0" in res[0].fixes[0].command


def test_pytorch_rocm_arch_without_the_gpu():
    env = row("env_vars", "environ", name="PYTORCH_ROCM_ARCH", value="gfx90a;gfx1100")
    res = _run(envchecks.build_arch_list_misses_gpu, env, _gpu("gfx942", "AMD Instinct MI300X", "amd"))
    assert [x.outcome for x in res] == [Outcome.FAILED]
    assert res[0].fixes[0].command == 'export PYTORCH_ROCM_ARCH="gfx90a;gfx1100;gfx942"'
    assert [x.outcome for x in _run(envchecks.build_arch_list_misses_gpu, _gpu(), probed=("env_vars",))] == [Outcome.SKIPPED]


# -- host compilers ------------------------------------------------------------------------------------------
@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
def test_missing_cc_is_named_and_its_fix_is_its_own():
    base = {"PATH": os.environ.get("PATH", "")}
    rows = host.probe_host_compilers(System(environ=dict(base, CC="/nonexistent/gcc")))
    cc = next(r for r in rows if r["role"].startswith("CC"))
    assert (cc["runs"], cc["requested"], cc["error"]) == (False, "CC=/nonexistent/gcc", "/nonexistent/gcc not found")
    cxx = next(r for r in rows if r["role"].startswith("CXX"))
    assert cxx["runs"] is True and cxx["name"] == "gcc" and cxx["version"]
    res = _run(envchecks.host_compiler_not_runnable, *rows)
    assert [x.outcome for x in res] == [Outcome.FAILED] and res[0].severity is Severity.ERROR
    assert "CC=/nonexistent/gcc" in res[0].title and res[0].fixes[0].command.startswith("unset CC")
    ok = host.probe_host_compilers(System(environ=base))
    assert all(r["runs"] for r in ok)
    assert [x.outcome for x in _run(envchecks.host_compiler_not_runnable, *ok)] == [Outcome.PASSED]


def test_parse_cc_version():
    assert host.parse_cc_version("gcc (Debian 12.2.0-14+deb12u1) 12.2.0\n") == ("gcc", "12.2.0")
    assert host.parse_cc_version("g++ (GCC) 13.3.0\nCopyright") == ("gcc", "13.3.0")
    assert host.parse_cc_version("Ubuntu clang version 18.1.3 (1ubuntu1)\nTarget: x86_64") == ("clang", "18.1.3")
    assert host.parse_cc_version("") is None


def test_inductor_cxx_failure_is_diagnosed_with_the_compiler_fix():
    """The real log of torch.compile with CXX=/nonexistent/g++ on the CPU VM, diagnosed with live
    facts that show the missing compiler: toolchain / config-env, and the fix is ENV065's own."""
    from gpuvet.app.diagnose import diagnose_text

    live = Facts()
    live.add(host.probe_host_compilers(System(environ={"PATH": os.environ.get("PATH", ""), "CXX": "/nonexistent/g++"})))
    # an unrelated finding sharing nothing with the error (a NCCL copy nothing loads): never its fix
    live.add([row("libraries", "x", name="nccl", version="2.28.3", path="/lib/x86_64-linux-gnu/libnccl.so.2",
                  origin="system", selected=False, requested_by="t", family="nccl", via="ldconfig"),
              row("libraries", "x", name="nccl", version="2.28.9", path="/s/nvidia/nccl/lib/libnccl.so.2", origin="pip",
                  selected=True, requested_by="t", family="nccl", via="rpath")])
    rep = diagnose_text((REAL / "cpu-vm-faults" / "runs" / "inductor-cxx-missing.log").read_text(), "log", live)
    d = rep.extra["diagnoses"][0]
    assert (d["cause"], d["component"]) == ("toolchain", "config-env")
    assert "ENV065" in d["checks"] and d["fix"].startswith("Point CXX at a compiler that exists")


def test_diagnosis_fix_comes_from_its_own_cause_and_component():
    """cuDNN version mismatch in the log; facts: an NCCL shadowed-copy warning (same cause) and the
    cuDNN finding that explains it.  The diagnosis carries the cuDNN fix, never the NCCL one."""
    from gpuvet.app.diagnose import scan_text
    from gpuvet.logs.rank import rank
    from gpuvet.model import Finding, Fix

    scan = scan_text("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but "
                     "found runtime version (9, 14, 0).\n")
    nccl = Finding(code="BLD045", name="gpu-library-shadowed-copy", severity=Severity.WARNING, outcome=Outcome.FAILED,
                   title="NCCL: shadowed copy", fixes=(Fix("Quote NCCL 2.28.9 in bug reports"),),
                   cause="runtime-mismatch", component="system-library")
    diags = rank(scan, [nccl])
    assert diags[0].cause == "runtime-mismatch" and "NCCL" not in diags[0].fix
    cudnn = Finding(code="BLD049", name="gpu-library-older-than-build", severity=Severity.ERROR,
                    outcome=Outcome.FAILED, title="torch is built for cuDNN 9.19 but will load 9.14",
                    fixes=(Fix("Stop preloading the other copy", command="unset LD_PRELOAD"),),
                    cause="runtime-mismatch", component="system-library")
    diags = rank(scan, [nccl, cudnn])
    assert diags[0].fix == "Stop preloading the other copy" and diags[0].fixes[0]["command"] == "unset LD_PRELOAD"


def test_the_scan_cache_is_kept_per_examined_environment():
    """Each interpreter's scan has its own cache file: a check reads its own environment's entries,
    never the whole machine's (start-up)."""
    a = System(python="/opt/a/bin/python")
    b = System(python="/opt/b/bin/python")
    assert extensions.cache_name(a) != extensions.cache_name(b)
    assert extensions.cache_name(a) == extensions.cache_name(System(python="/opt/a/bin/python"))
    assert extensions.cache_name(System()).startswith("elf-scan-v1-")
