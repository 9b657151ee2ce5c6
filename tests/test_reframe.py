"""The ReFrame harness, through the real `reframe` CLI: site config generated from conf,
the full t2hx matrix, dry-run job scripts, HPL for real on `local`, resume after a kill, and
porting to a new conf file with no code change."""

from __future__ import annotations

import json
import os
import re
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path


from t2hx import ROOT
from t2hx.post.perflog import read_perflog
from t2hx.conf import load_system
from t2hx.study import load_study, seconds

REFRAME = str(Path(sys.executable).parent / "reframe")
# A real partition runs the view's xhpl, or Debian's HPCC where the view has none (this
# checkout's spack-env/view is built on some machines only).
_XHPL = (ROOT / "spack-env" / "view" / "bin" / "xhpl").is_file()
HPL_EXE, HPL_INPUT = ("xhpl", "HPL.dat") if _XHPL else ("/usr/bin/hpcc", "hpccinf.txt")
CONFIG = str(ROOT / "conf" / "reframe.py")


def env_for(tmp: Path, campaign: str = "test", **extra: str) -> dict:
    env = dict(os.environ)
    for key in ("T2HX_STUDY", "T2HX_STUDY_PROFILE", "T2HX_CONF_SYSTEMS", "T2HX_HOSTFILES",
                "T2HX_RESUME", "T2HX_SIM_SYSTEMS"):
        env.pop(key, None)
    # No Spack view: on `local` only HPL runs (Debian's hpcc), whether or not this checkout
    # has built spack-env/view (tests/test_local_runs.py covers the view).
    env["T2HX_SPACK_VIEW"] = str(tmp / "no-spack-view")
    env.update(T2HX_LOG_ROOT=str(tmp / "log"), T2HX_WORK_ROOT=str(tmp / "work"),
               T2HX_CAMPAIGN=campaign, **extra)
    return env


def reframe(env: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [REFRAME, "-C", CONFIG, *args]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=timeout)
    return out


def found(out: subprocess.CompletedProcess) -> int:
    m = re.search(r"Found (\d+) check\(s\)", out.stdout)
    assert m, out.stdout[-3000:] + out.stderr[-3000:]
    return int(m.group(1))


def perf_rows(logdir: Path) -> list[dict]:
    rows = []
    for path in sorted(logdir.rglob("*.log")):
        for frame in read_perflog(path).frames:
            rows += frame.drop(columns="_line").fillna("null").to_dict("records")
    return rows


def test_site_config_generated_from_conf(tmp_path, monkeypatch):
    for key, value in env_for(tmp_path).items():
        monkeypatch.setenv(key, value)
    cfg = runpy.run_path(CONFIG)["site_configuration"]
    systems = {s["name"]: s for s in cfg["systems"]}
    assert list(systems) == ["t2hx", "sim", "local"]    # mini.yaml has no launcher: sim only
    parts = {p["name"]: p for p in systems["t2hx"]["partitions"]}
    assert set(parts) == {"fattree", "hyperx"}
    assert ["UCX_NET_DEVICES", "mlx4_1:1"] in parts["hyperx"]["env_vars"]
    assert ["OMPI_MCA_btl_openib_if_include", "mlx4_0:1"] in parts["fattree"]["env_vars"]
    t2hx = load_system(ROOT / "conf" / "systems" / "t2hx.yaml").nodes
    assert parts["hyperx"]["extras"]["nodes"] == t2hx["racks"] * t2hx["per_rack"]
    sim = {p["name"] for p in systems["sim"]["partitions"]}
    # sim: every conf system with hostfiles (mini.yaml has none: not simulated)
    assert sim == {"t2hx-fattree", "t2hx-hyperx"}
    local = systems["local"]["partitions"][0]
    assert "--allow-run-as-root" in local["extras"]["launcher_options"]
    handler = cfg["logging"][0]["handlers_perflog"][0]
    assert handler["basedir"] == str(tmp_path / "log" / "test" / "perflogs")
    for field in ("%(check_combo)s", "%(check_num_nodes)s", "%(check_repetition)s",
                  "%(check_routing)s", "%(check_placement)s", "%(check_topology)s"):
        assert field in handler["format"]


def test_full_t2hx_dry_run(tmp_path):
    """`reframe --dry-run` over the full t2hx matrix: one job script per case study.yaml
    implies (serial policy: no poll sleeps; ~100 s, 160 MB of scripts), and spot checks of
    hostfile, HCA pinning, walltime and the PARX re-route step."""
    # --perflogdir as `t2hx campaign dry-run` passes it: a dry run's records stay out of
    # the campaign.
    out = reframe(env_for(tmp_path), "-c", "checks", "--system", "t2hx", "--dry-run",
                  "--exec-policy=serial", f"--perflogdir={tmp_path / 'dry-run'}", timeout=900)
    assert out.returncode == 0, out.stdout[-3000:]
    study, system = load_study(), load_system(ROOT / "conf" / "systems" / "t2hx.yaml")
    nodes = system.nodes["racks"] * system.nodes["per_rack"]
    expected = study.all_cases(nodes)
    assert f"Ran {expected}/{expected} test case(s)" in out.stdout
    assert "WARNING: skipping test" not in out.stdout
    scripts = sorted((tmp_path / "work").rglob("rfm_job.sh"))
    assert len(scripts) == expected
    assert not list((tmp_path / "log").rglob("*")), "a dry run must not touch the campaign"
    by_case = {p.parent.name: p for p in scripts}
    hpl = [p.read_text() for name, p in by_case.items() if name.startswith("HPL_")]
    rungs = [n for n in study.nodes("hpl") if n <= nodes]
    # A re-routed combo (parx/sar) on a middle rung: one script per repetition.
    combo = next(c for c in study.combos if c.routing in study.reroute_engines)
    n, hca = rungs[len(rungs) // 2], system.plane(combo.plane).hca
    hostfile = f"{combo.placement}/{n}.txt"
    rerouted = [t for t in hpl if hostfile in t and f"{hca}:1" in t
                and f"--routing {combo.routing}" in t]
    assert len(rerouted) == study.repetitions
    text = rerouted[0]
    assert f"export UCX_NET_DEVICES={hca}:1" in text
    assert f"export OMPI_MCA_btl_openib_if_include={hca}:1" in text
    assert f"export OMP_NUM_THREADS={system.nodes['cores']}" in text
    # Binaries come from the Spack environment's view, built once: no build per job.
    assert f"export PATH={ROOT / 'spack-env/view'}/bin:" in text
    assert "spack " not in text
    walltime = int(seconds(study.walltime))
    assert f"timeout --signal=TERM --kill-after=30 {walltime} mpirun -np {n}" in text
    assert "--hostfile " + str(ROOT / "hostfiles/t2hx" / hostfile) in text
    assert "campaign reroute" in text and "--mode real" in text
    assert text.index("campaign reroute") < text.index("mpirun -np")
    # A failed routing step ends the job before the benchmark: nothing runs unverified.
    assert re.search(r"(?m)^\S+ campaign reroute .*--routing parx .*\|\| \{ .*exit 3; \}$",
                     text)
    # PARX in MPI: the MCA parameters of our Open MPI patch (its usage line).
    for name, value in (("pml", "ob1"), ("btl", "openib,self,vader"),
                        ("btl_openib_max_lmc", "4"), ("pml_ob1_parx_enable", "1")):
        assert f"export OMPI_MCA_{name}={value}" in text
    # Every real combo makes the plane's OpenSM run its engine first (planes share SMs).
    base = study.combo(study.baseline)
    assert base.routing not in study.reroute_engines
    hca = system.plane(base.plane).hca
    plain = [t for t in hpl if f"{base.placement}/{rungs[0]}.txt" in t and f"{hca}:1" in t]
    assert len(plain) == study.repetitions
    assert all(f"--routing {base.routing} --mode real" in t and "parx_enable" not in t
               for t in plain)
    hpl_dir = next(p for name, p in by_case.items() if name.startswith("HPL_")).parent
    assert (hpl_dir / HPL_INPUT).is_file()
    caps = [p for name, p in by_case.items() if name.startswith("Capacity_")]
    assert len(caps) == len(study.combos) * study.capacity["repetitions"]
    driver = (caps[0].parent / "capacity.sh").read_text()
    assert driver.count("\nloop ") == len(study.capacity["apps"])
    # mpirun partition: each app starts with mpirun on its own hostfile, no srun options.
    assert "--distribution" not in driver
    assert re.search(r"(?m)^loop amg mpirun .*--hostfile \S+/amg\.hosts -np 56 ", driver)
    hosts = [len((caps[0].parent / f"{app}.hosts").read_text().split())
             for app in study.capacity["apps"]]
    assert sum(hosts) == study.capacity_nodes()
    every = (caps[0].parent / "capacity.hosts").read_text().split()
    assert len(set(every)) == study.capacity_nodes()      # disjoint node sets


def test_hpl_runs_for_real_on_local(tmp_path):
    """The acceptance command: HPCC's HPL with 2 ranks, its Gflop/s in the perflog."""
    env = env_for(tmp_path)
    out = reframe(env, "-c", "checks", "-r", "--system", "local")
    assert out.returncode == 0, out.stdout[-3000:]
    rows = perf_rows(tmp_path / "log" / "test" / "perflogs" / "local")
    assert len(rows) == 1
    row = rows[0]
    assert row["benchmark"] == "hpl" and row["perf_var"] == "gflops"
    assert row["perf_unit"] == "Gflop/s" and float(row["perf_value"]) > 0
    assert row["num_nodes"] == "2" and row["result"] == "pass"
    run = list((tmp_path / "log" / "test" / "runs").rglob("hpccoutf.txt"))
    assert len(run) == 1 and "End of HPC Challenge tests." in run[0].read_text()
    # The same campaign through the CLI wrapper: resumed (nothing to do), provenance kept.
    t2hx = [str(Path(sys.executable).parent / "t2hx")]
    again = subprocess.run(t2hx + ["campaign", "run", "--system", "local", "--campaign", "test"],
                           env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert "1 skipped" in again.stdout
    assert perf_rows(tmp_path / "log" / "test" / "perflogs" / "local") == rows
    prov = json.loads((tmp_path / "log" / "test" / "provenance.json").read_text())
    assert prov["campaign"] == "test" and prov["runs"][0]["system"] == "local"
    status = subprocess.run(t2hx + ["campaign", "status", "--system", "local", "--campaign",
                                    "test"], env=env, capture_output=True, text=True)
    assert "1 cases recorded" in status.stdout


def _study_with_local_reps(tmp: Path, reps: int, n: int) -> Path:
    text = (ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()
    text = re.sub(r"(?m)^local:\n  nodes: \[2\]\n  repetitions: 1\n",
                  f"local:\n  nodes: [2]\n  repetitions: {reps}\n", text)
    text = text.replace("hpl: {n: 1000, nb: 64}", f"hpl: {{n: {n}, nb: 64}}")
    path = tmp / "study.yaml"
    path.write_text(text)
    assert load_study(path).local["repetitions"] == reps
    return path


def test_resume_after_kill(tmp_path):
    """Kill a campaign mid-way: the rerun skips recorded cases, loses none, duplicates none."""
    env = env_for(tmp_path, campaign="resume",
                  T2HX_STUDY=str(_study_with_local_reps(tmp_path, 3, 2000)))
    logdir = tmp_path / "log" / "resume" / "perflogs"
    cmd = [REFRAME, "-C", CONFIG, "-c", "checks/x500.py", "-r", "--system", "local"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and len(perf_rows(logdir)) < 1:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)      # reframe and its running mpirun/hpcc
    proc.wait()
    first = perf_rows(logdir)
    assert 1 <= len(first) < 3, "kill came too late to interrupt the campaign"
    out = reframe(env, "-c", "checks/x500.py", "-r", "--system", "local")
    assert out.returncode == 0, out.stdout[-3000:]
    skipped = re.search(r"(\d+) skipped", out.stdout)
    assert skipped and int(skipped.group(1)) == len(first)
    rows = perf_rows(logdir)
    keys = [(r["benchmark"], r["combo"], r["num_nodes"], r["repetition"]) for r in rows]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 3
    assert {r["repetition"] for r in rows} == {"0", "1", "2"}
    assert rows[:len(first)] == first                   # nothing recorded was rewritten
    runs = sorted(p.name for p in (tmp_path / "log" / "resume" / "runs").rglob("hpl_*")
                  if p.is_dir())
    assert runs == [f"hpl_local_2n_r{i}" for i in range(3)]


PORT_SYSTEM = """
name: port6
description: a 6x6 HyperX and a 2-level fat-tree over 72 nodes (porting test)
nodes: {hostname: "p{index:03d}", racks: 6, per_rack: 12, cores: 4}
launcher: {kind: slurm, partition: batch}
model: {packet: {hca: {interface: pcie, pcie_gen: 3, lanes: 16}}}
planes:
  fattree:
    hca: mlx5_0
    topology: {kind: xgft, m: [12, 6], w: [1, 12], switch_ports: 24}
    opensm: {routing: [ftree, sssp]}
  hyperx:
    hca: mlx5_1
    topology: {kind: hyperx, dims: [6, 6], nodes_per_switch: 2, switch_ports: 16}
    opensm: {routing: [dfsssp, parx]}
"""


def test_porting_new_conf_no_code_change(tmp_path):
    """A new conf file yields hostfiles, ReFrame partitions, Slurm dry-run scripts and a
    simulated campaign."""
    confdir = tmp_path / "systems"
    confdir.mkdir()
    (confdir / "port6.yaml").write_text(PORT_SYSTEM)
    hosts = tmp_path / "hostfiles"
    made = subprocess.run([str(ROOT / "run" / "t2hx"), "hostfiles", "--system",
                           str(confdir / "port6.yaml"), "--out", str(hosts)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert made.returncode == 0, made.stderr
    assert (hosts / "port6" / "clustered" / "56.txt").is_file()
    # Simulated: the port only (what `t2hx campaign run --system sim:port6` asks for).
    env = env_for(tmp_path, T2HX_CONF_SYSTEMS=str(confdir), T2HX_HOSTFILES=str(hosts),
                  T2HX_SIM_SYSTEMS="port6")
    out = reframe(env, "-c", "checks/x500.py", "--system", "port6", "-n", "HPL",
                  "-P", "repetition=0", "--dry-run", "--exec-policy=serial")
    assert out.returncode == 0, out.stdout[-3000:]
    scripts = sorted((tmp_path / "work").rglob("rfm_job.sh"))
    ladder = [n for n in load_study().nodes("hpl") if n <= 72]
    assert len(scripts) == 5 * len(ladder)            # bigger rungs are skipped
    text = next(s.read_text() for s in scripts
                if "hyperx" in str(s) and "clustered/28.txt" in s.read_text())
    assert "#SBATCH --nodelist=" in text and "#SBATCH --partition=batch" in text
    assert "#SBATCH --time=0:15:0" in text
    assert "export UCX_NET_DEVICES=mlx5_1:1" in text
    assert re.search(rf"(?m)^srun .*--distribution=arbitrary {HPL_EXE}$", text)
    assert f"export SLURM_HOSTFILE={hosts}/port6/clustered/28.txt" in text
    nodelist = re.search(r"--nodelist=(\S+)", text).group(1).split(",")
    assert nodelist == (hosts / "port6" / "clustered" / "28.txt").read_text().split()
    listing = reframe(env, "-c", "checks/x500.py", "--system", "sim", "-n", "HPL",
                      "-P", "repetition=0", "-P", "num_nodes=7", "-l")
    assert found(listing) == 5                        # one case per combo on sim:port6-*
    # ... and the simulated campaign runs there: every combo (PARX included, on the new
    # 6x6 HyperX with its own quadrant LIDs) routed by real OpenSM and recorded. HPL on 7
    # nodes has a communication profile (conf/profiles/hpl/7): its PARX case re-routes the
    # plane from the job's demand in its stage directory before the simulation.
    ran = reframe(env, "-c", "checks/mpigraph.py", "-c", "checks/x500.py", "-n",
                  "MpiGraph|HPL", "--system", "sim", "-r", "-P", "repetition=0",
                  "-P", "num_nodes=7", timeout=600)
    assert ran.returncode == 0, ran.stdout[-3000:]
    rows = perf_rows(tmp_path / "log" / "test" / "perflogs" / "sim")
    for bench in ("mpigraph", "hpl"):
        assert sorted(r["combo"] for r in rows if r["benchmark"] == bench) == \
            sorted(c.name for c in load_study().combos)
    assert all(float(r["perf_value"]) > 0 for r in rows)
    # Each run records what its simulated first line says: simulated here, the study's noise.
    model, cv, seed = load_study().noise_of("network")
    for meta in (tmp_path / "log" / "test" / "runs").rglob("mpigraph_*/t2hx-run.json"):
        sim = json.loads(meta.read_text())["sim"]
        assert sim["cache"] == "miss" and "repeat_of" not in sim
        assert sim["noise"] == (f"{model}:cv={cv:g}:seed={seed}" if model != "none" else "none")
    rerouted = [p for p in (tmp_path / "work").rglob("HPL_*/rfm_job.err")
                if "reroute: routing port6-hyperx with parx" in p.read_text()]
    assert len(rerouted) == 1                         # the PARX case only
    assert not (ROOT / "routing").exists()           # routed in the stage dir, not beside us


def test_capacity_on_sim_records_and_resumes(tmp_path):
    """The capacity check on the simulated t2hx: one record per app with the case's node
    count, and a rerun of the campaign skips it (no duplicate records)."""
    study = tmp_path / "study.yaml"
    text = (ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()
    window = f"      window: {load_study(profile='quick').capacity['window']}\n"
    assert window in text                                 # profiles: quick: capacity:
    study.write_text(text.replace(window, "      window: 10s\n"))    # a whole MuPP job or two
    env = env_for(tmp_path, campaign="cap", T2HX_STUDY=str(study), T2HX_STUDY_PROFILE="quick")
    args = ("-c", "checks/capacity.py", "-r", "--system", "sim", "-P", "combo=ft-ftree-linear")
    out = reframe(env, *args, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:]
    rows = perf_rows(tmp_path / "log" / "cap" / "perflogs")
    study_ = load_study(study, "quick")
    assert sorted(r["perf_var"] for r in rows) == sorted(study_.capacity["apps"])
    assert {r["num_nodes"] for r in rows} == {str(study_.capacity_nodes())}
    assert int(next(r["perf_value"] for r in rows if r["perf_var"] == "mupp")) > 0
    again = reframe(env, *args, timeout=600)
    assert again.returncode == 0 and re.search(r"\b1 skipped", again.stdout), again.stdout
    assert perf_rows(tmp_path / "log" / "cap" / "perflogs") == rows


#: A ReFrame whose Python lacks a t2hx dependency: the venv's own, with numpy blocked the way
#: a missing package fails (ImportError naming it).
WITHOUT_NUMPY = """
import sys
sys.modules["numpy"] = None
from reframe.frontend.cli import main
sys.argv = ["reframe", "-C", "conf/reframe.py", "-c", "checks/imb.py", "-l"]
main()
"""


def test_a_reframe_without_t2hxs_packages_says_which_reframe_to_use() -> None:
    """#50: the site configuration loads in any ReFrame; the checks need numpy and pandas, and
    a ReFrame without them exits with one line naming t2hx's ReFrame instead of skipping
    every check file and listing none."""
    done = subprocess.run([sys.executable, "-c", WITHOUT_NUMPY], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    last = (done.stdout + done.stderr).strip().splitlines()[-1]
    assert done.returncode != 0, done.stdout[-1000:]
    assert "cannot import numpy" in last and str(ROOT / ".venv" / "bin" / "reframe") in last
    assert "[ReFrame Setup]" in done.stdout          # the configuration itself loaded
