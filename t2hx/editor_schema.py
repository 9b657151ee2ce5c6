"""JSON Schema (draft 2020-12) of the conf files, for editors: the same declarative field
tables the loaders validate with (t2hx/schema.py; ``SYSTEM``, ``PLANE`` and ``TOPOLOGIES`` of
t2hx/conf.py, ``STUDY`` of t2hx/study.py), so an editor flags a misspelt key or a wrong type
while the file is written. The loaders stay the judge: a check that is code (a hostname
pattern, a duration) has no JSON Schema form and is only the loader's. ``t2hx conf schema``
prints them; ``conf/schema/`` holds them (docs/formats.md#editor-schemas)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from t2hx.schema import F

DIALECT = "https://json-schema.org/draft/2020-12/schema"
JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array",
              dict: "object"}


def object_schema(fields: Mapping[str, F | dict]) -> dict[str, Any]:
    """A mapping with fixed keys: unknown keys refused, as the loaders refuse them."""
    return {"type": "object",
            "properties": {key: field_schema(spec) for key, spec in fields.items()},
            "required": [k for k, s in fields.items() if isinstance(s, F) and s.required],
            "additionalProperties": False}


def field_schema(spec: F | dict) -> dict[str, Any]:
    if isinstance(spec, dict):
        return object_schema(spec)
    types = spec.types if isinstance(spec.types, tuple) else (spec.types,)
    names = [JSON_TYPES[t] for t in types if t in JSON_TYPES]
    if not spec.required:
        names.append("null")            # a YAML key left empty means its default
    out: dict[str, Any] = {"type": names[0] if len(names) == 1 else names}
    if spec.doc:
        out["description"] = spec.doc
    if spec.choices is not None:
        out["enum"] = [*spec.choices, *([None] if not spec.required else [])]
    if spec.min is not None:
        out["minimum"] = spec.min
    if spec.max is not None:
        out["maximum"] = spec.max
    if spec.default is not None and not callable(spec.default):
        out["default"] = spec.default
    if spec.items is not None:
        out["items"] = field_schema(spec.items)
    if spec.fields is not None:
        out.update({k: v for k, v in object_schema(spec.fields).items() if k != "type"})
    if spec.values is not None:
        out["additionalProperties"] = field_schema(spec.values)
    return out


def topology_schema(topologies: Mapping[str, Mapping[str, F | dict]]) -> dict[str, Any]:
    """One of the topology kinds, each told apart by its ``kind``."""
    kinds = []
    for kind, fields in topologies.items():
        one = object_schema(fields)
        one["properties"]["kind"] = {"const": kind}
        one["required"] = ["kind", *one["required"]]
        kinds.append(one)
    return {"oneOf": kinds, "description": "kind: " + "|".join(topologies)}


def system_schema() -> dict[str, Any]:
    from t2hx.conf import PLANE, SYSTEM, TOPOLOGIES

    out = object_schema(SYSTEM)
    plane = object_schema(PLANE)
    plane["properties"]["topology"] = topology_schema(TOPOLOGIES)
    out["properties"]["planes"]["additionalProperties"] = plane
    return {"$schema": DIALECT, "title": "t2hx system (conf/systems/*.yaml)", **out}


def study_schema() -> dict[str, Any]:
    from t2hx.study import STUDY

    return {"$schema": DIALECT, "title": "t2hx study (conf/studies/*.yaml)",
            **object_schema(STUDY)}


SCHEMAS = {"system": system_schema, "study": study_schema}
