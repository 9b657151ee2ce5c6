"""Seed 001's generated networks (t2hx/placement/network_analysis.py and the fabric modules
under it): Dragonfly construction, path lengths, cable lengths, collective and point-to-point
hops, the two-opt tables, the CLI, the study's ``networks:`` section and the ``network``
claim kind on kept analyses."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx import ROOT
from t2hx.errors import ConfError, T2hxError
from t2hx.fabric.cabling import Layout, cable_lengths
from t2hx.fabric.dragonfly import dragonfly_edges, group_size
from t2hx.fabric.pathlengths import diameter_aspl, hop_matrix
from t2hx.placement.collective_messages import COLLECTIVES, messages
from t2hx.placement.network_analysis import Sweep, analyse, degree_for, network_edges
from t2hx.post.scorecard import score
from t2hx.study import load_study

T2HX = str(ROOT / ".venv" / "bin" / "t2hx")
SMALL = Sweep(seed=3, iterations=2000, two_opt_up_to=64, p2p_switches=64, table_switches=64,
              table_ranks=32, table_iterations=3000)


def test_the_dragonfly_of_1024_switches_is_seed_001s_64_groups_of_16_with_diameter_3():
    edges = dragonfly_edges(1024, 19)
    assert group_size(1024, 19) == 16
    degree = Counter(x for e in edges for x in e)
    assert set(degree.values()) == {19} and len(edges) == len(set(edges))
    groups = {(a // 16, b // 16) for a, b in edges if a // 16 != b // 16}
    assert len(groups) == 64 * 63 // 2                  # every pair of groups linked
    assert diameter_aspl(hop_matrix(1024, edges))[0] == 3


def test_a_dragonfly_too_large_for_its_degree_has_a_diameter_above_3():
    """256 switches of degree 7: groups of at most 7 cannot reach 63 other groups."""
    edges = dragonfly_edges(256, 7)
    assert diameter_aspl(hop_matrix(256, edges))[0] > 3


def test_path_lengths_of_a_ring():
    n = 8
    diameter, aspl = diameter_aspl(hop_matrix(n, [(i, (i + 1) % n) for i in range(n)]))
    assert diameter == 4 and aspl == pytest.approx(16 / 7)
    with pytest.raises(T2hxError, match="cannot reach"):
        hop_matrix(4, [(0, 1), (2, 3)])


def test_cable_lengths_follow_the_cabinet_layout():
    """16 switches: cabinets 0 (switches 0-7) and 1 (8-15) on a 2x1 grid, one row apart."""
    lengths = cable_lengths(16, [(0, 1), (0, 8), (7, 15)])
    assert lengths.tolist() == pytest.approx([1.0, 2.1 + 2.0, 2.1 + 2.0])
    # 40 cabinets: 7 rows of 6 columns; cabinet 0 at (0, 0), cabinet 13 at (2, 1).
    assert Layout().grid(320) == (7, 6)
    assert cable_lengths(320, [(0, 13 * 8)]).tolist() == pytest.approx([0.6 + 2 * 2.1 + 2.0])


@pytest.mark.parametrize("n", [16, 64, 256])
def test_the_thesis_collectives_take_one_hop_per_message_on_the_circulant_network(n):
    """§4.3: with ranks in ring order on G(N, log2 N) every message of binomial Broadcast,
    recursive-doubling Allreduce and Bruck Alltoall crosses one link (and none on another
    graph of the same degree)."""
    hops = hop_matrix(n, network_edges("circulant", n, 1))
    other = hop_matrix(n, network_edges("random-shortcut", n, 1))
    place = np.arange(n)
    for coll in COLLECTIVES:
        m = messages(coll, n)
        assert int(hops[place[m.src], place[m.dst]].sum()) == len(m)
        assert int(other[place[m.src], place[m.dst]].sum()) > len(m)


def test_the_analysis_of_a_small_random_shortcut_network():
    out = analyse("random-shortcut", 64, SMALL)
    assert (out["switches"], out["degree"], out["links"]) == (64, 11, 64 * 11 // 2)
    hops = {(r["collective"], r["mapping"]): r["hops"] for r in out["collectives"]}
    for coll in COLLECTIVES:
        for start in ("ring", "random"):
            assert hops[coll, f"{start}+two-opt"] <= hops[coll, start]
    assert {r["nodes"] for r in out["p2p"]} == {8, 16, 32, 64}
    full = [r for r in out["p2p"] if r["nodes"] == 64]
    assert [r["mean_hops"] for r in full] == pytest.approx([out["aspl"]] * 3, abs=1e-6)
    assert all(r["alltoall_hops"] >= 1 for r in out["p2p"])
    assert {(r["collective"], r["mapping"]) for r in out["twoopt"]} == \
        {(c, m) for c in COLLECTIVES for m in ("random", "hierarchical", "ring")}
    assert all(r["final"] <= r["initial"] for r in out["twoopt"])
    assert {r["iterations"] for r in out["twoopt"]} == {3000}     # the tables' own trials
    again = analyse("random-shortcut", 64, SMALL)
    assert {k: v for k, v in again.items() if k != "seconds"} == \
        {k: v for k, v in out.items() if k != "seconds"}


def test_the_circulant_networks_cables_are_shorter_than_the_random_shortcut_networks():
    circ, rsn = (analyse(k, 256, Sweep(iterations=0)) for k in ("circulant", "random-shortcut"))
    assert circ["cable_mean_m"] < rsn["cable_mean_m"]
    assert circ["diameter"] >= rsn["diameter"] and circ["aspl"] > rsn["aspl"]


def test_sizes_must_be_powers_of_two(tmp_path):
    with pytest.raises(T2hxError, match="power of two"):
        degree_for(48)
    rows = tmp_path / "network.json"
    out = subprocess.run([T2HX, "campaign", "analyse-network", "--kind", "circulant",
                          "--switches", "48", "--rows", str(rows)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1
    assert "48 switches" in out.stderr and "power of two" in out.stderr
    assert not rows.exists()


def test_the_cli_writes_the_analysis_and_its_summary_line(tmp_path):
    rows = tmp_path / "network.json"
    out = subprocess.run([T2HX, "campaign", "analyse-network", "--kind", "circulant",
                          "--switches", "64", "--rows", str(rows)], capture_output=True,
                         text=True, timeout=120, check=True)
    from t2hx import wire

    values = wire.network_metrics(out.stdout)
    assert values["bcast_hops"] == 63 and values["diameter"] == 3
    assert wire.NETWORK_DONE in out.stdout
    assert json.loads(rows.read_text())["aspl"] == values["aspl"]


def test_the_study_section_checks_its_sizes(tmp_path):
    study = load_study("shortcut-topologies-thesis", "quick")
    assert study.networks["iterations"] == 20000
    assert study.network_cases() == 3 * len(study.networks["switches"])
    assert load_study("shortcut-topologies-thesis", "full").networks["iterations"] == 200000
    assert study.networks["table_iterations"] == 200000     # the tables keep the thesis' trials
    data = yaml.safe_load((ROOT / "conf/studies/shortcut-topologies-thesis.yaml").read_text())
    data["networks"]["switches"] = [16, 48]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match="48 switches is not a power of two") as err:
        load_study(str(bad))
    assert "networks.switches" in str(err.value)


@pytest.mark.parametrize("group, members, says", [
    ("rsn", ["rsn-random", "rsn-snake"], "names 'rsn-snake', not a combo of the benchmark"),
    ("Chapter 3", ["rsn-random"], "is not a lower-case word")])
def test_a_bad_figure_group_is_one_line(tmp_path, group, members, says):
    data = yaml.safe_load((ROOT / "conf/studies/shortcut-topologies-thesis.yaml").read_text())
    data["benchmarks"]["imb"]["figures"] = {group: members}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match=says) as err:
        load_study(str(bad))
    assert f"benchmarks.imb.figures.{group}" in str(err.value)
    assert len(str(err.value).splitlines()) == 1


def _keep(logdir: Path, out: dict) -> None:
    where = logdir / "networks" / "sim" / "x-shortcut" / f"network_{out['kind']}_{out['switches']}"
    where.mkdir(parents=True)
    (where / "network.json").write_text(json.dumps(out))


def test_network_claims_read_the_kept_analyses(tmp_path):
    """The ``network`` kind: a subject network's metric against a base's per size, or its
    own value; every verdict reachable from real analyses of small networks."""
    empty = __import__("pandas").DataFrame(columns=["benchmark"])
    defaults = {"dead_band": 0.01, "tolerance": {"abs": 0.05, "rel": 0.25},
                "value_tolerance": 0.10}

    def claim(pub: dict, **comp) -> dict:
        return {"id": "c", "mechanism": "topology", "source": "test", "statement": "s",
                "published": pub, "compute": {"kind": "network", **comp}}

    circ, rsn = {"kind": "circulant"}, {"kind": "random-shortcut"}
    ring = {"kind": "circulant", "mapping": "ring"}
    first = score(empty, [claim({"sign": -1}, metric="cable_mean_m", subject=circ, base=rsn)],
                  defaults, logdir=tmp_path)[0]
    assert first.verdict == "not run"
    for kind in ("circulant", "random-shortcut"):
        for n in (32, 64):
            _keep(tmp_path, analyse(kind, n, Sweep(iterations=0)))
    cases = [(claim({"sign": -1}, metric="cable_mean_m", subject=circ, base=rsn, stat="max"),
              "agrees"),
             (claim({"sign": 1}, metric="cable_mean_m", subject=circ, base=rsn), "contradicts"),
             (claim({"value": 1}, metric="hops_per_message", collective="alltoall",
                    subject=ring, stat="max"), "agrees"),
             (claim({"value": 3}, metric="diameter", subject=circ, switches=[64]), "agrees"),
             (claim({"value": 5}, metric="diameter", subject=circ, switches=[64]),
              "contradicts"),
             (claim({"sign": -1}, metric="diameter", subject=circ, base=rsn, switches=[128]),
              "not run")]
    for c, want in cases:
        v = score(empty, [c], defaults, logdir=tmp_path)[0]
        assert v.verdict == want, (c["compute"], v.verdict, v.ours, v.note)


def test_the_mix_of_section_5_4_is_linear_and_its_lines_cross_where_the_totals_meet():
    from t2hx.post.generated_networks import MIX_MESSAGES, crossover, mix_total

    assert mix_total(3.0, 1.0, 0.0) == MIX_MESSAGES * 3.0
    assert mix_total(3.0, 1.0, 1.0) == MIX_MESSAGES * 1.0
    # circulant: 3.45 hops point to point, 1 per Alltoall message; random shortcut 2.68, 2.45
    r = crossover((3.45, 1.0), (2.68, 2.45))
    assert mix_total(3.45, 1.0, r) == pytest.approx(mix_total(2.68, 2.45, r))
    assert 0 < r < 1
    assert np.isnan(crossover((1.0, 1.0), (2.0, 2.0)))          # never meet
    assert np.isnan(crossover((3.0, 2.5), (2.0, 2.0)))          # meet beyond an all-collective mix


def test_circulant_mappings_cut_the_mix_as_the_collective_share_grows():
    """§5.4 on a small circulant network: with ring or circulant mapping an Alltoall's
    message takes fewer hops than a random message among the same nodes."""
    out = analyse("circulant", 64, SMALL)
    for r in out["p2p"]:
        if r["mapping"] in ("ring", "circulant") and r["nodes"] < 64:
            assert r["alltoall_hops"] < r["mean_hops"], r


def test_collective_time_figures_split_sizes_and_keep_two_opt_to_its_own_collective(tmp_path):
    """Figs 3.10-3.12, 4.6-4.8, 5.6-5.11: the thesis' small (256 B-16 KiB) and large
    (64 KiB-1 MiB) sizes only, one figure per group of the study's ``figures:`` (a network's
    mappings, or the three networks), and a combo tuned by two-opt for Alltoall is drawn in
    the Alltoall figures alone."""
    import dataclasses

    import pandas as pd

    from t2hx.post import collective_times
    from t2hx.study import load_study

    study = load_study("shortcut-topologies-thesis")
    combos = ["rsn-random", "rsn-random-2opt-a2a", "rsn-random-2opt-bcast", "df-ring",
              "circ-ring"]
    sizes = [0, 256, 512, 1024, 4096, 16384, 32768, 65536, 262144, 1048576]
    g = pd.DataFrame([{"benchmark": f"imb-{c}", "metric": "t_min", "unit": "us", "combo": k,
                       "nodes": 512, "msg_size": s, "best": 1.0 + s * (i + 1)}
                      for c in ("bcast", "alltoall") for i, k in enumerate(combos)
                      for s in sizes])
    figs = {f.name: f for f in collective_times.figures(g, study, combos, tmp_path)}
    assert sorted(figs) == [f"collective-{grp}-{c}-512-{p}" for grp in ("circ", "networks", "rsn")
                            for c in ("alltoall", "bcast") for p in ("large", "small")]
    rsn = figs["collective-rsn-alltoall-512-small"].table
    assert list(rsn["msg_size"]) == [256, 1024, 4096, 16384]
    assert "df-ring" not in rsn.columns and "circ-ring" not in rsn.columns
    assert "df-ring" in figs["collective-networks-bcast-512-large"].table.columns
    large = figs["collective-networks-bcast-512-large"].table
    assert list(large["msg_size"]) == [65536, 262144, 1048576]
    assert "rsn-random-2opt-a2a" in figs["collective-rsn-alltoall-512-large"].table.columns
    assert "rsn-random-2opt-a2a" not in large.columns
    assert "rsn-random-2opt-bcast" in large.columns
    assert all((tmp_path / f"{name}.png").stat().st_size > 0 for name in figs)
    # With IMB's three statistics the figures draw t_max, the thesis' execution time (§3.4.2)
    both = pd.concat([g, g.assign(metric="t_max", best=g["best"] * 3)], ignore_index=True)
    timed = {f.name: f for f in collective_times.figures(both, study, combos, tmp_path / "t")}
    assert timed["collective-networks-bcast-512-large"].table["df-ring"].tolist() == \
        (large["df-ring"] * 3).tolist()
    # A study without figure groups draws one figure of all its combos per size range.
    imb = {**study.catalog["imb"], "figures": None}
    plain = dataclasses.replace(study, catalog={**study.catalog, "imb": imb})
    names = {f.name for f in collective_times.figures(g, plain, combos, tmp_path / "plain")}
    assert "collective-bcast-512-large" in names and len(names) == 4


def _timed(system: str = "thesis-rsn1024", switch_ns: float | None = None,
           tmp_path: Path | None = None) -> Sweep:
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim.exchange import p2p_timing

    path = system_path(system)
    if switch_ns is not None:
        data = yaml.safe_load(path.read_text())
        data["model"]["switch_latency_ns"] = switch_ns
        path = tmp_path / f"{system}.yaml"
        path.write_text(yaml.safe_dump(data))
    return Sweep(iterations=0, p2p_switches=64, table_switches=0,
                 p2p_timing=p2p_timing(load_system(path), 128))


def test_point_to_point_times_follow_the_hops_and_the_systems_switch_latency(tmp_path):
    """Fig 5.13: the exchange time per mapping tracks its hops, a slower switch adds its
    latency once per switch on the path (hops + 1), and an untimed sweep has no times."""
    plain = analyse("circulant", 64, Sweep(iterations=0, p2p_switches=64, table_switches=0))
    assert all("p2p_time_us" not in r for r in plain["p2p"])
    fast, slow = (analyse("circulant", 64, _timed(switch_ns=ns, tmp_path=tmp_path))
                  for ns in (100.0, 300.0))
    rows = {(r["mapping"], r["nodes"]): r for r in fast["p2p"]}
    by_hops = sorted(rows.values(), key=lambda r: r["mean_hops"])
    assert [r["p2p_time_us"] for r in by_hops] == sorted(r["p2p_time_us"] for r in by_hops)
    assert rows["random", 16]["p2p_time_us"] > rows["circulant", 16]["p2p_time_us"]
    assert {r["p2p_bytes"] for r in fast["p2p"]} == {128}
    for f, s in zip(fast["p2p"], slow["p2p"]):
        extra = (s["p2p_time_us"] - f["p2p_time_us"]) * 1e3          # ns
        assert extra == pytest.approx(200.0 * (f["mean_hops"] + 1), rel=1e-6)


def test_point_to_point_timing_needs_one_plane_and_a_known_system(tmp_path):
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim.exchange import p2p_timing

    with pytest.raises(T2hxError, match="2 planes: the timing needs one link rate") as err:
        p2p_timing(load_system(system_path("t2hx")), 128)
    assert "planes" in str(err.value) and len(str(err.value).splitlines()) == 1
    data = yaml.safe_load((ROOT / "conf/studies/shortcut-topologies-thesis.yaml").read_text())
    data["networks"]["p2p_system"] = "thesis-rsn4096"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match="no conf system 'thesis-rsn4096'") as err:
        load_study(str(bad))
    assert "networks.p2p_system" in str(err.value)
    rows = tmp_path / "network.json"
    out = subprocess.run([T2HX, "campaign", "analyse-network", "--kind", "circulant",
                          "--switches", "64", "--p2p-switches", "64", "--p2p-system", "t2hx",
                          "--rows", str(rows)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1
    assert "2 planes" in out.stderr and not rows.exists()


def test_section_3_5_compares_two_opt_and_annealing_on_an_8_degree_network(tmp_path):
    """Figs 3.17/3.18: per random shortcut network, the conventional Broadcast, two-opt and
    each annealing run within its trial budget, with their CPU time; none on other kinds;
    the scorecard reads them as ``total_hops`` per method; the CLI passes the options."""
    from t2hx.placement.network_analysis import Annealing

    sweep = Sweep(iterations=0, annealing=Annealing(two_opt_trials=300, sa_iterations=(5, 50),
                                                     trials_up_to=1000))
    out = analyse("random-shortcut", 32, sweep)
    rows = {r["mapping"]: r for r in out["annealing"]}
    assert list(rows) == ["conv", "two-opt", "sa-5"]           # 50 x 32 trials is over budget
    assert rows["two-opt"]["trials"] == 300 and rows["sa-5"]["trials"] == 5 * 32
    assert all(r["total_hops"] <= rows["conv"]["total_hops"] and r["degree"] == 8
               for r in rows.values())
    assert rows["sa-5"]["cpu_s"] >= 0 and analyse("circulant", 32, sweep)["annealing"] == []
    _keep(tmp_path, out)
    empty = __import__("pandas").DataFrame(columns=["benchmark"])
    c = {"id": "c", "mechanism": "placement", "source": "t", "statement": "s",
         "published": {"sign": -1},
         "compute": {"kind": "network", "metric": "total_hops",
                     "subject": {"kind": "random-shortcut", "mapping": "two-opt"},
                     "base": {"kind": "random-shortcut", "mapping": "conv"}}}
    v = score(empty, [c], {"dead_band": 0.0}, logdir=tmp_path)[0]
    want = rows["two-opt"]["total_hops"] / rows["conv"]["total_hops"] - 1
    assert v.verdict == ("agrees" if want < 0 else "contradicts") and f"{100 * want:+.1f}" in v.ours
    cli = tmp_path / "cli.json"
    subprocess.run([T2HX, "campaign", "analyse-network", "--kind", "random-shortcut",
                    "--switches", "16", "--iterations", "0", "--sa-iterations", "3,4",
                    "--sa-two-opt-trials", "10", "--rows", str(cli)], check=True,
                   capture_output=True, timeout=120)
    assert [r["mapping"] for r in json.loads(cli.read_text())["annealing"]] == \
        ["conv", "two-opt", "sa-3", "sa-4"]


@pytest.mark.parametrize("args, says", [
    (["--sa-degree", "5"], "--sa-degree without --sa-iterations"),
    (["--sa-iterations", "72,2000000"], "2000000 annealing iterations"),
])
def test_annealing_options_are_refused_where_they_would_be_ignored(tmp_path, args, says):
    out = subprocess.run([T2HX, "campaign", "analyse-network", "--kind", "circulant",
                          "--switches", "16", "--rows", str(tmp_path / "x.json"), *args],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and says in out.stderr and len(out.stderr.splitlines()) == 1
    assert not (tmp_path / "x.json").exists()
