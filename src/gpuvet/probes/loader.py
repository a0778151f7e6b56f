"""Which file each GPU library of a framework will really load, resolved as the dynamic loader does.

What glibc's ld.so does (ld.so(8), elf/dl-load.c), followed here:

0. objects already in the process win by soname: ``LD_PRELOAD`` (space or colon separated) and then
   ``/etc/ld.so.preload`` are loaded before anything else, so a preloaded ``libcudnn.so.9`` is the
   cuDNN every later ``DT_NEEDED`` or ``dlopen("libcudnn.so.9")`` gets, whatever the RPATH says;
1. DT_RPATH of the requesting object and of the objects that loaded it (its loader chain), only when
   the requesting object has no DT_RUNPATH (``$ORIGIN`` expanded; an object with DT_RUNPATH
   contributes no RPATH to the chain);
2. ``LD_LIBRARY_PATH`` (from ``system.environ``);
3. DT_RUNPATH of the requesting object;
4. the ld.so cache: ``/etc/ld.so.cache`` parsed directly (``glibc-ld.so.cache1.1``), or
   ``ldconfig -p`` (with a time-out) when the file cannot be read;
5. the default directories (the multiarch ones, ``/lib64``, ``/usr/lib64``, ``/lib``, ``/usr/lib``).

The walk is transitive: the DT_NEEDED of every GPU library found are resolved too (libcublas.so ->
libcublasLt.so), with the loader chain's RPATH.  Libraries a GPU library opens at run time with
``dlopen`` by soname (``DLOPENED``: cuDNN 9's sub-libraries ``libcudnn_graph``, ``libcudnn_engines_*``,
``libcudnn_heuristic``, ``libcudnn_ops``/``cnn``/``adv``; cuDNN 8's ``*_infer``/``*_train``) are
resolved with the same order from the library that opens them.  That is how a process ends up with
two releases of one library: torch's DT_RPATH finds the pip ``libcudnn.so.9`` 9.19, whose DT_RUNPATH
comes after ``LD_LIBRARY_PATH``, so its sub-libraries come from a system 9.14 directory put first there.

Not modelled: the RPATH of the python executable, hwcaps subdirectories, and the secure-execution
mode that ignores LD_LIBRARY_PATH/LD_PRELOAD for set-uid programs.  pip's torch wheels use DT_RPATH
``$ORIGIN/../../nvidia/*/lib``, which wins even over ``LD_LIBRARY_PATH``; that is why collect_env
(which asks ldconfig) can name another cuDNN than the one torch loads.

Rows: ``shared_libraries`` (soname, chosen path, via, how, requested_by, others = shadowed copies and
would_win = the setting that would make each win) and ``libraries`` for the GPU libraries (cuDNN,
cuBLAS, NCCL, the CUDA runtime, HIP, MIOpen, rocBLAS ...): version, origin, family, via, and
``selected`` True for the copy that wins, False for each shadowed copy.

References: https://man7.org/linux/man-pages/man8/ld.so.8.html ,
https://docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html (cuDNN 9's sub-libraries).
"""
from __future__ import annotations

import os
import re
import struct
from typing import Iterable, Mapping, Sequence

from gpuvet.model import Row, row
from gpuvet.model.record import record
from gpuvet.model.versions import normalise_name

from . import elf
from .kernel_files import library_releases
from .system import System
from ..model.lazyre import lazy

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
_BORING = lazy(r"^(libc|libm|libdl|librt|libpthread|libutil|ld-linux[-\w]*|libstdc\+\+|libgcc_s|"
                     r"libgomp|linux-vdso)\.so")


# Libraries a GPU library opens at run time with dlopen(soname), by (stem, major) of the opener:
# cuDNN 9 splits into a shim (libcudnn.so.9) that loads its sub-libraries on demand (cuDNN 9 API
# overview, https://docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html); cuDNN 8 loads the
# *_infer / *_train libraries the same way.
DLOPENED: dict[tuple[str, str], tuple[str, ...]] = {
    ("libcudnn", "9"): ("libcudnn_graph", "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled",
                        "libcudnn_heuristic", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv"),
    ("libcudnn", "8"): ("libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
                        "libcudnn_adv_infer", "libcudnn_adv_train"),
}
# library name -> the release family whose copies must agree in one process
FAMILY = {"cublaslt": "cublas"}
MAX_NODES = 400  # a bound on the transitive walk


def library_name(soname: str) -> str | None:
    stem = soname.split(".so", 1)[0]
    if stem in GPU_LIBRARIES:
        return GPU_LIBRARIES[stem]
    if stem.startswith("libcudnn_"):
        return stem[3:]  # cudnn_graph, cudnn_engines_precompiled, ...
    return None


def family_of(name: str) -> str:
    if name.startswith("cudnn"):
        return "cudnn"
    return FAMILY.get(name, name)


def _dlopened(soname: str) -> list[str]:
    stem, _, rest = soname.partition(".so")
    major = rest.lstrip(".").split(".")[0]
    return [f"{s}.so.{major}" for s in DLOPENED.get((stem, major), ())]


# -- the ld.so cache ----------------------------------------------------------------------------------
@record(frozen=True)
class CacheEntry:
    """One library of the ld.so cache."""

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
@record(frozen=True)
class Resolution:
    """Where the dynamic loader would find one DT_NEEDED library, and why."""

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


def own_rpath(info: elf.ElfInfo, requester: str) -> tuple[str, ...]:
    """The RPATH directories an object contributes (none when it has a DT_RUNPATH: glibc drops it)."""
    if info.rpath is None or info.runpath is not None:
        return ()
    origin = os.path.dirname(requester)
    return tuple(expand(d, origin, info.machine) for d in info.rpath if d)


def search_path(info: elf.ElfInfo, requester: str, environ: Mapping[str, str] | None, machine: str,
                chain: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(via, directory) in the order the loader tries them (before the cache).  ``chain``: the RPATH
    directories of the objects that loaded ``requester``, searched after its own when it has no RUNPATH."""
    origin = os.path.dirname(requester)
    order: list[tuple[str, str]] = []
    if info.runpath is None:
        order += [("rpath", d) for d in own_rpath(info, requester)]
        order += [("rpath", d) for d in chain]
    ld = (environ or {}).get("LD_LIBRARY_PATH", "")
    order += [("ld_library_path", expand(d, origin, machine)) for d in re.split(r"[:;]", ld) if d]
    if info.runpath is not None:
        order += [("runpath", expand(d, origin, machine)) for d in info.runpath if d]
    return order


def resolve(system: System, info: elf.ElfInfo, requester: str, soname: str,
            cache: Sequence[CacheEntry], chain: Sequence[str] = (),
            loaded: dict[str, tuple[str, str]] | None = None) -> Resolution:
    """Where ``requester`` finds ``soname``.  ``loaded``: soname -> (path, via) of objects already in
    the process (the preloaded ones), which win over any search."""
    machine = info.machine
    cands: list[tuple[str, str]] = []
    if "/" in soname:
        cands.append((soname, "direct"))
    else:
        for via, d in search_path(info, requester, system.environ, machine, chain):
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
    pre = (loaded or {}).get(soname)
    if pre and pre[0]:
        real = system.realpath(pre[0])
        rest = tuple(f for f in found if system.realpath(f[0]) != real)
        return Resolution(soname, requester, pre[0], pre[1], rest)
    if not found:
        return Resolution(soname, requester, "", "unresolved", ())
    return Resolution(soname, requester, found[0][0], found[0][1], tuple(found[1:]))


def would_win(res: Resolution, other: tuple[str, str], info: elf.ElfInfo | None) -> str:
    """The setting under which the loader would take ``other`` (path, via) instead of ``res.path``."""
    path, _ = other
    d = os.path.dirname(path)
    base = os.path.basename(path)
    pre = f"LD_PRELOAD={path}"
    if res.via == "preload":
        return f"removing {base} from LD_PRELOAD / /etc/ld.so.preload"
    if res.via == "rpath":
        return f"{pre} (DT_RPATH of {os.path.basename(res.requested_by)} beats LD_LIBRARY_PATH)"
    if res.via == "ld_library_path":
        return f"{pre}, or LD_LIBRARY_PATH with {d} before {os.path.dirname(res.path)}"
    return f"{pre}, or LD_LIBRARY_PATH={d}"


# -- LD_PRELOAD, /etc/ld.so.preload ---------------------------------------------------------------------
PRELOAD_FILE = "/etc/ld.so.preload"


def preload_entries(system: System) -> list[tuple[str, str]]:
    """(entry, where) in load order: LD_PRELOAD first, then /etc/ld.so.preload (ld.so(8))."""
    out = [(e, "LD_PRELOAD") for e in re.split(r"[:\s]+", (system.environ or {}).get("LD_PRELOAD", "")) if e]
    text = system.read_text(PRELOAD_FILE, limit=64 * 1024) or ""
    lines = [ln.split("#", 1)[0] for ln in text.splitlines()]
    out += [(e, PRELOAD_FILE) for ln in lines for e in re.split(r"[:\s]+", ln) if e]
    return out


def resolve_preloads(system: System, cache: Sequence[CacheEntry], machine: str = "EM_X86_64"
                     ) -> list[tuple[str, str, str, str]]:
    """(entry, where, path or '', soname or '') of each preloaded object.  A bare name is searched in
    LD_LIBRARY_PATH, the cache and the default directories; the soname is read from its ELF."""
    out = []
    for entry, where in preload_entries(system):
        path = ""
        if "/" in entry:
            path = entry if system.exists(entry) and not system.is_dir(entry) else ""
        else:
            dummy = elf.ElfInfo("", 64, machine, None, (), None, None)
            res = resolve(system, dummy, "/", entry, cache)
            path = res.path
        soname = ""
        if path:
            try:
                soname = elf.elf_info(system, path).soname or os.path.basename(path)
            except (elf.ElfError, OSError):
                soname = ""  # ld.so: "cannot be preloaded (invalid ELF header): ignored"
        out.append((entry, where, path, soname))
    return out


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


def origin_of(path: str, framework_dir: str, environ: Mapping[str, str] | None, pip_owner: tuple[str, str] | None) -> str:
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
ROCM_LIBS = ("amdhip64", "rocblas", "hipblaslt", "miopen", "rccl", "hipblas")


def resolve_framework_libraries(system: System, lib_paths: Sequence[str], framework_dir: str = "",
                                site_dir: str = "", framework_hip: str = "") -> list[Row]:
    """shared_libraries + libraries rows for the DT_NEEDED of each framework GPU library, the GPU
    libraries those need in turn, the sub-libraries they dlopen, and the preloaded objects."""
    cache: list[CacheEntry] | None = None
    cache_src = ""
    pip = PipIndex(system, [site_dir])
    shared: list[Row] = []
    libs: dict[tuple[str, str], Row] = {}

    def get_cache() -> list[CacheEntry]:
        nonlocal cache, cache_src
        if cache is None:
            cache, cache_src = load_cache(system)
        return cache

    # objects already in the process before any library: the preloaded ones
    loaded: dict[str, tuple[str, str]] = {}
    has_preload = bool(preload_entries(system))
    if has_preload:
        for entry, where, path, soname in resolve_preloads(system, get_cache()):
            shared.append(row("shared_libraries", f"{where}: {entry}", soname=soname or entry, path=path,
                              via="preload" if path else "unresolved", how="preload", requested_by=where,
                              others=[], would_win=[]))
            if path and soname and soname not in loaded:
                loaded[soname] = (path, "preload")

    def add_library(res: Resolution, name: str, how: str, requester: str) -> None:
        fam = family_of(name)
        for i, (path, via) in enumerate([(res.path, res.via), *res.others]):
            selected = i == 0
            key = (name, path)
            if key in libs and (libs[key].get("selected") or not selected):
                continue
            version, owner, how_v = library_version(system, path, res.soname, fam, pip)
            origin = origin_of(path, framework_dir, system.environ, owner)
            what = "loaded" if selected else "shadowed"
            release = ""
            if name in ROCM_LIBS:
                release = next((t.split(" ", 1)[1] for t in library_releases(
                    system, path, name, framework_dir, framework_hip) if t.startswith("rocm ")), "")
            libs[key] = row("libraries", f"{path} ({what}, via {via}{', dlopen' if how == 'dlopen' else ''}; "
                                          f"version from {how_v})",
                            name=name, version=version, path=path, origin=origin, selected=selected,
                            requested_by=requester, family=fam, via=via, release=release)

    # breadth-first: (object path as named, its real path, its ELF, the RPATH of its loader chain)
    queue: list[tuple[str, str, elf.ElfInfo, tuple[str, ...]]] = []
    for lib in lib_paths:
        try:
            info = elf.elf_info(system, lib)
        except (elf.ElfError, OSError):
            continue
        queue.append((lib, system.realpath(lib), info, ()))
    done: set[tuple[str, str, str]] = set()
    visited: set[str] = {system.realpath(p) for p in lib_paths}
    nodes = 0
    while queue and nodes < MAX_NODES:
        lib, requester, info, chain = queue.pop(0)
        nodes += 1
        child_chain = own_rpath(info, requester) + tuple(chain) if info.runpath is None else ()
        asks = [(so, "needed") for so in info.needed if not _BORING.match(so)]
        asks += [(so, "dlopen") for so in _dlopened(info.soname or os.path.basename(requester))]
        for soname, how in asks:
            key = (requester, soname, how)
            if key in done:
                continue
            done.add(key)
            # dlopen from a library: its own RPATH and its loader chain's (when it has no RUNPATH)
            res = resolve(system, info, requester, soname, get_cache(), chain, loaded)
            if how == "dlopen" and res.via == "unresolved":
                continue  # an optional sub-library that is not installed anywhere
            if res.path and soname not in loaded:
                # loaded now: every later request of this soname gets this object (breadth-first, as ld.so
                # loads DT_NEEDED), whatever the later requester's own search path would find
                loaded[soname] = (res.path, res.via)
            src = (f"ELF {lib} ({'DT_NEEDED' if how == 'needed' else 'dlopen'} {soname}); loader search"
                   + (f", {cache_src}" if cache_src else ""))
            shared.append(row("shared_libraries", src, soname=soname, path=res.path, via=res.via, how=how,
                              requested_by=lib, others=[p for p, _ in res.others],
                              would_win=[would_win(res, o, info) for o in res.others]))
            name = library_name(soname)
            if not name or not res.path:
                continue
            add_library(res, name, how, lib)
            real = system.realpath(res.path)
            if real in visited:
                continue
            visited.add(real)
            try:
                child = elf.elf_info(system, res.path)
            except (elf.ElfError, OSError):
                continue
            # a preloaded object was loaded by nobody: no loader chain
            queue.append((res.path, real, child, () if res.via == "preload" else child_chain))
    return shared + list(libs.values())
