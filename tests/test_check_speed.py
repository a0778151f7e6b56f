"""gpuvet check's start-up stays lean: the modules it must not import on the way (each costs start-up
time on every run: bench/check_speed.py), and the fast paths that replaced them give the same answers."""
import os
import shutil
import subprocess
import sys

import pytest

from gpuvet.probes.dpkg import parse_dpkg_status
from gpuvet.probes.system import _which

HEAVY = ("packaging.requirements", "packaging.markers", "packaging.tags", "logging", "importlib.resources",
         "shutil", "secrets", "yaml", "jsonschema", "elftools", "sqlalchemy", "rich", "tomllib")


def test_live_check_does_not_import_heavy_modules(tmp_path):
    code = ("import sys, io, contextlib\nfrom gpuvet.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['check', '--fail-on', 'never'])\n"
            "print('\\n'.join(sorted(sys.modules)))")
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    # a warm KB cache first (a user's second run): the YAML parser is only for a cache miss
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    mods = set(out.stdout.split())
    assert "gpuvet.app.check" in mods, out.stderr
    # what the interpreter loads before gpuvet runs (site's .pth hooks: the H200 image's numba-cuda redirector
    # imports importlib.resources and shutil) is not gpuvet's cost; nor is what a dependency's own module
    # pulls in once gpuvet needs it lazily (older packaging: specifiers -> utils -> tags -> logging)
    base = "import sys\nprint('\\n'.join(sorted(sys.modules)))"
    before = set(subprocess.run([sys.executable, "-c", base], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60).stdout.split())
    if "packaging.specifiers" in mods:
        before |= set(subprocess.run([sys.executable, "-c", "import packaging.specifiers\n" + base], cwd=tmp_path,
                                     env=env, capture_output=True, text=True, timeout=60).stdout.split())
    assert not [m for m in HEAVY if m in mods - before]


@pytest.mark.parametrize("cmd", ["python3", "ls", "sh", "nonexistent-tool-x", "/usr/bin/env", "/usr/bin", "bin/ls"])
@pytest.mark.parametrize("path", [os.environ.get("PATH", ""), "", "/nonexistent:/usr/bin", "/usr/bin::/bin",
                                  "/usr/bin:/usr/bin"])
def test_which_is_shutils(cmd, path):
    assert _which(cmd, path) == shutil.which(cmd, path=path)


def test_dpkg_status_fast_scan_reads_what_the_paragraph_parse_read():
    import re

    from gpuvet.probes.dpkg import AMD_DPKG

    def by_paragraph(text):
        out = {}
        for para in text.split("\n\n"):
            pkg = re.search(r"^Package:[ \t]*(\S+)", para, re.M)
            ver = re.search(r"^Version:[ \t]*(\S+)", para, re.M)
            st = re.search(r"^Status:[ \t]*(.+)$", para, re.M)
            if pkg and ver and AMD_DPKG.match(pkg.group(1)) and not (st and "installed" not in st.group(1).split()[-1:]):
                out[pkg.group(1)] = ver.group(1)
        return out

    texts = ["", "Package: rocm-core\nStatus: install ok installed\nVersion: 6.0.2.60002-115~22.04\n",
             "Package: rocm-core\nStatus: deinstall ok config-files\nVersion: 6.0.2-1\n\nPackage: hipcc\nVersion: 5.2\n",
             "Package: libc6\nVersion: 2.36\n\nPackage: libamdhip64-5\nStatus: install ok installed\nVersion: 5.2.3-3\n"]
    if os.path.exists("/var/lib/dpkg/status"):
        texts.append(open("/var/lib/dpkg/status", encoding="utf-8", errors="replace").read())
    for t in texts:
        assert parse_dpkg_status(t) == by_paragraph(t)
