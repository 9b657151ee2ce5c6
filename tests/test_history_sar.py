"""SAR for job-history replays without OpenSM (#46 item 5): OpenSM routes the day's first job
set with our plugin and writes its switch graph (px_snapshot=); parx/px-sar routes every
later set on that graph with the plugin's own code. Its forwarding tables must be byte for
byte those of today's path, the same OpenSM re-routed by SIGHUP, on sampled job sets of a
fat-tree and of a HyperX (where the VL layering is exercised too)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from t2hx.conf import load_system, system_path
from t2hx.errors import RoutingError
from t2hx.history.pxsar import BINARY, MAGIC, read_lfts
from t2hx.history.sample_routing import Router

MINI = load_system(system_path("mini"))
HOSTS = MINI.hostnames()


def job_sets(seed: int, count: int) -> list[list[tuple[str, ...]]]:
    """``count`` samples of running jobs: 1-4 jobs of 2-16 nodes each, no node in two jobs;
    every third sample revisits an earlier one, as a history does."""
    rng = random.Random(seed)
    out: list[list[tuple[str, ...]]] = []
    for k in range(count):
        if k % 3 == 2:
            out.append(out[rng.randrange(len(out))])
            continue
        free = rng.sample(HOSTS, len(HOSTS))
        jobs = []
        for _ in range(rng.randint(1, 4)):
            n = rng.randint(2, 16)
            jobs.append(tuple(sorted(free[:n])))
            free = free[n:]
        out.append(jobs)
    return out


@pytest.mark.parametrize("plane", ["fattree", "hyperx"])
def test_px_sar_tables_equal_sighup_reroutes_on_sampled_job_sets(plane: str,
                                                                 tmp_path: Path) -> None:
    sets = job_sets(seed=4 if plane == "fattree" else 5, count=9)
    got: dict[str, list[np.ndarray]] = {}
    # opensm: today's SIGHUP path; px-sar: OpenSM routes the first set and keeps the graph,
    # px-sar the rest; next day: a new Router on the same work routes every set with px-sar
    for how, work, sar_with in (("opensm", "a", "opensm"), ("px-sar", "b", "px-sar"),
                                ("next day", "b", "px-sar")):
        with Router(MINI, plane, tmp_path / work, sar_with=sar_with) as router:
            got[how] = [router.sar(jobs).tables.lft.copy() for jobs in sets]
            assert (router.pxsar is not None) == (sar_with == "px-sar")
            assert router.session is None or sar_with == "opensm"
    assert len(list((tmp_path / "b" / "history-sar").glob("opensm-*"))) == 1
    assert len(list((tmp_path / "b" / "history-sar").glob("graph-*"))) == 1
    assert not list((tmp_path / "b" / "history-sar").glob("px-sar-*"))      # removed
    distinct = {a.tobytes() for a in got["opensm"]}
    assert len(distinct) >= 4                 # the job sets do change SAR's routes
    for how in ("px-sar", "next day"):
        for k, (a, b) in enumerate(zip(got["opensm"], got[how])):
            assert a.dtype == b.dtype and np.array_equal(a, b), f"{how}: job set {k}"


def test_px_sar_refuses_what_it_cannot_route(tmp_path: Path) -> None:
    with Router(MINI, "fattree", tmp_path, sar_with="px-sar") as router:
        router.sar([tuple(HOSTS[:8]), tuple(HOSTS[8:20])])
        px = router.pxsar
        assert px is not None
        snapshot = next(tmp_path.rglob("px-snapshot"))
        # tables it cannot write: one line naming why, and the process serves on
        (px.dir / "lfts.px").unlink(missing_ok=True)
        (px.dir / "lfts.px").mkdir()
        with pytest.raises(RoutingError, match="px-sar: cannot write .*lfts.px"):
            px.route(f"{HOSTS[0]} 1\n{HOSTS[40]} 1\n")
        (px.dir / "lfts.px").rmdir()
        assert px.route(f"{HOSTS[0]} 1\n{HOSTS[40]} 1\n").lft.shape == px.tables.lft.shape
    # the serving protocol: a job file it cannot open is an error line, not an exit
    serve = subprocess.run([str(BINARY), str(snapshot)], capture_output=True, text=True,
                           input=f"{tmp_path}/none.txt {tmp_path}/o1\nnot-two-words\n",
                           timeout=60)
    assert serve.returncode == 0
    assert serve.stdout.splitlines() == [
        f"error sar could not route {tmp_path}/none.txt (see the messages above)",
        "error expected 'JOBS OUT [SL]', got: not-two-words"]
    assert "ERR FA21: cannot open" in serve.stderr
    # a damaged snapshot: px-sar says where, exit status 2
    bad = tmp_path / "bad-snapshot"
    bad.write_text("".join(snapshot.read_text().splitlines(keepends=True)[:40]))
    run = subprocess.run([str(BINARY), str(bad), str(tmp_path / "j"), str(tmp_path / "o")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and f"{bad}:41: truncated" in run.stderr


def test_read_lfts_checks_the_file_against_the_fabric(tmp_path: Path) -> None:
    with Router(MINI, "fattree", tmp_path, sar_with="px-sar") as router:
        router.sar([tuple(HOSTS[:8]), tuple(HOSTS[8:20])])          # OpenSM: the graph
        tables = router.sar([tuple(HOSTS[:12]), tuple(HOSTS[30:40])]).tables   # px-sar
        lfts = router.pxsar.dir / "lfts.px" if router.pxsar else None
        assert lfts is not None and lfts.read_bytes().startswith(MAGIC)
        assert np.array_equal(read_lfts(lfts, tables), tables.lft)
        data = lfts.read_bytes()
        lfts.write_bytes(data[:-1])
        with pytest.raises(RoutingError, match="switches and max LID"):
            read_lfts(lfts, tables)
        lfts.write_bytes(b"px-lft 2" + data[8:])
        with pytest.raises(RoutingError, match="not a px-lft 1 file"):
            read_lfts(lfts, tables)


def test_px_sar_layers_are_the_plugins_path_sls(tmp_path: Path) -> None:
    """px-sar's layer output (SL argument) against what the plugin inside OpenSM dumped for
    the same job set (parx-path-sl.dump): every (switch, destination LID) on mini's HyperX,
    where SAR needs more than one layer."""
    from t2hx.history.pxsar import read_layers
    from t2hx.routing.sarjobs import job_file_text

    jobs = job_sets(seed=5, count=1)[0]
    with Router(MINI, "hyperx", tmp_path, sar_with="px-sar") as router:
        first = router.sar(jobs).tables                  # OpenSM with the plugin
        assert router.pxsar is not None
        tables, layers = router.pxsar.route_with_layers(job_file_text(jobs))
    assert np.array_equal(tables.lft, first.lft)
    dump = next(tmp_path.rglob("parx-path-sl.dump")).read_text().splitlines()[1:]
    index = {n.guid: i for i, n in enumerate(tables.fabric.nodes) if n.kind == "switch"}
    theirs = np.full_like(layers, 255)
    for line in dump:
        guid, lid, sl = line.split()
        theirs[index[int(guid, 16)], int(lid, 16)] = int(sl)
    assert len(dump) > 0 and int(theirs[theirs != 255].max()) >= 1
    assert np.array_equal(layers, theirs)
    # a layer file of another fabric is refused with the file named
    other = tmp_path / "other.px"
    other.write_bytes(b"px-sl 1 3 2 1\n" + bytes(2 * 8 + 3 * 4))
    with pytest.raises(RoutingError, match="other.px: 2 switch GUIDs not in fabric"):
        read_layers(other, tables)
