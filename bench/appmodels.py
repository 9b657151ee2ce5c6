#!/usr/bin/env python3
"""What the calibrated app models (t2hx/flowsim/appmodel.py) say at the study's scales on the
reference system: per code and rung, the simulated run time, the share of it spent
communicating and the code's Table 2 metric, on the Fat-Tree plane with ftree routing and
linear placement (the study's baseline combo). Nothing here is compared with a published
number: it is what comes out of our calibrations (docs/modelling.md#application-models).

Writes bench/results/appmodels.json.

``--smoke DIR``: every code at its smallest rung on mini.yaml, hostfiles, routing and the
result (DIR/appmodels.json) in DIR (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx import benchmarks  # noqa: E402
from t2hx.atomic import atomic_write  # noqa: E402
from t2hx.conf import load_system, system_path  # noqa: E402
from t2hx.flowsim import apps, appmodel  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.paths import hostfiles_root  # noqa: E402
from t2hx.post.parsers import parse_text  # noqa: E402
from t2hx.study import load_study  # noqa: E402


def one(code: str, nodes: int, system, plane: str, routing: str, node: dict, study) -> dict:
    hostfile = hostfiles_root() / system.name / "linear" / f"{nodes}.txt"
    net = open_network(str(system.path), plane, routing, str(hostfile), quiet=True)
    bench = benchmarks.get(code)
    inp = study.input(code, nodes)
    res = apps.run_app(net, bench.app, inp=inp, node=node)
    work = bench.workload
    rec = parse_text(bench.parser, work.render(work.from_app(res, nodes)))[0]
    return {"nodes": nodes, "input": inp, "seconds": round(res.seconds, 3),
            "comm_share": round(1 - res.compute_s / res.iteration_s, 4),
            "metric": rec["metric"], "value": rec["value"], "unit": rec["unit"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--system", default="t2hx")
    p.add_argument("--plane", default="fattree")
    p.add_argument("--routing", default="ftree")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "appmodels.json"))
    p.add_argument("--smoke", type=Path, metavar="DIR",
                   help="seconds on mini.yaml; hostfiles, routing and result in DIR")
    args = p.parse_args()
    if args.smoke:
        args.system, args.out = "mini", args.smoke / "appmodels.json"
        smoke_roots(args.smoke, args.system)
    system = load_system(system_path(args.system))
    study = load_study(profile="full")
    node = appmodel.node_of(system.nodes)
    usable = system.nodes["racks"] * system.nodes["per_rack"]
    out = {"system": args.system, "combo": f"{args.plane}/{args.routing}/linear",
           "node": node, "machine": appmodel.machine(), "codes": {}}
    t0 = time.time()
    # Calibrated codes another study runs (seed 001's NPB kernels) have no rungs here.
    out["not_in_study"] = sorted(c for c in appmodel.codes() if c not in study.catalog)
    for code in sorted(c for c in appmodel.codes() if c in study.catalog):
        rungs = [n for n in study.nodes(code) if n <= usable]
        picks = [rungs[0]] if args.smoke else sorted({rungs[0], rungs[len(rungs) // 2],
                                                        rungs[-1]})
        out["codes"][code] = [one(code, n, system, args.plane, args.routing, node, study)
                              for n in picks]
        for r in out["codes"][code]:
            print(f"{code:9s} {r['nodes']:4d} nodes: {r['seconds']:9.2f} s, "
                  f"{100 * r['comm_share']:5.1f} % communication, {r['metric']} "
                  f"{r['value']:.4g} {r['unit']}", file=sys.stderr)
    out["wall_s"] = round(time.time() - t0, 1)
    atomic_write(args.out, json.dumps(out, indent=1) + "\n")
    return 0


def smoke_roots(folder: Path, system: str) -> None:
    """Work and hostfile roots in ``folder``, its linear hostfiles written by the CLI."""
    from t2hx.cli import main

    os.environ["T2HX_WORK_ROOT"] = str(folder / "work")
    os.environ["T2HX_HOSTFILES"] = str(folder / "hostfiles")
    if main(["-q", "hostfiles", "--system", system, "--placements", "linear",
             "--out", str(folder / "hostfiles")]):
        sys.exit("bench/appmodels.py: t2hx hostfiles failed")


if __name__ == "__main__":
    sys.exit(main())
