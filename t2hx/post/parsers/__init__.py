"""One parser module per benchmark family; names map to them through the benchmark
registry (t2hx/benchmarks/: a benchmark module's ``parser`` binding names the parser).

A binding is a module here (``imb``: ``t2hx.post.parsers.imb.parse``) or, for a site's
benchmark, any importable module with its function (``sitebench.osu:parse``; ``parse``
when no function is named). Every parser is ``parse(text) -> list[Record]`` and raises
:class:`t2hx.post.records.ParseError` when the text holds no result. :func:`parse_text` adds
what all parsers share: the ``# t2hx-simulated:`` first line (t2hx/wire.py) is stripped
and recorded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from t2hx import benchmarks
from t2hx.post.records import ParseError, Record
from t2hx.wire import split_simulated

# The registry's parser bindings, plus ``walltime``: only the agreed solver line of any app.
FAMILIES = tuple(dict.fromkeys([b.parser for b in benchmarks.REGISTRY] + ["walltime"]))


def family(name: str) -> str | None:
    """The parser binding for a binding, family or benchmark name (``IMB-Allreduce`` →
    ``imb``), or None. Names the registry does not know fall back to their first ``-`` part,
    so a run of a benchmark variant not in the registry (``imb-pingpong``) still parses."""
    if name in FAMILIES:          # a binding as the registry spells it (module paths: case)
        return name
    key = name.strip().lower()
    if key in FAMILIES:
        return key
    for cand in (key, key.replace("_", "-").split("-")[0]):
        hit = benchmarks.find(cand)
        if hit is not None:
            return hit[0].parser
        if cand in FAMILIES:
            return cand
    return None


def module(name: str) -> ModuleType:
    """The module of the parser of a binding, family or benchmark name."""
    return importlib.import_module(_binding(name)[0])


def parser(name: str) -> Callable[[str], list[Record]]:
    """The parse function of a binding, family or benchmark name."""
    where, function = _binding(name)
    return getattr(importlib.import_module(where), function)


def _binding(name: str) -> tuple[str, str]:
    fam = family(name)
    if fam is None:
        raise ParseError(f"unknown benchmark {name!r}", field="benchmark",
                         fix="one of: " + ", ".join(FAMILIES))
    where, _, function = fam.partition(":")
    if "." not in where:
        where = f"{__name__}.{where}"
    return where, function or "parse"


def parse_text(name: str, text: str) -> list[Record]:
    """Records from one output's text; simulated outputs are marked ``simulated=True``."""
    body, sim = split_simulated(text)
    if not body.strip():
        raise ParseError("empty output")
    recs = parser(name)(body)
    for rec in recs:
        rec["simulated"] = sim is not None
        for key, value in (sim or {}).items():
            rec[f"sim_{key}"] = value
    return recs


def parse_file(name: str, path: Path) -> list[Record]:
    """Records from one file; ParseError names the file."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as err:
        raise ParseError(f"cannot read: {err.strerror}", file=path) from err
    try:
        recs = parse_text(name, text)
    except ParseError as err:
        raise ParseError(err.message, file=path, fix=err.fix) from err
    for rec in recs:
        rec["file"] = Path(path).name
    return recs
