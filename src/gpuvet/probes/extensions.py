"""Probe: the compiled extensions the environment can import, read from their ELF files only.

Which files: every shared object a pip/conda distribution installed (its ``RECORD``, or an egg's
``installed-files.txt``) in the site directories of the interpreter examined, except torch's own and
NVIDIA's runtime wheels (the framework probe and the loader model read those); every ``.so`` under
the other import-path entries (``PYTHONPATH``, ``.pth`` source trees), walked with bounds; and the
JIT builds of ``torch.utils.cpp_extension.load`` (``TORCH_EXTENSIONS_DIR``, else
``$XDG_CACHE_HOME/torch_extensions`` or ``~/.cache/torch_extensions``).

A file becomes an ``extensions`` row when it links a torch library (DT_NEEDED ``libtorch*.so`` /
``libc10*.so``) or carries GPU code (a ``.nv_fatbin`` or ``.hip_fatbin`` section).  For each:

* the GPU targets of its code objects (the same fatbin / offload-bundle walk as torch's own);
* the CUDA / HIP runtime major it links (``libcudart.so.N``, ``libamdhip64.so.N``);
* the strong undefined dynamic symbols in the ``c10``/``at``/``torch``/``caffe2`` namespaces, each
  looked up in the ``.gnu.hash`` tables of the installed torch's libraries: a symbol none of them
  defines is exact proof that the extension was built against another torch ("undefined symbol" at
  import).

Nothing is imported and no file is read whole.  What is derived from a file is cached on disk
(``<cache dir>/elf-scan-v1.json``) by (path, size, mtime), and the symbol verdict also by the torch
libraries' own (path, size, mtime), so a second ``gpuvet check`` only stats the files.
"""
from __future__ import annotations

import json
import os
import re
import stat as _stat
import threading
import time
from typing import Any, Iterable, Sequence

from gpuvet.model import Row, row
from gpuvet.model.digest import sha1_hex

from . import elf
from .base import Probe
from .system import System

TORCH_LIB = re.compile(r"^lib(torch|c10)[\w]*\.so$")
# mangled names in torch's namespaces: functions/objects (_ZN/_ZNK) and vtables/typeinfo (_ZTV/_ZTI/_ZTS)
TORCH_SYMBOL = re.compile(r"^_Z(?:T[VIS])?NK?(?:3c10|2at|5torch|6caffe2)")
SKIP_DISTS = re.compile(r"^(torch|nvidia[-_].*|triton|pytorch[-_]triton.*)-[^-]+\.(dist-info|egg-info)$", re.I)
CACHE_NAME = "elf-scan-v1.json"  # the name before it was kept per environment (no longer read)


def cache_name(system: System) -> str:
    """The cache file of the environment examined (``--python``, else this interpreter): each
    environment reads only its own files' entries, not every other venv's (start-up: a user with a
    dozen environments read a 1.2 MB file on every check)."""
    import sys

    who = getattr(system, "python", None) or sys.executable
    return f"elf-scan-v1-{sha1_hex(who.encode())[:12]}.json"
MAX_FILES = 5000  # shared objects read per check (a bound; the rest are named as not read)
MAX_MISSING_SHOWN = 8
DEADLINE_S = 2.5

_LOCK = threading.Lock()


def _is_torch_symbol(name: str) -> bool:
    return bool(TORCH_SYMBOL.match(name))


def _module_name(path: str) -> str:
    return os.path.basename(path).split(".", 1)[0]


# -- where the files are --------------------------------------------------------------------------------
def _is_site(d: str) -> bool:
    return os.path.basename(d.rstrip("/")) in ("site-packages", "dist-packages")


def _is_stdlib(d: str) -> bool:
    b = os.path.basename(d.rstrip("/"))
    return bool(re.fullmatch(r"python\d\.\d+t?|lib-dynload", b)) or d.endswith(".zip")


_SO_LINE = re.compile(r"^([^,\n]*\.so(?:\.[0-9][0-9.]*)?)(?:,|$)", re.M)


def _record_files(system: System, site: str, entry: str) -> list[str]:
    """Absolute .so paths a dist-info RECORD / egg-info installed-files.txt lists."""
    if entry.endswith(".dist-info"):
        text = system.read_text(f"{site}/{entry}/RECORD", limit=8 * 1024 * 1024) or ""
        base = site
    else:
        text = system.read_text(f"{site}/{entry}/installed-files.txt", limit=8 * 1024 * 1024) or ""
        base = f"{site}/{entry}"
    if ".so" not in text:
        return []
    return [os.path.normpath(f"{base}/{rel}") for rel in _SO_LINE.findall(text)]


def _dist_name(entry: str) -> str:
    name = re.sub(r"\.(dist|egg)-info$", "", entry).rsplit("-", 1)[0] if "-" in entry else entry.split(".")[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def jit_dirs(system: System) -> list[str]:
    env = system.environ
    if env.get("TORCH_EXTENSIONS_DIR"):
        return [env["TORCH_EXTENSIONS_DIR"]]
    base = env.get("XDG_CACHE_HOME") or (os.path.join(env["HOME"], ".cache") if env.get("HOME") else "")
    return [os.path.join(base, "torch_extensions")] if base else []


def _record_path(site: str, entry: str) -> str:
    return f"{site}/{entry}/RECORD" if entry.endswith(".dist-info") else f"{site}/{entry}/installed-files.txt"


def _cached_record_files(system: System, site: str, entry: str, cache: "DiskCache | None") -> list[str]:
    """_record_files through the disk cache, keyed by the RECORD's own (path, size, mtime)."""
    if cache is None:
        return _record_files(system, site, entry)
    rec = _record_path(site, entry)
    st = system.stat(rec)
    hit = cache.get(rec, st)
    if hit is not None and isinstance(hit.get("so"), list):
        return [p for p in hit["so"] if isinstance(p, str)]
    files = _record_files(system, site, entry)
    cache.put(rec, st, {"candidate": False, "so": files})
    return files


def candidate_files(system: System, paths: Sequence[str], torch_dir: str | None,
                    cache: "DiskCache | None" = None) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(path, kind, dist) of every shared object to read, and notes on what was bounded."""
    out: dict[str, tuple[str, str, str]] = {}
    notes: list[str] = []
    torch_real = system.realpath(torch_dir) + os.sep if torch_dir else None
    for d in paths:
        if _is_stdlib(d):
            continue
        if _is_site(d):
            for entry in system.listdir(d):
                if not entry.endswith((".dist-info", ".egg-info")) or SKIP_DISTS.match(entry):
                    continue
                for p in _cached_record_files(system, d, entry, cache):
                    out.setdefault(p, (p, "site-packages", _dist_name(entry)))
            continue
        files, complete = system.walk_so(d, max_depth=6, max_entries=20000, deadline=1.0)
        if not complete:
            notes.append(f"{d}: more than 20000 entries or 1 s, only part was read")
        for p in files:
            if torch_real and system.realpath(p).startswith(torch_real):
                continue
            out.setdefault(p, (p, "pythonpath", ""))
    for d in jit_dirs(system):
        if system.is_dir(d):
            files, _ = system.walk_so(d, max_depth=3, max_entries=5000)
            for p in files:
                out.setdefault(p, (p, "jit-cache", ""))
    return list(out.values()), notes


# -- the disk cache -------------------------------------------------------------------------------------
class DiskCache:
    """``<cache>/gpuvet/elf/elf-scan-v1.json``: JSON only, in a 0700 directory of this user's that is no
    link, read only when it is a private regular file under the size cap; anything else is a miss."""

    MAX_BYTES = 32 * 1024 * 1024
    MAX_ENTRIES = 20000  # past this, only the files of the latest scan are kept

    def __init__(self, system: System):
        base = system.cache_dir() if hasattr(system, "cache_dir") else None
        self.dir = os.path.join(base, "elf") if base else None
        self.data: dict[str, Any] = {}
        self.seen: set[str] = set()
        self.dirty = False
        self.name = cache_name(system)
        fd = self._open_dir(create=False)
        if fd is None:
            return
        try:
            f = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            try:
                st = os.fstat(f)
                if not _stat.S_ISREG(st.st_mode) or not _private(st) or st.st_size > self.MAX_BYTES:
                    return
                with os.fdopen(os.dup(f), "rb") as fh:
                    doc = json.loads(fh.read(self.MAX_BYTES + 1))
            finally:
                os.close(f)
            files = doc.get("files") if isinstance(doc, dict) and doc.get("version") == 1 else None
            if isinstance(files, dict):
                self.data = files
        except (OSError, ValueError):
            self.data = {}
        finally:
            os.close(fd)

    def _open_dir(self, create: bool) -> int | None:
        if not self.dir:
            return None
        fd: int | None = None
        try:
            parent = os.path.dirname(self.dir)
            if create:
                os.makedirs(parent, 0o700, exist_ok=True)
            fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            if not _private(os.fstat(fd)):
                os.close(fd)
                return None
            if create:
                try:
                    os.mkdir("elf", 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
            nfd = os.open("elf", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = None
            if not _private(os.fstat(nfd)):
                os.close(nfd)
                return None
            return nfd
        except OSError:
            if fd is not None:
                os.close(fd)
            return None

    def get(self, path: str, st: Any) -> dict | None:
        e = self.data.get(path)
        if (st is not None and isinstance(e, dict) and e.get("size") == st.size and e.get("mtime") == st.mtime
                and _valid_entry(e)):
            self.seen.add(path)
            return e
        return None

    def put(self, path: str, st: Any, entry: dict) -> None:
        if st is None:
            return
        self.data[path] = dict(entry, size=st.size, mtime=st.mtime)
        self.seen.add(path)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        fd = self._open_dir(create=True)
        if fd is None:
            return
        import secrets  # only a cache write needs it (start-up)

        tmp = f".tmp-{secrets.token_hex(8)}"
        try:
            f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
            with os.fdopen(f, "w", encoding="utf-8") as fh:
                data = self.data if len(self.data) <= self.MAX_ENTRIES else {k: self.data[k] for k in self.seen}
                json.dump({"version": 1, "files": data}, fh, separators=(",", ":"))
            os.replace(tmp, self.name, src_dir_fd=fd, dst_dir_fd=fd)
        except (OSError, TypeError, ValueError):
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
        finally:
            os.close(fd)


def _private(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid() and not (st.st_mode & (_stat.S_IWGRP | _stat.S_IWOTH))


def _valid_entry(e: Any) -> bool:
    if e.get("candidate") is False:
        return isinstance(e.get("so", []), list)
    return (isinstance(e, dict) and isinstance(e.get("needed", []), list) and isinstance(e.get("undefined", []), list)
            and isinstance(e.get("targets", []), list) and isinstance(e.get("missing", {}), dict)
            and all(isinstance(x, str) for x in e.get("needed", []) + e.get("undefined", []) + e.get("targets", [])))


# -- reading one file -----------------------------------------------------------------------------------
def read_extension(system: System, path: str) -> dict | None:
    """What the scan derives from one file, or None when it is not an ELF shared object."""
    try:
        info, undef = elf.raw_elf(system, path, _is_torch_symbol)
    except (elf.ElfError, OSError, ValueError):
        return None
    torch_libs = [n for n in info.needed if TORCH_LIB.match(n)]
    fat = next((s for s in info.sections if s.name in (".nv_fatbin", ".hip_fatbin")
                and s.type != elf.SHT_NOBITS and s.size), None)
    entry: dict[str, Any] = {"needed": info.needed, "torch_libs": torch_libs, "undefined": undef if torch_libs else [],
                             "gpu_code": "none", "targets": [], "partial": []}
    if not torch_libs and fat is None:
        return {"candidate": False}
    entry["candidate"] = True
    if fat is not None:
        try:
            co = elf.code_objects(system, path)
            full, partial = co.split()
            entry.update(gpu_code=co.kind, targets=full, partial=[f"{k}:{v}" for k, v in partial.items()])
        except (elf.ElfError, OSError, ValueError) as exc:
            entry.update(gpu_code="unreadable", note=str(exc)[:200])
    return entry


def _major(needed: Sequence[str], stem: str) -> str:
    for n in needed:
        m = re.match(rf"^{re.escape(stem)}\.so\.(\d+)", n)
        if m:
            return m.group(1)
    return ""


class TorchSymbols:
    """The dynamic symbols the installed torch's libraries define (``.gnu.hash`` look-ups)."""

    def __init__(self, system: System, torch_dir: str | None):
        self.system = system
        self.libs: list[str] = []
        self.key = ""
        self._tables: list[elf.SymbolTable] | None = None
        if torch_dir:
            lib = f"{torch_dir}/lib"
            self.libs = [f"{lib}/{n}" for n in system.listdir(lib) if TORCH_LIB.match(n)]
            # libc10 and libtorch_cpu first: most symbols live there
            self.libs.sort(key=lambda p: (0 if "libc10.so" in p else 1 if "torch_cpu" in p else 2, p))
            parts = []
            for p in self.libs:
                st = system.stat(p)
                parts.append(f"{p}:{st.size if st else -1}:{st.mtime if st else -1}")
            self.key = sha1_hex("\n".join(parts).encode())[:16]

    def tables(self) -> list[elf.SymbolTable]:
        if self._tables is None:
            self._tables = []
            for p in self.libs:
                try:
                    self._tables.append(elf.SymbolTable(self.system, p))
                except (elf.ElfError, OSError, ValueError):
                    continue
        return self._tables

    def missing(self, names: Sequence[str]) -> tuple[int, list[str]] | None:
        tabs = self.tables()
        if not tabs or not any(t.ok for t in tabs):
            return None
        miss = []
        for n in names:
            if not any(t.defines(n) for t in tabs):
                miss.append(n)
        return len(miss), miss[:MAX_MISSING_SHOWN]

    def close(self) -> None:
        for t in self._tables or []:
            try:
                t.close()
            except OSError:
                pass


# -- the probe ------------------------------------------------------------------------------------------
def probe_extensions(system: System, paths: Sequence[str] | None = None, torch_dir: str | None = None) -> list[Row]:
    from .framework import find_torch, site_dirs

    if paths is None:
        paths = list(system.python_paths())
        if getattr(system, "python", None) is None and paths:
            # `python -m gpuvet` puts gpuvet's own working directory first on sys.path: that is not the
            # job's environment (unless PYTHONPATH names it)
            cwd = os.path.realpath(os.getcwd())
            pp = {os.path.realpath(p or ".") for p in (system.environ.get("PYTHONPATH") or "").split(":") if p}
            paths = [p for p in paths if os.path.realpath(p) != cwd or cwd in pp]
    dirs = site_dirs(paths)
    if torch_dir is None:
        torch_dir = find_torch(system, dirs)
    cache = DiskCache(system)
    files, notes = candidate_files(system, dirs, torch_dir, cache)
    syms = TorchSymbols(system, torch_dir)
    rows: list[Row] = []
    started = time.monotonic()
    try:
        for i, (path, kind, dist) in enumerate(files):
            if i >= MAX_FILES or time.monotonic() - started > DEADLINE_S:
                notes.append(f"{len(files) - i} shared objects not read (bound of {MAX_FILES} files / {DEADLINE_S}s)")
                break
            st = system.stat(path)
            if st is None:
                continue
            entry = cache.get(path, st)
            if entry is None:
                entry = read_extension(system, path)
                if entry is None:
                    continue
                cache.put(path, st, entry)
            if not entry.get("candidate"):
                continue
            missing_count, missing = -1, []
            undef = entry.get("undefined") or []
            if undef and syms.key:
                verdict = (entry.get("missing") or {}).get(syms.key)
                if verdict is None:
                    got = syms.missing(undef)
                    if got is not None:
                        verdict = list(got)
                        entry.setdefault("missing", {})[syms.key] = verdict
                        cache.put(path, st, entry)
                if verdict is not None:
                    missing_count, missing = int(verdict[0]), list(verdict[1])
            elif not undef:
                missing_count = 0
            needed = entry.get("needed") or []
            src = f"ELF {path}" + (f" (dist {dist})" if dist else "")
            rows.append(row("extensions", src, path=path, name=_module_name(path), dist=dist, kind=kind,
                            links_torch=list(entry.get("torch_libs") or []), gpu_code=entry.get("gpu_code", "none"),
                            targets=list(entry.get("targets") or []), cuda_major=_major(needed, "libcudart"),
                            hip_major=_major(needed, "libamdhip64"), torch_symbols=len(undef),
                            missing_symbols=missing, missing_count=missing_count, torch_dir=torch_dir or ""))
    finally:
        syms.close()
        with _LOCK:
            cache.save()
    return rows


def _probe(system: System) -> Iterable[Row]:
    return probe_extensions(system)


PROBES: list[Probe] = [
    Probe("extensions", ("extensions",), _probe,
          "compiled extensions (site-packages RECORDs, PYTHONPATH, torch_extensions JIT cache): GPU targets, "
          "CUDA/HIP major, torch symbols they need that this libtorch does not export"),
]
