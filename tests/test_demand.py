"""Demand pipeline: real pml_monitoring files (tests/data/demand, made by traffic.c) →
rank matrix → node demand (0..255) → parx; validation before OpenSM; run/reroute."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from t2hx import ROOT
from t2hx import modelled_profiles as profiles
from t2hx.routing import demand as dm
from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.fabric.build import build_plane

DATA = ROOT / "tests" / "data" / "demand"
PREFIX = DATA / "traffic"
MINI = ROOT / "conf" / "systems" / "mini.yaml"


def test_monitoring_files_give_the_rank_matrix() -> None:
    m = dm.read_monitoring(PREFIX)
    assert m.shape == (4, 4)
    # ring: rank r sends (r+1)*64 KiB to r+1; rank 0 sends 100 B to all; allreduce 8 B pairs
    assert m[0, 1] == 65536 + 100 + 8 and m[1, 2] == 131072 and m[3, 0] == 262144
    assert m[0, 3] == 100 and m[2, 1] == 0 and (np.diag(m) == 0).all()
    assert m[2, 3] == 196608 + 8


def test_normalise_maps_the_max_to_255_and_the_rest_in_proportion() -> None:
    raw_m = dm.read_monitoring(PREFIX)
    w = dm.normalise(raw_m)
    assert w.max() == 255 and w[3, 0] == 255
    assert w[w > 0].min() == 1 and (w[raw_m == 0] == 0).all()   # 100 B of 262144: still 1
    assert w[1, 2] == round(255 * 131072 / 262144)
    # A near-uniform pattern stays uniform (mpiGraph: 1,638 vs 1,639 kB per pair).
    assert set(dm.normalise(np.array([[0, 1638000], [1639000, 0]])).ravel()) == {0, 255}
    raw = raw_m.ravel()
    order = np.argsort(raw)
    assert (np.diff(w.ravel()[order]) >= 0).all()  # monotone
    assert (dm.normalise(np.array([[0, 5], [5, 0]])) == [[0, 255], [255, 0]]).all()
    with pytest.raises(dm.DemandError):
        dm.normalise(np.array([[0, -1], [1, 0]]))


def test_hostfile_slots_and_intra_node_traffic(tmp_path) -> None:
    hf = tmp_path / "hosts"
    hf.write_text("# two ranks per node\nm1n01 slots=2\nm1n02 slots=2\n")
    assert dm.read_hostfile(hf) == ["m1n01", "m1n01", "m1n02", "m1n02"]
    d = dm.node_demand(dm.read_monitoring(PREFIX), dm.read_hostfile(hf))
    # ranks 0,1 on m1n01 and 2,3 on m1n02: only the cross-node bytes count
    assert set(d) == {"m1n01", "m1n02"} and d["m1n01"]["m1n02"] > 0
    assert d["m1n02"]["m1n01"] == 255 and "m1n01" not in d["m1n01"]
    hf.write_text("m1n01 slots=x\n")
    with pytest.raises(dm.DemandError, match="line 1"):
        dm.read_hostfile(hf)


def test_combine_keeps_the_larger_weight() -> None:
    a = {"x": {"y": 10, "z": 3}}
    b = {"x": {"y": 4}, "y": {"x": 255}}
    assert dm.combine([a, b]) == {"x": {"y": 10, "z": 3}, "y": {"x": 255}}


def test_render_parse_round_trip_and_refusals(tmp_path) -> None:
    d = {"a": {"b": 1, "c": 255}, "b": {"a": 0}}
    assert dm.parse(dm.render(d)) == d
    for text, msg in (("a b:256", "outside 0..255"), ("a b:-3", "outside 0..255"),
                      ("a b", "is not <node>:<weight>"), ("a b:x", "is not <node>:<weight>")):
        with pytest.raises(dm.DemandError, match=msg) as err:
            dm.parse(text, "f.txt")
        assert "\n" not in str(err.value) and "f.txt: line 1" in str(err.value)


@pytest.fixture(scope="module")
def mini_hx():
    return build_plane(load_system(MINI), "hyperx")


def hostfile_for(tmp_path: Path, hosts: list[str]) -> Path:
    hf = tmp_path / "hostfile.txt"
    hf.write_text("".join(h + "\n" for h in hosts))
    return hf


def test_demand_build_cli_combines_jobs_and_validates(mini_hx, tmp_path, capsys) -> None:
    hosts = mini_hx.hosts()
    hf1 = hostfile_for(tmp_path, hosts[0:4])
    (tmp_path / "b").mkdir()
    hf2 = hostfile_for(tmp_path / "b", hosts[40:44])
    out = tmp_path / "demand.txt"
    assert main(["demand", "build", "--job", str(PREFIX), str(hf1), "--job", str(PREFIX),
                 str(hf2), "--out", str(out), "--system", str(MINI)]) == 0
    d = dm.read_demand(out)
    assert d[hosts[3]][hosts[0]] == 255 and d[hosts[43]][hosts[40]] == 255
    assert len(d) == 8
    assert main(["demand", "check", str(out), "--system", str(MINI)]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{hosts[0]} nosuchnode:3\n")
    assert main(["demand", "check", str(bad), "--system", str(MINI)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nosuchnode" in err and "fix:" in err


def system_with(tmp_path: Path, old: str, new: str,
                extra: tuple[str, str] | None = None) -> Path:
    text = MINI.read_text()
    for a, b in [(old, new)] + ([extra] if extra else []):
        assert a in text
        text = text.replace(a, b)
    path = tmp_path / "sys.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("dims,per_switch", [("[2, 2, 4]", 4), ("[4, 3]", 6)])
def test_odd_or_3d_hyperx_is_refused_before_opensm(tmp_path, capsys, dims, per_switch) -> None:
    sys_path = system_with(tmp_path, "dims: [4, 4], nodes_per_switch: 4",
                           f"dims: {dims}, nodes_per_switch: {per_switch}",
                           extra=("list: [[hx-0-0, hx-1-0]]", "list: []"))
    demand = tmp_path / "d.txt"
    demand.write_text("m1n01 m1n02:5\n")
    code = main(["reroute", "--system", str(sys_path), "--routing", "parx", "--demand",
                 str(demand), "--out", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "2D HyperX with even dimensions" in err and err.count("\n") == 0
    assert not (tmp_path / "o" / "opensm.log").exists()  # refused before OpenSM


def test_parx_is_refused_on_a_fattree_plane(tmp_path, capsys) -> None:
    demand = tmp_path / "d.txt"
    demand.write_text("m1n01 m1n02:5\n")
    code = main(["reroute", "--system", str(MINI), "--plane", "fattree", "--routing", "parx",
                 "--demand", str(demand), "--out", str(tmp_path / "o"), "-q"])
    assert code == 2 and "PARX needs a HyperX plane" in capsys.readouterr().err


def test_run_reroute_simulated_parx_uses_the_demand(mini_hx, tmp_path) -> None:
    hosts = mini_hx.hosts()
    demand = tmp_path / "demand.txt"
    dm.write_demand(dm.node_demand(dm.read_monitoring(PREFIX), hosts[8:12]), demand, mini_hx)
    out = tmp_path / "o"
    done = subprocess.run([str(ROOT / "run" / "reroute"), "--system", "mini", "--routing",
                           "parx", "--demand", str(demand), "--out", str(out), "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["engine_used"] == "parx" and not summary["fallback"] and summary["lmc"] == 2
    assert "4 destination nodes listed" in (out / "opensm.log").read_text()


def test_reroute_simulated_sar_with_a_job_file(mini_hx, tmp_path) -> None:
    hosts = mini_hx.hosts()
    hf1, hf2 = tmp_path / "h1", tmp_path / "h2"
    hf1.write_text("\n".join(hosts[:24]))
    hf2.write_text("\n".join(hosts[30:40]))
    jobs = tmp_path / "jobs.txt"
    assert main(["demand", "jobs", "--job", "big", str(hf1), "--job", "small", str(hf2),
                 "--out", str(jobs), "--system", str(MINI)]) == 0
    assert dm.read_jobs(jobs) == {"big": hosts[:24], "small": hosts[30:40]}
    assert main(["reroute", "--system", str(MINI), "--routing", "sar", "--jobs", str(jobs),
                 "--out", str(tmp_path / "o"), "-q"]) == 0
    assert "sar: job file" in (tmp_path / "o" / "opensm.log").read_text()


def test_reroute_real_reports_an_unreachable_sm_host_in_one_line(tmp_path, capsys,
                                                                 monkeypatch) -> None:
    """--real hands the file to the plane's SM host: over ssh (nobody listens on this
    machine's port 22 in the tests) or to the routing agent (none runs): one line each.
    A file path of the SM host in opensm.options is refused: it would reach the simulated
    OpenSM too (docs/cluster.md#the-subnet-managers)."""
    demand = tmp_path / "d.txt"
    demand.write_text("m1n01 m1n02:5\n")
    code = main(["reroute", "--system", str(MINI), "--routing", "parx", "--demand",
                 str(demand), "--real", "-q", "--timeout", "20"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "opensm.sm" in err and "localhost" in err and err.count("\n") == 0
    agent = system_with(tmp_path, "opensm: {routing: [dfsssp, parx], lmc: 0}",
                        "opensm: {routing: [dfsssp, parx], lmc: 0, host: localhost, "
                        "sm: {via: agent, port: 1}}")
    # No MUNGE daemon here (tests/test_cluster.py reaches a stopped agent through one).
    monkeypatch.setenv("T2HX_MUNGE_SOCKET", str(tmp_path / "no-munged.socket"))
    code = main(["reroute", "--system", str(agent), "--routing", "parx", "--demand",
                 str(demand), "--real", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "T2HX_MUNGE_SOCKET: munge failed" in err and "munged" in err
    assert err.count("\n") == 0
    leak = system_with(tmp_path, "opensm: {routing: [dfsssp, parx], lmc: 0}",
                       "opensm: {routing: [dfsssp, parx], lmc: 0, "
                       "options: {event_plugin_options: parx_demand=/tmp/none.txt}}")
    code = main(["reroute", "--system", str(leak), "--routing", "parx", "--demand",
                 str(demand), "--real", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "opensm.options" in err and "opensm.sm.conf_file" in err


@pytest.fixture(scope="module")
def traffic_binary(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("traffic") / "traffic"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(DATA / "traffic.c")], check=True)
    return exe


def test_record_runs_real_open_mpi_and_installs_the_profile(traffic_binary, tmp_path,
                                                            capsys) -> None:
    out = tmp_path / "profiles"
    assert main(["demand", "record", "--benchmark", "traffic", "--np", "3", "--out", str(out),
                 "--expect", r"^traffic: 3 ranks done$", "--program-version", "traffic.c test",
                 "--study-input", '{"pattern": "ring"}', "--", str(traffic_binary)]) == 0
    m = dm.read_monitoring(out / "traffic" / "3" / "traffic")
    assert [p.name for p in sorted((out / "traffic" / "3").iterdir())] == \
        [f"traffic.{r}.prof" for r in range(3)]                 # only the rank files
    assert m[0, 1] == 65536 + 100 + 8 and m[1, 2] == 131072 + 8 and m[2, 0] == 196608
    info = json.loads((out / "traffic" / "3.json").read_text())
    assert info["ranks"] == 3 and info["mpi"].startswith("mpirun (Open MPI)")
    assert "pml_monitoring_enable" in info["command"] and info["bytes_total"] == int(m.sum())
    assert info["program"] == {"path": f".../{traffic_binary.name}", "version": "traffic.c test",
                               "sha256": hashlib.sha256(traffic_binary.read_bytes()).hexdigest()}
    assert info["input"] == {"pattern": "ring"} and info["expect"] == [r"^traffic: 3 ranks done$"]
    assert (out / "traffic" / "3.out.txt").read_text() == "traffic: 3 ranks done\n"
    capsys.readouterr()
    # a failing run, or one whose output lacks a marker, leaves the installed profile alone
    # and says why in one line
    for argv, why in ((["--", "false"], "mpirun exited with"),
                      (["--expect", "^traffic: 4 ranks", "--", str(traffic_binary)],
                       "does not match '^traffic: 4 ranks'"),
                      (["--hpl", "1000:64", "--", str(traffic_binary)],  # xhpl's verdict
                       r"does not match '^End of Tests\\.'")):
        assert main(["demand", "record", "--benchmark", "traffic", "--np", "3", "--out",
                     str(out), *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and why in err, err
    assert (dm.read_monitoring(out / "traffic" / "3" / "traffic") == m).all()
    assert json.loads((out / "traffic" / "3.json").read_text()) == info


def test_record_keeps_and_checks_the_programs_result_file(traffic_binary, tmp_path,
                                                          capsys) -> None:
    """A program that prints nothing and writes its verdict to a file (HPCG): --result-file
    keeps that file after its stdout in <np>.out.txt and --expect is matched against it."""
    out = tmp_path / "profiles"
    script = f"{traffic_binary} && echo 'RESULT is VALID' > result-$OMPI_COMM_WORLD_RANK.txt"
    base = ["demand", "record", "--benchmark", "traffic", "--np", "2", "--out", str(out),
            "--prefix", "traffic"]
    assert main([*base, "--result-file", "result-0.txt", "--expect", "^RESULT is VALID$",
                 "--", "sh", "-c", script]) == 0
    kept = (out / "traffic" / "2.out.txt").read_text()
    assert kept.startswith("traffic: 2 ranks done\n") and "result file result-0.txt" in kept
    assert json.loads((out / "traffic" / "2.json").read_text())["result_file"] == "result-0.txt"
    capsys.readouterr()
    assert main([*base, "--result-file", "nosuch-*.txt", "--", "sh", "-c", script]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "wrote no 'nosuch-*.txt'" in err


@pytest.mark.parametrize("argv, why", [
    (["--hpcc", "1000:64", "--result-file", "x"], "--hpcc runs Debian's hpcc with its own"),
    (["--hpcc", "1000:64", "--", "xhpl"], "--hpcc runs Debian's hpcc with its own"),
    (["--hpcc", "1000:64", "--expect", "x"], "--hpcc runs Debian's hpcc with its own"),
    (["--hpl", "1000"], "no program to record"),
    (["--hpl", "1000", "--", "xhpl"], "--hpl '1000'"),
    (["--expect", "(", "--", "true"], "is not a regular expression"),
])
def test_record_refuses_a_muddled_request_before_running(argv, why, tmp_path, capsys) -> None:
    code = main(["demand", "record", "--benchmark", "x", "--np", "2", "--out", str(tmp_path),
                 *argv])
    assert code == 2 and why in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_record_writes_the_hpl_checks_input_for_xhpl() -> None:
    """--hpl N:NB writes the HPL.dat the HPL check writes (checks/x500.py), most square grid."""
    from t2hx.benchmarks.hpl import HPL_DAT

    check = (ROOT / "checks" / "x500.py").read_text()
    assert re.search(r"^from t2hx\.benchmarks\.hpl import .*\bHPL_DAT\b", check, re.M)  # one HPL.dat
    text = HPL_DAT.format(case="c", n=1000, nb=64, p=2, q=7)
    values = {line.split()[1]: line.split()[0] for line in text.splitlines()[5:12]}
    assert (values["Ns"], values["NBs"], values["Ps"], values["Qs"]) == ("1000", "64", "2", "7")


def test_recorded_profiles_go_where_rerouting_reads_them(traffic_binary, tmp_path,
                                                          monkeypatch) -> None:
    """With T2HX_PROFILES set, `demand record` (no --out) writes into that folder and the
    re-route of a job finds the profile there, not in the checkout's conf/profiles."""
    from t2hx.routing.reroute import job_profile

    folder = tmp_path / "site-profiles"
    monkeypatch.setenv("T2HX_PROFILES", str(folder))
    assert main(["-q", "demand", "record", "--benchmark", "traffic", "--np", "3",
                 "--", str(traffic_binary)]) == 0
    hosts = tmp_path / "hosts"
    hosts.write_text("m1n01\nm1n02\nm1n03\n")
    assert job_profile("traffic", hosts) == str(folder / "traffic" / "3" / "traffic")
    assert not (ROOT / "conf" / "profiles" / "traffic").exists()


COMMITTED = sorted((ROOT / "conf" / "profiles").glob("*/*.json"))


@pytest.mark.parametrize("record", COMMITTED, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_committed_profiles_are_complete_real_recordings(record: Path, tmp_path) -> None:
    """conf/profiles: what `t2hx campaign reroute` finds for a job of that benchmark and size,
    each a completed run whose kept output shows the markers it was checked for."""
    from t2hx.routing.reroute import job_profile

    info, folder = json.loads(record.read_text()), record.with_suffix("")
    ranks = int(record.stem)
    assert info["ranks"] == ranks and info["benchmark"] == record.parent.name
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(f"{info['prefix']}.{r}.prof" for r in range(ranks))
    m = dm.read_monitoring(folder / info["prefix"], ranks)
    assert info["bytes_total"] == int(m.sum()) > 0
    assert info["program"]["sha256"] and info["mpi"].startswith("mpirun (Open MPI)")
    output = record.with_suffix(".out.txt").read_text()
    assert all(re.search(p, output, re.M) for p in info["expect"]) and info["expect"]
    hosts = [f"r01n{i:02d}" for i in range(1, ranks + 1)]
    d = dm.node_demand(m, hosts)
    assert max(w for row in d.values() for w in row.values()) == 255
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{h}\n" for h in hosts))
    assert job_profile(record.parent.name, hostfile) == str(folder / info["prefix"])


@pytest.mark.parametrize("ranks", [4, 7, 14, 28])
def test_committed_hpl_profiles_are_hpl_alone(ranks) -> None:
    """The HPL profiles are xhpl's traffic at the HPL check's local input, not HPCC's whole
    suite: HPL sends along its process grid's rows and columns (panel broadcasts, row swaps)
    and nowhere else but for a few set-up bytes, where HPCC's kernels join every rank pair."""
    record = ROOT / "conf" / "profiles" / "hpl" / f"{ranks}.json"
    info = json.loads(record.read_text())
    assert Path(info["program"]["path"]).name == "xhpl" and "hpcc_sections" not in info
    assert "HPLinpack 2.3" in record.with_suffix(".out.txt").read_text()
    p, q = info["hpl"]["p"], info["hpl"]["q"]
    assert p * q == ranks and info["hpl"]["n"] == 1000 and info["hpl_gflops"] > 0
    m = dm.read_monitoring(record.with_suffix("") / info["prefix"], ranks)
    row, col = np.divmod(np.arange(ranks), q)           # PMAP 0: rank = row * Q + col
    on_grid_lines = (row[:, None] == row[None, :]) | (col[:, None] == col[None, :])
    assert m[on_grid_lines].sum() >= 0.999 * m.sum()


def test_modelled_profiles_say_so_and_stay_out_of_conf(tmp_path, capsys) -> None:
    assert main(["demand", "model", "--benchmark", "hpl", "--np", "8", "--out",
                 str(tmp_path)]) == 0
    folder = tmp_path / "hpl" / "8"
    m = dm.read_monitoring(folder / "modelled", 8)
    size, _, its = profiles.model_traffic("hpl", 8)
    assert (m == size).all() and m.sum() > 0 and its == 100
    assert all(f.read_text().startswith(profiles.MODELLED) for f in folder.iterdir())
    capsys.readouterr()
    assert main(["demand", "model", "--benchmark", "hpl", "--np", "8", "--out",
                 str(ROOT / "conf" / "profiles")]) == 2
    assert "must not go where recorded ones live" in capsys.readouterr().err
