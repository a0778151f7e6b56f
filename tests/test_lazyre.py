"""model/lazyre.py: module-level patterns compiled on first use behave as the compiled pattern."""
import re
import subprocess
import sys

import pytest

from gpuvet.model.lazyre import LazyPattern, lazy


def test_a_lazy_pattern_answers_as_the_compiled_one_and_compiles_once():
    src, flags = r"(?P<lib>lib\w+)\.so\.(\d+)", re.I
    lz, rx = lazy(src, flags), re.compile(src, flags)
    assert isinstance(lz, LazyPattern) and "search" not in vars(lz) and lz.pattern == src  # nothing compiled yet
    text = "dlopen LIBamdhip64.so.6 and libMIOpen.so.1 failed"
    assert lz.search(text).group("lib") == rx.search(text).group("lib") == "LIBamdhip64"
    bound = vars(lz)["search"]
    assert [m.span() for m in lz.finditer(text)] == [m.span() for m in rx.finditer(text)]
    assert lz.sub("<lib>", text) == rx.sub("<lib>", text) and lz.findall(text) == rx.findall(text)
    assert lz.match(text) is None and lz.flags == rx.flags and lz.groupindex == rx.groupindex
    assert vars(lz)["search"] is bound  # bound once, on the first call
    with pytest.raises(AttributeError):
        lz.no_such_method  # noqa: B018
    with pytest.raises(re.error):
        lazy("(unbalanced").search("x")  # a bad pattern fails where it is first used, as re.compile would


def test_importing_the_diagnose_pipeline_compiles_no_lazy_pattern():
    code = ("import gpuvet.app.diagnose, gpuvet.probes.pasted, gpuvet.logs.rank, gpuvet.model.redact\n"
            "from gpuvet.model.lazyre import LazyPattern\n"
            "import sys\n"
            "lz = [v for m in list(sys.modules.values()) if (m.__name__ or '').startswith('gpuvet')\n"
            "      for v in vars(m).values() if isinstance(v, LazyPattern)]\n"
            "print(len(lz), sum('search' in vars(v) for v in lz))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) >= 20 and out[1] == "0", out
