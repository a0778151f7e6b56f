"""The KB loader: lazy tables, the JSON cache keyed on the data file, and its failure modes (planted
entries, foreign owners, FIFOs, wrong shapes: every one a miss, never code execution or a hang)."""
import json
import os
import pickle
import threading

import pytest

from gpuvet import kb as K


@pytest.fixture
def data(tmp_path, monkeypatch):
    d = tmp_path / "data"
    d.mkdir()
    (d / "kb.yaml").write_text('version: "9"\ndate: "2026-01-01"\n')
    (d / "things.yaml").write_text("table: things\ndescription: d\nentries:\n  - {a: 1, source: 'https://x'}\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return d


def test_lazy_table_and_cache(data, tmp_path):
    kb = K.KB(data)
    assert kb.version == "9" and kb.table_names() == ["things"]
    assert kb._tables == {}
    assert kb.table("things") == [{"a": 1, "source": "https://x"}]
    assert kb.table("missing") == []
    cached = list((tmp_path / "cache" / "gpuvet" / "kb").glob("things-*.json"))
    assert len(cached) == 1
    assert cached[0].stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "cache" / "gpuvet" / "kb").stat().st_mode & 0o777 == 0o700
    # a changed file is a new cache key: never a stale answer
    (data / "things.yaml").write_text("table: things\nentries:\n  - {a: 2, source: 'https://x'}\n")
    os.utime(data / "things.yaml", ns=(1, 1))
    assert K.KB(data).table("things") == [{"a": 2, "source": "https://x"}]


def test_corrupt_cache_falls_back_to_yaml(data, tmp_path):
    K.KB(data).table("things")
    for p in (tmp_path / "cache" / "gpuvet" / "kb").glob("things-*.json"):
        p.write_bytes(b"not json {")
    assert K.KB(data).table("things")[0]["a"] == 1


def test_unwritable_cache_dir_still_loads(data, tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert K.KB(data).table("things")[0]["a"] == 1


def test_malformed_table_is_a_kb_error(data):
    (data / "bad.yaml").write_text("table: other\nentries: []\n")
    with pytest.raises(K.KBError, match="needs 'table: bad'"):
        K.KB(data).table("bad")
    (data / "broken.yaml").write_text("table: [unclosed\n")
    with pytest.raises(K.KBError):
        K.KB(data).table("broken")


def test_every_shipped_file_is_named_after_its_table():
    kb = K.load()
    for name in kb.table_names():
        assert kb.table(name), name


def _entry(tmp_path) -> "os.PathLike":
    (hit,) = (tmp_path / "cache" / "gpuvet" / "kb").glob("things-*.json")
    return hit


class _Boom:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


MARKER = "/nonexistent"


def test_planted_pickle_never_runs(data, tmp_path):
    """The old cache loaded any pickle at a computable name: a planted one ran its command."""
    global MARKER
    MARKER = str(tmp_path / "pwned")
    K.KB(data).table("things")
    kdir = tmp_path / "cache" / "gpuvet" / "kb"
    payload = pickle.dumps(_Boom())
    for p in list(kdir.iterdir()):
        p.with_suffix(".pickle").write_bytes(payload)
        p.write_bytes(payload)  # and in place of the JSON entry itself
    assert K.KB(data).table("things") == [{"a": 1, "source": "https://x"}]
    assert not os.path.exists(MARKER)


def test_wrong_shape_and_wrong_key_are_misses(data, tmp_path):
    K.KB(data).table("things")
    hit = _entry(tmp_path)
    entry = json.loads(hit.read_text())
    for doc in ([1, 2], {"table": "things", "entries": "x"}, {"table": "other", "entries": []}, "str", None):
        hit.write_text(json.dumps(dict(entry, doc=doc)))
        assert K.KB(data).table("things") == [{"a": 1, "source": "https://x"}], doc
    hit.write_text(json.dumps(dict(entry, key="0" * 32, doc={"table": "things", "entries": [{"a": 666}]})))
    assert K.KB(data).table("things")[0]["a"] == 1
    # kb.yaml's entry of the wrong type: a miss, never exit 4
    for p in (tmp_path / "cache" / "gpuvet" / "kb").glob("kb-*.json"):
        p.write_text(json.dumps(dict(json.loads(p.read_text()), doc=[1])))
    assert K.KB(data).version == "9"


def test_entries_not_ours_or_writable_by_others_are_ignored(data, tmp_path):
    K.KB(data).table("things")
    hit = _entry(tmp_path)
    entry = json.loads(hit.read_text())
    entry["doc"]["entries"] = [{"a": 666, "source": "https://evil"}]  # well-formed, wrong
    hit.write_text(json.dumps(entry))
    os.chmod(hit, 0o600)
    assert K.KB(data).table("things")[0]["a"] == 666  # our own entry is trusted (same user)
    hit.write_text(json.dumps(entry))
    os.chmod(hit, 0o666)
    assert K.KB(data).table("things")[0]["a"] == 1  # writable by others: a miss (and rewritten)
    hit.write_text(json.dumps(entry))
    os.chmod(hit, 0o600)
    os.chown(hit, 4242, 4242)
    assert K.KB(data).table("things")[0]["a"] == 1  # another user's file: a miss
    kdir = tmp_path / "cache" / "gpuvet" / "kb"
    hit.unlink() if os.path.exists(hit) else None
    K.KB(data).table("things")
    hit = _entry(tmp_path)
    hit.write_text(json.dumps(entry))
    os.chmod(hit, 0o600)
    os.chmod(kdir, 0o777)
    assert K.KB(data).table("things")[0]["a"] == 1  # a directory others can write: never read
    os.chmod(kdir, 0o700)
    os.chown(kdir.parent, 4242, 4242)
    assert K.KB(data).table("things")[0]["a"] == 1  # gpuvet/ owned by another user


def test_symlinked_entry_is_not_followed(data, tmp_path):
    K.KB(data).table("things")
    hit = _entry(tmp_path)
    evil = tmp_path / "evil.json"
    entry = json.loads(hit.read_text())
    entry["doc"]["entries"] = [{"a": 666}]
    evil.write_text(json.dumps(entry))
    hit.unlink()
    hit.symlink_to(evil)
    assert K.KB(data).table("things")[0]["a"] == 1


def test_fifo_in_place_of_an_entry_never_hangs(data, tmp_path):
    K.KB(data).table("things")
    hit = _entry(tmp_path)
    hit.unlink()
    os.mkfifo(hit, 0o600)
    box = []
    t = threading.Thread(target=lambda: box.append(K.KB(data).table("things")), daemon=True)
    t.start()
    t.join(5)
    assert box == [[{"a": 1, "source": "https://x"}]]
