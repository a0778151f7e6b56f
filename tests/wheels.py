"""Build small, real, pure-Python wheels (PEP 427 zip files pip installs) and virtual environments
from them, for the snapshot / diff / rollback tests.  Not a test module."""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path


def build_wheel(outdir: Path, name: str, version: str, requires: tuple[str, ...] = (), body: str = "") -> Path:
    dist = name.replace("-", "_")
    fname = outdir / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}/__init__.py": (body or f"__version__ = {version!r}\n").encode(),
        f"{info}/METADATA": ("Metadata-Version: 2.1\n" f"Name: {name}\n" f"Version: {version}\n"
                             + "".join(f"Requires-Dist: {r}\n" for r in requires) + "\n").encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: gpuvet-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n",
    }
    record = []
    with zipfile.ZipFile(fname, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return fname


def make_venv(path: Path, wheels_dir: Path, *pins: str, extra: tuple[str, ...] = ()) -> Path:
    """A venv without pip of its own (fast); pip from the test's interpreter installs into it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=60)
    py = path / "bin" / "python"
    if pins:
        subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-index",
                        "--find-links", str(wheels_dir), *extra, *pins], check=True, timeout=300,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return py
