"""Workloads, output formats, errors and the CLI on the mini system (real OpenSM routing)."""

from pathlib import Path

import numpy as np
import pytest

from t2hx import benchmarks, wire
from t2hx.benchmarks import ebb, imbtext, mpigraph, proxyapp
from t2hx.cli import main
from t2hx.errors import T2hxError, WorkloadError
from t2hx.flowsim import apps, collectives, patterns
from t2hx.flowsim.fluid import Comm, Compute, Job, run_jobs
from t2hx.flowsim.imbjobs import msglog_sizes
from t2hx.flowsim.network import open_network, read_hostfile
from t2hx.post.parsers import parse_text
from t2hx.post.parsers.mpigraph import matrices
from t2hx.simrequest import SimRequest

from tests.conftest import MINI


def header(net) -> str:
    """The simulated-output header of a run on ``net`` (t2hx/simulation.py)."""
    return wire.sim_header({"fabric": net.label, "routing": net.engine,
                            "hostfile": net.hostfile, "model": "maxmin"})


@pytest.fixture(scope="module")
def hx_dir(mini, routed):
    return routed(mini, "hyperx", "dfsssp").run.out_dir


@pytest.fixture(scope="module")
def net16(mini, hx_dir):
    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:16], dumps=hx_dir)


@pytest.fixture(scope="module")
def hostfile16(tmp_path_factory, mini) -> Path:
    path = tmp_path_factory.mktemp("hf") / "16.txt"
    path.write_text("# linear\n" + "".join(f"{h} slots=1\n" for h in mini.hostnames()[:16]))
    return path


def test_hostfile_forms_and_errors(mini, tmp_path) -> None:
    good = tmp_path / "a.txt"
    good.write_text(f"{mini.hostnames()[3]}\n\n{mini.hostnames()[1]} slots=1 # c\n")
    assert read_hostfile(good, mini) == [mini.hostnames()[3], mini.hostnames()[1]]
    bad = tmp_path / "b.txt"
    bad.write_text("r01n01\n")
    with pytest.raises(WorkloadError, match="line 1: 'r01n01' is not a node"):
        read_hostfile(bad, mini)
    empty = tmp_path / "c.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(WorkloadError, match="zero ranks"):
        read_hostfile(empty, mini)


def test_tables_of_another_fabric_are_rejected(mini, routed) -> None:
    ft_dir = routed(mini, "fattree", "ftree").run.out_dir
    with pytest.raises(T2hxError, match="another fabric"):
        open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:4], dumps=ft_dir)


def test_unknown_collective_and_app() -> None:
    with pytest.raises(WorkloadError, match="unknown collective 'Allgatherx'"):
        collectives.choose("Allgatherx", 8, 8)
    with pytest.raises(WorkloadError, match="unknown application"):
        benchmarks.app("nosuchapp")


def test_mpigraph_output_parses_and_shows_cable_sharing(net16) -> None:
    g = patterns.mpigraph(net16)
    request = SimRequest(str(MINI), "hyperx", "dfsssp", net16.hostfile, "mpigraph")
    text = header(net16) + mpigraph.render(mpigraph.run(request, net16))
    assert text.startswith("# t2hx-simulated: fabric=mini/hyperx routing=dfsssp ")
    recs = {r["metric"]: r for r in parse_text("mpigraph", text)}
    assert recs["send_avg"]["simulated"] is True
    assert recs["send_avg"]["value"] == pytest.approx(patterns.average(g.send), rel=1e-6)
    cells = matrices(text.split("\n", 1)[1])
    assert len(cells) == 2 * 16 * 16
    peak = 4e9 / 2**20
    off = g.send[~np.eye(16, dtype=bool)]
    assert off.max() < peak and off.max() > 0.95 * peak
    # 4 nodes per switch: a shift that sends a whole switch to one other switch shares a
    # single cable four ways
    assert off.min() < 0.3 * peak


def test_ebb_deterministic_per_seed_and_parses(net16) -> None:
    a = patterns.ebb(net16, rounds=5, seed=3)
    b = patterns.ebb(net16, rounds=5, seed=3)
    c = patterns.ebb(net16, rounds=5, seed=4)
    assert np.array_equal(a.round_times, b.round_times)
    assert not np.array_equal(a.round_times, c.round_times)
    out = ebb.EbbOutput(16, "netgauge -s 1048576 -m mpi -x ebb", a.size, a.reps,
                        a.round_times.tolist())
    text = header(net16) + ebb.render(out)
    recs = {r["metric"]: r for r in parse_text("ebb", text)}
    assert recs["bandwidth"]["num"] == 5 * 16
    assert recs["bandwidth"]["value"] == pytest.approx(
        2**20 * 20 / np.nanmean(a.round_times), rel=1e-6)


@pytest.mark.parametrize("name", collectives.COLLECTIVES)
def test_imb_collectives_grow_with_size_and_parse(net16, name) -> None:
    rows = patterns.imb(net16, name, msglog_sizes(0, 20))
    t = [r.t_max for r in rows]
    assert all(r.t_min <= r.t_avg <= r.t_max + 1e-9 for r in rows)
    if name != "Barrier":
        assert t[-1] > 10 * t[0]
    text = header(net16) + imbtext.preamble([name], "IMB-MPI1") + \
        imbtext.table(name, 16, imbtext.rows(rows))
    recs = parse_text("imb", text)
    assert {r["benchmark"] for r in recs} == {f"imb-{name.lower()}"}


def test_collective_decompositions_move_the_right_data() -> None:
    n, m = 13, 1000
    for alg in ("binomial", "knomial", "binary", "chain", "linear"):
        reached = {0}
        for ph in collectives._bcast(alg, n, m, 0):
            assert set(ph.src.tolist()) <= reached   # only ranks that have the data send
            reached |= set(ph.dst.tolist())
        assert reached == set(range(n)), alg
    for alg in ("linear", "pairwise", "bruck"):
        ph = collectives._alltoall(alg, n, m)
        total = sum(p.size.sum() for p in ph)
        assert total >= n * (n - 1) * m, alg
    ph = collectives._allreduce("ring", n, n * 10, 0.0, 1e9)
    assert len(ph) == 2 * (n - 1)
    assert collectives.choose("Alltoall", 672, 1 << 20) == "pairwise"
    assert collectives.choose("Alltoall", 672, 16) == "bruck"
    assert collectives.choose("Barrier", 672, 0) == "bruck"


def test_mupp_ring_allreduce_and_app_scaling(net16) -> None:
    zero = patterns.pingpong_times(net16, 0).max()
    assert zero == pytest.approx(net16.loggp.latency(np.array([2.0]))[0], rel=0.5)
    small, large = patterns.ring_allreduce(net16, 1024), patterns.ring_allreduce(net16, 1 << 24)
    assert large > 100 * small
    minife = benchmarks.app("minife")
    base = apps.run_app(net16, minife, 1.0)
    fast = apps.run_app(net16, minife, 50.0)
    assert fast.seconds < base.seconds
    comm = base.iteration_s - base.compute_s
    assert fast.iteration_s == pytest.approx(comm + base.compute_s / 50, rel=1e-6)
    for code in (b.app for b in benchmarks.REGISTRY if b.app):
        res = apps.run_app(net16, code, 10.0, iterations=2)
        text = header(net16) + proxyapp.render_walltime(proxyapp.walltime(res, 16))
        assert parse_text("walltime", text)


def test_fluid_jobs_interfere(mini, hx_dir) -> None:
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(), dumps=hx_dir)
    # Two alltoall-heavy jobs on interleaved nodes share cables; alone each is faster.
    a, b = np.arange(0, 64, 2), np.arange(1, 64, 2)

    def job(ranks):
        r = np.arange(len(ranks))
        steps = [Compute(1e-4)] + [Comm(ranks[r], ranks[(r + k) % len(r)], 1 << 20)
                                   for k in (1, 5, 9)]
        return Job("shifts", steps, repeat=2)

    alone = run_jobs(net, [job(a)])[0].ends[-1]
    assert run_jobs(net, [job(a)], small_bytes=0)[0].ends[-1] == pytest.approx(alone)
    tiny = run_jobs(net, [Job("tiny", [Comm(a[:1], a[1:2], 8)])])[0].ends[-1]
    lat = net.latency(a[:1], a[1:2])[0]
    assert tiny == pytest.approx(lat + 8 / net.capacity.max())
    both = run_jobs(net, [job(a), job(b)])
    assert both[0].ends[-1] > 1.2 * alone
    assert len(both[1].ends) == 2
    assert apps.app_job(net, benchmarks.app("minife"), a).steps  # skeletons: fluid jobs
    # MuPP and EmDL jobs: tests/test_capacity.py.


def test_cli_prints_upstream_format_and_one_line_errors(hostfile16, hx_dir, tmp_path,
                                                        capsys) -> None:
    common = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
              "dfsssp", "--routing-dir", str(hx_dir), "--hostfile", str(hostfile16),
              "--work", str(tmp_path)]
    assert main(common + ["--benchmark", "allreduce", "--msglog", "0:3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (f"# t2hx-simulated: fabric=mini/hyperx routing=dfsssp "
                                   f"hostfile={hostfile16} model=maxmin repetition=0 "
                                   "cache=miss noise=none")
    # 0, 4 and 8 bytes: IMB's reductions count floats, so 1 and 2 bytes are not run
    assert len(parse_text("imb", out)) == 3 * 3
    assert main(common + ["--benchmark", "Allgatherx"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown benchmark 'Allgatherx'" in err[0]
    bad = tmp_path / "bad.txt"
    bad.write_text("m1n01\nnosuchhost\n")
    args = [a if a != str(hostfile16) else str(bad) for a in common]
    assert main(args + ["--benchmark", "mpigraph"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 2: 'nosuchhost'" in err[0]


def test_routing_cache_is_reused(mini, tmp_path, hostfile16) -> None:
    first = open_network(mini, "hyperx", "dfsssp", hostfile16, work=tmp_path)
    dump = tmp_path / "routing" / "mini" / "hyperx" / "dfsssp-lmc0" / "opensm-lfts.dump"
    stamp = dump.stat().st_mtime_ns
    second = open_network(mini, "hyperx", "dfsssp", hostfile16, work=tmp_path)
    assert dump.stat().st_mtime_ns == stamp
    assert np.array_equal(first.tables.lft, second.tables.lft)


def test_lid_chooser_plugs_in(mini, routed) -> None:
    out = routed(mini, "hyperx", "dfsssp", 1).run.out_dir

    def by_size(src, dst, size):                # PARX-style: the LID depends on the size
        return np.full(len(src), 1 if size >= 512 else 0)

    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(), dumps=out,
                       chooser=by_size)
    src, dst = np.arange(0, 32), np.arange(32, 64)
    small, _ = net.paths(src, dst, 8)
    large, _ = net.paths(src, dst, 1 << 20)
    tables = net.tables
    for row_s, row_l, s, d in zip(small, large, src, dst):
        want_s = tables.path(int(net.rank_hca[s]), tables.hca_lid(int(net.rank_hca[d]), 0))
        want_l = tables.path(int(net.rank_hca[s]), tables.hca_lid(int(net.rank_hca[d]), 1))
        assert [x for x in row_s if x >= 0] == want_s
        assert [x for x in row_l if x >= 0] == want_l
    bad = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:4], dumps=out,
                       chooser=lambda s, d, m: np.full(len(s), 2))
    with pytest.raises(WorkloadError, match="LMC is 1"):
        bad.paths(np.array([0]), np.array([1]), 8)
