"""The shipped prefilter data (logs/data/signature_index.json: the signatures' routing, the hints' gates) is
current, and what gpuvet builds from it is what it would compute; a stale section is never used."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

from gpuvet import kb
from gpuvet.logs.fact_patterns import PREFILTER_PATTERNS
from gpuvet.logs.match import Scanner
from gpuvet.logs.index import INDEX_PATH
from gpuvet.logs.signatures import build_catalog

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("gen_signature_index", ROOT / "tools" / "gen_signature_index.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shipped_index_is_current():
    assert Path(INDEX_PATH).read_text(encoding="utf-8") == _tool().render(), \
        "logs/data/signature_index.json is stale: run .venv/bin/python tools/gen_signature_index.py"


def _same(a, b):
    assert a.trie == b.trie
    assert a.routes == b.routes
    assert a.extra_keys == b.extra_keys
    assert [s.id for s in a.signatures] == [s.id for s in b.signatures]


def test_index_gives_the_computed_catalog_and_compiles_lazily():
    entries = kb.load().table("signatures")
    fast = build_catalog(entries, PREFILTER_PATTERNS)
    _same(fast, build_catalog(entries, PREFILTER_PATTERNS, use_index=False))
    def compiled(s):
        return "regex" in s.__dict__ or any(s.__dict__.get("_pattern_rx") or ())

    assert not any(compiled(s) for s in fast.signatures)  # nothing compiled yet
    sc = Scanner(fast)
    sc.feed(1, b"RuntimeError: CUDA error: no kernel image is available for execution on the device")
    assert "LOG002" in sc.result.matches
    done = [s.id for s in fast.signatures if compiled(s)]
    assert "LOG002" in done and len(done) < len(fast.signatures) // 4, done
    log002 = fast.get("LOG002")
    assert sum(rx is not None for rx in log002._pattern_rx) < len(log002.patterns)  # only the patterns hit


def test_stale_index_is_not_used():
    entries = copy.deepcopy(kb.load().table("signatures"))
    e = next(e for e in entries if e["id"] == "LOG002")
    e["patterns"] = list(e["patterns"]) + ["zzqx widget exploded"]  # a pattern the shipped index never saw
    cat = build_catalog(entries, PREFILTER_PATTERNS)
    _same(cat, build_catalog(entries, PREFILTER_PATTERNS, use_index=False))
    sc = Scanner(cat)
    sc.feed(1, b"fatal: zzqx widget exploded")
    assert "LOG002" in sc.result.matches
    assert all("regex" in s.__dict__ for s in cat.signatures)  # computed path: compiled (and so validated) now


def test_substring_keys_equal_the_trie_keys():
    """A small block finds each line's keys by substring search (Catalog.keys_present); a large one by the
    trie's look-ahead.  Both must give every line the same keys."""
    from test_signatures import ORDINARY

    cat = build_catalog(kb.load().table("signatures"), PREFILTER_PATTERNS)
    lines = [ex for s in cat.signatures for ex in s.examples + s.counter_examples] + ORDINARY.splitlines()
    lines += ["[rank1]: NCCL WARN Cuda failure 'out of memory' hipErrorNoBinaryForGpu torch==2.3.0 CUDA Version: 12.2"]
    block = "\n".join(lines).encode("utf-8")
    present = cat.keys_present(block)
    for line in lines:
        raw = line.encode("utf-8")
        trie = {m.group(1).decode("utf-8") for m in cat.prefilter_bytes.finditer(raw)}
        assert {k for kb, k in present if kb in raw} == trie, line


def test_hint_gates_from_the_plan_equal_the_computed_ones():
    from gpuvet.logs import extract
    from gpuvet.logs.gate import MultiGate

    from test_logs_gate import HINT_SAMPLES, LINES

    shipped = extract.hints_gate()
    computed = MultiGate(extract.HINTS)
    assert shipped.alts == computed.alts and shipped.weak == computed.weak
    assert shipped.exact_routes == computed.exact_routes and shipped.folded_routes == computed.folded_routes
    assert [(g.exact, g.folded, g.always) for g in shipped.gates] == [(g.exact, g.folded, g.always) for g in computed.gates]
    for line in LINES + HINT_SAMPLES:
        assert shipped.matches(line[:extract.HINT_SPAN]) == computed.matches(line[:extract.HINT_SPAN]), line


def test_stale_hint_plan_is_not_used(monkeypatch):
    from gpuvet.logs import extract

    monkeypatch.setattr(extract, "_hints_gated", None)
    monkeypatch.setitem(extract.HINTS, "zzqx-hint", r"\bzzqx widget\b")  # a hint the shipped plan never saw
    assert [h.name for h in extract.hints_in("the zzqx widget broke", 1)] == ["zzqx-hint"]
    monkeypatch.setattr(extract, "_hints_gated", None)


def test_hit_equals_the_whole_regex():
    """Signature.hit tries only the patterns whose anchors the text holds: it must say what regex.search says."""
    from gpuvet.logs.normalize import normalize

    from test_signatures import ORDINARY

    cat = build_catalog(kb.load().table("signatures"), PREFILTER_PATTERNS)
    texts = [normalize(ex) for s in cat.signatures for ex in s.examples + s.counter_examples] + ORDINARY.splitlines()
    for s in cat.signatures:
        assert len(s.anchors) >= len(s.patterns), s.id
        for t in texts:
            assert s.hit(t) == (s.regex.search(t) is not None), (s.id, t)


def test_step_counters_are_not_candidates():
    """A key made of a number among punctuation (': 999' of 'cudart init failure: 999') sent every counter line
    of a training log ('iter: 9990') through normalisation and routing."""
    cat = build_catalog(kb.load().table("signatures"), PREFILTER_PATTERNS)
    for i in (999, 9990, 99917, 999000):
        line = f"[rank3]: iter: {i} loss: 0.5123 step: {i * 3} lr: 0.0003 count: {i}"
        assert not cat.keys_present(line.encode()), (line, cat.keys_present(line.encode()))
    assert "LOG" in (cat.route(k for _, k in cat.keys_present(b"cudart init failure: 999")) or [None])[0].id
