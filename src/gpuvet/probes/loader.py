"""Which file each GPU library of a framework will really load, resolved as the dynamic loader does.

For every DT_NEEDED of a framework library (``libtorch_cuda.so``, ``libtorch_hip.so`` ...) the
search order of glibc's ld.so (ld.so(8)) is followed:

1. DT_RPATH of the requesting object, only when it has no DT_RUNPATH (``$ORIGIN`` expanded);
2. ``LD_LIBRARY_PATH`` (from ``system.environ``);
3. DT_RUNPATH of the requesting object;
4. the ld.so cache: ``/etc/ld.so.cache`` parsed directly (``glibc-ld.so.cache1.1``), or
   ``ldconfig -p`` (with a time-out) when the file cannot be read;
5. the default directories (the multiarch ones, ``/lib64``, ``/usr/lib64``, ``/lib``, ``/usr/lib``).

Simplifications: the RPATH of objects further up the loading chain (the python executable) is not
searched, and a library already loaded under the same soname (loaded earlier by another module)
is not known.  pip's torch wheels use DT_RPATH ``$ORIGIN/../../nvidia/*/lib``, which wins even over
``LD_LIBRARY_PATH``; that is why collect_env (which asks ldconfig) can name another cuDNN than the one
torch loads.

Rows: ``shared_libraries`` (soname, chosen path, via, requested_by, others = shadowed copies) and
``libraries`` for the GPU libraries (cuDNN, cuBLAS, NCCL, the CUDA runtime, HIP, MIOpen, rocBLAS ...):
version, origin, and ``selected`` True for the copy that wins, False for each shadowed copy.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import Iterable, Sequence

from gpuvet.model import Row, row
from gpuvet.model.versions import normalise_name

from . import elf
from .system import System

CACHE_FILE = "/etc/ld.so.cache"
NEW_MAGIC = b"glibc-ld.so.cache1.1"

# ld.so.cache entry flags (glibc sysdeps/generic/ldconfig.h)
FLAG_ELF_LIBC6 = 0x0003
ARCH_FLAGS = {"EM_X86_64": 0x0300, "EM_AARCH64": 0x0a00, "EM_PPC64": 0x0500, "EM_S390": 0x0400,
              "EM_RISCV": 0x1000}
ARCH_TEXT = {"EM_X86_64": "x86-64", "EM_AARCH64": "AArch64", "EM_PPC64": "64bit", "EM_RISCV": "riscv64"}
MULTIARCH = {"EM_X86_64": "x86_64-linux-gnu", "EM_AARCH64": "aarch64-linux-gnu",
             "EM_PPC64": "powerpc64le-linux-gnu", "EM_S390": "s390x-linux-gnu",
             "EM_RISCV": "riscv64-linux-gnu"}
PLATFORM = {"EM_X86_64": "x86_64", "EM_AARCH64": "aarch64", "EM_PPC64": "powerpc64le"}

# soname stem -> library name used in the ``libraries`` table
GPU_LIBRARIES = {
    "libcudnn": "cudnn", "libcublas": "cublas", "libcublasLt": "cublaslt", "libnccl": "nccl",
    "libcudart": "cudart", "libcusparseLt": "cusparselt", "libnvrtc": "nvrtc",
    "libamdhip64": "amdhip64", "libMIOpen": "miopen", "librocblas": "rocblas", "libhipblaslt": "hipblaslt",
    "librccl": "rccl", "libhipblas": "hipblas",
}
# pip distributions (normalised, prefix) that ship each library
PIP_DISTS = {
    "cudnn": ("nvidia-cudnn",), "cublas": ("nvidia-cublas",), "cublaslt": ("nvidia-cublas",),
    "nccl": ("nvidia-nccl",), "cudart": ("nvidia-cuda-runtime",), "cusparselt": ("nvidia-cusparselt",),
    "nvrtc": ("nvidia-cuda-nvrtc",),
}
# glibc / compiler runtime: not worth a row
_BORING = re.compile(r"^(libc|libm|libdl|librt|libpthread|libutil|ld-linux[-\w]*|libstdc\+\+|libgcc_s|"
                     r"libgomp|linux-vdso)\.so")


def library_name(soname: str) -> str | None:
    stem = soname.split(".so", 1)[0]
    return GPU_LIBRARIES.get(stem)


# -- the ld.so cache ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CacheEntry:
    soname: str
    path: str
    flags: int = FLAG_ELF_LIBC6
    arch: str = ""  # ldconfig -p text, e.g. 'libc6,x86-64'


def parse_ld_so_cache(data: bytes) -> list[CacheEntry]:
    """Entries of an ``/etc/ld.so.cache`` (new format, alone or after the old one)."""
    base = data.find(NEW_MAGIC)
    if base < 0:
        return []
    try:
        nlibs, _len_strings = struct.unpack_from("<II", data, base + 20)
    except struct.error:
        return []
    hdr = base + 48
    out: list[CacheEntry] = []
    for i in range(min(nlibs, 1_000_000)):
        p = hdr + i * 24
        if p + 24 > len(data):
            break
        flags, key, value, _osv, _hwcap = struct.unpack_from("<iIIIQ", data, p)
        out.append(CacheEntry(_cstr(data, base + key), _cstr(data, base + value), flags))
    return out


def _cstr(data: bytes, off: int) -> str:
    end = data.find(b"\0", off)
    return data[off:end if end >= 0 else len(data)].decode("utf-8", "replace")


_LDCONFIG_LINE = re.compile(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")


def parse_ldconfig_p(text: str) -> list[CacheEntry]:
    """``ldconfig -p`` output -> entries (flags from the '(libc6,x86-64)' text)."""
    out = []
    for line in text.splitlines():
        m = _LDCONFIG_LINE.match(line)
        if m:
            arch = m.group(2)
            kind = arch.split(",", 1)[0]
            flags = {"libc6": FLAG_ELF_LIBC6, "libc5": 0x0002, "ELF": 0x0001}.get(kind, FLAG_ELF_LIBC6)
            for em, txt in ARCH_TEXT.items():
                if f",{txt}" in arch:
                    flags |= ARCH_FLAGS[em]
            out.append(CacheEntry(m.group(1), m.group(3), flags, arch))
    return out


def load_cache(system: System) -> tuple[list[CacheEntry], str]:
    data = system.read_bytes(CACHE_FILE, 0, 64 * 1024 * 1024)
    if data:
        entries = parse_ld_so_cache(data)
        if entries:
            return entries, CACHE_FILE
    for exe in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        res = system.run([exe, "-p"], timeout=2.0)
        if res.ok:
            return parse_ldconfig_p(res.stdout), "ldconfig -p"
    return [], ""


def _cache_matches(entry: CacheEntry, machine: str) -> bool:
    want = ARCH_FLAGS.get(machine)
    if want is None:
        return True
    return (entry.flags & 0xff00) == want


# -- resolution ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resolution:
    soname: str
    requested_by: str
    path: str  # '' when unresolved
    via: str  # rpath | ld_library_path | runpath | ldconfig | default | unresolved
    others: tuple[tuple[str, str], ...]  # (path, via) of shadowed copies


def expand(entry: str, origin: str, machine: str) -> str:
    lib = "lib64"
    plat = PLATFORM.get(machine, "")
    out = entry
    for token, val in (("ORIGIN", origin), ("LIB", lib), ("PLATFORM", plat)):
        out = out.replace("${" + token + "}", val).replace("$" + token, val)
    return os.path.normpath(out) if out else out


def default_dirs(machine: str) -> list[str]:
    tri = MULTIARCH.get(machine)
    dirs = [f"/lib/{tri}", f"/usr/lib/{tri}"] if tri else []
    return dirs + ["/lib64", "/usr/lib64", "/lib", "/usr/lib"]


def search_path(info: elf.ElfInfo, requester: str, environ: dict | None, machine: str) -> list[tuple[str, str]]:
    """(via, directory) in the order the loader tries them (before the cache)."""
    origin = os.path.dirname(requester)
    order: list[tuple[str, str]] = []
    if info.rpath is not None and info.runpath is None:
        order += [("rpath", expand(d, origin, machine)) for d in info.rpath if d]
    ld = (environ or {}).get("LD_LIBRARY_PATH", "")
    order += [("ld_library_path", expand(d, origin, machine)) for d in re.split(r"[:;]", ld) if d]
    if info.runpath is not None:
        order += [("runpath", expand(d, origin, machine)) for d in info.runpath if d]
    return order


def resolve(system: System, info: elf.ElfInfo, requester: str, soname: str,
            cache: Sequence[CacheEntry]) -> Resolution:
    machine = info.machine
    cands: list[tuple[str, str]] = []
    if "/" in soname:
        cands.append((soname, "direct"))
    else:
        for via, d in search_path(info, requester, system.environ, machine):
            cands.append((f"{d}/{soname}", via))
        for e in cache:
            if e.soname == soname and _cache_matches(e, machine):
                cands.append((e.path, "ldconfig"))
        for d in default_dirs(machine):
            cands.append((f"{d}/{soname}", "default"))
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path, via in cands:
        if path in seen:
            continue
        seen.add(path)
        if system.exists(path) and not system.is_dir(path):
            real = system.realpath(path)
            if any(system.realpath(p) == real for p, _ in found):
                continue  # /lib/x86_64-linux-gnu == /usr/lib/x86_64-linux-gnu on merged-/usr systems
            found.append((path, via))
    if not found:
        return Resolution(soname, requester, "", "unresolved", ())
    return Resolution(soname, requester, found[0][0], found[0][1], tuple(found[1:]))


# -- versions and origins ------------------------------------------------------------------------------
_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")


class PipIndex:
    """Which pip distribution owns a file under a site directory (from the RECORD files of the
    nvidia-* / rocm distributions there; read lazily, once)."""

    def __init__(self, system: System, site_dirs: Iterable[str]):
        self.system = system
        self.site_dirs = [d for d in dict.fromkeys(site_dirs) if d]
        self._owner: dict[str, tuple[str, str]] | None = None

    def _build(self) -> dict[str, tuple[str, str]]:
        owner: dict[str, tuple[str, str]] = {}
        for site in self.site_dirs:
            for entry in self.system.listdir(site):
                m = re.match(r"^((?:nvidia|rocm|hip|amd)[A-Za-z0-9_.]*?)-([^-]+)\.dist-info$", entry, re.I)
                if not m:
                    continue
                name = normalise_name(m.group(1))
                rec = self.system.read_text(f"{site}/{entry}/RECORD", limit=512 * 1024) or ""
                for line in rec.splitlines():
                    rel = line.split(",", 1)[0]
                    if ".so" in rel:
                        owner[os.path.normpath(f"{site}/{rel}")] = (name, m.group(2))
        return owner

    def owner(self, path: str) -> tuple[str, str] | None:
        if self._owner is None:
            self._owner = self._build()
        return self._owner.get(os.path.normpath(path))


def file_version(system: System, path: str, soname: str) -> str:
    """Version from the real file name after symlinks, else a versioned sibling, else the soname."""
    return file_version_from(system, path, soname)[0]


def file_version_from(system: System, path: str, soname: str) -> tuple[str, str]:
    """(version, the file name it was read from)."""
    real = system.realpath(path)
    m = _SO_VERSION.search(os.path.basename(real))
    best, name = (m.group(1), os.path.basename(real)) if m else ("", "")
    if best.count(".") < 1:
        base = os.path.basename(path)
        d = os.path.dirname(path)
        stem = base.split(".so", 1)[0] + ".so."
        major = _SO_VERSION.search(base)
        sibs = []
        for n in system.listdir(d):
            if n.startswith(stem):
                sm = _SO_VERSION.search(n)
                if sm and (not major or sm.group(1).split(".")[0] == major.group(1).split(".")[0]):
                    sibs.append((sm.group(1), n))
        if sibs:
            best, name = max(sibs, key=lambda v: (v[0].count("."), [int(x) for x in v[0].split(".")]))
    if not best:
        m = _SO_VERSION.search(soname)
        best, name = (m.group(1), soname) if m else ("", "")
    return best, name


def origin_of(path: str, framework_dir: str, environ: dict | None, pip_owner: tuple[str, str] | None) -> str:
    norm = os.path.normpath(path)
    if framework_dir and norm.startswith(os.path.normpath(framework_dir) + os.sep):
        return "framework-bundled"
    if pip_owner or re.search(r"/(site|dist)-packages/", norm):
        return "pip"
    conda = (environ or {}).get("CONDA_PREFIX", "")
    if (conda and norm.startswith(os.path.normpath(conda) + os.sep)) or re.search(
            r"/(ana|mini|micro)?(conda|forge|mamba)[^/]*/", norm, re.I):
        return "conda"
    return "system"


def library_version(system: System, path: str, soname: str, name: str,
                    pip: PipIndex) -> tuple[str, tuple[str, str] | None, str]:
    """(version, pip owner or None, how the version was read)."""
    owner = pip.owner(path) or pip.owner(system.realpath(path))
    if owner and any(owner[0].startswith(p) for p in PIP_DISTS.get(name, ())):
        return owner[1], owner, f"pip {owner[0]} {owner[1]}"
    version, fname = file_version_from(system, path, soname)
    return version, owner, (f"file {fname}" if fname else "unknown")


# -- rows -------------------------------------------------------------------------------------------
def resolve_framework_libraries(system: System, lib_paths: Sequence[str], framework_dir: str = "",
                                site_dir: str = "") -> list[Row]:
    """shared_libraries + libraries rows for the DT_NEEDED of each framework GPU library."""
    cache: list[CacheEntry] | None = None
    cache_src = ""
    pip = PipIndex(system, [site_dir])
    shared: list[Row] = []
    libs: dict[tuple[str, str], Row] = {}
    for lib in lib_paths:
        try:
            info = elf.elf_info(system, lib)
        except (elf.ElfError, OSError):
            continue
        requester = system.realpath(lib)
        for soname in info.needed:
            if _BORING.match(soname):
                continue
            if cache is None:
                cache, cache_src = load_cache(system)
            res = resolve(system, info, requester, soname, cache)
            src = f"ELF {lib} (DT_NEEDED {soname}); loader search" + (f", {cache_src}" if cache_src else "")
            shared.append(row("shared_libraries", src, soname=soname, path=res.path, via=res.via,
                              requested_by=lib, others=[p for p, _ in res.others]))
            name = library_name(soname)
            if not name or not res.path:
                continue
            for i, (path, via) in enumerate([(res.path, res.via), *res.others]):
                selected = i == 0
                key = (name, path)
                if key in libs and (libs[key].get("selected") or not selected):
                    continue
                version, owner, how = library_version(system, path, soname, name, pip)
                origin = origin_of(path, framework_dir, system.environ, owner)
                libs[key] = row("libraries", f"{path} ({'loaded' if selected else 'shadowed'}, via {via}; "
                                              f"version from {how})",
                                name=name, version=version, path=path, origin=origin, selected=selected,
                                requested_by=lib)
    return shared + list(libs.values())
