"""The layering of DESIGN.md, kept true by import-linter contracts in pyproject.toml."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter not installed")
    r = subprocess.run([exe, str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def _contracts() -> list[dict]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def _top_level_packages() -> set[str]:
    src = ROOT / "src" / "gpuvet"
    pkgs = {f"gpuvet.{p.name}" for p in src.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    mods = {f"gpuvet.{p.stem}" for p in src.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return pkgs | mods


def test_every_top_level_package_is_under_a_contract():
    """A new folder (store, history, validate ...) must declare its layer in pyproject.toml."""
    covered = {"gpuvet.cli"}  # the top layer may import every other (and is forbidden to all of them)
    for c in _contracts():
        covered.update(c.get("source_modules", ()))
        covered.update(c.get("modules", ()))
    missing = _top_level_packages() - covered
    assert not missing, f"not in any import-linter contract as a source: {sorted(missing)}"


def test_only_cli_may_import_app_and_nobody_imports_cli():
    """Every package but cli is forbidden to import app, and every package but cli is forbidden cli."""
    forbid: dict[str, set[str]] = {}
    for c in _contracts():
        if c["type"] == "forbidden":
            for s in c["source_modules"]:
                forbid.setdefault(s, set()).update(c["forbidden_modules"])
    for pkg in _top_level_packages() - {"gpuvet.cli"}:
        assert "gpuvet.cli" in forbid.get(pkg, set()), pkg
        if pkg != "gpuvet.app":
            assert "gpuvet.app" in forbid.get(pkg, set()), pkg


def test_check_startup_does_not_import_heavy_modules():
    """`gpuvet check` must not import frameworks, and keeps Rich/jsonschema/SQLAlchemy lazy."""
    code = ("import sys; from gpuvet.cli.main import cli; import gpuvet.cli.check_cmd, gpuvet.app.check, gpuvet.app.engine, gpuvet.checks.registry; "
            "import gpuvet.probes.registry; gpuvet.probes.registry.all_probes(); gpuvet.checks.registry.all_checks(); "
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch','jax','tensorflow','rich','jsonschema','sqlalchemy','matplotlib','numpy'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


# -- the machine only through System ------------------------------------------------------------------
_MACHINE = (r"^\s*(?:import|from)\s+(?:subprocess|socket|platform|pynvml|getpass)\b"
            r"|\bos\.(?:confstr|environ|uname|getuid|getgroups|popen|system|listdir|scandir|stat|access|readlink)\b"
            r"|\bos\.path\.(?:exists|isfile|isdir|getsize)\b|(?<![.\w])open\(|\bglob\.glob\(")


def _code_lines(text: str) -> list[str]:
    """The source with comments and string literals blanked (docstrings may name os.environ)."""
    import io
    import tokenize

    chars = [list(line) for line in text.splitlines(keepends=True)]
    for t in tokenize.generate_tokens(io.StringIO(text).readline):
        if t.type in (tokenize.COMMENT, tokenize.STRING):
            (r1, c1), (r2, c2) = t.start, t.end
            for r in range(r1, r2 + 1):
                row = chars[r - 1]
                for c in range(c1 if r == r1 else 0, c2 if r == r2 else len(row)):
                    if row[c] != "\n":
                        row[c] = " "
    return ["".join(row) for row in chars]


def _machine_reads(layer: str) -> list[str]:
    import re

    rx = re.compile(_MACHINE)
    src = ROOT / "src" / "gpuvet"
    out = []
    for p in sorted((src / layer).rglob("*.py")):
        for n, line in enumerate(_code_lines(p.read_text(encoding="utf-8")), 1):
            if rx.search(line):
                out.append(f"{p.relative_to(src)}:{n}: {line.strip()}")
    return out


def test_probes_reach_the_machine_only_through_system():
    """NVML, confstr, platform, subprocesses, files and the environment: probes/system.py alone, so a
    test fake (tests/fakes.py) supplies all of it."""
    hits = [h for h in _machine_reads("probes") if not h.startswith("probes/system.py:")]
    assert not hits, "\n".join(hits)


def test_checks_logs_and_history_read_no_machine():
    allowed = ("history/snapshot.py:48:",)  # the snapshot JSON Schema: package data, not the machine
    hits = [h for layer in ("checks", "logs", "history") for h in _machine_reads(layer) if not h.startswith(allowed)]
    assert not hits, "\n".join(hits)


def test_the_package_holds_no_test_doubles():
    """Fakes live under tests/ (tests/fakes.py), never in src/gpuvet."""
    import re

    src = ROOT / "src" / "gpuvet"
    hits = [str(p.relative_to(src)) for p in src.rglob("*.py")
            if re.search(r"^\s*class\s+Fake\w*", p.read_text(encoding="utf-8"), re.M)]
    assert not hits, hits
