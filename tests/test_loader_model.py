"""The loader model beyond one DT_NEEDED: LD_PRELOAD, the dlopen'd cuDNN sub-libraries, the loader
chain's RPATH, and the checks that judge them (BLD045 information, BLD048 mixed releases, BLD049 an
older library than the build's) -- on real ELF files built with the system compiler, laid out like
the H200 (tests/fixtures/real/h200-cuda13)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuvet import kb as kbmod
from gpuvet.checks import bld
from gpuvet.app.engine import run_checks
from gpuvet.model import Facts, Outcome, Severity, row
from gpuvet.probes import elf, loader

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "elf"))
import elfbuild  # noqa: E402

needs_cc = pytest.mark.skipif(not elfbuild.have_toolchain(), reason="needs gcc and objcopy")
SITE = elfbuild.H200_SITE
PIP = f"{SITE}/nvidia/cudnn/lib"
SYS = "/lib/x86_64-linux-gnu"
SUBS = ("libcudnn_graph", "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled", "libcudnn_heuristic",
        "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv")
TORCH_REQ = "nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\""


@pytest.fixture(autouse=True)
def _fresh_cache():
    elf.clear_cache()
    yield
    elf.clear_cache()


def _h200(tmp: Path, env=None, pip_cudnn: dict | None = None):
    """The H200 layout with a real pip libcudnn.so.9 (RUNPATH $ORIGIN unless told otherwise), its
    sub-libraries in the pip wheel (9.19.0.56) and in the system directory (9.14.0)."""
    pip_cudnn = {"runpath": "$ORIGIN"} if pip_cudnn is None else pip_cudnn
    main = elfbuild.shared_lib(tmp / "pip", "libcudnn.so.9", soname="libcudnn.so.9", **pip_cudnn)
    sysmain = elfbuild.shared_lib(tmp / "sys", "libcudnn.so.9", soname="libcudnn.so.9")
    files: dict[str, object] = {f"{PIP}/libcudnn.so.9": main.read_bytes(), f"{SYS}/libcudnn.so.9": sysmain.read_bytes()}
    record = ["nvidia/cudnn/lib/libcudnn.so.9,sha256=x,1"]
    for s in SUBS:
        files[f"{PIP}/{s}.so.9"] = b"\x7fELF stub"
        record.append(f"nvidia/cudnn/lib/{s}.so.9,sha256=x,1")
        files[f"{SYS}/{s}.so.9"] = b"\x7fELF stub"
        files[f"{SYS}/{s}.so.9.14.0"] = b"\x7fELF stub"
    files[f"{SITE}/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD"] = "\n".join(record) + "\n"
    return elfbuild.h200_system(tmp, env_overrides=env, extra_files=files)


def _rows(fake):
    return loader.resolve_framework_libraries(fake, [f"{SITE}/torch/lib/libtorch_cuda.so"],
                                              framework_dir=f"{SITE}/torch", site_dir=SITE)


def _facts(rows, env=None):
    f = Facts()
    f.add(rows)
    f.add([row("framework_builds", "version.py", name="torch", version="2.11.0+cu130", cuda="13.0", hip="",
               debug=False, git_version="", channel="stable", targets=["sm_90"], targets_source="ELF",
               variant="cuda", path=f"{SITE}/torch"),
           row("packages", "dist-info", name="torch", version="2.11.0+cu130", location=SITE, requires=[TORCH_REQ])])
    f.add([row("env_vars", "environ", name=k, value=v) for k, v in (env or {}).items()])
    f.mark("env_vars", "gpu_devices")
    return f


def _run(check, f):
    return [x for x in run_checks(f, [check], kbmod.load())]


@needs_cc
def test_healthy_h200_layout_one_release_and_information_only(tmp_path):
    rows = _rows(_h200(tmp_path))
    subs = [r for r in rows if r.table == "libraries" and r["family"] == "cudnn" and r["selected"]]
    assert {r["name"] for r in subs} == {"cudnn"} | {s[3:] for s in SUBS}
    assert {r["version"] for r in subs} == {"9.19.0.56"}
    dl = [r for r in rows if r.table == "shared_libraries" and r["how"] == "dlopen"]
    assert len(dl) == len(SUBS) and all(r["requested_by"] == f"{PIP}/libcudnn.so.9" for r in dl)
    f = _facts(rows)
    assert [x.outcome for x in _run(bld.gpu_library_mixed_releases, f)] == [Outcome.PASSED]
    assert [x.outcome for x in _run(bld.gpu_library_older_than_build, f)] == [Outcome.PASSED]
    shadow = _run(bld.gpu_library_shadowed_copy, f)
    # the system cuDNN / NCCL that nothing loads: information, with the setting that would load them
    assert shadow and all(x.severity is Severity.INFO for x in shadow)
    cudnn = next(x for x in shadow if x.title.startswith("cuDNN"))
    assert f"loaded only with LD_PRELOAD={SYS}/libcudnn.so.9" in cudnn.title


@needs_cc
def test_ld_library_path_mixes_cudnn_releases(tmp_path):
    """torch's DT_RPATH wins for libcudnn.so.9 (9.19), but libcudnn.so.9's RUNPATH comes after
    LD_LIBRARY_PATH: its sub-libraries come from the system 9.14 -> two releases, an error."""
    env = {"LD_LIBRARY_PATH": f"{SYS}:/usr/local/nvidia/lib64"}
    rows = _rows(_h200(tmp_path, env))
    sel = {r["name"]: r for r in rows if r.table == "libraries" and r["family"] == "cudnn" and r["selected"]}
    assert sel["cudnn"]["version"] == "9.19.0.56" and sel["cudnn"]["via"] == "rpath"
    assert sel["cudnn_graph"]["version"] == "9.14.0" and sel["cudnn_graph"]["via"] == "ld_library_path"
    res = _run(bld.gpu_library_mixed_releases, _facts(rows, env))
    assert [x.outcome for x in res] == [Outcome.FAILED] and res[0].severity is Severity.ERROR
    assert "2 releases" in res[0].title and "ld_library_path" in res[0].title
    assert res[0].fixes[0].command == "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64"


@needs_cc
def test_loader_chain_rpath_keeps_sub_libraries_without_runpath(tmp_path):
    """A libcudnn.so.9 with no RUNPATH: dlopen walks the loader chain's RPATH (libtorch_cuda.so's)
    before LD_LIBRARY_PATH, so the pip sub-libraries win (glibc elf/dl-load.c)."""
    env = {"LD_LIBRARY_PATH": SYS}
    rows = _rows(_h200(tmp_path, env, pip_cudnn={}))
    graph = next(r for r in rows if r.table == "libraries" and r["name"] == "cudnn_graph" and r["selected"])
    assert graph["path"] == f"{PIP}/libcudnn_graph.so.9" and graph["via"] == "rpath"


@needs_cc
def test_ld_preload_of_system_cudnn_wins_over_rpath(tmp_path):
    env = {"LD_PRELOAD": f"{SYS}/libcudnn.so.9"}
    rows = _rows(_h200(tmp_path, env))
    pre = [r for r in rows if r.table == "shared_libraries" and r["how"] == "preload"]
    assert [(r["soname"], r["path"]) for r in pre] == [("libcudnn.so.9", f"{SYS}/libcudnn.so.9")]
    sel = next(r for r in rows if r.table == "libraries" and r["name"] == "cudnn" and r["selected"])
    assert (sel["path"], sel["version"], sel["via"]) == (f"{SYS}/libcudnn.so.9", "9.14.0", "preload")
    # the preloaded system libcudnn opens its own (system) sub-libraries
    graph = next(r for r in rows if r.table == "libraries" and r["name"] == "cudnn_graph" and r["selected"])
    assert graph["version"] == "9.14.0"
    res = _run(bld.gpu_library_older_than_build, _facts(rows, env))
    assert [x.outcome for x in res] == [Outcome.FAILED]
    assert "built for cuDNN 9.19.0.56" in res[0].title and "9.14.0" in res[0].title and "LD_PRELOAD" in res[0].title
    assert res[0].fixes[0].command == "unset LD_PRELOAD"
    # the wheel's copy is now the one nothing loads: information, saying how it would win again
    info = [x for x in _run(bld.gpu_library_shadowed_copy, _facts(rows, env)) if x.title.startswith("cuDNN")]
    assert info and info[0].severity is Severity.INFO and "removing libcudnn.so.9 from LD_PRELOAD" in info[0].title


@needs_cc
def test_etc_ld_so_preload_and_bare_names(tmp_path):
    fake = _h200(tmp_path)
    fake.files["/etc/ld.so.preload"] = f"# site policy\n{SYS}/libcudnn.so.9\n"
    sel = next(r for r in _rows(fake) if r.table == "libraries" and r["name"] == "cudnn" and r["selected"])
    assert sel["via"] == "preload" and sel["path"] == f"{SYS}/libcudnn.so.9"
    elf.clear_cache()
    fake = _h200(tmp_path / "b", {"LD_PRELOAD": "libcudnn.so.9 /nonexistent/libfoo.so"})
    rows = _rows(fake)
    pre = [(r["soname"], r["path"], r["via"]) for r in rows if r.table == "shared_libraries" and r["how"] == "preload"]
    # a bare name is searched (the ldconfig cache finds the system copy); a missing file is ignored
    assert pre == [("libcudnn.so.9", f"{SYS}/libcudnn.so.9", "preload"),
                   ("/nonexistent/libfoo.so", "", "unresolved")]


def test_dlopened_names():
    assert loader._dlopened("libcudnn.so.9")[:2] == ["libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9"]
    assert "libcudnn_cnn_infer.so.8" in loader._dlopened("libcudnn.so.8")
    assert loader._dlopened("libcublas.so.13") == []
    assert loader.library_name("libcudnn_engines_precompiled.so.9") == "cudnn_engines_precompiled"
    assert loader.family_of("cudnn_graph") == "cudnn" and loader.family_of("cublaslt") == "cublas"


def test_newer_library_than_build_passes_and_unpinned_skips():
    f = _facts([row("libraries", "x", name="cudnn", version="9.20.0", path=f"{SYS}/libcudnn.so.9", origin="system",
                    selected=True, requested_by="libtorch_cuda.so", family="cudnn", via="preload")])
    assert [x.outcome for x in _run(bld.gpu_library_older_than_build, f)] == [Outcome.PASSED]
