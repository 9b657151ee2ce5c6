"""``t2hx parse --benchmark NAME FILE…``: print the records parsed from raw outputs as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from t2hx import argtypes as A
from t2hx.errors import T2hxError
from t2hx.post.parsers import FAMILIES, parse_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("parse", help="parse raw benchmark outputs into JSON records",
                       description="Print one JSON object per record (benchmark, metric, unit, "
                       "better, value and the parameters the output carries) so any output "
                       "can be checked by hand. Families: " + ", ".join(FAMILIES) + ".")
    p.add_argument("--benchmark", required=True, metavar="NAME", type=A.name,
                   help="benchmark family or alias (imb, mpigraph, ebb, hpl, hpcc, hpcg, …)")
    p.add_argument("files", nargs="+", metavar="FILE", type=A.input_file, help="raw output files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        try:
            recs = parse_file(args.benchmark, path)
        except T2hxError as err:
            print(f"t2hx: error: {err.line()}", file=sys.stderr)
            failed += 1
            continue
        for rec in recs:
            print(json.dumps(rec, sort_keys=True))
    return 2 if failed else 0
