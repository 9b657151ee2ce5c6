#!/usr/bin/env python3
"""Inter-job interference, fluid vs packet engine, and the fluid engines' correction term
fitted to the packet engine (t2hx/flowsim/interference.py). Writes
bench/results/interference.json.

Mixes of 2-4 jobs of the calibrated application models (seed 000's capacity apps that have
one), 8-56 nodes each, their compute scaled by 1, 10 or 0 (communication only), ranks
placed linearly, at random, or densely (PLACEMENTS, in turn), on both planes of a conf system (real
OpenSM routes). Every job repeats its time step; each mix runs on the fast fluid engine
and on the packet engine (t2hx/flowsim/packetjobs.py), together and each job alone on the
same nodes. Per job: the mean iteration time over the window in which every job of the
mix was still running, in the mix and alone, on both engines; the slowdown is their
ratio, and ``x`` the job's exposure (interference.py).

The term ``packet slowdown - 1 = fluid_gain · (fluid slowdown - 1) + exposure · x`` is
fitted by least squares on all rows; its error is measured on held-out mixes (two folds:
even and odd mix numbers, each fitted on the other), next to the error of taking the
fluid slowdown as it is. Contract: {system, mixes, rows, fit: {fluid_gain, exposure},
heldout: {term: {median, p90, worst}, fluid: {...}}, per_row: [...]} (errors are relative
errors of the predicted slowdown against the packet engine's).

``--smoke DIR``: one mix per plane of 4-8-node jobs on mini.yaml (a fit of two mixes, so no
held-out error is claimed from it), routing and result (DIR/interference.json) in DIR
(tests/test_bench_smoke.py).
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx import benchmarks  # noqa: E402
from t2hx.atomic import atomic_write  # noqa: E402
from t2hx.conf import load_system, system_path  # noqa: E402
from t2hx.flowsim import interference, multijob  # noqa: E402
from t2hx.flowsim.appmodel import node_of  # noqa: E402
from t2hx.flowsim.fluid_fast import run_jobs_fast  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.flowsim.packet import open_packet  # noqa: E402
from t2hx.flowsim.packetjobs import mean_step, run_jobs_packet, window_of  # noqa: E402
from t2hx.study import load_study  # noqa: E402

PLANES = (("fattree", "ftree"), ("hyperx", "dfsssp"))
SIZES = (8, 16, 28, 56)
SMOKE_SIZES = (4, 8)
#: linear: consecutive nodes; random: anywhere on the machine; dense: random among 5/4 as
#: many consecutive nodes as the mix needs (jobs interleaved on shared switches, as a full
#: machine's random placement is).
PLACEMENTS = ("linear", "random", "dense")
SCALES = (1.0, 10.0, 0.0)
#: A mix is drawn again when its jobs' alone iteration times differ by more than this
#: factor (every job must finish iterations while the slowest runs two), or when the bytes
#: x links its window asks of the packet engine pass the budget (about 10 s of kernel).
MAX_SPREAD = 16
BUDGET_BYTE_HOPS = 3e11
TRIES = 200


def apps_with_models(study) -> list[str]:
    out = []
    for app in study.capacity["apps"]:
        try:
            benchmarks.app(app)
        except Exception:
            continue
        out.append(app)
    return out


def draw_mix(rng, system, names: list[str], k: int, sizes_from=SIZES) -> dict:
    hosts = [h for h in system.hostnames() if h not in system.nodes["down"]]
    njobs = int(rng.integers(2, 5))
    sizes = [int(rng.choice(sizes_from)) for _ in range(njobs)]
    placement = PLACEMENTS[k % len(PLACEMENTS)]
    need = sum(sizes)
    if placement == "linear":
        at = int(rng.integers(0, len(hosts) - need))
        chosen = hosts[at:at + need]
    else:
        span = len(hosts) if placement == "random" else min(len(hosts), need * 5 // 4)
        at = int(rng.integers(0, len(hosts) - span + 1))
        chosen = [hosts[at + i] for i in rng.choice(span, need, replace=False)]
    return {"apps": [str(rng.choice(names)) for _ in range(njobs)], "sizes": sizes,
            "scale": float(rng.choice(SCALES)), "placement": placement, "hosts": chosen}


def build(net, study, node, mix: dict, repeats: list[int]):
    jobs, at = [], 0
    for j, (app, n) in enumerate(zip(mix["apps"], mix["sizes"])):
        ranks = np.arange(at, at + n)
        at += n
        job = multijob.step_job(net, benchmarks.app(app), ranks, mix["scale"],
                                study.input(app, n), node, f"job{j}-{app}")
        job.repeat = repeats[j]
        jobs.append(job)
    return jobs


def iterations(net, jobs) -> list[int] | None:
    """Iterations per job such that every job runs while the slowest runs twice (fluid
    alone times decide); None when the mix is too uneven or too large for the budget."""
    alone = [mean_step(run_jobs_fast(net, [j])[0], math.inf) for j in jobs]
    if not all(math.isfinite(t) and t > 0 for t in alone) or \
            max(alone) > MAX_SPREAD * min(alone):
        return None
    horizon = 2.0 * max(alone)
    reps = [math.ceil(horizon / t) + 1 for t in alone]
    spend = sum(interference.link_bytes(net, j).sum() * r for j, r in zip(jobs, reps))
    return reps if spend <= BUDGET_BYTE_HOPS else None


def accepted(rng, system, plane, routing, study, node, names, k, work, sizes=SIZES):
    """The next mix the packet engine can run in its budget: (mix, network, iterations)."""
    for _ in range(TRIES):
        mix = draw_mix(rng, system, names, k, sizes)
        net = open_network(system, plane, routing, hosts=mix["hosts"], work=work, quiet=True)
        reps = iterations(net, build(net, study, node, mix, [1] * len(mix["apps"])))
        if reps is not None:
            return mix, net, reps
    raise SystemExit(f"no mix within the budget in {TRIES} draws")


def run_mix(net, study, node, mix, reps) -> list[dict]:
    pk = open_packet(net)
    out = {}
    for engine, run in (("fluid", lambda jobs: run_jobs_fast(net, jobs)),
                        ("packet", lambda jobs: run_jobs_packet(pk, jobs, max(reps)))):
        jobs = run(build(net, study, node, mix, reps))
        window = window_of(jobs)
        alone = [mean_step(run([job])[0], math.inf)
                 for job in build(net, study, node, mix, reps)]
        out[engine] = ([mean_step(j, window) for j in jobs], alone)
    x = interference.exposure(net, build(net, study, node, mix, reps),
                              np.array(out["fluid"][1]))
    rows = []
    for j, app in enumerate(mix["apps"]):
        (fm, fa), (pm, pa) = (out["fluid"][0][j], out["fluid"][1][j]), \
            (out["packet"][0][j], out["packet"][1][j])
        rows.append({"app": app, "nodes": mix["sizes"][j], "iterations": reps[j],
                     "fluid_mix_s": fm, "fluid_alone_s": fa, "packet_mix_s": pm,
                     "packet_alone_s": pa, "fluid_slowdown": fm / fa,
                     "packet_slowdown": pm / pa, "x": float(x[j])})
    return rows


def fit(rows: list[dict]) -> tuple[float, float]:
    a = np.array([[r["fluid_slowdown"] - 1, r["x"]] for r in rows])
    y = np.array([r["packet_slowdown"] - 1 for r in rows])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return float(coef[0]), float(coef[1])


def errors(rows: list[dict], predict) -> dict:
    e = np.array([abs(predict(r) - r["packet_slowdown"]) / r["packet_slowdown"]
                  for r in rows])
    return {"median": round(float(np.median(e)), 4), "p90": round(float(np.quantile(e, 0.9)), 4),
            "worst": round(float(e.max()), 4), "n": len(e)}


def heldout(rows: list[dict]) -> dict:
    preds = {}
    for fold in (0, 1):
        train = [r for r in rows if r["mix"] % 2 != fold]
        term = interference.Term(*fit(train))
        for r in rows:
            if r["mix"] % 2 == fold:
                preds[id(r)] = float(term.slowdown(np.array(r["fluid_slowdown"]),
                                                   np.array(r["x"])))
    return {"term": errors(rows, lambda r: preds[id(r)]),
            "fluid": errors(rows, lambda r: r["fluid_slowdown"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="t2hx")
    ap.add_argument("--mixes", type=int, default=24, help="mixes per plane")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--work", default=str(ROOT / "work"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "interference.json"))
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds on mini.yaml; routing and result in DIR (not bench/results/)")
    args = ap.parse_args()
    sizes = SIZES
    if args.smoke:
        args.system, args.mixes, sizes = "mini", 1, SMOKE_SIZES
        args.work, args.out = str(args.smoke / "work"), args.smoke / "interference.json"
    system = load_system(system_path(args.system))
    study = load_study()
    node = node_of(system.nodes)
    names = apps_with_models(study)
    rng = np.random.default_rng(args.seed)
    rows: list[dict] = []
    clock = time.perf_counter()
    k = 0
    for plane, routing in PLANES:
        for _ in range(args.mixes):
            t = time.perf_counter()
            mix, net, reps = accepted(rng, system, plane, routing, study, node, names, k,
                                      args.work, sizes)
            for row in run_mix(net, study, node, mix, reps):
                rows.append({"mix": k, "plane": plane, "routing": routing,
                             "placement": mix["placement"], "scale": mix["scale"], **row})
            print(f"mix {k} {plane} {mix['placement']} x{mix['scale']:g} "
                  f"{'+'.join(mix['apps'])}: {time.perf_counter() - t:.1f} s", flush=True)
            k += 1
    rows = [r for r in rows if all(math.isfinite(r[f]) for f in
                                   ("fluid_slowdown", "packet_slowdown"))]
    gain, expo = fit(rows)
    result = {"system": args.system, "planes": [f"{p}/{r}" for p, r in PLANES],
              "mixes": k, "rows": len(rows), "seed": args.seed,
              "wall_s": round(time.perf_counter() - clock, 1),
              "fit": {"fluid_gain": round(gain, 4), "exposure": round(expo, 4)},
              "heldout": heldout(rows), "smoke": bool(args.smoke),
              "per_row": [{key: (round(v, 6) if isinstance(v, float) else v)
                           for key, v in r.items()} for r in rows]}
    atomic_write(Path(args.out), json.dumps(result, indent=1) + "\n")
    print(json.dumps({key: result[key] for key in ("rows", "fit", "heldout", "wall_s")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
