#!/usr/bin/env python3
"""Speed of the capacity model (seed 000 §4.4.2; goal in docs/modelling.md#capacity-mode) and
agreement of the fast fluid engine with the exact one. Writes bench/results/capacity.json.

For every combo of conf/studies/<study>.yaml: the study's capacity mix (Study.capacity_apps on the
t2hx system's usable nodes) on the combo's plane, routing and placement (real OpenSM
routes), all jobs rerun back to back for ``--window`` simulated seconds with the fast
engine. Contract: {window_s, nodes, jobs, wall_s_per_combo: {combo: s},
simulated_per_wall, agreement: {max_runs_diff, max_rel_diff_completion}}, plus the
finished runs per app per combo and the peak RSS.

* simulated_per_wall: total simulated seconds over total wall seconds of the combos (and
  per combo in simulated_per_wall_per_combo, with the kernel's event and cache counters).
* agreement: the fast and the exact engine on every combo for ``--agree-window``
  simulated seconds: the largest difference of finished runs of an app, and the largest
  relative difference of the completion times of the runs both engines finished (over
  the combos, and per combo).

``--smoke DIR``: mini.yaml, two combos (ft-ftree-linear and the parx one), a few simulated
seconds, routing and result (DIR/capacity.json) in DIR (tests/test_bench_smoke.py).
"""

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402
from t2hx.jobmix import REPEATS  # noqa: E402
from t2hx.conf import load_system  # noqa: E402
from t2hx.flowsim.fluid import run_jobs  # noqa: E402
from t2hx.flowsim.fluid_fast import run_jobs_fast  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.placement.hostfiles import Options, place  # noqa: E402
from t2hx.reframe_site import usable_nodes  # noqa: E402
from t2hx.jobmix import capacity_jobs  # noqa: E402
from t2hx.study import load_study  # noqa: E402
from t2hx.flowsim import appmodel  # noqa: E402
from t2hx.routing_engines import routing_engine  # noqa: E402

SMOKE_WINDOW_S = 30.0


def mix(system, combo, study, work: str, quiet: bool = False):
    """(network, jobs factory) of the capacity mix on ``combo``."""
    apps = study.capacity_apps(usable_nodes(system))
    usable = [h for h in system.hostnames() if h not in system.nodes["down"]]
    order = place(system, combo.placement, sum(apps.values()), usable, Options())
    net = open_network(system, combo.plane, combo.routing, hosts=order, work=work,
                       lmc=routing_engine(combo.routing).lmc, quiet=quiet)
    spans, at = {}, 0
    for app, n in apps.items():
        spans[app], at = np.arange(at, at + n), at + n

    node = appmodel.node_of(system.nodes)

    def jobs():
        return capacity_jobs(net, spans, study, node, REPEATS)
    return net, jobs, apps


def agreement(exact, fast) -> dict:
    runs = max(abs(len(e.ends) - len(f.ends)) for e, f in zip(exact, fast))
    rel = 0.0
    for e, f in zip(exact, fast):
        k = min(len(e.ends), len(f.ends))
        if k:
            a, b = np.array(e.ends[:k]), np.array(f.ends[:k])
            rel = max(rel, float(np.max(np.abs(a - b) / a)))
    return {"max_runs_diff": runs, "max_rel_diff_completion": rel}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=float, default=3 * 3600.0,
                    help="simulated seconds per combo (default: seed 000's 3 h)")
    ap.add_argument("--agree-window", type=float, default=10.0)
    ap.add_argument("--work", default=str(ROOT / "work"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "capacity.json"))
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds on mini.yaml; routing and result in DIR (not bench/results/)")
    args = ap.parse_args()
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    name = "mini" if args.smoke else "t2hx"
    if args.smoke:
        args.window, args.agree_window = SMOKE_WINDOW_S, SMOKE_WINDOW_S / 4
        args.work, args.out = str(args.smoke / "work"), args.smoke / "capacity.json"
    system = load_system(ROOT / "conf" / "systems" / f"{name}.yaml")
    study = load_study()
    combos = [study.combos[0], study.combos[-1]] if args.smoke else study.combos
    walls, runs, apps, counters = {}, {}, {}, {}
    for combo in combos:
        net, jobs, apps = mix(system, combo, study, args.work, args.quiet)
        done, t = jobs(), time.perf_counter()
        counters[combo.name] = {}
        run_jobs_fast(net, done, until=args.window, stats=counters[combo.name])
        walls[combo.name] = round(time.perf_counter() - t, 2)
        runs[combo.name] = {j.name: len(j.ends) for j in done}
        say(f"{combo.name}: {walls[combo.name]} s wall for {args.window:g} s; {runs[combo.name]}")
    agree = {}
    for combo in combos:
        say(f"agreement: exact vs fast engine, {args.agree_window:g} s on {combo.name}")
        net, jobs, _ = mix(system, combo, study, args.work, args.quiet)
        exact, t = jobs(), time.perf_counter()
        run_jobs(net, exact, until=args.agree_window)
        exact_s = time.perf_counter() - t
        fast, t = jobs(), time.perf_counter()
        run_jobs_fast(net, fast, until=args.agree_window)
        agree[combo.name] = {**agreement(exact, fast), "exact_wall_s": round(exact_s, 2),
                             "fast_wall_s": round(time.perf_counter() - t, 2),
                             "runs_exact": {j.name: len(j.ends) for j in exact}}
    result = {
        "system": name, "smoke": bool(args.smoke),
        "window_s": args.window, "nodes": sum(apps.values()), "jobs": len(apps),
        "wall_s_per_combo": walls,
        "simulated_per_wall": round(args.window * len(walls) / sum(walls.values()), 3),
        "simulated_per_wall_per_combo": {c: round(args.window / w, 2) for c, w in walls.items()},
        "agreement": {
            "max_runs_diff": max(a["max_runs_diff"] for a in agree.values()),
            "max_rel_diff_completion": max(a["max_rel_diff_completion"] for a in agree.values()),
            "window_s": args.agree_window, "per_combo": agree},
        "runs_per_combo": runs,
        "kernel_counters_per_combo": counters,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cpu_count": os.cpu_count(),
    }
    atomic_write(Path(args.out), json.dumps(result, indent=2) + "\n")
    say(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
