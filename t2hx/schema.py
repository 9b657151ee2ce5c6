"""A small declarative schema for YAML files, so every bad field gets one line naming the
file, the dotted field path and the fix. Schemas are plain data (dicts), not code."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, cast
from collections.abc import Callable, Collection

from t2hx.errors import ConfError


@dataclass
class F:
    """One field: its type(s), whether required, default and extra checks."""

    types: type | tuple[type, ...]
    required: bool = False
    default: Any = None
    choices: Collection[Any] | None = None
    min: float | None = None
    max: float | None = None
    items: F | dict | None = None          # for lists: schema of each item
    fields: dict | None = None               # for dicts with fixed keys
    values: F | dict | None = None         # for dicts with free keys: schema of each value
    doc: str = ""
    check: Callable[[Any], str | None] | None = field(default=None, repr=False)


def one_line(value: object) -> str | None:
    """A check for values that end up on a line of a generated file (opensm.conf, a job
    script): no line breaks or other control characters, which would inject lines."""
    text = str(value)
    return "a value on one line (no line breaks or control characters)" \
        if any(ord(c) < 32 or ord(c) == 127 for c in text) else None


TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true/false",
              list: "a list", dict: "a mapping"}


def _type_name(types: type | tuple[type, ...]) -> str:
    seq = types if isinstance(types, tuple) else (types,)
    return " or ".join(TYPE_NAMES.get(t, t.__name__) for t in seq)


def validate(data: Any, schema: dict, source: object, path: str = "") -> dict:
    """Validate a mapping against ``schema``; return it with defaults filled in."""
    if not isinstance(data, dict):
        raise ConfError(f"expected a mapping, got {type(data).__name__}", file=source,
                        field=path or "(top)", fix="write key: value pairs")
    unknown = sorted(set(data) - set(schema), key=str)   # YAML keys may be numbers or null
    if unknown:
        where = f"{path}.{unknown[0]}" if path else str(unknown[0])
        raise ConfError("unknown key", file=source, field=where,
                        fix=f"use one of: {', '.join(sorted(schema))}")
    out: dict = {}
    for key, spec in schema.items():
        where = f"{path}.{key}" if path else key
        if key not in data or data[key] is None:
            if spec.required:
                raise ConfError("missing required field", file=source, field=where,
                                fix=spec.doc or f"add {key}: <{_type_name(spec.types)}>")
            out[key] = _default(spec)
            continue
        out[key] = check_value(data[key], spec, source, where)
    return out


def _default(spec: F) -> Any:
    if isinstance(spec.default, (list, dict)):
        return type(spec.default)(spec.default)
    if spec.default is None and spec.fields is not None:
        return validate({}, spec.fields, "", "")
    return spec.default


def check_value(value: Any, spec: F, source: object, where: str) -> Any:
    types = spec.types if isinstance(spec.types, tuple) else (spec.types,)
    if float in types and int not in types and isinstance(value, int) \
            and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise ConfError(f"expected {_type_name(spec.types)}, got {value!r}", file=source,
                        field=where, fix=spec.doc or f"write {_type_name(spec.types)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfError(f"{value} is not a finite number", file=source, field=where,
                        fix=spec.doc or "write a finite number")
    if spec.choices is not None and value not in spec.choices:
        raise ConfError(f"'{value}' is not allowed", file=source, field=where,
                        fix=f"use one of: {', '.join(map(str, spec.choices))}")
    # min and max bound only number fields, whose type the isinstance check above confirmed
    if spec.min is not None and cast(float, value) < spec.min:
        raise ConfError(f"{value} is below the minimum {spec.min}", file=source, field=where,
                        fix=spec.doc or f"use a value >= {spec.min}")
    if spec.max is not None and cast(float, value) > spec.max:
        raise ConfError(f"{value} is above the maximum {spec.max}", file=source, field=where,
                        fix=spec.doc or f"use a value <= {spec.max}")
    if isinstance(value, list) and spec.items is not None:
        value = [_check_item(v, spec.items, source, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if spec.fields is not None:
            value = validate(value, spec.fields, source, where)
        elif spec.values is not None:
            _check_keys(value, source, where)
            value = {k: _check_item(v, spec.values, source, f"{where}.{k}")
                     for k, v in value.items()}
    if spec.check is not None:
        problem = spec.check(value)
        if problem:
            raise ConfError(problem, file=source, field=where, fix=spec.doc or "see conf docs")
    return value


def _check_keys(value: dict, source: object, where: str) -> None:
    """Free keys name things (planes, ladders, apps): YAML reads 1, true or null as non-text."""
    for key in value:
        if not isinstance(key, str):
            raise ConfError(f"key {key!r} is not a name", file=source, field=f"{where}.{key}",
                            fix="use a word as the key (quote it if needed)")


def _check_item(value: Any, item: F | dict, source: object, where: str) -> Any:
    if isinstance(item, dict):
        return validate(value, item, source, where)
    return check_value(value, item, source, where)
