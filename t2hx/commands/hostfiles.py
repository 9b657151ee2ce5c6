"""``t2hx hostfiles --system FILE [--out DIR]``: hostfiles for every study node count."""

from __future__ import annotations

import argparse
from pathlib import Path
from t2hx import argtypes as A

from t2hx.cli import defer
from t2hx.paths import hostfiles_root
from t2hx.conf import ENGINES, load_system, system_path
from t2hx.errors import T2hxError
from t2hx.progress import Progress
from t2hx.study import MAX_REPETITIONS, PLACEMENTS, load_study

EPILOG = """\
Writes DIR/<system>/<placement>/<n>.txt (one hostname per line, line i = rank i) and a
manifest.json per placement; for a study with a capacity mix also <usable>.txt, every usable
node in the placement's order (the capacity check's node sets). Use them with
  Open MPI: mpirun --hostfile <n>.txt -np <n> --map-by node <program>
  Slurm:    SLURM_HOSTFILE=<n>.txt srun --distribution=arbitrary -n <n> <program>
(srun --nodelist=<n>.txt takes the node set but sorts it: right for linear only).
Nodes in the conf's nodes.down are never used."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hostfiles", help="write seeded hostfiles (linear, clustered, random, "
                       "two-opt …) for every node count of the study ladders",
                       description="Rank placements as hostfiles for every node count of the "
                       "study's ladders ($T2HX_STUDY or the default study; counts above the "
                       "usable nodes are left out).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    defer(p, arguments)
    p.set_defaults(func=run)


def arguments(p: argparse.ArgumentParser) -> None:
    # the placement package (numpy): deferred (t2hx/cli.py)
    from t2hx.placement.collective_messages import COLLECTIVES
    from t2hx.placement.hostfiles import DEFAULT_SEED, OBJECTIVES

    p.add_argument("--system", required=True, metavar="FILE", type=A.system,
                   help="conf/systems/<sys>.yaml (or just the system name)")
    p.add_argument("--out", type=A.as_path(A.output_dir), default=hostfiles_root(), metavar="DIR",
                   help="output root (default: the checkout's hostfiles/)")
    p.add_argument("--placements", default=None, metavar="LIST", type=A.text_line,
                   help=f"comma list of {', '.join(PLACEMENTS)}, or <base>+two-opt-"
                   "<objective>-<collective> (the base's nodes, ranks re-placed by two-opt; "
                   "default: the placements of the study's combos)")
    p.add_argument("--counts", default=None, metavar="LIST",
                   help="comma list of node counts instead of the ladders")
    p.add_argument("--nodes", default=None, metavar="LIST|@FILE", type=A.text_line,
                   help="restrict to these hosts (comma list, or @file with one per line)")
    p.add_argument("--seed", type=A.non_negative_int, default=DEFAULT_SEED,
                   help="base seed (default: "
                   f"{DEFAULT_SEED})")
    p.add_argument("--p", type=A.unit_interval, default=0.8, dest="p",
                   help="clustered: probability of the geometric stride (default 0.8)")
    p.add_argument("--plane", default=None, type=A.name,
                   help="two-opt/hierarchical: plane whose fabric is used (default hyperx)")
    p.add_argument("--routing", "--engine", dest="engine", default=None, choices=ENGINES,
                   metavar="ROUTING",
                   help="two-opt: OpenSM engine (default the plane's first opensm.routing)")
    p.add_argument("--collective", default="allreduce", choices=COLLECTIVES,
                   help="two-opt: collective whose messages are optimised (default allreduce)")
    p.add_argument("--objective", default="hops", choices=sorted(OBJECTIVES),
                   help="two-opt: minimise total hops (default) or link contention (pairs "
                   "of same-step messages sharing a link)")
    p.add_argument("--iterations", type=A.non_negative_int, default=200_000,
                   help="two-opt: swap trials per hostfile (default 200000, as seed 001)")
    p.add_argument("--iterations-at", default=None, metavar="N=TRIALS[,N=TRIALS]",
                   help="two-opt: other trials for these node counts, e.g. 128=20000 (seed "
                   "001: 20,000 for its 128-rank applications, 200,000 for collectives)")
    p.add_argument("--draws", type=A.int_range(1, MAX_REPETITIONS, "mapping draws"), default=None,
                   metavar="K",
                   help="mapping draws per node count: <n>.txt and <n>.r1.txt … <n>.r<K-1>.txt, "
                   "each from its own seed (default: as many as the study's benchmarks run "
                   "there, `draws:`; 1 elsewhere)")
    p.add_argument("--switches", type=A.positive_int, default=10,
                   help="spread: leaf switches a job's nodes are spread over (default 10, "
                   "seed 004 §4.3.4's 28 nodes)")


def _int_list(text: str, flag: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:       # none, or 0 / negative node counts
        raise T2hxError(f"{text!r} is not a comma list of integers >= 1", field=flag,
                        fix=f"e.g. {flag} 7,14,28")
    return values


def _iterations_at(text: str | None) -> dict[int, int]:
    out: dict[int, int] = {}
    if text is not None and not text.strip(","):
        raise T2hxError(f"{text!r} names no node count", field="--iterations-at",
                        fix="give N=TRIALS, e.g. --iterations-at 128=20000")
    for item in (text or "").split(","):
        if not item.strip():
            continue
        count, _, trials = item.partition("=")
        try:
            n, t = int(count), int(trials)
        except ValueError:
            n = t = -1
        if n < 1 or t < 0:
            raise T2hxError(f"{item.strip()!r} is not N=TRIALS", field="--iterations-at",
                            fix="e.g. --iterations-at 128=20000,512=200000")
        out[n] = t
    return out


def _nodes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            lines = path.read_text().split()
        except OSError as err:
            raise T2hxError(f"cannot read ({err.strerror})", file=path, field="--nodes",
                            fix="give a file with one hostname per line") from None
        return [x for x in lines if x]
    return [x.strip() for x in text.split(",") if x.strip()]


def run(args: argparse.Namespace) -> int:
    from t2hx.placement.hostfiles import Options, generate

    system = load_system(system_path(args.system))
    placements = (load_study(profile="full").placements(system.name) if args.placements is None else
                  [x.strip() for x in args.placements.split(",") if x.strip()])
    if not placements:
        raise T2hxError(f"--placements {args.placements!r} names none", field="--placements",
                        fix=f"a comma list of {', '.join(PLACEMENTS)}")
    if args.plane is not None or args.engine is not None:     # refused now, not ignored
        plane = system.plane(args.plane or "hyperx")
        if args.engine is not None and args.engine not in plane.opensm["routing"]:
            raise T2hxError(f"plane {plane.name} does not route with {args.engine}",
                            file=system.path, field="--routing",
                            fix=f"use one of: {', '.join(plane.opensm['routing'])}")
    opts = Options(seed=args.seed, p=args.p, plane=args.plane, engine=args.engine,
                   collective=args.collective, objective=args.objective,
                   iterations=args.iterations, switches=args.switches,
                   iterations_at=_iterations_at(args.iterations_at),
                   counts=None if args.counts is None else _int_list(args.counts, "--counts"),
                   draws=args.draws,
                   nodes=_nodes(args.nodes))
    with Progress("hostfiles", total=len(placements), quiet=args.quiet) as progress:
        generate(system, args.out, placements, opts, progress.step)
    return 0
