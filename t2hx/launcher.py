"""How jobs start on a real cluster: the ``launcher:`` section of a system conf and the launch
lines built from it.

The schema is data (every field's type, default and meaning); :func:`launcher_of` validates a
conf's section once, when the conf loads, so a typo is one line naming the file and field
before ReFrame starts. :mod:`t2hx.reframe_site` turns it into ReFrame partitions;
checks/capacity.py starts several MPI jobs inside one allocation with
:func:`launch_command`, i.e. the way the partition starts an ordinary case.

Site options (Slurm partition, account, sbatch options, modules, environment, commands run
before a job) are given once for every plane and may be overridden per plane
(``launcher.planes.<plane>``): a site whose HyperX plane has its own Slurm partition or QoS
says so here, not in code. Open MPI MCA parameters are set as ``OMPI_MCA_*`` variables so
they reach every rank whichever launcher starts it (mpirun forwards them, srun inherits them).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

from t2hx.errors import ConfError
from t2hx.schema import F, one_line, validate

def _sbatch_option(value: str) -> str | None:
    if one_line(value):
        return one_line(value)
    return None if value.startswith("-") else "an sbatch option such as --exclusive or --qos=high"


def _env_name(value: dict) -> str | None:
    bad = [k for k in value if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(k))]
    return f"'{bad[0]}' is not an environment variable name" if bad else None


def _mca_name(value: dict) -> str | None:
    bad = [k for k in value if not re.fullmatch(r"[a-z0-9_]+", str(k))]
    return f"'{bad[0]}' is not an MCA parameter name (e.g. btl_openib_max_lmc)" if bad else None


SCALAR = F((str, int, float), check=one_line)

# What a site may set for all planes (launcher.<key>) and per plane (launcher.planes.<p>.<key>).
SITE = {
    "partition": F(str, default=None, check=one_line,
                   doc="Slurm partition of the jobs, e.g. partition: batch"),
    "account": F(str, default=None, check=one_line, doc="Slurm account, e.g. account: proj42"),
    "sbatch_options": F(list, default=[], items=F(str, check=_sbatch_option),
                        doc="extra #SBATCH options, e.g. [--exclusive, --qos=high, "
                        "--reservation=hyperx]"),
    "modules": F(list, default=[], items=F(str, check=one_line),
                 doc="environment modules every job loads (needs modules_system), "
                 "e.g. [openmpi/4.1.4-parx]"),
    "env": F(dict, default={}, values=SCALAR, check=_env_name,
             doc="environment variables of every job, e.g. {UCX_TLS: rc}"),
    "prepare_cmds": F(list, default=[], items=F(str, check=one_line),
                      doc="shell lines run at the start of every job script"),
}

# Per plane, an unset key falls back to the launcher's own (None: not given).
PLANE_SITE = {key: replace(spec, default=None) for key, spec in SITE.items()}

LAUNCHER = {
    "kind": F(str, default="mpirun", choices=("mpirun", "slurm"),
              doc="mpirun (hostfile, no batch system) or slurm (sbatch with --nodelist)"),
    "scheduler": F(str, default="slurm", choices=("slurm", "squeue"),
                   doc="kind slurm: ReFrame's backend, slurm (polls with sacct: needs "
                   "accounting) or squeue (Slurm without accounting)"),
    "run_with": F(str, default="srun", choices=("srun", "mpirun"),
                  doc="kind slurm: srun (ranks in hostfile order through SLURM_HOSTFILE) or "
                  "mpirun --hostfile inside the allocation"),
    "srun_mpi": F(str, default=None, check=one_line,
                  doc="srun's --mpi plugin, e.g. srun_mpi: pmix (Open MPI 4 built with PMIx); "
                  "default: the cluster's MpiDefault"),
    "hostnames": F(list, default=[], items=F(str),
                   doc="regexes of the login/head nodes, so ReFrame picks the system itself"),
    "mpirun": F(str, default="mpirun", check=one_line, doc="the mpirun command"),
    "options": F(list, default=[], items=F(str, check=one_line),
                 doc="extra options of srun or mpirun for every run, e.g. [--bind-to, none]"),
    "max_jobs": F(int, default=1, min=1,
                  doc="concurrent jobs per plane (1: exclusive capability runs; a plane's "
                  "combos need different routings, so keep 1 on planes with several)"),
    "modules_system": F(str, default="nomod",
                        choices=("nomod", "lmod", "tmod", "tmod31", "tmod32", "tmod4",
                                 "envmod", "spack"),
                        doc="how `modules:` are loaded (ReFrame's modules systems)"),
    "mca": F(dict, default={}, values=SCALAR, check=_mca_name,
             doc="Open MPI MCA parameters of every job, e.g. {btl_openib_allow_ib: 1}"),
    "engine_mca": F(dict, default={}, values=F(dict, values=SCALAR, check=_mca_name),
                    doc="MCA parameters per routing engine over t2hx's defaults (parx: the "
                    "PARX patch's, ENGINE_MCA), e.g. {parx: {pml_ob1_parx_threshold: 1024}}"),
    "spack_env": F(str, default="spack-env", doc="Spack environment directory (from the root)"),
    "spack_view": F(str, default="spack-env/view",
                    doc="the environment's view (from the root, or absolute): the binaries every "
                    "job runs, built once on the login node by `spack -e spack-env install`"),
    **SITE,
    "planes": F(dict, default={}, values=F(dict, fields=PLANE_SITE),
                doc="per-plane site options, e.g. planes: {hyperx: {partition: hx}}"),
}

#: MCA parameters a routing engine needs in MPI. PARX: the usage line of our Open MPI patch
#: (patches/openmpi/4.1-parx-lid-selection.patch): ob1 with one openib module per LID picks
#: each message's destination LID by Table 1; without them every message takes base LIDs.
ENGINE_MCA: dict[str, dict[str, object]] = {
    "parx": {"pml": "ob1", "btl": "openib,self,vader", "btl_openib_max_lmc": 4,
             "pml_ob1_parx_enable": 1, "pml_ob1_parx_threshold": 512},
}


def launcher_of(raw: dict, planes: list[str], source: object) -> dict:
    """The validated ``launcher:`` section ({} when the conf has none: no real system)."""
    if not raw:
        return {}
    spec = validate(raw, LAUNCHER, source, "launcher")
    for plane in spec["planes"]:
        if plane not in planes:
            raise ConfError(f"no plane '{plane}'", file=source, field=f"launcher.planes.{plane}",
                            fix=f"use one of: {', '.join(planes)}")
    return spec


def plane_site(spec: dict, plane: str) -> dict:
    """The site options of one plane: the plane's own where given, else the launcher's;
    environment variables merge (the plane's win)."""
    own = spec["planes"].get(plane, {})
    out = {key: spec[key] if own.get(key) is None else own[key] for key in SITE}
    out["env"] = {**spec["env"], **(own.get("env") or {})}
    return out


def engine_mca(spec: dict, engine: str) -> dict[str, object]:
    """MCA parameters of a job routed by ``engine``: the launcher's, then the engine's
    defaults, then the site's overrides for that engine."""
    return {**spec.get("mca", {}), **ENGINE_MCA.get(engine, {}),
            **spec.get("engine_mca", {}).get(engine, {})}


def mca_env(params: dict[str, object]) -> dict[str, str]:
    return {f"OMPI_MCA_{k}": str(v) for k, v in params.items()}


def sbatch_access(site: dict) -> list[str]:
    """The partition's #SBATCH lines beyond the case's own (ReFrame ``access``)."""
    access = [f"--partition={site['partition']}"] if site["partition"] else []
    if site["account"]:
        access.append(f"--account={site['account']}")
    return access + list(site["sbatch_options"])


def launch_command(extras: dict, hostfile: str, ranks: int, ranks_per_node: int) -> list[str]:
    """How the partition starts ``ranks`` ranks on the nodes of ``hostfile`` (in its order),
    as a command prefix; the program and its arguments follow. The capacity driver uses it
    to start each app inside the mix's one allocation."""
    opts = list(extras.get("launcher_options", []))
    if extras.get("launcher") == "srun":
        # Inside the allocation each app is one job step on its own nodes; the hostfile
        # orders the ranks (--distribution=arbitrary).
        nodes = len(dict.fromkeys(read_hosts(hostfile)))
        return ["env", f"SLURM_HOSTFILE={hostfile}", "srun", f"--ntasks={ranks}",
                f"--nodes={nodes}", *opts]
    return [extras.get("mpirun", "mpirun"), *opts, "--hostfile", hostfile, "-np", str(ranks),
            "--map-by", f"ppr:{ranks_per_node}:node"]


def read_hosts(hostfile: str) -> list[str]:
    with open(hostfile) as fh:
        return [line.split()[0] for line in fh if line.split() and not line.startswith("#")]


def shell_line(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)
