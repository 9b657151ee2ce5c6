"""The ``t2hx`` command line. Each subcommand lives in ``t2hx/commands/<name>.py`` and
exposes ``register(subparsers)``; this module only discovers and dispatches them.

A command module imports at its top only what its parser needs, and options that need a
heavy module (numpy, the placement package) are added by a deferred function
(:func:`defer`): ``t2hx --help`` imports every command module, and every simulated case
starts the CLI, so neither should pay for numpy, scipy or pandas (tests/test_imports.py)."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from t2hx import __version__, commands, require_checkout, simclient
from t2hx.errors import T2hxError


class UsageError(Exception):
    """A command line argparse refuses (unknown option, missing argument, a value its type
    check rejects): printed as one line like every other t2hx error."""


Fill = Callable[[argparse.ArgumentParser], None]


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line and an exit status 2 from :func:`main`
    (argparse prints the usage and exits; t2hx's rule is one line naming the fix). Its
    deferred arguments are added when it first parses or prints its usage or help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deferred: list[Fill] = []

    def fill(self) -> None:
        fill_own(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.fill()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.fill()
        return super().format_usage()

    def format_help(self) -> str:
        self.fill()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        fix = "" if "(fix: " in message else f" (fix: see {self.prog} --help)"
        raise UsageError(f"{self.prog}: {message}{fix}")


def defer(parser: argparse.ArgumentParser, fill: Fill) -> None:
    """Add arguments to ``parser`` with ``fill(parser)`` once it parses or prints help (at
    once on a parser that is not a :class:`Parser`). By attribute, not class: under
    ``python -m t2hx.cli`` the parser is ``__main__``'s Parser, not this module's."""
    pending = _pending(parser)
    if pending is None:
        fill(parser)
    else:
        pending.append(fill)


def _pending(parser: argparse.ArgumentParser) -> list[Fill] | None:
    pending = getattr(parser, "deferred", None)
    return pending if isinstance(pending, list) else None


def fill_own(parser: argparse.ArgumentParser) -> None:
    """The deferred arguments of ``parser`` itself (not of its subcommands), added now."""
    pending = _pending(parser) or []
    while pending:
        pending.pop(0)(parser)


def fill_all(parser: argparse.ArgumentParser) -> None:
    """Every deferred argument of ``parser`` and of its subcommands, added now."""
    fill_own(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                fill_all(child)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command module, only that module is imported (the
    simulated checks start ``t2hx simulate`` hundreds of times: importing every command's
    dependencies, pandas and ReFrame's site included, tripled each start). Without ``argv``
    the whole tree, every deferred argument added (for tools that walk it)."""
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
    if argv is None:
        fill_all(parser)
    return parser


def complete() -> None:
    """Shell completion (argcomplete; ``eval "$(register-python-argcomplete t2hx)"``, see
    docs/architecture.md#cli-and-run-scripts): only when the shell asks, so every other
    start pays nothing for the whole tree."""
    import argcomplete

    argcomplete.autocomplete(build_parser())


def main(argv: list[str] | None = None) -> int:
    if argv is None and "_ARGCOMPLETE" in os.environ:
        complete()                        # exits when it has answered the shell
    argv = sys.argv[1:] if argv is None else argv
    served = simclient.forward(argv)        # a campaign's warm simulator runs the case
    if served is not None:
        return served
    try:
        # Building the parser imports the command's module, and with it the registry of
        # benchmark modules (a site's package may not import): its errors are one line too.
        args = build_parser(argv).parse_args(argv)
        require_checkout()      # after parsing: --help and --version need no checkout
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
