"""Compile / JIT cache rules (issue 9): the Triton, Inductor, torch_extensions and vLLM caches probed in real
temporary directories, and ENV070-ENV074 run on what the probe read."""
from __future__ import annotations

import os
import stat
import time

import pytest

from gpuvet import kb as kbmod
from gpuvet.app.engine import run_checks
from gpuvet.checks.env import (compile_cache_entries_of_another_user, compile_cache_on_network_filesystem,
                               compile_cache_unwritable, jit_extension_built_by_another_torch,
                               torch_extensions_stale_lock)
from gpuvet.model import Facts, Outcome, ProbeError, row
from gpuvet.probes import compile_caches as cc
from gpuvet.probes.system import System


class OtherUser(System):
    """The real filesystem seen by another, unprivileged uid: ownership and mode bits decide writability (as
    os.access does for a non-root user), so the tests mean the same run as root or not."""

    def __init__(self, environ, uid=54321):
        super().__init__(environ=environ)
        self._uid = uid

    def uid(self) -> int:
        return self._uid

    def access(self, path: str, mode: int) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False
        bits = (st.st_mode >> 6) & 7 if st.st_uid == self._uid else st.st_mode & 7
        want = (2 if mode & os.W_OK else 0) | (1 if mode & os.X_OK else 0) | (4 if mode & os.R_OK else 0)
        return bits & want == want


def torch_site(tmp_path, name="envB"):
    site = tmp_path / name / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text("__version__ = '2.5.1+cu121'\ncuda = '12.1'\nhip = None\n")
    return site


def facts_of(rows, torch=True, packages=("torch", "triton")):
    f = Facts(origin="live")
    f.mark("kernel_caches", "packages", "framework_builds")
    f.add(rows)
    f.add([row("packages", "pip", name=n, version="1", location="/x") for n in packages])
    if torch:
        f.add([row("framework_builds", "version.py", name="torch", version="2.5.1+cu121", cuda="12.1",
                   variant="cuda", path="/x/torch")])
    return f


def outcome(check, f):
    got = run_checks(f, [check], kbmod.load())
    kinds = {x.outcome for x in got}
    return Outcome.FAILED if Outcome.FAILED in kinds else got[0].outcome


def probe(system):
    return list(cc.probe_compile_caches(system))


# -- where the caches are ---------------------------------------------------------------------------------
def test_default_locations_follow_the_tools(tmp_path):
    env = {"HOME": "/home/ann", "USER": "ann", "TMPDIR": "/scratch"}
    s = System(environ=env)
    build = row("framework_builds", "v", name="torch", version="2.8.0+rocm6.4", hip="6.4.43482-0f2d60242")
    got = {n: p for n, p, _ in cc.cache_dirs(s, build)}
    assert got == {"triton-cache": "/home/ann/.triton/cache", "inductor-cache": "/scratch/torchinductor_ann",
                   "torch-extensions": "/home/ann/.cache/torch_extensions/py" + "".join(s.python_version().split(".")[:2])
                   + "_rocm6443482-0f2d60242",
                   "vllm-cache": "/home/ann/.cache/vllm"}
    env2 = dict(env, TRITON_CACHE_DIR="/t", TORCHINDUCTOR_CACHE_DIR="/i", TORCH_EXTENSIONS_DIR="/e",
                VLLM_CACHE_ROOT="/v", XDG_CACHE_HOME="/xdg")
    assert [p for _, p, _ in cc.cache_dirs(System(environ=env2), build)] == ["/t", "/i", "/e", "/v"]


def test_mounts_and_ninja_parsing():
    mounts = cc.parse_mounts("sysfs /sys sysfs rw 0 0\n/dev/sda1 / ext4 rw 0 0\n"
                             "fs:/export/home /home nfs4 rw,relatime 0 0\ntmpfs /tmp tmpfs rw 0 0\n")
    assert cc.fs_type_of("/home/ann/.triton/cache", mounts) == "nfs4"
    assert cc.fs_type_of("/tmp/torchinductor_ann", mounts) == "tmpfs"
    assert cc.fs_type_of("/opt/x", mounts) == "ext4"
    ninja = ("cflags = -DTORCH_EXTENSION_NAME=fused_adam -isystem /opt/envA/lib/python3.10/site-packages/torch/include "
             "-isystem /opt/envA/lib/python3.10/site-packages/torch/include/torch/csrc/api/include\n")
    assert cc.torch_include_of(ninja) == "/opt/envA/lib/python3.10/site-packages"
    assert cc.torch_include_of("cflags = -O2\n") == ""


# -- the probe on real directories, and the rules on what it read -----------------------------------------
def foreign_extension(tmp_path, ext):
    """TORCH_EXTENSIONS_DIR=ext holding fused_adam, built against another env's torch, with an hour-old lock;
    returns (this env's site dir, the lock, a System seeing them)."""
    site = torch_site(tmp_path)
    (ext / "fused_adam").mkdir(parents=True)
    (ext / "fused_adam" / "build.ninja").write_text(
        "cflags = -isystem /opt/envA/lib/python3.11/site-packages/torch/include -isystem /usr/include/python3.11\n")
    lock = ext / "fused_adam" / "lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    s = System(environ={"TORCH_EXTENSIONS_DIR": str(ext), "HOME": str(tmp_path / "home"), "USER": "ann",
                        "TMPDIR": str(tmp_path / "tmp")})
    s._paths = [str(site)]
    return site, lock, s


def test_extension_built_by_another_torch_and_stale_lock(tmp_path):
    ext = tmp_path / "ext"
    site, lock, s = foreign_extension(tmp_path, ext)
    (ext / "mine").mkdir()
    (ext / "mine" / "build.ninja").write_text(f"cflags = -isystem {site}/torch/include\n")
    (ext / "mine" / "lock").write_text("")  # a build in progress: fresh
    rows = probe(s)
    r = next(x for x in rows if x.get("name") == "torch-extensions")
    assert r.get("other_builds") == ["fused_adam: /opt/envA/lib/python3.11/site-packages/torch"]
    assert len(r.get("stale_locks")) == 1 and r.get("stale_locks")[0].startswith(str(lock))
    f = facts_of(rows)
    assert outcome(jit_extension_built_by_another_torch, f) is Outcome.FAILED
    assert outcome(torch_extensions_stale_lock, f) is Outcome.FAILED
    found = run_checks(f, [torch_extensions_stale_lock], kbmod.load())[0]
    assert found.fixes[0].command == f"rm -f {lock}"
    # the same cache after the lock is gone and the foreign build removed: both pass
    lock.unlink()
    (ext / "fused_adam" / "build.ninja").unlink()
    f = facts_of(probe(s))
    assert outcome(jit_extension_built_by_another_torch, f) is Outcome.PASSED
    assert outcome(torch_extensions_stale_lock, f) is Outcome.PASSED


def test_cache_of_another_user_is_unwritable_and_its_entries_foreign(tmp_path):
    triton = tmp_path / "triton"
    (triton / "3f1c0ab2").mkdir(parents=True)
    (triton / "77aa").mkdir()
    triton.chmod(0o755)
    tmp_path.chmod(0o777)  # the other caches (HOME = tmp_path) can be created: only Triton's is in question
    for d in triton.iterdir():
        d.chmod(0o755)
    s = OtherUser({"TRITON_CACHE_DIR": str(triton), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "ind"),
                   "HOME": str(tmp_path), "USER": "bob"})
    s._paths = []
    rows = probe(s)
    r = next(x for x in rows if x.get("name") == "triton-cache")
    assert r.get("exists") is True and r.get("writable") is False and r.get("owner_uid") == os.getuid()
    assert r.get("foreign_entries") == 2 and r.get("mode") == "0o755"
    f = facts_of(rows)
    assert outcome(compile_cache_unwritable, f) is Outcome.FAILED
    assert outcome(compile_cache_entries_of_another_user, f) is Outcome.FAILED
    fail = next(x for x in run_checks(f, [compile_cache_unwritable], kbmod.load()) if x.outcome is Outcome.FAILED)
    assert "TRITON_CACHE_DIR" in fail.fixes[0].command and str(triton) in fail.title
    # opened up to everyone (as a shared scratch directory would be): writable, but the entries stay foreign
    triton.chmod(0o777 | stat.S_ISVTX)
    f = facts_of(probe(s))
    assert outcome(compile_cache_unwritable, f) is Outcome.PASSED
    assert outcome(compile_cache_entries_of_another_user, f) is Outcome.FAILED


def test_own_caches_pass_and_missing_ones_count_as_creatable(tmp_path):
    s = System(environ={"HOME": str(tmp_path), "USER": "ann", "TMPDIR": str(tmp_path / "tmp")})
    (tmp_path / "tmp").mkdir()
    s._paths = []
    rows = probe(s)
    assert {r.get("name") for r in rows} == {"triton-cache", "inductor-cache", "torch-extensions", "vllm-cache"}
    assert all(r.get("writable") for r in rows) and not any(r.get("exists") for r in rows)
    f = facts_of(rows)
    for chk in (compile_cache_unwritable, compile_cache_entries_of_another_user, torch_extensions_stale_lock,
                jit_extension_built_by_another_torch):
        assert outcome(chk, f) is Outcome.PASSED, chk.code


def test_huge_cache_is_sampled_not_walked(tmp_path):
    d = tmp_path / "triton"
    d.mkdir()
    for i in range(cc.MAX_ENTRIES + 50):
        (d / f"{i:04x}").mkdir()
    s = System(environ={"TRITON_CACHE_DIR": str(d), "HOME": str(tmp_path), "USER": "ann"})
    s._paths = []
    r = next(x for x in probe(s) if x.get("name") == "triton-cache")
    assert r.get("files") == cc.MAX_ENTRIES and r.get("sampled_all") is False


# -- rules on fact rows: gating, network filesystems, unknowns --------------------------------------------
def cache_row(name, path, **kw):
    vals = dict(name=name, path=path, exists=True, writable=True, owner_uid=1000, mode="0o755", fs_type="ext4",
                files=3, sampled_all=True, foreign_entries=0, foreign_sample=[], stale_locks=[], other_builds=[])
    vals.update(kw)
    return row("kernel_caches", f"{path} (test)", **vals)


def test_network_filesystem_fires_and_local_passes():
    f = facts_of([cache_row("triton-cache", "/home/ann/.triton/cache", fs_type="nfs4")])
    assert outcome(compile_cache_on_network_filesystem, f) is Outcome.FAILED
    f = facts_of([cache_row("triton-cache", "/tmp/t", fs_type="tmpfs")])
    assert outcome(compile_cache_on_network_filesystem, f) is Outcome.PASSED


def test_caches_of_software_not_installed_are_not_judged():
    # an unwritable vLLM cache matters only where vllm is installed
    rows = [cache_row("vllm-cache", "/.cache/vllm", exists=False, writable=False)]
    assert outcome(compile_cache_unwritable, facts_of(rows)) is Outcome.SKIPPED
    assert outcome(compile_cache_unwritable, facts_of(rows, packages=("torch", "vllm"))) is Outcome.FAILED


def test_unknown_when_not_examined():
    f = Facts(origin="pasted")
    assert outcome(compile_cache_unwritable, f) is Outcome.UNKNOWN
    f = facts_of([])
    f.fail(ProbeError("compile-caches", ("kernel_caches",), "timed out", "timeout"))
    assert outcome(compile_cache_on_network_filesystem, f) is Outcome.UNKNOWN


@pytest.mark.parametrize("value", ["/nonexistent-root-only/x"])
def test_uncreatable_cache_fires(value, tmp_path):
    s = OtherUser({"TORCHINDUCTOR_CACHE_DIR": value, "HOME": str(tmp_path), "USER": "bob"})
    s._paths = []
    rows = probe(s)
    r = next(x for x in rows if x.get("name") == "inductor-cache")
    assert r.get("exists") is False and r.get("writable") is False  # '/' is not writable by an unprivileged uid
    assert outcome(compile_cache_unwritable, facts_of(rows)) is Outcome.FAILED


# -- diagnose: the cache errors users paste (lines quoted from the public threads each signature cites) -----
@pytest.mark.parametrize("text, sig", [
    ('Traceback (most recent call last):\n'
     '  File "/home/anaconda3/lib/python3.11/site-packages/triton/compiler/compiler.py", line 442, in compile\n'
     '    metadata_group = fn_cache_manager.get_group(\n'
     '  File "/home/anaconda3/lib/python3.11/site-packages/triton/runtime/cache.py", line 69, in get_group\n'
     '    grp_data = json.load(f)\n'
     'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n', "LOG181"),
    ('Thread 46930 (idle): "MainThread"\n    wait (torch/utils/file_baton.py:42)\n'
     '    _jit_compile (torch/utils/cpp_extension.py:1522)\n    load (torch/utils/cpp_extension.py:1284)\n'
     '    jit_load (deepspeed/ops/op_builder/builder.py:480)\n', "LOG182"),
    ("    mkdir(name, mode)\nPermissionError: [Errno 13] Permission denied: '/tmp/torch_extensions/fused'\n", "LOG183"),
    ("RuntimeError: vLLM failed to compile the model. The most likely reason for this is that a previous compilation "
     "failed, leading to a corrupted compilation artifact. We recommend trying to remove ~/.cache/vllm/torch_compile_cache "
     "and try again to see the real issue.\n", "LOG184"),
    ("    os.rename(tmp_path, path)\nFileNotFoundError: [Errno 2] No such file or directory: "
     "'/tmp/torchinductor_dberard/hb/chbtiqye637eosh5eyoh7t3ve4mviybimx2m2uudsrm6bt22x3nd.py.1571306751' -> "
     "'/tmp/torchinductor_dberard/hb/chbtiqye637eosh5eyoh7t3ve4mviybimx2m2uudsrm6bt22x3nd.py'\n", "LOG185"),
])
def test_diagnose_names_the_cache(text, sig):
    from conftest import run_cli

    doc = run_cli(["diagnose", "-", "--format", "json"], stdin=text).json()
    top = doc["diagnoses"][0] if doc.get("diagnoses") else doc["extra"]["diagnoses"][0]
    assert top["cause"] == "kernel-cache-db", top
    assert sig in str(top)


def test_fix_commands_quote_the_paths_they_delete(tmp_path):
    """A cache path with a space or shell syntax in it is one quoted argument of rm, never two paths or a command."""
    import shlex

    ext = tmp_path / "my ext $(touch pwned)"
    _, lock, s = foreign_extension(tmp_path, ext)
    f = facts_of(probe(s))
    rm_lock = run_checks(f, [torch_extensions_stale_lock], kbmod.load())[0].fixes[0].command
    assert shlex.split(rm_lock) == ["rm", "-f", str(lock)]
    rm_ext = run_checks(f, [jit_extension_built_by_another_torch], kbmod.load())[0].fixes[0].command
    assert shlex.split(rm_ext) == ["rm", "-rf", f"{ext}/fused_adam"]
