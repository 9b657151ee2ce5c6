"""``t2hx calibrate APP``: run one application or x500 code here, for real, at several rank
counts with Open MPI's pml_monitoring, and rewrite ``conf/calibration/<app>.json``
(t2hx/calibration.py, docs/modelling.md#calibration)."""

from __future__ import annotations

import argparse
from pathlib import Path
from t2hx import argtypes as A


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help="measure an app's compute and communication here",
                       description=__doc__)
    p.add_argument("app", nargs="?", type=A.name,
                   help="a benchmark of t2hx/benchmarks/ with a local binary, e.g. amg")
    p.add_argument("--table", action="store_true",
                   help="print the committed calibrations as a Markdown table instead")
    p.add_argument("--ranks", default="1,2,4,8", type=A.positive_int_list,
                   help="rank counts, comma separated (default 1,2,4,8; oversubscribed here: "
                   "three multi-rank counts, so the model's prediction of the largest can fail)")
    p.add_argument("--models", action="store_true",
                   help="print the app models fitted to the calibrations as a Markdown table "
                   "(each predicts its largest measured rank count from the smaller ones)")
    p.add_argument("--machine", action="store_true",
                   help="measure this machine's single-core flop and memory rates into "
                   "machine.json instead (the reference app models scale from)")
    p.add_argument("--out", default=None, type=A.output_dir,
                   help="directory for <app>.json (default conf/calibration)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx import calibration
    from t2hx.errors import T2hxError

    if args.app and (args.table or args.models or args.machine):    # it would be ignored
        raise T2hxError(f"APP {args.app} with --table, --models or --machine", field="APP",
                        fix="give either an APP to calibrate or one of those options")
    if args.table:
        print(calibration.table())
        return 0
    if args.models:
        from t2hx import benchmarks
        from t2hx.flowsim import appmodel

        print(appmodel.table(b.app for b in benchmarks.REGISTRY if b.app))
        return 0
    if args.machine:
        from t2hx import machine

        out = Path(args.out) if args.out else calibration.CALIBRATION_DIR
        out.mkdir(parents=True, exist_ok=True)
        data = machine.write(out / "machine.json", calibration._cpu_model())
        print(f"{out / 'machine.json'}: {data['gflops']:.1f} Gflop/s, "
              f"{data['mem_gbs']:.1f} GB/s per core")
        return 0
    if not args.app:
        raise T2hxError("no APP given", field="APP", fix="name one, e.g. `t2hx calibrate amg`")
    try:
        ranks = sorted({int(v) for v in args.ranks.split(",")})
    except ValueError:
        ranks = []
    if not ranks or ranks[0] < 1:
        raise T2hxError(f"--ranks {args.ranks!r}", field="--ranks", fix="give e.g. 1,2,4")
    out = Path(args.out) if args.out else calibration.CALIBRATION_DIR
    path = calibration.calibrate(args.app, ranks, quiet=args.quiet, out_dir=out)
    print(path)
    return 0
