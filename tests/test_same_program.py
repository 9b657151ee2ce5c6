"""The same program: for the command lines of real runs (tests/data/post/fixtures: mpiGraph
1.5, IMB-MPI1 (collectives, Multi-PingPong, our SleepyAllreduce), Netgauge 2.4.6 eBB,
baidu-allreduce, run on 2-4 ranks), ``t2hx simulate`` with the same arguments prints the
same structure: the same fields in the same order, the same repetition counts, sizes and
matrix shapes, and every derived figure computed from the printed data as the real program
computes it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from t2hx.cli import main
from t2hx.post.parsers import parse_text
from t2hx.post.parsers.mpigraph import matrices
from t2hx.post.records import ParseError

FIXTURES = Path(__file__).parent / "data" / "post" / "fixtures"


@pytest.fixture
def simulate(mini, routed, tmp_path, capsys):
    """Simulated output (without t2hx's header line) of 4 ranks (or ``ranks``) on the mini
    HyperX."""
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir

    def run(*args: str, ranks: int = 4) -> str:
        hosts = tmp_path / f"h{ranks}.txt"
        hosts.write_text("".join(f"{h}\n" for h in mini.hostnames()[:ranks]))
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


# --- IMB Multi-PingPong and SleepyAllreduce (IMB-MPI1 2021.7, the study's command lines) --
#: The preamble lines that describe the machine the run was on (real or simulated).
MACHINE = re.compile(r"# (Date|Machine|System|Release|Version|MPI Version) +:")


def skeleton(text: str) -> list[str]:
    """A text's lines without what differs between two runs of one command line: the
    machine, the binary's folder, the numbers and, in table rows, their padding."""
    out = []
    for line in text.splitlines():
        if MACHINE.match(line):
            line = line.split(":", 1)[0]
        row = line[:1] == " " and line.lstrip()[:1].isdigit()
        line = re.sub(r"/\S+/IMB-MPI1", "IMB-MPI1", line)
        line = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
        out.append(" ".join(line.split()) if row else line)
    return out


def sizes_and_reps(text: str) -> list[tuple[str, str]]:
    """#bytes and #repetitions of every table row, and a time-out line's size."""
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^ +(\d+) +(\d+|time-out)", text, flags=re.M)]


def calling_sequence(text: str) -> str:
    line = text.splitlines()[text.splitlines().index("# Calling sequence was: ") + 2]
    return re.sub(r"/\S+/IMB-MPI1", "IMB-MPI1", line)


IMB_RUNS = [  # fixture (imb/imb-mpi1-2021.7-…), ranks, the `t2hx simulate` options
    ("np4-multi0-pingpong-msglog0-16", 4, ("mupp", "--msglog", "0:16")),
    ("np2-multi0-pingpong-msglog0-16", 2, ("mupp", "--msglog", "0:16")),
    ("np4-multi0-pingpong-msglog0-22", 4, ("mupp", "--msglog", "0:22")),
    ("np4-sleepyallreduce-msglog0-6-iter5-off", 4,
     ("emdl", "--msglog", "0:6", "--iter-policy", "off", "--imb-iter", "5")),
    ("np2-sleepyallreduce-msglog0-6-iter5-off", 2,
     ("emdl", "--msglog", "0:6", "--iter-policy", "off", "--imb-iter", "5")),
    # dynamic: the estimate reads the allreduce alone (50 repetitions, not 1 + 2 s / 0.1 s),
    # while the time limit, 3 · 2 s, counts the sleeps and stops the sweep at 4 bytes
    ("np4-sleepyallreduce-msglog0-4-iter50-time2", 4,
     ("emdl", "--msglog", "0:4", "--imb-iter", "50", "--imb-time", "2")),
]


@pytest.mark.parametrize("run, ranks, options", IMB_RUNS, ids=[r[0] for r in IMB_RUNS])
def test_imb_multi_pingpong_and_sleepy_allreduce_same_text(simulate, run, ranks,
                                                           options) -> None:
    real = (FIXTURES / "imb" / f"imb-mpi1-2021.7-{run}.out").read_text()
    sim = simulate("--benchmark", *options, ranks=ranks)
    assert skeleton(sim) == skeleton(real)
    assert calling_sequence(sim) == calling_sequence(real)
    assert sizes_and_reps(sim) == sizes_and_reps(real)
    for text in (real, sim):
        recs = parse_text("imb", text)
        assert {r["ranks"] for r in recs} == {ranks}
        assert len({r["msg_size"] for r in recs}) == len([s for s, n in sizes_and_reps(text)
                                                          if n != "time-out"])


def test_multi_pingpong_bandwidth_is_size_over_t_max(simulate) -> None:
    real = (FIXTURES / "imb" / "imb-mpi1-2021.7-np4-multi0-pingpong-msglog0-16.out").read_text()
    sim = simulate("--benchmark", "mupp", "--msglog", "0:16")
    for text in (real, sim):
        recs = [r for r in parse_text("imb", text) if r["msg_size"] >= 1024]
        assert {r["benchmark"] for r in recs} == {"imb-multi-pingpong"}
        t_max = {r["msg_size"]: r["value"] for r in recs if r["metric"] == "t_max"}
        for r in (r for r in recs if r["metric"] == "bandwidth"):
            # IMB_display_times: bytes / t_max, each printed with 2 decimals
            assert r["value"] == pytest.approx(r["msg_size"] / t_max[r["msg_size"]], rel=1e-2)


def test_sleepy_allreduce_timed_out_at_its_first_size(simulate) -> None:
    """1 s of limit, 2.1 s of estimate (1 + 20 repetitions of 0.1 s sleep): only the
    time-out line, and the parser says why there is no result."""
    real = (FIXTURES / "imb" /
            "imb-mpi1-2021.7-np4-sleepyallreduce-msglog0-2-iter20-time1.out").read_text()
    sim = simulate("--benchmark", "emdl", "--msglog", "0:2", "--imb-iter", "20",
                   "--imb-time", "1")
    assert skeleton(sim) == skeleton(real)
    assert sizes_and_reps(sim) == sizes_and_reps(real) == [("0", "time-out")]
    for text in (real, sim):
        with pytest.raises(ParseError, match="time limit"):
            parse_text("imb", text)


def test_a_collective_sweep_stops_where_imbs_time_limit_runs_out(simulate) -> None:
    """The limit holds for the collectives as for EmDL (IMB 2018 src/IMB.c and 2021.7
    helper_time_check alike): with a limit of a few repetitions' worth the sweep prints the
    sizes that fit, the time-out line, and nothing after; the parser keeps the rows."""
    full = simulate("--benchmark", "imb", "--msglog", "18:22", "--collectives", "Alltoall")
    short = simulate("--benchmark", "imb", "--msglog", "18:22", "--collectives", "Alltoall",
                     "--imb-time", "0.002")
    done = sizes_and_reps(short)
    assert done[-1][1] == "time-out" and 1 <= len(done) < len(sizes_and_reps(full))
    # the same sizes first (their counts fall with the shorter -time, 1 + time / t)
    assert [d[0] for d in done] == [f[0] for f in sizes_and_reps(full)[:len(done)]]
    rows = parse_text("imb", short)
    assert sorted({r["msg_size"] for r in rows}) == [int(d[0]) for d in done[:-1]]


# --- baidu-allreduce (our CPU-only patch): its built-in sizes ------------------------------
@pytest.mark.parametrize("ranks", [2, 4])
def test_ring_allreduce_same_sizes_and_lines(simulate, ranks) -> None:
    real = (FIXTURES / "baidu-allreduce" / f"allreduce-test-cpu-np{ranks}.out").read_text()
    sim = simulate("--benchmark", "ring-allreduce", ranks=ranks)
    assert shape(sim) == shape(real)
    elements = [[r["elements"] for r in parse_text("ring-allreduce", t)] for t in (real, sim)]
    assert elements[0] == elements[1] and len(elements[0]) == 12
