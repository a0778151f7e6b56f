"""`gpuvet rules`, `gpuvet rule`, `gpuvet kb info`, `gpuvet recommend` in-process."""
from __future__ import annotations


from conftest import REAL, run_cli
from gpuvet import kb as KB
from gpuvet.checks.registry import all_checks
from gpuvet.probes.pasted import parse_report


def test_rules_lists_every_check():
    r = run_cli(["rules"])
    assert r.code == 0
    for c in all_checks():
        assert c.code in r.out and c.name in r.out
    doc = run_cli(["rules", "--format", "json"]).json()
    assert [c["code"] for c in doc["checks"]] == [c.code for c in all_checks()]
    assert all(c["summary"] and c["severity"] for c in doc["checks"])
    if KB.load().table("signatures"):
        assert doc["signatures"] and "log signatures" in r.out


def test_rule_by_code_and_name():
    r = run_cli(["rule", "PKG100"])
    assert r.code == 0 and r.out.startswith("PKG100 companion-built-for-other-torch")
    assert "Why is this bad?" in r.out and "References:" in r.out
    assert run_cli(["rule", "companion-built-for-other-torch"]).out == r.out
    assert run_cli(["rule", "pkg100", "--format", "json"]).json()["sections"]["Fix"]
    bad = run_cli(["rule", "XYZ999"])
    assert bad.code == 2 and "no check" in bad.err


def test_kb_info():
    r = run_cli(["kb", "info"])
    assert r.code == 0 and KB.load().version in r.out
    assert "torch_releases" in r.out and "1.13" in r.out and "gfx1151" in r.out and "sm_120" in r.out
    doc = run_cli(["kb", "info", "--format", "json"]).json()
    assert doc["version"] == KB.load().version and doc["date"] == KB.load().date
    tr = doc["tables"]["torch_releases"]
    assert tr["releases"][0] == "1.13" and "2.9" in tr["releases"] and "cu130" in tr["variants"]
    assert "gfx90a" in doc["tables"]["gpu_models"]["amd"]["archs"]


def test_recommend_described_blackwell():
    r = run_cli(["recommend", "--gpu", "RTX 5090", "--driver", "570.86.10", "--python", "3.12", "--format", "json"])
    assert r.code == 0
    rec = r.json()["recommendation"]
    # driver 570 supports CUDA 12.8: the newest line with sm_120 and CUDA <= 12.8
    assert rec["variant"] == "cu128"
    assert rec["install"].startswith(f"pip install torch=={rec['torch']} torchvision==")
    assert rec["install"].endswith("--index-url https://download.pytorch.org/whl/cu128")
    assert r.json()["meta"]["kb"]["version"]


def test_recommend_described_amd_and_none():
    r = run_cli(["recommend", "--gpu", "AMD Instinct MI210", "--python", "3.11", "--format", "json"])
    assert r.json()["recommendation"]["variant"].startswith("rocm")
    r = run_cli(["recommend", "--gpu", "Radeon RX 5700 XT"])
    assert r.code == 1 and "No torch build" in r.out  # gfx1010 is in no official wheel line
    r = run_cli(["recommend", "--gpu", "Tesla V100", "--driver", "535.104.05", "--python", "3.9", "--format", "json"])
    rec = r.json()["recommendation"]
    assert rec["variant"].startswith(("cu11", "cu12")) and rec["torch"].startswith("2.")
    if rec["variant"] > "cu122":  # driver 535 supports CUDA 12.2: a newer 12.x runs under minor-version compat
        assert "minor-version compatibility" in rec["note"]


def test_recommend_honours_cuda_minor_version_compatibility():
    """Driver 470.82 supports CUDA 11.4; the KB's cu118 lines run there under minor-version compatibility
    (driver >= 450.80.02), as `compat` says, so recommend must not come back empty."""
    r = run_cli(["recommend", "--gpu", "A100", "--driver", "470.82", "--format", "json"])
    assert r.code == 0, r.out
    rec = r.json()["recommendation"]
    assert rec["variant"] == "cu118" and "450.80.02" in rec["note"]
    c = run_cli(["compat", "--torch", rec["torch"], "--cuda", "11.8", "--driver", "470.82", "--gpu", "A100"])
    assert c.code == 0 and c.out.startswith("Verdict: works")


def test_compat_alternative_names_only_builds_the_kb_records():
    # torch 2.1 cu121 on driver 515 (CUDA 11.7): the alternative is a recorded cu11x line, with its command
    r = run_cli(["compat", "--torch", "2.1", "--cuda", "12.1", "--driver", "515.43.04", "--gpu", "A100", "--format", "json"])
    fixes = [x for f in r.json()["findings"] if f["code"] == "DRV001" for x in f["fixes"]]
    alt = [x for x in fixes if x["text"].startswith("Or install torch")]
    assert alt and "--index-url https://download.pytorch.org/whl/cu11" in alt[0]["command"]
    assert "or older" not in " ".join(x["text"] for x in fixes)


def test_recommend_on_h200_facts_names_the_installed_build():
    """On the real H200 capture: the installed torch 2.11.0+cu130 fits and is among the builds named."""
    from gpuvet.app.recommend import recommend

    facts = parse_report((REAL / "h200-cuda13" / "collect_env.txt").read_text(), "collect_env.txt")
    result = recommend(facts, KB.load())
    assert result["machine"]["driver"] == "580.159.04" and result["machine"]["driver_cuda"] == "13.0"
    assert result["installed"]["fits"] and result["installed"]["variant"] == "cu130"
    named = [result["recommendation"], *result["alternatives"]]
    assert all(x["variant"] in ("cu130", "cu128", "cu126") for x in named)
    assert any(x["torch"] == "2.11.0" and x["variant"] == "cu130" for x in named)
    assert all("cu132" not in x["variant"] for x in named)  # 13.2 needs a newer driver than 580


def test_recommend_live_with_fake_system():
    from fakes import FakeSystem

    r = run_cli(["recommend", "--format", "json"], system=FakeSystem())
    assert r.code in (0, 1)
    assert "recommendation" in r.json()


def test_compat_and_recommend_json_follow_the_report_schema():
    import json

    import jsonschema

    from conftest import ROOT

    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())
    for argv in (["compat", "--torch", "2.6", "--cuda", "12.6", "--gpu", "RTX 5090", "--format", "json"],
                 ["recommend", "--gpu", "H200", "--driver", "580.159.04", "--format", "json"]):
        doc = run_cli(argv).json()
        jsonschema.validate(doc, schema)
    doc = run_cli(["compat", "--torch", "2.6", "--cuda", "12.6", "--gpu", "RTX 5090", "--format", "json"]).json()
    assert doc["verdict"] == "breaks" and doc["findings"] and doc["described"]["gpu"] == "RTX 5090"


# -- captured on the real H200 (tests/fixtures/kb/h200-device/README.md) ----------------------------------
def test_h200_capture_check_verdicts_of_the_kb_rules():
    import json

    from conftest import FIXTURES

    doc = json.loads((FIXTURES / "kb" / "h200-device" / "check.json").read_text())
    mine = {f["code"]: f["outcome"] for f in doc["findings"] if f["code"][3:4] == "1"}
    assert mine["PKG100"] == mine["PKG105"] == mine["BLD103"] == mine["BLD106"] == mine["LIB107"] == "passed"
    assert mine["BLD102"] == "skipped"  # the ELF target list was read there; BLD040 judged it
    assert {f["code"]: f["outcome"] for f in doc["findings"]}["BLD040"] == "passed"


def test_h200_capture_recommend_names_the_installed_working_build():
    import json

    from conftest import FIXTURES

    d = FIXTURES / "kb" / "h200-device"
    rec = json.loads((d / "recommend.json").read_text())
    assert rec["installed"] == {"torch": "2.11.0+cu130", "variant": "cu130", "fits": True, "why": []}
    named = [rec["recommendation"], *rec["alternatives"]]
    hit = [x for x in named if x["torch"] == "2.11.0" and x["variant"] == "cu130"]
    assert hit and hit[0]["install"] == ("pip install torch==2.11.0 torchvision==0.26.0 torchaudio==2.11.0 "
                                         "--index-url https://download.pytorch.org/whl/cu130")
    works = (d / "torch-works.txt").read_text()
    # ... and that build, with exactly those companions, ran GPU work there
    assert "torch 2.11.0+cu130 torchvision 0.26.0+cu130 torchaudio 2.11.0+cu130" in works
    assert "matmul finite True" in works and "nms on cuda [0, 2]" in works and "torch.compile (triton) ok" in works
    # the same facts, re-read by this tree, give the same answer
    from gpuvet import kb as K
    from gpuvet.model import Facts, row
    from gpuvet.app.recommend import recommend

    facts = Facts(origin="pasted")
    for table, rows in rec["facts"].items():
        for r in rows:
            r = dict(r)
            facts.add([row(table, r.pop("source", ""), **r)])
    again = recommend(facts, K.load())
    # the same release line and wheel line (the KB's latest patch of that line may have moved since the capture)
    mm = lambda v: tuple(v.split(".")[:2])  # noqa: E731
    assert mm(again["recommendation"]["torch"]) == mm(rec["recommendation"]["torch"])
    assert again["recommendation"]["variant"] == rec["recommendation"]["variant"] and again["installed"]["fits"]
