"""Probes: the compile and JIT caches torch, Triton and vLLM write between runs.

* Triton: ``TRITON_CACHE_DIR``, else ``$TRITON_HOME/.triton/cache`` (``~/.triton/cache``): one directory
  per kernel hash holding the compiled kernel and its JSON metadata.
* Inductor (torch.compile): ``TORCHINDUCTOR_CACHE_DIR``, else ``$TMPDIR/torchinductor_<user>``
  (``/tmp/torchinductor_<user>``; torch/_inductor/runtime/cache_dir_utils.py), with its own ``triton/<device>``.
* torch_extensions (``torch.utils.cpp_extension.load``, DeepSpeed / apex ops): ``TORCH_EXTENSIONS_DIR``, else
  ``$XDG_CACHE_HOME/torch_extensions/py<XY>_<cuNNN|rocmN..|cpu>`` (``~/.cache/...``); one directory per
  extension with its ``build.ninja`` and, while a build runs, a ``lock`` file (torch.utils.file_baton).
* vLLM: ``VLLM_CACHE_ROOT``, else ``$XDG_CACHE_HOME/vllm`` (``~/.cache/vllm``; torch_compile_cache/ inside).

For each it records whether the directory exists and can be written (or created) by this user, its owner,
how many of a bounded sample of its entries belong to another user and cannot be written by this one,
``lock`` files older than ``STALE_LOCK_S`` (a killed build leaves one and every later ``load()`` waits
on it forever), extensions whose ``build.ninja`` names another torch installation's headers than the
examined one (a cache shared by several environments), and the filesystem type the directory is on (a
network filesystem shared by ranks on several nodes races).  Nothing is walked deeply: at most
``MAX_ENTRIES`` names per directory, ``MAX_NINJA`` build files of ``NINJA_BYTES`` each, one deadline.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, Iterable, Mapping

from gpuvet.model import Row, row

from .base import Probe
from .system import System

MAX_ENTRIES = 200
MAX_NINJA = 32
NINJA_BYTES = 64 * 1024
STALE_LOCK_S = 600.0
DEADLINE_S = 0.5


_ISYSTEM = re.compile(r"-isystem\s+(\S+?)/torch/include(?=\s|$)")
_SANITIZE = re.compile(r'[\\/:*?"<>|]')


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or ""


def _xdg_cache(env: Mapping[str, str]) -> str:
    base = env.get("XDG_CACHE_HOME") or ""
    if base and os.path.isabs(base):
        return base
    return os.path.join(_home(env), ".cache") if _home(env) else ""


def _user(system: System) -> str:
    env = system.environ
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):  # the order getpass.getuser() reads them in
        if env.get(var):
            return env[var]
    return system.user_name()


def cache_dirs(system: System, build: Row | None = None) -> list[tuple[str, str, str]]:
    """(name, path, where the path comes from) of every cache this examines, in a fixed order."""
    env = system.environ
    out: list[tuple[str, str, str]] = []
    if env.get("TRITON_CACHE_DIR"):
        out.append(("triton-cache", env["TRITON_CACHE_DIR"], "$TRITON_CACHE_DIR"))
    elif env.get("TRITON_HOME") or _home(env):
        base = env.get("TRITON_HOME") or _home(env)
        out.append(("triton-cache", os.path.join(base, ".triton", "cache"),
                    "$TRITON_HOME/.triton/cache" if env.get("TRITON_HOME") else "~/.triton/cache (default)"))
    if env.get("TORCHINDUCTOR_CACHE_DIR"):
        out.append(("inductor-cache", env["TORCHINDUCTOR_CACHE_DIR"], "$TORCHINDUCTOR_CACHE_DIR"))
    else:
        tmp = env.get("TMPDIR") or env.get("TEMP") or env.get("TMP") or "/tmp"
        out.append(("inductor-cache", os.path.join(tmp, "torchinductor_" + _SANITIZE.sub("_", _user(system))),
                    "$TMPDIR/torchinductor_<user> (default)"))
    if env.get("TORCH_EXTENSIONS_DIR"):
        out.append(("torch-extensions", env["TORCH_EXTENSIONS_DIR"], "$TORCH_EXTENSIONS_DIR"))
    elif _xdg_cache(env):
        root = os.path.join(_xdg_cache(env), "torch_extensions")
        folder = extensions_folder(system, build)
        out.append(("torch-extensions", os.path.join(root, folder) if folder else root,
                    "~/.cache/torch_extensions (default)"))
    if env.get("VLLM_CACHE_ROOT"):
        out.append(("vllm-cache", env["VLLM_CACHE_ROOT"], "$VLLM_CACHE_ROOT"))
    elif _xdg_cache(env):
        out.append(("vllm-cache", os.path.join(_xdg_cache(env), "vllm"), "~/.cache/vllm (default)"))
    return out


def extensions_folder(system: System, build: Row | None) -> str:
    """``py311_cu121`` / ``py312_rocm6.2.41133-...`` without dots: the folder cpp_extension builds the examined
    torch's extensions in when TORCH_EXTENSIONS_DIR is unset ('' when no torch build is known)."""
    if build is None:
        return ""
    py = system.python_version()
    m = re.match(r"(\d+)\.(\d+)", py or "")
    if not m:
        return ""
    hip, cuda = str(build.get("hip") or ""), str(build.get("cuda") or "")
    acc = f"rocm{hip.replace('.', '')}" if hip else f"cu{cuda.replace('.', '')}" if cuda else "cpu"
    return f"py{m.group(1)}{m.group(2)}_{acc}"


def _writable(system: System, path: str) -> bool:
    p = path.rstrip("/") or "/"
    if system.exists(p):
        return system.access(p, os.W_OK | os.X_OK)
    parent = os.path.dirname(p)
    while parent and parent != "/" and not system.exists(parent):
        parent = os.path.dirname(parent)
    return system.access(parent or "/", os.W_OK | os.X_OK)


def parse_mounts(text: str) -> list[tuple[str, str]]:
    """(mount point, filesystem type) of /proc/self/mounts, longest mount point first."""
    out = []
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            mnt = parts[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
            out.append((mnt, parts[2]))
    return sorted(out, key=lambda m: len(m[0]), reverse=True)


def fs_type_of(path: str, mounts: list[tuple[str, str]]) -> str:
    for mnt, fstype in mounts:
        if path == mnt or path.startswith(mnt.rstrip("/") + "/") or mnt == "/":
            return fstype
    return ""


def torch_include_of(ninja: str) -> str:
    """The site directory whose torch headers a cpp_extension build.ninja compiles against ('' if none)."""
    m = _ISYSTEM.search(ninja or "")
    return m.group(1) if m else ""


def _existing(system: System, path: str) -> str:
    p = path.rstrip("/") or "/"
    while p and p != "/" and not system.exists(p):
        p = os.path.dirname(p)
    return p or "/"


def probe_cache(system: System, name: str, path: str, where: str, torch_dir: str | None,
                mounts: list[tuple[str, str]], end: float) -> Row:
    me = system.uid()
    exists = system.is_dir(path)
    st = system.stat(path) if exists else None
    values: dict[str, Any] = dict(name=name, path=path, exists=exists, writable=_writable(system, path),
                        owner_uid=st.uid if st is not None else None,
                        mode=oct(st.mode & 0o7777) if st is not None else "",
                        fs_type=fs_type_of(system.realpath(_existing(system, path)), mounts))
    files = foreign = 0
    foreign_names: list[str] = []
    locks: list[str] = []
    others: list[str] = []
    complete = True
    if exists:
        names, complete = system.list_some(path, MAX_ENTRIES)
        files = len(names)
        now = time.time()
        ninjas = 0
        mine_site = os.path.realpath(os.path.dirname(torch_dir)) if torch_dir else ""
        for entry in names:
            if time.monotonic() > end:
                complete = False
                break
            p = os.path.join(path, entry)
            est = system.stat(p)
            if est is None:
                continue
            if est.uid != me and not system.access(p, os.W_OK):
                foreign += 1
                if len(foreign_names) < 5:
                    foreign_names.append(f"{entry} (uid {est.uid})")
            if name != "torch-extensions" or not est.is_dir:
                continue
            lock = system.stat(os.path.join(p, "lock"))
            if lock is not None and now - lock.mtime > STALE_LOCK_S:
                locks.append(f"{os.path.join(p, 'lock')} ({int((now - lock.mtime) // 60)} min old)")
            if mine_site and ninjas < MAX_NINJA:
                ninjas += 1
                theirs = torch_include_of(system.read_text(os.path.join(p, "build.ninja"), limit=NINJA_BYTES) or "")
                if theirs and os.path.realpath(theirs) != mine_site:
                    others.append(f"{entry}: {theirs}/torch")
    values.update(files=files, sampled_all=complete, foreign_entries=foreign, foreign_sample=foreign_names,
                  stale_locks=locks[:10], other_builds=others[:10])
    return row("kernel_caches", f"{path} ({where})", **values)


def probe_compile_caches(system: System) -> Iterable[Row]:
    from .framework import find_torch, parse_torch_version_py, site_dirs

    torch_dir = None
    build = None
    try:
        torch_dir = find_torch(system, site_dirs(system.python_paths()))
    except Exception:  # an unusable --python: the caches are still this user's, without the torch context
        torch_dir = None
    if torch_dir:
        text = system.read_text(f"{torch_dir}/version.py", limit=64 * 1024)
        rows = parse_torch_version_py(text, f"{torch_dir}/version.py", torch_dir) if text else []
        build = rows[0] if rows else None
    mounts = parse_mounts(system.read_text("/proc/self/mounts", limit=1024 * 1024) or "")
    end = time.monotonic() + DEADLINE_S
    return [probe_cache(system, name, path, where, torch_dir, mounts, end)
            for name, path, where in cache_dirs(system, build)]


PROBES: list[Probe] = [
    Probe("compile-caches", ("kernel_caches",), probe_compile_caches,
          "Triton, Inductor, torch_extensions and vLLM caches: writable, owner, entries of other users, stale "
          "extension build locks, extensions built against another torch, network filesystems"),
]
