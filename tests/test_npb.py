"""The NAS Parallel Benchmarks as t2hx benchmarks (seed 001): NPB's report read from other
versions' real outputs, written by the simulator the same way, and the communication
patterns of NPB 3.4's MPI sources (process grids, face exchanges)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from t2hx import ROOT, benchmarks
from t2hx.benchmarks import npbtext
from t2hx.cli import main
from t2hx.flowsim import appmodel, apps
from t2hx.grids import npb_lu_grid, npb_mg_grid
from t2hx.post.parsers import parse_file, parse_text
from t2hx.post.records import ParseError

PUBLIC = Path(__file__).parent / "data" / "post" / "public" / "npb"
OWN = Path(__file__).parent / "data" / "post" / "fixtures"       # our NPB 3.4.3 MPI runs
KERNELS = ("ft", "is", "mg", "lu", "ep")


def printed_time_holds(recs: list[dict]) -> bool:
    """The time of the rate is the printed time within both roundings: 10 ms of the time,
    0.01 Mop/s of the rate."""
    time, rate = one(recs, "time"), one(recs, "mops_total")["value"]
    slack = 0.005 + time["value"] * 0.0051 / rate
    return abs(time["value"] - time["printed_time"]) <= slack


def one(recs: list[dict], metric: str) -> dict:
    hits = [r for r in recs if r["metric"] == metric]
    assert len(hits) == 1, hits
    return hits[0]


@pytest.mark.parametrize("kernel", ["ft", "is", "lu", "mg"])
def test_npb_3_3_1_openmp_outputs_give_the_time_of_their_rate(kernel):
    """NPB 3.3.1 OpenMP runs of another site (tests/data/post/public/README.md): the time
    from the class's operation count over Mop/s total is the printed time to its 10 ms."""
    recs = parse_file(f"npb-{kernel}", PUBLIC / f"npb3.3.1-omp-{kernel}.S.out")
    time, rate = one(recs, "time"), one(recs, "mops_total")
    assert time["benchmark"] == f"npb-{kernel}" and time["class"] == "S"
    assert time["ranks"] == 1 and time["unit"] == "s" and time["better"] == "lower"
    assert rate["unit"] == "Mop/s" and rate["better"] == "higher"
    assert printed_time_holds(recs)
    assert time["value"] != time["printed_time"]     # the six-digit rate, not the rounding
    assert time["iterations"] == npbtext.iterations(kernel, "S")


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("cls", ["S", "A"])
def test_our_npb_3_4_3_mpi_runs_parse(kernel, cls):
    """Our own runs of the Spack-built binaries (2 ranks, tests/data/post/fixtures/): the
    report of 3.4.3 (``Active processes``), its class, and the time of its rate."""
    recs = parse_file(f"npb-{kernel}", OWN / f"npb-{kernel}" / f"npb3.4.3-mpi-{kernel}.{cls}-np2.out")
    time = one(recs, "time")
    assert (time["benchmark"], time["class"], time["ranks"]) == (f"npb-{kernel}", cls, 2)
    assert printed_time_holds(recs)
    assert one(recs, "mops_total")["value"] > 0
    # What the simulator prints for the same numbers has the same lines, in the same place.
    text = (OWN / f"npb-{kernel}" / f"npb3.4.3-mpi-{kernel}.{cls}-np2.out").read_text()
    real = text[text.index(" " + kernel.upper() + " Benchmark Completed"):]
    ours = npbtext.render(npbtext.NpbOutput(kernel, cls, 2, time["value"])).lstrip("\n")
    for mine, theirs in zip(ours.splitlines(), real.splitlines()):
        if not mine.startswith((" Time in", " Mop/s")):
            assert mine == theirs


def test_npb_sizes_read_as_the_report_prints_them():
    sizes = {k: one(parse_file(f"npb-{k}", PUBLIC / f"npb3.3.1-omp-{k}.S.out"),
                    "time")["size"] for k in ("ft", "is", "lu", "mg")}
    assert sizes == {"ft": "64x64x64", "is": "65536", "lu": "12x12x12", "mg": "32x32x32"}
    for k in ("ft", "is", "lu", "mg"):
        n1, n2, n3 = npbtext.problem_size(k, "S")
        assert sizes[k] == (f"{n1}x{n2}x{n3}" if n2 else str(n1))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("cls", ["S", "A", "C"])
def test_the_simulated_report_parses_back_to_its_numbers(kernel, cls):
    out = npbtext.NpbOutput(kernel, cls, 128, 0.0123456)
    text = npbtext.render(out)
    recs = parse_text(f"npb-{kernel}", text)
    time = one(recs, "time")
    # Mop/s total has two decimals: its relative precision bounds the time's.
    rate = one(recs, "mops_total")["value"]
    assert time["value"] == pytest.approx(out.seconds, rel=max(1e-6, 0.0051 / rate))
    assert (time["class"], time["ranks"]) == (cls, 128)
    assert time["iterations"] == npbtext.iterations(kernel, cls)
    # Field widths as print_results.f90 / c_print_results.c: the value ends in column 43.
    for line in text.splitlines():
        if line.startswith((" Class", " Iterations", " Time in", " Total processes")):
            assert len(line) == 43, line
    assert benchmarks.get(f"npb-{kernel}").workload.perturb(out, 2.0).seconds == \
        pytest.approx(2 * out.seconds)


def _block(kernel: str = "mg") -> str:
    return (PUBLIC / f"npb3.3.1-omp-{kernel}.S.out").read_text()


@pytest.mark.parametrize("broken, why", [
    (lambda t: t.replace("  SUCCESSFUL", "UNSUCCESSFUL"), "UNSUCCESSFUL"),
    (lambda t: re.sub(r" Time in seconds.*\n", "", t), "Time in seconds"),
    (lambda t: t[:t.index(" MG Benchmark Completed")], "Benchmark Completed"),
    (lambda t: t[:t.index(" Verification    =")], "verification is missing"),
    (lambda t: " ERROR: could not determine proper proc_grid for nprocs=     6\n",
     "Benchmark Completed"),
])
def test_runs_without_a_verified_report_are_no_result(broken, why):
    with pytest.raises(ParseError) as err:
        parse_text("npb-mg", broken(_block()))
    assert why in err.value.line()


def test_a_non_number_is_refused():
    text = re.sub(r"Mop/s total     =\s+\S+", "Mop/s total     =          nan", _block())
    with pytest.raises(ParseError):
        parse_text("npb-mg", text)


def test_an_unknown_class_in_the_study_input_is_one_line():
    with pytest.raises(Exception) as err:
        benchmarks.get("npb-ft").app.work({"class": "Q"}, 4)
    assert "class" in str(err.value) and "S, W, A" in str(err.value)


# --- NPB 3.4's process grids and face exchanges ---------------------------------------------

def test_the_process_grids_are_those_of_the_npb_sources():
    # mg.f90 setup: log2(p) -> x a third, y half the rest, z the remainder.
    assert [npb_mg_grid(n) for n in (1, 2, 4, 8, 16, 128)] == \
        [(1, 1, 1), (1, 1, 2), (1, 2, 2), (2, 2, 2), (2, 2, 4), (4, 4, 8)]
    # proc_grid.f90: ydim the largest divisor <= sqrt(p), xdim = p / ydim.
    assert [npb_lu_grid(n) for n in (1, 2, 4, 8, 128, 6)] == \
        [(1, 1), (2, 1), (2, 2), (4, 2), (16, 8), (3, 2)]


def test_face_patterns_count_the_faces_a_rank_sends():
    # MG, 2 ranks on 256^3 split in z: both z-faces (256 x 256) go to the one neighbour.
    assert appmodel.npb_mg_halo(2, 256) == 2 * 256 * 256
    # 8 ranks, 2 x 2 x 2: six faces of 128 x 128.
    assert appmodel.npb_mg_halo(8, 256) == 6 * 128 * 128
    # LU, 4 ranks on 64^3 as 2 x 2: one x- and one y-neighbour each, faces of 32 x 64.
    assert appmodel.npb_lu_halo(4, 64) == 2 * 32 * 64
    # 8 ranks as 4 x 2: x-faces 32 x 64 with 1.5 neighbours on average, y-faces 16 x 64.
    assert appmodel.npb_lu_halo(8, 64) == pytest.approx(1.5 * 32 * 64 + 1 * 16 * 64)


@pytest.mark.parametrize("pattern, n", [("npb_mg_halo", 8), ("npb_mg_halo", 128),
                                        ("npb_lu_halo", 8), ("npb_lu_halo", 128)])
def test_the_simulated_exchange_carries_the_pattern_bytes(pattern, n):
    phase = apps.npb_faces(pattern, n, 1000.0)
    assert float(phase.size.sum()) / n == pytest.approx(1000.0)
    # Neighbours only: MG's periodic grid gives every rank 2 messages per split axis.
    dims = npb_mg_grid(n) if pattern == "npb_mg_halo" else npb_lu_grid(n)
    per_rank = np.bincount(phase.src, minlength=n)
    if pattern == "npb_mg_halo":
        assert set(per_rank) == {2 * sum(d > 1 for d in dims)}
    else:
        # Non-periodic: an inner rank has two neighbours along an axis, an edge rank one.
        assert per_rank.max() == sum(min(2, d - 1) for d in dims)
        assert per_rank.min() == sum(d > 1 for d in dims)


def test_simulate_prints_an_npb_report(mini_simulate, capsys):
    times = {}
    for cls in ("S", "A"):
        assert main([*mini_simulate, "--benchmark", "npb-mg", "--input", f'{{"class": "{cls}"}}']) == 0
        rec = one(parse_text("npb-mg", capsys.readouterr().out), "time")
        assert rec["simulated"] and rec["ranks"] == 8 and rec["class"] == cls
        times[cls] = rec["value"]
    assert times["A"] > 10 * times["S"]          # 512x the grid points


def test_the_committed_local_runs_replay_into_measured_times(tmp_path):
    """log/local-reference-thesis: real runs of the five Spack-built kernels (class A, 2
    ranks), each a verified report and a time in the replayed report."""
    import pandas as pd

    from t2hx.post.replay import replay

    log = ROOT / "log" / "local-reference-thesis"
    for kernel in KERNELS:
        out = (log / "runs" / "local" / "default" / f"npb-{kernel}_local_2n_r0" /
               "rfm_job.out").read_text()
        assert re.search(r"Verification\s*=\s*SUCCESSFUL", out) and " Class           =" \
            "                        A" in out
    res = replay(log, tmp_path / "paper", quiet=True)
    values = pd.read_csv(res.out / "data" / "results.csv")
    times = values[values["metric"] == "time"].groupby("benchmark")["value"].min()
    assert set(times.index) == {f"npb-{k}" for k in KERNELS}
    assert (times > 0).all() and times["npb-lu"] > times["npb-is"]
