"""Compiler ranges beyond nvcc's GCC (issue 10): the C++ standard the installed torch compiles its C++
paths with (Inductor, cpp_extension), read from its own files, against the oldest GCC accepting that
-std flag (KB cxx_standards); and hipcc's clang named by HIP_CLANG_PATH."""
from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import pytest

from gpuvet import kb as kbmod
from gpuvet.app.engine import run_checks
from gpuvet.checks import env as envchecks
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.probes import framework, host
from gpuvet.probes.system import System

SITE = sysconfig.get_paths()["purelib"]
HAVE_TORCH = Path(SITE, "torch", "_inductor", "cpp_builder.py").is_file()


def run(check, *rows):
    f = Facts()
    f.add(list(rows))
    f.mark("host_compilers", "framework_builds", "env_vars")
    return list(run_checks(f, [check], kbmod.load()))


def torch_row(std: str, src: str = "cpp_builder.py: -std=c++20", version: str = "2.13.0+cpu"):
    return row("framework_builds", "version.py", name="torch", version=version, cuda="", hip="", debug=False,
               git_version="", channel="stable", targets=[], targets_source="", variant="cpu", path="/t/torch",
               cxx_standard=std, cxx_standard_source=src)


def cc(role: str, version: str, requested: str, name: str = "gcc", path: str = "/usr/bin/g++-9"):
    return row("host_compilers", f"{path} --version", name=name, version=version, path=path, role=role,
               requested=requested, runs=True, error="")


@pytest.mark.skipif(not (HAVE_TORCH and shutil.which("g++")), reason="needs the installed torch and g++")
def test_installed_torch_and_the_real_gcc():
    """torch 2.13.0's own cpp_builder.py says -std=c++20; this machine's g++ (GCC 12.2) accepts it."""
    b = [r for r in framework.probe_frameworks(System(), [SITE]) if r.table == "framework_builds" and r["name"] == "torch"]
    assert b and b[0]["cxx_standard"] in ("17", "20") and "cpp_builder.py" in b[0]["cxx_standard_source"]
    rows = host.probe_host_compilers(System(environ={"PATH": os.environ.get("PATH", "")}))
    res = run(envchecks.host_compiler_older_than_framework_needs, b[0], *rows)
    assert [x.outcome for x in res] == [Outcome.PASSED]
    assert "accept torch's C++" in res[0].title


def test_gcc9_for_inductors_cxx20_is_an_error_with_the_range_and_its_source():
    res = run(envchecks.host_compiler_older_than_framework_needs, torch_row("20"),
              cc("CXX (Inductor C++, cpp_extension)", "9.5.0", "CXX=g++-9"),
              cc("CC (Triton; cpp_extension's nvcc -ccbin)", "9.5.0", "CC=gcc-9", path="/usr/bin/gcc-9"))
    fails = [x for x in res if x.outcome is Outcome.FAILED]
    assert len(fails) == 2
    cxx = next(x for x in fails if x.title.startswith("CXX"))
    assert cxx.severity is Severity.ERROR and "gcc >= 10" in cxx.title and "-std=c++20" in cxx.title
    assert any("gcc.gnu.org/projects/cxx-status.html" in e.text for e in cxx.evidence)
    assert cxx.fixes[0].command == "export CXX=g++-12"
    ccf = next(x for x in fails if x.title.startswith("CC"))
    assert ccf.severity is Severity.WARNING and ccf.fixes[0].command == "export CC=gcc-12"


def test_clang9_is_judged_against_clangs_own_minimum():
    res = run(envchecks.host_compiler_older_than_framework_needs, torch_row("20"),
              cc("CXX (Inductor C++, cpp_extension)", "9.0.1", "CXX=clang++-9", name="clang", path="/usr/bin/clang++-9"),
              cc("hipcc's clang (HIP_CLANG_PATH)", "15.0.6", "HIP_CLANG_PATH=/usr/bin", name="clang",
                 path="/usr/bin/clang++-15"))
    [f] = [x for x in res if x.outcome is Outcome.FAILED]
    assert "clang >= 10" in f.title and f.fixes[0].command == "export CXX=clang++-12"
    assert any("clang.llvm.org/cxx_status.html" in e.text for e in f.evidence)


def test_cxx17_torch_accepts_gcc9_and_an_unknown_standard_is_unknown():
    assert [x.outcome for x in run(envchecks.host_compiler_older_than_framework_needs, torch_row("17"),
                                   cc("CXX (Inductor C++, cpp_extension)", "9.5.0", "CXX=g++-9"))] == [Outcome.PASSED]
    res = run(envchecks.host_compiler_older_than_framework_needs, torch_row("23"),
              cc("CXX (Inductor C++, cpp_extension)", "13.2.0", "g++ on PATH (CXX unset)"))
    assert [x.outcome for x in res] == [Outcome.UNKNOWN]


def test_standard_read_from_torchconfig_when_inductor_has_no_flag(tmp_path):
    t = tmp_path / "torch"
    (t / "share" / "cmake" / "Torch").mkdir(parents=True)
    (t / "share" / "cmake" / "Torch" / "TorchConfig.cmake").write_text(
        'set_target_properties(torch PROPERTIES\n    INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"\n'
        '    CXX_STANDARD 17\n)\n')
    std, src = framework.torch_cxx_standard(System(root="/"), str(t))
    assert std == "17" and src.endswith("TorchConfig.cmake: CXX_STANDARD 17")
    assert framework.torch_cxx_standard(System(root="/"), str(tmp_path / "nothing")) == ("", "")


def test_hip_clang_path_without_clang_is_named():
    rows = host.probe_host_compilers(System(environ={"PATH": os.environ.get("PATH", ""),
                                                     "HIP_CLANG_PATH": "/nonexistent/llvm/bin"}))
    hip = [r for r in rows if r["role"].startswith("hipcc")]
    assert len(hip) == 1 and hip[0]["runs"] is False and "HIP_CLANG_PATH=/nonexistent/llvm/bin" == hip[0]["requested"]
    res = run(envchecks.host_compiler_not_runnable, *rows)
    [f] = [x for x in res if x.outcome is Outcome.FAILED]
    assert "HIP_CLANG_PATH" in f.title and f.fixes[0].command == "unset HIP_CLANG_PATH"
    # unset: no row at all (hipcc's default clang is probed as hipcc itself)
    assert not [r for r in host.probe_host_compilers(System(environ={"PATH": os.environ.get("PATH", "")}))
                if r["role"].startswith("hipcc")]


@pytest.mark.skipif(not Path("/usr/bin/clang++-15").exists(), reason="needs Debian's clang-15 (hipcc's dependency)")
def test_hip_clang_path_at_debians_clang15_runs():
    """Debian's hipcc 5.2.3 calls $HIP_CLANG_PATH/clang++-15; with HIP_CLANG_PATH=/usr/bin it runs."""
    rows = host.probe_host_compilers(System(environ={"PATH": os.environ.get("PATH", ""), "HIP_CLANG_PATH": "/usr/bin"}))
    [hip] = [r for r in rows if r["role"].startswith("hipcc")]
    assert hip["runs"] is True and hip["name"] == "clang" and hip["version"].startswith("15.")
    assert hip["path"].startswith("/usr/bin/clang")
