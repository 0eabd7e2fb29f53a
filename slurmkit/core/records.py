"""Immutable records written like typing.NamedTuple, at a tenth of its start-up cost.

slurmkit's plain data (the spec, the profile, the plan, ...) are about 60 tuple records, and
`slurmkit render` defines most of them before it does anything. typing.NamedTuple evaluates
and type-checks each field's annotation and then builds a collections.namedtuple, which
compiles a ``__new__`` for the class with ``eval``: about 0.21 ms a class, 13 ms of a 135 ms
render, where the whole budget above the jinja2 + yaml + click import floor is 25 ms
(bench/startup.py).

``class Venv(Record)`` makes what ``class Venv(NamedTuple)`` makes, without either cost: a
tuple subclass with the annotated fields (read only for their names: a module of records says
``from __future__ import annotations``, so annotations are never evaluated), the body's
defaults, docstring, methods and properties, and namedtuple's API (``_fields``,
``_field_defaults``, ``_make``, ``_replace``, ``_asdict``, its repr, pickling). Its one
``__new__`` is shared by every record and checks the arguments as a compiled one would:
about 0.02 ms a class. Type checkers are shown typing.NamedTuple itself.
"""

from operator import itemgetter
from typing import TYPE_CHECKING

try:  # the field accessor namedtuple uses (C, CPython 3.8+)
    from _collections import _tuplegetter  # type: ignore[import-not-found]  # it is there: typeshed has no stub of this C module
except ImportError:  # pragma: no cover - other Pythons
    def _tuplegetter(index, doc):
        return property(itemgetter(index), doc=doc)

__all__ = ["Record"]

# What a class body holds that is not the record's own (typing.NamedTuple leaves the same out).
_NOT_COPIED = frozenset({"__module__", "__qualname__", "__annotations__", "__orig_bases__"})
_tuple_new = tuple.__new__


def _new(cls, *args, **kwargs):
    if kwargs or len(args) != len(cls._fields):
        args = _arguments(cls, args, kwargs)
    return _tuple_new(cls, args)


def _arguments(cls, args, kwargs):
    """The values of every field from positional and keyword arguments and the defaults,
    refused as a compiled ``__new__`` would refuse them."""
    fields = cls._fields
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments but {len(args)} were given")
    values = list(args)
    for field in fields[len(args):]:
        if field in kwargs:
            values.append(kwargs.pop(field))
        elif field in cls._field_defaults:
            values.append(cls._field_defaults[field])
        else:
            raise TypeError(f"{cls.__name__}() missing required argument: {field!r}")
    if kwargs:
        field = next(iter(kwargs))
        how = "multiple values for argument" if field in fields else "an unexpected keyword argument"
        raise TypeError(f"{cls.__name__}() got {how} {field!r}")
    return values


def _make(cls, iterable):
    values = tuple(iterable)
    if len(values) != len(cls._fields):
        raise TypeError(f"{cls.__name__}: expected {len(cls._fields)} values, got {len(values)}")
    return _tuple_new(cls, values)


def _replace(self, **changes):
    """A copy with the named fields changed."""
    record = self._make([changes.pop(field, value) for field, value in zip(self._fields, self)])
    if changes:
        raise ValueError(f"{type(self).__name__} has no field {next(iter(changes))!r}")
    return record


def _asdict(self):
    return dict(zip(self._fields, self))


def _repr(self):
    return f"{type(self).__name__}({', '.join(f'{field}={value!r}' for field, value in zip(self._fields, self))})"


def _getnewargs(self):
    return tuple(self)


_SHARED = {"__slots__": (), "__new__": _new, "_make": classmethod(_make), "_replace": _replace, "_asdict": _asdict,
           "__repr__": _repr, "__getnewargs__": _getnewargs}


class _RecordType(type):
    """Builds each ``class X(Record)`` as a tuple subclass; Record itself is an ordinary class."""

    def __new__(mcls, name, bases, namespace):
        if not bases:
            return super().__new__(mcls, name, bases, namespace)
        fields = tuple(namespace.get("__annotations__", {}))
        defaults = {field: namespace[field] for field in fields if field in namespace}
        if tuple(defaults) != fields[len(fields) - len(defaults):]:
            raise TypeError(f"{name}: a field without a default follows one with a default")
        body = {key: value for key, value in namespace.items() if key not in _NOT_COPIED and key not in fields}
        members = {**_SHARED, "__module__": namespace.get("__module__"), "__doc__": None, **body,
                   "_fields": fields, "_field_defaults": defaults, "__match_args__": fields}
        for index, field in enumerate(fields):
            members[field] = _tuplegetter(index, f"field {index} of {name}")
        record = type(name, (tuple,), members)
        record.__qualname__ = namespace.get("__qualname__", name)
        return record


if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    class Record(metaclass=_RecordType):
        """Base of slurmkit's records: ``class Name(Record):`` with annotated fields."""
