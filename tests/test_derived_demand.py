"""PARX routed with each job's demand (seed 000 §3.2.2–3.2.3): a recorded profile where one
exists at the job's rank count, else a demand derived from the benchmark's own pattern
(t2hx/traffic.py), said per job in the demand note, the run's metadata and the report
(docs/routing.md#derived-demand)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from t2hx.conf import load_system
from t2hx.traffic import derived_traffic
from t2hx.routing import demand as dm
from t2hx.routing.reroute import (DEMAND_KEY, DERIVED, RECORDED, JobSpec, demand_meta,
                                  demand_note, job_input, reroute_for_jobs)
from tests.conftest import MINI, ROOT

PROFILES = ROOT / "conf" / "profiles"


def _hosts(tmp_path: Path, n: int) -> Path:
    path = tmp_path / f"job{n}.hosts"
    path.write_text("".join(f"m1n{i:02d}\n" for i in range(1, n + 1)))
    return path


def test_a_job_without_a_profile_is_routed_with_its_derived_demand(tmp_path, monkeypatch):
    """No profile at 4 ranks: the demand file holds mpiGraph's all-pairs pattern, the note
    and the run's metadata say it is derived, and the routing runs once for two cases with
    the same demand (the routing cache), its files linked into each case's directory."""
    monkeypatch.setenv("T2HX_PROFILES", str(tmp_path / "no-profiles"))
    monkeypatch.setenv("T2HX_WORK_ROOT", str(tmp_path / "work"))
    system, hosts = load_system(MINI), _hosts(tmp_path, 4)
    job = JobSpec("job0", "mpigraph", hosts, {"size": 65536, "iters": 5, "window": 5})
    first = tmp_path / "case0" / "routing"
    summary = reroute_for_jobs(system, "hyperx", "parx", [job], out=first, quiet=True,
                               derive=derived_traffic)
    assert summary and summary["engine_used"] == "parx"
    demand = dm.read_demand(first / "demand.txt")
    names = [f"m1n{i:02d}" for i in range(1, 5)]
    assert {(s, d) for s, row in demand.items() for d in row} == \
        {(s, d) for s in names for d in names if s != d}
    assert demand_meta(first) == {DEMAND_KEY: DERIVED}
    note = json.loads(demand_note(first).read_text())["jobs"][0]
    assert note["source"] == DERIVED and "mpigraph's pattern at 4 ranks" in note["origin"]
    dumps = first / "opensm-lfts.dump"
    assert dumps.is_symlink() and dumps.resolve().is_file()
    entry = dumps.resolve().parent
    stamp = (entry / "opensm-run.json").stat().st_mtime_ns
    second = tmp_path / "case1" / "routing"
    reroute_for_jobs(system, "hyperx", "parx", [job], out=second, quiet=True,
                     derive=derived_traffic)
    assert (second / "opensm-lfts.dump").resolve().parent == entry
    assert (entry / "opensm-run.json").stat().st_mtime_ns == stamp     # not routed again


def test_a_recorded_profile_wins_over_the_derivation(tmp_path, monkeypatch):
    """A profile at the job's rank count is the demand, even where the pattern differs: a
    recorded ring 0 -> 1 -> 2 -> 0 instead of mpiGraph's all pairs."""
    folder = tmp_path / "profiles" / "mpigraph" / "3"
    folder.mkdir(parents=True)
    for r in range(3):
        (folder / f"rec.{r}.prof").write_text(
            f"# POINT TO POINT\nE\t{r}\t{(r + 1) % 3}\t1000 bytes\t1 msgs sent\t1\n")
    monkeypatch.setenv("T2HX_PROFILES", str(tmp_path / "profiles"))
    hosts = _hosts(tmp_path, 3)
    out = tmp_path / "routing"
    path = job_input(load_system(MINI), "hyperx", "parx", [JobSpec("j", "mpigraph", hosts)], out,
                     derived_traffic)
    assert path is not None
    pairs = {(s, d) for s, row in dm.read_demand(path).items() for d in row}
    assert pairs == {("m1n01", "m1n02"), ("m1n02", "m1n03"), ("m1n03", "m1n01")}
    assert demand_meta(out) == {DEMAND_KEY: RECORDED}
    note = json.loads(demand_note(out).read_text())   # outside the checkout: as given
    assert note["jobs"][0]["origin"].startswith(str(tmp_path))


def test_the_note_names_the_checkouts_profiles_relative_to_it(tmp_path):
    """HPL's recorded profiles live in the checkout: the note says conf/profiles/..., so the
    same campaign run from two clones writes the same note."""
    out = tmp_path / "routing"
    job_input(load_system(MINI), "hyperx", "parx", [JobSpec("j", "hpl", _hosts(tmp_path, 4))],
              out, derived_traffic)
    note = json.loads(demand_note(out).read_text())
    assert note["profiles"] == "conf/profiles"
    assert note["jobs"][0]["source"] == RECORDED
    assert note["jobs"][0]["origin"].startswith("conf/profiles/hpl/4/")


@pytest.mark.parametrize("benchmark, pairs", [
    ("ring-allreduce", lambda n: {(r, (r + 1) % n) for r in range(n)}),
    ("mupp", lambda n: {(a, a ^ 1) for a in range(n - n % 2)}),
    ("imb-alltoall", lambda n: {(s, d) for s in range(n) for d in range(n) if s != d}),
])
def test_each_pattern_talks_to_the_peers_its_program_does(benchmark, pairs):
    for n in (7, 8):
        m = derived_traffic(benchmark, n, {"msglog": "0:10"})
        assert m is not None
        assert {(int(s), int(d)) for s, d in zip(*np.nonzero(m))} == pairs(n)


def test_a_rooted_collective_reaches_every_rank_and_barrier_moves_nothing():
    bcast = derived_traffic("imb-bcast", 28, {"msglog": "0:22"}, "ompi-1.10")
    assert bcast is not None and (bcast.sum(axis=0)[1:] > 0).all() and bcast[:, 0].sum() == 0
    barrier = derived_traffic("imb-barrier", 28, {"msglog": "0:22"})
    assert barrier is not None and not barrier.any()
    assert derived_traffic("imb-nosuch", 28) is None and derived_traffic("nosuch", 28) is None


def _recorded() -> list[tuple[str, int]]:
    return sorted((p.parent.name, int(p.name)) for p in PROFILES.glob("*/*")
                  if p.is_dir() and p.name.isdigit())


@pytest.mark.parametrize("benchmark, ranks", _recorded())
def test_the_derivation_agrees_with_every_recorded_profile_it_overlaps(benchmark, ranks):
    """Where a profile was recorded, the derivation must put its bytes where the program
    did: at least 90 % of the recorded bytes travel between pairs the derivation uses, and
    at least 90 % of the derived bytes between pairs the recording shows."""
    prefix = next(iter(sorted((PROFILES / benchmark / str(ranks)).glob("*.prof"))))
    recorded = dm.read_monitoring(str(prefix).split(".")[0]).astype(float)
    # The recording's own input (its provenance file) under the rules of the MPI that made
    # it (Debian's Open MPI 4.1.4): a collective's algorithm depends on both.
    info = json.loads((PROFILES / benchmark / f"{ranks}.json").read_text())
    derived = derived_traffic(benchmark, ranks, info.get("input"), "ompi-4.1")
    assert derived is not None, f"{benchmark} has a profile but no derivation"
    np.fill_diagonal(recorded, 0.0)
    on_derived = recorded[derived > 0].sum() / recorded.sum()
    on_recorded = derived[recorded > 0].sum() / derived.sum()
    assert on_derived >= 0.9 and on_recorded >= 0.9, (round(on_derived, 3), round(on_recorded, 3))


def test_hpcg_lays_its_ranks_out_as_the_program_does():
    """t2hx.grids.hpcg_grid against HPCG 3.1's own ComputeOptimalShapeXYZ (its output for 30
    rank counts, tests/data/hpcg_shapes.txt), and the halo partners against the recorded
    profile: at 28 ranks (2x7x2) rank 0 talks to x+1, y+1, z+1 and the edges and the corner
    between them."""
    from t2hx.flowsim.appmodel import hpcg_neighbours
    from t2hx.grids import hpcg_grid

    rows = [line.split() for line in (ROOT / "tests" / "data" / "hpcg_shapes.txt")
            .read_text().splitlines() if line and not line.startswith("#")]
    assert len(rows) == 30
    for n, *shape in (map(int, r) for r in rows):
        assert hpcg_grid(n) == tuple(shape), n
    src, dst, span = hpcg_neighbours(28)
    assert sorted(dst[src == 0]) == [1, 2, 3, 14, 15, 16, 17]
    assert sorted(span[src == 0]) == [1, 1, 1, 2, 2, 2, 3]
    prefix = next(iter(sorted((PROFILES / "hpcg" / "28").glob("*.prof"))))
    recorded = dm.read_monitoring(str(prefix).split(".")[0])
    assert set(np.flatnonzero(recorded[0])) == {1, 2, 3, 14, 15, 16, 17}
