"""Open MPI's two fixed decision rule sets (t2hx/flowsim/collectives.py,
docs/modelling.md#collective-decision-rules).

Expected algorithms come from ``ompi/mca/coll/tuned/coll_tuned_decision_fixed.c`` of each
version: the ``ompi_coll_tuned_{barrier,bcast,reduce,allreduce,alltoall,gather,scatter}
_intra_dec_fixed`` functions at tag v1.10.7 (``ompi-1.10``) and on the v4.1.x branch
(``ompi-4.1``), commutative op (MPI_SUM) and IMB's datatypes (MPI_BYTE; MPI_FLOAT for the
reductions). The 4.1 points are ones where our reduced reading of the 4.1 tables and the
4.1 file agree; 4.1's linear_sync Alltoall is modelled as linear.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx import ROOT, benchmarks
from t2hx.conf import load_system
from t2hx.errors import ConfError, WorkloadError
from t2hx.flowsim import apps, collectives, imbjobs, multijob, patterns
from t2hx.flowsim.collectives import KIB, MIB, choose, phases
from t2hx.flowsim.network import open_network
from t2hx.flowsim.runcache import system_digest

from tests.conftest import MINI

OLD, NEW = "ompi-1.10", "ompi-4.1"

# (collective, n, m bytes, what 4.1 picks, what 1.10.7 picks)
DIFFER = [
    ("Barrier", 6, 0, "linear", "bruck"),                       # 4.1 n < 8; 1.10 not 2^k
    ("Barrier", 128, 0, "bruck", "recursive_doubling"),         # 4.1 n < 256; 1.10 2^k
    ("Barrier", 300, 0, "tree", "bruck"),
    ("Bcast", 16, 1 * KIB, "knomial", "binomial"),              # 1.10: m < 2,048
    ("Bcast", 16, 64 * KIB, "binomial", "split_binary@1024"),   # 1.10: m < 370,728
    ("Bcast", 8, 1 * MIB, "linear", "split_binary@8192"),       # 1.10: n < 13
    ("Bcast", 4, 4 * MIB, "chain", "pipeline@131072"),          # 1.10: n < a_p128·m + b_p128
    ("Bcast", 672, 4 * MIB, "knomial", "pipeline@8192"),        # 1.10: beyond a_p16·m + b_p16
    ("Reduce", 4, 256, "binary", "linear"),                     # 1.10: n < 8, m < 512
    ("Reduce", 4, 32 * KIB, "chain", "binary@32768"),           # 1.10: n > a3·m + b3
    ("Reduce", 16, 16 * KIB, "binomial", "binomial@1024"),      # 1.10: n > a1·m + b1
    ("Reduce", 16, 1 * MIB, "binomial", "pipeline@32768"),      # 1.10: n > a4·m + b4
    ("Reduce", 672, 4 * MIB, "binomial", "pipeline@1024"),      # 1.10: n > a2·m + b2
    ("Allreduce", 64, 64 * KIB, "recursive_doubling", "ring"),
    ("Allreduce", 300, 2 * KIB, "reduce_bcast", "recursive_doubling"),   # 1.10: m < 10,000
    ("Allreduce", 2, 4 * MIB, "rabenseifner", "ring_segmented@1048576"),  # m > n · 1 MiB
    ("Alltoall", 32, 600, "linear", "bruck"),                   # 1.10: m < 1,000, n > 12
    ("Alltoall", 32, 4 * KIB, "linear", "pairwise"),            # 1.10: m >= 2,000
    ("Alltoall", 672, 8 * KIB, "linear", "pairwise"),
    ("Gather", 32, 2 * KIB, "binomial", "linear"),              # 1.10: 10 < n <= 60, m >= 1,024
    ("Gather", 4, 128 * KIB, "linear", "linear_sync@32768"),    # 1.10: m > 92,160
    ("Scatter", 16, 1 * KIB, "binomial", "linear"),             # 1.10: m >= 300
    ("Scatter", 24, 2 * KIB, "binomial", "linear"),
]


@pytest.mark.parametrize("name,n,m,new,old", DIFFER)
def test_each_rule_set_picks_what_its_source_says(name, n, m, new, old) -> None:
    assert choose(name, n, m) == choose(name, n, m, rules=NEW) == new
    assert choose(name, n, m, rules=OLD) == old
    assert phases(name, n, m, rules=OLD)[0] == old


def test_1_10_switch_points() -> None:
    """Both sides of a few 1.10.7 thresholds (the constants of its decision functions)."""
    assert choose("Bcast", 64, 2047, rules=OLD) == "binomial"
    assert choose("Bcast", 64, 2048, rules=OLD) == "split_binary@1024"
    assert choose("Bcast", 64, 370727, rules=OLD) == "split_binary@1024"
    assert choose("Bcast", 64, 370728, rules=OLD) == "pipeline@8192"
    assert choose("Allreduce", 64, 9999, rules=OLD) == "recursive_doubling"
    assert choose("Allreduce", 64, 10000, rules=OLD) == "ring"
    assert choose("Allreduce", 3000, 10000, rules=OLD) == "reduce_bcast"   # count <= n
    assert choose("Alltoall", 12, 999, rules=OLD) == "linear"
    assert choose("Alltoall", 13, 999, rules=OLD) == "bruck"
    assert choose("Alltoall", 2, 16, rules=OLD) == "pairwise"
    assert choose("Gather", 64, 6000, rules=OLD) == "binomial"
    assert choose("Gather", 64, 6001, rules=OLD) == "linear_sync@1024"
    assert choose("Scatter", 11, 299, rules=OLD) == "binomial"
    assert choose("Scatter", 10, 299, rules=OLD) == "linear"
    assert choose("Reduce", 7, 20479, rules=OLD) == "binomial"


@pytest.mark.parametrize("n", [2, 8, 128, 1024])
@pytest.mark.parametrize("m", [0, 256, 16 * 1024, 1 << 20])
def test_seed_001s_rule_set_runs_one_algorithm_per_collective(n, m) -> None:
    """binomial-rd-bruck: the thesis' algorithms at every size; the rest as ompi-4.1."""
    rules = "binomial-rd-bruck"
    assert choose("Bcast", n, m, rules=rules) == "binomial"
    assert choose("Allreduce", n, m, rules=rules) == "recursive_doubling"
    assert choose("Alltoall", n, m, rules=rules) == ("pairwise" if n == 2 else "bruck")
    assert choose("Reduce", n, m, rules=rules) == choose("Reduce", n, m)
    _check_ranks(phases("Alltoall", n, m, rules=rules)[1], n)


def test_the_thesis_systems_run_the_thesis_algorithms() -> None:
    from t2hx.conf import load_system

    for name in ("thesis-rsn1024", "thesis-circ1024"):
        assert load_system(ROOT / "conf" / "systems" / f"{name}.yaml").model["collectives"] \
            == "binomial-rd-bruck"


def test_unknown_rule_set_is_one_line_naming_the_field() -> None:
    for call in (lambda: choose("Bcast", 4, 8, rules="mpich"),
                 lambda: phases("Bcast", 4, 8, rules="mpich", algorithm="binomial")):
        with pytest.raises(WorkloadError) as err:
            call()
        text = str(err.value)
        assert "\n" not in text and "model.collectives" in text and "'mpich'" in text
        assert "ompi-4.1" in text and "ompi-1.10" in text


def _check_ranks(ph: list, n: int) -> None:
    for p in ph:
        assert ((0 <= p.src) & (p.src < n) & (0 <= p.dst) & (p.dst < n)).all()
        assert (p.size >= 0).all() and p.compute >= 0


def _received(ph: list, n: int) -> np.ndarray:
    got = np.zeros(n)
    for p in ph:
        np.add.at(got, p.dst, p.size)
    return got


@pytest.mark.parametrize("n,m,root", [(16, 64 * KIB, 0), (13, 64 * KIB, 5), (2, 4 * KIB, 1),
                                      (12, 1 * MIB, 7), (4, 4 * MIB, 2), (40, 4 * MIB, 3),
                                      (33, 100, 0)])
def test_1_10_bcast_reaches_every_rank_with_the_whole_message(n, m, root) -> None:
    alg, ph = phases("Bcast", n, m, root=root, rules=OLD)
    _check_ranks(ph, n)
    reached = {root}
    for p in ph:
        assert set(p.src.tolist()) <= reached, alg     # only ranks that hold data send
        reached |= set(p.dst.tolist())
    assert reached == set(range(n)), alg
    got = _received(ph, n)
    assert got[root] == 0 and (np.delete(got, root) == m).all(), alg


def test_pipeline_takes_segments_plus_depth_steps() -> None:
    """S segments over a chain of depth d take S + d - 1 phases."""
    alg, ph = phases("Bcast", 16, 4 * MIB, rules=OLD)
    assert alg == "pipeline@16384"
    assert len(ph) == 4 * MIB // (16 * KIB) + 15 - 1
    assert max(len(p.src) for p in ph) == 15            # the whole chain busy at once


def test_long_pipelines_are_coarsened_to_the_cap() -> None:
    alg, ph = phases("Reduce", 200, 4 * MIB, rules=OLD)
    assert alg == "pipeline@1024"                        # 4,096 segments over 199 edges
    assert len(ph) == collectives.MAX_PIPELINE_STEPS
    sent = np.zeros(200)
    for p in ph:
        np.add.at(sent, p.src, p.size)
    assert sent[0] == 0 and (sent[1:] == 4 * MIB).all()


@pytest.mark.parametrize("n,m", [(16, 16 * KIB), (16, 1 * MIB), (4, 32 * KIB), (5, 256),
                                 (64, 300 * KIB)])
def test_1_10_reduce_sends_each_contribution_once_towards_the_root(n, m) -> None:
    alg, ph = phases("Reduce", n, m, root=1, rules=OLD)
    _check_ranks(ph, n)
    sent = np.zeros(n)
    for p in ph:
        np.add.at(sent, p.src, p.size)
    assert sent[1] == 0 and (np.delete(sent, 1) == m).all(), alg
    assert sum(p.compute for p in ph) > 0, alg          # the combining costs time


@pytest.mark.parametrize("n,m", [(16, 1 * KIB), (32, 200), (11, 100)])
def test_1_10_scatter_reaches_every_rank(n, m) -> None:
    alg, ph = phases("Scatter", n, m, root=2, rules=OLD)
    _check_ranks(ph, n)
    got = _received(ph, n)
    assert (np.delete(got, 2) >= m).all(), alg


def test_1_10_gather_linear_sync_handshakes_then_collects_everything() -> None:
    n, m = 9, 100 * KIB
    alg, ph = phases("Gather", n, m, root=4, rules=OLD)
    assert alg == "linear_sync@32768"
    _check_ranks(ph, n)
    assert len(ph) == 2 * (n - 1) + 1
    got = _received(ph, n)
    assert got[4] == (n - 1) * m and (np.delete(got, 4) == 0).all()


def test_1_10_allreduce_moves_what_its_algorithm_moves() -> None:
    n, m = 16, 64 * KIB                                # ring: 2(n-1) steps of m/n per rank
    alg, ph = phases("Allreduce", n, m, rules=OLD)
    assert alg == "ring" and len(ph) == 2 * (n - 1)
    assert sum(p.size.sum() for p in ph) == 2 * (n - 1) * n * (m // n)
    # segmented ring, 2 ranks, 4 MiB: 2 MiB blocks in two 1 MiB rounds, then the allgather
    alg, ph = phases("Allreduce", 2, 4 * MIB, rules=OLD)
    assert alg == "ring_segmented@1048576" and len(ph) == 3
    assert [p.size.max() for p in ph] == [MIB, MIB, 2 * MIB]
    assert sum(p.size.sum() for p in ph) == 2 * (2 * MIB) * 2
    alg, ph = phases("Allreduce", 16, 1 * KIB, rules=OLD)    # log2(16) exchanges of m
    assert alg == "recursive_doubling"
    assert sum(p.size.sum() for p in ph) == 16 * 4 * KIB


@pytest.mark.parametrize("n,m", [(16, 4 * KIB), (16, 1500), (32, 600), (2, 64)])
def test_1_10_alltoall_covers_every_pair(n, m) -> None:
    alg, ph = phases("Alltoall", n, m, rules=OLD)
    _check_ranks(ph, n)
    total = sum(p.size.sum() for p in ph)
    if alg == "bruck":                 # round k forwards the blocks whose bit k is set
        blocks = sum(bin(j).count("1") for j in range(n))
        assert total == n * m * blocks
        return
    pairs = {(s, d) for p in ph for s, d in zip(p.src.tolist(), p.dst.tolist())}
    assert pairs == {(s, d) for s in range(n) for d in range(n) if s != d}, alg
    assert total == n * (n - 1) * m, alg


def _conf(tmp_path: Path, rules: str) -> Path:
    data = yaml.safe_load(MINI.read_text())
    data["model"] = {"collectives": rules}
    path = tmp_path / f"mini-{rules}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_conf_rejects_an_unknown_rule_set(tmp_path) -> None:
    with pytest.raises(ConfError, match="model.collectives"):
        load_system(_conf(tmp_path, "ompi-9"))
    assert load_system(MINI).model["collectives"] == "ompi-4.1"


@pytest.fixture(scope="module")
def nets(mini, routed, tmp_path_factory):
    """16 mini HyperX hosts under the default conf and under ``collectives: ompi-1.10``."""
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    conf = _conf(tmp_path_factory.mktemp("conf"), OLD)
    hosts = mini.hostnames()[:16]
    return (open_network(mini, "hyperx", "dfsssp", hosts=hosts, dumps=hx),
            open_network(load_system(conf), "hyperx", "dfsssp", hosts=hosts, dumps=hx), conf)


def test_conf_rule_set_changes_the_imb_bcast_simulation(nets) -> None:
    new, old, conf = nets
    assert (new.loggp.collectives, old.loggp.collectives) == (NEW, OLD)
    a = patterns.imb(new, "Bcast", [64 * KIB])[0]
    b = patterns.imb(old, "Bcast", [64 * KIB])[0]
    assert (a.algorithm, b.algorithm) == ("binomial", "split_binary@1024")
    assert a.t_max != b.t_max
    # the run cache keys on the conf's content: the rule set is part of it
    assert system_digest(conf) != system_digest(MINI)


def test_every_caller_passes_the_conf_rule_set(nets, monkeypatch) -> None:
    _, old, _ = nets
    seen: list[str] = []
    real = collectives.phases

    def spy(*args, **kwargs):
        seen.append(kwargs.get("rules", "default"))
        return real(*args, **kwargs)

    monkeypatch.setattr(collectives, "phases", spy)
    ranks = np.arange(8)
    imbjobs.emdl_job(old, "emdl", ranks, msglog=(0, 1))
    apps.app_job(old, benchmarks.app("amg"), ranks)
    multijob.step_job(old, benchmarks.app("amg"), ranks, 1.0, None, None, "job0-amg")
    patterns.imb(old, "Allreduce", [8])
    assert seen and set(seen) == {OLD}


def test_docs_cite_both_sources() -> None:
    page = (ROOT / "docs" / "modelling.md").read_text()
    assert "v1.10.7" in page and "v4.1.x" in page and "model.collectives" in page


# What v4.1.4's coll_tuned_decision_fixed.c picks where the earlier reduced reading did not
# (the real IMB runs' pml_monitoring profiles showed the difference: tests/test_derived_demand.py).
V4_1_4 = [
    ("Gather", 14, 1 * MIB, "binomial"), ("Gather", 300, 4 * KIB, "linear"),
    ("Gather", 6, 2 * MIB, "linear_sync"), ("Gather", 3, 40 * KIB, "linear"),
    ("Scatter", 12, 64 * KIB, "linear_nb"), ("Scatter", 12, 2 * MIB, "linear"),
    ("Scatter", 40, 10 * KIB, "binomial"), ("Scatter", 100, 4 * KIB, "linear_nb"),
    ("Reduce", 7, 2 * MIB, "linear"), ("Reduce", 5, 600 * KIB, "binomial"),
    ("Reduce", 3, 100 * KIB, "linear"), ("Reduce", 3, 2 * MIB, "pipeline"),
    ("Reduce", 300, 12 * KIB, "binary"),
]


@pytest.mark.parametrize("name,n,m,alg", V4_1_4)
def test_4_1_follows_the_v4_1_4_tables(name, n, m, alg) -> None:
    assert choose(name, n, m, rules=NEW) == alg


def test_4_1_rabenseifner_keeps_the_even_ranks_off_a_power_of_two() -> None:
    """``allreduce_intra_redscat_allgather``: on 7 ranks 1, 3 and 5 hand their halves to 0, 2
    and 4, which with 6 halve and double at distance 1 first (the largest block), then 2."""
    alg, ph = phases("Allreduce", 7, 4 * MIB, rules=NEW)
    assert alg == "rabenseifner"
    pairs = [sorted(zip(p.src.tolist(), p.dst.tolist())) for p in ph]
    assert pairs[1] == [(1, 0), (3, 2), (5, 4)]                       # the odd ones' halves
    assert pairs[2] == [(0, 2), (2, 0), (4, 6), (6, 4)] and ph[2].size[0] == 2 * MIB
    assert pairs[3] == [(0, 4), (2, 6), (4, 0), (6, 2)] and ph[3].size[0] == 1 * MIB
    assert pairs[-1] == [(0, 1), (2, 3), (4, 5)] and ph[-1].size[0] == 4 * MIB


@pytest.mark.parametrize("n", [5, 12, 28, 37, 64, 100])
def test_4_1_scatter_allgather_bcast_gives_every_rank_the_whole_message(n) -> None:
    """The allgather of 4.1's scatter-allgather Bcast off a power of two (recursive doubling,
    then recursive halving to the ranks without a partner) brings every rank, the root too,
    all of the message but the block the scatter left it."""
    m = 4 * MIB + 12345
    alg, ph = phases("Bcast", n, m, algorithm="scatter_allgather", rules=NEW, root=3)
    got = np.zeros(n)
    for p in ph:
        if p.name == "allgather":
            np.add.at(got, p.dst, p.size)
    block = -(-m // n)
    own = np.clip(m - ((np.arange(n) - 3) % n) * block, 0, block)     # by distance to root
    assert np.array_equal(got + own, np.full(n, m))
