"""`gpuvet rollback`: plans (order, index URLs per variant, pins, display-only system steps, sh) and
`--into DIR` on real virtual environments from real wheels: a success, a failure half-way that
leaves the running environment untouched and the half-built one marked, and (slow) torch 2.13.0's
CPU build with the matmul + conv2d smoke test."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from conftest import run_cli
from wheels import build_wheel, make_venv

from gpuvet.history.rollback import index_for, plan, render_sh


def _dist(name, version, origin="index", **kw):
    return {"name": name, "display_name": name, "version": version, "local_version": version.partition("+")[2],
            "location": "/venv/lib/python3.10/site-packages", "installer": "pip", "origin": origin,
            "direct_url": None, "wheel_tags": [], "requires": [], **kw}


def _doc(dists, driver, tree, rocm_core):
    return {"id": "x", "label": None, "created_at": "2026-12-01T10:00:00Z", "distributions": dists,
            "facts": {"drivers": [{"vendor": "amd", "component": "kernel-module", "version": driver}]},
            "gpu_trees": {"trees": [{"vendor": "amd", "path": tree, "version": tree.rsplit("-", 1)[1], "active": True,
                                     "via": ["/etc/alternatives/rocm", "/opt/rocm"]},
                                    {"vendor": "amd", "path": "/opt/rocm-5.7.0", "version": "5.7.0",
                                     "active": tree == "/opt/rocm-5.7.0", "via": []}]},
            "os_packages": {"manager": "dpkg", "packages": [{"name": "rocm-core", "version": rocm_core}]}}


def test_plan_back_from_a_hip57_nightly_to_the_rocm56_stack():
    good = _doc([_dist("torch", "2.1.2+rocm5.6"), _dist("torchvision", "0.16.2+rocm5.6"),
                 _dist("torchaudio", "2.1.2+rocm5.6"), _dist("pytorch-triton-rocm", "2.1.0"),
                 _dist("numpy", "1.26.3")], "6.1.5", "/opt/rocm-5.6.1", "5.6.1.50601-93~22.04")
    now = _doc([_dist("torch", "2.3.0.dev20240215+rocm5.7"), _dist("torchvision", "0.18.0.dev20240215+rocm5.7"),
                _dist("torchaudio", "2.2.0.dev20240215+rocm5.7"), _dist("pytorch-triton-rocm", "3.0.0+0a22a91d04"),
                _dist("numpy", "1.26.3"), _dist("einops", "0.7.0")], "6.3.6", "/opt/rocm-5.7.0", "5.7.0.50700-63~22.04")
    p = plan(now, good, python="/venv/bin/python")
    kinds = [s.kind for s in p.steps]
    assert kinds == ["driver", "tree", "os-packages", "python", "python-remove", "check", "verify"]
    drv, tree, osp, fw = p.steps[:4]
    assert drv.applicability == "display-only" and drv.needs_reboot and drv.needs_root and "6.1.5" in drv.title
    assert tree.command == "sudo update-alternatives --set rocm /opt/rocm-5.6.1" and tree.needs_root
    assert osp.command == "sudo apt-get install --allow-downgrades rocm-core=5.6.1.50601-93~22.04"
    assert fw.index_url == "https://download.pytorch.org/whl/rocm5.6"
    assert fw.packages == ["pytorch-triton-rocm==2.1.0", "torch==2.1.2+rocm5.6", "torchaudio==2.1.2+rocm5.6",
                           "torchvision==0.16.2+rocm5.6"]  # companions pinned, triton from torch's index
    assert "--no-deps" in fw.argv and "numpy" not in " ".join(fw.packages)  # numpy unchanged: not reinstalled
    assert p.steps[4].packages == ["einops"] and p.steps[4].applicability == "unsafe"
    assert p.cost["needs_reboot"] and p.cost["needs_root"] and p.cost["python_packages"] == 4
    assert any("reboot" in r for r in p.risks)
    back = plan(good, now)
    assert any("Nightly wheels are deleted" in r for r in back.risks)
    assert back.steps[3].index_url == "https://download.pytorch.org/whl/nightly/rocm5.7"
    script = render_sh(p)
    assert "\n# sudo update-alternatives --set rocm /opt/rocm-5.6.1\n" in script  # display-only: commented out
    assert "\n/venv/bin/python -m pip install --no-deps pytorch-triton-rocm==2.1.0" in script
    subprocess.run(["sh", "-n"], input=script, text=True, check=True)  # valid shell
    assert index_for("2.4.1+cu121") == "https://download.pytorch.org/whl/cu121"
    from gpuvet import kb as kbmod

    assert index_for("2.1.2+rocm5.6", kbmod.load()) == "https://download.pytorch.org/whl/rocm5.6"  # the KB's URL
    assert index_for("2.4.1+cu121", index_map={"cu121": "https://mirror/cu121"}) == "https://mirror/cu121"


@pytest.fixture()
def wh(tmp_path):
    d = tmp_path / "wh"
    d.mkdir()
    for v in ("1.0", "2.0"):
        build_wheel(d, "gvdemo-b", v)
    build_wheel(d, "gvdemo-a", "1.0", requires=("gvdemo-b>=1,<2",))
    return d


def _env(tmp_path):
    return {"NO_COLOR": "1", "XDG_DATA_HOME": str(tmp_path / "xdg"), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path)}


def _state(py):
    """What a rollback must never touch: the distributions of the running environment, with mtimes."""
    site = glob.glob(str(py.parent.parent / "lib" / "python*" / "site-packages"))[0]
    return sorted((n, os.stat(os.path.join(site, n)).st_mtime_ns) for n in os.listdir(site))


def test_into_builds_verifies_and_a_failure_half_way_touches_nothing(tmp_path, wh):
    py = make_venv(tmp_path / "running", wh, "gvdemo-a==1.0", "gvdemo-b==1.0")
    env = _env(tmp_path)
    assert run_cli(["snapshot", "--python", str(py), "--label", "v1", "--mark-good"], environ=env).code == 0
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-index", "--find-links",
                    str(wh), "--no-deps", "gvdemo-b==2.0"], check=True)
    before = _state(py)
    into = tmp_path / "back"
    r = run_cli(["rollback", "--to", "good", "--python", str(py), "--into", str(into), "--find-links", str(wh),
                 "--index-map", "default=" + (tmp_path / "noindex").as_uri(), "--format", "json"], environ=env)
    assert r.code == 0, r.out[-3000:]
    rep = r.json()
    assert rep["into"]["state"] == "verified"
    cost = rep["plan"]["cost"]  # sizes read from the wheel directory: both wheels known
    assert 0 < cost["download_bytes_known"] < 10_000 and "download_size_unknown" not in cost
    assert {f["code"]: f["outcome"] for f in rep["findings"]} == {
        "RBK001": "passed", "RBK002": "passed", "RBK003": "passed", "RBK004": "passed", "RBK005": "passed",
        "RBK006": "skipped"}
    marker = json.loads((into / ".gpuvet-rollback.json").read_text())
    assert marker["state"] == "verified" and [s["returncode"] for s in marker["steps"]] == [0, 0, 0]
    assert glob.glob(str(into / "lib" / "python*" / "site-packages" / "gvdemo_b-1.0.dist-info"))
    assert _state(py) == before  # the running environment was not touched
    # a failure half-way: the wheel of gvdemo-a 1.0 is gone from every index
    (wh / "gvdemo_a-1.0-py3-none-any.whl").unlink()
    bad = tmp_path / "bad"
    r = run_cli(["rollback", "--to", "v1", "--python", str(py), "--into", str(bad), "--find-links", str(wh),
                 "--index-map", "default=" + (tmp_path / "noindex").as_uri()], environ=env)
    assert r.code == 1
    assert "RBK002" in r.out and "failed" in r.out
    marker = json.loads((bad / ".gpuvet-rollback.json").read_text())
    assert marker["state"] == "failed" and marker["failed_step"].startswith("install 2 other")
    assert [s["returncode"] for s in marker["steps"]][0] == 0 and marker["steps"][-1]["returncode"] != 0
    assert "INCOMPLETE" in (bad / "ROLLBACK-FAILED.txt").read_text()
    assert _state(py) == before
    r = run_cli(["rollback", "--to", "v1", "--into", str(bad)], environ=env)
    assert r.code == 2 and "not empty" in r.err


def _torch_wheel_dir():
    for d in os.environ.get("PIP_FIND_LINKS", "/opt/wheels").split() + ["/opt/wheels"]:
        if glob.glob(os.path.join(d, "torch-2.13.0+cpu-*.whl")):
            return d
    return None


@pytest.mark.slow
def test_into_rebuilds_torch_cpu_and_runs_the_smoke_test(tmp_path):
    links = _torch_wheel_dir()
    local_index = "/opt/pypi/simple"
    if not links or not os.path.isdir(local_index):
        pytest.skip("torch 2.13.0+cpu wheel or the local package index not on this machine's disk")
    offline = ["--index-url", "file://" + local_index, "--find-links", links]
    # the environment to return to: torch 2.13.0's CPU build and its requirements, from this machine's disk
    src = tmp_path / "src"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(src)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(src / "bin" / "python"), "install", "-q", "--no-compile",
                    *offline, "torch==2.13.0"], check=True, timeout=600)
    env = _env(tmp_path)
    assert run_cli(["snapshot", "--python", str(src / "bin" / "python"), "--label", "torch-cpu"], environ=env).code == 0
    into = tmp_path / "torchenv"
    maps = ["--index-map", f"cpu=file://{local_index}", "--index-map", f"default=file://{local_index}"]
    r = run_cli(["rollback", "--to", "torch-cpu", "--into", str(into), "--find-links", links, *maps, "--validate",
                 "--format", "json"], environ=env)
    rep = r.json()
    assert r.code == 0, json.dumps(rep.get("findings"), indent=1)[-3000:]
    marker = json.loads((into / ".gpuvet-rollback.json").read_text())
    assert marker["state"] == "verified"
    smoke = marker["smoke"]
    assert smoke["ok"] and smoke["device"] == "cpu" and smoke["torch"].startswith("2.13.0")
    assert smoke["matmul_max_rel_err"] < 1e-4 and smoke["conv2d_max_rel_err"] < 1e-4
    fw = [s for s in rep["plan"]["steps"] if "framework" in s["title"]][0]
    assert "torch==2.13.0+cpu" in fw["packages"] and fw["index_url"] == f"file://{local_index}"
    outcomes = {f["code"]: f["outcome"] for f in rep["findings"]}
    assert outcomes["RBK006"] == "passed" and outcomes["RBK007"] == "passed"  # smoke test, gpuvet validate quick
