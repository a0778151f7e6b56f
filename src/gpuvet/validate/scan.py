"""`gpuvet scan PATH`: read a project's Python code as an AST (never importing it) and list what the
knowledge base knows about: operators known to differ across versions and backends, calls that break or
change meaning on ROCm, settings made in code, environment variables set through ``os.environ``, and the
dtypes the code uses (so ``validate --ops-from`` can test exactly those).

Pure: takes file paths and the ``code_patterns`` KB entries, returns plain data.
"""
from __future__ import annotations

import ast
import fnmatch
import os
from dataclasses import dataclass, field
from typing import Any, Iterable

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "env", "site-packages", "node_modules", "__pycache__",
             ".tox", ".nox", ".mypy_cache", ".pytest_cache", "build", "dist"}
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_FILES = 20000

DTYPE_NAMES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
               "float64": "fp64", "double": "fp64", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8",
               "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8"}
DTYPE_METHODS = {"half": "fp16", "bfloat16": "bf16", "float": "fp32", "double": "fp64"}


@dataclass
class Hit:
    kind: str  # operator | rocm | setting | env | dtype
    name: str  # what matched (dotted name, env var, dtype label)
    path: str
    line: int
    col: int
    source: str  # the line of code
    entry: int | None = None  # index into the code_patterns entries
    value: str | None = None  # assigned value / env value, as written

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ScanResult:
    files: int = 0
    hits: list[Hit] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    truncated: bool = False

    @property
    def ops(self) -> set[str]:
        return {h.name for h in self.hits if h.kind == "operator"}

    @property
    def dtypes(self) -> set[str]:
        return {h.name for h in self.hits if h.kind == "dtype"}


def iter_files(root: str) -> Iterable[str]:
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                yield os.path.join(dirpath, fn)


def scan_paths(paths: Iterable[str], entries: list[dict[str, Any]]) -> ScanResult:
    res = ScanResult()
    matcher = _Matcher(entries)
    for root in paths:
        for path in iter_files(root):
            if res.files >= MAX_FILES:
                res.truncated = True
                return res
            try:
                st = os.stat(path)
                if st.st_size > MAX_FILE_BYTES:
                    res.errors.append((path, f"larger than {MAX_FILE_BYTES // 2**20} MiB, skipped"))
                    continue
                with open(path, "rb") as fh:
                    text = fh.read().decode("utf-8", "replace")
            except OSError as exc:
                res.errors.append((path, exc.strerror or str(exc)))
                continue
            res.files += 1
            try:
                tree = ast.parse(text, filename=path)
            except (SyntaxError, ValueError) as exc:
                res.errors.append((path, f"not valid Python: {getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"))
                continue
            res.hits.extend(_Visitor(path, text.splitlines(), matcher).run(tree))
    return res


class _Matcher:
    def __init__(self, entries: list[dict[str, Any]]):
        self.entries = entries
        self.calls: dict[str, int] = {}
        self.methods: dict[str, int] = {}
        self.settings: dict[str, int] = {}
        self.env_exact: dict[str, int] = {}
        self.env_glob: list[tuple[str, int]] = []
        for i, e in enumerate(entries):
            for m in e["match"]:
                if e["kind"] == "env":
                    (self.env_glob.append((m, i)) if "*" in m else self.env_exact.setdefault(m, i))
                elif e["kind"] == "setting":
                    self.settings.setdefault(m, i)
                    self.calls.setdefault(m, i)
                else:
                    self.calls.setdefault(m, i)
                    if e.get("method") and "." not in m:
                        self.methods.setdefault(m, i)

    def env(self, name: str) -> int | None:
        if name in self.env_exact:
            return self.env_exact[name]
        for pat, i in self.env_glob:
            if fnmatch.fnmatchcase(name, pat):
                return i
        return None

    def prefix(self, dotted: str) -> int | None:
        """A call or attribute whose dotted name is, or starts with, a known name."""
        if dotted in self.calls:
            return self.calls[dotted]
        parts = dotted.split(".")
        for k in range(len(parts) - 1, 1, -1):
            head = ".".join(parts[:k])
            if head in self.calls and self.entries[self.calls[head]]["kind"] in ("rocm", "setting"):
                return self.calls[head]
        return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: str, lines: list[str], matcher: _Matcher):
        self.path, self.lines, self.m = path, lines, matcher
        self.aliases: dict[str, str] = {}
        self.hits: list[Hit] = []
        self.os_names = {"os"}
        self.environ_names: set[str] = set()

    def run(self, tree: ast.AST) -> list[Hit]:
        self.visit(tree)
        seen, out = set(), []
        for h in self.hits:
            key = (h.kind, h.name, h.line, h.col)
            if key not in seen:
                seen.add(key)
                out.append(h)
        return out

    # ------------------------------------------------------------------ names
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                self.aliases.setdefault(a.name.split(".")[0], a.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not node.module or node.level:
            return
        for a in node.names:
            full = f"{node.module}.{a.name}"
            self.aliases[a.asname or a.name] = full
            if full == "os.environ":
                self.environ_names.add(a.asname or a.name)

    def dotted(self, node: ast.AST) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id, node.id)
        return ".".join([head] + parts[::-1])

    def add(self, kind: str, name: str, node: ast.AST, entry: int | None = None, value: str | None = None) -> None:
        line = getattr(node, "lineno", 0)
        src = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.hits.append(Hit(kind, name, self.path, line, getattr(node, "col_offset", 0) + 1, src[:200], entry, value))

    # ------------------------------------------------------------------ visitors
    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        if name:
            i = self.m.prefix(name)
            if i is not None:
                e = self.m.entries[i]
                if e["kind"] == "operator":
                    self.add("operator", e.get("op", name), node, i)
                elif e.get("arg"):
                    val = _arg(node, e["arg"], 0)
                    if val is not None and val not in e.get("allowed", []):
                        self.add(e["kind"], name, node, i, val)
                else:
                    self.add(e["kind"], name, node, i, _arg(node, None, 0))
            self._env_call(name, node)
            last = name.rsplit(".", 1)[-1]
            if last == "set_float32_matmul_precision" and _arg(node, None, 0) in ("high", "medium"):
                self.add("dtype", "tf32", node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("half", "bfloat16") and not node.args:
            self.add("dtype", DTYPE_METHODS[node.func.attr], node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in self.m.methods:
            i = self.m.methods[node.func.attr]
            self.add("operator", self.m.entries[i].get("op", node.func.attr), node, i)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and "@" in self.m.calls:
            i = self.m.calls["@"]
            self.add("operator", self.m.entries[i].get("op", "matmul"), node, i)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.dotted(node)
        if name and name.startswith("torch."):
            last = name.rsplit(".", 1)[-1]
            if last in DTYPE_NAMES and name.count(".") == 1:
                self.add("dtype", DTYPE_NAMES[last], node)
            elif isinstance(node.ctx, ast.Load) and name in self.m.calls and self.m.entries[self.m.calls[name]]["kind"] == "rocm":
                self.add("rocm", name, node, self.m.calls[name])
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._assign(t, node.value, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assign(node.target, node.value, node)
        self.generic_visit(node)

    def _assign(self, target: ast.AST, value: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = self.dotted(target)
            if name:
                i = self.m.prefix(name)
                if i is not None and self.m.entries[i]["kind"] in ("setting", "rocm"):
                    self.add(self.m.entries[i]["kind"], name, node, i, _literal(value))
                    if name.endswith("allow_tf32") and _literal(value) == "True":
                        self.add("dtype", "tf32", node)
        if isinstance(target, ast.Subscript) and self._is_environ(target.value):
            key = _literal(target.slice)
            if key:
                self._env(key, node, _literal(value))

    # ------------------------------------------------------------------ os.environ
    def _is_environ(self, node: ast.AST) -> bool:
        name = self.dotted(node)
        return name == "os.environ" or (isinstance(node, ast.Name) and node.id in self.environ_names)

    def _env(self, key: str, node: ast.AST, value: str | None) -> None:
        i = self.m.env(key)
        if i is not None:
            self.add("env", key, node, i, value)

    def _env_call(self, name: str, node: ast.Call) -> None:
        if name in ("os.putenv",) or (name.endswith(".setdefault") and self._is_environ(node.func.value)):  # type: ignore[attr-defined]
            key = _arg(node, None, 0)
            if key:
                self._env(key, node, _arg(node, None, 1))
        elif name.endswith(".update") and isinstance(node.func, ast.Attribute) and self._is_environ(node.func.value):
            for a in node.args:
                if isinstance(a, ast.Dict):
                    for k, v in zip(a.keys, a.values):
                        key = _literal(k) if k is not None else None
                        if key:
                            self._env(key, node, _literal(v))
            for kw in node.keywords:
                if kw.arg:
                    self._env(kw.arg, node, _literal(kw.value))


def _literal(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return str(v)


def _arg(node: ast.Call, kw: str | None, pos: int) -> str | None:
    if kw:
        for k in node.keywords:
            if k.arg == kw:
                return _literal(k.value)
    if len(node.args) > pos:
        return _literal(node.args[pos])
    return None
