"""Every line and file that one part of t2hx writes and another reads, defined once.

Writers render with these functions and readers parse with them, so a format cannot drift
between the two sides (docs/formats.md describes each):

* the simulated-output header ``# t2hx-simulated: [kind] key=value …`` (``t2hx simulate``,
  ``campaign simulate-capacity`` and ``simulate-workload`` write it; the parsers, the
  checks and the scorecard read it);
* the solver walltime line of our proxy-app patches and the flow model's app runs;
* the capacity lines (``T2HX capacity finished/cut/failed: …``, ``aborted``, ``window
  closed``) of the capacity driver (checks/capacity.py, bash) and ``campaign
  simulate-capacity``, read by the capacity check;
* the workload lines (``T2HX workload job=…``, ``window closed``) of ``campaign
  simulate-workload``, read by the workload check and post;
* the job-history lines (``T2HX history engine=…``, ``day done``) of ``campaign
  simulate-history``, read by the history check;
* the run metadata ``t2hx-run.json`` the checks keep beside every raw output, read by
  ``t2hx.post.ingest``;
* the perflog fields ReFrame writes with :data:`PERFLOG_FORMAT`, read by
  ``t2hx.post.perflog``.

This module imports nothing heavy: the checks, the CLI and ReFrame's site configuration all
read it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# --- the simulated-output header --------------------------------------------------------------

SIM_MARKER = "# t2hx-simulated:"


@dataclass(frozen=True)
class SimHeader:
    """The first line of a simulated output: an optional kind word (``capacity``,
    ``workload``) and its key=value pairs, all strings once parsed."""
    pairs: dict[str, str]
    kind: str | None = None


def sim_header(pairs: Mapping[str, object], kind: str | None = None) -> str:
    """The header line, newline included; values print as ``str(value)``, shell-quoted
    only when they hold blanks or quotes (:func:`parse_sim_header` reads them back)."""
    words = [SIM_MARKER, *([kind] if kind else []),
             *(f"{k}={shlex.quote(str(v))}" for k, v in pairs.items())]
    return " ".join(words) + "\n"


def parse_sim_header(line: str) -> SimHeader | None:
    """The header of ``line``, or None when it is no simulated-output header."""
    if not line.startswith(SIM_MARKER):
        return None
    pairs: dict[str, str] = {}
    kind = None
    for token in shlex.split(line[len(SIM_MARKER):]):
        key, eq, value = token.partition("=")
        if eq:
            pairs[key.strip()] = value.strip()
        elif kind is None and not pairs:
            kind = token
    return SimHeader(pairs, kind)


def split_simulated(text: str) -> tuple[str, dict[str, str] | None]:
    """Strip the header first line; return (rest, its key=value pairs or None)."""
    first, sep, rest = text.partition("\n")
    header = parse_sim_header(first)
    if header is None:
        return text, None
    return (rest if sep else ""), header.pairs


# --- the solver walltime line -----------------------------------------------------------------

WALLTIME_FORMAT = "T2HX solver walltime: {seconds:.6f} s"
#: The regex a finished app run's output must match (the registry's completion marker).
WALLTIME_MARKER = r"^T2HX solver walltime: "
# Anchored per line; tolerate a trailing CR from Windows-edited logs, nothing else.
WALLTIME_RE = re.compile(
    r"^T2HX solver walltime: ([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?) s\r?$", re.MULTILINE)


def walltime_line(seconds: float) -> str:
    return WALLTIME_FORMAT.format(seconds=seconds)


def walltimes(text: str) -> list[str]:
    """The seconds of every walltime line, as printed (the caller decides how to convert)."""
    return [m.group(1) for m in WALLTIME_RE.finditer(text)]


# --- the capacity lines -----------------------------------------------------------------------

CAPACITY = "T2HX capacity"
#: The fields of each per-run event, in the order they are printed.
CAPACITY_EVENTS: dict[str, tuple[str, ...]] = {
    "finished": ("app", "run", "start", "end"),     # the run ended before the window did
    "cut": ("app", "run", "start", "end"),          # the window ended the run (real cluster)
    "failed": ("app", "run", "status", "start", "end"),   # the run failed (real cluster)
}
CAPACITY_ABORTED = f"{CAPACITY} aborted"            # the driver stopped every app
CAPACITY_CLOSED = f"{CAPACITY} window closed"       # the window's end: the last line


@dataclass(frozen=True)
class CapacityEvent:
    event: str              # a CAPACITY_EVENTS key
    app: str
    run: int
    fields: dict[str, str]  # every field as printed


def capacity_mark(event: str) -> str:
    """The start of an event's line (also a regex: no special characters)."""
    if event not in CAPACITY_EVENTS:
        raise ValueError(f"unknown capacity event {event!r}")
    return f"{CAPACITY} {event}:"


def capacity_line(event: str, **values: object) -> str:
    """One event's line; ``values`` are printed as given (numbers formatted by the writer,
    or shell expressions in the bash driver)."""
    mark = capacity_mark(event)
    return " ".join([mark, *(f"{k}={values[k]}" for k in CAPACITY_EVENTS[event])])


_CAPACITY_RE = re.compile(rf"^{CAPACITY} ({'|'.join(CAPACITY_EVENTS)}): (.*)$", re.M)


def capacity_events(text: str) -> list[CapacityEvent]:
    """Every event line of a capacity output that names its app and run, in order (a line
    cut short by a kill after ``run=`` still says that the run ended)."""
    out = []
    for m in _CAPACITY_RE.finditer(text):
        fields = dict(kv.split("=", 1) for kv in m.group(2).split() if "=" in kv)
        if "app" in fields and fields.get("run", "").isdigit():
            out.append(CapacityEvent(m.group(1), fields["app"], int(fields["run"]), fields))
    return out


#: What one run of an app is made of in a simulated capacity window (``campaign
#: simulate-capacity``, t2hx.jobmix): its launch at its node count, its code's set-up and
#: teardown, its solve alone on its nodes (the three alone: ``alone``), seconds.
CAPACITY_LENGTH = f"{CAPACITY} run length:"
CAPACITY_LENGTH_FIELDS = ("app", "nodes", "launch", "setup", "solve", "alone")
_LENGTH_RE = re.compile(rf"^{CAPACITY_LENGTH} (.*)$", re.M)


def capacity_length_line(**values: object) -> str:
    return " ".join([CAPACITY_LENGTH, *(f"{k}={values[k]}" for k in CAPACITY_LENGTH_FIELDS)])


def capacity_lengths(text: str) -> dict[str, dict[str, float]]:
    """app -> its run-length parts (CAPACITY_LENGTH_FIELDS but app, as numbers)."""
    out = {}
    for m in _LENGTH_RE.finditer(text):
        fields = dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv)
        app = fields.pop("app")
        out[app] = {k: float(v) for k, v in fields.items()}
    return out


#: A cut run longer than this many times its app's longest finished run (plus the slack of
#: the driver's whole-second clock) is taken for a hung launch, not a run the window ended
#: halfway (docs/cluster.md, "Known limits").
STALL_FACTOR = 2.0
STALL_SLACK_S = 2.0


def stalled_runs(events: list[CapacityEvent], factor: float = STALL_FACTOR
                 ) -> list[CapacityEvent]:
    """The cut runs that lasted over ``factor`` times their app's longest finished run. A
    run the window ends is never longer than the run would have been, so a longer one hung
    (an app that finished no run fails on that count instead)."""
    def took(e: CapacityEvent) -> float:
        return float(e.fields["end"]) - float(e.fields["start"])

    longest: dict[str, float] = {}
    for e in events:
        if e.event == "finished":
            longest[e.app] = max(longest.get(e.app, 0.0), took(e))
    return [e for e in events if e.event == "cut" and e.app in longest
            and took(e) > factor * longest[e.app] + STALL_SLACK_S]


# --- the workload lines -----------------------------------------------------------------------

WORKLOAD_JOB = ("T2HX workload job={job} app={app} nodes={nodes} steps={steps} "
                "step_s={step_s:.9g} alone_steps={alone_steps} alone_step_s={alone_step_s:.9g}")
WORKLOAD_JOB_RE = re.compile(r"^T2HX workload job=(\d+) app=(\S+) nodes=(\d+) steps=(\d+) "
                             r"step_s=(\S+) alone_steps=(\d+) alone_step_s=(\S+)$", re.M)
WORKLOAD_CLOSED = "T2HX workload window closed"


@dataclass(frozen=True)
class WorkloadJob:
    """One job of a multi-job workload: its steps and mean step time in the mix and alone."""
    job: int
    app: str
    nodes: int
    steps: int
    step_s: float
    alone_steps: int
    alone_step_s: float


def workload_line(job: WorkloadJob) -> str:
    return WORKLOAD_JOB.format(**vars(job))


def workload_jobs(text: str) -> list[WorkloadJob]:
    return [WorkloadJob(int(j), app, int(n), int(s), float(ss), int(a), float(a_s))
            for j, app, n, s, ss, a, a_s in WORKLOAD_JOB_RE.findall(text)]


# --- the job-history lines ---------------------------------------------------------------------

HISTORY_ENGINE = ("T2HX history engine={engine} samples={samples} max_efi={max_efi:.9g} "
                  "avg_job_max_efi={avg_job_max_efi:.9g} dark_fiber={dark_fiber:.9g} "
                  "avg_job_links={avg_job_links:.9g}")
HISTORY_ENGINE_RE = re.compile(r"^T2HX history engine=(\S+) samples=(\d+) max_efi=(\S+) "
                               r"avg_job_max_efi=(\S+) dark_fiber=(\S+) avg_job_links=(\S+)$",
                               re.M)
HISTORY_DONE = "T2HX history day done"
HISTORY_ROWS = "history.json"        # the day's rows, kept in log/<campaign>/histories/
HISTORY_JOBS = "jobs.json"           # the day's jobs beside them (seed 004 Fig 1)


@dataclass(frozen=True)
class HistoryEngine:
    """One engine's means over a day of samples (seed 004 §4.2's metrics)."""
    engine: str
    samples: int
    max_efi: float
    avg_job_max_efi: float
    dark_fiber: float
    avg_job_links: float


def history_line(h: HistoryEngine) -> str:
    return HISTORY_ENGINE.format(**vars(h))


def history_engines(text: str) -> list[HistoryEngine]:
    return [HistoryEngine(e, int(n), *map(float, rest))
            for e, n, *rest in HISTORY_ENGINE_RE.findall(text)]


# --- the network-analysis lines (seed 001 Ch. 5, checks/network.py) --------------------------

NETWORK_METRICS = ("diameter", "aspl", "cable_mean_m", "bcast_hops", "allreduce_hops",
                   "alltoall_hops")
NETWORK_LINE = "T2HX network " + " ".join(f"{m}={{{m}:.9g}}" for m in NETWORK_METRICS)
NETWORK_LINE_RE = re.compile(r"^T2HX network " + " ".join(f"{m}=(\\S+)" for m in NETWORK_METRICS)
                             + "$", re.M)
NETWORK_DONE = "T2HX network done"
NETWORK_BENCHMARK = "network"       # the perflog benchmark of these cases (not a registry entry)
NETWORK_ROWS = "network.json"        # the whole analysis, kept in log/<campaign>/networks/


def network_line(values: dict[str, float]) -> str:
    return NETWORK_LINE.format(**values)


def network_metrics(text: str) -> dict[str, float]:
    """The summary line's metrics (ring mapping's collective hops); empty if absent."""
    found = NETWORK_LINE_RE.findall(text)
    return dict(zip(NETWORK_METRICS, map(float, found[-1]))) if found else {}


# --- the run metadata -------------------------------------------------------------------------

RUN_META = "t2hx-run.json"
# A case simulated on an engine other than the flow model also runs on the flow model, for
# the report's side-by-side (docs/modelling.md#packet-engine): its output beside the case's
# in the stage, then kept under log/<campaign>/companion/<engine>/ like a run.
COMPANION_ENGINE = "flow"
COMPANION_OUTPUT = "companion-flow.out"
COMPANION_DIR = "companion"
#: The keys that become table columns (t2hx.post.ingest); a run's file may hold more
#: (hostfile, input, sim, route).
RUN_META_KEYS = ("benchmark", "campaign", "system", "partition", "topology", "routing",
                 "placement", "combo", "nodes", "repetition", "msg_size", "timestamp",
                 "git_hash", "simulated")


def run_timestamp() -> str:
    """When a run was kept: UTC, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run_meta_text(meta: Mapping[str, Any]) -> str:
    return json.dumps(dict(meta), indent=2, sort_keys=True) + "\n"


def parse_run_meta(text: str) -> dict[str, Any]:
    """The metadata of one run; ValueError (one line) when it cannot be a run's."""
    meta = json.loads(text)
    if not isinstance(meta, dict) or not meta.get("benchmark"):
        raise ValueError("no 'benchmark' key")
    nested = [k for k in RUN_META_KEYS if isinstance(meta.get(k), (list, dict))]
    if nested:          # every key is one table cell
        raise ValueError(f"'{nested[0]}' is not a single value")
    return meta


# --- the perflog fields -----------------------------------------------------------------------

#: Order = column order in the file. Names are ReFrame's header names: every test parameter
#: is its own field, so one line is a complete, self-describing measurement.
PERFLOG_FIELDS: tuple[str, ...] = (
    "job_completion_time", "version", "info", "system", "partition", "environ",
    "campaign", "combo", "topology", "routing", "placement", "benchmark", "num_nodes",
    "repetition", "msg_size", "git_hash", "simulated",
    "perf_var", "perf_value", "perf_unit", "perf_ref", "perf_lower_thres", "perf_upper_thres",
    "result",
)
PERFLOG_DELIM = "|"
# ReFrame's own (non-check) format specifiers; everything else is %(check_<name>)s.
_REFRAME_PLAIN = {"version"}
PERFLOG_FORMAT: str = PERFLOG_DELIM.join(
    f"%({f})s" if f in _REFRAME_PLAIN else f"%(check_{f})s" for f in PERFLOG_FIELDS)
PERFLOG_HEADER: str = PERFLOG_DELIM.join(PERFLOG_FIELDS)
#: How ReFrame writes a missing value, and what else means "no value".
PERFLOG_NULL = "null"
PERFLOG_NULLS = {"", PERFLOG_NULL, "None", "none", "nan"}


def perflog_line(**values: object) -> str:
    """One perflog line in :data:`PERFLOG_FIELDS` order; unspecified fields are null, as
    ReFrame writes them."""
    unknown = sorted(set(values) - set(PERFLOG_FIELDS))
    if unknown:
        raise ValueError(f"no perflog field {unknown[0]!r}")
    return PERFLOG_DELIM.join(str(values.get(f, PERFLOG_NULL)) for f in PERFLOG_FIELDS)


def perflog_values(line: str, header: str = PERFLOG_HEADER) -> dict[str, str | None]:
    """One line's fields by the names of its file's ``header`` (nulls are None)."""
    names, parts = header.split(PERFLOG_DELIM), line.split(PERFLOG_DELIM)
    if len(names) != len(parts):
        raise ValueError(f"{len(parts)} fields, header has {len(names)}")
    return {n: (None if p in PERFLOG_NULLS else p) for n, p in zip(names, parts)}
