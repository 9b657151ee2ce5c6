"""A batch-job trace read into jobs: start and end time and, when the trace records them,
the nodes each job ran on. Two formats: the Parallel Workloads Archive's Standard Workload
Format (SWF; jobs have processor counts, no nodes) and Slurm's accounting as
``sacct --parsable2`` prints it (node lists). Either may be gzip-, xz- or bzip2-compressed.

A malformed trace — a truncated line, a field that is not a number or time, a negative time
or duration, a node the system does not have — ends in one T2hxError line naming the file,
its line and field, and the fix; nothing is written (docs/history.md).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import math
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from t2hx.errors import T2hxError
from t2hx.history import hostlist

#: A year of a large site's accounting is tens of MB as text; more is a wrong file.
MAX_BYTES = 1 << 30
_OPENERS: dict[bytes, Callable[..., Any]] = {b"\x1f\x8b": gzip.open, b"\xfd7zXZ\x00": lzma.open, b"BZh": bz2.open}

#: SWF's 18 fields (Feitelson's definition, Parallel Workloads Archive); -1 means unknown.
SWF_FIELDS = ("job", "submit", "wait", "run", "procs", "cpu", "memory", "req_procs",
              "req_time", "req_memory", "status", "user", "group", "executable", "queue",
              "partition", "preceding", "think")
#: The sacct fields a trace needs (``sacct --parsable2 --allocations --format=...``).
SACCT_NEEDED = ("JobIDRaw", "Start", "End", "NodeList")
SACCT_FORMAT = "JobIDRaw,JobName,Partition,NNodes,NodeList,Submit,Start,End,State"


class TraceError(T2hxError):
    """A job trace is unreadable or malformed."""


@dataclass(frozen=True)
class Job:
    id: str
    start: float                     # seconds from the trace's epoch
    end: float
    nodes: int
    hosts: tuple[str, ...] = ()      # empty when the trace has no node lists (SWF)
    line: int = 0


@dataclass
class Trace:
    path: Path
    format: str                      # "swf" or "sacct"
    sha256: str
    epoch: float                     # Unix time of t = 0
    jobs: list[Job]
    skipped: dict[str, int] = field(default_factory=dict)   # reason -> jobs left out
    header: dict[str, str] = field(default_factory=dict)    # SWF ';' header fields

    @property
    def span(self) -> tuple[float, float]:
        if not self.jobs:
            return (0.0, 0.0)
        return (min(j.start for j in self.jobs), max(j.end for j in self.jobs))

    def procs_per_node(self) -> int | None:
        """SWF's MaxProcs / MaxNodes when the header gives both."""
        try:
            procs, nodes = int(self.header["MaxProcs"]), int(self.header["MaxNodes"])
        except (KeyError, ValueError):
            return None
        return procs // nodes if nodes > 0 and procs >= nodes else None


def _raw(path: Path) -> bytes:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise TraceError("trace is not a regular file", file=path,
                             fix="pass a trace file (.swf, sacct output; may be .gz/.xz)")
        data = path.read_bytes() if info.st_size <= MAX_BYTES else b""
        if not data and info.st_size:
            raise TraceError(f"trace of {info.st_size} bytes is over the 1 GiB limit",
                             file=path, fix="split the trace by month")
    except OSError as err:
        raise TraceError(f"cannot read trace ({err.strerror or err})", file=path,
                         fix="pass an existing, readable file") from None
    opener = next((o for magic, o in _OPENERS.items() if data.startswith(magic)), None)
    if opener is None:
        return data
    try:
        with opener(io.BytesIO(data)) as f:
            out = f.read(MAX_BYTES + 1)
    except (OSError, EOFError, lzma.LZMAError) as err:
        raise TraceError(f"compressed trace is damaged ({err})", file=path,
                         fix="download or copy the trace again") from None
    if len(out) > MAX_BYTES:
        raise TraceError("trace is over 1 GiB uncompressed", file=path,
                         fix="split the trace by month")
    return out


def _lines(path: Path, data: bytes) -> Iterator[tuple[int, str]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        at = data.count(b"\n", 0, err.start) + 1
        raise TraceError(f"not UTF-8 text (byte 0x{data[err.start]:02x})", file=path,
                         field=f"line {at}", fix="save the trace as UTF-8") from None
    if text and not text.endswith("\n"):
        # A file cut mid-write: its last line would parse as a shorter, wrong job.
        raise TraceError("the last line has no line end (a truncated file?)", file=path,
                         field=f"line {text.count(chr(10)) + 1}",
                         fix="copy the whole trace, or drop its last line")
    yield from enumerate(text.split("\n")[:-1], 1)


def detect(path: Path, data: bytes) -> str:
    """``swf`` or ``sacct`` from the first line that is not blank."""
    for _, line in _lines(path, data):
        if line.strip():
            if line.lstrip().startswith(";") or line.split()[0].lstrip("-").isdigit():
                return "swf"
            if "|" in line:
                return "sacct"
            break
    raise TraceError("neither an SWF trace nor sacct --parsable2 output", file=path,
                     fix=f"give an .swf file or `sacct --parsable2 --allocations "
                     f"--format={SACCT_FORMAT}` output")


def read_trace(path: str | Path, fmt: str = "auto", hosts: list[str] | None = None) -> Trace:
    """The trace's jobs, in start order. ``hosts``: the system's node names, which every node
    of a sacct trace must be among."""
    path = Path(path)
    data = _raw(path)
    fmt = detect(path, data) if fmt == "auto" else fmt
    digest = hashlib.sha256(data).hexdigest()
    if fmt == "swf":
        trace = _read_swf(path, data, digest)
    elif fmt == "sacct":
        trace = _read_sacct(path, data, digest, set(hosts) if hosts is not None else None)
    else:
        raise TraceError(f"unknown trace format {fmt!r}", field="format", fix="swf or sacct")
    trace.jobs.sort(key=lambda j: (j.start, j.line))
    if not trace.jobs:
        raise TraceError("no job in the trace ran", file=path,
                         fix="pass a trace with finished or running jobs")
    return trace


def _skip(skipped: dict[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1


def _swf_header(line: str, header: dict[str, str]) -> None:
    key, sep, value = line.lstrip(";").partition(":")
    if sep and key.strip() and " " not in key.strip():
        header.setdefault(key.strip(), value.strip())


def _swf_numbers(path: Path, number: int, line: str) -> list[float]:
    parts = line.split()
    if len(parts) != len(SWF_FIELDS):
        raise TraceError(f"{len(parts)} fields where SWF has {len(SWF_FIELDS)}", file=path,
                         field=f"line {number}", fix="a truncated or joined line: restore "
                         "it from the original trace, or delete it")
    values = []
    for name, text in zip(SWF_FIELDS, parts):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise TraceError(f"{name} {text[:30]!r} is not a number", file=path,
                             field=f"line {number}", fix="restore the line from the trace")
        values.append(value)
    return values


def _read_swf(path: Path, data: bytes, digest: str) -> Trace:
    header: dict[str, str] = {}
    rows: list[tuple[int, list[float]]] = []
    for number, line in _lines(path, data):
        if line.lstrip().startswith(";"):
            _swf_header(line, header)
        elif line.strip():
            rows.append((number, _swf_numbers(path, number, line)))
    trace = Trace(path, "swf", digest, float(header.get("UnixStartTime", "0") or 0), [],
                  header=header)
    per_node = trace.procs_per_node() or 1
    # A log without arrival times (every wait -1, e.g. the PWA's LLNL logs) records each
    # job's start in its submit field; in any other log a job's unknown wait leaves it out.
    starts_in_submit = bool(rows) and all(v[2] == -1 for _, v in rows)
    for number, v in rows:
        job = _swf_job(path, number, dict(zip(SWF_FIELDS, v)), per_node, trace.skipped,
                       starts_in_submit)
        if job:
            trace.jobs.append(job)
    return trace


def _swf_job(path: Path, number: int, f: dict[str, float], per_node: int,
             skipped: dict[str, int], starts_in_submit: bool) -> Job | None:
    for name in ("submit", "wait", "run", "procs", "req_procs"):
        if f[name] < -1 or (name == "submit" and f[name] < 0):
            raise TraceError(f"{name} {f[name]:g} is negative (SWF's unknown is -1)",
                             file=path, field=f"line {number}",
                             fix="restore the line from the trace, or delete it")
    procs = f["procs"] if f["procs"] > 0 else f["req_procs"]
    if f["wait"] < 0 and not starts_in_submit:
        _skip(skipped, "no start time (wait -1)")
        return None
    if f["run"] <= 0:
        _skip(skipped, "did not run (run time 0 or -1)")
        return None
    if procs <= 0:
        _skip(skipped, "no processor count")
        return None
    start = f["submit"] + max(f["wait"], 0)
    return Job(f"{f['job']:.0f}", start, start + f["run"], math.ceil(procs / per_node),
               line=number)


def _sacct_time(path: Path, number: int, name: str, text: str) -> float | None:
    """Seconds since the Unix epoch of sacct's ``YYYY-MM-DDTHH:MM:SS`` (the cluster's local
    time, read as UTC: only differences matter); None for Unknown/None."""
    if text in ("Unknown", "None", ""):
        return None
    try:
        return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise TraceError(f"{name} {text[:30]!r} is not a time", file=path,
                         field=f"line {number}", fix="print times as sacct does by default "
                         "(YYYY-MM-DDTHH:MM:SS)") from None


def _sacct_columns(path: Path, number: int, line: str) -> dict[str, int]:
    names = line.split("|")
    missing = [n for n in SACCT_NEEDED if n not in names and not
               (n == "JobIDRaw" and "JobID" in names)]
    if missing:
        raise TraceError(f"header has no {', '.join(missing)} column", file=path,
                         field=f"line {number}", fix=f"run sacct --parsable2 --allocations "
                         f"--format={SACCT_FORMAT} (with its header line)")
    return {n: i for i, n in enumerate(names)}


def _read_sacct(path: Path, data: bytes, digest: str, hosts: set[str] | None) -> Trace:
    columns: dict[str, int] = {}
    rows = []
    for number, line in _lines(path, data):
        if not line.strip():
            continue
        if not columns:
            columns = _sacct_columns(path, number, line)
            continue
        parts = line.split("|")
        if len(parts) != len(columns):
            raise TraceError(f"{len(parts)} fields where the header has {len(columns)}",
                             file=path, field=f"line {number}", fix="a truncated line: "
                             "restore it from sacct's output, or delete it")
        rows.append((number, {n: parts[i] for n, i in columns.items()}))
    trace = Trace(path, "sacct", digest, 0.0, [])
    running: list[tuple[int, dict, float]] = []
    last = -math.inf
    for number, row in rows:
        job = _sacct_row(path, number, row, hosts, trace.skipped)
        if job is None:
            continue
        start, end, names = job
        if end is None:
            running.append((number, row, start))
            last = max(last, start)
            continue
        last = max(last, end)
        running_id = row.get("JobIDRaw", row.get("JobID", ""))
        trace.jobs.append(Job(running_id, start, end, len(names), tuple(names), number))
    # A job still running when sacct ran has End Unknown: it runs to the trace's last time.
    for number, row, start in running:
        names = hostlist.expand(row["NodeList"])
        trace.jobs.append(Job(row.get("JobIDRaw", row.get("JobID", "")), start,
                              max(last, start), len(names), tuple(names), number))
    if trace.jobs:
        trace.epoch = min(j.start for j in trace.jobs)
        trace.jobs = [Job(j.id, j.start - trace.epoch, j.end - trace.epoch, j.nodes, j.hosts,
                          j.line) for j in trace.jobs]
    return trace


def _sacct_row(path: Path, number: int, row: dict[str, str], hosts: set[str] | None,
               skipped: dict[str, int]) -> tuple[float, float | None, list[str]] | None:
    job_id = row.get("JobIDRaw", row.get("JobID", ""))
    if "." in job_id:
        _skip(skipped, "job step (not an allocation)")
        return None
    start = _sacct_time(path, number, "Start", row["Start"])
    end = _sacct_time(path, number, "End", row["End"])
    if start is None or row["NodeList"] in ("", "None assigned"):
        _skip(skipped, "never started")
        return None
    if end is not None and end < start:
        raise TraceError(f"End {row['End']} is before Start {row['Start']}", file=path,
                         field=f"line {number}", fix="restore the line from sacct's output")
    if end is not None and end == start:
        _skip(skipped, "ran for 0 s")
        return None
    try:
        names = hostlist.expand(row["NodeList"])
    except ValueError as err:
        raise TraceError(f"NodeList: {err}", file=path, field=f"line {number}",
                         fix="restore the line from sacct's output") from None
    unknown = [n for n in names if hosts is not None and n not in hosts]
    if unknown:
        raise TraceError(f"node {unknown[0]!r} is not a node of the system", file=path,
                         field=f"line {number}", fix="replay the trace on the conf system "
                         "of the cluster that wrote it (--system)")
    return start, end, names
