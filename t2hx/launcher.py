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

Every value that reaches a job script is checked here to be one word of its kind, or is
quoted where it is written (ReFrame writes env values, launcher options and #SBATCH lines as
given): a conf adds no command and no line to a job. Options and variables t2hx sets itself
are refused, so a site value never silently wins or loses (docs/cluster.md).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from t2hx.errors import ConfError
from t2hx.routing_engines import routing_engine
from t2hx.schema import F, one_line, validate

#: sbatch options t2hx sets itself from the study and the case (ReFrame's #SBATCH lines, the
#: case's --nodelist) or from their own launcher fields: a site option repeating one would
#: give two such lines, and which one Slurm keeps is not the conf's to decide.
OWN_SBATCH = {
    "--time": "the study's walltime", "-t": "the study's walltime",
    "--nodelist": "the case's hostfile", "-w": "the case's hostfile",
    "--nodes": "the case", "-N": "the case", "--ntasks": "the case", "-n": "the case",
    "--ntasks-per-node": "the study's ranks_per_node",
    "--cpus-per-task": "nodes.cores", "-c": "nodes.cores",
    "--job-name": "ReFrame", "-J": "ReFrame", "--output": "ReFrame", "-o": "ReFrame",
    "--error": "ReFrame", "-e": "ReFrame", "--chdir": "ReFrame", "-D": "ReFrame",
    "--partition": "launcher.partition", "-p": "launcher.partition",
    "--account": "launcher.account", "-A": "launcher.account",
}
#: One sbatch option as one word: ``--name[=value]`` or ``-x[value]``, the value without
#: spaces, quotes or shell characters (sbatch reads #SBATCH lines with its own word rules).
SBATCH_WORD = re.compile(r"(--[A-Za-z][A-Za-z0-9-]*|-[A-Za-z])(=?[A-Za-z0-9_.,:=/@%+-]*)")
#: Names the job script holds as they are (ReFrame writes them unquoted): Slurm partitions
#: and accounts, module names, srun's MPI plugin, paths.
NAME = re.compile(r"[A-Za-z0-9_.,+-]+")
MODULE = re.compile(r"[A-Za-z0-9_.,+@:/-]+")
PATH_WORD = re.compile(r"[A-Za-z0-9_.,+@:/=-]+")
#: Environment variables t2hx sets itself: OpenMP from nodes.cores (the rank's threads), the
#: plane's HCA pinning, srun's hostfile. A site value would silently override, or be
#: overridden by, t2hx's own (docs/cluster.md#the-jobs-environment).
OWN_ENV = {"OMP_NUM_THREADS": "nodes.cores", "OMP_PROC_BIND": "t2hx (close)",
           "OMP_PLACES": "t2hx (cores)", "SLURM_HOSTFILE": "the case's hostfile",
           "UCX_NET_DEVICES": "the plane's hca", "OMPI_MCA_btl_openib_if_include":
           "the plane's hca"}
#: Search paths a site may extend: joined after the Spack view's entries, before the
#: inherited value (docs/cluster.md#the-jobs-environment).
PATH_LISTS = ("PATH", "LD_LIBRARY_PATH")


def sbatch_option(value: str) -> str | None:
    word = SBATCH_WORD.fullmatch(value)
    if not word:
        return (f"{value[:60]!r} is not one sbatch option word such as --exclusive or "
                "--qos=high (no spaces, quotes or shell characters)")
    name = word.group(1)
    if name in OWN_SBATCH:
        return f"{name} is set by t2hx from {OWN_SBATCH[name]}: drop it from sbatch_options"
    return None


def word_check(pattern: re.Pattern, what: str) -> Callable[[object], str | None]:
    """A check that a value is one word of ``pattern``'s characters (it reaches a job script
    as it is)."""
    def check(value: object) -> str | None:
        if isinstance(value, list):
            bad = [v for v in value if not pattern.fullmatch(str(v))]
            return f"{str(bad[0])[:60]!r} is not {what}" if bad else None
        return None if pattern.fullmatch(str(value)) else f"{str(value)[:60]!r} is not {what}"
    return check


def _literal(value: object) -> str | None:
    """A value t2hx quotes into the script: literal text, so no expansions that would
    silently stay unexpanded."""
    text = str(value)
    if one_line(text):
        return one_line(text)
    return (f"{text[:60]!r} asks the shell to expand '$' or '`': values are written "
            "literally (quoted)") if "$" in text or "`" in text else None


def _env(value: dict) -> str | None:
    bad = [k for k in value if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(k))]
    if bad:
        return f"'{bad[0]}' is not an environment variable name"
    own = [k for k in value if k in OWN_ENV or str(k).startswith("OMPI_MCA_")]
    if own:
        key = own[0]
        by = OWN_ENV.get(key, "launcher.mca (MCA parameters)")
        return f"{key} is set by t2hx from {by}: drop it from env (set {by} instead)"
    return None


def _mca_name(value: dict) -> str | None:
    bad = [k for k in value if not re.fullmatch(r"[a-z0-9_]+", str(k))]
    return f"'{bad[0]}' is not an MCA parameter name (e.g. btl_openib_max_lmc)" if bad else None


def _regexes(value: list) -> str | None:
    for item in value:
        try:
            re.compile(str(item))
        except re.error as err:
            return f"{str(item)[:60]!r} is not a regular expression ({err})"
    return None


SCALAR = F((str, int, float), check=_literal)

# What a site may set for all planes (launcher.<key>) and per plane (launcher.planes.<p>.<key>).
SITE = {
    "partition": F(str, default=None, check=word_check(NAME, "a Slurm partition name"),
                   doc="Slurm partition of the jobs, e.g. partition: batch"),
    "account": F(str, default=None, check=word_check(NAME, "a Slurm account name"),
                 doc="Slurm account, e.g. account: proj42"),
    "sbatch_options": F(list, default=[], items=F(str, check=sbatch_option),
                        doc="extra #SBATCH options, e.g. [--exclusive, --qos=high, "
                        "--reservation=hyperx]"),
    "modules": F(list, default=[], items=F(str, check=word_check(MODULE, "a module name")),
                 doc="environment modules every job loads (needs modules_system), "
                 "e.g. [openmpi/4.1.4-parx]"),
    "env": F(dict, default={}, values=SCALAR, check=_env,
             doc="environment variables of every job, literal values, e.g. {UCX_TLS: rc}; "
             "PATH and LD_LIBRARY_PATH are joined after the Spack view's"),
    # The one field that is shell code by design: the site's own lines, run as written.
    "prepare_cmds": F(list, default=[], items=F(str, check=one_line),
                      doc="shell lines run at the start of every job script, as written"),
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
    "srun_mpi": F(str, default=None, check=word_check(NAME, "an srun --mpi plugin name"),
                  doc="srun's --mpi plugin, e.g. srun_mpi: pmix (Open MPI 4 built with PMIx); "
                  "default: the cluster's MpiDefault"),
    "hostnames": F(list, default=[], items=F(str), check=_regexes,
                   doc="regexes of the login/head nodes, so ReFrame picks the system itself"),
    "mpirun": F(str, default="mpirun", check=word_check(PATH_WORD, "one command word"),
                doc="the mpirun command, e.g. /opt/openmpi/bin/mpirun"),
    "options": F(list, default=[], items=F(str, check=one_line),
                 doc="extra options of srun or mpirun for every run, e.g. [--bind-to, none]"),
    "max_jobs": F(int, default=1, min=1,
                  doc="concurrent jobs per plane (1: exclusive capability runs; a plane's "
                  "combos need different routings, so keep 1 on planes with several)"),
    "modules_system": F(str, default="nomod",
                        choices=("nomod", "lmod", "envmod", "tmod4", "spack"),
                        doc="how `modules:` are loaded (ReFrame's modules systems)"),
    "mca": F(dict, default={}, values=SCALAR, check=_mca_name,
             doc="Open MPI MCA parameters of every job, e.g. {btl_openib_allow_ib: 1}"),
    "engine_mca": F(dict, default={}, values=F(dict, values=SCALAR, check=_mca_name),
                    doc="MCA parameters per routing engine over t2hx's defaults (parx: the "
                    "PARX patch's, the engine table's mca column), e.g. {parx: {pml_ob1_parx_threshold: 1024}}"),
    "spack_env": F(str, default="spack-env", check=word_check(PATH_WORD, "a path without spaces"),
                   doc="Spack environment directory (from the root)"),
    "spack_view": F(str, default="spack-env/view", check=word_check(PATH_WORD,
                                                               "a path without spaces"),
                    doc="the environment's view (from the root, or absolute): the binaries every "
                    "job runs, built once on the login node by `spack -e spack-env install`"),
    "system_binaries": F(bool, default=False,
                         doc="true: jobs may run the binaries the nodes' PATH has (HPL as "
                         "Debian's hpcc) when spack_view is absent; false: a campaign on the "
                         "real cluster refuses to start without the view"),
    **SITE,
    "planes": F(dict, default={}, values=F(dict, fields=PLANE_SITE),
                doc="per-plane site options, e.g. planes: {hyperx: {partition: hx}}"),
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
    return {**spec.get("mca", {}), **routing_engine(engine).mca,
            **spec.get("engine_mca", {}).get(engine, {})}


def mca_env(params: dict[str, object]) -> dict[str, str]:
    """MCA parameters as the job's environment, each value quoted as one shell word (ReFrame
    writes ``export NAME=value`` as given)."""
    return {f"OMPI_MCA_{k}": shlex.quote(str(v)) for k, v in params.items()}


def job_env(view: Path, site_env: dict) -> list[list[str]]:
    """The Spack view's and the site's environment as ReFrame env_vars, in the order the
    script exports them (docs/cluster.md#the-jobs-environment): the view's binaries and
    libraries first on their search paths, then the site's own entries for them, then the
    inherited value; every other site variable literal, one quoted word."""
    own = {name: str(site_env[name]) for name in PATH_LISTS if name in site_env}
    lists = {"PATH": [f"{view}/bin", f"{view}/sbin"],
             "LD_LIBRARY_PATH": [f"{view}/lib", f"{view}/lib64"]}
    inherited = {"PATH": "$PATH", "LD_LIBRARY_PATH": "${LD_LIBRARY_PATH:-}"}
    env = [[name, ":".join([*map(shlex.quote, lists[name]), *(
        [shlex.quote(own[name])] if name in own else []), inherited[name]])]
        for name in PATH_LISTS]
    return env + [[k, shlex.quote(str(v))] for k, v in site_env.items() if k not in PATH_LISTS]


def sbatch_access(site: dict) -> list[str]:
    """The partition's #SBATCH lines beyond the case's own (ReFrame ``access``)."""
    access = [f"--partition={site['partition']}"] if site["partition"] else []
    if site["account"]:
        access.append(f"--account={site['account']}")
    return access + list(site["sbatch_options"])


def thread_env(cores: int) -> dict[str, str]:
    """Every rank's OpenMP threads: ``nodes.cores`` of them, kept on the rank's cores. The
    same for a capability job and each step of a capacity mix."""
    return {"OMP_NUM_THREADS": str(cores), "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}


#: What mpirun forwards to its remote ranks besides MCA parameters (it forwards those
#: itself): the threads' settings and the Spack view's search paths.
MPIRUN_FORWARD = (*thread_env(1), "PATH", "LD_LIBRARY_PATH")


def binding(extras: dict, ranks_per_node: int) -> list[str]:
    """Launcher options giving each rank its CPUs, the same words for a capability job and
    a capacity step. srun: ``--cpus-per-task`` (since Slurm 22.05 srun no longer takes it
    from the allocation's SLURM_CPUS_PER_TASK: without it every rank gets one CPU); mpirun:
    ranks per node, no core binding of its own (the OpenMP settings place the threads),
    the threads' environment forwarded."""
    if extras.get("launcher") == "srun":
        return [f"--cpus-per-task={extras['cores']}"]
    return ["--map-by", f"ppr:{ranks_per_node}:node", "--bind-to", "none",
            *[word for name in MPIRUN_FORWARD for word in ("-x", name)]]


def launch_command(extras: dict, hostfile: str, ranks: int, ranks_per_node: int) -> list[str]:
    """How the partition starts ``ranks`` ranks on the nodes of ``hostfile`` (in its order),
    as a command prefix; the program and its arguments follow. The capacity driver uses it
    to start each app inside the mix's one allocation, with the binding of a capability job
    of the same app (:func:`binding`)."""
    opts = list(extras.get("launcher_options", []))
    bind = binding(extras, ranks_per_node)
    if extras.get("launcher") == "srun":
        # Inside the allocation each app is one job step on its own nodes; the hostfile
        # orders the ranks (--distribution=arbitrary).
        nodes = len(dict.fromkeys(read_hosts(hostfile)))
        return ["env", f"SLURM_HOSTFILE={hostfile}", "srun", f"--ntasks={ranks}",
                f"--nodes={nodes}", *bind, *opts]
    return [extras.get("mpirun", "mpirun"), *opts, "--hostfile", hostfile, "-np", str(ranks),
            *bind]


def read_hosts(hostfile: str) -> list[str]:
    with open(hostfile) as fh:
        return [line.split()[0] for line in fh if line.split() and not line.startswith("#")]


def shell_line(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)
