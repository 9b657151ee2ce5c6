"""``t2hx schema system|study [--out FILE]``: the JSON Schema of a system or study conf file,
from the field tables its loader validates with (t2hx/editor_schema.py), for an editor's
YAML support; ``conf/schema/`` holds both (docs/formats.md#editor-schemas)."""

from __future__ import annotations

import argparse

from t2hx import argtypes as A

KINDS = ("system", "study")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="the JSON Schema of a system or study conf file, for "
                       "editors", description=__doc__)
    p.add_argument("kind", choices=KINDS, help="which conf file")
    p.add_argument("--out", type=A.as_path(A.output_file), metavar="FILE", default=None,
                   help="write it there (atomically) instead of printing it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from t2hx.atomic import atomic_write
    from t2hx.editor_schema import SCHEMAS

    text = json.dumps(SCHEMAS[args.kind](), indent=2, ensure_ascii=False) + "\n"
    if args.out is None:
        print(text, end="")
    else:
        atomic_write(args.out, text)
    return 0
