"""`gpuvet report`: Markdown and HTML of this machine's real stack (the HTML looked at through a real
headless Chromium screenshot), and `--bundle`: the archive's members and the issue-form texts."""
from __future__ import annotations

import html.parser
import os
import shutil
import struct
import subprocess
import tarfile

import pytest

from conftest import run_cli
from wheels import build_wheel, make_venv

from importlib.metadata import version as _dist_version

TORCH = _dist_version("torch")  # 2.13.0+cpu in CI; whatever this interpreter has elsewhere (the H200)


@pytest.fixture(scope="module")
def since_file(tmp_path_factory):
    """A real snapshot of another environment (a venv with one small wheel): many changes to now."""
    d = tmp_path_factory.mktemp("since")
    build_wheel(d, "gvdemo-b", "1.0")
    py = make_venv(d / "env", d, "gvdemo-b==1.0")
    out = d / "old.json"
    r = run_cli(["snapshot", "--python", str(py), "--no-store", "-o", str(out)], environ={"NO_COLOR": "1"})
    assert r.code == 0, r.err
    return out


def _env(tmp_path):
    return {"NO_COLOR": "1", "XDG_DATA_HOME": str(tmp_path / "xdg"), "PATH": os.environ.get("PATH", "")}


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_markdown_and_html_report(tmp_path, since_file):
    env = _env(tmp_path)
    r = run_cli(["report", "--since", str(since_file)], environ=env)
    assert r.code == 0, r.err
    md = r.out
    assert md.startswith("# gpuvet version report: ")
    for section in ("## Stack", "## Findings", "## Changes since the good snapshot", "## Framework packages"):
        assert section in md
    assert "| gvdemo-b | 1.0 | (absent) | packages |" in md
    assert f"| torch | {TORCH} |" in md
    r = run_cli(["report"], environ=env)  # no good snapshot yet: says so, no error
    assert r.code == 0 and "No snapshot is marked good yet" in r.out
    out = tmp_path / "r.html"
    assert run_cli(["report", "--since", str(since_file), "-o", str(out)], environ=env).code == 0
    page = out.read_text()
    p = _Tags()
    p.feed(page)
    assert p.tags.count("table") == 3 and "style" in p.tags and "script" not in p.tags  # self-contained, no JS
    assert "<code>gvdemo-b</code>" not in page and "gvdemo-b" in page
    assert run_cli(["report", "--since", "nope"], environ=env).code == 3


def _png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_html_report_renders_in_a_headless_browser(tmp_path, since_file):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not browser:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs it)")
        pytest.skip("no headless Chromium on this machine")
    out = tmp_path / "r.html"
    assert run_cli(["report", "--since", str(since_file), "-o", str(out)], environ=_env(tmp_path)).code == 0
    png = tmp_path / "r.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1200,1600", f"--screenshot={png}", out.as_uri()],
                   capture_output=True, timeout=120, check=False, env={**os.environ, "HOME": str(tmp_path)})
    assert png.exists(), "chromium wrote no screenshot"
    assert _png_size(png) == (1200, 1600)
    assert png.stat().st_size > 30_000  # a page with text and tables, not a blank one (a blank PNG is ~5 KB)


def test_bundle_has_raw_probe_outputs_snapshot_findings_and_issue_texts(tmp_path, since_file):
    bundle = tmp_path / "b.tar.gz"
    r = run_cli(["report", "--since", str(since_file), "--bundle", str(bundle)], environ=_env(tmp_path))
    assert r.code == 0 and "wrote" in r.out
    assert oct(bundle.stat().st_mode & 0o777) == "0o600"
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        text = {n: tar.extractfile(n).read().decode() for n in names if tar.getmember(n).isfile()}
    base = "gpuvet-bundle/"
    for m in ("README.txt", "snapshot.json", "findings.json", "report.md", "report.html", "issue-pytorch.md",
              "issue-rocm.md"):
        assert base + m in names
    assert any(n.startswith(base + "probes/commands/") for n in names)
    assert any(n.startswith(base + "probes/files/") for n in names)
    assert text[base + "probes/files/etc__os-release"].startswith(open("/etc/os-release").read()[:20])
    py = text[base + "issue-pytorch.md"]
    assert "### 🐛 Describe the bug" in py and "### Versions" in py and f"torch=={TORCH}" in py
    rocm = text[base + "issue-rocm.md"]
    for field in ("### Problem Description", "### Operating System", "### CPU", "### GPU", "### ROCm Version",
                  "### ROCm Component", "### Steps to Reproduce", "rocminfo --support", "### Additional Information"):
        assert field in rocm
    if shutil.which("rocminfo"):
        assert any("rocminfo" in n for n in names)
