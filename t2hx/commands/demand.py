"""``t2hx demand build|check|jobs|record``: PARX demand files from pml_monitoring profiles,
SAR job files, their validation against a system plane (before any OpenSM run), and
recording a benchmark's profile with real Open MPI into conf/profiles/.

The demand files' module and the fabric builder (numpy) are imported by the verbs:
``t2hx --help`` imports every command module."""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from pathlib import Path
from t2hx import argtypes as A

from t2hx.paths import profiles_root, work_root
from t2hx.errors import T2hxError
from t2hx.conf import load_system, system_path
from t2hx.atomic import atomic_write
from t2hx.benchmarks.hpl import HPCC, hpcc_input
from t2hx.grids import hpl_grid


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demand", help="build and check PARX demand / SAR job files",
                       description="Open MPI pml_monitoring profiles + hostfiles → node "
                       "demand file (0..255) for the parx routing engine; job files for sar.")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")

    b = verbs.add_parser("build", help="profiles + hostfiles of one or more jobs → demand file")
    b.add_argument("--job", nargs=2, action="append", required=True,
                   metavar=("PROFILE_PREFIX", "HOSTFILE"),
                   help="a profiled job: the pml_monitoring_filename prefix and the hostfile "
                   "of this run (repeat for several jobs)")
    b.add_argument("--out", required=True, type=A.output_file, help="demand file to write")
    _plane_args(b, required=False)
    b.set_defaults(func=cmd_build)

    c = verbs.add_parser("check", help="validate a demand or job file against a plane")
    c.add_argument("file", type=A.input_file, help="demand file (or job file with --jobs)")
    c.add_argument("--jobs", action="store_true", help="the file is a SAR job file")
    _plane_args(c, required=True)
    c.set_defaults(func=cmd_check)

    j = verbs.add_parser("jobs", help="hostfiles of running jobs → SAR job file")
    j.add_argument("--job", nargs=2, action="append", required=True,
                   metavar=("JOB_ID", "HOSTFILE"), help="a job id and its hostfile (repeat)")
    j.add_argument("--out", required=True, type=A.output_file, help="job file to write")
    _plane_args(j, required=False)
    j.set_defaults(func=cmd_jobs)

    r = verbs.add_parser("record", help="run a benchmark under real Open MPI with "
                         "pml_monitoring → conf/profiles/<benchmark>/<np>/",
                         description="Records the communication profile `t2hx campaign reroute` "
                         "looks up for parx: every rank's pml_monitoring file, plus "
                         "<benchmark>/<np>.json saying how it was recorded.")
    r.add_argument("--benchmark", required=True, type=A.name, help="study benchmark name, e.g. hpl")
    r.add_argument("--np", type=A.int_range(2, 1 << 20, what="ranks"), required=True,
                   help="MPI ranks (on this machine)")
    r.add_argument("--hpcc", metavar="N:NB", help="run Debian's hpcc with this HPL problem "
                   "(hpccinf.txt from its example, P x Q most square) instead of a command")
    r.add_argument("--input", action="append", default=[], type=A.input_file, metavar="FILE",
                   help="copy this file into the run's working directory (e.g. HPL.dat)")
    r.add_argument("--prefix", type=A.name, help="file prefix (default: the command's name)")
    r.add_argument("--out", default=None, type=A.output_dir,
                   help="profiles folder (default: where re-routing "
                   "reads them, $T2HX_PROFILES or conf/profiles)")
    r.add_argument("--timeout", type=A.seconds, default=1800, help="seconds for the run")
    r.add_argument("command", nargs=argparse.REMAINDER, help="after --: the MPI program")
    r.set_defaults(func=cmd_record)

    m = verbs.add_parser("model", help="a MODELLED profile (pml_monitoring format) from a "
                         "flow-model app skeleton; never into conf/profiles")
    m.add_argument("--benchmark", required=True, type=A.name,
                   help="app skeleton (t2hx.flowsim.apps)")
    m.add_argument("--np", type=A.int_range(2, 4096, what="ranks"), required=True, help="ranks")
    m.add_argument("--iterations", type=A.positive_int,
                   help="solver iterations (default: skeleton's)")
    m.add_argument("--out", default=str(work_root() / "profiles-modelled"), type=A.output_dir,
                   help="folder; files land in <out>/<benchmark>/<np>/modelled.<rank>.prof")
    m.set_defaults(func=cmd_model)


def _plane_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--system", required=required, type=A.system,
                   help="conf/systems/<sys>.yaml or its name "
                   "(validates node names and the HyperX shape)")
    p.add_argument("--plane", default=None, type=A.name,
                   help="plane name (default: hyperx; needs --system)")


def _fabric(args: argparse.Namespace):
    if not args.system:
        if args.plane is not None:      # it would be ignored: say so
            raise T2hxError("--plane needs --system", field="--plane",
                            fix="give --system too, or leave --plane out")
        return None
    from t2hx.fabric.build import build_plane

    return build_plane(load_system(system_path(args.system)), args.plane or "hyperx")


def cmd_build(args: argparse.Namespace) -> int:
    from t2hx.routing import demand as dm

    jobs = []
    for prefix, hostfile in args.job:
        matrix = dm.read_monitoring(prefix)
        jobs.append(dm.node_demand(matrix, dm.read_hostfile(hostfile), prefix))
    demand = dm.combine(jobs)
    path = dm.write_demand(demand, args.out, _fabric(args))
    pairs = sum(len(r) for r in demand.values())
    print(f"{path}: {len(demand)} source nodes, {pairs} node pairs from {len(jobs)} job(s)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from t2hx.routing import demand as dm

    fabric = _fabric(args)
    if args.jobs:
        jobs = dm.read_jobs(args.file)
        dm.validate_jobs(jobs, fabric, args.file)
        print(f"{args.file}: {len(jobs)} jobs OK for {fabric.name}")
    else:
        demand = dm.read_demand(args.file)
        dm.validate_demand(demand, fabric, args.file)
        print(f"{args.file}: {len(demand)} source nodes OK for {fabric.name}")
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    from t2hx.routing import demand as dm

    jobs = {job: list(dict.fromkeys(dm.read_hostfile(h))) for job, h in args.job}
    fabric = _fabric(args)
    if fabric is not None:
        dm.validate_jobs(jobs, fabric, args.out)
    atomic_write(Path(args.out), dm.render_jobs(jobs))
    print(f"{args.out}: {len(jobs)} jobs, {sum(len(h) for h in jobs.values())} nodes")
    return 0


def hpcc_grid_input(n: int, nb: int, ranks: int) -> tuple[str, int, int]:
    """hpccinf.txt with the most square P x Q grid (P <= Q), as the HPL check writes it."""
    p, q = hpl_grid(ranks)
    return hpcc_input(n, nb, p, q), p, q


def cmd_record(args: argparse.Namespace) -> int:
    from t2hx.routing import demand as dm

    command = [a for a in args.command if a != "--"]
    if args.np < 2:
        raise T2hxError(f"--np {args.np}: a profile needs two ranks or more", field="--np",
                        fix="pass --np 2 or more")
    if bool(args.hpcc) == bool(command):
        raise T2hxError("give either --hpcc N:NB or a command after --", field="command",
                        fix="e.g. --hpcc 1000:64, or -- ./a.out args")
    dest = (Path(args.out) if args.out else profiles_root()) / args.benchmark / str(args.np)
    with tempfile.TemporaryDirectory(prefix="t2hx-record-") as tmp:
        work = Path(tmp)
        for name in args.input:
            if not Path(name).is_file():
                raise T2hxError("no such input file", file=name, field="--input",
                                fix="pass an existing file")
            shutil.copyfile(name, work / Path(name).name)
        extra: dict = {"inputs": [Path(n).name for n in args.input]} if args.input else {}
        if args.hpcc:
            m = re.fullmatch(r"(\d+):(\d+)", args.hpcc)
            if not m or not HPCC.is_file():
                raise T2hxError(f"--hpcc {args.hpcc!r}" + ("" if HPCC.is_file() else
                                f": {HPCC} missing"), field="--hpcc",
                                fix="write N:NB, e.g. 1000:64 (needs Debian package hpcc)")
            text, p, q = hpcc_grid_input(int(m.group(1)), int(m.group(2)), args.np)
            (work / "hpccinf.txt").write_text(text)
            command = [str(HPCC)]
            extra = {"hpccinf.txt": text, "hpl": {"n": int(m.group(1)), "nb": int(m.group(2)),
                                                   "p": p, "q": q}}
        prefix = args.prefix or re.sub(r"[^A-Za-z0-9_-]", "_", Path(command[0]).name)
        print(f"recording {' '.join(command)} on {args.np} ranks (pml_monitoring) ...")
        info = dm.record_profile(command, args.np, dest, prefix, work, args.timeout,
                                 check=_hpcc_result if args.hpcc else None)
        if args.hpcc:
            shutil.copyfile(work / "hpccoutf.txt", dest.with_suffix(".hpccoutf.txt"))
    info.update(benchmark=args.benchmark, **extra)
    dm.write_record(info, dest.with_suffix(".json"))
    print(f"{dest}/{prefix}.<rank>.prof: {args.np} ranks, {info['bytes_total']} bytes; "
          f"how: {dest.with_suffix('.json')}")
    return 0


def _hpcc_result(work: Path) -> dict:
    """HPCC must have finished and HPL passed its residual check."""
    outf = work / "hpccoutf.txt"
    text = outf.read_text(errors="replace") if outf.is_file() else ""
    hpl = text[text.find("Begin of HPL section."):text.find("End of HPL section.")]
    if "End of HPC Challenge tests." not in text or "PASSED" not in hpl or "FAILED" in hpl:
        raise T2hxError("hpcc did not finish with HPL PASSED", file=outf,
                        fix="read hpccoutf.txt; the profile was not installed")
    tflops = re.search(r"^HPL_Tflops=(\S+)", text, re.M)
    return {"hpl_tflops": float(tflops.group(1)) if tflops else None,
            "hpcc_sections": re.findall(r"^Begin of (\w+) section\.", text, re.M)}


def cmd_model(args: argparse.Namespace) -> int:
    from t2hx.modelled_profiles import write_modelled_profile

    out = Path(args.out).resolve()
    real = profiles_root()
    if out == real or real in out.parents:
        raise T2hxError("modelled profiles must not go where recorded ones live", field="--out",
                        fix="write them elsewhere (default work/profiles-modelled)")
    if args.np < 2:
        raise T2hxError(f"--np {args.np}: a profile needs two ranks or more", field="--np",
                        fix="pass --np 2 or more")
    folder = out / args.benchmark / str(args.np)
    size = write_modelled_profile(args.benchmark, args.np, folder, "modelled",
                                     args.iterations)
    print(f"{folder}/modelled.<rank>.prof: MODELLED from the '{args.benchmark}' skeleton, "
          f"{int(size.sum())} bytes")
    return 0
