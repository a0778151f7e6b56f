"""`gpuvet diff`: real checks on facts from real pasted reports and from constructed stacks, real
snapshots of real virtual environments; ordering, volatile facts, links to findings, formats and
exit status."""
from __future__ import annotations

import xml.etree.ElementTree as ET


from conftest import REAL, make_facts, run_cli
from wheels import build_wheel, make_venv

from gpuvet.history import snapshot as snap
from gpuvet.history.diff import compare, diff_findings
from gpuvet.model import row


def _doc(facts, findings, dists=(), label=None, **kw):
    """A sealed snapshot document around facts and the findings real checks made of them."""
    d = {"$schema": snap.SCHEMA_ID, "kind": snap.KIND, "schema_version": 1, "id": "0" * 8 + "-0000-4000-8000-" + "0" * 12,
         "created_at": "2026-12-01T10:00:00Z", "label": label, "gpuvet_version": "t", "host": {"hostname": "h"},
         "python": {"executable": "/p", "version": "3.11.7"}, "facts": facts.to_dict(),
         "probe_errors": [], "distributions": list(dists), "dependency_tree": {"edges": {}, "roots": []},
         "container": {"inside": False}, "os_packages": {"manager": "none", "packages": []},
         "gpu_trees": {"trees": []}, "findings": [f.to_dict() for f in findings], "score": 100}
    d.update(kw)
    return snap.seal(d)


def _checked(facts):
    from gpuvet import kb as kbmod
    from gpuvet.app.engine import run_checks
    from gpuvet.checks.registry import all_checks

    return run_checks(facts, all_checks(), kbmod.load(), None, {"live": True})


def _rocm_stack(torch_version, hip):
    return make_facts(
        row("framework_builds", "torch/version.py", name="torch", version=torch_version, hip=hip, cuda="",
            variant="rocm", channel="nightly" if ".dev" in torch_version else "stable", targets=["gfx90a"],
            targets_source="offload bundle", path="/venv/torch"),
        row("runtimes", "/opt/rocm/.info/version", vendor="amd", name="rocm", version="5.6.1", path="/opt/rocm",
            origin="system"),
        row("drivers", "/sys/module/amdgpu/version", vendor="amd", component="kernel-module", version="6.1.5"),
        row("gpu_devices", "rocminfo", vendor="amd", index=0, name="AMD Instinct MI210", arch="gfx90a",
            memory_mib=65520),
        row("kernel_caches", "MIOPEN_USER_DB_PATH", name="miopen-user-db", path="/home/u/.config/miopen",
            exists=True, writable=True, files=3),
        probed=("framework_builds", "runtimes", "drivers", "gpu_devices", "kernel_caches"))


def test_nightly_for_hip57_on_rocm561_links_the_change_to_rtm021():
    """The founding incident: a torch nightly built for HIP 5.7 replaced the stable ROCm 5.6 build."""
    fa = _rocm_stack("2.1.2+rocm5.6", "5.6.31061")
    fb = _rocm_stack("2.3.0.dev20240215+rocm5.7", "5.7.31921")
    fb.rows = [r if r.table != "kernel_caches" else row("kernel_caches", "x", name="miopen-user-db",
                                                         path="/home/u/.config/miopen", exists=True, writable=True,
                                                         files=250) for r in fb.rows]  # volatile: file count
    a, b = _doc(fa, _checked(fa)), _doc(fb, _checked(fb))
    assert not any(f["code"] == "RTM021" and f["outcome"] == "failed" for f in a["findings"])
    assert any(f["code"] == "RTM021" and f["outcome"] == "failed" for f in b["findings"])
    findings, changes = diff_findings(a, b, rollback_hint="gpuvet rollback --to good --into DIR")
    failed = [f for f in findings if f.failed]
    assert failed[0].code == "DIF003"
    assert failed[0].title.startswith("torch 2.1.2+rocm5.6 -> 2.3.0.dev20240215+rocm5.7: ")
    assert "RTM021 now fails" in failed[0].title
    assert failed[0].severity.name == "ERROR" and failed[0].fixes[0].command.startswith("gpuvet rollback")
    assert any("hip: 5.6.31061 -> 5.7.31921" in e.text for e in failed[0].evidence)
    assert not any("kernel_caches" in c.source or "cache" in c.subject for c in changes)  # volatile never a change
    back, _ = diff_findings(b, a)
    assert "RTM021 no longer fails" in [f for f in back if f.failed][0].title


def test_real_pasted_reports_most_dangerous_first_and_every_format(tmp_path):
    from gpuvet.probes.pasted import parse_report

    texts = [(REAL / "debian12-cpu-rocm52" / "collect_env-torch2.13-cpu.txt"), (REAL / "h200-cuda13" / "collect_env.txt")]
    docs = []
    for i, p in enumerate(texts):
        facts = parse_report(p.read_text(), p.name)
        docs.append(_doc(facts, _checked(facts), label=f"r{i}"))
    changes, _, _ = compare(docs[0], docs[1])
    cats = [c.category for c in changes]
    assert cats == sorted(cats, key=["driver", "runtime", "framework", "gpu-targets", "math-libraries", "os-packages",
                                     "companions", "packages", "configuration"].index)
    assert any(c.subject == "torch" and c.before.startswith("2.13.0") and c.after.startswith("2.11.0") for c in changes)
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(snap.dumps(docs[0]))
    pb.write_text(snap.dumps(docs[1]))
    env = {"NO_COLOR": "1", "XDG_DATA_HOME": str(tmp_path)}
    r = run_cli(["diff", str(pa), str(pb)], environ=env)
    assert r.code == 1 and "torch" in r.out and "DIF003" in r.out
    j = run_cli(["diff", str(pa), str(pb), "--format", "json"], environ=env).json()
    assert j["command"] == "diff" and j["diff"]["changes"] and j["findings"][0]["outcome"] == "failed"
    junit = run_cli(["diff", str(pa), str(pb), "--format", "junit"], environ=env)
    root = ET.fromstring(junit.out)
    assert root.iter("testcase") and any(tc.find("failure") is not None for tc in root.iter("testcase"))
    md = run_cli(["diff", str(pa), str(pb), "--format", "markdown"], environ=env)
    assert "DIF003" in md.out
    assert run_cli(["diff", str(pa), str(pb), "--fail-on", "never"], environ=env).code == 0
    assert run_cli(["diff", str(pa), str(pb), "--ignore", "DIF"], environ=env).code == 0


def test_real_venvs_package_changes_and_no_change_for_the_same_env(tmp_path):
    wh = tmp_path / "wh"
    wh.mkdir()
    for v in ("1.0", "2.0"):
        build_wheel(wh, "gvdemo-b", v)
    build_wheel(wh, "torchvision-gvdemo", "0.1")  # not a companion name: an ordinary package
    py = make_venv(tmp_path / "env", wh, "gvdemo-b==1.0")
    env = {"NO_COLOR": "1", "XDG_DATA_HOME": str(tmp_path / "xdg"), "PATH": "/usr/bin:/bin"}
    assert run_cli(["snapshot", "--python", str(py), "--label", "before", "--mark-good"], environ=env).code == 0
    r = run_cli(["diff", "good", "now", "--python", str(py), "--fail-on", "info"], environ=env)
    assert r.code == 0 and "0 change(s)" in r.out, r.out  # nothing volatile shows as a change
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-index", "--find-links",
                    str(wh), "gvdemo-b==2.0", "torchvision-gvdemo==0.1"], check=True)
    r = run_cli(["diff", "before", "now", "--python", str(py), "--format", "json", "--fail-on", "info"], environ=env)
    assert r.code == 1
    ch = {c["subject"]: c for c in r.json()["diff"]["changes"]}
    assert ch["gvdemo-b"]["before"] == "1.0" and ch["gvdemo-b"]["after"] == "2.0" and ch["gvdemo-b"]["category"] == "packages"
    assert ch["torchvision-gvdemo"]["kind"] == "added"
    assert run_cli(["diff", "before", "now", "--python", str(py)], environ=env).code == 0  # info < default error
    r = run_cli(["diff", "nosuch", "now"], environ=env)
    assert r.code == 3 and "no snapshot 'nosuch'" in r.err
