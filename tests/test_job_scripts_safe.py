"""Job scripts an admin would sign: every site value of a conf reaches a generated
Slurm script as one shell word or is refused when the conf loads, in one line naming file and
field; the site's environment composes with the Spack view's; capacity steps get the CPU and
thread binding of a capability job of the same app; operator mistakes ReFrame would report in
its own words (no launcher section, a modules system this machine lacks, no Spack view) are
ours, in one line, before ReFrame starts."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from t2hx import ROOT
from t2hx.conf import load_system
from t2hx.errors import ConfError
from t2hx.launcher import binding
from t2hx.reframe_site import real_system

from tests.test_reframe import env_for

EXAMPLE = ROOT / "docs" / "examples" / "cluster64.yaml"
STUDY = ROOT / "tests" / "data" / "cluster-study.yaml"
T2HX = str(ROOT / ".venv" / "bin" / "t2hx")

# Values with shell metacharacters in every launcher field that accepts free text: each
# must stay one word of the script.
NASTY = {
    "options": ["--comment=a; touch /tmp/t2hx-pwned", "--export=ALL,X=$(touch /tmp/t2hx-p)",
                "--job-name=it's \"quoted\" and spaced"],
    "env": {"SITE_NOTE": "a; b 'c' \"d\" e", "UCX_TLS": "rc,ud"},
    "mca": {"btl_tcp_if_include": "eth0; touch /tmp/t2hx-pwned",
            "oob_tcp_if_include": "lo 'x'"},
}


def conf_data(**launcher) -> dict:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["launcher"].update(launcher)
    return data


def write_conf(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cluster64.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def refusal(tmp: Path, data: dict) -> str:
    path = write_conf(tmp, data)
    with pytest.raises(ConfError) as err:
        load_system(path)
    line = err.value.line()
    assert str(path) in line and "fix:" in line and "\n" not in line
    return line


# --- refused when the conf loads ------------------------------------------------------------

@pytest.mark.parametrize("option", ["--time=10", "-t", "--nodelist=cn001", "-w", "--nodes=2",
                                    "--ntasks=4", "--ntasks-per-node=1", "--cpus-per-task=8",
                                    "--partition=x", "--output=x", "-J"])
def test_sbatch_options_t2hx_sets_itself_are_refused(tmp_path, option) -> None:
    name = re.match(r"-+[A-Za-z-]+|-[A-Za-z]", option).group(0)
    data = conf_data()
    data["launcher"]["planes"]["hyperx"]["sbatch_options"] = ["--exclusive", option]
    line = refusal(tmp_path, data)
    assert "launcher.planes.hyperx.sbatch_options[1]" in line
    assert f"{name} is set by t2hx" in line


@pytest.mark.parametrize("name", ["OMP_NUM_THREADS", "OMP_PLACES", "SLURM_HOSTFILE",
                                  "UCX_NET_DEVICES", "OMPI_MCA_btl"])
def test_site_env_t2hx_sets_itself_is_refused(tmp_path, name) -> None:
    """A site OMP_NUM_THREADS would be overridden by the check's (nodes.cores) without a
    word; the HCA pinning would be overridden by the site's: both refused."""
    line = refusal(tmp_path, conf_data(env={name: "4"}))
    assert "launcher.env" in line and f"{name} is set by t2hx" in line
    data = conf_data()
    data["launcher"]["planes"]["hyperx"]["env"] = {name: "4"}
    assert "launcher.planes.hyperx.env" in refusal(tmp_path, data)


def test_two_planes_on_one_hca_are_refused(tmp_path) -> None:
    data = conf_data()
    data["planes"]["hyperx"]["hca"] = data["planes"]["fattree"]["hca"]
    line = refusal(tmp_path, data)
    assert "planes.hyperx.hca" in line and "as plane 'fattree' does" in line


@pytest.mark.parametrize("name", ["fat tree", "2d-hyperx", "hx.1"])
def test_a_plane_name_reframe_refuses_is_refused(tmp_path, name) -> None:
    data = conf_data()
    data["planes"][name] = data["planes"].pop("fattree")
    line = refusal(tmp_path, data)
    assert f"planes.{name}: plane name" in line and "ReFrame partition" in line


# --- the environment a job gets ---------------------------------------------------------------

def exported(env_vars: list[list[str]], variable: str, start: dict[str, str]) -> str:
    """What bash makes of ReFrame's ``export NAME=value`` lines for ``variable``."""
    script = "\n".join(f"export {k}={v}" for k, v in env_vars) + f'\nprintf %s "${variable}"'
    done = subprocess.run(["bash", "-c", script], env=start, capture_output=True, text=True,
                          check=True)
    return done.stdout


def test_site_path_joins_the_views_path_after_it(tmp_path) -> None:
    path = write_conf(tmp_path, conf_data(env={"PATH": "/opt/site/bin", "SITE_NOTE": "a; b"},
                                          spack_view="/opt/view"))
    part = real_system(load_system(path))["partitions"][0]
    env = part["env_vars"]
    start = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/usr/lib/x"}
    assert exported(env, "PATH", start) == \
        "/opt/view/bin:/opt/view/sbin:/opt/site/bin:/usr/bin:/bin"
    assert exported(env, "LD_LIBRARY_PATH", start) == "/opt/view/lib:/opt/view/lib64:/usr/lib/x"
    assert exported(env, "SITE_NOTE", start) == "a; b"       # literal, not a second command
    assert [k for k, _ in env].count("PATH") == 1


# --- a dry run's scripts ----------------------------------------------------------------------

def dry_run(tmp: Path, conf: dict, campaign: str = "safe", *args: str
            ) -> subprocess.CompletedProcess:
    systems = tmp / "systems"
    write_conf(systems, conf)
    env = env_for(tmp, campaign=campaign, T2HX_CONF_SYSTEMS=str(systems),
                  T2HX_HOSTFILES=str(tmp / "hostfiles"), T2HX_STUDY=str(STUDY))
    env.pop("LMOD_CMD", None)
    if not (tmp / "hostfiles").is_dir():
        made = subprocess.run([T2HX, "hostfiles", "--system", str(systems / "cluster64.yaml"),
                               "--out", str(tmp / "hostfiles")], env=env, capture_output=True,
                              text=True, timeout=300, cwd=ROOT)
        assert made.returncode == 0, made.stderr
    return subprocess.run([T2HX, "campaign", "dry-run", "--system", "cluster64", "--campaign",
                           campaign, *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture(scope="module", params=["srun", "mpirun"])
def scripts(request, tmp_path_factory):
    """The dry run of a two-plane Slurm conf whose launcher values hold ';', '$(...)',
    quotes and spaces: its job scripts and capacity drivers."""
    tmp = tmp_path_factory.mktemp(f"dry-{request.param}")
    conf = conf_data(run_with=request.param, system_binaries=True,
                     options=NASTY["options"], env=NASTY["env"], mca=NASTY["mca"])
    out = dry_run(tmp, conf)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    jobs = sorted((tmp / "work").rglob("rfm_job.sh"))
    drivers = sorted((tmp / "work").rglob("capacity.sh"))
    assert len(jobs) == 5 and len(drivers) == 2, jobs   # 3 HPL cases, 2 capacity cases
    extras = real_system(load_system(tmp / "systems" / "cluster64.yaml"))["partitions"][0][
        "extras"]
    return request.param, jobs, drivers, extras


def words(text: str) -> list[list[str]]:
    """Each line of a script as the shell splits it (comments are words too: #SBATCH)."""
    return [shlex.split(line) for line in text.splitlines() if line.strip()]


def test_dry_run_scripts_parse_and_hold_each_site_value_as_one_word(scripts) -> None:
    _, jobs, drivers, _ = scripts
    for script in [*jobs, *drivers]:
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{script}: {done.stderr}"
    for script in jobs:
        split = [w for line in words(script.read_text()) for w in line]
        # The launcher's options: on the capability jobs' launch line (the capacity jobs'
        # steps start in their drivers, below).
        for value in NASTY["options"] if "Capacity" not in str(script) else []:
            assert value in split, f"{script}: {value!r} is not one word"
        for name, value in NASTY["env"].items():
            assert f"{name}={value}" in split, f"{script}: {name} is not one word"
        for name, value in NASTY["mca"].items():
            assert f"OMPI_MCA_{name}={value}" in split, f"{script}: {name} is not one word"
    for driver in drivers:
        loops = [line for line in words(driver.read_text()) if line[0] == "loop"]
        assert len(loops) == 2
        for line in loops:
            for value in NASTY["options"]:
                assert value in line, f"{driver}: {value!r} is not one word"


def launch_line(script: Path, launcher: str) -> list[str]:
    """The words of the script's line that starts the ranks."""
    lines = [w for w in words(script.read_text()) if launcher in w[:8]]
    assert len(lines) == 1, script
    return lines[0]


def test_capacity_steps_get_the_binding_of_a_capability_job(scripts) -> None:
    """Capability HPL and the capacity mix's HPL steps: the same CPUs per rank (srun's
    --cpus-per-task, which srun >= 22.05 does not take from the allocation), the same
    mpirun placement and the same OpenMP threads."""
    run_with, jobs, drivers, extras = scripts
    launcher = "srun" if run_with == "srun" else "mpirun"
    bind = binding({**extras, "launcher": launcher}, 1)
    assert bind[0] == "--cpus-per-task=2" if launcher == "srun" else bind[:2] == ["--map-by",
                                                                                  "ppr:1:node"]
    threads = {"export OMP_NUM_THREADS=2", "export OMP_PROC_BIND=close",
               "export OMP_PLACES=cores"}

    def contains(line: list[str]) -> bool:
        return any(line[i:i + len(bind)] == bind for i in range(len(line)))

    hpl = [s for s in jobs if "Capacity" not in str(s)]
    capacity = [s for s in jobs if "Capacity" in str(s)]
    assert len(hpl) == 3 and len(capacity) == 2
    for script in hpl:
        assert contains(launch_line(script, launcher)), script.read_text()
        assert threads <= set(script.read_text().splitlines())
    for script in capacity:
        assert threads <= set(script.read_text().splitlines())
    for driver in drivers:
        loops = [line for line in words(driver.read_text()) if line[0] == "loop"]
        assert loops and all(contains(line) for line in loops), driver.read_text()


# --- operator mistakes, caught before ReFrame --------------------------------------------------

@pytest.mark.parametrize("edit, field, says", [
    (lambda d: d.pop("launcher"), "launcher", "no launcher: section"),
    (lambda d: d["launcher"].update(modules_system="lmod", system_binaries=True),
     "launcher.modules_system", "modules_system lmod: not usable on this machine"),
    (lambda d: d["launcher"].update(spack_view="/nonexistent/view"), "launcher.spack_view",
     "no Spack view /nonexistent/view"),
], ids=["no-launcher", "lmod", "no-view"])
def test_operator_mistakes_are_one_line_before_reframe(tmp_path, edit, field, says) -> None:
    conf = yaml.safe_load(EXAMPLE.read_text())
    edit(conf)
    out = dry_run(tmp_path, conf, "op")
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    assert f"cluster64.yaml: {field}: {says}" in out.stderr and "fix:" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert not list((tmp_path / "work").rglob("rfm_job.sh"))


def test_a_plane_name_reframe_refuses_stops_the_dry_run_in_one_line(tmp_path) -> None:
    conf = yaml.safe_load(EXAMPLE.read_text())
    conf["planes"]["fat tree"] = conf["planes"].pop("fattree")
    conf["launcher"]["system_binaries"] = True
    systems = tmp_path / "systems"
    write_conf(systems, conf)
    env = env_for(tmp_path, campaign="name", T2HX_CONF_SYSTEMS=str(systems),
                  T2HX_STUDY=str(STUDY))
    out = subprocess.run([T2HX, "campaign", "dry-run", "--system", "cluster64", "--campaign",
                          "name"], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr
    assert out.stderr.count("\n") == 1 and "planes.fat tree: plane name" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr
