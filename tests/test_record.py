"""``@record`` gives the classes on `gpuvet check`'s path what ``@dataclass`` gives them (it only skips the
code generation that costs start-up): each class is compared with its ``@dataclass`` twin."""
import dataclasses
import importlib
import pickle

import pytest

from gpuvet.model.record import record

CLASSES = {
    "gpuvet.model.findings": ["Fix", "Evidence", "Finding", "Deduction", "ReportHeader", "Report"],
    "gpuvet.model.facts": ["Column", "TableSpec", "Row", "ProbeError", "Facts"],
    "gpuvet.app.env": ["Environment"], "gpuvet.render": ["Format"],
    "gpuvet.checks.base": ["Fail", "Unknown", "Skip", "Pass", "Context", "Check"],
    "gpuvet.app.engine": ["Policy"], "gpuvet.app.check": ["CheckOptions"], "gpuvet.app.config": ["Setting", "Config"],
    "gpuvet.model.taxonomy": ["Cause", "Component"], "gpuvet.probes.system": ["CommandResult", "FileStat"],
    "gpuvet.probes.base": ["Probe"], "gpuvet.probes.elf": ["Section", "ElfInfo", "CodeObjects", "RawSection"],
    "gpuvet.probes.loader": ["CacheEntry", "Resolution"], "gpuvet.kb.query": ["Variant", "TorchRelease", "Gpu"],
}
ALL = [(m, c) for m, cs in CLASSES.items() for c in cs]


def _frozen(cls) -> bool:
    return cls.__setattr__ is not object.__setattr__


def _twin(cls):
    """The same class body under ``@dataclass`` (the reference)."""
    specs = []
    for f in dataclasses.fields(cls):
        kw = {}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**kw)))
    ns = {k: v for k, v in vars(cls).items() if k == "__post_init__"}
    twin = dataclasses.make_dataclass(cls.__name__, specs, namespace=ns, frozen=_frozen(cls))
    twin.__qualname__ = cls.__qualname__
    return twin


def _values(cls, salt: str):
    return [f"{salt}{i}" for i, _ in enumerate(dataclasses.fields(cls))]


@pytest.mark.parametrize("mod,name", ALL)
def test_record_class_behaves_as_its_dataclass_twin(mod, name):
    cls = getattr(importlib.import_module(mod), name)
    twin = _twin(cls)
    assert dataclasses.is_dataclass(cls)
    assert [f.name for f in dataclasses.fields(cls)] == [f.name for f in dataclasses.fields(twin)]
    assert cls.__match_args__ == twin.__match_args__
    vals = _values(cls, "a")
    names = [f.name for f in dataclasses.fields(cls)]
    a, t = cls(*vals), twin(*vals)
    assert repr(a) == repr(t)
    assert cls(**dict(zip(names, vals))) == a and (a == cls(*_values(cls, "b"))) == (t == twin(*_values(cls, "b")))
    assert a.__eq__(object()) is NotImplemented
    required = [f for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    short = vals[:len(required)]
    assert repr(cls(*short)) == repr(twin(*short))  # the defaults and default factories
    if _frozen(cls):
        assert hash(a) == hash(t)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{names[0]}'"):
            setattr(a, names[0], "x")
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{names[0]}'"):
            delattr(a, names[0])
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.not_a_field = 1
        assert dataclasses.replace(a, **{names[0]: "z"}) == dataclasses.replace(a, **{names[0]: "z"})
    else:
        assert cls.__hash__ is None and twin.__hash__ is None
        setattr(a, names[0], "x")
        assert getattr(a, names[0]) == "x"
    with pytest.raises(TypeError):
        cls(*vals, "one too many")
    with pytest.raises(TypeError):
        cls(**{names[0]: "x", "no_such_field": 1})
    if required:
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(vals[0], **{names[0]: "again"})


def test_record_pickles_copies_and_guards_recursive_repr():
    import copy

    @record
    class Node:
        """A node."""

        value: object = None
        items: list = dataclasses.field(default_factory=list)

    @record(frozen=True)
    class Leaf:
        """A leaf."""

        name: str
        size: int = 0

    n = Node()
    n.items.append(n)
    assert repr(n) == "test_record_pickles_copies_and_guards_recursive_repr.<locals>.Node(value=None, items=[...])"
    assert Node().items is not Node().items  # a fresh list each time
    leaf = Leaf("x", 3)
    assert copy.deepcopy(leaf) == leaf and copy.copy(leaf) == leaf
    assert pickle.loads(pickle.dumps(CommandResultExample())) == CommandResultExample()


def CommandResultExample():
    from gpuvet.probes.system import CommandResult

    return CommandResult(("ls", "-l"), 0, "out", "")


def test_record_refuses_what_it_does_not_generate_like_dataclass():
    with pytest.raises(TypeError, match="docstring"):
        @record
        class NoDoc:
            a: int

    with pytest.raises(TypeError, match="__eq__"):
        @record
        class OwnEq:
            """Own eq."""

            a: int

            def __eq__(self, other):
                return True

    with pytest.raises(TypeError, match="plain fields"):
        @record
        class NotInit:
            """init=False."""

            a: int = dataclasses.field(default=0, init=False)
