"""The same program: for the command lines of real runs (tests/data/post/fixtures: mpiGraph
1.5, IMB-MPI1, Netgauge 2.4.6 eBB, run on 2-4 ranks), ``t2hx simulate`` with the same
arguments prints the same structure: the same fields in the same order, the same
repetition counts and matrix shapes, and every derived figure computed from the printed
data as the real program computes it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from t2hx.cli import main
from t2hx.post.parsers import parse_text
from t2hx.post.parsers.mpigraph import matrices

FIXTURES = Path(__file__).parent / "data" / "post" / "fixtures"


@pytest.fixture
def simulate(mini, routed, tmp_path, capsys):
    """Simulated output (without t2hx's header line) of 4 ranks on the mini HyperX."""
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    hosts = tmp_path / "h.txt"
    hosts.write_text("".join(f"{h}\n" for h in mini.hostnames()[:4]))

    def run(*args: str) -> str:
        capsys.readouterr()
        assert main(["-q", "simulate", "--system", str(mini.path), "--plane", "hyperx",
                     "--routing", "dfsssp", "--hostfile", str(hosts), "--routing-dir",
                     str(hx), "--work", str(tmp_path), "--no-cache", *args]) == 0
        return capsys.readouterr().out.split("\n", 1)[1]
    return run


def shape(text: str) -> list[str]:
    """A text's lines with numbers, host names and paths made anonymous."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\S+:(\d+)(\s)", r"H:\1\2", line)        # mpiGraph's host:rank
        line = re.sub(r"\(/\S+/netgauge ", "(netgauge ", line)
        out.append(re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line).rstrip())
    return out


def _harmonic(m: np.ndarray) -> float:
    off = m[~np.eye(len(m), dtype=bool)]
    return len(off) / float(np.sum(1.0 / off))


def test_mpigraph_same_fields_and_the_average_as_mpigraph_computes_it(simulate) -> None:
    real = (FIXTURES / "mpigraph" / "mpigraph-np4-1MiB-10x10.out").read_text()
    sim = simulate("--benchmark", "mpigraph", "--size", "1048576", "--times", "10",
                   "--window", "10")
    assert shape(sim) == shape(real)
    for text in (real, sim):
        cells = matrices(text)
        recs = {r["metric"]: r["value"] for r in parse_text("mpigraph", text)}
        for kind in ("send", "recv"):
            sel = cells[cells["direction"] == kind] if "direction" in cells else None
            m = _matrix(text, kind.capitalize())
            # "avg" is the size over the mean time per message: the matrix's harmonic mean
            # (printed with 3 decimals, hence the tolerance), not its arithmetic mean
            assert recs[f"{kind}_avg"] == pytest.approx(_harmonic(m), rel=1e-4)
            assert recs[f"{kind}_max"] == pytest.approx(m.max(), abs=1e-3)
            assert sel is None or len(sel) == 16


def _matrix(text: str, kind: str) -> np.ndarray:
    verb = "to" if kind == "Send" else "from"
    rows = [line.split("\t")[1:] for line in text.splitlines() if f" {verb}\t" in line]
    return np.array([[float(x) for x in row if x.strip()] for row in rows])


def test_mpigraph_average_on_a_hand_made_matrix() -> None:
    """Two pairs at 1 and 3 MiB/s, the others at 2: the average is bytes over mean time."""
    from t2hx.flowsim.patterns import average

    m = np.array([[0.0, 1.0, 2.0], [2.0, 0.0, 3.0], [2.0, 2.0, 0.0]])
    mean_time = np.mean([1 / 1.0, 1 / 2.0, 1 / 2.0, 1 / 3.0, 1 / 2.0, 1 / 2.0])
    assert average(m) == pytest.approx(1 / mean_time)
    assert average(m) < m[~np.eye(3, dtype=bool)].mean()


COLLECTIVES = "Barrier,Bcast,Gather,Scatter,Reduce,Allreduce,Alltoall"


def _blocks(text: str) -> dict[str, list[list[str]]]:
    """IMB's tables: benchmark → rows (split columns), in the order printed."""
    out: dict[str, list[list[str]]] = {}
    name = None
    for line in text.splitlines():
        if m := re.match(r"# Benchmarking (\S+)", line):
            name = m.group(1)
            out[name] = []
        elif name and re.match(r"\s+\d", line):
            out[name].append(line.split())
    return out


def test_imb_same_benchmarks_sizes_columns_and_repetitions(simulate) -> None:
    real = (FIXTURES / "imb" / "imb-mpi1-np4-collectives-msglog0-16.out").read_text()
    sim = simulate("--benchmark", "imb", "--msglog", "0:16", "--collectives", COLLECTIVES)
    a, b = _blocks(real), _blocks(sim)
    assert list(a) == list(b) == COLLECTIVES.split(",")
    for name in a:
        assert [len(r) for r in a[name]] == [len(r) for r in b[name]], name
        # #bytes and #repetitions: the same sweep and IMB's repetition rule
        cols = 1 if name == "Barrier" else 2
        assert [r[:cols] for r in a[name]] == [r[:cols] for r in b[name]], name
    for head in ("# #processes = 4", "t_min[usec]  t_max[usec]  t_avg[usec]",
                 "# All processes entering MPI_Finalize"):
        assert head in real and head in sim
    assert "# Calling sequence was:" in sim


def test_netgauge_ebb_same_rounds_counts_and_averages(simulate) -> None:
    real = (FIXTURES / "netgauge" / "netgauge-ebb-np4-1MiB.out").read_text()
    sim = simulate("--benchmark", "ebb", "--size", "1048576", "--rounds", "100")
    keep = [s for s in shape(real) if "initializing" not in s]
    assert keep[1:] == shape(sim)[1:]
    for text in (real, sim):
        rounds = [float(x) for x in re.findall(r"round \d+: num: 4 average: ([\d.]+) us", text)]
        assert len(rounds) == 100
        final = re.search(r"num: 400 average: ([\d.]+) \(([\d.]+) MiB/s\)", text)
        # the final average is over every rank and round, the bandwidth size·reps / time
        assert float(final.group(1)) == pytest.approx(np.mean(rounds), rel=1e-6)
        assert float(final.group(2)) == pytest.approx(1048576 * 20 / float(final.group(1)),
                                                      rel=1e-6)
