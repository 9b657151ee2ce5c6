"""``t2hx demand build|check|jobs``: PARX demand files from pml_monitoring profiles, SAR job
files, and their validation against a system plane (before any OpenSM run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from t2hx import demand as dm
from t2hx.conf import load_system, system_path
from t2hx.fabric.build import build_plane
from t2hx.fabric.netfile import atomic_write


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demand", help="build and check PARX demand / SAR job files",
                       description="Open MPI pml_monitoring profiles + hostfiles → node "
                       "demand file (0..255) for the parx routing engine; job files for sar.")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")

    b = verbs.add_parser("build", help="profiles + hostfiles of one or more jobs → demand file")
    b.add_argument("--job", nargs=2, action="append", required=True,
                   metavar=("PROFILE_PREFIX", "HOSTFILE"),
                   help="a profiled job: the pml_monitoring_filename prefix and the hostfile "
                   "of this run (repeat for several jobs)")
    b.add_argument("--out", required=True, help="demand file to write")
    _plane_args(b, required=False)
    b.set_defaults(func=cmd_build)

    c = verbs.add_parser("check", help="validate a demand or job file against a plane")
    c.add_argument("file", help="demand file (or job file with --jobs)")
    c.add_argument("--jobs", action="store_true", help="the file is a SAR job file")
    _plane_args(c, required=True)
    c.set_defaults(func=cmd_check)

    j = verbs.add_parser("jobs", help="hostfiles of running jobs → SAR job file")
    j.add_argument("--job", nargs=2, action="append", required=True,
                   metavar=("JOB_ID", "HOSTFILE"), help="a job id and its hostfile (repeat)")
    j.add_argument("--out", required=True, help="job file to write")
    _plane_args(j, required=False)
    j.set_defaults(func=cmd_jobs)


def _plane_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--system", required=required, help="conf/systems/<sys>.yaml or its name "
                   "(validates node names and the HyperX shape)")
    p.add_argument("--plane", default="hyperx", help="plane name (default: hyperx)")


def _fabric(args: argparse.Namespace):
    if not args.system:
        return None
    return build_plane(load_system(system_path(args.system)), args.plane)


def cmd_build(args: argparse.Namespace) -> int:
    jobs = []
    for prefix, hostfile in args.job:
        matrix = dm.read_monitoring(prefix)
        jobs.append(dm.node_demand(matrix, dm.read_hostfile(hostfile), prefix))
    demand = dm.combine(jobs)
    path = dm.write_demand(demand, args.out, _fabric(args))
    pairs = sum(len(r) for r in demand.values())
    print(f"{path}: {len(demand)} source nodes, {pairs} node pairs from {len(jobs)} job(s)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    fabric = _fabric(args)
    if args.jobs:
        jobs = dm.read_jobs(args.file)
        dm.validate_jobs(jobs, fabric, args.file)
        print(f"{args.file}: {len(jobs)} jobs OK for {fabric.name}")
    else:
        demand = dm.read_demand(args.file)
        dm.validate_demand(demand, fabric, args.file)
        print(f"{args.file}: {len(demand)} source nodes OK for {fabric.name}")
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    jobs = {job: list(dict.fromkeys(dm.read_hostfile(h))) for job, h in args.job}
    fabric = _fabric(args)
    if fabric is not None:
        dm.validate_jobs(jobs, fabric, args.out)
    atomic_write(Path(args.out), dm.render_jobs(jobs))
    print(f"{args.out}: {len(jobs)} jobs, {sum(len(h) for h in jobs.values())} nodes")
    return 0
