"""Every log signature: schema-valid KB data, its examples match and its counter-examples do not
(through the same normalisation and prefilter the scanner uses), patterns are POSIX-ERE compatible
(grep -E agrees), and each has a literal anchor for the prefilter."""
import json
import re
import shutil
import subprocess
from importlib import resources

import pytest
import yaml

from gpuvet.logs.match import Scanner
from gpuvet.logs.normalize import normalize
from gpuvet.logs.signatures import anchors, build_catalog, load_catalog
from gpuvet.model.taxonomy import CAUSES, COMPONENTS

DATA = yaml.safe_load((resources.files("gpuvet.kb") / "data" / "signatures.yaml").read_text(encoding="utf-8"))
SCHEMA = json.loads((resources.files("gpuvet.kb") / "schemas" / "signatures.schema.json").read_text(encoding="utf-8"))
CAT = load_catalog()
SIGS = {s.id: s for s in CAT.signatures}


def test_schema_valid():
    import jsonschema

    jsonschema.Draft202012Validator(SCHEMA).validate(DATA)


def test_ids_names_unique_and_in_range():
    ids = [e["id"] for e in DATA["entries"]]
    names = [e["name"] for e in DATA["entries"]]
    assert len(ids) == len(set(ids)) and len(names) == len(set(names))
    assert all(re.fullmatch(r"LOG\d{3}", i) and int(i[3:]) >= 1 for i in ids)


def test_causes_components_in_taxonomy():
    for s in CAT.signatures:
        assert s.cause in CAUSES + ("none",), s.id
        assert s.component in COMPONENTS, s.id
        for h in s.alternatives:
            assert h.cause in CAUSES and h.component in COMPONENTS, s.id
        for h in s.resolve:  # a context rule may read the message as the user's own (none: logs/rank.py)
            assert h.component in COMPONENTS, s.id
            assert h.cause in CAUSES or (h.cause == "none" and h.component == "user-code" and h.when), s.id


def test_every_signature_has_examples_and_source():
    for s in CAT.signatures:
        assert s.examples, s.id
        assert s.source.startswith("http"), s.id
        assert s.meaning and s.fix, s.id


@pytest.mark.parametrize("sid", sorted(SIGS))
def test_examples_match_through_scanner(sid):
    sig = SIGS[sid]
    for ex in sig.examples:
        if "\n" in ex:  # a two-line reading (pairs): the call and the value printed on the next line
            sc = Scanner(CAT)
            sc.feed_text(ex)
            assert sid in sc.result.matches, f"{sid} should match {ex!r}"
            sc = Scanner(CAT, hints_everywhere=False)
            sc.feed_block(3, ex.encode() + b"\n")  # the prefiltered block path reads the next line too
            assert sid in sc.result.matches, f"{sid} should match block {ex!r}"
            continue
        sc = Scanner(CAT)
        sc.feed(1, ex)
        assert sid in sc.result.matches, f"{sid} should match {ex!r}"
        sc = Scanner(CAT)
        sc.feed(7, ex.encode())  # bytes path: the raw-line prefilter and routing
        assert sid in sc.result.matches, f"{sid} should match bytes {ex!r}"
    for ex in sig.counter_examples:
        if "\n" in ex:
            sc = Scanner(CAT)
            sc.feed_text(ex)
            assert sid not in sc.result.matches, f"{sid} must not match {ex!r}"
            continue
        assert not sig.search(normalize(ex)), f"{sid} must not match {ex!r}"


@pytest.mark.parametrize("sid", sorted(SIGS))
def test_patterns_have_anchor(sid):
    for p in SIGS[sid].patterns:
        assert anchors(p), f"{sid}: {p!r} has no literal anchor"


def test_non_ere_constructs_refused():
    bad = {"id": "LOG999", "name": "x", "title": "x", "cause": "other", "component": "runtime", "weight": 0.5,
           "patterns": [r"foo\d+bar"], "meaning": "x", "fix": "x", "source": "https://x"}
    with pytest.raises(ValueError):
        build_catalog([bad])


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep not installed")
def test_grep_E_agrees_on_examples(tmp_path):
    """The fast path hands these patterns to grep -E: it must match what Python matches."""
    for s in CAT.signatures:
        pf = tmp_path / f"{s.id}.pat"
        pf.write_text("\n".join(s.patterns) + "\n")
        inp = tmp_path / f"{s.id}.txt"
        one_line = [ex for ex in s.examples if "\n" not in ex]  # two-line readings are not grep's (pairs)
        inp.write_text("\n".join(one_line) + "\n")
        out = subprocess.run(["grep", "-a", "-c", "-E", "-f", str(pf), str(inp)], capture_output=True, text=True,
                             env={"LC_ALL": "C"})
        assert out.returncode in (0, 1), (s.id, out.stderr)
        assert int(out.stdout.strip() or 0) == len(one_line), f"grep -E disagrees on {s.id}: {out.stderr}"


ORDINARY = """\
2025-06-01 12:00:01,123 - INFO - trainer.py:412 - step 1200 loss=2.3141 lr=2.500e-04 grad_norm=1.204 tokens/s=13021
 45%|████▌     | 4500/10000 [12:01<14:40,  6.25it/s, loss=1.92]
[rank3]: epoch 2 iter 812: train/loss 1.873 val/acc 0.612 mem 41.2GiB samples/s 412
node1:2211:2290 [3] NCCL INFO Channel 07/0 : 3[3] -> 4[4] via P2P/IPC
WARNING 06-01 12:00:02 [scheduler.py:200] batch 812 padded to 2048 tokens
Epoch 3/10: validation loss decreased (0.4123 --> 0.4011). Saving model ...
{'loss': 0.8123, 'grad_norm': 2.31, 'learning_rate': 1.8e-05, 'epoch': 1.42}
"""


def test_prefilter_skips_ordinary_training_lines():
    """Speed guard: keys must be rare in ordinary logs (a key hitting every 'loss' line made scanning 5x slower)."""
    for line in ORDINARY.splitlines():
        assert not CAT.quick.search(line), (line, CAT.quick.search(line).group())


def test_keys_avoid_words_and_path_pieces_ordinary_log_lines_are_full_of():
    """A key is a necessary piece of a pattern; a weak one (``was``, ``memory``, ``module``, ``/opt/``) made every log
    line holding it a candidate read in Python: 100,000 frames of a deep traceback under /opt/, and 22,000 of 39,000
    lines of a synthetic training log (day 7).  Where a pattern offers a strong anchor, its key is cut from that."""
    from gpuvet.logs.match import Scanner
    from gpuvet.logs.signatures import anchors, key_of, load_catalog

    cat = load_catalog()
    for weak in ("/opt/", "/usr/", "module", "was", "got", "then", "memory", "size", "error", "code", "status"):
        assert weak not in cat.keys, weak
    by_id = {sig.id: sig for sig in cat.signatures}
    assert [key_of(a) for a in anchors(by_id["LOG323"].patterns[0])] == ["/rocm"]  # /opt/rocm.../bin/hipcc: not found
    assert anchors(by_id["LOG354"].patterns[1]) == ["compiled", "built"]  # (extension|...|module) ... (compiled|built)
    assert anchors(r"(error|code|status):? 802[^0-9]") == [" 802"]
    # a pattern with no strong anchor keeps its first choice (the anchor is still necessary)
    assert anchors(r"(was|got) (shut|cut)") == ["was", "got"]
    sc = Scanner(cat)
    for line in ("Saving model checkpoint to /opt/ml/model/checkpoint-500",
                 "INFO:root:Evaluation was run, then results were written; got 0.93 accuracy",
                 '  File "/opt/venv/lib/python3.11/site-packages/mylib/recursive_module.py", line 1, in recurse_level_0',
                 "[rank0]: epoch 3 iter 30000: train/loss 3.439 val/acc 0.593 mem 37.7GiB samples/s 670"):
        assert sc._keys(line) == [], (line, sc._keys(line))
