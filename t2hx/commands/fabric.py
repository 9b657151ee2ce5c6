"""``t2hx fabric build|route|import|analyze``: the fabric engine from the command line.

The fabric generators, OpenSM and the analysis (numpy) are imported by the verb that uses
them: ``t2hx --help`` imports every command module (tests/test_imports.py)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
from pathlib import Path
from t2hx import argtypes as A

from t2hx.conf import ENGINES, load_system, system_path
from t2hx.errors import RoutingError, T2hxError
from t2hx.fabric.sitefabric import report_of
from t2hx.atomic import atomic_write
from t2hx.progress import Progress
from t2hx.atomic import atomic_copy, staged_file
from t2hx.textfile import read_text
from t2hx.paths import work_root

DUMP_FILES = ("opensm-lfts.dump", "opensm-subnet.lst", "guid2lid")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fabric", help="build, route and analyse a plane of a system",
                       description="Fabric engine: topology → ibsim netfile → real OpenSM "
                       "routing → routing analysis.")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")

    b = verbs.add_parser("build", help="generate the plane's fabric and ibsim netfile")
    _common(b)
    b.set_defaults(func=cmd_build)

    r = verbs.add_parser("route", help="route the plane with OpenSM under ibsim and analyse")
    _common(r)
    r.add_argument("--routing", required=True, choices=ENGINES, metavar="ROUTING",
                   help="OpenSM routing engine (e.g. ftree, dfsssp)")
    r.add_argument("--lmc", type=A.lmc, default=None, help="LID mask control 0-7 (default: conf)")
    r.set_defaults(func=cmd_route)

    i = verbs.add_parser("import", help="copy a real fabric's OpenSM dumps (DIR or HOST:DIR)")
    _common(i)
    i.add_argument("--from", dest="source", required=True,
                   help="directory with opensm-lfts.dump, opensm-subnet.lst and guid2lid, "
                   "or HOST:DIR reachable by scp")
    i.set_defaults(func=cmd_import)

    a = verbs.add_parser("analyze", help="analyse routing dumps (hops, EFI, jobs, CDG)")
    _common(a)
    a.add_argument("--dumps", required=True, type=A.input_dir,
                   help="directory of a route or import run")
    a.add_argument("--jobs", type=A.input_file,
                   help="job-to-node mapping: one job per line, hostnames "
                   "separated by spaces")
    a.set_defaults(func=cmd_analyze)

    c = verbs.add_parser("cost", help="switch, cable and HCA-port counts of whole systems")
    c.add_argument("systems", nargs="+", type=A.system, help="conf/systems/<sys>.yaml or names")
    c.add_argument("--reference", type=A.name,
                   help="system whose counts the ratio columns divide by")
    c.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    c.set_defaults(func=cmd_cost)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", required=True, type=A.name, help="plane name in that file")
    p.add_argument("--out", type=A.output_dir,
                   help="output directory (default: <sys>/<plane>/... under "
                   "$T2HX_WORK_ROOT, else work/)")
    p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no progress output")


def _load(args: argparse.Namespace):
    from t2hx.fabric.build import build_plane, check_planes

    system = load_system(system_path(args.system))
    check_planes(system)
    return system, build_plane(system, args.plane)


def cmd_build(args: argparse.Namespace) -> int:
    from t2hx.fabric.netfile import write_netfile

    system, fabric = _load(args)
    out = Path(args.out) if args.out else work_root() / system.name / args.plane
    write_netfile(fabric, out / "fabric.net")
    info = {"system": system.name, "plane": args.plane, "topology": fabric.topology,
            "switches": len(fabric.switches()), "hcas": len(fabric.hcas()),
            "cables": len(fabric.cables), "inter_switch_cables": len(fabric.inter_switch_cables()),
            "conf_sha256": system.sha256}
    atomic_write(out / "fabric.json", json.dumps(info, indent=2) + "\n")
    print(f"{fabric.name}: {info['switches']} switches, {info['hcas']} HCAs, "
          f"{info['cables']} cables ({info['inter_switch_cables']} inter-switch) → {out}")
    if (report := report_of(fabric)) is not None:
        print(report.summary())     # what a site's dump held and what the plane left out
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    from t2hx.routing.engines import route_args
    from t2hx.routing.opensm import route

    system, fabric = _load(args)
    plane = system.plane(args.plane)
    lmc = plane.opensm["lmc"] if args.lmc is None else args.lmc
    if not 0 <= lmc <= 7:
        raise T2hxError(f"LMC {lmc} out of range", field="--lmc", fix="use 0..7")
    out = Path(args.out) if args.out else work_root() / system.name / args.plane / args.routing
    kwargs = route_args(fabric, args.routing, plane.opensm, system.path, lmc)
    if args.lmc is not None and kwargs["lmc"] != args.lmc:      # refused, not ignored
        raise T2hxError(f"{args.routing} always routes at LMC {kwargs['lmc']}",
                        field="--lmc", fix=f"drop --lmc or pass --lmc {kwargs['lmc']}")
    lmc = kwargs["lmc"]
    with Progress(f"route {fabric.name}", quiet=args.quiet) as progress:
        progress.say(f"ibsim + opensm -R {args.routing} (lmc {lmc})")
        run = route(fabric, out, args.routing, timeout=plane.opensm["timeout"], **kwargs)
        progress.say(f"routed in {run.summary['seconds']} s; analysing")
        report = _analyse(fabric, out, run.summary, lmc)
    if (dump := report_of(fabric)) is not None:
        print(dump.summary())       # loop-back cables and the like, left out of the plane
    _print_summary(report)
    return 1 if report["fallback"] else 0


def cmd_cost(args: argparse.Namespace) -> int:
    from t2hx.fabric import cost

    rows = [cost.system_counts(load_system(system_path(name))) for name in args.systems]
    if args.reference and args.reference not in {r["system"] for r in rows}:
        raise T2hxError(f"reference '{args.reference}' is not among the systems",
                        field="--reference", fix="pass one of the systems' names")
    print(json.dumps(rows, indent=2) if args.json else cost.table(rows, args.reference), end="")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from t2hx.routing.lft import load_tables

    system, fabric = _load(args)
    out = Path(args.out) if args.out else work_root() / system.name / args.plane / "imported"
    out.mkdir(parents=True, exist_ok=True)
    for name in DUMP_FILES:
        _fetch(args.source, name, out)
    tables = load_tables(fabric, out)
    print(f"imported {fabric.name}: {len(tables.lid_node)} LIDs, LMC {tables.lmc} → {out}")
    return 0


def _fetch(source: str, name: str, out: Path) -> None:
    local = Path(source)
    if ":" in source and not local.exists():
        with staged_file(out / name) as tmp:
            result = subprocess.run(["scp", "-q", "-o", "BatchMode=yes", f"{source}/{name}",
                                     str(tmp)], capture_output=True, text=True)
            if result.returncode != 0:
                raise RoutingError(f"cannot copy {name}: "
                                   f"{result.stderr.strip() or 'scp failed'}",
                                   field="--from", fix="check the host, path and ssh keys")
        return
    if not (local / name).exists():
        raise RoutingError(f"{name} missing", file=local, field="--from",
                           fix="point at OpenSM's dump_files_dir (guid2lid is in its cache "
                           "dir, usually /var/cache/opensm)")
    atomic_copy(local / name, out / name)


def cmd_analyze(args: argparse.Namespace) -> int:
    from t2hx.routing import analysis
    from t2hx.routing.demand import check_nodes
    from t2hx.routing.lft import load_tables

    system, fabric = _load(args)
    dumps = Path(args.dumps)
    meta = dumps / "opensm-run.json"
    routing = json.loads(meta.read_text()) if meta.exists() else {"engine": "imported",
                                                                   "fallback": False}
    tables = load_tables(fabric, dumps)
    report = _analyse(fabric, Path(args.out or dumps), routing, tables.lmc, tables)
    if args.jobs:
        jobs = [line.split() for line in read_text(args.jobs, what="job list").splitlines()
                if line.strip()]
        check_nodes({h for job in jobs for h in job}, fabric, args.jobs, "the job list")
        try:
            m = analysis.job_metrics(tables, jobs)
        except T2hxError as err:   # names the job, not the file it came from
            raise T2hxError(err.message, file=args.jobs, field=err.field, fix=err.fix) from None
        report["jobs"] = {"max_effective_efi": m.max_effective_efi,
                          "dark_fiber": round(m.dark_fiber, 4),
                          "per_job_max_efi": m.per_job_max_efi, "links_per_job": m.links_per_job}
        atomic_write(Path(args.out or dumps) / "routing-summary.json",
                     json.dumps(report, indent=2) + "\n")
    _print_summary(report)
    return 0


def _analyse(fabric, out: Path, routing: dict, lmc: int, tables=None) -> dict:
    from t2hx.routing import analysis
    from t2hx.routing.lft import load_tables

    tables = tables or load_tables(fabric, out, lmc)
    report = analysis.summary(tables, routing)
    efi = analysis.edge_forwarding_index(tables)
    mask = analysis.inter_switch_mask(tables)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["link", "src", "dst", "efi"])
    for k in mask.nonzero()[0]:
        w.writerow([int(k), fabric.nodes[tables.link_src[k]].name,
                    fabric.nodes[tables.link_dst[k]].name, int(efi[k])])
    atomic_write(out / "links.csv", buf.getvalue())
    atomic_write(out / "routing-summary.json", json.dumps(report, indent=2) + "\n")
    return report


def _print_summary(r: dict) -> None:
    fb = f" FELL BACK to {r.get('engine_used')}" if r.get("fallback") else ""
    if "note" in r:
        print(f"{r['engine']} lmc={r.get('lmc', 0)}{fb}: {r['hca_count']} HCAs, "
              f"{r['switch_count']} switches: {r['note']}")
        return
    print(f"{r['engine']} lmc={r.get('lmc', 0)}{fb}: {r['hca_count']} HCAs, "
          f"{r['switch_count']} switches, VLs {r['vls']}, max switch hops "
          f"{r['max_switch_hops']} (avg {r['avg_switch_hops']}), EFI max {r['max_efi']} "
          f"mean {r['mean_efi']}, unused links {r['unused_links']}/{r['inter_switch_links']}, "
          f"single-VL CDG {'acyclic' if r['cdg_acyclic_single_vl'] else 'cyclic'}, "
          f"{r['seconds']} s")
    if "jobs" in r:
        j = r["jobs"]
        print(f"jobs: max effective EFI {j['max_effective_efi']}, dark fiber "
              f"{j['dark_fiber']:.1%}, per-job max EFI {j['per_job_max_efi']}, "
              f"links per job {j['links_per_job']}")
