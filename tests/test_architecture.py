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
