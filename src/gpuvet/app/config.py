"""Project configuration, found the way ruff finds its own.

From the working directory upwards, the first directory holding ``.gpuvet.toml`` or ``gpuvet.toml``
(a top-level table) or a ``pyproject.toml`` with a ``[tool.gpuvet]`` table wins (a pyproject.toml without
that table is passed over); when none is found, the user's ``$XDG_CONFIG_HOME/gpuvet/gpuvet.toml``
(``~/.config/gpuvet/gpuvet.toml``).  Settings::

    [tool.gpuvet]
    select = ["DRV", "BLD"]        # code prefixes to run
    ignore = ["PKG063"]            # code prefixes to skip
    fail-on = "warning"            # info | warning | error | critical | never
    python = ".venv/bin/python"    # the interpreter to examine (relative to the file's directory)

    [tool.gpuvet.ack]              # acknowledged findings, with the reason
    BLD045 = "the system cuDNN belongs to the host's other tools"

The command line wins over the environment (``GPUVET_PYTHON``), which wins over the file.
``gpuvet config`` prints every resolved setting and where it came from.
"""
from __future__ import annotations

import os
from dataclasses import field
from typing import Any, Mapping

from gpuvet.model.errors import UsageError
from gpuvet.model.record import record

FILES = (".gpuvet.toml", "gpuvet.toml", "pyproject.toml")
KEYS = {"select", "ignore", "fail-on", "ack", "python"}
FAIL_ON = ("info", "warning", "error", "critical", "never")


@record
class Setting:
    """A resolved setting and where it came from."""

    value: Any
    origin: str  # "default" | "command line" | "environment GPUVET_PYTHON" | "<path> [tool.gpuvet]"


@record
class Config:
    """The configuration file found (if any) and the settings it holds."""

    path: str | None = None  # the file read, if any
    settings: dict[str, Setting] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        s = self.settings.get(key)
        return default if s is None else s.value


def _load_toml(path: str) -> dict[str, Any]:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise UsageError(f"{path}: reading TOML needs Python 3.11 or the 'tomli' package") from None
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None


def may_hold_gpuvet_table(raw: bytes) -> bool:
    """Whether a pyproject.toml's bytes can hold a ``[tool.gpuvet]`` table (in any TOML spelling:
    a header, dotted keys, a key under ``[tool]``, an inline table).  Never False when there is one:
    it answers True for anything it cannot rule out (a multi-line string, a line it cannot place), so
    only a file that is certainly without it skips the TOML parser (check's start-up)."""
    if b"gpuvet" not in raw:
        return False
    if b'"""' in raw or b"'''" in raw:
        return True

    def norm(b: bytes) -> bytes:
        return b.replace(b" ", b"").replace(b"\t", b"").replace(b'"', b"").replace(b"'", b"")

    table = b""
    for line in raw.splitlines():
        s = line.strip()
        if s.startswith(b"["):
            end = s.find(b"]")
            table = norm(s[:end if end >= 0 else len(s)].lstrip(b"["))
            if table.startswith(b"tool.gpuvet") or b"gpuvet" in table and end < 0:
                return True
            continue
        if b"gpuvet" not in line:
            continue
        key = norm(s.split(b"=", 1)[0])
        full = table + b"." + key if table else key
        if full.startswith(b"tool.gpuvet") or full == b"tool" or (not table and key.startswith(b"tool")):
            return True
    return False


def _mentions_gpuvet(path: str) -> bool:
    """``may_hold_gpuvet_table`` of a file; an unreadable file answers True (reading it reports why)."""
    try:
        with open(path, "rb") as fh:
            return may_hold_gpuvet_table(fh.read())
    except OSError:
        return True


def find(cwd: str, environ: Mapping[str, str]) -> tuple[str | None, dict[str, Any]]:
    """The configuration file that applies in ``cwd`` and its gpuvet table (empty when none)."""
    d = os.path.abspath(cwd)
    while True:
        for name in FILES:
            p = os.path.join(d, name)
            if not os.path.isfile(p):
                continue
            if name == "pyproject.toml" and not _mentions_gpuvet(p):
                continue  # no [tool.gpuvet] can be in it: not parsed (check's start-up)
            doc = _load_toml(p)
            if name == "pyproject.toml":
                found = doc.get("tool")
                tool = found if isinstance(found, dict) else {}
                if "gpuvet" not in tool:
                    continue
                table = tool["gpuvet"]
            else:
                table = doc.get("tool", {}).get("gpuvet", doc) if isinstance(doc.get("tool"), dict) else doc
            if not isinstance(table, dict):
                raise UsageError(f"{p}: [tool.gpuvet] must be a table")
            return p, table
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
    user = os.path.join(base, "gpuvet", "gpuvet.toml")
    if os.path.isfile(user):
        return user, _load_toml(user)
    return None, {}


def _strings(path: str, key: str, val: Any) -> tuple[str, ...]:
    if isinstance(val, str):
        val = [val]
    if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
        raise UsageError(f"{path}: {key} must be a list of rule codes")
    return tuple(v.strip().upper() for v in val)


def load(cwd: str, environ: Mapping[str, str]) -> Config:
    """Read and validate the configuration (unknown keys and bad values are usage errors, exit 2)."""
    path, table = find(cwd, environ)
    cfg = Config(path=path)
    if path is None:
        return cfg
    where = f"{path}" + (" [tool.gpuvet]" if path.endswith("pyproject.toml") else "")
    unknown = sorted(set(table) - KEYS)
    if unknown:
        import difflib

        hints = [f"{k!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(k, KEYS, 1)) else repr(k)
                 for k in unknown]
        raise UsageError(f"{where}: unknown setting {', '.join(hints)}; known: {', '.join(sorted(KEYS))}")
    if "select" in table:
        cfg.settings["select"] = Setting(_strings(path, "select", table["select"]), where)
    if "ignore" in table:
        cfg.settings["ignore"] = Setting(_strings(path, "ignore", table["ignore"]), where)
    if "fail-on" in table:
        v = table["fail-on"]
        if v not in FAIL_ON:
            raise UsageError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}, not {v!r}")
        cfg.settings["fail-on"] = Setting(v, where)
    if "ack" in table:
        acks = table["ack"]
        if not isinstance(acks, dict) or not all(isinstance(r, str) and r.strip() for r in acks.values()):
            raise UsageError(f"{where}: ack must be a table of CODE = \"reason\"")
        cfg.settings["ack"] = Setting({k.strip().upper(): v.strip() for k, v in acks.items()}, where)
    if "python" in table:
        v = table["python"]
        if not isinstance(v, str) or not v:
            raise UsageError(f"{where}: python must be the path of an interpreter")
        p = v if os.path.isabs(v) else os.path.normpath(os.path.join(os.path.dirname(path), v))
        cfg.settings["python"] = Setting(p, where)
    return cfg


def resolve(cfg: Config, environ: Mapping[str, str], *, select=(), ignore=(), ack: Mapping[str, str] | None = None,
            fail_on: str | None = None, python: str | None = None) -> dict[str, Setting]:
    """Every setting with its value and origin: command line > environment > file > default."""
    out: dict[str, Setting] = {}

    def pick(key: str, cli_value: Any, default: Any, env_key: str | None = None) -> None:
        if cli_value:
            out[key] = Setting(cli_value, "command line")
        elif env_key and environ.get(env_key):
            out[key] = Setting(environ[env_key], f"environment {env_key}")
        elif key in cfg.settings:
            out[key] = cfg.settings[key]
        else:
            out[key] = Setting(default, "default")

    pick("select", tuple(select), ())
    pick("ignore", tuple(ignore), ())
    pick("fail-on", fail_on, "error")
    pick("python", python, None, "GPUVET_PYTHON")
    # acknowledgements add up: the file's, then the command line's (which win for the same code)
    merged = dict(cfg.get("ack", {}) or {})
    merged.update(ack or {})
    origin = " + ".join(o for o, present in ((cfg.settings["ack"].origin if "ack" in cfg.settings else "", bool(cfg.get("ack"))),
                                            ("command line", bool(ack))) if present) or "default"
    out["ack"] = Setting(merged, origin)
    return out
