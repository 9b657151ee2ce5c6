"""Every parser on every matching real fixture, asserting numbers read from the files."""

from __future__ import annotations

import hashlib

import json
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx.post.parsers import family, parse_file, parse_text
from t2hx.post.parsers.mpigraph import matrices
from t2hx.post.records import ParseError
from t2hx.wire import WALLTIME_FORMAT, WALLTIME_RE

FIX = Path(__file__).parent / "data" / "post" / "fixtures"
HAND = Path(__file__).parent / "data" / "post" / "hand"
PUBLIC = Path(__file__).parent / "data" / "post" / "public"   # others' runs, with sources
# Where the originals of tests/data/post/fixtures live, if anywhere (outside the repository).


def one(recs: list[dict], **match) -> dict:
    hits = [r for r in recs if all(r.get(k) == v for k, v in match.items())]
    assert len(hits) == 1, (match, hits)
    return hits[0]


def test_fixture_copies_match_originals() -> None:
    # SHA256SUMS was taken from the original runs when they were copied: the copies must
    # stay byte-identical to them (never edit a fixture; add a new run instead).
    sums = dict(reversed(line.split(None, 1)) for line in
                (FIX / "SHA256SUMS").read_text().splitlines())
    files = {p.relative_to(FIX).as_posix() for p in FIX.rglob("*")
             if p.is_file() and p.name not in ("README.md", "SHA256SUMS")}
    assert files == set(sums)
    for name, digest in sums.items():
        assert hashlib.sha256((FIX / name).read_bytes()).hexdigest() == digest, name


def test_every_fixture_is_covered() -> None:
    covered = {p.relative_to(FIX).as_posix() for p in FIX.rglob("*")
               if p.name not in ("README.md", "SHA256SUMS")
               and p.is_file()}
    assert covered == EXPECTED_FILES


EXPECTED_FILES = {
    "amg/amg-problem1-np2-n20.out", "amg/amg-problem1-np4-n20.out",
    "amg/amg-problem2-np4-n20.out",
    "comd/comd-mpi-np2-lj-20x20x20.out", "comd/comd-mpi-np2-lj-20x20x20.yaml",
    "comd/comd-mpi-np4-eam-20x20x20.out", "comd/comd-mpi-np4-eam-20x20x20.yaml",
    "graph500/graph500-bfs-np2-scale12.err", "graph500/graph500-bfs-np2-scale12.out",
    "graph500/graph500-bfs-np4-scale12.err", "graph500/graph500-bfs-np4-scale12.out",
    "graph500/graph500-bfs-sssp-np2-scale11.err", "graph500/graph500-bfs-sssp-np2-scale11.out",
    "hpcc/hpcc-np2-N1000-NB64-P1xQ2.hpccoutf.txt", "hpcc/hpcc-np4-N1000-NB64-P2xQ2.hpccoutf.txt",
    "hpcg/hpcg-np2-16x16x16-rt10.HPCG-Benchmark.txt", "hpcg/hpcg-np2-16x16x16-rt10.hpcg-log.txt",
    "hpcg/hpcg-np2-16x16x16-rt10.out", "hpcg/hpcg-np4-16x16x16-rt10.HPCG-Benchmark.txt",
    "hpcg/hpcg-np4-16x16x16-rt10.hpcg-log.txt", "hpcg/hpcg-np4-16x16x16-rt10.out",
    "hpl/hpl-np2-N1000_2000-NB64_128-P1xQ2.out", "hpl/hpl-np4-N1000_2000-NB64_128-P2xQ2.out",
    "imb/imb-mpi1-np2-pingpong.out", "imb/imb-mpi1-np4-collectives-msglog0-16.out",
    *(f"imb/imb-mpi1-2021.7-{run}.out" for run in (
        "np2-multi0-pingpong-msglog0-16", "np4-multi0-pingpong-msglog0-16",
        "np4-multi0-pingpong-msglog0-22", "np2-sleepyallreduce-msglog0-6-iter5-off",
        "np4-sleepyallreduce-msglog0-6-iter5-off", "np4-sleepyallreduce-msglog0-4-iter50-time2",
        "np4-sleepyallreduce-msglog0-2-iter20-time1")),
    "baidu-allreduce/allreduce-test-cpu-np2.out", "baidu-allreduce/allreduce-test-cpu-np4.out",
    "minife/minife-ref-np2-20x20x20.out", "minife/minife-ref-np2-20x20x20.yaml",
    "minife/minife-ref-np4-20x20x20.out", "minife/minife-ref-np4-20x20x20.yaml",
    "mpigraph/mpigraph-np2-1MiB-10x10.out", "mpigraph/mpigraph-np4-1MiB-10x10.out",
    "netgauge/netgauge-ebb-np2-1MiB.out", "netgauge/netgauge-ebb-np4-1MiB.out",
    *(f"npb-{k}/npb3.4.3-mpi-{k}.{c}-np2.out" for k in ("ep", "ft", "is", "lu", "mg")
      for c in ("S", "A")),
}


# --- IMB ------------------------------------------------------------------------------------

def test_imb_collectives() -> None:
    recs = parse_file("imb", FIX / "imb/imb-mpi1-np4-collectives-msglog0-16.out")
    names = {r["benchmark"] for r in recs}
    assert names == {"imb-barrier", "imb-bcast", "imb-gather", "imb-scatter", "imb-reduce",
                     "imb-allreduce", "imb-alltoall"}
    assert one(recs, benchmark="imb-barrier", metric="t_min")["value"] == 4.98
    r = one(recs, benchmark="imb-allreduce", metric="t_min", msg_size=65536)
    assert (r["value"], r["unit"], r["better"], r["ranks"], r["repetitions"]) == \
        (70.90, "us", "lower", 4, 640)
    assert one(recs, benchmark="imb-reduce", metric="t_max", msg_size=256)["value"] == 3365.89
    assert one(recs, benchmark="imb-alltoall", metric="t_avg", msg_size=16384)["value"] == 645.59
    assert one(recs, benchmark="imb-bcast", metric="t_min", msg_size=0)["value"] == 0.05
    # Reduce/Allreduce start at 4 bytes (MPI_FLOAT), the rest at 0: 17 or 18 sizes per table.
    assert len([r for r in recs if r["benchmark"] == "imb-allreduce"]) == 16 * 3
    assert len([r for r in recs if r["benchmark"] == "imb-gather"]) == 18 * 3
    assert len(recs) == 3 + 4 * 18 * 3 + 2 * 16 * 3


def test_imb_pingpong() -> None:
    recs = parse_file("imb", FIX / "imb/imb-mpi1-np2-pingpong.out")
    assert len(recs) == 24 * 2
    r = one(recs, metric="bandwidth", msg_size=4194304)
    assert (r["value"], r["unit"], r["better"], r["repetitions"]) == (1374.53, "MB/s", "higher", 10)
    assert one(recs, metric="t", msg_size=1048576)["value"] == 367.41
    assert one(recs, metric="t", msg_size=0)["value"] == 0.42


def test_imb_truncated_row_is_dropped() -> None:
    text = (FIX / "imb/imb-mpi1-np2-pingpong.out").read_text()
    cut = text[:text.index("      4194304")] + "      4194304           10   "
    recs = parse_text("imb", cut)
    assert {r["msg_size"] for r in recs} == {2 ** i for i in range(22)} | {0}


# --- mpiGraph --------------------------------------------------------------------------------

def test_mpigraph_np2() -> None:
    path = FIX / "mpigraph/mpigraph-np2-1MiB-10x10.out"
    recs = parse_file("mpigraph", path)
    assert one(recs, metric="send_avg")["value"] == 2282.115168
    assert one(recs, metric="send_max")["value"] == 2284.108727
    assert one(recs, metric="recv_avg")["value"] == 3035.418078
    assert one(recs, metric="recv_max")["value"] == 4496.684729
    r = one(recs, metric="send_avg")
    assert (r["ranks"], r["msg_size"], r["unit"]) == (2, 1048576, "MiB/s")
    cells = matrices(path.read_text())
    send = {(c["row"], c["col"]): c["value"] for c in cells if c["kind"] == "send"}
    assert send == {(0, 0): 0.0, (0, 1): 2284.109, (1, 0): 2280.125, (1, 1): 0.0}
    recv = {(c["row"], c["col"]): c["value"] for c in cells if c["kind"] == "recv"}
    assert recv[(0, 1)] == 4496.685 and recv[(1, 0)] == 2290.942


def test_mpigraph_np4() -> None:
    path = FIX / "mpigraph/mpigraph-np4-1MiB-10x10.out"
    recs = parse_file("mpigraph", path)
    assert one(recs, metric="send_avg")["value"] == 1104.139156
    assert one(recs, metric="recv_max")["value"] == 2901.653980
    cells = matrices(path.read_text())
    assert len(cells) == 2 * 16
    send = {(c["row"], c["col"]): c["value"] for c in cells if c["kind"] == "send"}
    assert send[(2, 1)] == 1656.237 and send[(3, 2)] == 1108.573
    assert max(send.values()) == 1656.237  # = "Send max" rounded as printed


def test_mpigraph_truncated() -> None:
    text = (FIX / "mpigraph/mpigraph-np4-1MiB-10x10.out").read_text()
    with pytest.raises(ParseError, match="truncated"):
        parse_text("mpigraph", text[:text.index("vm:3 from")])
    with pytest.raises(ParseError, match="incomplete"):
        matrices(text[:text.index("vm:3 to")] + "\nRecv max\t1.0\n")


# --- Netgauge eBB ----------------------------------------------------------------------------

@pytest.mark.parametrize("name,ranks,num,mibs,us", [
    ("netgauge-ebb-np2-1MiB.out", 2, 200, 3596.544530, 5831.019142),
    ("netgauge-ebb-np4-1MiB.out", 4, 400, 1225.911362, 17106.881171),
])
def test_netgauge_ebb(name: str, ranks: int, num: int, mibs: float, us: float) -> None:
    recs = parse_file("ebb", FIX / "netgauge" / name)
    bw = one(recs, metric="bandwidth")
    assert (bw["value"], bw["unit"], bw["better"], bw["ranks"], bw["num"], bw["msg_size"],
            bw["rounds"]) == (mibs, "MB/s", "higher", ranks, num, 1048576, 100)
    assert one(recs, metric="time")["value"] == us
    # netgauge's "MiB/s" is bytes per µs (its 20 exchanges of 1 MiB over the average time):
    # decimal MB/s, recorded as such
    assert bw["value"] == pytest.approx(1048576 * 20 / us, rel=1e-6)


def test_netgauge_truncated_has_no_result() -> None:
    text = (FIX / "netgauge/netgauge-ebb-np4-1MiB.out").read_text()
    with pytest.raises(ParseError, match="final"):
        parse_text("netgauge", text[:text.index("# Info:   (0): ---- bucket")])


# --- HPL / HPCC ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,p,q,gflops", [
    ("hpl-np2-N1000_2000-NB64_128-P1xQ2.out", 1, 2,
     {(1000, 64): 10.505, (1000, 128): 11.553, (2000, 64): 13.371, (2000, 128): 13.966}),
    ("hpl-np4-N1000_2000-NB64_128-P2xQ2.out", 2, 2,
     {(1000, 64): 5.9644, (1000, 128): 6.7473, (2000, 64): 19.100, (2000, 128): 16.977}),
])
def test_hpl(name: str, p: int, q: int, gflops: dict) -> None:
    recs = parse_file("hpl", FIX / "hpl" / name)
    got = {(r["N"], r["NB"]): r["value"] for r in recs if r["metric"] == "gflops"}
    assert got == pytest.approx(gflops)
    assert all(r["P"] == p and r["Q"] == q and r["ranks"] == p * q for r in recs)
    assert one(recs, metric="time", N=2000, NB=64)["value"] == (0.40 if p == 1 else 0.28)


def test_hpl_failed_residual_is_dropped() -> None:
    text = (FIX / "hpl/hpl-np2-N1000_2000-NB64_128-P1xQ2.out").read_text()
    text = text.replace("4.79465903e-03 ...... PASSED", "4.79465903e+03 ...... FAILED")
    recs = parse_text("hpl", text)
    assert (1000, 64) not in {(r["N"], r["NB"]) for r in recs}
    assert len(recs) == 6


@pytest.mark.parametrize("name,p,q,gflops,time", [
    ("hpcc-np2-N1000-NB64-P1xQ2.hpccoutf.txt", 1, 2, 1.592, 0.42),
    ("hpcc-np4-N1000-NB64-P2xQ2.hpccoutf.txt", 2, 2, 1.123, 0.59),
])
def test_hpcc(name: str, p: int, q: int, gflops: float, time: float) -> None:
    recs = parse_file("hpcc", FIX / "hpcc" / name)
    g = one(recs, metric="gflops")
    assert (g["value"], g["N"], g["NB"], g["P"], g["Q"], g["source"]) == \
        (gflops, 1000, 64, p, q, "hpcc")
    assert one(recs, metric="time")["value"] == time


def test_hpcc_summary_fallback() -> None:
    text = (FIX / "hpcc/hpcc-np2-N1000-NB64-P1xQ2.hpccoutf.txt").read_text()
    text = text.replace("WR11C2R4", "XX11C2R4")  # no HPL row: fall back to HPL_Tflops
    g = one(parse_text("hpcc", text), metric="gflops")
    assert g["value"] == pytest.approx(1.59235) and g["ranks"] == 2


# --- HPCG ------------------------------------------------------------------------------------

@pytest.mark.parametrize("stem,ranks,gflops,total", [
    ("hpcg-np2-16x16x16-rt10", 2, 1.20317, 11.1655),
    ("hpcg-np4-16x16x16-rt10", 4, 1.4657, 6.93051),
])
def test_hpcg(stem: str, ranks: int, gflops: float, total: float) -> None:
    recs = parse_file("hpcg", FIX / "hpcg" / f"{stem}.HPCG-Benchmark.txt")
    g = one(recs, metric="gflops")
    assert (g["value"], g["ranks"], g["nx"], g["better"]) == (gflops, ranks, 16, "higher")
    assert one(recs, metric="time")["value"] == total
    with pytest.raises(ParseError, match="empty"):
        parse_file("hpcg", FIX / "hpcg" / f"{stem}.out")
    with pytest.raises(ParseError, match="rating"):
        parse_file("hpcg", FIX / "hpcg" / f"{stem}.hpcg-log.txt")


def test_hpcg_colon_variant_and_invalid() -> None:
    text = (FIX / "hpcg/hpcg-np2-16x16x16-rt10.HPCG-Benchmark.txt").read_text()
    assert one(parse_text("hpcg", text.replace("rating of=", "rating of: ")),
               metric="gflops")["value"] == 1.20317
    with pytest.raises(ParseError, match="INVALID"):
        parse_text("hpcg", text.replace("is VALID", "is INVALID"))


# --- Graph500 --------------------------------------------------------------------------------

@pytest.mark.parametrize("stem,ranks,scale,hmean,median", [
    ("graph500-bfs-np2-scale12", 2, 12, 1.8786e+07, 4.46419e+07),
    ("graph500-bfs-np4-scale12", 4, 12, 1.1132e+07, None),
    ("graph500-bfs-sssp-np2-scale11", 2, 11, 1.1845e+06, 3.77844e+07),
])
def test_graph500(stem: str, ranks: int, scale: int, hmean: float, median: float | None) -> None:
    out = parse_file("graph500", FIX / "graph500" / f"{stem}.out")
    h = one(out, metric="bfs_harmonic_mean_teps")
    assert (h["value"], h["ranks"], h["scale"], h["edgefactor"], h["nbfs"], h["unit"]) == \
        (hmean, ranks, scale, 16, 64, "TEPS")
    if median is not None:
        assert one(out, metric="bfs_median_teps")["value"] == median
    err = parse_file("graph500", FIX / "graph500" / f"{stem}.err")
    assert len([r for r in err if r["metric"] == "bfs_root_teps"]) == 64


def test_graph500_details() -> None:
    out = parse_file("graph500", FIX / "graph500/graph500-bfs-sssp-np2-scale11.out")
    assert one(out, metric="sssp_harmonic_mean_teps")["value"] == 488136.0
    err = parse_file("graph500", FIX / "graph500/graph500-bfs-np2-scale12.err")
    assert one(err, metric="bfs_root_teps", root=3)["value"] == 4.89297e+07
    assert one(err, metric="bfs_root_time", root=0)["value"] == 0.009564
    sssp = parse_file("graph500", FIX / "graph500/graph500-bfs-sssp-np2-scale11.err")
    assert one(sssp, metric="sssp_root_teps", root=0)["value"] == 5.58406e+06
    with pytest.raises(ParseError, match="invalid run"):
        parse_text("graph500", "SCALE: 12\nNo results printed for invalid run.\n")


def test_graph500_2x() -> None:
    """Graph500 2.1.x (a published real run, tests/data/post/public/README.md): statistics
    without the kernel word read as 3.0's bfs statistics; its per-root stderr lines too."""
    out = parse_file("graph500", PUBLIC / "graph500/graph500-2.1-replicated-np4-scale16.out")
    h = one(out, metric="bfs_harmonic_mean_teps")
    assert (h["value"], h["ranks"], h["scale"], h["edgefactor"], h["nbfs"], h["unit"]) == \
        (7.70781e+07, 4, 16, 16, 64, "TEPS")
    assert one(out, metric="bfs_median_teps")["value"] == 4.15103e+08
    assert one(out, metric="bfs_mean_time")["value"] == 0.013604
    assert not [r for r in out if r["metric"].startswith("sssp")]
    err = parse_file("graph500",
                     PUBLIC / "graph500/graph500-2.1-replicated-np4-scale24.nohup.out")
    assert len([r for r in err if r["metric"] == "bfs_root_teps"]) == 26
    assert one(err, metric="bfs_root_time", root=0)["value"] == 0.6959
    assert one(err, metric="bfs_root_teps", root=25)["value"] > 0
    with pytest.raises(ParseError, match="harmonic_mean_TEPS"):
        parse_text("graph500", "SCALE: 16\nedgefactor: 16\n")


# --- miniFE, CoMD, AMG -----------------------------------------------------------------------

@pytest.mark.parametrize("stem,ranks,cg_time,mflops", [
    ("minife-ref-np2-20x20x20", 2, 0.0103791, 3542.66),
    ("minife-ref-np4-20x20x20", 4, 0.0887508, 414.3),
])
def test_minife(stem: str, ranks: int, cg_time: float, mflops: float) -> None:
    recs = parse_file("minife", FIX / "minife" / f"{stem}.yaml")
    t = one(recs, metric="cg_time")
    assert (t["value"], t["ranks"], t["nx"], t["iterations"]) == (cg_time, ranks, 20, 65)
    assert one(recs, metric="cg_mflops")["value"] == mflops
    with pytest.raises(ParseError):
        parse_file("minife", FIX / "minife" / f"{stem}.out")  # stdout has no result


@pytest.mark.parametrize("stem,ranks,rate,loop", [
    ("comd-mpi-np2-lj-20x20x20", 2, 6.46, 10.3467),
    ("comd-mpi-np4-eam-20x20x20", 4, 19.39, 15.5236),
])
def test_comd(stem: str, ranks: int, rate: float, loop: float) -> None:
    for ext in ("out", "yaml"):
        recs = parse_file("comd", FIX / "comd" / f"{stem}.{ext}")
        r = one(recs, metric="atom_update_rate")
        assert (r["value"], r["ranks"], r["unit"], r["better"]) == \
            (rate, ranks, "us/atom/task", "lower")
        assert one(recs, metric="loop_time")["value"] == loop


@pytest.mark.parametrize("name,ranks,problem,fom,label,solve", [
    ("amg-problem1-np2-n20.out", 2, 1, 4.199243e+07, "FOM_1", 0.143808),
    ("amg-problem1-np4-n20.out", 4, 1, 6.126494e+07, "FOM_1", 0.199366),
    ("amg-problem2-np4-n20.out", 4, 2, 5.438550e+07, "FOM_2", 3.481725),
])
def test_amg(name: str, ranks: int, problem: int, fom: float, label: str, solve: float) -> None:
    recs = parse_file("amg", FIX / "amg" / name)
    f = one(recs, metric="fom")
    assert (f["value"], f["ranks"], f["problem"], f["fom"], f["better"]) == \
        (pytest.approx(fom), ranks, problem, label, "higher")
    assert one(recs, metric="solve_time")["value"] == solve


def test_amg2023_label() -> None:
    assert one(parse_text("amg", "Figure of Merit (FOM): 1.5e+08\n"), metric="fom")["value"] \
        == 1.5e8


# --- formats without a real fixture: hand-made inputs in tests/data/post/hand -----------------

def test_hand_made_outputs() -> None:
    swfft = parse_file("swfft", HAND / "swfft.out")
    assert one(swfft, metric="forward_time")["value"] == pytest.approx(1.25 + 1.5)
    assert one(swfft, metric="backward_time")["reps"] == 2
    assert one(parse_file("milc", HAND / "milc.out"), metric="time")["value"] == 123.456
    with pytest.raises(ParseError):
        parse_text("milc", "Time = 12.0 seconds\n")  # no RUNNING COMPLETED: not a result
    assert one(parse_file("qball", HAND / "qbox.out"), metric="iteration_time")["value"] == 3.5
    assert one(parse_file("mvmc", HAND / "zvo_HitachiTimer.dat"),
               metric="total_time")["value"] == 256.12345
    assert one(parse_file("ntchem", HAND / "ntchem.out"), metric="wall_time")["value"] == 98.76
    # NTChem-mini's RIMP2 driver labels its timing lines with the routine's name
    rimp2 = (" ...   CPU time (RIMP2_Driver    ) :        1.20\n"
             " ...   WALL time (RIMP2_Driver    ) :        1.55\n"
             "T2HX solver walltime: 1.534210 s\n")
    recs = parse_text("ntchem", rimp2)
    assert one(recs, metric="wall_time")["value"] == 1.55
    assert one(recs, metric="solver_walltime")["value"] == 1.53421
    ring = parse_file("ring-allreduce", HAND / "baidu.out")
    r = one(ring, elements=1024)
    assert (r["msg_size"], r["value"], r["unit"]) == (4096, 0.000123, "s")
    assert len(ring) == 3
    ffvc = parse_file("ffvc", HAND / "ffvc.out")
    assert one(ffvc, metric="solver_walltime")["value"] == 42.5


# --- the agreed lines ------------------------------------------------------------------------

def test_walltime_line() -> None:
    line = WALLTIME_FORMAT.format(seconds=12.345678)
    assert line == "T2HX solver walltime: 12.345678 s"
    assert WALLTIME_RE.search(line).group(1) == "12.345678"
    for bad in ("T2HX solver walltime: 12.3 ms", "T2HX solver walltime: abc s",
                "# T2HX solver walltime: 1 s", "T2HX solver walltime:  1 s"):
        assert WALLTIME_RE.search(bad) is None, bad
    text = "noise\nT2HX solver walltime: 7 s\nmore\n"
    for fam in ("minife", "comd", "amg", "swfft", "milc", "qbox", "ffvc", "mvmc", "ntchem",
                "walltime"):
        assert one(parse_text(fam, text), metric="solver_walltime")["value"] == 7.0, fam


def test_simulated_header_every_fixture() -> None:
    header = "# t2hx-simulated: fabric=hyperx routing=parx hostfile=hostfiles/t2hx/linear/4.txt\n"
    for path in sorted(FIX.rglob("*")):
        if not path.is_file() or path.name in ("README.md", "SHA256SUMS"):
            continue
        fam = family(path.parent.name)
        text = path.read_text()
        try:
            real = parse_text(fam, text)
        except ParseError:
            continue
        sim = parse_text(fam, header + text)
        assert [r["value"] for r in sim] == [r["value"] for r in real], path
        assert all(r["simulated"] is True and r["sim_routing"] == "parx" and
                   r["sim_hostfile"] == "hostfiles/t2hx/linear/4.txt" for r in sim)
        assert all(r["simulated"] is False for r in real)


def test_unknown_benchmark() -> None:
    with pytest.raises(ParseError, match="unknown benchmark"):
        parse_text("linpack-xyz", "x")


def test_cli_parse_prints_json(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "t2hx.cli", "parse", "--benchmark", "hpcc",
                          str(FIX / "hpcc/hpcc-np4-N1000-NB64-P2xQ2.hpccoutf.txt")],
                         capture_output=True, text=True, check=True).stdout
    recs = [json.loads(line) for line in out.splitlines()]
    assert one(recs, metric="gflops")["value"] == 1.123
    bad = subprocess.run([sys.executable, "-m", "t2hx.cli", "parse", "--benchmark", "hpcg",
                          str(FIX / "hpcg/hpcg-np2-16x16x16-rt10.out")],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "hpcg-np2-16x16x16-rt10.out: empty output" in bad.stderr
