"""Generate ReFrame's site configuration from ``conf/systems/*.yaml`` (no hand-kept copy).

``conf/reframe.py`` calls :func:`site_configuration` at import time. For every conf system:

* a **real** ReFrame system named after it (only when its conf has a ``launcher:`` section),
  one partition per plane. MPI traffic is pinned to the plane's HCA (Open MPI openib BTL
  ``btl_openib_if_include`` and UCX ``UCX_NET_DEVICES``, both ``<hca>:1``). Launcher
  ``mpirun`` with the case's hostfile (scheduler ``local``: capability runs are exclusive and
  sequential) or, with ``launcher: {kind: slurm}``, ``srun`` inside an allocation pinned by
  ``--nodelist`` (ranks in hostfile order via ``SLURM_HOSTFILE``).
* a partition ``<system>-<plane>`` of the **sim** system per plane of every simulated system
  (:func:`simulated_systems`): the checks run ``t2hx simulate`` (the flow model on the
  plane's real OpenSM routing) instead of MPI.

Every partition has a feature ``routing_<engine>`` per engine of its plane's
``opensm.routing``; combos ask for theirs (t2hx.study.Combo.partition).

Plus the **local** system (this machine, real Open MPI, the binaries of the Spack view
``T2HX_SPACK_VIEW``; 2–4 ranks oversubscribed over shared memory). The perflog
handler (format from :mod:`t2hx.post.perflog`) writes under ``log/<campaign>/perflogs/``;
the campaign is ``$T2HX_CAMPAIGN`` (default ``default``).

Environment: ``T2HX_SIM_SYSTEMS`` (comma list of the conf systems to simulate, default the
selected study's own; ``t2hx campaign --system sim:NAME`` sets it),
``T2HX_CONF_SYSTEMS`` (directory of system files, default conf/systems),
``T2HX_LOG_ROOT`` (default log/), ``T2HX_WORK_ROOT`` (stage/output dirs, default work/),
``T2HX_SPACK_VIEW`` (the `local` system's Spack view, default spack-env/view).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from t2hx import ROOT, reframe_deprecations
from t2hx.conf import System, load_system
from t2hx.paths import conf_dir, hostfiles_root, log_root, spack_view, work_root
from t2hx.errors import ConfError
from t2hx.launcher import engine_mca, job_env, mca_env, plane_site, sbatch_access
from t2hx.study import LOG_NAME_RE
from t2hx.wire import PERFLOG_FORMAT

CAMPAIGN_ENV = "T2HX_CAMPAIGN"
LOCAL_SLURM_ENV = "T2HX_LOCAL_SLURM"
SIM_SYSTEMS_ENV = "T2HX_SIM_SYSTEMS"     # conf systems the sim partitions cover (comma list)
NAME_RE = LOG_NAME_RE

def campaign() -> str:
    name = os.environ.get(CAMPAIGN_ENV) or "default"
    if not NAME_RE.match(name):
        raise ConfError(f"campaign name {name!r}", field=CAMPAIGN_ENV,
                        fix="use letters, digits, '-' and '_' only")
    return name





def load_systems(directory: Path | None = None) -> list[System]:
    directory = directory or conf_dir()
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise ConfError("no system files", file=directory,
                        fix="add conf/systems/<name>.yaml (see conf/systems/t2hx.yaml)")
    systems = [load_system(f) for f in files]
    for system in systems:
        if not NAME_RE.match(system.name) or system.name in ("sim", "local"):
            raise ConfError(f"system name {system.name!r} cannot name a ReFrame system",
                            file=system.path, field="name",
                            fix="letters, digits, '-', '_'; not 'sim' or 'local'")
    return systems


def usable_nodes(system: System) -> int:
    return system.nodes["racks"] * system.nodes["per_rack"] - len(system.nodes["down"])


def _common_extras(system: System, plane: str, mode: str) -> dict:
    return {"mode": mode, "conf_system": system.name, "conf_file": str(system.path),
            "plane": plane, "hca": system.plane(plane).hca, "nodes": usable_nodes(system),
            "cores": system.nodes["cores"], "routings": list(system.plane(plane).opensm["routing"]),
            "root": str(ROOT)}


def hca_pinning(hca: str) -> tuple[list[list[str]], list[str]]:
    """Environment and mpirun options that keep a job's MPI traffic on one plane's HCA."""
    port = f"{hca}:1"
    env = [["OMPI_MCA_btl_openib_if_include", port], ["UCX_NET_DEVICES", port]]
    opts = ["--mca", "btl_openib_if_include", port, "-x", "UCX_NET_DEVICES"]
    return env, opts


def view_env(view: Path) -> list[list[str]]:
    """Jobs run the binaries of the Spack environment's view: nothing is built or loaded per
    job (the view is built once; spack-env/README.md)."""
    return [["PATH", f"{view}/bin:{view}/sbin:$PATH"],
            ["LD_LIBRARY_PATH", f"{view}/lib:{view}/lib64:${{LD_LIBRARY_PATH:-}}"]]


def real_system(system: System) -> dict:
    """The real cluster: one partition per plane, site options from the conf's launcher
    section (t2hx/launcher.py; docs/cluster.md)."""
    spec = system.launcher
    parts = [real_partition(system, plane, spec) for plane in system.planes]
    return {"name": system.name, "descr": system.description.strip() or system.name,
            "hostnames": spec["hostnames"] or ["(?!)"],
            "modules_system": spec["modules_system"], "partitions": parts}


def real_partition(system: System, plane: str, spec: dict) -> dict:
    site = plane_site(spec, plane)
    env, opts = hca_pinning(system.plane(plane).hca)
    extras = _common_extras(system, plane, "real")
    opensm = system.plane(plane).opensm
    # Per engine: the MPI side of the routing (PARX's MCA parameters, docs/cluster.md).
    mca = {engine: mca_env(engine_mca(spec, engine)) for engine in opensm["routing"]}
    extras.update(spack_env=str(ROOT / spec["spack_env"]),
                  spack_view=str(ROOT / spec["spack_view"]), mpirun=spec["mpirun"],
                  sm_via=opensm["sm"]["via"], mca=mca)
    # The view's PATH first, the site's entries after it (t2hx.launcher.job_env).
    env = env + job_env(ROOT / spec["spack_view"], site["env"])
    part = {"name": plane, "descr": f"{system.name} plane {plane} "
            f"({system.plane(plane).hca}, {system.plane(plane).topology['kind']})",
            "max_jobs": spec["max_jobs"], "environs": ["spack"],
            "features": ["real", "spack", f"plane_{plane}"], "env_vars": env,
            "modules": list(site["modules"]), "prepare_cmds": list(site["prepare_cmds"]),
            "extras": extras}
    mpirun_opts = opts + spec["options"]
    if spec["kind"] == "slurm":
        part.update(scheduler=spec["scheduler"], access=sbatch_access(site),
                    resources=[{"name": "nodelist", "options": ["--nodelist={nodelist}"]}])
        if spec["run_with"] == "srun":
            mpi = [f"--mpi={spec['srun_mpi']}"] if spec["srun_mpi"] else []
            part["launcher"] = "srun"
            extras.update(launcher="srun", hostfile_env="SLURM_HOSTFILE",
                          launcher_options=["--distribution=arbitrary", *mpi, *spec["options"]])
            return part
        part["launcher"] = "mpirun"    # inside the allocation: Slurm enforces the walltime
    else:
        part.update(scheduler="local", launcher=WALLTIME_LAUNCHER)
    extras.update(launcher="mpirun", hostfile_option="--hostfile",
                  launcher_options=mpirun_opts)
    return part


def sim_system(systems: list[System]) -> dict:
    """One partition per plane of every simulated system (:func:`simulated_systems`). The
    conf's ``simulate:`` section picks the scheduler: this machine, or one batch job per case
    on a Slurm cluster."""
    parts = []
    for system in simulated_systems(systems):
        for plane in system.planes:
            parts.append({
                "name": f"{system.name}-{plane}",
                "descr": f"simulated {system.name} plane {plane} (t2hx.flowsim)",
                "launcher": "local", "environs": ["openmpi"],
                "features": ["sim", f"plane_{plane}"],
                "extras": _common_extras(system, plane, "sim"), **sim_scheduler(system)})
    return {"name": "sim", "descr": "the conf systems, simulated by t2hx.flowsim",
            "hostnames": ["(?!)"], "modules_system": "nomod", "partitions": parts}


def simulated_systems(systems: list[System]) -> list[System]:
    """The systems the sim partitions cover: the conf systems ``$T2HX_SIM_SYSTEMS`` names
    (set by ``t2hx campaign run --system sim:NAME[,NAME]``), else the selected study's own
    (its ``system:`` and the systems its combos name), each only once it has hostfiles
    (``t2hx hostfiles --system S``; the campaign CLI says so in one line). Nothing else is
    simulated: a port's campaign never reruns another system's cases
    (docs/studies.md#selecting-the-simulated-systems)."""
    from t2hx.study import load_study

    study = load_study()
    names = sim_selection(study)
    return [s for s in systems if s.name in names and
            (not study.needs_hostfiles(s.name) or (hostfiles_root() / s.name).is_dir())]


def sim_selection(study=None) -> list[str]:
    """Names of the conf systems to simulate: ``$T2HX_SIM_SYSTEMS`` or the study's own."""
    from t2hx.study import load_study

    asked = [n.strip() for n in os.environ.get(SIM_SYSTEMS_ENV, "").split(",") if n.strip()]
    return asked or (study or load_study()).own_systems()


def slurm_access(partition: str | None, account: str | None, options: list[str]) -> list[str]:
    return sbatch_access({"partition": partition, "account": account, "sbatch_options": options})


def sim_scheduler(system: System) -> dict:
    """Scheduler, access and job slots of a sim partition. Locally each plane may use every
    core: the planes' loads are unequal (seed 000 has four HyperX combos to one Fat-Tree), so
    one case per plane left a core idle for most of a campaign once the lighter plane was
    done; while both are busy the kernel shares the cores between them."""
    spec = system.simulate
    if spec["scheduler"] == "local":
        return {"scheduler": "local", "max_jobs": spec["max_jobs"] or os.cpu_count() or 1}
    return {"scheduler": spec["scheduler"], "max_jobs": spec["max_jobs"] or 1,
            "access": slurm_access(spec["partition"], spec["account"], spec["options"])}


def local_slurm_partition(default: dict) -> list[dict]:
    """``local:slurm``: the cases of ``local:default`` (same binaries, environment, extras),
    submitted with sbatch to the Slurm partition named by ``$T2HX_LOCAL_SLURM`` (absent when
    unset: most machines have no Slurm). Ranks start with mpirun inside the allocation
    (Debian's Slurm has no PMIx plugin for Debian's Open MPI), under the job's walltime."""
    partition = os.environ.get(LOCAL_SLURM_ENV)
    if not partition:
        return []
    part = copy.deepcopy(default)
    part.update(name="slurm", scheduler="squeue", access=slurm_access(partition, None, []),
                features=[*default.get("features", []), "slurm"])
    return [part]


LOCAL_RANKS = 4     # the most ranks a local case may ask for (oversubscribed on few cores)


def local_ranks() -> int:
    """LOCAL_RANKS, or more when ``$T2HX_LOCAL_NODES`` asks for more (`t2hx calibrate
    --ranks 1,2,4,8` oversubscribes on purpose; its byte counts do not depend on cores)."""
    from t2hx.study import LOCAL_NODES_ENV

    asked = [int(v) for v in os.environ.get(LOCAL_NODES_ENV, "").split(",") if v.strip().isdigit()]
    return max([LOCAL_RANKS, *asked])
# Open MPI on one machine: shared memory only, more ranks than cores allowed, and started
# as root too (containers and CI runners run as root; mpirun refuses otherwise).
LOCAL_MPIRUN_OPTIONS = ["--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader"]


def local_system() -> dict:
    """This machine with real Open MPI and the binaries of the Spack view
    (``T2HX_SPACK_VIEW``, default spack-env/view): a case runs only when the view holds its
    benchmark's ``local_binary`` (t2hx/checks/base.py says which were left out and why)."""
    view = spack_view()
    system: dict[str, Any] = {"name": "local", "descr": "this machine: real Open MPI, the Spack view's binaries",
                                "hostnames": [".*"], "modules_system": "nomod",
                                "partitions": [{
                                    "name": "default", "scheduler": "local", "launcher": WALLTIME_LAUNCHER,
                                    "environs": ["openmpi"], "max_jobs": 1, "features": ["local"],
                                    "env_vars": view_env(view),
                                    "extras": {"mode": "local", "conf_system": "local", "plane": "local",
                                               "hca": None, "nodes": local_ranks(), "cores": 1, "routings": [],
                                               "root": str(ROOT), "spack_view": str(view),
                                               "launcher_options": list(LOCAL_MPIRUN_OPTIONS)}}]}
    system["partitions"] += local_slurm_partition(system["partitions"][0])
    return system


def add_routing_features(rf_system: dict) -> None:
    """A feature per engine of a partition's plane (``extras['routings']``, the conf's
    ``opensm.routing``): a combo asks for its engine (t2hx.study.Combo.partition), so a
    plane that does not route with it never gets the combo's cases."""
    from t2hx.study import routing_feature

    for part in rf_system["partitions"]:
        engines = part.get("extras", {}).get("routings", [])
        part["features"] = [*part.get("features", []), *map(routing_feature, engines)]


# ReFrame must write one perflog line per performance variable: t2hx.post.perflog reads
# one line as one value.
LOGGING_OPTIONS = {"perflog_multiline": True}


def perflog_handler(basedir: str) -> dict:
    """The ``logging.handlers_perflog`` entry: files under basedir in t2hx's perflog format
    (t2hx/wire.py)."""
    # basedir, not an absolute prefix: ReFrame's --perflogdir (RFM_PERFLOG_DIR) replaces it,
    # which is how a dry run keeps its (valueless) records out of the campaign.
    return {"type": "filelog", "basedir": f"{basedir}/perflogs",
            "prefix": "%(check_system)s/%(check_partition)s", "level": "info",
            "format": PERFLOG_FORMAT, "append": True}


_REGISTERED = False
WALLTIME_LAUNCHER = "t2hx-mpirun"


def register_launchers() -> None:
    """``t2hx-mpirun``: mpirun under ``timeout`` so the study's walltime holds even without a
    batch system (visible in every job script; ReFrame's local scheduler only polls)."""
    global _REGISTERED
    if _REGISTERED:
        return
    from reframe.core.backends import register_launcher
    from reframe.core.launchers import JobLauncher

    @register_launcher(WALLTIME_LAUNCHER)
    class WalltimeMpirun(JobLauncher):
        def command(self, job):
            head = []
            if job.time_limit:
                head = ["timeout", "--signal=TERM", "--kill-after=30", str(int(job.time_limit))]
            return head + ["mpirun", "-np", str(job.num_tasks)]

    _REGISTERED = True


def site_configuration(systems: list[System] | None = None) -> dict:
    register_launchers()
    reframe_deprecations.install()    # loading the checks: t2hx/reframe_deprecations.py
    systems = systems if systems is not None else load_systems()
    name = campaign()
    logdir = log_root() / name
    workdir = work_root() / "reframe" / name
    workdir.mkdir(parents=True, exist_ok=True)  # ReFrame's file log handler needs it
    rf_systems = [real_system(s) for s in systems if s.launcher]
    sim = sim_system(systems)
    # ReFrame rejects a system without partitions: nothing to simulate, no sim system
    # (`t2hx campaign --system sim...` says which hostfiles are missing first).
    rf_systems += [sim] if sim["partitions"] else []
    rf_systems += [local_system()]
    for rf in rf_systems:
        rf["stagedir"] = str(workdir / "stage")
        rf["outputdir"] = str(workdir / "output")
        add_routing_features(rf)
    mpicc = {"cc": "mpicc", "cxx": "mpicxx", "ftn": "mpif90"}
    return {
        "systems": rf_systems,
        "environments": [
            {"name": "openmpi", **mpicc},
            {"name": "spack", "features": ["spack"], **mpicc},
        ],
        "logging": [{
            # verbose, not debug: debug logging is ~40 % of a dry run's time.
            "level": "verbose",
            **LOGGING_OPTIONS,
            "handlers": [
                {"type": "file", "name": str(workdir / "reframe.log"), "level": "verbose",
                 "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s",
                 "append": True},
                {"type": "stream", "name": "stdout", "level": "info",
                 "format": "%(message)s"},
            ],
            # Only finished cases emit perflog lines, so a dry run leaves the campaign alone.
            "handlers_perflog": [perflog_handler(str(logdir))],
        }],
        "general": [{
            "check_search_path": [str(ROOT / "checks")],
            # Session reports are ReFrame's, not the campaign's records: `t2hx campaign run`
            # asks for one in log/<campaign>/reframe/ (--report-file).
            "report_file": str(workdir / "reports" / "report-{sessionid}.json"),
        }],
    }
