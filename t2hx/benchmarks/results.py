"""Typed results as JSON: how the run cache keeps a simulated case's numbers.

A workload's result is a dataclass whose fields are numbers, strings, lists or tuples of
them, ``X | None`` or nested such dataclasses (t2hx/benchmarks/base.py ``Workload``). JSON
keeps Python floats exactly (shortest repr, NaN included), so a cached result renders to the
same text as the freshly simulated one.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")


def encode(result: Any) -> dict[str, Any]:
    if not dataclasses.is_dataclass(result) or isinstance(result, type):
        raise TypeError(f"a workload result must be a dataclass, not {type(result).__name__}")
    return dataclasses.asdict(result)


def decode(cls: type[T], data: dict[str, Any]) -> T:
    """``cls`` from :func:`encode`'s dict; its field annotations say how."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"a workload result must be a dataclass, not {cls.__name__}")
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _value(hints[f.name], data[f.name])
                  for f in dataclasses.fields(cls) if f.init})


def _value(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return decode(kind, value)
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in args if a is not type(None)), value)
    if origin is list:
        return [_value(args[0], v) for v in value]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_value(args[0], v) for v in value)
        return tuple(_value(a, v) for a, v in zip(args, value))
    if kind is float:
        return float(value)
    return value
