"""Reading the reference packet-simulator outputs (tests/data/refsim/, docs/validation.md).

Layout, per fabric directory ``tests/data/refsim/<fabric>/``:

- ``system.yaml``: the t2hx system conf of the fabric (one plane);
- ``hostfile.txt``: rank i on line i;
- ``routing/opensm-lfts.dump``, ``routing/guid2lid``: OpenSM's tables the reference routed by
  (as t2hx read them); ``routing.json``: engine, LID per rank, LFT digest (:func:`lft_digest`),
  VLs, the SL -> VL map and DFSSSP's VL groups;
- ``path_sl.csv``: ``src,dst,src_lid,dst_lid,sl`` for every ordered rank pair (the SA's answer);
- ``<pattern>.json``: the flows (``id, src, dst, bytes, start_s, sl``), ranks;
- ``<pattern>.csv``: the reference result per flow, ``src,dst,bytes,start_s,end_s,throughput_Bps``
  (rows in flow id order; (src, dst) is unique within a pattern);
- ``meta.json``: simulator, versions, every ini parameter, command lines, and per pattern
  the wall seconds, simulated seconds and events of the run.

Only the standard library here (plus a Tables-like object for :func:`lft_digest`), so any
test can load this file by path.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "refsim"
RESULT_COLUMNS = ("src", "dst", "bytes", "start_s", "end_s", "throughput_Bps")
PATH_SL_COLUMNS = ("src", "dst", "src_lid", "dst_lid", "sl")


@dataclass(frozen=True)
class Flow:
    id: int
    src: int          # rank (hostfile line)
    dst: int
    bytes: int
    start_s: float
    sl: int           # the SL (= VL) the flow's packets use


@dataclass(frozen=True)
class FlowResult:
    src: int
    dst: int
    bytes: int
    start_s: float
    end_s: float          # arrival of the flow's last byte at the destination
    throughput_Bps: float  # bytes / (end_s - start_s)

    @property
    def completion_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class Case:
    fabric: str
    pattern: str
    params: dict
    flows: list[Flow]
    results: list[FlowResult]
    run: dict            # meta.json's entry for this pattern (wall_s, sim_time_s, events, ...)

    def result_of(self, flow: Flow) -> FlowResult:
        return self._by_pair[(flow.src, flow.dst)]

    @property
    def _by_pair(self) -> dict[tuple[int, int], FlowResult]:
        return {(r.src, r.dst): r for r in self.results}


@dataclass(frozen=True)
class Errors:
    """Relative errors of a prediction against a case, over its flows."""
    throughput_median: float
    throughput_worst: float
    completion_median: float
    completion_worst: float

    def within(self, median: float = 0.10, worst: float = 0.25) -> bool:
        """The acceptance rule (docs/validation.md): median within 10 %, worst within 25 %, both
        metrics."""
        return max(self.throughput_median, self.completion_median) <= median and \
            max(self.throughput_worst, self.completion_worst) <= worst


def _median(values: list[float]) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def errors(case: Case, end_s: dict[tuple[int, int], float]) -> Errors:
    """Compare predicted end times (``(src, dst) -> end_s``, flows starting at their
    ``start_s``) with the reference: |x - ref| / ref per flow, for throughput and completion
    time."""
    tp, ct = [], []
    for f in case.flows:
        ref = case.result_of(f)
        done = end_s[(f.src, f.dst)] - f.start_s
        ct.append(abs(done - ref.completion_s) / ref.completion_s)
        tput = f.bytes / done
        tp.append(abs(tput - ref.throughput_Bps) / ref.throughput_Bps)
    return Errors(_median(tp), max(tp), _median(ct), max(ct))


def fabrics(data: Path = DATA) -> list[str]:
    return sorted(p.name for p in data.iterdir() if (p / "meta.json").exists())


def meta(fabric: str, data: Path = DATA) -> dict:
    return json.loads((data / fabric / "meta.json").read_text())


def routing(fabric: str, data: Path = DATA) -> dict:
    return json.loads((data / fabric / "routing.json").read_text())


def hosts(fabric: str, data: Path = DATA) -> list[str]:
    lines = (data / fabric / "hostfile.txt").read_text().splitlines()
    return [x.split("#", 1)[0].strip() for x in lines if x.split("#", 1)[0].strip()]


def path_sls(fabric: str, data: Path = DATA) -> dict[tuple[int, int], int]:
    with open(data / fabric / "path_sl.csv", newline="") as fh:
        return {(int(r["src"]), int(r["dst"])): int(r["sl"]) for r in csv.DictReader(fh)}


def flows(fabric: str, pattern: str, data: Path = DATA) -> tuple[dict, list[Flow]]:
    doc = json.loads((data / fabric / f"{pattern}.json").read_text())
    return doc, [Flow(int(f["id"]), int(f["src"]), int(f["dst"]), int(f["bytes"]),
                      float(f["start_s"]), int(f["sl"])) for f in doc["flows"]]


def results(fabric: str, pattern: str, data: Path = DATA) -> list[FlowResult]:
    with open(data / fabric / f"{pattern}.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != RESULT_COLUMNS:
            raise ValueError(f"{fabric}/{pattern}.csv: columns {reader.fieldnames}, "
                             f"want {RESULT_COLUMNS}")
        return [FlowResult(int(r["src"]), int(r["dst"]), int(r["bytes"]), float(r["start_s"]),
                           float(r["end_s"]), float(r["throughput_Bps"])) for r in reader]


def case(fabric: str, pattern: str, data: Path = DATA) -> Case:
    doc, fl = flows(fabric, pattern, data)
    return Case(fabric, pattern, doc.get("params", {}), fl, results(fabric, pattern, data),
                meta(fabric, data)["runs"][pattern])


def cases(data: Path = DATA) -> list[Case]:
    return [case(f, p, data) for f in fabrics(data) for p in meta(f, data)["patterns"]]


def write_results(path: Path, rows: list[FlowResult]) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(RESULT_COLUMNS)
        for r in rows:
            w.writerow([r.src, r.dst, r.bytes, f"{r.start_s:.9e}", f"{r.end_s:.12e}",
                        f"{r.throughput_Bps:.9e}"])


def lft_digest(tables) -> str:
    """sha256 of a routing as data: every switch (by GUID) with its egress port per LID,
    and every HCA port GUID with its base LID. ``tables``: t2hx.routing.lft.Tables."""
    fab = tables.fabric
    lines = []
    switches = sorted((fab.nodes[s].guid, s) for s in fab.switches())
    for guid, s in switches:
        ports = " ".join(str(int(p)) for p in tables.lft[s, 1:])
        lines.append(f"sw 0x{guid:016x} {ports}")
    for h in fab.hcas():
        node = fab.nodes[h]
        for port in range(1, node.ports + 1):
            lid = int(tables.base_lid[h, port])
            if lid:
                lines.append(f"ca 0x{node.port_guid(port):016x} {lid}")
    lines.sort()
    return hashlib.sha256(("\n".join(lines) + "\n").encode()).hexdigest()
