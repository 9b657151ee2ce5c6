"""``t2hx spack check``: static checks of the Spack environment (no Spack needed)."""

from __future__ import annotations

import argparse
import sys
from t2hx import ROOT
from t2hx import argtypes as A

from t2hx.spackenv import check_env

DEFAULT_ENV = ROOT / "spack-env"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "spack", help="check the pinned Spack environment (spack-env/) and patches/",
        description="Static checks of the Spack environment that run without Spack.")
    sub = parser.add_subparsers(dest="spack_command", required=True, metavar="SUBCOMMAND")
    check = sub.add_parser(
        "check", help="YAML, pinned specs, known packages, recipes, patches",
        description="Validate spack.yaml, the overlay recipes, patches/ and the patch "
        "verification record; print one line per problem.")
    check.add_argument("--env", type=A.as_path(A.input_dir), default=DEFAULT_ENV,
                       help="environment directory (default: %(default)s)")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    report = check_env(args.env)
    for problem in report.problems:
        print(f"t2hx: error: {problem.line()}", file=sys.stderr)
    if report.problems:
        return 1
    if not args.quiet:
        print(f"{args.env}: OK ({report.specs} specs, {report.recipes} recipes, "
              f"{report.patches} patches)")
    return 0
