"""``t2hx history check|sample``: batch-job traces (SWF or sacct) read, placed on a conf
system's nodes and sampled every 10 minutes into the samples file the seed 004 replay reads
(docs/history.md, docs/formats.md#history-samples)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from t2hx import argtypes as A
from t2hx.atomic import atomic_write
from t2hx.cli import defer
from t2hx.conf import load_system, system_path
from t2hx.errors import T2hxError
from t2hx.history import hostlist
from t2hx.study import PLACEMENT_POLICIES as POLICIES
from t2hx.history.trace import SACCT_FORMAT, Trace

if TYPE_CHECKING:
    from t2hx.history.sampling import Placement


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="read, place and sample batch-job traces (seed 004)",
                       description="Batch-job traces in the Parallel Workloads Archive's SWF "
                       f"or `sacct --parsable2 --allocations --format={SACCT_FORMAT}` "
                       "output (may be .gz/.xz/.bz2), placed on a system's nodes.")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    c = verbs.add_parser("check", help="read a trace and say what it holds (writes nothing)")
    _trace_args(c)
    c.set_defaults(func=cmd_check)
    s = verbs.add_parser("sample", help="running jobs every --interval seconds → samples file")
    _trace_args(s)
    defer(s, sample_args)
    s.set_defaults(func=cmd_sample)
    # "replay" was its first name: t2hx replay regenerates a log's figures, this routes samples
    r = verbs.add_parser("route", aliases=["replay"], help="samples file → routing metrics per "
                         "sample under updn, ftree, dfsssp and sar (real OpenSM), and Table 1")
    _samples_args(r)
    r.add_argument("--out", required=True, type=A.as_path(A.output_dir),
                   help="folder for replay.json (rows) and table1.json")
    r.set_defaults(func=cmd_route)
    u = verbs.add_parser("updates", help="samples file → each SAR re-route checked as seed "
                         "004's property-preserving network update (Def 6)")
    _samples_args(u)
    u.add_argument("--out", required=True, type=A.as_path(A.output_file),
                   help="JSON file: one record per re-route")
    u.add_argument("--limit", type=A.positive_int, default=None,
                   help="check only the first N re-routes")
    u.add_argument("--naive", action="store_true", help="also count the intermediate "
                   "states with a loop or deadlock cycle without the protocol (slow)")
    u.set_defaults(func=cmd_updates)
    b = verbs.add_parser("background", help="the multi-switch jobs running at one moment, "
                         "minus a benchmark's nodes → SAR job file (Fig 8 on a busy system)")
    _trace_args(b)
    b.add_argument("--plane", required=True, type=A.name, help="plane whose leaf switches count")
    b.add_argument("--day", type=A.non_negative_float, required=True,
                   help="days after the trace's first job")
    b.add_argument("--at", type=A.non_negative_float, default=0.0,
                   help="seconds into that day (default 0; noon: 43200)")
    b.add_argument("--exclude", type=A.input_file, default=None,
                   help="the benchmark's hostfile: its nodes are taken out of the jobs")
    b.add_argument("--out", required=True, type=A.as_path(A.output_file),
                   help="SAR job file to write")
    b.set_defaults(func=cmd_background)


def _samples_args(p: argparse.ArgumentParser) -> None:
    """A samples file, the system and plane it is routed on, the routing cache."""
    p.add_argument("samples", type=A.input_file, help="samples file of `t2hx history sample`")
    p.add_argument("--system", required=True, type=A.system, metavar="FILE",
                   help="the system the samples were placed on")
    p.add_argument("--plane", required=True, type=A.name, help="plane to route")
    p.add_argument("--work", type=A.as_path(A.output_dir), default=None,
                   help="routing cache root (default: the checkout's work/)")


def sample_args(s: argparse.ArgumentParser) -> None:
    from t2hx.history.sampling import INTERVAL_S     # numpy: deferred (t2hx/cli.py)

    s.add_argument("--out", required=True, type=A.as_path(A.output_file),
                   help="samples file to write (JSON)")
    s.add_argument("--interval", type=A.seconds, default=float(INTERVAL_S),
                   help=f"seconds between samples (default {INTERVAL_S}, seed 004 §4.2)")
    s.add_argument("--first-day", type=A.non_negative_float, default=0.0,
                   help="start this many days after the trace's first job (default 0)")
    s.add_argument("--days", type=A.positive_float, default=None,
                   help="sample only this many days (default: the whole trace)")


def _trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", type=A.input_file, help="SWF file or sacct --parsable2 output")
    p.add_argument("--system", required=True, type=A.system, metavar="FILE",
                   help="conf/systems/<sys>.yaml (or the name) whose nodes the jobs run on")
    p.add_argument("--format", default="auto", choices=("auto", "swf", "sacct"),
                   help="trace format (default: from its first line)")
    p.add_argument("--placement", default="first-fit", choices=POLICIES,
                   help="how an SWF trace's jobs get nodes (default first-fit; "
                   "docs/history.md#placement)")


def _load(args: argparse.Namespace) -> tuple[Trace, Placement, str, list[str]]:
    from t2hx.history import samples

    system = load_system(system_path(args.system))
    trace, placement, hosts = samples.load(args.trace, system, args.format, args.placement)
    return trace, placement, system.name, hosts


def cmd_background(args: argparse.Namespace) -> int:
    from t2hx.history.background import background_jobs, background_text
    from t2hx.routing import demand as dm

    system = load_system(system_path(args.system))
    exclude = list(dict.fromkeys(dm.read_hostfile(args.exclude))) if args.exclude else []
    jobs = background_jobs(system, args.plane, args.trace, args.day, args.at, args.placement,
                           exclude)
    atomic_write(args.out, background_text(jobs, args.trace, args.day, args.at,
                                           args.placement, len(exclude)))
    sizes = ", ".join(str(len(h)) for h in jobs.values()) or "none"
    print(f"{args.out}: {len(jobs)} multi-switch jobs ({sizes} nodes)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from t2hx.history import samples

    print(samples.summary(*_load(args)))
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from t2hx.history import samples

    trace, placement, system, hosts = _load(args)
    doc = samples.samples_doc(trace, placement, system, len(hosts), args.interval,
                              args.first_day, args.days)
    atomic_write(args.out, json.dumps(doc, separators=(",", ":")) + "\n")
    print(samples.summary(trace, placement, system, hosts))
    print(f"{len(doc['samples'])} samples every {args.interval:g} s → {args.out}")
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    from t2hx.history.sample_routing import METRICS, OBLIVIOUS, Router, improvements, route_samples
    from t2hx.history.samples import DAY_S
    from t2hx.paths import work_root
    from t2hx.progress import Progress

    doc = _samples_of(args)
    system = load_system(system_path(args.system))
    with Router(system, args.plane, args.work or work_root(), quiet=args.quiet) as router, \
            Progress("history route", len(doc["samples"]), quiet=args.quiet) as prog:
        rows = route_samples(doc, router, step=lambda n, total: prog.step(
            f"t={doc['samples'][n - 1]['t'] / DAY_S:.2f} d, {router.reroutes} SAR "
            "routings"))
    table = {m: {o: improvements(rows, m, o) for o in OBLIVIOUS} for m in METRICS}
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / "replay.json", json.dumps(rows, separators=(",", ":")) + "\n")
    atomic_write(args.out / "table1.json", json.dumps(
        {"system": system.name, "plane": args.plane, "samples": len(doc["samples"]),
         "sar_routings": router.reroutes, "improvement": table}, indent=1) + "\n")
    print(f"{len(doc['samples'])} samples, {router.reroutes} SAR routings → {args.out}")
    return 0


def cmd_updates(args: argparse.Namespace) -> int:
    from t2hx.history.updates import updates
    from t2hx.paths import work_root
    from t2hx.progress import Progress

    doc = _samples_of(args)
    system = load_system(system_path(args.system))
    with Progress("history updates", quiet=args.quiet) as prog:
        found = list(updates(doc, system, args.plane, args.work or work_root(), args.limit,
                             args.naive, step=lambda n, total: prog.say(
                                 f"job set {n} of {total}")))
    atomic_write(args.out, json.dumps(found, indent=1) + "\n")
    bad = [r["reroute"] for r in found if not r["preserving"]]
    print(f"{len(found)} re-routes, {sum(r['mads'] for r in found)} LFT blocks sent; "
          + (f"Def 6 fails for re-routes {bad}" if bad else "Def 6 holds for every one")
          + f" → {args.out}")
    return 1 if bad else 0


def _samples_of(args: argparse.Namespace) -> dict:
    """The samples file, checked against --system and --plane."""
    doc = read_samples(args.samples)
    system = load_system(system_path(args.system))
    if doc["system"] != system.name:
        raise T2hxError(f"the samples were placed on {doc['system']}, not {system.name}",
                        file=args.samples, field="system",
                        fix=f"--system {doc['system']}, or sample the trace again")
    system.plane(args.plane)
    return doc


def read_samples(path: str) -> dict:
    from t2hx.history.samples import SAMPLES_FORMAT
    from t2hx.textfile import read_text

    try:
        doc = json.loads(read_text(path, what="samples file"))
    except json.JSONDecodeError as err:
        raise T2hxError(f"not JSON ({err.msg}, line {err.lineno})", file=path,
                        fix="write it with t2hx history sample") from None
    if not isinstance(doc, dict) or doc.get("format") != SAMPLES_FORMAT:
        raise T2hxError(f"not a {SAMPLES_FORMAT} file", file=path, field="format",
                        fix="write it with t2hx history sample")
    _check_samples(doc, path)
    return doc


def _check_samples(doc: dict, path: str) -> None:
    """Every job a host list, every sample a time and indices of those jobs."""
    fix = "write it again with t2hx history sample"
    jobs, samples = doc.get("jobs"), doc.get("samples")
    if not isinstance(jobs, list) or not isinstance(samples, list) or \
            not isinstance(doc.get("system"), str):
        raise T2hxError("needs system, jobs and samples", file=path, fix=fix)
    for k, job in enumerate(jobs):
        try:
            hostlist.expand(job["hosts"])
        except (TypeError, KeyError, ValueError, AttributeError):
            raise T2hxError("not a host list", file=path, field=f"jobs[{k}].hosts",
                            fix=fix) from None
    for k, sample in enumerate(samples):
        ok = isinstance(sample, dict) and isinstance(sample.get("t"), (int, float)) and \
            isinstance(sample.get("jobs"), list) and all(
                isinstance(i, int) and 0 <= i < len(jobs) for i in sample["jobs"])
        if not ok:
            raise T2hxError("needs t and jobs (indices into jobs)", file=path,
                            field=f"samples[{k}]", fix=fix)
