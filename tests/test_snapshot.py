"""`gpuvet snapshot`, `history`, `mark-good`: real snapshots of this machine and of real virtual
environments built from real wheels; the document against its published schema; damaged, newer
and hand-edited files refused with one line (exit 3)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from wheels import build_wheel, make_venv

from gpuvet.history import snapshot as snap


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory):
    d = tmp_path_factory.mktemp("wheels")
    build_wheel(d, "gvdemo-b", "1.0")
    build_wheel(d, "gvdemo-b", "2.0")
    build_wheel(d, "gvdemo-a", "1.0", requires=("gvdemo-b>=1,<2", "gvdemo-c; extra == 'full'"))
    build_wheel(d, "gvdemo-a", "1.1", requires=("gvdemo-b>=2",))
    return d


@pytest.fixture(scope="module")
def venv_v1(tmp_path_factory, wheelhouse):
    # gvdemo-a from a wheel file (a PEP 610 direct URL), gvdemo-b resolved from the wheel directory (as from an index)
    return make_venv(tmp_path_factory.mktemp("v1") / "env", wheelhouse,
                     str(wheelhouse / "gvdemo_a-1.0-py3-none-any.whl"), "gvdemo-b==1.0")


def _env(tmp_path, **kw):
    return {"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(tmp_path / "xdg"), **kw}


def test_snapshot_of_this_environment_is_complete_and_valid(tmp_path):
    out = tmp_path / "s.json"
    r = run_cli(["snapshot", "--label", "base", "-o", str(out)], environ=_env(tmp_path))
    assert r.code == 0, r.err
    assert "stored as 1" in r.out and "'base'" in r.out
    doc = snap.load_text(out.read_text(), "s.json")  # schema + digest
    import jsonschema

    jsonschema.validate(doc, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    assert json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()) == snap.schema()  # published == used
    dists = {d["name"]: d for d in doc["distributions"]}
    torch = dists["torch"]
    from importlib.metadata import version as _v  # what this interpreter really has (2.13.0+cpu in CI)

    want = _v("torch")
    assert torch["version"].startswith(want.split("+")[0]) and (torch["local_version"] or None) == (want.split("+", 1)[1] if "+" in want else None)
    from importlib.metadata import distribution  # pip here and in CI; uv in the H200 image
    assert torch["installer"] == (distribution("torch").read_text("INSTALLER") or "").strip() and torch["wheel_tags"] and torch["wheel_tags"][0].startswith("cp3")
    assert torch["origin"] in ("index", "local-wheel")
    try:  # pip install -e . here and in CI; the H200 run puts src/ on PYTHONPATH instead (no distribution)
        distribution("gpuvet")
        assert dists["gpuvet"]["origin"] == "editable" and dists["gpuvet"]["direct_url"]["kind"] == "dir"
    except ImportError:
        assert "gpuvet" not in dists
    assert any(e["name"] == "filelock" and e["satisfied"] for e in doc["dependency_tree"]["edges"]["torch"])
    assert "torch" in [r["name"] for r in doc["facts"]["framework_builds"]]
    assert doc["findings"] and isinstance(doc["score"], int)
    assert doc["os_packages"]["manager"] in ("dpkg", "rpm", "none")
    assert doc["python"]["executable"] == sys.executable or doc["python"]["executable"]
    assert "machine_id" not in doc["host"] or len(doc["host"]["machine_id"]) == 64


def test_snapshot_of_another_venv_records_origins_and_tree(tmp_path, venv_v1, wheelhouse):
    out = tmp_path / "v1.json"
    r = run_cli(["snapshot", "--python", str(venv_v1), "--no-store", "-o", str(out)], environ=_env(tmp_path))
    assert r.code == 0, r.err
    doc = snap.load_text(out.read_text())
    dists = {d["name"]: d for d in doc["distributions"]}
    assert set(dists) >= {"gvdemo-a", "gvdemo-b"} and "torch" not in dists
    a = dists["gvdemo-a"]
    assert a["version"] == "1.0" and a["installer"] == "pip" and a["wheel_tags"] == ["py3-none-any"]
    assert a["origin"] == "local-wheel" and a["direct_url"]["url"].endswith("gvdemo_a-1.0-py3-none-any.whl")
    assert dists["gvdemo-b"]["origin"] == "index" and dists["gvdemo-b"]["direct_url"] is None
    assert a["requires"] == [{"name": "gvdemo-b", "specifier": "<2,>=1", "marker": "", "extras": []}]  # extra dropped
    assert doc["dependency_tree"]["edges"]["gvdemo-a"] == [
        {"name": "gvdemo-b", "specifier": "<2,>=1", "installed": "1.0", "satisfied": True}]
    assert doc["dependency_tree"]["roots"] == ["gvdemo-a"]
    assert not (tmp_path / "xdg").exists()  # --no-store wrote no database


def test_history_and_mark_good(tmp_path):
    env = _env(tmp_path)
    assert run_cli(["snapshot", "--label", "one"], environ=env).code == 0
    assert run_cli(["snapshot", "--label", "two", "--mark-good"], environ=env).code == 0
    r = run_cli(["history"], environ=env)
    lines = r.out.splitlines()
    assert r.code == 0 and lines[1].split()[:2] == ["*", "2"] and "two" in lines[1] and f"torch {__import__('importlib.metadata').metadata.version('torch')}" in lines[1]
    assert run_cli(["mark-good", "one"], environ=env).code == 0
    h = run_cli(["history", "--format", "json"], environ=env).json()
    assert [s["label"] for s in h["snapshots"]] == ["two", "one"] and all(s["good"] for s in h["snapshots"])
    assert run_cli(["history"], environ=env).out.splitlines()[2].startswith("*")  # the latest mark wins
    r = run_cli(["mark-good", "nope"], environ=env)
    assert r.code == 3 and r.err.count("\n") == 1 and "no snapshot 'nope'" in r.err
    r = run_cli(["snapshot", "--label", "good"], environ=env)
    assert r.code == 2 and "--label" in r.err


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_damaged_newer_and_edited_snapshots_are_one_line_errors(tmp_path):
    good = tmp_path / "ok.json"
    assert run_cli(["snapshot", "--no-store", "-o", str(good)], environ=_env(tmp_path)).code == 0
    text = good.read_text()
    doc = json.loads(text)
    edited = json.loads(text)
    edited["distributions"][0]["version"] = "99.0"
    newer = dict(doc, schema_version=2)
    cases = {
        "truncated": (text[: len(text) // 2], "is truncated"),
        "notjson": ("{'kind': 1,\n oops", "is not valid JSON"),
        "empty": ("", "is empty"),
        "text": ("vm\n", "is not valid JSON"),
        "edited": (json.dumps(edited), "was changed after gpuvet wrote it"),
        "newer": (json.dumps(newer), "written by a newer gpuvet (snapshot schema 2"),
        "report": (json.dumps({"schema_version": 1, "command": "check", "findings": []}), "is not a gpuvet snapshot"),
        "badshape": (json.dumps(snap.seal(dict(doc, distributions="x"))), "does not follow the snapshot schema at distributions"),
    }
    for name, (content, expect) in cases.items():
        path = _write(tmp_path, f"{name}.json", content)
        r = run_cli(["diff", path, str(good)], environ=_env(tmp_path))
        assert r.code == 3, (name, r.err)
        assert expect in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err, (name, r.err)
    r = run_cli(["diff", str(good), str(good)], environ=_env(tmp_path))
    assert r.code == 0 and "0 change(s)" in r.out


def test_secrets_in_the_environment_never_reach_snapshots_or_the_store(tmp_path):
    token = "hf_" + "Zq3" * 12
    env = _env(tmp_path, HF_TOKEN=token, PIP_INDEX_URL="https://alice:pa55w0rdXYZ@mirror.example/simple",
               CUDA_VISIBLE_DEVICES="0")
    out = tmp_path / "s.json"
    assert run_cli(["snapshot", "-o", str(out)], environ=env).code == 0
    blobs = [out.read_bytes()] + [p.read_bytes() for p in (tmp_path / "xdg").rglob("*") if p.is_file()]
    for blob in blobs:
        assert token.encode() not in blob and b"pa55w0rdXYZ" not in blob
    doc = json.loads(out.read_text())
    assert {r["name"]: r["value"] for r in doc["facts"]["env_vars"]}.get("CUDA_VISIBLE_DEVICES") == "0"


def test_real_machine_os_packages_trees_and_container(tmp_path):
    r = run_cli(["snapshot", "--no-store", "--format", "json", "--container", "no-such-container"], environ=_env(tmp_path))
    assert r.code == 0, r.err
    doc = r.json()
    status = Path("/var/lib/dpkg/status")
    if status.exists() and "\nPackage: rocminfo\n" in status.read_text(errors="replace"):
        assert doc["os_packages"]["manager"] == "dpkg"
        assert "rocminfo" in [p["name"] for p in doc["os_packages"]["packages"]]
        assert all(p["version"] for p in doc["os_packages"]["packages"])
    if Path("/usr/local/cuda").is_symlink():
        active = [t for t in doc["gpu_trees"]["trees"] if t["vendor"] == "nvidia" and t["active"]]
        assert active and "/usr/local/cuda" in active[0]["via"] and active[0]["version"]
    hv = doc["container"]["host_view"]  # docker missing, no daemon, or no such container: recorded, not raised
    assert hv["name"] == "no-such-container" and "error" in hv


def test_rocm_trees_and_the_active_one():
    from gpuvet.probes.stack_trees import gpu_trees
    from fakes import FakeSystem

    class Linked(FakeSystem):
        def realpath(self, path):
            links = {"/opt/rocm": "/opt/rocm-5.7.0", "/etc/alternatives/rocm": "/opt/rocm-5.7.0"}
            return links.get(path, path)

    s = Linked(files={"/opt/rocm-5.6.1/.info/version": "5.6.1-93\n", "/opt/rocm-5.7.0/.info/version": "5.7.0-63\n",
                      "/opt/rocm/.info/version": "5.7.0-63\n", "/etc/alternatives/rocm/.info/version": "5.7.0-63\n"},
               env={"ROCM_PATH": "/opt/rocm-5.6.1"})
    trees = {t["path"]: t for t in gpu_trees(s)["trees"]}
    assert trees["/opt/rocm-5.6.1"]["version"] == "5.6.1" and trees["/opt/rocm-5.6.1"]["via"] == ["ROCM_PATH"]
    assert trees["/opt/rocm-5.7.0"]["active"] and trees["/opt/rocm-5.7.0"]["via"] == ["/etc/alternatives/rocm", "/opt/rocm"]
