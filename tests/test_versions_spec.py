"""spec_contains decides the plain clauses itself (no packaging.specifiers import on `gpuvet check`'s path):
it gives packaging.specifiers' answers, for every specifier the knowledge base holds and for a grid of
clauses and versions (pre-, post-, dev- and local versions around each bound)."""
import itertools
import re
from pathlib import Path

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from gpuvet.model import versions as V

KB_DATA = Path(V.__file__).resolve().parent.parent / "kb" / "data"
BOUNDS = ["2", "2.2", "2.2.0", "2.2.1", "2.2rc1", "2.2.0.post1", "2.2.0.dev0", "2.12.0.dev0", "2.12.0rc0", "2.2.0+cu121",
          "1.3", "1!2.0"]
CANDIDATES = ["2.2.0", "2.2", "2.2.0+cu121", "2.2.0+rocm6.0", "2.2.0rc1", "2.2.0a0+git1c6f2c1", "2.2.0.dev20240101",
              "2.2.0.post1", "2.2.0.post1+cu118", "2.2.1", "2.1.9", "2.3.0", "2.12.0.dev20251101", "2.12.0rc1",
              "2.12.0", "2.13.0+cpu", "1.3.5", "1.4.0", "2.6.0a0+ecf3bae40a.nv25.01", "3.0", "1!1.0", "0.9"]


def reference(spec: str, version: str):
    try:
        s = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    return s.contains(Version(version), prereleases=True)


def kb_specs() -> list[str]:
    """Every string value in the KB's data that reads as a specifier (starts with an operator)."""
    import yaml

    found: set[str] = set()

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str) and re.match(r"\s*(==|!=|<|>|~=)", x):
            found.add(x)

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in KB_DATA.glob("*.yaml"):
        walk(yaml.load(path.read_text(), Loader=loader))
    return sorted(found)


def test_kb_has_specifiers_to_check():
    assert len(kb_specs()) >= 10


@pytest.mark.parametrize("spec", kb_specs())
def test_every_kb_specifier_as_packaging_decides_it(spec):
    for cand in CANDIDATES:
        assert V.spec_contains(spec, cand) == reference(spec, cand), (spec, cand)


GRID = [f"{op}{b}" for op, b in itertools.product(["==", "!=", "<", "<=", ">", ">="], BOUNDS)]
GRID += [">=2.2,<2.3", ">=2.12.0.dev0,<2.12.0rc0", " >= 2.2 , < 2.3 ", "<2.2,!=2.1.9", "~=2.2", "==2.2.*", "===2.2.0",
         "", ">=", "<=2.2.0+cu121", ">=2.2,", "garbage"]


@pytest.mark.parametrize("spec", GRID)
def test_grid_as_packaging_decides_it(spec):
    for cand in CANDIDATES:
        assert V.spec_contains(spec, cand) == reference(spec, cand), (spec, cand)


def test_plain_clauses_never_import_packaging_specifiers():
    import subprocess
    import sys

    code = ("import sys; from gpuvet.model.versions import spec_contains as c\n"
            "r = [c('>=2.2,<2.3', '2.2.1+cu121'), c('==2.13.0', '2.13.0+cpu'), c('<2.2', '2.2.0rc1')]\n"
            "print(r, 'packaging.specifiers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[True, True, False] False", out.stderr
