"""The ``t2hx`` command line. Each subcommand lives in ``t2hx/commands/<name>.py`` and
exposes ``register(subparsers)``; this module only discovers and dispatches them."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import NoReturn

from t2hx import __version__, commands
from t2hx.errors import T2hxError


class UsageError(Exception):
    """A command line argparse refuses (unknown option, missing argument, a value its type
    check rejects): printed as one line like every other t2hx error."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line and an exit status 2 from :func:`main`
    (argparse prints the usage and exits; t2hx's rule is one line naming the fix)."""

    def error(self, message: str) -> NoReturn:
        fix = "" if "(fix: " in message else f" (fix: see {self.prog} --help)"
        raise UsageError(f"{self.prog}: {message}{fix}")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command module, only that module is imported (the
    simulated checks start ``t2hx simulate`` hundreds of times: importing every command's
    dependencies, pandas and ReFrame's site included, tripled each start)."""
    parser = Parser(
        prog="t2hx", description="HPC interconnect study framework (fabric, routing, "
        "placement, simulation, post-processing).")
    parser.add_argument("--version", action="version", version=f"t2hx {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = sorted(m.name for m in pkgutil.iter_modules(commands.__path__))
    first = next((a for a in argv or [] if not a.startswith("-")), None)
    for name in [first] if first in names else names:
        importlib.import_module(f"t2hx.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        # Building the parser imports the command's module, and with it the registry of
        # benchmark modules (a site's package may not import): its errors are one line too.
        args = build_parser(argv).parse_args(argv)
        return int(args.func(args) or 0)
    except T2hxError as err:
        print(f"t2hx: error: {err.line()}", file=sys.stderr)
        return 2
    except UsageError as err:
        print(f"t2hx: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        # A path the user gave that cannot be written or read (a file where a folder is
        # expected, no permission, a full disk): one line, not a traceback.
        where = f"{err.filename}: " if err.filename else ""
        print(f"t2hx: error: {where}{err.strerror or err} (fix: check that path: a folder "
              "you can write, with free space)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("t2hx: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
