"""One parser module per benchmark family; this registry maps names (and aliases) to them.

Every module exposes ``parse(text) -> list[Record]`` and raises
:class:`t2hx.post.records.ParseError` when the text holds no result. :func:`parse_text` adds
what all parsers share: the ``# t2hx-simulated:`` first line is stripped and recorded.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from t2hx.post.records import ParseError, Record, split_simulated

FAMILIES = ("imb", "mpigraph", "netgauge", "hpl", "hpcg", "graph500", "minife", "comd", "amg",
            "swfft", "milc", "qbox", "ffvc", "mvmc", "ntchem", "baidu", "walltime")

# Names used by checks, the study conf and the paper for the same family.
ALIASES = {"ebb": "netgauge", "hpcc": "hpl", "qball": "qbox", "qb@ll": "qbox",
           "ring-allreduce": "baidu", "allreduce-ring": "baidu", "ring_allreduce": "baidu",
           "baidu-allreduce": "baidu", "mupp": "imb", "emdl": "imb", "imb-mpi1": "imb",
           "graph500-bfs": "graph500", "mini-fe": "minife"}


def family(name: str) -> str | None:
    """Canonical family for a benchmark name (``IMB-Allreduce`` → ``imb``), or None."""
    key = name.strip().lower()
    if key in FAMILIES:
        return key
    if key in ALIASES:
        return ALIASES[key]
    head = key.replace("_", "-").split("-")[0]
    if head in FAMILIES:
        return head
    return ALIASES.get(head)


def module(name: str) -> ModuleType:
    fam = family(name)
    if fam is None:
        raise ParseError(f"unknown benchmark {name!r}", field="benchmark",
                         fix="one of: " + ", ".join(FAMILIES))
    return importlib.import_module(f"t2hx.post.parsers.{fam}")


def parse_text(name: str, text: str) -> list[Record]:
    """Records from one output's text; simulated outputs are marked ``simulated=True``."""
    body, sim = split_simulated(text)
    if not body.strip():
        raise ParseError("empty output")
    recs = module(name).parse(body)
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
