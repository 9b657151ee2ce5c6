"""``t2hx conf schema system|study [--out FILE]``: the JSON Schema of a system or study conf
file, from the field tables its loader validates with (t2hx/editor_schema.py), for an
editor's YAML support; ``conf/schema/`` holds both (docs/formats.md#editor-schemas).

``t2hx conf check FILE...``: each conf file read by the loader t2hx itself uses (a system, a
study, or a claims file; the kind from its folder under ``conf/``, or ``--kind``), one line
per file: what it holds, or the loader's one-line error naming the field and the fix. Exit
status 1 when any file fails, so a porting team can run it before committing a new conf."""

from __future__ import annotations

import argparse
from pathlib import Path

from t2hx import argtypes as A

KINDS = ("system", "study")
CHECKED = ("system", "study", "claims")
#: The folder under conf/ a file's kind is read from when --kind is not given.
FOLDERS = {"systems": "system", "studies": "study", "claims": "claims"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conf", help="conf files: their JSON Schemas, and checking them",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    s = verbs.add_parser("schema", help="the JSON Schema of a system or study conf file, for "
                         "editors")
    s.add_argument("kind", choices=KINDS, help="which conf file")
    s.add_argument("--out", type=A.as_path(A.output_file), metavar="FILE", default=None,
                   help="write it there (atomically) instead of printing it")
    s.set_defaults(func=cmd_schema)
    c = verbs.add_parser("check", help="read conf files as t2hx does; one line each")
    c.add_argument("files", nargs="+", type=A.as_path(A.input_file), metavar="FILE",
                   help="system, study or claims YAML files")
    c.add_argument("--kind", choices=CHECKED, default=None,
                   help="what the files are (default: from their folder: conf/systems, "
                   "conf/studies, conf/claims)")
    c.set_defaults(func=cmd_check)


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from t2hx.atomic import atomic_write
    from t2hx.editor_schema import SCHEMAS

    text = json.dumps(SCHEMAS[args.kind](), indent=2, ensure_ascii=False) + "\n"
    if args.out is None:
        print(text, end="")
    else:
        atomic_write(args.out, text)
    return 0


def kind_of(path: Path, given: str | None) -> str:
    from t2hx.errors import T2hxError

    kind = given or FOLDERS.get(path.resolve().parent.name)
    if kind is None:
        raise T2hxError("which kind of conf file this is is not known from its folder",
                        file=path, fix="pass --kind system|study|claims")
    return kind


def summary(path: Path, kind: str) -> str:
    """Read ``path`` with t2hx's loader for ``kind``; what it holds, in a few words."""
    if kind == "system":
        from t2hx.conf import load_system

        system = load_system(path)
        planes = ", ".join(f"{name} ({p.topology['kind']}, {p.gbps:g} Gb/s)"
                           for name, p in system.planes.items())
        return f"system {system.name}: planes {planes}"
    if kind == "study":
        from t2hx.study import load_study

        study = load_study(path, "full")
        n = len(study.catalog)
        return (f"study {study.name}: {n} benchmark{'s' * (n != 1)}, "
                f"{len(study.all_combos())} combos")
    from t2hx.post.scorecard import load_claims

    _, claims = load_claims(path)
    return f"claims: {len(claims)}"


def cmd_check(args: argparse.Namespace) -> int:
    from t2hx.errors import T2hxError

    failed = 0
    for path in args.files:
        try:
            print(f"ok: {path}: {summary(path, kind_of(path, args.kind))}")
        except T2hxError as err:
            failed += 1
            print(f"FAILED: {err}")
    return 1 if failed else 0
