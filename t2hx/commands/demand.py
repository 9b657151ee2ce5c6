"""``t2hx demand build|check|jobs|record``: PARX demand files from pml_monitoring profiles,
SAR job files, their validation against a system plane (before any OpenSM run), and
recording a benchmark's profile with real Open MPI into conf/profiles/.

The demand files' module and the fabric builder (numpy) are imported by the verbs:
``t2hx --help`` imports every command module."""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from t2hx import argtypes as A

from t2hx.paths import profiles_root, work_root
from t2hx.errors import T2hxError
from t2hx.conf import load_system, system_path
from t2hx.atomic import atomic_write
from t2hx.benchmarks.hpl import HPCC, HPL_DAT, hpcc_input
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
                         "<benchmark>/<np>.json saying how it was recorded and <np>.out.txt "
                         "(the program's output). Installed only if the run completed.")
    r.add_argument("--benchmark", required=True, type=A.name,
                   help="the name re-routing looks up: the check's benchmark, e.g. hpl, "
                   "imb-bcast, mupp")
    r.add_argument("--np", type=A.int_range(2, 1 << 20, what="ranks"), required=True,
                   help="MPI ranks (on this machine)")
    r.add_argument("--hpcc", metavar="N:NB", help="run Debian's hpcc with this HPL problem "
                   "(hpccinf.txt from its example, P x Q most square) instead of a command")
    r.add_argument("--hpl", metavar="N:NB", help="the command after -- is xhpl: write HPL.dat "
                   "for this problem (the HPL check's, P x Q most square) and require its "
                   "residual checks passed")
    r.add_argument("--input", action="append", default=[], type=A.input_file, metavar="FILE",
                   help="copy this file into the run's working directory (repeat)")
    r.add_argument("--expect", action="append", default=[], type=_regex, metavar="REGEX",
                   help="the program's stdout must match this (repeat; e.g. its end marker)")
    r.add_argument("--result-file", type=A.text_line, metavar="GLOB", default=None,
                   help="a file the program writes its result to (e.g. HPCG's "
                   "'HPCG-Benchmark_*.txt'): kept after its stdout in <np>.out.txt, and "
                   "--expect is matched against both")
    r.add_argument("--program-version", type=A.text_line, metavar="TEXT",
                   help="the program's version and patches, for <np>.json")
    r.add_argument("--study-input", type=A.json_object, metavar="JSON",
                   help="the study input the command line runs, for <np>.json, e.g. "
                   "'{\"size\": 65536, \"iters\": 5, \"window\": 5}'")
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


# xhpl's own verdict: it finished, every test passed its residual check, none failed
HPL_EXPECT = [r"^End of Tests\.", r"\b[1-9]\d* tests completed and passed residual checks",
              r"\b0 tests completed and failed residual checks"]
HPL_RESULT = re.compile(r"^W\S+\s+\d+\s+\d+\s+\d+\s+\d+\s+(\S+)\s+(\S+)\s*$", re.M)
# the program's output kept beside <np>.json: hpcc writes its own file, the others stdout
OUTPUTS = (".hpccoutf.txt", ".out.txt")


@dataclass
class Plan:
    """What `demand record` runs: the command, the files it needs, its success test and
    what <np>.json says of it."""
    command: list[str]
    files: dict[str, str] = field(default_factory=dict)
    expect: list[str] = field(default_factory=list)
    output: str = ""                    # the program's output file in the run's folder
    extra: dict = field(default_factory=dict)
    result_file: str | None = None      # a glob of files it writes its result to


def _regex(text: str) -> str:
    if not A.text_ok(text):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is empty or not one line (fix: give "
                                         "a regular expression the program prints)")
    try:
        re.compile(text)
    except re.error as err:
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a regular expression ({err}) "
                                         "(fix: escape it, e.g. 'End of Tests\\.')") from None
    return text


def _problem(option: str, text: str) -> tuple[int, int]:
    m = re.fullmatch(r"([1-9]\d{0,6}):([1-9]\d{0,4})", text)
    if not m:
        raise T2hxError(f"{option} {text[:40]!r}", field=option, fix="write N:NB, e.g. 1000:64")
    return int(m.group(1)), int(m.group(2))


def _plan(args: argparse.Namespace, command: list[str]) -> Plan:
    """The run `demand record` makes: Debian's hpcc, xhpl with the HPL check's input, or any
    command with the caller's success markers."""
    if args.hpcc is not None:
        given = (args.hpl, args.program_version, args.study_input, args.result_file)
        if command or args.expect or any(v is not None for v in given):
            raise T2hxError("--hpcc runs Debian's hpcc with its own input, version and check",
                            field="--hpcc", fix="drop the command, --hpl, --expect, "
                            "--program-version, --study-input and --result-file, or drop "
                            "--hpcc")
        n, nb = _problem("--hpcc", args.hpcc)
        if not HPCC.is_file():
            raise T2hxError(f"{HPCC} missing", field="--hpcc", fix="install Debian's hpcc")
        text, p, q = hpcc_grid_input(n, nb, args.np)
        return Plan([str(HPCC)], {"hpccinf.txt": text}, output="hpccoutf.txt",
                    extra={"hpccinf.txt": text, "input": {"n": n, "nb": nb},
                           "hpl": {"n": n, "nb": nb, "p": p, "q": q},
                           "program": _program(str(HPCC), _debian_version("hpcc"))})
    from t2hx.routing.demand import STDOUT

    if not command:
        raise T2hxError("no program to record", field="command",
                        fix="give --hpcc N:NB, or the program after --, e.g. -- ./a.out args")
    n, nb = _problem("--hpl", args.hpl) if args.hpl is not None else (0, 0)
    plan = Plan(command, expect=list(args.expect), output=STDOUT,
                extra={"program": _program(command[0], args.program_version),
                       "input": args.study_input, "expect": list(args.expect)},
                result_file=args.result_file)
    if args.result_file:
        plan.extra["result_file"] = args.result_file
    if args.hpl is not None:
        p, q = hpl_grid(args.np)
        text = HPL_DAT.format(case=f"{args.benchmark}-np{args.np}", n=n, nb=nb, p=p, q=q)
        plan.files["HPL.dat"] = text
        plan.expect = HPL_EXPECT + plan.expect
        plan.extra.update({"HPL.dat": text, "input": {"n": n, "nb": nb},
                           "hpl": {"n": n, "nb": nb, "p": p, "q": q}, "expect": plan.expect})
    return plan


def _program(name: str, version: str | None) -> dict:
    """The binary that ran: its path (as a kept record holds it), checksum and the caller's
    word on its version."""
    from t2hx.routing import demand as dm

    path = shutil.which(name)
    if path is None:
        raise T2hxError(f"no program {name!r}", field="command",
                        fix="give the program's path or put it on PATH")
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return {"path": dm.portable(str(Path(path).resolve())), "sha256": digest, "version": version}


def _debian_version(package: str) -> str | None:
    run = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                         capture_output=True, text=True)
    return f"Debian {package} {run.stdout.strip()}" if run.returncode == 0 else None


def cmd_record(args: argparse.Namespace) -> int:
    from t2hx.routing import demand as dm

    command = [a for a in args.command if a != "--"]
    plan = _plan(args, command)
    dest = (Path(args.out) if args.out else profiles_root()) / args.benchmark / str(args.np)
    with tempfile.TemporaryDirectory(prefix="t2hx-record-") as tmp:
        work = Path(tmp)
        for name in args.input:
            shutil.copyfile(name, work / Path(name).name)
        for name, text in plan.files.items():
            (work / name).write_text(text)
        prefix = args.prefix or re.sub(r"[^A-Za-z0-9_-]", "_", Path(plan.command[0]).name)
        print(f"recording {' '.join(plan.command)} on {args.np} ranks (pml_monitoring) ...")
        check = _hpcc_result if args.hpcc is not None else _expected(plan, args.hpl is not None)
        info = dm.record_profile(plan.command, args.np, dest, prefix, work, args.timeout,
                                 check=check)
        kept = OUTPUTS[0] if args.hpcc is not None else OUTPUTS[1]
        shutil.copyfile(work / plan.output, dest.with_suffix(kept))
        for stale in set(OUTPUTS) - {kept}:         # an earlier recording's, of another kind
            dest.with_suffix(stale).unlink(missing_ok=True)
    if args.input:
        info["inputs"] = [Path(n).name for n in args.input]
    info.update(benchmark=args.benchmark, **plan.extra)
    dm.write_record(info, dest.with_suffix(".json"))
    print(f"{dest}/{prefix}.<rank>.prof: {args.np} ranks, {info['bytes_total']} bytes; "
          f"how: {dest.with_suffix('.json')}")
    return 0


def _expected(plan: Plan, hpl: bool) -> Callable[[Path], dict]:
    """The program's stdout (and result files) must match every --expect pattern (xhpl: its
    verdict too)."""
    def check(work: Path) -> dict:
        text = _with_results(work, plan.result_file)
        for pattern in plan.expect:
            if not re.search(pattern, text, re.M):
                last = (text.strip().splitlines() or ["no output"])[-1][:120]
                raise T2hxError(f"the program's output does not match {pattern!r} (last line: "
                                f"{last!r})", field="--expect",
                                fix="run it by hand with mpirun; the profile was not installed")
        found = HPL_RESULT.findall(text) if hpl else []
        return {"hpl_seconds": float(found[-1][0]), "hpl_gflops": float(found[-1][1])} \
            if found else {}
    return check


def _with_results(work: Path, pattern: str | None) -> str:
    """The program's stdout, then each file of ``pattern`` it wrote (a header line naming
    it), written back as the output kept beside the profile."""
    from t2hx.routing.demand import STDOUT

    text = (work / STDOUT).read_text(errors="replace")
    if pattern:
        found = sorted(p for p in work.glob(pattern) if p.is_file())
        if not found:
            raise T2hxError(f"the program wrote no {pattern!r}", field="--result-file",
                            fix="check the pattern against what it writes; the profile was "
                            "not installed")
        for path in found:
            text += f"\n# t2hx: result file {path.name}\n" + path.read_text(errors="replace")
        (work / STDOUT).write_text(text)
    return text


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
