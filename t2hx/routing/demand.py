"""Communication demand for PARX and job files for SAR.

Pipeline (seed 000 §3.2.2–3.2.3; docs/formats.md#demand-files): ``pml_monitoring`` profiles
(``<prefix>.<rank>.prof``, one per rank; run with ``--mca pml_monitoring_enable 1
--mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename <prefix>``) → rank × rank
byte matrix → node × node bytes through the hostfile (rank i runs on the i-th slot) →
normalised to 0..255 (0 = nothing, 1 = the smallest nonzero demand, 255 = the largest,
linear in between) → the node demand file the parx engine reads:

    # comment
    <src-node> <dst-node>:<w> [<dst-node>:<w> ...]

Several jobs are normalised separately (each profile is placement-oblivious) and merged;
a pair named by two jobs keeps the larger weight. The SAR job file is ``<node> <job-id>``
per line. Both files are validated against the fabric before OpenSM starts.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from collections.abc import Callable

import numpy as np

from t2hx.routing import parx
from t2hx.errors import T2hxError
from t2hx.fabric.graph import Fabric
from t2hx.atomic import atomic_write
from t2hx.atomic import staged_dir
from t2hx.textfile import read_text

Demand = dict[str, dict[str, int]]
# Slots per hostfile line: more than any node has hardware threads; the bound keeps a typo
# such as slots=4000000000 from filling memory with rank entries.
MAX_SLOTS = 65536
PROF = re.compile(r"^([EI])\s+(\d+)\s+(\d+)\s+(\d+) bytes", re.M)


class DemandError(T2hxError):
    """A profile, hostfile, demand or job file cannot be used."""


def profile_files(prefix: str | Path) -> list[Path]:
    """The ``<prefix>.<rank>.prof`` files, ordered by rank."""
    prefix = Path(prefix)
    files = list(prefix.parent.glob(prefix.name + ".*.prof"))
    ranked = []
    for f in files:
        rank = f.name[len(prefix.name) + 1:-len(".prof")]
        if rank.isdigit():
            ranked.append((int(rank), f))
    if not ranked:
        raise DemandError("no pml_monitoring files <prefix>.<rank>.prof", file=prefix,
                          fix="pass the prefix given as --mca pml_monitoring_filename")
    return [f for _, f in sorted(ranked)]


def read_monitoring(prefix: str | Path, ranks: int | None = None) -> np.ndarray:
    """Rank × rank bytes sent, from point-to-point lines (E: user messages, I: messages
    inside collectives when monitoring runs filtered). ``C`` lines are not added: with
    pml_monitoring_enable 1 their bytes are already in the E lines."""
    files = profile_files(prefix)
    n = ranks or len(files)          # pml_monitoring writes one file per rank
    matrix = np.zeros((n, n), dtype=np.int64)
    for f in files:
        for _kind, src, dst, nbytes in PROF.findall(f.read_text(errors="replace")):
            s, d, b = _count(src, f), _count(dst, f), _count(nbytes, f)
            if s >= n or d >= n:
                raise DemandError(f"rank {max(s, d)} outside a {n}-rank job", file=f,
                                  fix="pass the right rank count or all rank files")
            matrix[s, d] += b
    return matrix


def _count(text: str, source: Path) -> int:
    """A rank or byte count of a profile line; beyond int64 it is corrupt, not data."""
    if len(text) > 18:
        raise DemandError(f"number {text[:20]}... is too large", file=source,
                          fix="re-record the profile")
    return int(text)


def normalise(matrix: np.ndarray) -> np.ndarray:
    """0 stays 0 ("absolutely no bytes", seed 000 §3.2.3); the largest value maps to 255 and
    the others in proportion, at least 1. Proportional, not stretched between the smallest
    and the largest: in a near-uniform pattern (mpiGraph, an alltoall) a few bytes' difference
    must not decide between weight 1 and 255."""
    m = np.asarray(matrix, dtype=np.float64)
    if (m < 0).any():
        raise DemandError("negative byte counts in the demand matrix", fix="check the profile")
    out = np.zeros(m.shape, dtype=np.int64)
    nz = m > 0
    if nz.any():
        out[nz] = np.maximum(1, np.rint(m[nz] * 255.0 / m[nz].max())).astype(np.int64)
    return out


def read_hostfile(path: str | Path) -> list[str]:
    """Host of every rank: lines ``host`` or ``host slots=N`` (Open MPI), filled by slot."""
    path = Path(path)
    text = read_text(path, DemandError, "hostfile", "pass an existing hostfile")
    hosts: list[str] = []
    for no, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        slots = 1
        for w in words[1:]:
            m = re.fullmatch(r"(?:slots|max_slots)=([0-9]{1,9})", w)
            if not m or not 1 <= int(m.group(1)) <= MAX_SLOTS:
                raise DemandError(f"cannot read '{w}'", file=path, field=f"line {no}",
                                  fix=f"use 'host' or 'host slots=N' with N in 1..{MAX_SLOTS}")
            if w.startswith("slots="):
                slots = int(m.group(1))
        hosts.extend([words[0]] * slots)
    if not hosts:
        raise DemandError("hostfile names no hosts", file=path, fix="one host per line")
    return hosts


def node_demand(bytes_matrix: np.ndarray, hosts: list[str], source: object = None) -> Demand:
    """Node × node demand (0..255) of one job: bytes summed per node pair (ranks on the
    same node talk through shared memory, not the fabric), then normalised."""
    n = bytes_matrix.shape[0]
    if len(hosts) < n:
        raise DemandError(f"the profile has {n} ranks but the hostfile only {len(hosts)} "
                          "slots", file=source, fix="use the hostfile of the profiled job size")
    names = sorted(set(hosts[:n]), key=hosts.index)
    idx = {h: k for k, h in enumerate(names)}
    rank_node = np.array([idx[h] for h in hosts[:n]])
    nodes = np.zeros((len(names), len(names)), dtype=np.int64)
    np.add.at(nodes, (rank_node[:, None], rank_node[None, :]), bytes_matrix)
    np.fill_diagonal(nodes, 0)
    w = normalise(nodes)
    out: Demand = {}
    for s, d in zip(*np.nonzero(w)):
        out.setdefault(names[s], {})[names[d]] = int(w[s, d])
    return out


def combine(jobs: list[Demand]) -> Demand:
    """Merge the demands of several jobs; a pair in two jobs keeps the larger weight."""
    out: Demand = {}
    for job in jobs:
        for s, row in job.items():
            dst = out.setdefault(s, {})
            for d, w in row.items():
                dst[d] = max(dst.get(d, 0), w)
    return out


def render(demand: Demand) -> str:
    lines = ["# t2hx demand file: <src-node> <dst-node>:<weight 0..255> ...\n"]
    for s in sorted(demand):
        row = demand[s]
        if row:
            lines.append(s + " " + " ".join(f"{d}:{w}" for d, w in sorted(row.items())) + "\n")
    return "".join(lines)


def parse(text: str, source: object = None) -> Demand:
    """Reads a demand file; refuses malformed entries and weights outside 0..255."""
    out: Demand = {}
    for no, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        row = out.setdefault(words[0], {})
        for word in words[1:]:
            name, colon, weight = word.rpartition(":")
            if not colon or not name or not re.fullmatch(r"-?[0-9]+", weight):
                raise DemandError(f"'{word}' is not <node>:<weight>", file=source,
                                  field=f"line {no}", fix="write <dst-node>:<0..255>")
            # int() of thousands of digits raises ValueError: the length check goes first.
            if len(weight) > 4 or not 0 <= int(weight) <= 255:
                raise DemandError(f"weight {weight} for {words[0]} -> {name} is outside 0..255",
                                  file=source, field=f"line {no}",
                                  fix="normalise the demand (t2hx demand build)")
            row[name] = int(weight)
    return out


def read_demand(path: str | Path) -> Demand:
    path = Path(path)
    return parse(read_text(path, DemandError, "demand file", "pass an existing demand file"),
                 path)


def check_nodes(names: set[str], fabric: Fabric, source: object, what: str) -> None:
    known = set(fabric.hosts())
    unknown = sorted(names - known)
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise DemandError(f"{what} names node '{unknown[0]}'{more} that is not in "
                          f"'{fabric.name}'", file=source, fix="use hostnames of this system")


def validate_demand(demand: Demand, fabric: Fabric, source: object = None) -> None:
    """Everything the parx engine would refuse or skip, as one line, before OpenSM runs."""
    parx.hyperx_dims(fabric, source)
    names = set(demand) | {d for row in demand.values() for d in row}
    check_nodes(names, fabric, source, "the demand file")
    for s, row in demand.items():
        for d, w in row.items():
            if not isinstance(w, (int, np.integer)) or not 0 <= w <= 255:
                raise DemandError(f"weight {w} for {s} -> {d} is outside 0..255", file=source,
                                  fix="normalise the demand (t2hx demand build)")


def write_demand(demand: Demand, path: str | Path, fabric: Fabric | None = None) -> Path:
    if fabric is not None:
        validate_demand(demand, fabric, path)
    return atomic_write(Path(path), render(demand))


# ---- recording profiles (conf/profiles/<benchmark>/<ranks>/<prefix>.<rank>.prof) ----

MONITORING = ["--mca", "pml_monitoring_enable", "1", "--mca", "pml_monitoring_enable_output",
              "3", "--mca", "pml_monitoring_filename"]
STDOUT = "mpirun.stdout"      # record_profile leaves the run's stdout here in its workdir


def mpirun_version() -> str:
    out = subprocess.run(["mpirun", "--version"], capture_output=True, text=True)
    return (out.stdout.splitlines() or ["unknown"])[0].strip()


def portable(arg: str) -> str:
    """A command-line word as a kept record may hold it: a path in the checkout relative to
    it, any other absolute path (a build directory, a temporary one) as ``.../<name>``; the
    record names the program by its checksum, not by where this machine kept it."""
    if not arg.startswith("/"):
        return arg
    path = Path(arg)
    from t2hx import ROOT

    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else f".../{path.name}"


def record_profile(command: list[str], ranks: int, dest: Path, prefix: str,
                   workdir: Path, timeout: float = 1800,
                   check: Callable[[Path], dict] | None = None) -> dict:
    """Run ``command`` on ``ranks`` ranks of this machine under real Open MPI with
    pml_monitoring and install the ``<prefix>.<rank>.prof`` files in ``dest``, replacing what
    was there, only once the run succeeded, ``check(workdir)`` (the program's own success
    test; its dict joins the result) passed and every rank's file reads back."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", prefix):
        raise DemandError(f"profile prefix {prefix!r}", field="prefix",
                          fix="letters, digits, '-' and '_' (the campaign splits at dots)")
    out = workdir / "prof"
    out.mkdir(parents=True, exist_ok=True)
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), *MONITORING, str(out / prefix),
           *command]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    try:
        run = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DemandError(f"{' '.join(command)} on {ranks} ranks ran over {timeout:.0f} s",
                          field="--timeout", fix="give it more time or fewer ranks") from None
    if run.returncode:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise DemandError(f"mpirun exited with {run.returncode}: {last}", field="command",
                          fix="run the command by hand with mpirun to see why")
    # the program's own output, for check() and for the record beside the profile
    (workdir / STDOUT).write_text(run.stdout)
    extra = check(workdir) if check else {}
    matrix = read_monitoring(out / prefix, ranks)
    if len(profile_files(out / prefix)) != ranks or not matrix.any():
        raise DemandError(f"pml_monitoring wrote no traffic for {ranks} ranks", file=out,
                          fix="check that Open MPI has the monitoring pml (ompi_info)")
    with staged_dir(dest) as staged:
        for f in profile_files(out / prefix):
            shutil.copyfile(f, staged / f.name)
    return {"command": [portable(a) for a in cmd], "ranks": ranks, "prefix": prefix,
            "mpi": mpirun_version(),
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "bytes_total": int(matrix.sum()), **extra}


def write_record(info: dict, path: Path) -> Path:
    return atomic_write(path, json.dumps(info, indent=2) + "\n")


# ---- SAR job files ----

def render_jobs(jobs: dict[str, list[str]]) -> str:
    lines = ["# t2hx job file: <node> <job-id>\n"]
    for job, hosts in jobs.items():
        if not re.fullmatch(r"\S+", job):
            raise DemandError(f"job id '{job}' contains blanks", fix="use one word per job id")
        lines.extend(f"{h} {job}\n" for h in hosts)
    return "".join(lines)


def parse_jobs(text: str, source: object = None) -> dict[str, list[str]]:
    jobs: dict[str, list[str]] = {}
    for no, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 2:
            raise DemandError(f"node '{words[0]}' has no job id", file=source,
                              field=f"line {no}", fix="write <node> <job-id>")
        for job in words[1:]:
            jobs.setdefault(job, []).append(words[0])
    return jobs


def read_jobs(path: str | Path) -> dict[str, list[str]]:
    path = Path(path)
    return parse_jobs(read_text(path, DemandError, "job file", "pass an existing job file"),
                      path)


def validate_jobs(jobs: dict[str, list[str]], fabric: Fabric, source: object = None) -> None:
    check_nodes({h for hosts in jobs.values() for h in hosts}, fabric, source, "the job file")
