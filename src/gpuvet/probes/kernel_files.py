"""The run-time kernel files of the ROCm math libraries the framework loads: rocBLAS's and
hipBLASLt's Tensile libraries and MIOpen's kernel database directory.

None of these is a shared object the dynamic loader sees: each library finds its directory itself, at
its first call, relative to the copy of the library that is loaded.  So the directory follows the
loader model (``libraries`` rows with ``selected``): a torch ROCm wheel's bundled
``torch/lib/librocblas.so`` reads ``torch/lib/rocblas/library``, a ``/opt/rocm`` one
``/opt/rocm/lib/rocblas/library``.  What each library does (upstream sources read for this module):

* rocBLAS (``library/src/tensile_host.cpp``, ROCm/rocBLAS b520bc8): ``ROCBLAS_TENSILE_LIBPATH`` if set;
  else the directory of the loaded ``librocblas.so`` and the first of ``../../Tensile/library``,
  ``library``, ``../rocblas/library`` that exists, else ``rocblas/library``; then ``<dir>/<gfx>`` when
  that exists.  It reads ``TensileLibrary_lazy_<gfx>.dat``, else ``TensileLibrary_<gfx>.dat``, else
  ``TensileLibrary.dat``, and aborts with "rocBLAS error: Cannot read <file>: ... for GPU arch : <gfx>".
  Debian's packages put the files under ``<libdir>/rocblas/<rocBLAS version>/library``
  (``librocblas4`` 6.4.4-4: ``/usr/lib/x86_64-linux-gnu/rocblas/4.4.1/library``, a string compiled into
  its ``librocblas.so.4.4``; ``librocblas0`` 5.5.1: ``.../rocblas/2.47.0/library``).
* hipBLASLt (``library/src/amd_detail/rocblaslt/src/tensile_host.cpp``, ROCm/hipBLASLt 7d9fb68):
  ``HIPBLASLT_TENSILE_LIBPATH`` if set; else the library's directory + ``../Tensile/library`` if it
  exists, else ``hipblaslt/library``; then ``<dir>/<gfx>``.  It reads ``TensileLibrary_lazy_<gfx>.dat``
  ("rocblaslt error: Cannot read ...").
* MIOpen (``src/db_path.cpp.in``, ``src/binary_cache.cpp``, ROCm/MIOpen 2d1fd99): ``MIOPEN_SYSTEM_DB_PATH``
  if set; else ``share/miopen/db`` beside the directory of the canonical (symlinks resolved)
  ``libMIOpen.so``; kernels ``<gfx>_<CUs>.kdb`` / ``<gfx><hex CUs>.kdb``, else ``<gfx>.kdb``; find and
  performance databases ``<gfx>..HIP.fdb.txt`` / ``.db``.  A missing file is a warning and kernels are
  compiled at run time.
* torch's ROCm wheels copy these to ``torch/lib/rocblas/library``, ``torch/lib/hipblaslt/library``
  (only the files of the wheel's PYTORCH_ROCM_ARCH targets) and ``torch/share/miopen/db``
  (pytorch ``.ci/manywheel/build_rocm.sh``).

Reads are bounded: one directory listing per library (names only, at most ``MAX_NAMES``), no file
contents.  Nothing runs unless a rocBLAS / hipBLASLt / MIOpen copy is in the loader model, so on an
NVIDIA machine this adds no work and no rows.

Rows: ``kernel_libraries`` (one per loaded library): the directory it reads and why, whether it exists,
the gfx targets its file names carry, and the release the directory and the library belong to.
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Sequence

from gpuvet.model import Row, row

from .system import System

MAX_NAMES = 20000
# gfx targets in file names: gfx8xx/gfx9xx are three characters (gfx90a, gfx942), gfx1xxx four digits
# (gfx1030, gfx1201); what follows is a CU count (MIOpen: gfx90a6e, gfx1030_36) or a feature (-xnack+).
_GFX = re.compile(r"gfx(1\d{3}|[89][0-9a-f]{2})")
_ROCM_DIR = re.compile(r"/rocm-(\d+\.\d+(?:\.\d+)?)(?:/|$)")
_SO_BUILD = re.compile(r"\.so\.(\d+)\.(\d+)\.(\d{5})$")  # librocblas.so.4.2.60201: AMD's ROCm build number
_SO_VER = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")

LIBS = {
    "rocblas": ("rocBLAS", "ROCBLAS_TENSILE_LIBPATH"),
    "hipblaslt": ("hipBLASLt", "HIPBLASLT_TENSILE_LIBPATH"),
    "miopen": ("MIOpen", "MIOPEN_SYSTEM_DB_PATH"),
}


def archs_in(names: Iterable[str]) -> list[str]:
    """The gfx targets named by a directory's file names, gfx8/gfx9 before gfx10+."""
    return sorted({"gfx" + g for g in _GFX.findall("\n".join(names))}, key=lambda a: (len(a), a))


def rocm_build_release(file_name: str) -> str:
    """libamdhip64.so.6.2.60201 -> '6.2.1' (AMD names its files <so version>.<ROCm build number>)."""
    m = _SO_BUILD.search(file_name)
    if not m:
        return ""
    n = int(m.group(3))
    return f"{n // 10000}.{(n // 100) % 100}.{n % 100}"


def _lib_version(name: str) -> str:
    """The library's own version from its file name, without AMD's build number: 4.2.60201 -> 4.2."""
    m = _SO_VER.search(name)
    if not m:
        return ""
    parts = m.group(1).split(".")
    if len(parts) >= 3 and len(parts[-1]) == 5:
        parts = parts[:-1]
    return ".".join(parts)


def library_releases(system: System, path: str, name: str, framework_dir: str = "", framework_hip: str = "",
                     version: str = "") -> list[str]:
    """What a loaded library file belongs to, as 'rocm X.Y[.Z]' and '<name> <own version>' tags."""
    real = system.realpath(path)
    tags: list[str] = []
    m = _ROCM_DIR.search(real) or _ROCM_DIR.search(path)
    rel = m.group(1) if m else rocm_build_release(os.path.basename(real))
    if not rel and framework_dir and framework_hip and os.path.normpath(path).startswith(
            os.path.normpath(framework_dir) + os.sep):
        rel = ".".join(framework_hip.split(".")[:2])  # torch.version.hip 6.2.41133-...: ROCm 6.2
    if rel:
        tags.append(f"rocm {rel}")
    own = _lib_version(os.path.basename(real)) or _lib_version(os.path.basename(path)) or version
    if own and name in LIBS:
        tags.append(f"{name} {own}")
    return tags


def _first_dir(system: System, base: str, rels: Sequence[str], default: str) -> tuple[str, str]:
    for rel in rels:
        d = os.path.normpath(f"{base}/{rel}")
        if system.is_dir(d):
            return d, rel
    return os.path.normpath(f"{base}/{default}"), default


def default_dir(system: System, name: str, lib_path: str, lib_version: str = "") -> tuple[str, str]:
    """(directory, how) the library reads when no override variable is set."""
    base = os.path.dirname(lib_path)
    if name == "rocblas":
        rels = ["../../Tensile/library", "library", "../rocblas/library"]
        # Debian: <libdir>/rocblas/<rocBLAS version>/library, the version a prefix-match of the file's
        own = [v for v in system.listdir(f"{base}/rocblas") if re.match(r"^\d+(\.\d+)*$", v)]
        want = lib_version.split(".")
        deb = [v for v in own if want and v.split(".")[:len(want)] == want]
        rels += [f"rocblas/{v}/library" for v in sorted(deb)]
        d, rel = _first_dir(system, base, rels, "rocblas/library")
        return d, f"beside {os.path.basename(lib_path)}: {rel}"
    if name == "hipblaslt":
        d, rel = _first_dir(system, base, ["../Tensile/library"], "hipblaslt/library")
        return d, f"beside {os.path.basename(lib_path)}: {rel}"
    # MIOpen: the canonical file's directory's parent + share/miopen/db
    real = system.realpath(lib_path)
    d = os.path.normpath(f"{os.path.dirname(os.path.dirname(real))}/share/miopen/db")
    return d, f"share/miopen/db beside the directory of {os.path.basename(real)}"


def dir_releases(system: System, name: str, d: str, framework_dir: str = "", framework_hip: str = "") -> list[str]:
    """What release a kernel directory belongs to: a /opt/rocm-X.Y.Z path, the framework that bundles
    it, Debian's versioned directory, or the library file it sits beside."""
    real = system.realpath(d)
    tags: list[str] = []
    m = _ROCM_DIR.search(real) or _ROCM_DIR.search(d)
    norm = os.path.normpath(d)
    if m:
        tags.append(f"rocm {m.group(1)}")
    elif framework_dir and framework_hip and norm.startswith(os.path.normpath(framework_dir) + os.sep):
        tags.append(f"rocm {'.'.join(framework_hip.split('.')[:2])}")
    deb = re.search(rf"/{name}/(\d+(?:\.\d+)+)/library$", norm)
    if deb:
        tags.append(f"{name} {deb.group(1)}")
    if not tags:
        # the library file this directory was installed beside: <lib>/rocblas/library, <root>/share/miopen/db
        if name == "miopen":
            libdirs = [os.path.normpath(f"{norm}/../../../lib"), os.path.normpath(f"{norm}/../../../lib64")]
            stem = "libMIOpen.so."
        else:
            libdirs = [os.path.normpath(f"{norm}/../..")]
            stem = f"lib{name}.so."
        for ld in libdirs:
            files = [f for f in system.listdir(ld) if f.startswith(stem)]
            best = max(files, key=lambda f: (f.count("."), len(f)), default="")
            if best:
                rel = rocm_build_release(best)
                if rel:
                    tags.append(f"rocm {rel}")
                own = _lib_version(best)
                if own and name != "miopen":
                    tags.append(f"{name} {own}")
                break
    return tags


def kernel_library_rows(system: System, libraries: Sequence[Row], framework_dir: str = "",
                        framework_hip: str = "") -> list[Row]:
    """One ``kernel_libraries`` row per loaded rocBLAS / hipBLASLt / MIOpen copy."""
    out: list[Row] = []
    seen: set[tuple[str, str]] = set()
    env = system.environ or {}
    for lib in libraries:
        name = lib.get("name")
        if name not in LIBS or lib.get("selected") is not True or not lib.get("path"):
            continue
        path = str(lib.get("path"))
        if (name, path) in seen:
            continue
        seen.add((name, path))
        title, var = LIBS[name]
        lib_version = _lib_version(os.path.basename(system.realpath(path))) or _lib_version(os.path.basename(path))
        dflt, how = default_dir(system, name, path, lib_version)
        override = env.get(var)
        if override:
            d, via = os.path.normpath(override), var
        else:
            d, via = dflt, "default"
        names = system.listdir(d)[:MAX_NAMES] if system.is_dir(d) else []
        archs = archs_in(names)
        # rocBLAS / hipBLASLt read <dir>/<gfx> when it exists: its files count for that gfx
        if name != "miopen":
            for a in [n for n in names if n.startswith("gfx") and "." not in n and _GFX.fullmatch(n)
                      and system.is_dir(f"{d}/{n}")]:
                if archs_in(system.listdir(f"{d}/{a}")[:MAX_NAMES]) or system.listdir(f"{d}/{a}"):
                    archs = sorted(set(archs) | {a}, key=lambda x: (len(x), x))
        generic = [n for n in names if n in ("TensileLibrary.dat", "TensileLibrary.yaml")]
        lib_rel = library_releases(system, path, name, framework_dir, framework_hip, lib_version)
        dir_rel = dir_releases(system, name, d, framework_dir, framework_hip)
        src = (f"{title} {path}: {var}={override}" if override else f"{title} {path}: {how}") + \
              f"; listing of {d} ({len(names)} names)"
        out.append(row("kernel_libraries", src, library=name, library_path=path, library_release=lib_rel,
                       dir=d, via=via, exists=system.is_dir(d), files=len(names), archs=archs,
                       generic=generic, dir_release=dir_rel, default_dir=dflt if override else "",
                       variable=var))
    return out
