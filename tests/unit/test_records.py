"""slurmkit.core.records.Record: what typing.NamedTuple gives, checked against it."""

import copy
import pickle
from typing import NamedTuple, Optional, Tuple

import pytest

from slurmkit.core.records import Record


class Point(Record):
    """A point."""

    x: int
    y: int = 0
    tags: Tuple[str, ...] = ()

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> "Point":
        return self._replace(x=self.x + dx)


class TypedPoint(NamedTuple):
    x: int
    y: int = 0
    tags: Tuple[str, ...] = ()


def test_fields_defaults_and_values_match_namedtuple():
    assert Point._fields == TypedPoint._fields == ("x", "y", "tags")
    assert Point._field_defaults == TypedPoint._field_defaults
    for args, kwargs in (((1,), {}), ((1, 2), {}), ((), {"x": 3, "tags": ("a",)}), ((1,), {"y": 5})):
        assert tuple(Point(*args, **kwargs)) == tuple(TypedPoint(*args, **kwargs))


def test_a_record_is_an_immutable_tuple_with_its_methods():
    point = Point(1, -2)
    assert isinstance(point, tuple) and point == (1, -2, ())
    assert point.x == 1 and point[1] == -2 and point.norm1 == 3
    assert point.moved(2) == Point(3, -2)
    assert Point.__doc__ == "A point." and Point.__name__ == "Point" and Point.__module__ == __name__
    with pytest.raises(AttributeError):
        point.x = 5
    with pytest.raises(AttributeError):
        point.other = 5


def test_namedtuple_api():
    point = Point(1, 2, ("a",))
    assert repr(point) == "Point(x=1, y=2, tags=('a',))"
    assert point._asdict() == {"x": 1, "y": 2, "tags": ("a",)}
    assert Point._make([4, 5, ()]) == Point(4, 5)
    assert point._replace(y=7) == Point(1, 7, ("a",))
    assert hash(point) == hash((1, 2, ("a",)))
    assert pickle.loads(pickle.dumps(point)) == point and type(pickle.loads(pickle.dumps(point))) is Point
    assert copy.deepcopy(point) == point and copy.copy(point) is not None
    assert Point.__match_args__ == ("x", "y", "tags")


@pytest.mark.parametrize("call, message", [
    (lambda: Point(), "missing required argument: 'x'"),
    (lambda: Point(1, 2, (), 4), "takes 3 arguments but 4 were given"),
    (lambda: Point(1, z=2), "unexpected keyword argument 'z'"),
    (lambda: Point(1, x=2), "multiple values for argument 'x'"),
    (lambda: Point(1)._replace(z=1), "has no field 'z'"),
    (lambda: Point._make([1]), "expected 3 values, got 1"),
])
def test_wrong_arguments_are_refused_as_python_would(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_a_field_without_default_after_one_with_is_refused():
    with pytest.raises(TypeError, match="without a default follows"):
        class Bad(Record):
            a: int = 1
            b: Optional[int]


def test_annotations_are_not_evaluated():
    namespace = {}
    exec("from __future__ import annotations\nfrom slurmkit.core.records import Record\n"
         "class Lazy(Record):\n    a: NotDefinedAnywhere\n    b: int = 2\n", namespace)
    assert namespace["Lazy"](1) == (1, 2)


def test_slurmkit_records_are_cheap_records():
    """typing.NamedTuple costs ten times a Record at start-up (records.py); a module of records
    leaves its annotations unevaluated."""
    from pathlib import Path

    import slurmkit

    for module in sorted(Path(slurmkit.__file__).parent.rglob("*.py")):
        text = module.read_text()
        assert "(NamedTuple):" not in text, f"{module.name}: use slurmkit.core.records.Record"
        if "(Record):" in text:
            assert "from __future__ import annotations" in text, module.name
