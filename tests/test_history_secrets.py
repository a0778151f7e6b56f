"""No secret in anything snapshot / history / diff / rollback / report / bundle write or print: the
secret corpus (tests/secret_corpus.py, when present) planted in the environment, then every output
and every file under the test's directories (the SQLite store included) grepped for its values."""
from __future__ import annotations

import os
import tarfile

from conftest import run_cli

try:
    from secret_corpus import leaks, leaks_in_tree, secret_env
except ImportError:  # the shared corpus not there yet: a few real-format secrets of our own
    _VALUES = {"HF_TOKEN": "hf_" + "Qw8e" * 9, "GITHUB_TOKEN": "ghp_" + "Zx3c" * 9,
               "MY_PASSWORD": "hunter2-Kq81xZp", "WANDB_API_KEY": "0f" * 20,
               "PIP_INDEX_URL": "https://bob:PiPpAsS77x@pypi.internal.example/simple"}

    def secret_env(base=None):
        return {**(base or {}), **_VALUES}

    def leaks(text):
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        vals = [v if "://" not in v else "PiPpAsS77x" for v in _VALUES.values()]
        return [v for v in vals if v in text]

    def leaks_in_tree(root):
        out = {}
        for d, _, files in os.walk(root):
            for n in files:
                with open(os.path.join(d, n), "rb") as fh:
                    found = leaks(fh.read())
                if found:
                    out[os.path.join(d, n)] = found
        return out


def test_no_secret_in_any_history_output(tmp_path):
    env = secret_env({"NO_COLOR": "1", "PATH": os.environ.get("PATH", ""), "XDG_DATA_HOME": str(tmp_path / "xdg"),
                      "HOME": str(tmp_path)})
    outs = []

    def run(*argv, code=0):
        r = run_cli(list(argv), environ=env)
        assert r.code == code, (argv, r.err)
        outs.extend([r.out, r.err])
        return r

    snap_file = tmp_path / "s.json"
    run("snapshot", "--label", "a", "--mark-good", "-o", str(snap_file))
    run("snapshot", "--format", "json")
    run("history")
    run("history", "--format", "json")
    for fmt in ("terminal", "json", "markdown", "junit"):
        run("diff", "good", "now", "--format", fmt, "--fail-on", "never")
    run("rollback", "--to", "good")
    run("rollback", "--to", str(snap_file), "--format", "sh", "-o", str(tmp_path / "plan.sh"))
    run("rollback", "--to", "good", "--format", "json", "-o", str(tmp_path / "plan.json"))
    run("report", "-o", str(tmp_path / "r.html"))
    run("report")
    run("report", "--bundle", str(tmp_path / "b.tar.gz"))
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    assert leaks("\n".join(outs)) == []
    assert leaks_in_tree(tmp_path) == {}  # snapshot, plan, report, bundle members, the SQLite database (and WAL)
    assert (tmp_path / "xdg" / "gpuvet" / "history.sqlite").exists()
