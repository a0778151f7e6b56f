"""The KB loader: lazy tables, the pickle cache keyed on the data file, and its failure modes."""
import os
import shutil

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
    cached = list((tmp_path / "cache" / "gpuvet" / "kb").glob("things-*.pickle"))
    assert len(cached) == 1
    # a changed file is a new cache key: never a stale answer
    (data / "things.yaml").write_text("table: things\nentries:\n  - {a: 2, source: 'https://x'}\n")
    os.utime(data / "things.yaml", ns=(1, 1))
    assert K.KB(data).table("things") == [{"a": 2, "source": "https://x"}]


def test_corrupt_cache_falls_back_to_yaml(data, tmp_path):
    K.KB(data).table("things")
    for p in (tmp_path / "cache" / "gpuvet" / "kb").glob("things-*.pickle"):
        p.write_bytes(b"not a pickle")
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
