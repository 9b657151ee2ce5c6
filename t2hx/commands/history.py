"""``t2hx history check|sample``: batch-job traces (SWF or sacct) read, placed on a conf
system's nodes and sampled every 10 minutes into the samples file the seed 004 replay reads
(docs/history.md, docs/formats.md#history-samples)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from t2hx import argtypes as A
from t2hx.atomic import atomic_write
from t2hx.conf import load_system, system_path
from t2hx.errors import T2hxError
from t2hx.history import hostlist
from t2hx.history.sampling import INTERVAL_S, Placement, place, running, sample_times
from t2hx.history.trace import SACCT_FORMAT, Trace, read_trace

SAMPLES_FORMAT = "t2hx-history-samples/1"
DAY_S = 86400.0
#: Ten years every 10 minutes; more is a unit slip (--interval is in seconds).
MAX_SAMPLES = 525_600


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
    s.add_argument("--out", required=True, type=A.as_path(A.output_file),
                   help="samples file to write (JSON)")
    s.add_argument("--interval", type=A.seconds, default=float(INTERVAL_S),
                   help=f"seconds between samples (default {INTERVAL_S}, seed 004 §4.2)")
    s.add_argument("--first-day", type=A.non_negative_float, default=0.0,
                   help="start this many days after the trace's first job (default 0)")
    s.add_argument("--days", type=A.positive_float, default=None,
                   help="sample only this many days (default: the whole trace)")
    s.set_defaults(func=cmd_sample)


def _trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", type=A.input_file, help="SWF file or sacct --parsable2 output")
    p.add_argument("--system", required=True, type=A.system, metavar="FILE",
                   help="conf/systems/<sys>.yaml (or the name) whose nodes the jobs run on")
    p.add_argument("--format", default="auto", choices=("auto", "swf", "sacct"),
                   help="trace format (default: from its first line)")


def _load(args: argparse.Namespace) -> tuple[Trace, Placement, str, list[str]]:
    system = load_system(system_path(args.system))
    hosts = [h for h in system.hostnames() if h not in set(system.nodes.get("down", []))]
    trace = read_trace(args.trace, args.format, hosts)
    return trace, place(trace, hosts), system.name, hosts


def _summary(trace: Trace, placement: Placement, system: str, hosts: list[str]) -> str:
    lo, hi = trace.span
    widest = max(len(j.hosts) for j in placement.jobs) if placement.jobs else 0
    lines = [f"{trace.path.name}: {trace.format}, {len(trace.jobs)} jobs over "
             f"{(hi - lo) / DAY_S:.1f} days; on {system} ({len(hosts)} nodes): "
             f"{len(placement.jobs)} placed, widest {widest} nodes"]
    lines += [f"  left out: {n} {why}" for why, n in {**trace.skipped,
                                                       **placement.left_out}.items()]
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    print(_summary(*_load(args)))
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    trace, placement, system, hosts = _load(args)
    if not placement.jobs:
        raise T2hxError("no job of the trace fits the system", file=args.trace,
                        fix="use the conf system of the trace's machine (--system)")
    lo = min(j.start for j in placement.jobs) + args.first_day * DAY_S
    hi = max(j.end for j in placement.jobs)
    if args.days is not None:
        hi = min(hi, lo + args.days * DAY_S)
    if hi <= lo:
        raise T2hxError(f"the trace ends before day {args.first_day:g}", field="--first-day",
                        fix=f"use a day below {(hi - lo) / DAY_S + args.first_day:.1f}")
    if (hi - lo) / args.interval > MAX_SAMPLES:
        raise T2hxError(f"{(hi - lo) / args.interval:.3g} samples is over {MAX_SAMPLES:,}",
                        field="--interval", fix="sample less often or fewer --days")
    times = sample_times(placement.jobs, args.interval, (lo, hi))
    sets = running(placement.jobs, times)
    used = sorted({i for s in sets for i in s})
    index = {old: new for new, old in enumerate(used)}
    doc = {
        "format": SAMPLES_FORMAT,
        "trace": {"file": Path(args.trace).name, "format": trace.format,
                  "sha256": trace.sha256, "epoch": trace.epoch},
        "system": system, "nodes": len(hosts), "interval_s": args.interval,
        "left_out": {**trace.skipped, **placement.left_out},
        "jobs": [{"id": placement.jobs[i].id, "start": placement.jobs[i].start,
                  "end": placement.jobs[i].end,
                  "hosts": hostlist.compress(list(placement.jobs[i].hosts))} for i in used],
        "samples": [{"t": float(t), "jobs": [index[i] for i in s]} for t, s in zip(times, sets)],
    }
    atomic_write(args.out, json.dumps(doc, separators=(",", ":")) + "\n")
    print(_summary(trace, placement, system, hosts))
    print(f"{len(times)} samples every {args.interval:g} s → {args.out}")
    return 0
