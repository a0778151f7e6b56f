"""Cheap ELF reading: dynamic tags and the GPU code objects a library carries.

Everything here seeks; nothing reads a library whole (libtorch_cuda.so is ~456 MB).  What is read:

* the ELF header and section headers (pyelftools), the dynamic section and the strings it names
  (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH);
* CUDA: the ``.nv_fatbin`` section, walked container by container and entry by entry.  Only the
  16-byte container headers and the 64-byte entry headers are read; payloads are skipped by their
  sizes.  Container header: ``u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the
  entries that follow``.  Entry header: ``u16 kind (1 PTX, 2 ELF cubin), u16, u32 header size,
  u64 payload size, ..., u32 sm arch at +28, u64 flags at +40``.  Flag bit 0x100000 marks an
  arch-specific ``a`` target (sm_90a), 0x200000 a family-specific ``f`` target (sm_100f) -- learned
  by compiling a kernel with nvcc 13.0 for each of these targets and reading the headers back;
* HIP: the ``.hip_fatbin`` section, a sequence of ``__CLANG_OFFLOAD_BUNDLE__`` bundles
  (``u64 count`` then ``u64 offset, u64 size, u64 id length, id`` per entry) whose entry ids name the
  targets (``hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-``).  Compressed bundles (``CCOB``, clang
  ``--offload-compress``, used by PyTorch's ROCm wheels since early 2025) are decompressed only as far
  as the bundle header: zlib from the standard library; zstd through ``compression.zstd`` (Python
  3.14), the ``zstandard`` module, or the system's ``libzstd.so.1`` via ctypes.

Results are cached in memory by (path, size, mtime).
"""
from __future__ import annotations

import re
import struct
import threading
import zlib
from collections import Counter
from dataclasses import field
from typing import Any, BinaryIO, Callable

from gpuvet.model.record import record

FATBIN_MAGIC = 0xBA55ED50
FATBIN_KIND_PTX = 1
FATBIN_KIND_ELF = 2
FATBIN_KIND_ELF_ALT = 0x10
FLAG_ARCH_SPECIFIC = 0x100000  # sm_90a
FLAG_FAMILY_SPECIFIC = 0x200000  # sm_100f
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"

# A target counts as a full build target when it appears in at least this share of the entries of
# the most common target.  torch 2.11.0+cu130 on the H200: sm_75/80/86/90/100/120 appear in 444
# containers each (the TORCH_CUDA_ARCH_LIST of the build); sm_100a/sm_103a in 59, sm_90a in 4,
# sm_89/sm_120a/sm_121a in 1 (a few kernels -- FlashAttention, CUTLASS -- built for extra targets).
FULL_TARGET_SHARE = 0.5

MAX_CONTAINERS = 200_000  # a sanity bound on a corrupt section
_GAP_SCAN = 64 * 1024  # bytes scanned for the next container when containers are padded


class ElfError(Exception):
    """Not an ELF file, or a malformed one."""


@record(frozen=True)
class Section:
    """One section header of an ELF file."""

    name: str
    offset: int
    size: int
    type: str


@record(frozen=True)
class ElfInfo:
    """What the dynamic section and section headers of an ELF file say."""

    path: str
    elfclass: int  # 32 | 64
    machine: str  # EM_X86_64, EM_AARCH64, ...
    soname: str | None
    needed: tuple[str, ...]
    rpath: tuple[str, ...] | None  # DT_RPATH entries, None when absent
    runpath: tuple[str, ...] | None  # DT_RUNPATH entries, None when absent
    sections: dict[str, Section] = field(default_factory=dict)


@record(frozen=True)
class CodeObjects:
    """GPU code objects found in a library: counts per target name, and what was walked."""

    kind: str  # cuda-fatbin | hip-offload-bundle | none
    counts: Counter  # target -> entries ('sm_90', 'compute_90', 'sm_90a'); HIP: bundles holding it ('gfx90a')
    containers: int = 0
    entries: int = 0
    ids: tuple[str, ...] = ()  # HIP: full bundle entry ids (with feature suffixes)
    note: str = ""  # a partial read, an unsupported compression, ...

    def split(self, share: float = FULL_TARGET_SHARE) -> tuple[list[str], dict[str, int]]:
        return split_targets(self.counts, share)


# -- ELF headers -------------------------------------------------------------------------------------
_SHT_NAMES = {0: "SHT_NULL", 1: "SHT_PROGBITS", 2: "SHT_SYMTAB", 3: "SHT_STRTAB", 4: "SHT_RELA", 5: "SHT_HASH",
              6: "SHT_DYNAMIC", 7: "SHT_NOTE", 8: "SHT_NOBITS", 9: "SHT_REL", 11: "SHT_DYNSYM",
              0x6FFFFFF6: "SHT_GNU_HASH"}


def read_elf_info(fh: BinaryIO, path: str = "") -> ElfInfo:
    """The header facts of an ELF file: the struct-only reader below for 64-bit little-endian files
    (every GPU platform gpuvet meets), pyelftools for anything else."""
    try:
        raw = RawElf(_file_reader(fh), path)
    except ElfError:
        fh.seek(0)
        return _read_elf_info_pyelftools(fh, path)
    sections: dict[str, Section] = {}
    for sec in raw.sections:
        sections.setdefault(sec.name, Section(sec.name, sec.offset, sec.size, _SHT_NAMES.get(sec.type, str(sec.type))))
    return ElfInfo(path, 64, raw.machine, raw.soname, tuple(raw.needed), raw.rpath, raw.runpath, sections)


def _read_elf_info_pyelftools(fh: BinaryIO, path: str = "") -> ElfInfo:
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(fh)
        sections: dict[str, Section] = {}
        needed: list[str] = []
        soname = None
        rpath: list[str] | None = None
        runpath: list[str] | None = None
        for sec in elf.iter_sections():
            sections.setdefault(sec.name, Section(sec.name, sec["sh_offset"], sec["sh_size"], sec["sh_type"]))
            if isinstance(sec, DynamicSection) and sec["sh_type"] == "SHT_DYNAMIC":
                for tag in sec.iter_tags():
                    t = tag.entry.d_tag
                    if t == "DT_NEEDED":
                        needed.append(getattr(tag, "needed"))  # pyelftools sets these per tag
                    elif t == "DT_SONAME":
                        soname = getattr(tag, "soname")
                    elif t == "DT_RPATH":
                        rpath = (rpath or []) + [p for p in getattr(tag, "rpath").split(":")]
                    elif t == "DT_RUNPATH":
                        runpath = (runpath or []) + [p for p in getattr(tag, "runpath").split(":")]
        return ElfInfo(path, elf.elfclass, elf["e_machine"], soname, tuple(needed),
                       tuple(rpath) if rpath is not None else None,
                       tuple(runpath) if runpath is not None else None, sections)
    except (ELFError, struct.error, ValueError, KeyError, AttributeError) as exc:
        raise ElfError(f"{path or 'file'}: not a readable ELF file ({exc})") from None


# -- CUDA fatbin ---------------------------------------------------------------------------------------
def fatbin_target_name(kind: int, arch: int, flags: int) -> str | None:
    suffix = "a" if flags & FLAG_ARCH_SPECIFIC else ("f" if flags & FLAG_FAMILY_SPECIFIC else "")
    if kind == FATBIN_KIND_PTX:
        return f"compute_{arch}{suffix}"
    if kind in (FATBIN_KIND_ELF, FATBIN_KIND_ELF_ALT):
        return f"sm_{arch}{suffix}"
    return None


def walk_fatbin(read: Callable[[int, int], bytes], start: int, size: int) -> CodeObjects:
    """Walk the fatbin containers in ``[start, start+size)`` reading only headers.

    ``read(offset, n)`` returns up to n bytes at an absolute offset (a file seek+read).
    """
    counts: Counter = Counter()
    containers = entries = 0
    end = start + size
    pos = start
    note = ""
    while pos + 16 <= end and containers < MAX_CONTAINERS:
        head = read(pos, 16)
        if len(head) < 16:
            break
        magic, _version, hsize, fsize = struct.unpack_from("<IHHQ", head)
        if magic != FATBIN_MAGIC:
            nxt = _find_magic(read, pos, end)
            if nxt is None:
                break
            pos = nxt
            continue
        containers += 1
        cend = pos + hsize + fsize
        if cend > end:
            note = "truncated fatbin container"
            cend = end
        p = pos + hsize
        while p + 48 <= cend:
            eh = read(p, 48)
            if len(eh) < 48:
                break
            kind, _u, ehsize, psize = struct.unpack_from("<HHIQ", eh)
            arch = struct.unpack_from("<I", eh, 28)[0]
            flags = struct.unpack_from("<Q", eh, 40)[0]
            if ehsize < 48 or ehsize > 4096:
                note = "malformed fatbin entry header"
                break
            name = fatbin_target_name(kind, arch, flags)
            if name:
                counts[name] += 1
                entries += 1
            p += ehsize + psize
        pos = max(cend, pos + 16)
    return CodeObjects("cuda-fatbin", counts, containers, entries, note=note)


def _find_magic(read: Callable[[int, int], bytes], pos: int, end: int) -> int | None:
    """The next 8-byte aligned container magic after ``pos`` (containers may be padded)."""
    needle = struct.pack("<I", FATBIN_MAGIC)
    scanned = 0
    p = pos
    while p < end and scanned < 16 * _GAP_SCAN:
        chunk = read(p, min(_GAP_SCAN, end - p))
        if not chunk:
            return None
        i = chunk.find(needle, 1 if p == pos else 0)
        if i != -1:
            return p + i
        p += max(1, len(chunk) - 3)
        scanned += len(chunk)
    return None


# -- HIP offload bundles ------------------------------------------------------------------------------
_GFX_ID = re.compile(r"(gfx[0-9a-f]{3,5})((?::[a-z0-9_-]+[+-])*)", re.I)


def hip_target_of_id(bundle_id: str) -> str | None:
    """'hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-' -> 'gfx90a'; host entries -> None."""
    if "amdgcn" not in bundle_id:
        return None
    m = _GFX_ID.search(bundle_id)
    return m.group(1).lower() if m else None


def parse_bundle_header(data: bytes) -> list[str] | None:
    """Entry ids of one uncompressed bundle that starts ``data``; None if it is not a bundle."""
    if not data.startswith(BUNDLE_MAGIC):
        return None
    p = len(BUNDLE_MAGIC)
    if p + 8 > len(data):
        return None
    (n,) = struct.unpack_from("<Q", data, p)
    p += 8
    ids: list[str] = []
    for _ in range(min(n, 4096)):
        if p + 24 > len(data):
            break
        _off, _size, idlen = struct.unpack_from("<QQQ", data, p)
        p += 24
        if idlen > 4096 or p + idlen > len(data):
            break
        ids.append(data[p:p + idlen].decode("ascii", "replace"))
        p += idlen
    return ids


def _bundle_total(data: bytes) -> int:
    """The end of an uncompressed bundle (max offset+size of its entries)."""
    p = len(BUNDLE_MAGIC)
    (n,) = struct.unpack_from("<Q", data, p)
    p += 8
    end = 0
    for _ in range(min(n, 4096)):
        if p + 24 > len(data):
            break
        off, size, idlen = struct.unpack_from("<QQQ", data, p)
        end = max(end, off + size)
        p += 24 + idlen
    return end


def _decompress_head(method: int, payload: bytes, want: int = 1 << 16) -> bytes | None:
    """The first ``want`` bytes of a compressed bundle's payload (0 zlib, 1 zstd), or None."""
    if method == 0:  # zlib
        try:
            return zlib.decompressobj().decompress(payload, want)
        except zlib.error:
            return None
    if method == 1:  # zstd: stdlib (3.14+), the zstandard module, or the system's libzstd
        try:
            from compression import zstd  # type: ignore[import-not-found]

            return zstd.ZstdDecompressor().decompress(payload, max_length=want)
        except ImportError:
            pass
        except Exception:
            return None
        try:
            import zstandard  # type: ignore[import-not-found]

            return zstandard.ZstdDecompressor().decompressobj().decompress(payload)[:want]
        except ImportError:
            pass
        except Exception:
            return None
        return _libzstd_head(payload, want)
    return None


_LIBZSTD: Any = None


def _libzstd() -> Any:
    """libzstd.so.1 through ctypes (dpkg and rpm depend on it, so it is on nearly every Linux)."""
    global _LIBZSTD
    if _LIBZSTD is None:
        import ctypes
        import ctypes.util

        lib = None
        for name in ("libzstd.so.1", ctypes.util.find_library("zstd")):
            if not name:
                continue
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if lib is not None:
            lib.ZSTD_createDCtx.restype = ctypes.c_void_p
            lib.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
            lib.ZSTD_decompressStream.restype = ctypes.c_size_t
            lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            lib.ZSTD_isError.restype = ctypes.c_uint
            lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        _LIBZSTD = lib or False
    return _LIBZSTD or None


def _libzstd_head(payload: bytes, want: int) -> bytes | None:
    import ctypes

    lib = _libzstd()
    if lib is None:
        return None

    class Buf(ctypes.Structure):
        _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]

    src = ctypes.create_string_buffer(payload, len(payload))
    dst = ctypes.create_string_buffer(want)
    inb = Buf(ctypes.cast(src, ctypes.c_void_p), len(payload), 0)
    outb = Buf(ctypes.cast(dst, ctypes.c_void_p), want, 0)
    dctx = lib.ZSTD_createDCtx()
    if not dctx:
        return None
    try:
        while outb.pos < want and inb.pos < inb.size:
            before = (inb.pos, outb.pos)
            ret = lib.ZSTD_decompressStream(dctx, ctypes.byref(outb), ctypes.byref(inb))
            if lib.ZSTD_isError(ret):
                return dst.raw[:outb.pos] or None
            if ret == 0 or (inb.pos, outb.pos) == before:
                break
    finally:
        lib.ZSTD_freeDCtx(dctx)
    return dst.raw[:outb.pos]


def _bundle_head(read: Callable[[int, int], bytes], pos: int, end: int) -> bytes:
    """Enough bytes at ``pos`` to hold a bundle's header (its entry table), read in growing steps."""
    n = 4096
    while True:
        head = read(pos, min(n, end - pos))
        if not head.startswith(BUNDLE_MAGIC) or len(head) < n or n >= 1 << 22:
            return head
        (count,) = struct.unpack_from("<Q", head, len(BUNDLE_MAGIC))
        p = len(BUNDLE_MAGIC) + 8
        complete = True
        for _ in range(min(count, 4096)):
            if p + 24 > len(head):
                complete = False
                break
            idlen = struct.unpack_from("<Q", head, p + 16)[0]
            p += 24 + idlen
            if p > len(head):
                complete = False
                break
        if complete:
            return head
        n *= 4


def _ccob_head(read: Callable[[int, int], bytes], pos: int, method: int, hdr: int, total: int,
               want: int = 16 * 1024) -> bytes | None:
    """The first ``want`` decompressed bytes of a compressed bundle, reading its payload in growing steps."""
    limit = (total - hdr) if total > hdr else 1 << 22
    n = 16 * 1024
    while True:
        payload = read(pos + hdr, min(n, limit))
        inner = _decompress_head(method, payload, want)
        if inner and (parse_bundle_header(inner) or len(inner) >= want):
            return inner
        if n >= limit or n >= 1 << 22:
            return inner
        n *= 8


def _next_magic(read: Callable[[int, int], bytes], pos: int, start: int, end: int) -> int | None:
    """The next bundle at or after ``pos``: bundles in .hip_fatbin are 4096-byte aligned, so try the
    aligned offsets first, then scan (bounded)."""
    for cand in (pos, start + -(-(pos - start) // 4096) * 4096, -(-pos // 4096) * 4096):
        if cand + 4 <= end:
            head = read(cand, len(BUNDLE_MAGIC))
            if head.startswith(BUNDLE_MAGIC) or head.startswith(CCOB_MAGIC):
                return cand
    p = pos
    scanned = 0
    while p < end and scanned < 16 * _GAP_SCAN:
        chunk = read(p, min(_GAP_SCAN, end - p))
        if not chunk:
            return None
        hits = [i for i in (chunk.find(BUNDLE_MAGIC), chunk.find(CCOB_MAGIC)) if i >= 0]
        if hits:
            return p + min(hits)
        p += max(1, len(chunk) - len(BUNDLE_MAGIC))
        scanned += len(chunk)
    return None


def walk_offload_bundles(read: Callable[[int, int], bytes], start: int, size: int) -> CodeObjects:
    counts: Counter = Counter()
    ids: list[str] = []
    bundles = 0
    notes: set[str] = set()
    end = start + size
    pos: int | None = start
    while pos is not None and pos + 24 <= end and bundles < MAX_CONTAINERS:
        magic = read(pos, len(BUNDLE_MAGIC))
        got: list[str] | None = None
        if magic.startswith(BUNDLE_MAGIC):
            head = _bundle_head(read, pos, end)
            got = parse_bundle_header(head)
            if got is None:
                break
            bundles += 1
            nxt = pos + max(_bundle_total(head), 1)
        elif magic.startswith(CCOB_MAGIC):
            head = read(pos, 32)
            if len(head) < 24:
                break
            version, method = struct.unpack_from("<HH", head, 4)
            if version >= 3:
                total = struct.unpack_from("<Q", head, 8)[0]
                hdr = 32
            elif version == 2:
                total = struct.unpack_from("<I", head, 8)[0]
                hdr = 24
            else:
                total, hdr = 0, 20
            bundles += 1
            inner = _ccob_head(read, pos, method, hdr, total)
            got = parse_bundle_header(inner) if inner else None
            if got is None:
                notes.add("compressed offload bundle (zstd) could not be read: no zstd decoder"
                          if method == 1 else "compressed offload bundle could not be read")
            if not total:  # version 1 gives no total size: cannot walk further
                notes.add("compressed bundle v1: only the first bundle was read")
                ids.extend(got or [])
                counts.update({t for t in (hip_target_of_id(i) for i in got or []) if t})
                break
            nxt = pos + total
        else:
            pos = _next_magic(read, pos + 1, start, end)
            continue
        ids.extend(got or [])
        # count each target once per bundle: gfx90a:xnack+ and gfx90a:xnack- are one target
        counts.update({t for t in (hip_target_of_id(i) for i in got or []) if t})
        pos = _next_magic(read, nxt, start, end)
    return CodeObjects("hip-offload-bundle", counts, bundles, sum(counts.values()), tuple(ids),
                       note="; ".join(sorted(notes)))


# -- target selection ---------------------------------------------------------------------------------
def _target_key(name: str) -> tuple[int, int, str]:
    m = re.match(r"(sm|compute)_(\d+)([a-z]?)$", name)
    if m:
        return (0 if m.group(1) == "sm" else 1, int(m.group(2)), m.group(3))
    m = re.match(r"gfx([0-9a-f]+)$", name)
    if m:
        return (2, int(m.group(1), 16), "")
    return (3, 0, name)


def split_targets(counts: Counter, share: float = FULL_TARGET_SHARE) -> tuple[list[str], dict[str, int]]:
    """Full targets (present in at least ``share`` of the entries of the most common target of the
    same kind -- cubins and PTX are judged separately) and the partial ones with their counts."""
    full: list[str] = []
    partial: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    for name, n in counts.items():
        kind = name.split("_")[0] if "_" in name else "gfx"
        by_kind[kind] = max(by_kind.get(kind, 0), n)
    for name in sorted(counts, key=_target_key):
        n = counts[name]
        kind = name.split("_")[0] if "_" in name else "gfx"
        if n >= share * by_kind[kind]:
            full.append(name)
        else:
            partial[name] = n
    return full, partial


# -- file-level entry points with a cache -------------------------------------------------------------
_CACHE: dict[tuple[str, str, int, float], Any] = {}
_LOCK = threading.Lock()


def _cached(system: Any, path: str, what: str, compute: Callable[[], Any]) -> Any:
    st = system.stat(path)
    key = (what, path, st.size if st else -1, st.mtime if st else -1.0)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    val = compute()
    with _LOCK:
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[key] = val
    return val


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()


def elf_info(system: Any, path: str) -> ElfInfo:
    """The ELF header facts of ``path`` (raises ElfError / OSError)."""

    def compute() -> ElfInfo:
        with system.open_binary(path) as fh:
            return read_elf_info(fh, path)

    return _cached(system, path, "info", compute)


def code_objects(system: Any, path: str) -> CodeObjects:
    """The GPU code objects of ``path``: CUDA fatbin or HIP offload bundles (raises ElfError/OSError)."""

    def compute() -> CodeObjects:
        with system.open_binary(path) as fh:
            info = read_elf_info(fh, path)

            raw = getattr(fh, "raw", fh)  # unbuffered: read the 48 header bytes, not 8 KiB around them

            def read(off: int, n: int) -> bytes:
                raw.seek(off)
                out = raw.read(n)
                return out if out is not None else b""

            sec = info.sections.get(".nv_fatbin")
            if sec is not None and sec.type != "SHT_NOBITS" and sec.size:
                return walk_fatbin(read, sec.offset, sec.size)
            sec = info.sections.get(".hip_fatbin")
            if sec is not None and sec.type != "SHT_NOBITS" and sec.size:
                return walk_offload_bundles(read, sec.offset, sec.size)
            return CodeObjects("none", Counter())

    return _cached(system, path, "code", compute)


# -- a fast raw reader: headers, dynamic section, dynamic symbols -----------------------------------
# pyelftools costs about a millisecond a file; the extension scan reads hundreds of .so files, so it
# uses this struct-only reader of 64-bit little-endian ELF (x86-64, aarch64, ppc64le): the ELF header,
# the section headers, the dynamic section and, only when asked, .dynsym/.dynstr and .gnu.hash.
_EM = {62: "EM_X86_64", 183: "EM_AARCH64", 21: "EM_PPC64", 22: "EM_S390", 243: "EM_RISCV"}
SHT_DYNAMIC, SHT_DYNSYM, SHT_NOBITS, SHT_GNU_HASH = 6, 11, 8, 0x6FFFFFF6
DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH = 1, 14, 15, 29
STB_GLOBAL, STB_WEAK = 1, 2


@record(frozen=True)
class RawSection:
    """A section header as read from the file, before its name is resolved."""

    name: str
    type: int
    offset: int
    size: int
    link: int
    entsize: int


class RawElf:
    """Headers of one ELF file through ``read(offset, n)``; raises ElfError on anything else."""

    def __init__(self, read: Callable[[int, int], bytes], path: str = ""):
        self.read = read
        self.path = path
        head = read(0, 64)
        if len(head) < 64 or head[:4] != b"\x7fELF":
            raise ElfError(f"{path or 'file'}: not an ELF file")
        if head[4] != 2 or head[5] != 1:
            raise ElfError(f"{path or 'file'}: not a 64-bit little-endian ELF file")
        (_type, machine, _v, _entry, _phoff, shoff, _flags, _ehsize, _phentsize, _phnum, shentsize, shnum,
         shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", head, 16)
        self.machine = _EM.get(machine, f"EM_{machine}")
        if shoff == 0 or shentsize < 64:
            raise ElfError(f"{path or 'file'}: no section headers")
        if shnum == 0:  # more than 0xff00 sections: the count is in section 0's sh_size
            shnum = struct.unpack_from("<Q", read(shoff, 64), 32)[0]
        shnum = min(shnum, 65535)
        raw = read(shoff, shnum * shentsize)
        if len(raw) < shnum * shentsize:
            raise ElfError(f"{path or 'file'}: truncated section headers")
        hdrs = [struct.unpack_from("<IIQQQQIIQQ", raw, i * shentsize) for i in range(shnum)]
        names = b""
        if shstrndx < shnum:
            h = hdrs[shstrndx]
            names = read(h[4], min(h[5], 1 << 20))
        self.sections: list[RawSection] = []
        for h in hdrs:
            end = names.find(b"\0", h[0])
            name = names[h[0]:end if end >= 0 else len(names)].decode("ascii", "replace")
            self.sections.append(RawSection(name, h[1], h[4], h[5], h[6], h[9]))
        self.needed: list[str] = []
        self.soname: str | None = None
        self.rpath: tuple[str, ...] | None = None
        self.runpath: tuple[str, ...] | None = None
        self._dynamic()

    def section(self, name: str) -> RawSection | None:
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def _strtab(self, index: int, limit: int = 64 << 20) -> bytes:
        if index >= len(self.sections):
            return b""
        s = self.sections[index]
        return self.read(s.offset, min(s.size, limit)) if s.type != SHT_NOBITS else b""

    def _dynamic(self) -> None:
        dyn = next((s for s in self.sections if s.type == SHT_DYNAMIC), None)
        if dyn is None or dyn.type == SHT_NOBITS:
            return
        data = self.read(dyn.offset, min(dyn.size, 1 << 20))
        strs = self._strtab(dyn.link)

        def s(off: int) -> str:
            end = strs.find(b"\0", off)
            return strs[off:end if end >= 0 else len(strs)].decode("utf-8", "replace")

        for i in range(len(data) // 16):
            tag, val = struct.unpack_from("<qQ", data, i * 16)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                self.needed.append(s(val))
            elif tag == DT_SONAME:
                self.soname = s(val)
            elif tag == DT_RPATH:
                self.rpath = (self.rpath or ()) + tuple(s(val).split(":"))
            elif tag == DT_RUNPATH:
                self.runpath = (self.runpath or ()) + tuple(s(val).split(":"))

    def undefined_symbols(self, wanted: Callable[[str], bool] | None = None) -> list[str]:
        """Names of the strong (STB_GLOBAL) undefined dynamic symbols, optionally filtered."""
        sym = next((s for s in self.sections if s.type == SHT_DYNSYM), None)
        if sym is None or not sym.size:
            return []
        data = self.read(sym.offset, min(sym.size, 64 << 20))
        strs = self._strtab(sym.link)
        out = []
        for i in range(len(data) // 24):
            st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", data, i * 24)
            if st_shndx != 0 or not st_name or (st_info >> 4) != STB_GLOBAL:
                continue
            end = strs.find(b"\0", st_name)
            name = strs[st_name:end if end >= 0 else len(strs)].decode("ascii", "replace")
            if wanted is None or wanted(name):
                out.append(name)
        return out


def _file_reader(fh: Any) -> Callable[[int, int], bytes]:
    raw = getattr(fh, "raw", fh)

    def read(off: int, n: int) -> bytes:
        raw.seek(off)
        out = raw.read(n)
        return out if out is not None else b""

    return read


def raw_elf(system: Any, path: str, undefined: Callable[[str], bool] | None = None) -> tuple[RawElf, list[str]]:
    """The raw headers of ``path`` and, when ``undefined`` is given, the strong undefined dynamic
    symbols it accepts (raises ElfError / OSError).  The file is closed on return."""
    with system.open_binary(path) as f:
        e = RawElf(_file_reader(f), path)
        return e, (e.undefined_symbols(undefined) if undefined is not None else [])


def gnu_hash(name: bytes) -> int:
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


class SymbolTable:
    """Which names a shared library defines, answered through its .gnu.hash table (a few small reads a
    look-up, through mmap where the file allows: libtorch_cpu.so is 450 MB and is never read whole)."""

    def __init__(self, system: Any, path: str):
        self.path = path
        self._fh = system.open_binary(path)
        self._mm = None
        read: Callable[[int, int], bytes]
        try:
            import mmap

            self._mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
            mm = self._mm

            def mm_read(off: int, n: int) -> bytes:
                return mm[off:off + n]
            read = mm_read
        except (AttributeError, OSError, ValueError, ImportError):
            read = _file_reader(self._fh)
        self.read = read
        self.elf = RawElf(read, path)
        self.ok = False
        gh = next((s for s in self.elf.sections if s.type == SHT_GNU_HASH), None)
        if gh is None or gh.link >= len(self.elf.sections):
            return
        sym = self.elf.sections[gh.link]
        self.symoff, self.strsec = sym.offset, self.elf.sections[sym.link] if sym.link < len(self.elf.sections) else None
        if self.strsec is None:
            return
        head = read(gh.offset, 16)
        self.nbuckets, self.symbase, self.bloom_size, self.shift = struct.unpack("<IIII", head)
        if not self.nbuckets or not self.bloom_size:
            return
        self.bloom_off = gh.offset + 16
        self.buckets_off = self.bloom_off + 8 * self.bloom_size
        self.chain_off = self.buckets_off + 4 * self.nbuckets
        self.ok = True

    def close(self) -> None:
        try:
            if self._mm is not None:
                self._mm.close()
        finally:
            self._fh.close()

    def _name(self, st_name: int) -> bytes:
        assert self.strsec is not None
        base = self.strsec.offset + st_name
        out = b""
        while True:
            chunk = self.read(base + len(out), 256)
            if not chunk:
                return out
            i = chunk.find(b"\0")
            if i >= 0:
                return out + chunk[:i]
            out += chunk

    def defines(self, name: str) -> bool | None:
        """True / False, or None when the library has no .gnu.hash table."""
        if not self.ok:
            return None
        b = name.encode()
        h = gnu_hash(b)
        word = struct.unpack("<Q", self.read(self.bloom_off + 8 * ((h // 64) % self.bloom_size), 8))[0]
        mask = (1 << (h % 64)) | (1 << ((h >> self.shift) % 64))
        if word & mask != mask:
            return False
        idx = struct.unpack("<I", self.read(self.buckets_off + 4 * (h % self.nbuckets), 4))[0]
        if idx < self.symbase:
            return False
        for _ in range(1 << 20):
            ch = struct.unpack("<I", self.read(self.chain_off + 4 * (idx - self.symbase), 4))[0]
            if (ch | 1) == (h | 1):
                st_name, _info, _other, shndx = struct.unpack("<IBBH", self.read(self.symoff + 24 * idx, 8))
                if shndx != 0 and self._name(st_name) == b:
                    return True
            if ch & 1:
                return False
            idx += 1
        return False
