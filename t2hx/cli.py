"""The ``t2hx`` command line. Each subcommand lives in ``t2hx/commands/<name>.py`` and
exposes ``register(subparsers)``; this module only discovers and dispatches them."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from t2hx import __version__, commands
from t2hx.errors import T2hxError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="t2hx", description="HPC interconnect study framework (fabric, routing, "
        "placement, simulation, post-processing).")
    parser.add_argument("--version", action="version", version=f"t2hx {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"t2hx.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except T2hxError as err:
        print(f"t2hx: error: {err.line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("t2hx: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
