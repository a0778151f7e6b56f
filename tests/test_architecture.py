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


def test_check_startup_does_not_import_heavy_modules():
    """`gpuvet check` must not import frameworks, and keeps Rich/jsonschema/SQLAlchemy lazy."""
    code = ("import sys; from gpuvet.cli.main import cli; import gpuvet.cli.check_cmd, gpuvet.engine, gpuvet.checks.registry; "
            "import gpuvet.probes.registry; gpuvet.probes.registry.all_probes(); gpuvet.checks.registry.all_checks(); "
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch','jax','tensorflow','rich','jsonschema','sqlalchemy','matplotlib','numpy'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
