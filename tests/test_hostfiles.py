"""``t2hx hostfiles``: files per ladder count, manifests, reproducibility, down nodes, errors."""

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.study import hostfile_name, load_study

MINI = ROOT / "conf/systems/mini.yaml"
MINI_NODES = len(load_system(MINI).hostnames())
# Every rung of the study's ladders that fits mini (hostfiles follow the study's ladders).
MINI_COUNTS = sorted({n for ladder in load_study(ROOT / "conf/studies/hyperx-vs-fattree-sc19.yaml").ladders.values()
                      for n in ladder if n <= MINI_NODES})


def run(*args: str) -> int:
    return main(["-q", "hostfiles", *args])


def read(path: Path) -> list[str]:
    return path.read_text().splitlines()


def draw_names(manifest: dict, n: int) -> list[str]:
    """``<n>.txt`` and, for a count with mapping draws, ``<n>.r<k>.txt``."""
    draws = manifest.get("draws", {}).get(str(n), {"count": 1})["count"]
    return [hostfile_name(n, k) for k in range(draws)]


def check_dir(d: Path, counts: list[int], usable: set[str]) -> dict:
    manifest = json.loads((d / "manifest.json").read_text())
    assert manifest["counts"] == counts
    names = {n: draw_names(manifest, n) for n in counts}
    assert sorted(p.name for p in d.glob("*.txt")) == sorted(x for n in counts for x in names[n])
    for n in counts:
        for name in names[n]:
            f = d / name
            lines = read(f)
            assert len(lines) == n == len(set(lines))          # no node twice
            assert set(lines) <= usable
            assert manifest["files"][f.name] == hashlib.sha256(f.read_bytes()).hexdigest()
    return manifest


def test_study_placements_for_every_ladder_count(tmp_path):
    assert run("--system", str(MINI), "--out", str(tmp_path)) == 0
    system = load_system(MINI)
    names = system.hostnames()
    for placement in ("linear", "clustered", "random"):
        m = check_dir(tmp_path / "mini" / placement, MINI_COUNTS, set(names))
        assert m["system_sha256"] == system.sha256 and m["seed"] == 2019
    for n in MINI_COUNTS:
        assert read(tmp_path / f"mini/linear/{n}.txt") == names[:n]
    assert read(tmp_path / "mini/random/64.txt") != names


def test_regeneration_is_byte_identical(tmp_path):
    for out in ("a", "b"):
        assert run("--system", str(MINI), "--out", str(tmp_path / out)) == 0
    for f in sorted((tmp_path / "a").rglob("*")):
        if f.is_file():
            assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()


def test_committed_t2hx_hostfiles_are_current(tmp_path):
    assert run("--system", "t2hx", "--out", str(tmp_path)) == 0
    for placement in ("linear", "clustered", "random"):
        fresh = tmp_path / "t2hx" / placement
        kept = ROOT / "hostfiles" / "t2hx" / placement
        assert sorted(p.name for p in kept.iterdir()) == sorted(p.name for p in fresh.iterdir())
        for f in fresh.iterdir():
            assert f.read_bytes() == (kept / f.name).read_bytes(), f"{placement}/{f.name}"


def test_committed_t2hx_hostfiles_match_their_manifests():
    system = load_system(ROOT / "conf/systems/t2hx.yaml")
    names = system.hostnames()
    for d in sorted((ROOT / "hostfiles/t2hx").iterdir()):
        if d.is_dir():
            m = check_dir(d, json.loads((d / "manifest.json").read_text())["counts"], set(names))
            assert m["system_sha256"] == system.sha256, f"{d.name}: regenerate after conf edits"
    two_opt = ROOT / "hostfiles/t2hx/two-opt"
    for n in json.loads((two_opt / "manifest.json").read_text())["counts"]:
        assert sorted(read(two_opt / f"{n}.txt")) == names[:n]   # two-opt keeps linear's nodes


@pytest.mark.parametrize("system_dir", sorted(p for p in (ROOT / "hostfiles").iterdir()
                                               if p.is_dir()), ids=lambda p: p.name)
def test_every_committed_hostfile_set_matches_its_manifest_and_conf(system_dir):
    """Every system's committed sets: files as the manifest lists them, made from the conf
    as it is now; a refined placement keeps its base placement's nodes."""
    from t2hx.study import split_placement

    system = load_system(ROOT / "conf" / "systems" / f"{system_dir.name}.yaml")
    for d in sorted(p for p in system_dir.iterdir() if p.is_dir()):
        m = check_dir(d, json.loads((d / "manifest.json").read_text())["counts"],
                      set(system.hostnames()))
        assert m["system_sha256"] == system.sha256, f"{d.name}: regenerate after conf edits"
        base, refine = split_placement(d.name)
        if refine is not None and (system_dir / base).is_dir():
            for n in m["counts"]:
                for name in draw_names(m, n):     # draw k refines the base's draw k
                    assert sorted(read(d / name)) == sorted(read(system_dir / base / name))


def down_system(tmp_path: Path, down: list[str]) -> Path:
    text = MINI.read_text().replace("down: []", f"down: {json.dumps(down)}")
    path = tmp_path / "mini-down.yaml"
    path.write_text(text)
    return path


def test_down_nodes_are_never_used(tmp_path):
    down = ["m1n01", "m2n05", "m4n16"]
    conf = down_system(tmp_path, down)
    assert run("--system", str(conf), "--out", str(tmp_path / "out")) == 0
    usable = set(load_system(conf).hostnames()) - set(down)
    # The rungs that fit, and every usable node (61: no rung) for the capacity mix.
    counts = [n for n in MINI_COUNTS if n <= len(usable)] + [len(usable)]
    for placement in ("linear", "clustered", "random"):
        m = check_dir(tmp_path / "out/mini" / placement, counts, usable)
        assert m["usable_nodes"] == len(usable) and m["down"] == down


def test_every_usable_node_has_a_hostfile_for_capacity(tmp_path, monkeypatch):
    """The study has a capacity mix: each placement also lists every usable node, in that
    placement's order, and each rung's nodes are its prefix, so the capacity check's node
    sets (cut from it) follow the combo's placement on any system size."""
    down = ["m1n03", "m3n10"]
    conf = down_system(tmp_path, down)
    assert run("--system", str(conf), "--out", str(tmp_path / "out")) == 0
    usable = len(load_system(conf).hostnames()) - len(down)
    assert usable not in MINI_COUNTS
    for placement in ("linear", "clustered", "random"):
        every = read(tmp_path / "out/mini" / placement / f"{usable}.txt")
        assert len(set(every)) == usable and not set(every) & set(down)
        for n in [n for n in MINI_COUNTS if n <= usable]:
            assert read(tmp_path / "out/mini" / placement / f"{n}.txt") == every[:n]
    # A study without a capacity mix (seed 003's kind) keeps the ladder rungs only.
    text = (ROOT / "conf/studies/hyperx-vs-fattree-sc19.yaml").read_text()
    study = tmp_path / "no-capacity.yaml"
    study.write_text(re.sub(r"(?ms)^capacity:.*?(?=^# On the `local`)", "", text))
    monkeypatch.setenv("T2HX_STUDY", str(study))
    assert not load_study().capacity["apps"]
    assert run("--system", str(conf), "--out", str(tmp_path / "plain"), "--placements",
               "linear") == 0
    check_dir(tmp_path / "plain/mini/linear", [n for n in MINI_COUNTS if n <= usable],
              set(load_system(conf).hostnames()) - set(down))


def test_stale_files_go_when_counts_change(tmp_path):
    assert run("--system", str(MINI), "--out", str(tmp_path), "--counts", "3,5") == 0
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements", "linear") == 0
    check_dir(tmp_path / "mini/linear", MINI_COUNTS, set(load_system(MINI).hostnames()))
    assert not list((tmp_path / "mini").glob(".*"))        # no temp dirs left behind


def test_explicit_node_list(tmp_path):
    nodes = tmp_path / "alloc.txt"
    nodes.write_text("m2n01\nm1n03\nm3n07\nm1n04\n")
    assert run("--system", str(MINI), "--out", str(tmp_path), "--nodes", f"@{nodes}",
               "--placements", "linear") == 0
    assert read(tmp_path / "mini/linear/4.txt") == ["m1n03", "m1n04", "m2n01", "m3n07"]


@pytest.mark.parametrize("args, words", [
    (["--placements", "linear,snake"], ["unknown placement 'snake'", "fix:"]),
    (["--counts", "65"], ["65 nodes requested but only 64 usable", "fix:"]),
    (["--counts", "x"], ["--counts", "fix:"]),
    (["--nodes", "m1n01,m9n99"], ["'m9n99' is not a host", "fix:"]),
])
def test_errors_are_one_line(tmp_path, capsys, args, words):
    assert run("--system", str(MINI), "--out", str(tmp_path), *args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    for w in words:
        assert w in err
    assert not (tmp_path / "mini").exists() or not list((tmp_path / "mini").rglob("*.txt"))


def test_down_node_in_node_list_is_refused(tmp_path, capsys):
    conf = down_system(tmp_path, ["m1n02"])
    assert run("--system", str(conf), "--out", str(tmp_path), "--nodes", "m1n01,m1n02") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'m1n02' is marked down" in err
    assert "nodes.down" in err and "mini-down.yaml" in err


def test_two_opt_and_hierarchical_hostfiles(tmp_path):
    args = ["--system", str(MINI), "--placements", "two-opt,hierarchical", "--counts", "16,32",
            "--iterations", "2000", "--collective", "alltoall"]
    assert run(*args, "--out", str(tmp_path / "a")) == 0
    assert run(*args, "--out", str(tmp_path / "b")) == 0
    names = load_system(MINI).hostnames()
    for placement in ("two-opt", "hierarchical"):
        d = tmp_path / "a/mini" / placement
        check_dir(d, [16, 32], set(names))
        for f in d.iterdir():
            assert f.read_bytes() == (tmp_path / "b/mini" / placement / f.name).read_bytes()
    two = read(tmp_path / "a/mini/two-opt/32.txt")
    # linear's nodes, re-ordered (on mini, linear is already a local optimum for allreduce)
    assert sorted(two) == names[:32] and two != names[:32]
    m = json.loads((tmp_path / "a/mini/two-opt/manifest.json").read_text())
    assert m["params"]["engine"] == "dfsssp" and m["params"]["plane"] == "hyperx"
    assert m["params"]["objective"] == "total switch hops"


def test_two_opt_contention_hostfiles(tmp_path):
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements", "two-opt",
               "--counts", "32", "--iterations", "500", "--collective", "alltoall",
               "--objective", "contention") == 0
    names = load_system(MINI).hostnames()
    two = read(tmp_path / "mini/two-opt/32.txt")
    assert sorted(two) == names[:32] and two != names[:32]
    m = json.loads((tmp_path / "mini/two-opt/manifest.json").read_text())
    assert m["params"]["objective"].startswith("message pairs")


def test_refined_placements_keep_the_base_nodes_and_lower_the_hops(tmp_path):
    """``<base>+two-opt-<objective>-<collective>`` (seed 001 §3.3.2): the base placement's
    own draw of nodes, ranks re-placed so the collective's total hops drop."""
    import numpy as np

    from t2hx.fabric.build import build_plane
    from t2hx.placement.collective_messages import messages
    from t2hx.placement.costs import graph_hops
    from t2hx.placement.twoopt import HopObjective

    refined = "random+two-opt-hops-allreduce"
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements",
               f"random,{refined}", "--counts", "32", "--iterations", "2000") == 0
    base, two = read(tmp_path / "mini/random/32.txt"), read(tmp_path / f"mini/{refined}/32.txt")
    assert sorted(two) == sorted(base) and two != base
    fabric = build_plane(load_system(MINI), "hyperx")
    pos = {fabric.nodes[h].name: k for k, h in enumerate(fabric.hcas())}
    hops = HopObjective(graph_hops(fabric), messages("allreduce", 32))
    assert hops.total(np.array([pos[h] for h in two])) < \
        hops.total(np.array([pos[h] for h in base]))
    m = json.loads((tmp_path / f"mini/{refined}/manifest.json").read_text())
    assert (m["params"]["start"], m["params"]["collective"]) == ("random", "allreduce")
    assert m["params"]["iterations"] == 2000 and m["params"]["objective"] == "total switch hops"


def test_iterations_at_gives_one_node_count_other_trials(tmp_path):
    """Seed 001 runs two-opt 20,000 times for 128 ranks and 200,000 for 512: --iterations-at
    sets one count's trials, the manifest records both, and zero trials keep the base order."""
    refined = "random+two-opt-hops-allreduce"
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements",
               f"random,{refined}", "--counts", "16,32", "--iterations", "2000",
               "--iterations-at", "16=0") == 0
    m = json.loads((tmp_path / f"mini/{refined}/manifest.json").read_text())
    assert m["params"]["iterations"] == 2000
    assert m["params"]["iterations_by_count"] == {"16": 0, "32": 2000}
    assert read(tmp_path / f"mini/{refined}/16.txt") == read(tmp_path / "mini/random/16.txt")
    assert read(tmp_path / f"mini/{refined}/32.txt") != read(tmp_path / "mini/random/32.txt")


def test_mapping_draws_are_independent_and_paired_with_their_refinement(tmp_path):
    """Seed 001's box plots run one case per mapping draw: draw 0 is the hostfile the
    placement always had, draws 1..K-1 come from their own seeds (recorded), and two-opt's
    draw k re-places the nodes of the base placement's draw k."""
    refined = "random+two-opt-hops-allreduce"
    common = ["--system", str(MINI), "--placements", f"random,{refined}", "--counts", "16,32",
              "--iterations", "500"]
    assert run(*common, "--out", str(tmp_path / "one")) == 0
    assert run(*common, "--out", str(tmp_path / "three"), "--draws", "3") == 0
    one, three = tmp_path / "one/mini", tmp_path / "three/mini"
    usable = set(load_system(MINI).hostnames())
    m = check_dir(three / "random", [16, 32], usable)
    assert sorted(p.name for p in (three / "random").glob("16*")) == \
        ["16.r1.txt", "16.r2.txt", "16.txt"]
    seeds = m["draws"]["16"]["seeds"]
    assert seeds[0] == 2019 and len(set(seeds)) == 3 and m["draws"]["32"]["count"] == 3
    assert "draws" not in json.loads((one / "random/manifest.json").read_text())
    for placement in ("random", refined):
        check_dir(three / placement, [16, 32], usable)
        assert read(three / placement / "16.txt") == read(one / placement / "16.txt")
    draws = [read(three / "random" / hostfile_name(16, k)) for k in range(3)]
    assert len({tuple(d) for d in draws}) == 3
    for k in range(3):
        mine = read(three / refined / hostfile_name(32, k))
        assert sorted(mine) == sorted(read(three / "random" / hostfile_name(32, k)))


def test_the_study_asks_for_draws_where_its_benchmarks_run_them():
    """Without --draws a placement gets the draws of the benchmarks that run on it at that
    node count (seed 001's NPB at 128 ranks), and one hostfile elsewhere."""
    study = load_study(ROOT / "conf/studies/shortcut-topologies-thesis.yaml", profile="full")
    npb = study.catalog["npb-ft"]["draws"]
    assert npb > 1 and study.runs_of("npb-ft") == npb and study.runs_of("imb") == 1
    assert study.draws_at("thesis-rsn1024", "random+two-opt-hops-alltoall", 128) == npb
    assert study.draws_at("thesis-rsn1024", "random+two-opt-hops-bcast", 128) == 1
    assert study.draws_at("thesis-rsn1024", "random", 512) == 1
    assert study.draws_at("thesis-rsn1024", "circulant", 128) == 1      # a circ-only combo


@pytest.mark.parametrize("value", ["128", "128=x", "0=5", "16=-1", ""])
def test_a_bad_iterations_at_is_one_line(tmp_path, capsys, value):
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements",
               "random+two-opt-hops-bcast", "--iterations-at", value) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--iterations-at" in err and "N=TRIALS" in err
    assert not (tmp_path / "mini").exists()


@pytest.mark.parametrize("name", ["random+two-opt-hops", "two-opt+two-opt-hops-bcast",
                                  "random+two-opt-speed-bcast", "snake+two-opt-hops-bcast",
                                  "two-opt+cco", "random+cco-bcast"])
def test_a_malformed_refined_placement_is_one_line(tmp_path, capsys, name):
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements", name) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"unknown placement '{name}'" in err
    assert "<base>+two-opt-<objective>-<collective>" in err


def test_open_mpi_puts_rank_i_on_line_i(tmp_path):
    """Real mpirun (Open MPI 4.1) maps a generated random hostfile without launching."""
    assert run("--system", str(MINI), "--out", str(tmp_path), "--placements", "random",
               "--counts", "8") == 0
    hostfile = tmp_path / "mini/random/8.txt"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_plm_rsh_agent="false")
    out = subprocess.run(["mpirun", "--hostfile", str(hostfile), "-np", "8", "--map-by", "node",
                          "--bind-to", "none", "--display-map", "--do-not-launch", "true"],
                         capture_output=True, text=True, timeout=120, env=env)
    text = out.stdout + out.stderr
    mapped = re.findall(r"Data for node: (\S+).*?\n\s*Process OMPI jobid: \S+ App: 0 "
                        r"Process rank: (\d+)", text)
    assert [host for host, _rank in mapped] == read(hostfile), text[-2000:]
    assert [int(rank) for _host, rank in mapped] == list(range(8))


def test_default_placements_are_those_of_the_systems_own_combos():
    """A study over several systems (seed 001's three networks) makes, by default, only the
    placements each system's combos use, and the committed sets are exactly those."""
    study = load_study("shortcut-topologies-thesis")
    assert study.placements("thesis-df1024") == ["random", "ring"]
    assert study.placements("thesis-circ1024")[:4] == ["random", "hierarchical", "ring",
                                                       "circulant"]
    assert "ring+cco" not in study.placements("thesis-circ1024")   # §4.5.2: random, hierarchical
    assert "circulant" not in study.placements("thesis-rsn1024")
    assert set(study.placements()) == {p for s in ("thesis-rsn1024", "thesis-circ1024",
                                                   "thesis-df1024") for p in study.placements(s)}
    for system in ("thesis-rsn1024", "thesis-circ1024", "thesis-df1024"):
        committed = {d.name for d in (ROOT / "hostfiles" / system).iterdir() if d.is_dir()}
        assert committed == set(study.placements(system)), system


def test_the_committed_seed_001_runs_used_one_draw_per_repetition():
    """log/shortcut-npb (its runs packed or not): every NPB run k used its placement's draw k
    (``128.r<k>.txt``, draw 0 ``128.txt``), as t2hx/checks/base.py picks it; every other
    benchmark kept one hostfile; every draw of every NPB case ran."""
    from t2hx.post import archive

    log = ROOT / "log" / "shortcut-npb"
    study = load_study("shortcut-topologies-thesis", profile="quick")
    want = sum(study.draws(b) * sum(study.runs_on(b, c.name) for c in study.combos)
               for b in study.benchmarks if b.startswith("npb-"))
    npb = 0
    with archive.folder(log, "runs") as root:
        for path in sorted((root / "runs").rglob("t2hx-run.json")):
            meta = json.loads(path.read_text())
            if not meta.get("hostfile"):
                continue
            name = Path(meta["hostfile"]).name
            rep = int(meta["repetition"])
            if str(meta["benchmark"]).startswith("npb-"):
                npb += 1
                assert name == hostfile_name(128, rep), (path, name)
            else:
                assert re.fullmatch(r"\d+\.txt", name), (path, name)
    assert npb == want == 8800      # 22 NPB combos (10 of them floyd twins) x 100 draws x 4
