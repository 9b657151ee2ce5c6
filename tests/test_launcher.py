"""Site options as data: the conf's launcher section becomes ReFrame partitions (Slurm
partition, account, sbatch options, srun's MPI plugin, modules, environment, MCA parameters
per routing engine), the capacity driver launches the way the partition does, and a bad
section or an SM-host-only OpenSM option is one line naming file and field."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from t2hx import ROOT
from t2hx.conf import load_system
from t2hx.errors import ConfError
from t2hx.launcher import launch_command
from t2hx.reframe_site import real_system

EXAMPLE = ROOT / "docs" / "examples" / "cluster64.yaml"
T2HX = str(ROOT / ".venv" / "bin" / "t2hx")


def conf_with(tmp: Path, edit) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    edit(data)
    path = tmp / "site.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def parts_of(path: Path) -> dict:
    return {p["name"]: p for p in real_system(load_system(path))["partitions"]}


def test_example_site_becomes_partitions() -> None:
    parts = parts_of(EXAMPLE)
    ft, hx = parts["fattree"], parts["hyperx"]
    assert ft["access"] == ["--partition=batch", "--exclusive"]
    assert hx["access"] == ["--partition=hyperx", "--exclusive", "--comment=hyperx-plane"]
    assert ft["scheduler"] == "slurm" and ft["launcher"] == "srun"
    assert ft["extras"]["launcher_options"] == ["--distribution=arbitrary", "--mpi=pmix"]
    assert ft["extras"]["hostfile_env"] == "SLURM_HOSTFILE"
    # PARX's MCA parameters for the parx engine only, over the site's own.
    mca = hx["extras"]["mca"]
    assert mca["parx"]["OMPI_MCA_pml_ob1_parx_enable"] == "1"
    assert mca["parx"]["OMPI_MCA_btl"] == "openib,self,vader"
    assert mca["dfsssp"] == {"OMPI_MCA_btl_openib_allow_ib": "1"}
    assert hx["extras"]["sm_via"] == "agent"


def test_per_plane_options_modules_env_and_mpirun(tmp_path) -> None:
    def edit(d):
        d["launcher"].update(run_with="mpirun", scheduler="squeue", modules_system="lmod",
                             modules=["openmpi/4.1"], env={"UCX_TLS": "rc", "A": 1},
                             engine_mca={"parx": {"pml_ob1_parx_threshold": 1024}})
        d["launcher"]["planes"]["hyperx"].update(modules=["openmpi/4.1-parx"], env={"A": 2},
                                                 account="hx")
    path = conf_with(tmp_path, edit)
    system = real_system(load_system(path))
    assert system["modules_system"] == "lmod"
    ft, hx = {p["name"]: p for p in system["partitions"]}.values()
    assert (ft["modules"], hx["modules"]) == (["openmpi/4.1"], ["openmpi/4.1-parx"])
    assert ["A", "1"] in ft["env_vars"] and ["A", "2"] in hx["env_vars"]
    assert ["UCX_TLS", "rc"] in hx["env_vars"]
    assert hx["access"][:2] == ["--partition=hyperx", "--account=hx"]
    assert ft["scheduler"] == "squeue" and ft["launcher"] == "mpirun"
    assert ft["extras"]["hostfile_option"] == "--hostfile"
    assert hx["extras"]["mca"]["parx"]["OMPI_MCA_pml_ob1_parx_threshold"] == "1024"


def test_capacity_launches_the_partition_way(tmp_path) -> None:
    hosts = tmp_path / "amg.hosts"
    hosts.write_text("cn003\ncn004\ncn003\n")
    srun = parts_of(EXAMPLE)["fattree"]["extras"]
    # srun >= 22.05 takes no --cpus-per-task from the allocation: each step says it.
    assert launch_command(srun, str(hosts), 3, 1) == [
        "env", f"SLURM_HOSTFILE={hosts}", "srun", "--ntasks=3", "--nodes=2",
        "--cpus-per-task=2", "--distribution=arbitrary", "--mpi=pmix"]
    plain = {"launcher": "mpirun", "mpirun": "mpirun", "cores": 3,
             "launcher_options": ["--mca", "btl", "self"]}
    assert launch_command(plain, str(hosts), 4, 2) == [
        "mpirun", "--mca", "btl", "self", "--hostfile", str(hosts), "-np", "4", "--map-by",
        "ppr:2:node", "--bind-to", "none", "-x", "OMP_NUM_THREADS", "-x", "OMP_PROC_BIND",
        "-x", "OMP_PLACES", "-x", "PATH", "-x", "LD_LIBRARY_PATH"]


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["launcher"].update(sbatch_options=["--qos=a\n#SBATCH --x"]),
     "launcher.sbatch_options[0]"),
    (lambda d: d["launcher"].update(sbatch_options=["exclusive"]), "launcher.sbatch_options[0]"),
    (lambda d: d["launcher"].update(sbatch_opts=["--exclusive"]), "launcher.sbatch_opts"),
    (lambda d: d["launcher"]["planes"].update(dragonfly={"partition": "x"}),
     "launcher.planes.dragonfly"),
    (lambda d: d["launcher"].update(env={"1BAD": "x"}), "launcher.env"),
    (lambda d: d["launcher"].update(mca={"btl": "tcp\nrm -rf"}), "launcher.mca.btl"),
    (lambda d: d["planes"]["hyperx"]["opensm"].update(
        options={"event_plugin_options": "parx_demand=/etc/opensm/d.txt"}),
     "planes.hyperx.opensm.options"),
    (lambda d: d["planes"]["hyperx"]["opensm"].update(options={"log_file": "/var/log/x"}),
     "planes.hyperx.opensm.options"),
    (lambda d: d["planes"]["hyperx"]["opensm"]["sm"].update(via="none"),
     "planes.hyperx.opensm.sm.via"),
    (lambda d: d["planes"]["hyperx"]["opensm"]["sm"].update(conf_file="etc/opensm.conf"),
     "planes.hyperx.opensm.sm.conf_file"),
    (lambda d: d["planes"]["hyperx"]["opensm"].update(host="sm01; reboot"),
     "planes.hyperx.opensm.host"),
    # Site values that reach a job script as they are: one word of their kind.
    (lambda d: d["launcher"].update(srun_mpi="pmix; touch x"), "launcher.srun_mpi"),
    (lambda d: d["launcher"].update(partition="batch; touch x"), "launcher.partition"),
    (lambda d: d["launcher"]["planes"]["hyperx"].update(account="$(id)"),
     "launcher.planes.hyperx.account"),
    (lambda d: d["launcher"].update(modules=["openmpi/4.1 && touch x"]), "launcher.modules[0]"),
    (lambda d: d["launcher"].update(mpirun="mpirun -x"), "launcher.mpirun"),
    (lambda d: d["launcher"].update(spack_view="/opt/my view"), "launcher.spack_view"),
    (lambda d: d["launcher"].update(sbatch_options=["--comment=a b"]),
     "launcher.sbatch_options[0]"),
    (lambda d: d["launcher"].update(sbatch_options=["--qos=$(id)"]), "launcher.sbatch_options[0]"),
    (lambda d: d["launcher"].update(hostnames=["login[0-"]), "launcher.hostnames"),
    (lambda d: d["launcher"].update(modules_system="tmod32"), "launcher.modules_system"),
    (lambda d: d["launcher"].update(env={"UCX_TLS": "$(touch x)"}), "launcher.env.UCX_TLS"),
    (lambda d: d["launcher"].update(mca={"btl": "`touch x`"}), "launcher.mca.btl"),
    (lambda d: d.update(simulate={"scheduler": "squeue", "partition": "a b"}),
     "simulate.partition"),
    (lambda d: d.update(simulate={"scheduler": "squeue", "options": ["--time=5"]}),
     "simulate.options[0]"),
])
def test_bad_site_options_are_one_line(tmp_path, edit, field) -> None:
    path = conf_with(tmp_path, edit)
    with pytest.raises(ConfError) as err:
        load_system(path)
    line = err.value.line()
    assert f"{path}: {field}" in line and "fix:" in line and "\n" not in line


def test_a_bad_launcher_stops_the_campaign_before_reframe(tmp_path) -> None:
    """`t2hx campaign dry-run` on a system whose launcher is wrong: one line, exit 2."""
    systems = tmp_path / "systems"
    systems.mkdir()
    bad = conf_with(tmp_path, lambda d: d["launcher"].update(sbatch_options="--exclusive"))
    (systems / "cluster64.yaml").write_text(bad.read_text())
    env = {"T2HX_CONF_SYSTEMS": str(systems), "T2HX_LOG_ROOT": str(tmp_path / "log"),
           "T2HX_WORK_ROOT": str(tmp_path / "work"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([T2HX, "campaign", "dry-run", "--system", "cluster64", "--campaign",
                          "x"], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr
    assert out.stderr.count("\n") == 1 and "launcher.sbatch_options" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_sm_only_options_never_reach_the_simulated_opensm(tmp_path) -> None:
    """The SM host's files live in opensm.sm; the simulated routing of the same conf is
    unaffected by them (it routes PARX on its own, without waiting for a file)."""
    from t2hx.routing.engines import route_args
    from t2hx.fabric.build import build_plane

    system = load_system(EXAMPLE)
    plane = system.plane("hyperx")
    args = route_args(build_plane(system, "hyperx"), "parx", plane.opensm, system.path)
    text = repr(args)
    for path in plane.opensm["sm"].values():
        if isinstance(path, str) and path.startswith("/"):
            assert path not in text


def test_site_access_does_not_change_what_is_simulated(tmp_path) -> None:
    """A simulated case's cache key ignores how the real cluster is reached (launcher, the
    SM host and its files), not the fabric."""
    from t2hx.flowsim.runcache import system_digest

    base = conf_with(tmp_path, lambda d: None)
    first = system_digest(base)
    other = conf_with(tmp_path, lambda d: (d["launcher"].update(partition="other"),
                                           d["planes"]["hyperx"]["opensm"].update(host="sm02"),
                                           d["planes"]["hyperx"]["opensm"]["sm"].update(
                                               via="ssh", conf_file="/etc/other.conf")))
    assert system_digest(other) == first
    fabric = conf_with(tmp_path, lambda d: d["planes"]["hyperx"]["topology"].update(
        nodes_per_switch=2))
    assert system_digest(fabric) != first
