"""The format gate of every gathered incident set (bench/incidents-new2, -new3, ...: real threads used nowhere else
in the project, split by thread URL into a tuning half and a frozen half).  Each set's test file defines the
`incident_set` fixture and imports these tests; data only: nothing here runs gpuvet, so frozen halves stay unscored.
"""
from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from gpuvet.model.taxonomy import COMPONENTS, LABELS
from test_incidents_new import _thread, half_of  # the first batch's thread key and split rule

HALVES = ("tuning", "frozen")
KEYS = {"id", "source", "platform", "gpu", "inputs", "label", "confidence"}
LABEL_KEYS = {"cause", "component", "detail", "fix", "evidence_in_inputs"}
URL = re.compile(r"https?://[^\s\"'<>)\]]+")


@dataclass(frozen=True)
class GatheredSet:
    """bench/<name>: cases <prefix>r-* (ROCm) and <prefix>c-* (the rest); threads of `earlier` sets are used."""

    name: str
    prefix: str
    earlier: tuple[str, ...]  # bench/ directories with tuning/ and frozen/ halves

    @property
    def dir(self) -> Path:
        return ROOT / "bench" / self.name

    @property
    def cases(self) -> list[Path]:
        return sorted(p for h in HALVES for p in (self.dir / h).glob("*.yaml"))


def _load(p: Path) -> dict:
    return yaml.safe_load(p.read_text(encoding="utf-8"))


def _key(url: str) -> str:  # thread key, plus: no fragment/query, www/http folded, discussions like issues
    u = url.strip().split("#")[0].split("?")[0].rstrip("/.,;").replace("://www.", "://").replace("http://", "https://")
    return _thread(re.sub(r"/discussions/(\d+)$", r"/issues/\1", re.sub(r"/(issues|pull)/(\d+)/.*$", r"/\1/\2", u)))


def _ingest(s: GatheredSet):
    spec = importlib.util.spec_from_file_location(f"{s.name.replace('-', '_')}_ingest", s.dir / "ingest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _used_elsewhere(s: GatheredSet) -> set[str]:
    used = set()
    for d in (ROOT.parent / "shared" / "benchmarks" / "incidents" / "dev", ROOT / "bench" / "incidents-heldout",
              *(ROOT / "bench" / e / h for e in s.earlier for h in HALVES)):
        used |= {_key(_load(p)["source"]) for p in d.glob("*.yaml")} if d.is_dir() else set()
    for p in (ROOT / "tests" / "fixtures").rglob("*"):
        if p.is_file() and p.stat().st_size < 4_000_000:
            try:
                used |= {_key(u) for u in URL.findall(p.read_text(encoding="utf-8"))}
            except UnicodeDecodeError:
                pass
    return used


def test_cases_well_formed(incident_set):
    for p in incident_set.cases:
        c = _load(p)
        assert set(c) - {"gpu"} <= KEYS and KEYS - {"gpu"} <= set(c), p.name
        assert c["id"] == p.stem, p.name
        assert re.fullmatch(rf"{incident_set.prefix}[rcabd]-[tf]\d{{4}}", c["id"]), p.name
        assert c["platform"] in ("rocm", "cuda"), p.name
        assert (c["id"][len(incident_set.prefix)] in "rab") == (c["platform"] == "rocm"), p.name  # r, a, b: ROCm; c, d: not
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
@pytest.mark.parametrize("tag", ("r", "c", "a"))
def test_ids_numbered_per_tag_and_half(incident_set, tag, half):
    pre = incident_set.prefix
    ids = sorted(p.stem for p in (incident_set.dir / half).glob(f"{pre}{tag}-*.yaml"))
    assert ids == [f"{pre}{tag}-{half[0]}{i:04d}" for i in range(1, len(ids) + 1)]


def test_split_by_thread_url(incident_set):
    for p in incident_set.cases:
        assert p.parent.name == half_of(_load(p)["source"]), p.name


def test_sources_unique_and_new(incident_set):
    seen: dict[str, str] = {}
    for p in incident_set.cases:
        src = _load(p)["source"]
        assert "#" not in src and not src.endswith("/"), p.name
        key = _key(src)
        assert key not in seen, (p.name, seen.get(key))
        seen[key] = p.name
    used = _used_elsewhere(incident_set)
    assert len(used) >= 400 or not (ROOT.parent / "shared").is_dir()  # dev + heldout + incidents-new were read
    assert not set(seen) & used, sorted(set(seen) & used)


def test_ingest_refuses_used_threads_duplicates_and_bad_format(incident_set, tmp_path):
    ing = _ingest(incident_set)
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
    assert refused[1].startswith(f"not new (already {incident_set.prefix}r-"), refused
    assert "not in the taxonomy" in refused[2] and "takes only rocm" in refused[3], refused
    (p,) = [p for h in HALVES for p in (tmp_path / h).glob("*.yaml")]
    c = _load(p)
    assert c["source"] == fresh and p.parent.name == half_of(fresh) and p.stem == f"{incident_set.prefix}r-{half_of(fresh)[0]}0001"
    assert len(used) > 300


def test_ingest_cli_bad_input_one_line(incident_set, tmp_path, capsys):
    ing = _ingest(incident_set)
    assert ing.main(["--tag", "r", str(tmp_path / "missing.txt")]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("@@ https://github.com/x/y/issues/1 | rocm\n--log\nx\n", encoding="utf-8")
    assert ing.main(["--tag", "r", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("ingest.py: ") for line in err)
