"""A study that compares systems (seed 003's kind, conf/studies/fattree-configs-sc17.yaml),
end to end on two small fat-trees written here: a full one and one tapered 2:1 at the
leaves. The real `t2hx campaign run` (ReFrame, real OpenSM under ibsim, the flow model)
runs the apps at two compute scales, IMB alltoall and a multi-job workload; `t2hx replay`
draws the seed 003 figure set; the scorecard's workload kinds read the records."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest

from t2hx import ROOT
from t2hx.post import scorecard
from t2hx.errors import ConfError
from t2hx.placement.jobs import assign_apps, random_clusters
from t2hx.placement.nodes import PlacementError
from t2hx.post.ingest import ingest
from t2hx.study import load_study
from tests.test_reframe import env_for

T2HX = str(ROOT / "run" / "t2hx")

SYSTEM = """
name: {name}
description: a 2-level fat-tree of 16 nodes ({what})
nodes: {{hostname: "t{{index:02d}}", racks: 4, per_rack: 4, cores: 4}}
planes:
  fattree:
    hca: mlx5_0
    gbps: 100.0
    topology: {{kind: xgft, m: [4, 4], w: [1, {up}], switch_ports: 8}}
    opensm: {{routing: [ftree]}}
"""

STUDY = """
name: mini-configs
system: t-full
baseline: full-comm
figures: configs
combos:
  - {name: full-comm,  system: t-full,  plane: fattree, routing: ftree, placement: linear, compute_scale: 0}
  - {name: taper-comm, system: t-taper, plane: fattree, routing: ftree, placement: linear, compute_scale: 0}
  - {name: full-x10,   system: t-full,  plane: fattree, routing: ftree, placement: linear, compute_scale: 10}
  - {name: taper-x10,  system: t-taper, plane: fattree, routing: ftree, placement: linear, compute_scale: 10}
  - {name: full-x2,    system: t-full,  plane: fattree, routing: ftree, placement: linear, compute_scale: 2}
  - {name: taper-x2,   system: t-taper, plane: fattree, routing: ftree, placement: linear, compute_scale: 2}
ladders: {scale: [8, 16], small: [16]}
repetitions: 1
benchmarks:
  swfft: {ladder: scale, input: {reps: 16, grid_per_rank: 128}}
  minife: {ladder: scale, input: {n_base: 100}}
  imb:
    ladder: small
    variants: [Alltoall]
    input: {msglog: "16:20", iter_policy: dynamic, time: 10}
    combos: [full-comm, taper-comm]
workloads:
  combos: [full-x10, taper-x10, full-x2, taper-x2]
  count: 1
  seed: 1
  jobs: 2
  nodes_per_job: 8
  cluster: 2
  apps: [swfft]
  window: 0.2s
  window_at: {x2: 0.5s}
"""


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("configs")
    confdir, hosts = tmp / "systems", tmp / "hostfiles"
    confdir.mkdir()
    for name, what, up in (("t-full", "full bisection", 4), ("t-taper", "2:1 tapered", 2)):
        (confdir / f"{name}.yaml").write_text(SYSTEM.format(name=name, what=what, up=up))
    study = tmp / "mini-configs.yaml"
    study.write_text(STUDY)
    env = env_for(tmp, campaign="cfg", T2HX_CONF_SYSTEMS=str(confdir),
                  T2HX_HOSTFILES=str(hosts), T2HX_STUDY=str(study))
    for name in ("t-full", "t-taper"):
        made = subprocess.run([T2HX, "hostfiles", "--system", str(confdir / f"{name}.yaml"),
                               "--out", str(hosts)], env=env, capture_output=True, text=True,
                              timeout=300, cwd=ROOT)
        assert made.returncode == 0, made.stderr
    ran = subprocess.run([T2HX, "campaign", "run", "--study", str(study), "--campaign", "cfg"],
                         env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    return tmp, env, study


def test_the_campaign_runs_every_case_on_its_own_system(campaign):
    tmp, env, study = campaign
    results = ingest(tmp / "log" / "cfg").results
    apps = results[results["benchmark"].isin(["swfft", "minife"])]
    # 2 apps x 6 combos x 2 node counts; each combo on the partition of its system.
    assert len(apps.groupby(["benchmark", "combo", "nodes"])) == 24
    for combo, system in (("full-comm", "t-full"), ("taper-x10", "t-taper")):
        parts = set(results[results["combo"] == combo]["partition"])
        assert parts == {f"{system}-fattree"}
    # IMB runs only on the combos its `combos:` lists.
    assert set(results[results["benchmark"] == "imb-alltoall"]["combo"]) == \
        {"full-comm", "taper-comm"}
    t = apps[(apps["benchmark"] == "swfft") & (apps["nodes"] == 16)].set_index("combo")["value"]
    # Compute scaled 10x adds compute to communication only: slower than comm-only.
    assert t["full-x10"] > t["full-comm"] > 0
    # Tapering halves the leaves' uplinks: SWFFT's all-to-all lines cross them.
    assert t["taper-comm"] > t["full-comm"]


def test_workload_records_every_job_in_the_mix_and_alone(campaign):
    tmp, env, study = campaign
    outs = sorted((tmp / "log" / "cfg" / "workloads").rglob("workload.out"))
    assert len(outs) == 4                      # two configurations x two scales x 1 workload
    for out in outs:
        # each case at its combo's compute scale, with the window the study gives that scale
        head = out.read_text().splitlines()[0]
        scale = "2" if out.parent.name.endswith("-x2_w0") else "10"
        assert f"compute_scale={scale} " in head
        assert f"window={'0.5' if scale == '2' else '0.2'} " in head
        lines = [ln for ln in out.read_text().splitlines() if ln.startswith("T2HX workload job")]
        assert len(lines) == 2
        for line in lines:
            fields = dict(kv.split("=") for kv in line.split()[2:])
            assert int(fields["steps"]) >= 1
            # Sharing the fabric never makes a job faster than alone on the same nodes.
            assert float(fields["step_s"]) >= float(fields["alone_step_s"]) * (1 - 1e-9)
    results = ingest(tmp / "log" / "cfg").results
    jobs = scorecard.workload_jobs(results[results["benchmark"] == "workload"])
    assert len(jobs) == 8 and (jobs["mix"] >= jobs["alone"] * (1 - 1e-9)).all()


def test_replay_draws_the_configs_figures_and_scores_workload_claims(campaign):
    tmp, env, study = campaign
    out = tmp / "paper"
    ran = subprocess.run([T2HX, "replay", str(tmp / "log" / "cfg"), "--out", str(out)],
                         env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr[-3000:]
    for name in ("configs-gain-comm", "configs-spread", "configs-scaling-x10",
                 "configs-workload-gain", "configs-workload-slowdown", "configs-throughput",
                 "configs-workload-gain-x2", "configs-workload-slowdown-x2",
                 "configs-throughput-x2"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 1000, name
    assert (out / "figures" / "configs-cost.dat").is_file()
    report = (out / "report.md").read_text()
    assert "seed 003" in report and "configs-throughput" in report
    gain = pd.read_csv(out / "figures" / "configs-gain-comm.dat", sep="\t", comment="#")
    assert (gain["FULL"] == 0).all()                        # the baseline against itself
    results = ingest(tmp / "log" / "cfg").results
    claims = [{"id": "x", "source": "test", "statement": "s", "published": {"sign": 1},
               "compute": {"kind": kind, "benchmark": "workload",
                           "subject": {"combo": "full-x10"}, "base": {"combo": "taper-x10"}}}
              for kind in ("interference", "throughput")]
    verdicts = scorecard.score(results, claims, {"dead_band": 0.0})
    assert [v.verdict for v in verdicts] != ["not run", "not run"]
    # Throughput is normalised by each job's best configuration: the full tree's total is
    # the larger, so the tapered one's gain over it is negative.
    back = scorecard.compute(results, {**claims[1], "compute": {
        **claims[1]["compute"], "subject": {"combo": "taper-x10"},
        "base": {"combo": "full-x10"}}}, {})
    fwd = scorecard.compute(results, claims[1], {})
    assert fwd.value >= 0 >= back.value
    # A list of subjects is their union, not every workload (the 2x ones included).
    for claim in claims:
        one = scorecard.compute(results, {**claim, "compute": {
            **claim["compute"], "subject": [{"combo": "full-x10"}]}}, {})
        assert one.value == scorecard.compute(results, claim, {}).value


def test_random_clusters_give_disjoint_whole_clusters_spread_over_the_machine():
    rng = np.random.default_rng(3)
    sets = random_clusters(64, 3, 8, 4, rng)
    flat = np.concatenate(sets)
    assert len(flat) == len(set(flat)) == 24
    for s in sets:
        starts = s.reshape(-1, 4)[:, 0]
        assert (starts % 4 == 0).all()
        assert (s.reshape(-1, 4) - starts[:, None] == np.arange(4)).all()
    # Same seed, same workload: the draw depends on the seed only.
    again = random_clusters(64, 3, 8, 4, np.random.default_rng(3))
    assert all((a == b).all() for a, b in zip(sets, again))
    with pytest.raises(PlacementError, match="whole clusters"):
        random_clusters(64, 3, 6, 4, rng)
    with pytest.raises(PlacementError, match="usable nodes"):
        random_clusters(16, 3, 8, 4, rng)
    assert set(assign_apps(["a", "b"], 50, np.random.default_rng(0))) == {"a", "b"}


def test_the_sc17_workloads_run_at_2x_and_10x_with_a_window_each():
    from t2hx.study import workload_window

    for profile, at2, at10 in (("full", 50.0, 10.0), ("quick", 10.0, 2.0)):
        spec = load_study("fattree-configs-sc17", profile).workloads
        assert spec is not None and spec["compute_scale"] is None
        scales = {load_study("fattree-configs-sc17").combo(c).compute_scale
                  for c in spec["combos"]}
        assert scales == {2, 10}
        assert (workload_window(spec, 2), workload_window(spec, 10.0)) == (at2, at10)


def test_sc17_study_loads_and_names_its_systems():
    full = load_study("fattree-configs-sc17")
    quick = load_study("fattree-configs-sc17", "quick")
    assert len(full.systems()) == 6 and full.figures == "configs"
    assert {c.compute_scale for c in full.combos} == {0, 1, 2, 10, 25, 50}
    assert set(c.name for c in quick.combos) < set(c.name for c in full.combos)
    combo = full.combo("dr-hdr-x10")
    assert combo.partition == "+sim %plane=fattree +routing_ftree %conf_system=sc17-dr-hdr"
    assert full.combo("sr-edr-x1").partition == \
        "%plane=fattree +routing_ftree %conf_system=sc17-sr-edr"
    assert not full.runs_on("imb", "sr-edr-x10") and full.runs_on("amg", "sr-edr-x10")
    # `--system sim` simulates a study's own systems: these six here, t2hx for seed 000's
    # (whose combos name none).
    assert full.own_systems() == list(dict.fromkeys(["sc17-sr-edr", *full.systems()]))
    assert load_study().systems() == [] and load_study().own_systems() == ["t2hx"]


@pytest.mark.parametrize("old,new,field", [
    ("  combos: [full-x10, taper-x10, full-x2, taper-x2]", "  combos: [nope]",
     "workloads.combos"),
    ("  apps: [swfft]", "  apps: [nope]", "workloads.apps"),
    # a stated compute_scale must be every listed combo's (each case runs at its combo's)
    ("  window: 0.2s\n", "  window: 0.2s\n  compute_scale: 10\n", "workloads.compute_scale"),
    ("  window_at: {x2: 0.5s}", "  window_at: {2: 0.5s}", "workloads.window_at"),
    ("  window_at: {x2: 0.5s}", "  window_at: {x2: soon}", "workloads.window_at.x2"),
    ("  cluster: 2", "  cluster: 3", "workloads.cluster"),
    ("    combos: [full-comm, taper-comm]", "    combos: [nope]", "benchmarks.imb.combos"),
])
def test_bad_configs_study_names_field(tmp_path, old, new, field):
    path = tmp_path / "s.yaml"
    assert old in STUDY
    path.write_text(STUDY.replace(old, new))
    with pytest.raises(ConfError) as err:
        load_study(path)
    assert field in str(err.value)
