"""Format gate for issue 9's third new incident set (bench/incidents-new3: real threads used nowhere else in the
project, split by thread URL into a tuning half and a frozen half; n3r-* collected by g3r (ROCm), n3c-* by
g3c).  Data only: nothing here runs gpuvet, so the frozen half stays unscored."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from gpuvet.model.taxonomy import COMPONENTS, LABELS
from test_incidents_new import _thread, half_of  # the first batch's thread key and split rule

NEW2 = ROOT / "bench" / "incidents-new3"
HALVES = ("tuning", "frozen")
CASES = sorted(p for h in HALVES for p in (NEW2 / h).glob("*.yaml"))
KEYS = {"id", "source", "platform", "gpu", "inputs", "label", "confidence"}
LABEL_KEYS = {"cause", "component", "detail", "fix", "evidence_in_inputs"}
URL = re.compile(r"https?://[^\s\"'<>)\]]+")


def _load(p: Path) -> dict:
    return yaml.safe_load(p.read_text(encoding="utf-8"))


def _key(url: str) -> str:  # thread key, plus: no fragment/query, www/http folded, discussions like issues
    u = url.strip().split("#")[0].split("?")[0].rstrip("/.,;").replace("://www.", "://").replace("http://", "https://")
    return _thread(re.sub(r"/discussions/(\d+)$", r"/issues/\1", re.sub(r"/(issues|pull)/(\d+)/.*$", r"/\1/\2", u)))


def _ingest():
    spec = importlib.util.spec_from_file_location("incidents_new3_ingest", NEW2 / "ingest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _used_elsewhere() -> set[str]:
    used = set()
    for d in (ROOT.parent / "shared" / "benchmarks" / "incidents" / "dev", ROOT / "bench" / "incidents-heldout",
              ROOT / "bench" / "incidents-new" / "tuning", ROOT / "bench" / "incidents-new" / "frozen",
              ROOT / "bench" / "incidents-new2" / "tuning", ROOT / "bench" / "incidents-new2" / "frozen"):
        used |= {_key(_load(p)["source"]) for p in d.glob("*.yaml")} if d.is_dir() else set()
    for p in (ROOT / "tests" / "fixtures").rglob("*"):
        if p.is_file() and p.stat().st_size < 4_000_000:
            try:
                used |= {_key(u) for u in URL.findall(p.read_text(encoding="utf-8"))}
            except UnicodeDecodeError:
                pass
    return used


def test_cases_well_formed():
    for p in CASES:
        c = _load(p)
        assert set(c) - {"gpu"} <= KEYS and KEYS - {"gpu"} <= set(c), p.name
        assert c["id"] == p.stem, p.name
        assert re.fullmatch(r"n3[rc]-[tf]\d{4}", c["id"]), p.name
        assert c["platform"] in ("rocm", "cuda"), p.name
        assert (c["id"].startswith("n3r")) == (c["platform"] == "rocm"), p.name  # g3r: ROCm, g3c: not
        assert c["confidence"] in ("confirmed", "likely"), p.name
        lab = c["label"]
        assert set(lab) == LABEL_KEYS, p.name
        assert lab["cause"] in LABELS, (p.name, lab["cause"])
        assert lab["component"] in COMPONENTS, (p.name, lab["component"])
        assert all(isinstance(lab[k], str) and len(lab[k].strip()) >= 10 for k in ("detail", "fix")), p.name
        assert set(c["inputs"]) <= {"log", "env"} and c["inputs"].get("log"), p.name
        assert 1 <= len(c["inputs"]["log"].strip().splitlines()) <= 60, p.name
        assert re.fullmatch(r"https://[\w.-]+/\S+", c["source"]), p.name


@pytest.mark.parametrize("half", HALVES)
@pytest.mark.parametrize("tag", ("r", "c"))
def test_ids_numbered_per_tag_and_half(tag, half):
    ids = sorted(p.stem for p in (NEW2 / half).glob(f"n3{tag}-*.yaml"))
    assert ids == [f"n3{tag}-{half[0]}{i:04d}" for i in range(1, len(ids) + 1)]


def test_split_by_thread_url():
    for p in CASES:
        assert p.parent.name == half_of(_load(p)["source"]), p.name


def test_sources_unique_and_new():
    seen: dict[str, str] = {}
    for p in CASES:
        src = _load(p)["source"]
        assert "#" not in src and not src.endswith("/"), p.name
        key = _key(src)
        assert key not in seen, (p.name, seen.get(key))
        seen[key] = p.name
    used = _used_elsewhere()
    assert len(used) >= 400 or not (ROOT.parent / "shared").is_dir()  # dev + heldout + incidents-new were read
    assert not set(seen) & used, sorted(set(seen) & used)


def test_ingest_refuses_used_threads_duplicates_and_bad_format(tmp_path):
    ing = _ingest()
    used = sorted(ing.used_threads())
    dev_src = next(_load(p)["source"] for p in sorted((ROOT / "bench" / "incidents-new" / "frozen").glob("*.yaml")))
    block = ("@@ {src} | {plat} | null | {cause} | framework-build | likely\n--log\nRuntimeError: HIP error\n"
             "--detail\nthe wheel lacks kernels for this arch\n--fix\ninstall a wheel that has them\n")
    fresh = "https://github.com/example/repo/issues/424242"
    batch = tmp_path / "b.txt"
    batch.write_text(
        block.format(src=dev_src.replace("/issues/", "/pull/"), plat="rocm", cause="gpu-arch-unsupported")
        + block.format(src=fresh + "#issuecomment-1", plat="rocm", cause="gpu-arch-unsupported")
        + block.format(src=fresh.upper().replace("HTTPS", "https") + "/", plat="rocm", cause="gpu-arch-unsupported")
        + block.format(src="https://github.com/example/repo/issues/1", plat="rocm", cause="no-such-cause")
        + block.format(src="https://github.com/example/repo/issues/2", plat="cuda", cause="none"),
        encoding="utf-8")
    added, refused = ing.ingest([batch], "r", dest=tmp_path)
    assert sum(added.values()) == 1 and len(refused) == 4, refused
    assert refused[0].startswith("not new (used in incidents-new/"), refused
    assert refused[1].startswith("not new (already n3r-"), refused
    assert "not in the taxonomy" in refused[2] and "takes only rocm" in refused[3], refused
    (p,) = [p for h in HALVES for p in (tmp_path / h).glob("*.yaml")]
    c = _load(p)
    assert c["source"] == fresh and p.parent.name == half_of(fresh) and p.stem == f"n3r-{half_of(fresh)[0]}0001"
    assert len(used) > 300


def test_ingest_cli_bad_input_one_line(tmp_path, capsys):
    ing = _ingest()
    assert ing.main(["--tag", "r", str(tmp_path / "missing.txt")]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("@@ https://github.com/x/y/issues/1 | rocm\n--log\nx\n", encoding="utf-8")
    assert ing.main(["--tag", "r", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("ingest.py: ") for line in err)
