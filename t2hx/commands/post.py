"""``t2hx post`` / ``t2hx replay LOGDIR [--out DIR]``: tables, figures and report from logs."""

from __future__ import annotations

import argparse
from pathlib import Path
from t2hx import argtypes as A



def register(sub: argparse._SubParsersAction) -> None:
    for name, text in (("post", "post-process a campaign's log directory"),
                       ("replay", "regenerate every figure and the report from a log directory "
                        "alone (the artifact evaluator's command)")):
        p = sub.add_parser(name, help=text, description=text + ". Writes data/ (tidy parquet "
                           "+ CSV tables), figures/ (PNG, PDF and the gnuplot data file of each) "
                           "and report.md/report.html.")
        p.add_argument("logdir", type=Path, metavar="LOGDIR", help="log/<campaign> directory")
        p.add_argument("--out", type=A.as_path(A.output_dir), metavar="DIR",
                       help="output directory (default: paper/ for log/reference, else "
                       "LOGDIR/paper)")
        p.add_argument("--pack", action="store_true",
                       help="first pack the raw outputs (runs/, companion/) into .tar.xz "
                       "archives, as a large campaign is committed; replay reads either")
        p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx.post import archive
    from t2hx.post.replay import replay, require_replayable    # pandas: not for --help

    if args.pack:
        logdir = require_replayable(args.logdir)     # refused before anything is packed
        for name in archive.PACKED:
            done = archive.pack(logdir, name)
            if done is not None and not args.quiet:
                size = sum(part.stat().st_size for part in done) / 2**20
                print(f"packed {name}/ into {', '.join(p.name for p in done)} ({size:.1f} MiB)")
    result = replay(args.logdir, args.out, quiet=args.quiet or None)
    skipped = result.summary["skipped"]
    if skipped and not args.quiet:
        print(f"skipped {len(skipped)} input(s):")
        for s in skipped:
            print(f"  {s['what']}: {s['path']}: {s['reason']}")
    print(f"{len(result.figures)} figures; report: {result.out / 'report.md'}")
    return 0
