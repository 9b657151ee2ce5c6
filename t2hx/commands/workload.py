"""``t2hx campaign simulate-workload``: one multi-job workload of the study (seed 003 §6) on
the flow model of a routed plane.

The study's ``workloads:`` section says how many jobs of how many nodes, drawn from which
applications, placed in randomized clusters (t2hx/placement/jobs.py), with which compute
scale and simulated window. Workload ``k`` draws its applications and node sets from
(seed, k) alone, so it is the same workload on every configuration: the six seed-003
systems share hostnames. Prints one ``T2HX workload job=...`` line per job
(t2hx/flowsim/multijob.py) and ``T2HX workload window closed``; checks/workload.py records
them.
"""

from __future__ import annotations

import argparse

from t2hx.paths import work_root


def register_workload(verbs: argparse._SubParsersAction, engines: list[str]) -> None:
    w = verbs.add_parser("simulate-workload", help="a multi-job workload on the flow model",
                         description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--system", required=True, help="conf/systems/<sys>.yaml or its name")
    w.add_argument("--plane", required=True)
    w.add_argument("--routing", required=True)
    w.add_argument("--workload", type=int, required=True,
                   help="which of the study's workloads (0 .. workloads.count - 1)")
    w.add_argument("--window", type=float, default=None,
                   help="simulated seconds (default: the study's workloads.window)")
    w.add_argument("--work", default=str(work_root()), help="routing cache (work/)")
    w.add_argument("--engine", choices=engines, default="fast",
                   help="fluid engine: fast (default) or exact (the reference)")
    w.set_defaults(func=cmd_simulate_workload)


def draw(study, system, k: int) -> tuple[list[str], list[list[str]]]:
    """(application, hostnames) of every job of workload ``k``."""
    import numpy as np

    from t2hx.errors import ConfError
    from t2hx.placement.jobs import assign_apps, random_clusters
    from t2hx.placement.nodes import usable_nodes

    spec = study.workloads
    if not spec:
        raise ConfError("the study has no multi-job workloads", file=study.path,
                        field="workloads", fix="add a workloads: section (docs/studies.md)")
    if not 0 <= k < spec["count"]:
        raise ConfError(f"workload {k} is not one of 0..{spec['count'] - 1}", file=study.path,
                        field="workloads.count", fix="pick an index below the count")
    rng = np.random.default_rng([spec["seed"], k])
    apps = assign_apps(list(spec["apps"]), spec["jobs"], rng)
    nodes = usable_nodes(system)
    sets = random_clusters(len(nodes), spec["jobs"], spec["nodes_per_job"], spec["cluster"],
                           rng)
    return apps, [[nodes[i] for i in s] for s in sets]


def cmd_simulate_workload(args: argparse.Namespace) -> int:
    import numpy as np

    from t2hx.commands.campaign import _engine
    from t2hx.commands.simulate import node_rates
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim import multijob
    from t2hx.flowsim.network import open_network
    from t2hx.study import load_study, seconds

    study = load_study()
    system = load_system(system_path(args.system))
    apps, sets = draw(study, system, args.workload)
    spec = study.workloads
    window = args.window if args.window is not None else seconds(spec["window"])
    hosts = [h for s in sets for h in s]
    net = open_network(system, args.plane, args.routing, hosts=hosts, work=args.work)
    spans, at = [], 0
    for s in sets:
        spans.append(np.arange(at, at + len(s)))
        at += len(s)
    inputs = [study.input(app, len(s)) for app, s in zip(apps, sets)]
    results = multijob.run_workload(net, apps, spans, inputs, float(spec["compute_scale"]),
                                    node_rates(args.system), window, _engine(args.engine))
    print(f"# t2hx-simulated: workload system={system.name} plane={args.plane} "
          f"routing={args.routing} workload={args.workload} window={window:g} "
          f"compute_scale={spec['compute_scale']:g} engine={args.engine}")
    for r in results:
        print(r.line())
    print(multijob.CLOSED)
    return 0
