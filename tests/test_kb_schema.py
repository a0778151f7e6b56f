"""Every knowledge-base table validates against its JSON Schema, every table has a schema, every entry
names the source it was read from; plus consistency checks between the tables."""
from __future__ import annotations

import re
from importlib import resources

import jsonschema

from gpuvet.kb.schema import load_schema
import pytest
import yaml

from gpuvet import kb as KB
from gpuvet.kb import query as q

DATA = resources.files("gpuvet.kb") / "data"
SCHEMAS = resources.files("gpuvet.kb") / "schemas"
FILES = sorted(e.name for e in DATA.iterdir() if e.name.endswith((".yaml", ".yml")) and e.name != "kb.yaml")
URL = re.compile(r"^https?://[^\s]+$")


def load(name):
    return yaml.safe_load((DATA / name).read_text(encoding="utf-8"))


def test_there_are_tables():
    assert {"gpu_models.yaml", "torch_releases.yaml", "companions.yaml", "host_compilers.yaml",
            "python_rules.yaml", "known_issues.yaml"} <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_table_validates_against_its_schema(name):
    doc = load(name)
    assert isinstance(doc, dict) and doc.get("table"), f"{name}: needs a 'table' name"
    table = doc["table"]
    assert name.rsplit(".", 1)[0] == table, f"{name}: one file per table, named after it ({table})"
    schema_file = SCHEMAS / f"{table}.schema.json"
    assert schema_file.is_file(), f"no schema kb/schemas/{table}.schema.json for {name}"
    schema = load_schema(table)  # the taxonomy filled in from gpuvet.model.taxonomy
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema.get("$schema", "").endswith("2020-12/schema"), f"{table}: schema must be draft 2020-12"
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{name} {list(e.path)}: {e.message}" for e in errors[:10])


@pytest.mark.parametrize("name", FILES)
def test_every_entry_has_a_source_url(name):
    doc = load(name)
    entries = doc.get("entries")
    assert isinstance(entries, list) and entries, f"{name}: needs a non-empty 'entries' list"
    for i, e in enumerate(entries):
        src = e.get("source") if isinstance(e, dict) else None
        assert isinstance(src, str) and URL.match(src), f"{name} entry {i}: source must be a URL, got {src!r}"
        for j, v in enumerate(e.get("variants", []) or []):  # nested rows carry their own source
            assert URL.match(str(v.get("source", ""))), f"{name} entry {i} variant {j}: no source URL"


def test_every_schema_has_a_table():
    tables = {load(n)["table"] for n in FILES}
    for e in SCHEMAS.iterdir():
        if e.name.endswith(".schema.json"):
            assert e.name[: -len(".schema.json")] in tables, f"schema {e.name} has no data file"


def test_kb_stamp():
    k = KB.load()
    assert re.fullmatch(r"\d{4}\.\d{2}\.\d{2}", k.version) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", k.date)


def test_schema_rejects_an_entry_without_source():
    schema = load_schema("gpu_models")
    bad = {"table": "gpu_models", "entries": [{"vendor": "nvidia", "names": ["X"], "arch": "sm_90",
                                               "compute_capability": "9.0", "family": "Hopper"}]}
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(bad))


# -- consistency between tables ---------------------------------------------------------------------
def test_gpu_model_names_are_unique_and_arch_matches_cc():
    seen: dict[str, str] = {}
    for e in load("gpu_models.yaml")["entries"]:
        for n in e["names"]:
            key = re.sub(r"[^a-z0-9]+", " ", n.lower()).strip()
            assert key not in seen or seen[key] == e["arch"], f"{n!r} maps to {seen.get(key)} and {e['arch']}"
            seen[key] = e["arch"]
        if e["vendor"] == "nvidia":
            major, minor = e["compute_capability"].split(".")
            assert e["arch"] == f"sm_{major}{minor}"


def test_torch_releases_are_consistent():
    rels = q.torch_releases(KB.load())
    assert [r.version for r in rels][-1] == "1.13"
    for r in rels:
        assert q.minor_of(r.latest) == q.minor_of(r.version)
        names = [v.name for v in r.variants]
        assert len(names) == len(set(names)), r.version
        if r.pypi_default:
            assert r.variant(r.pypi_default) is not None, f"{r.version}: pypi_default not a variant"
        for v in r.variants:
            assert v.index_url.endswith("/" + v.name)
            if v.kind == "cuda":
                assert v.name == q.cuda_tag(v.version)
                assert all(a.startswith("sm_") for a in v.arch or ())
                assert set(v.ptx) <= set(v.arch or ())
            if v.kind == "rocm":
                assert v.name == f"rocm{v.version}" and all(a.startswith("gfx") for a in v.arch or ())
        if r.companions.get("torchvision"):
            # torchvision 0.(minor+15) pairs with torch 2.minor (pytorch/vision README)
            assert q.minor_of(r.companions["torchvision"])[1] == q.minor_of(r.version)[1] + (15 if r.key[0] == 2 else 1)


def test_host_compilers_never_go_backwards():
    rows = sorted(load("host_compilers.yaml")["entries"], key=lambda e: q.parse_version(e["cuda"]))
    for a, b in zip(rows, rows[1:]):
        assert b["gcc_max"] >= a["gcc_max"], (a["cuda"], b["cuda"])


def test_known_issue_specifiers_parse():
    from packaging.specifiers import SpecifierSet

    for e in load("known_issues.yaml")["entries"]:
        for key in ("torch", "package_version"):
            if key in e["when"]:
                SpecifierSet(e["when"][key])


def test_schemas_read_the_taxonomy_and_reject_a_cause_outside_it():
    from gpuvet.model.taxonomy import CAUSES, COMPONENTS, LABELS

    sig = load_schema("signatures")
    assert sig["$defs"]["cause"]["enum"] == list(LABELS) and sig["$defs"]["component"]["enum"] == list(COMPONENTS)
    for e in SCHEMAS.iterdir():  # no schema file spells the vocabulary out
        if e.name.endswith(".schema.json"):
            assert "gpu-arch-unsupported" not in e.read_text() and "framework-build" not in e.read_text(), e.name
    doc = load("known_issues.yaml")
    bad = dict(doc, entries=[dict(doc["entries"][0], cause="cosmic-rays")])
    errs = list(jsonschema.Draft202012Validator(load_schema("known_issues")).iter_errors(bad))
    assert any("cosmic-rays" in e.message for e in errs)
    assert set(CAUSES) < set(LABELS)
