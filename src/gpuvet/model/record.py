"""``@record`` / ``@record(frozen=True)``: ``@dataclass`` for the classes on `gpuvet check`'s path, without
generating source code.

On Python 3.11 and 3.12 ``@dataclass`` writes each method it adds (``__init__``, ``__repr__``, ``__eq__``
and, when frozen, ``__setattr__``, ``__delattr__``, ``__hash__``) as text and compiles it: about 3.8 M
instructions for a frozen class of five fields, about 140 M for the 37 classes `gpuvet check` imports (a
quarter of its start-up on the 2-CPU VM; bench/results/).  ``record`` lets ``dataclasses`` do everything
else (the fields, their defaults and factories, ``__dataclass_fields__``, ``__match_args__``, so that
``dataclasses.fields``/``replace``/``asdict`` work) and adds the same methods as closures.

What the classes get is what ``@dataclass`` / ``@dataclass(frozen=True)`` gives them: the same fields, the
same ``repr``, equality, hashing and frozen errors; tests/test_record.py compares each class with its
``@dataclass`` twin.  Only the plain features are supported (defaults, ``default_factory``,
``__post_init__``, inheritance from another record): anything else (``field(init=False)``, ``compare``,
``kw_only``, ``InitVar``, a method of its own among those generated) is refused at import, so a class that
needs more stays a ``@dataclass``.
"""
from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

if TYPE_CHECKING:  # the type checker reads the fields and __init__ of a record as of a dataclass (PEP 681)
    from typing_extensions import dataclass_transform
else:
    try:
        from typing import dataclass_transform
    except ImportError:  # Python 3.10: only a marker for type checkers
        def dataclass_transform(**_kwargs):
            return lambda f: f

_T = TypeVar("_T", bound=type)
_REQUIRED, _DEFAULT, _FACTORY = 0, 1, 2
_GENERATED = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


@overload
def record(cls: _T, /) -> _T: ...


@overload
def record(*, frozen: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    def wrap(c: Any) -> Any:
        return _make(c, frozen)

    return wrap if cls is None else wrap(cls)


def _make(cls: Any, frozen: bool) -> Any:
    own = [name for name in _GENERATED if name in cls.__dict__ and not (name == "__hash__" and cls.__dict__[name] is None)]
    if own:
        raise TypeError(f"@record {cls.__qualname__}: defines {', '.join(own)}; use @dataclass for it")
    if not cls.__dict__.get("__doc__"):
        raise TypeError(f"@record {cls.__qualname__}: needs a docstring (@dataclass would build one with inspect)")
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)  # fields only: no code is generated
    fields = dataclasses.fields(cls)
    for f in fields:
        if not (f.init and f.repr and f.compare and f.hash is None and not getattr(f, "kw_only", False)):
            raise TypeError(f"@record {cls.__qualname__}.{f.name}: only plain fields; use @dataclass for it")
    names = tuple(f.name for f in fields)
    fill = tuple((_FACTORY, f.default_factory) if f.default_factory is not dataclasses.MISSING
                 else (_DEFAULT, f.default) if f.default is not dataclasses.MISSING else (_REQUIRED, None)
                 for f in fields)
    cls.__init__ = _init(cls, names, fill, frozen, hasattr(cls, "__post_init__"))
    cls.__repr__ = _repr(cls, names)
    cls.__eq__ = _eq(cls, names)
    if frozen:
        cls.__hash__ = _hash(cls, names)
        cls.__setattr__, cls.__delattr__ = _frozen(cls, names)
    else:
        cls.__hash__ = None  # what @dataclass (eq=True, not frozen) does: unhashable
    return cls


def _named(cls: Any, fn: Any, name: str) -> Any:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    fn.__module__ = cls.__module__
    return fn


def _init(cls: Any, names: tuple[str, ...], fill: tuple[tuple[int, Any], ...], frozen: bool, post: bool) -> Any:
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    setter = object.__setattr__ if frozen else setattr
    qual = f"{cls.__qualname__}.__init__()"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > n:
            raise TypeError(f"{qual} takes {n + 1} positional arguments but {len(args) + 1} were given")
        vals = list(args)
        if kwargs:
            for k in kwargs:
                i = index.get(k)
                if i is None:
                    raise TypeError(f"{qual} got an unexpected keyword argument {k!r}")
                if i < len(args):
                    raise TypeError(f"{qual} got multiple values for argument {k!r}")
        for i in range(len(args), n):
            name = names[i]
            if name in kwargs:
                vals.append(kwargs[name])
                continue
            kind, value = fill[i]
            if kind == _REQUIRED:
                missing = [m for j, m in enumerate(names) if j >= len(args) and m not in kwargs and fill[j][0] == _REQUIRED]
                raise TypeError(f"{qual} missing {len(missing)} required argument{'s' if len(missing) > 1 else ''}: "
                                + ", ".join(repr(m) for m in missing))
            vals.append(value() if kind == _FACTORY else value)
        for name, value in zip(names, vals):
            setter(self, name, value)
        if post:
            self.__post_init__()

    return _named(cls, __init__, "__init__")


def _repr(cls: Any, names: tuple[str, ...]) -> Any:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = (id(self), threading.get_ident())
        if key in running:  # what dataclasses' recursive-repr guard prints
            return "..."
        running.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({inner})"

    return _named(cls, __repr__, "__repr__")


def _eq(cls: Any, names: tuple[str, ...]) -> Any:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)
        return NotImplemented

    return _named(cls, __eq__, "__eq__")


def _hash(cls: Any, names: tuple[str, ...]) -> Any:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in names))

    return _named(cls, __hash__, "__hash__")


def _frozen(cls: Any, names: tuple[str, ...]) -> tuple[Any, Any]:
    fields = frozenset(names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return _named(cls, __setattr__, "__setattr__"), _named(cls, __delattr__, "__delattr__")
