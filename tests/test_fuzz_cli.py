"""Property-based fuzzing of every subcommand's options, generated from the argparse parser.

The parser of ``t2hx.cli.build_parser()`` is walked: every subcommand (nested ones such as
``campaign status`` too) and every optional and positional action. Each command has one
cheap valid base command line (BASES); an example appends one option with a hostile value
drawn by the option's role (a number, a name, an input file, an output folder, ...; ROLES)
and runs ``t2hx.cli.main`` in-process, stdout and stderr captured, under a 20 s alarm.

The property: no exception escapes ``main`` (a traceback), no hang (the alarm), and a value
invalid for the option exits 2 with one ``t2hx: error:`` line on stderr (or argparse's usage
and its one ``error: argument --OPTION: ...`` line). The few hostile values that are valid
for an option (``--seed 0``, a new ``--out`` folder that gets created) are listed in ALLOW,
each with its reason; those may exit 0.

Commands whose every run is heavy or external (ReFrame, OpenSM under ibsim, real MPI, an SM
host) are fuzzed only with values their early validation rejects (REJECT_ONLY): a value that
got through would start the work, and the alarm reports it as a hang.

Fixed seed (``derandomize``), no example database, no deadline, bounded examples per command
(their sum >= 2,000, test_enough_examples). T2HX_FUZZ_SCALE=10 searches ten times deeper.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pkgutil
import re
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from t2hx import ROOT, commands
from t2hx import argtypes as A
from t2hx.cli import build_parser, main

MINI = ROOT / "conf" / "systems" / "mini.yaml"
PREFIX = ROOT / "tests" / "data" / "demand" / "traffic"
HPL_OUT = ROOT / "tests" / "data" / "post" / "fixtures" / "hpl" / \
    "hpl-np2-N1000_2000-NB64_128-P1xQ2.out"
SCALE = float(os.environ.get("T2HX_FUZZ_SCALE", "1"))
ALARM = 20


# ---- the walk ----------------------------------------------------------------------------

def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) \
        -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command path, parser) of every leaf subcommand."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for action in subs:
        seen: set[int] = set()
        for name, child in action.choices.items():     # an alias maps to a parser seen already
            if id(child) not in seen:
                seen.add(id(child))
                yield from walk(child, path + (name,))


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every option and positional but help (and -q, the top-level flag again)."""
    return [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
            and a.dest != "quiet"]


def name_of(action: argparse.Action) -> str:
    return max(action.option_strings, key=len) if action.option_strings else action.dest


LEAVES = dict(walk(build_parser()))


# ---- roles: what an option's value is, so which hostile values are invalid ----------------

# Roles by option; an option not listed gets its role from its type (numbers) or "name".
ROLES = {
    "--system": "conf", "--hostfile": "in-file", "--demand": "in-file", "--jobs": "in-file",
    "--jobs-json": "in-file", "--capacity": "in-file", "--claims": "in-file",
    "--input": "in-file", "file": "in-file", "files": "in-file", "logdir": "in-dir",
    "--routing-dir": "in-dir", "--dumps": "in-dir", "--env": "in-dir", "--from": "in-dir",
    "--out": "out-dir", "--work": "out-dir", "--state": "out-dir", "--output": "out-file",
    "--companion-output": "out-file", "--json": "out-file",
}
# Per command where the generic role is wrong.
ROLE_OF = {
    ("demand", "build", "--out"): "out-file", ("demand", "jobs", "--out"): "out-file",
    ("demand", "build", "--job"): "pair", ("demand", "jobs", "--job"): "pair",
    ("demand", "record", "--input"): "in-file", ("fabric", "cost", "systems"): "conf",
    ("fabric", "analyze", "--jobs"): "in-file", ("simulate", "--input"): "json",
    ("history", "check", "trace"): "in-file", ("history", "sample", "trace"): "in-file",
    ("history", "sample", "--out"): "out-file", ("history", "route", "samples"): "in-file",
    ("history", "updates", "samples"): "in-file", ("history", "updates", "--out"): "out-file",
    ("history", "background", "trace"): "in-file", ("history", "background", "--out"): "out-file",
    ("history", "background", "--exclude"): "in-file",
    ("campaign", "reroute", "--background"): "in-file",
    ("conf", "schema", "--out"): "out-file",
    ("campaign", "simulate-history", "--trace"): "in-file",
    ("campaign", "simulate-history", "--rows"): "out-file", ("sar", "watch", "--log"): "out-file",
    ("campaign", "analyse-network", "--rows"): "out-file",
    ("campaign", "analyse-network", "--p2p-system"): "conf",
}


def role(path: tuple[str, ...], action: argparse.Action) -> str:
    name = name_of(action)
    if (*path, name) in ROLE_OF:
        return ROLE_OF[(*path, name)]
    if action.nargs == 0:
        return "flag"
    if action.nargs == argparse.REMAINDER:
        return "remainder"
    kind = getattr(action.type, "__name__", "")
    if action.type in (int,) or kind.startswith("int"):
        return "int"
    if action.type in (float,) or kind.startswith("float") or kind == "unit_interval":
        return "float"
    if action.choices:
        return "choice"
    return ROLES.get(name, "name")


# Hostile values per role: class -> value (paths: `hostile`, in the `files` fixture's tmp).
NUMBERS = {"negative": "-5", "minus-one": "-1", "zero": "0", "huge": "1000000000000",
           "huge-float": "1e30", "nan": "nan", "inf": "inf", "-inf": "-inf", "text": "x",
           "empty": "", "hex": "0x10"}
NAMES = {"empty": "", "newline": "a\nb", "long": "x" * 5000, "bogus": "bogus",
         "unicode": "é日\u2028", "surrogate": "a\udcffb", "dash": "-", "dotdot": "../../x"}
PATHS = ["fifo", "dev", "dir", "file", "missing", "under-file", "newline", "surrogate",
         "dotdot", "empty"]
CLASSES = {"int": list(NUMBERS), "float": list(NUMBERS), "name": list(NAMES),
           "choice": ["bogus", "empty", "newline", "unicode"], "json": list(NAMES),
           "conf": ["fifo", "dev", "dir", "missing", "under-file", "newline", "surrogate",
                    "empty", "bogus"],
           "in-file": ["fifo", "dev", "dir", "missing", "under-file", "newline", "surrogate",
                       "empty"],
           "in-dir": ["fifo", "dev", "file", "missing", "under-file", "empty"],
           "out-dir": PATHS, "out-file": PATHS, "pair": ["fifo", "dev", "dir", "missing"],
           "flag": ["flag"], "remainder": ["empty", "bogus"]}

# (command, option, value class) that may exit 0: the hostile value is valid there.
ALLOW: dict[tuple[str, str, str], str] = {
    # Numbers: 0 and huge values in range.
    ("*", "--seed", "zero"): "seeds start at 0", ("*", "--seed", "huge"): "any seed >= 0",
    ("simulate", "--noise-seed", "zero"): "seeds start at 0",
    ("simulate", "--noise-seed", "huge"): "any seed >= 0",
    ("simulate", "--repetition", "zero"): "the first repetition",
    ("simulate", "--repetition", "huge"): "a repetition index only names the noise draw",
    ("simulate", "--compute-scale", "zero"): "communication only (seed 003's *-comm combos)",
    ("simulate", "--compute-scale", "huge"): "compute infinitely fast: communication only",
    ("simulate", "--compute-scale", "huge-float"): "compute infinitely fast",
    ("simulate", "--noise-cv", "zero"): "no noise (the default)",
    ("simulate", "--size", "zero"): "zero-byte messages (latency only)",
    ("simulate", "--parx-threshold", "zero"): "every message uses Table 1b",
    ("simulate", "--parx-threshold", "huge"): "every message uses Table 1a",
    ("*", "--lmc", "zero"): "LMC 0, one path per destination",
    ("*", "--campaign", "bogus"): "any name is a campaign (status: 0 cases recorded yet)",
    # After --: ReFrame's own options, refused by ReFrame with its usage (exit 2); only the
    # REJECT_ONLY commands take them, so they are not drawn.
    ("*", "reframe_args", "bogus"): "ReFrame's options",
    ("*", "reframe_args", "empty"): "ReFrame's options",
    ("*", "command", "bogus"): "demand record: the MPI program to run",
    ("*", "command", "empty"): "demand record: the MPI program to run",
    ("demand record", "--benchmark", "bogus"): "the profile's folder name, any name",
    ("demand record", "--prefix", "bogus"): "the profile files' prefix, any name",
    ("demand model", "--iterations", "huge"): "volumes scale with iterations; nothing loops",
    # Options of other benchmarks than the base's imb (mpiGraph, eBB, apps): in range, and
    # the flow model's cost does not grow with them.
    ("simulate", "--size", "huge"): "1 TB messages: a longer simulated time",
    ("simulate", "--times", "huge"): "mpiGraph only", ("simulate", "--window", "huge"): "mpiGraph only",
    ("simulate", "--rounds", "huge"): "eBB only", ("simulate", "--reps", "huge"): "eBB only",
    ("simulate", "--iterations", "huge"): "apps only",
    ("simulate", "--noise-cv", "huge"): "any CV >= 0 is a lognormal (unused with --noise none)",
    ("simulate", "--noise-cv", "huge-float"): "any finite CV >= 0",
    ("hostfiles", "--iterations", "zero"): "two-opt without swaps: the initial placement",
    ("hostfiles", "--iterations", "huge"): "only two-opt runs iterations (not the base)",
    ("hostfiles", "--seed", "zero"): "seeds start at 0",
    ("hostfiles", "--switches", "huge"): "only spread uses it (not the base); n caps it",
    ("history sample", "--first-day", "zero"): "from the trace's first job (the default)",
    ("campaign simulate-history", "--day", "zero"): "the trace's first day",
    ("history background", "--at", "zero"): "the day's start (the default)",
    ("history background", "--day", "zero"): "the trace's first day",
    ("campaign analyse-network", "--iterations", "zero"): "two-opt without swaps",
    ("campaign analyse-network", "--iterations", "huge"): "only the random shortcut network "
    "runs two-opt (the base analyses a circulant one)",
    ("campaign analyse-network", "--two-opt-up-to", "huge"): "a bound on the size",
    ("campaign analyse-network", "--p2p-switches", "huge"): "no such size: no point-to-point rows",
    ("campaign analyse-network", "--table-switches", "huge"): "no such size: no two-opt tables",
    ("campaign analyse-network", "--table-ranks", "huge"): "used at the table size only",
    ("campaign analyse-network", "--table-iterations", "zero"): "tables without swaps",
    ("campaign analyse-network", "--table-iterations", "huge"): "no tables on a circulant "
    "network (the base analyses one)",
    ("campaign analyse-network", "--p2p-bytes", "huge"): "any size times; the base has no "
    "point-to-point rows (16 switches)",
    ("*", "--rows", "file"): "an existing output is replaced",
    ("*", "--rows", "missing"): "a new file", ("*", "--rows", "dotdot"): "a path",
    ("*", "--rows", "newline"): "a POSIX name", ("*", "--rows", "surrogate"): "bytes",
    ("*", "--log", "file"): "an existing log is appended to",
    ("*", "--log", "missing"): "a new file", ("*", "--log", "dotdot"): "a path",
    ("*", "--log", "newline"): "a POSIX name", ("*", "--log", "surrogate"): "bytes",
    ("history sample", "--days", "huge"): "to the trace's end",
    ("history sample", "--days", "huge-float"): "to the trace's end",
    ("history sample", "--out", "file"): "an existing samples file is replaced",
    ("history background", "--out", "file"): "an existing job file is replaced",
    ("conf schema", "--out", "file"): "an existing schema file is replaced",
    ("history updates", "--limit", "huge"): "every re-route of the samples",
    ("history updates", "--out", "file"): "an existing report is replaced",
    # Output paths that are valid: a new folder is created; .. and odd names are names.
    ("*", "--out", "missing"): "a new output folder is created",
    ("*", "--out", "dir"): "an existing folder to write into",
    ("demand build", "--out", "file"): "an existing demand file is replaced",
    ("demand jobs", "--out", "file"): "an existing job file is replaced",
    ("*", "--output", "file"): "an existing output is replaced",
    ("*", "--companion-output", "file"): "an existing output is replaced",
    ("*", "--json", "file"): "an existing output is replaced",
    ("*", "--work", "dir"): "an existing work folder", ("*", "--state", "dir"): "a folder",
    ("*", "--state", "missing"): "a new folder", ("*", "--state", "dotdot"): "a path",
    ("*", "--state", "newline"): "a POSIX name", ("*", "--state", "surrogate"): "bytes",
    ("*", "--out", "dotdot"): "a path with .. is a path (here inside tmp)",
    ("*", "--out", "newline"): "a POSIX file name may hold a newline",
    ("*", "--out", "surrogate"): "a POSIX file name is bytes",
    ("*", "--json", "missing"): "a new file", ("*", "--json", "dotdot"): "a path",
    ("*", "--json", "newline"): "a POSIX name", ("*", "--json", "surrogate"): "bytes",
    ("*", "--output", "missing"): "a new file", ("*", "--output", "dotdot"): "a path",
    ("*", "--output", "newline"): "a POSIX name", ("*", "--output", "surrogate"): "bytes",
    ("*", "--companion-output", "missing"): "a new file",
    ("*", "--companion-output", "dotdot"): "a path",
    ("*", "--companion-output", "newline"): "a POSIX name",
    ("*", "--companion-output", "surrogate"): "bytes",
    ("*", "--work", "missing"): "a new work folder", ("*", "--work", "dotdot"): "a path",
    ("*", "--work", "newline"): "a POSIX name", ("*", "--work", "surrogate"): "bytes",
    # Flags change what a cheap base does, never make it invalid.
    ("*", "*", "flag"): "a flag has no value to be invalid",
}


def allowed(path: tuple[str, ...], option: str, cls: str) -> bool:
    cmd = " ".join(path)
    return any(k in ALLOW for k in ((cmd, option, cls), ("*", option, cls), ("*", "*", cls)))


# ---- base command lines ------------------------------------------------------------------

# One cheap valid command line per subcommand ({name} is a path of the `files` fixture).
# REJECT_ONLY: every run is heavy or external; only values early validation rejects.
BASES: dict[tuple[str, ...], list[str]] = {
    ("calibrate",): ["calibrate", "--table"],
    ("campaign", "run"): ["campaign", "run", "--system", "sim:mini", "--campaign", "fz"],
    ("campaign", "dry-run"): ["campaign", "dry-run", "--system", "sim:mini", "--campaign",
                              "fz"],
    ("campaign", "status"): ["campaign", "status", "--campaign", "fz"],
    ("campaign", "reroute"): ["campaign", "reroute", "--system", "{mini}", "--plane", "hyperx",
                              "--routing", "sar", "--hostfile", "{hosts}", "--benchmark",
                              "hpl", "--out", "{tmp}/rr"],
    ("campaign", "simulate-capacity"): ["campaign", "simulate-capacity", "--system", "{mini}",
                                        "--plane", "hyperx", "--routing", "dfsssp",
                                        "--capacity", "{capacity}", "--window", "1",
                                        "--work", "{tmp}/work"],
    ("campaign", "simulate-workload"): ["campaign", "simulate-workload", "--system", "{mini}",
                                        "--plane", "hyperx", "--routing", "dfsssp",
                                        "--workload", "0", "--work", "{tmp}/work"],
    ("campaign", "simulate-history"): ["campaign", "simulate-history", "--system", "{mini}",
                                       "--plane", "fattree", "--trace", "{trace}", "--day",
                                       "0", "--rows", "{tmp}/rows.json", "--work",
                                       "{tmp}/work"],
    ("campaign", "analyse-network"): ["campaign", "analyse-network", "--kind", "circulant",
                                      "--switches", "16", "--rows", "{tmp}/network.json"],
    ("sar", "watch"): ["sar", "watch", "--system", "{mini}", "--plane", "fattree", "--polls",
                       "1", "--interval", "1"],
    ("demand", "build"): ["demand", "build", "--job", "{prefix}", "{hosts}", "--out",
                          "{tmp}/demand.txt"],
    ("demand", "check"): ["demand", "check", "{demand}", "--system", "{mini}"],
    ("demand", "jobs"): ["demand", "jobs", "--job", "j1", "{hosts}", "--out", "{tmp}/jobs.txt"],
    ("demand", "record"): ["demand", "record", "--benchmark", "traffic", "--np", "2",
                           "--out", "{tmp}/prof", "--hpcc", "100:10"],
    ("demand", "model"): ["demand", "model", "--benchmark", "hpl", "--np", "4", "--out",
                          "{tmp}/model"],
    ("fabric", "build"): ["fabric", "build", "--system", "{mini}", "--plane", "hyperx",
                          "--out", "{tmp}/fab"],
    ("fabric", "route"): ["fabric", "route", "--system", "{mini}", "--plane", "hyperx",
                          "--routing", "dfsssp", "--out", "{tmp}/route"],
    ("fabric", "import"): ["fabric", "import", "--system", "{mini}", "--plane", "hyperx",
                           "--from", "{dumps}", "--out", "{tmp}/imp"],
    ("fabric", "analyze"): ["fabric", "analyze", "--system", "{mini}", "--plane", "hyperx",
                            "--dumps", "{dumps}", "--out", "{tmp}/ana"],
    ("fabric", "cost"): ["fabric", "cost", "{mini}"],
    ("history", "check"): ["history", "check", "{trace}", "--system", "{mini}"],
    ("history", "sample"): ["history", "sample", "{trace}", "--system", "{mini}", "--out",
                            "{tmp}/samples.json"],
    ("history", "route"): ["history", "route", "{samples}", "--system", "{mini}", "--plane",
                            "fattree", "--out", "{tmp}/replay", "--work", "{tmp}/work"],
    ("history", "updates"): ["history", "updates", "{samples}", "--system", "{mini}",
                             "--plane", "fattree", "--out", "{tmp}/updates.json", "--work",
                             "{tmp}/work"],
    ("history", "background"): ["history", "background", "{trace}", "--system", "{mini}",
                                "--plane", "fattree", "--day", "0", "--out", "{tmp}/bg.txt"],
    ("hostfiles",): ["hostfiles", "--system", "{mini}", "--out", "{tmp}/hf", "--placements",
                     "linear", "--counts", "2"],
    ("parse",): ["parse", "--benchmark", "hpl", "{hplout}"],
    ("post",): ["post", "{tmp}/log", "--out", "{tmp}/paper"],
    ("replay",): ["replay", "{tmp}/log", "--out", "{tmp}/paper"],
    ("reproduce",): ["reproduce", "--system", "{mini}", "--campaign", "fz"],
    ("reroute",): ["reroute", "--system", "{mini}", "--routing", "sar", "--jobs", "{jobs}",
                   "--out", "{tmp}/reroute"],
    ("conf", "schema"): ["conf", "schema", "system", "--out", "{tmp}/schema.json"],
    ("conf", "check"): ["conf", "check", "{mini}"],
    ("scorecard",): ["scorecard", "{tmp}/log"],
    ("simulate",): ["simulate", "--system", "{mini}", "--plane", "hyperx", "--routing",
                    "dfsssp", "--routing-dir", "{dumps}", "--hostfile", "{hosts}",
                    "--benchmark", "imb", "--collectives", "Bcast", "--msglog", "0:2", "--work", "{tmp}/work",
                    "--no-cache"],
    ("sm", "apply"): ["sm", "apply", "--system", "{mini}", "--plane", "hyperx", "--routing",
                      "dfsssp"],
    ("sm", "serve"): ["sm", "serve", "--system", "{mini}", "--bind", "127.0.0.1"],
    ("sm", "opensm"): ["sm", "opensm", "--system", "{mini}", "--plane", "hyperx", "--state",
                       "{tmp}/sm"],
    ("sm", "status"): ["sm", "status", "--system", "{mini}", "--plane", "hyperx"],
    ("spack", "check"): ["spack", "check"],
}
# The index in a base of its one positional value: a hostile one replaces it.
POSITIONAL = {("demand", "check"): 2, ("history", "check"): 2, ("history", "sample"): 2,
              ("history", "route"): 2, ("history", "updates"): 2, ("history", "background"): 2,
              ("post",): 1, ("replay",): 1, ("conf", "schema"): 2, ("conf", "check"): 2,
              ("scorecard",): 1}
# Why each of these is fuzzed with rejected values only.
REJECT_ONLY = {
    ("campaign", "run"): "runs ReFrame over the study",
    ("campaign", "dry-run"): "generates every job script of the study through ReFrame",
    ("campaign", "reroute"): "routes the plane with OpenSM under ibsim",
    ("campaign", "simulate-capacity"): "routes and simulates a capacity window",
    ("campaign", "simulate-workload"): "routes and simulates a multi-job workload",
    ("campaign", "simulate-history"): "routes a plane four ways with OpenSM under ibsim",
    ("sar", "watch"): "polls Slurm and re-routes a running OpenSM until stopped",
    ("demand", "record"): "runs a real MPI program",
    ("history", "route"): "routes with OpenSM under ibsim",
    ("history", "updates"): "routes with OpenSM under ibsim",
    ("fabric", "route"): "routes with OpenSM under ibsim",
    ("post",): "replays a log into figures and a report (matplotlib)",
    ("replay",): "replays a log into figures and a report (matplotlib)",
    ("reproduce",): "the whole study on the embedded cluster",
    ("reroute",): "routes with OpenSM under ibsim",
    ("sm", "apply"): "talks to the plane's OpenSM host",
    ("sm", "serve"): "serves requests until stopped",
    ("sm", "opensm"): "runs OpenSM until stopped",
    ("spack", "check"): "checks the whole Spack environment",
}


def examples(path: tuple[str, ...]) -> int:
    """12 per option, at least 40 per command."""
    return max(40, 12 * len(options(LEAVES[path])))


def test_enough_examples() -> None:
    assert sum(examples(p) for p in LEAVES) >= 2000


def test_walk_finds_every_command_module() -> None:
    """A new command module (or verb) is walked, and needs a base here."""
    modules = {m.name for m in pkgutil.iter_modules(commands.__path__)}
    assert modules <= {p[0] for p in LEAVES} | {"post"}, modules
    assert {"campaign", "demand", "fabric", "sm", "spack"} <= {p[0] for p in LEAVES
                                                               if len(p) > 1}
    assert sorted(BASES) == sorted(LEAVES), "give every subcommand a base in BASES"
    assert set(REJECT_ONLY) <= set(BASES)
    assert sum(len(options(p)) for p in LEAVES.values()) >= 150


# ---- fixtures: the files the bases and the hostile paths name ----------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory, mini, mini_hyperx_dir) -> Iterator[dict[str, str]]:
    from t2hx.routing import demand as dm

    tmp = tmp_path_factory.mktemp("fuzzcli")
    hosts = mini.hostnames()
    (tmp / "hosts.txt").write_text("".join(f"{h}\n" for h in hosts[:4]))
    (tmp / "demand.txt").write_text(dm.render({hosts[0]: {hosts[1]: 17}}))
    (tmp / "jobs.txt").write_text(dm.render_jobs({"j1": hosts[:4]}))
    (tmp / "capacity.json").write_text('{"hpl": {"benchmark": "hpl", "hostfile": "'
                                       + str(tmp / "hosts.txt") + '"}}')
    (tmp / "trace.swf").write_text("; MaxNodes: 8\n; MaxProcs: 32\n"
                                   "1 0 10 3600 8 -1 -1 8 3600 -1 1 1 1 -1 1 -1 -1 -1\n")
    (tmp / "samples.json").write_text(
        '{"format": "t2hx-history-samples/1", "system": "mini", "jobs": [{"hosts": "'
        + hosts[0] + '"}], "samples": [{"t": 0, "jobs": [0]}]}\n')
    (tmp / "log").mkdir()
    (tmp / "log" / "provenance.json").write_text("{}\n")
    # A few reference runs: a log with no result is refused (t2hx scorecard, replay).
    (tmp / "log" / "perflogs").mkdir()
    hpl = ROOT / "log" / "reference" / "perflogs" / "sim" / "t2hx-hyperx" / "HPL.log"
    (tmp / "log" / "perflogs" / "HPL.log").write_text(
        "".join(hpl.read_text().splitlines(keepends=True)[:4]))
    os.mkfifo(tmp / "fifo")
    (tmp / "adir").mkdir()
    (tmp / "adir" / "f").write_text("x\n")
    (tmp / "afile").write_text("x\n")
    try:                       # our own null device: an output check that failed would
        os.mknod(tmp / "dev", 0o20666, os.makedev(1, 3))   # replace it, not /dev/zero
        dev = str(tmp / "dev")
    except OSError:
        dev = ""
    env = {"T2HX_LOG_ROOT": tmp / "logroot", "T2HX_WORK_ROOT": tmp / "workroot",
           "T2HX_HOSTFILES": tmp / "hfroot", "T2HX_PROFILES": tmp / "profroot"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        # mini's hostfiles: campaign run|dry-run and reproduce get past their check for them
        assert run_cli(["-q", "hostfiles", "--system", str(MINI)])[0] == 0
        yield {"tmp": str(tmp), "mini": str(MINI), "hosts": str(tmp / "hosts.txt"),
               "demand": str(tmp / "demand.txt"), "jobs": str(tmp / "jobs.txt"),
               "capacity": str(tmp / "capacity.json"), "trace": str(tmp / "trace.swf"),
               "samples": str(tmp / "samples.json"),
               "prefix": str(PREFIX),
               "dumps": str(mini_hyperx_dir), "hplout": str(HPL_OUT),
               "reflog": str(ROOT / "log" / "reference"), "dev": dev}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def hostile(cls: str, r: str, f: dict[str, str], n: int) -> str:
    """The value of class ``cls`` for an option of role ``r``."""
    tmp = f["tmp"]
    if r == "flag":
        return ""
    if r in ("int", "float"):
        # Classes with many members: a drawn salt picks one (1e30 and nan stay as they are).
        return {"negative": str(-2 - n), "huge": str(10**12 + n),
                "text": f"x{n}"}.get(cls, NUMBERS[cls])
    if r in ("name", "json", "choice", "remainder"):
        return {"bogus": f"bogus{n}", "long": "x" * (5000 + n % 1000),
                "newline": f"a{n}\nb", "unicode": f"é日{n}\u2028"}.get(cls, NAMES[cls])
    out = r.startswith("out")
    return {"fifo": f"{tmp}/fifo",
            "dev": (f["dev"] or f"{tmp}/fifo") if out else (f["dev"] or "/dev/zero"),
            "dir": f"{tmp}/adir", "file": f"{tmp}/afile",
            "missing": f"{tmp}/new{n}/x" if out else f"{tmp}/no-such-file",
            # Outputs create these names; inputs look for names no output ever creates.
            "under-file": f"{tmp}/afile/sub", "newline": f"{tmp}/{'' if out else 'in-'}a\nb{n}",
            "surrogate": f"{tmp}/{'' if out else 'in-'}a\udcffb{n}",
            "dotdot": f"{tmp}/sub/../dd{n}", "empty": "",
            "bogus": "bogus"}[cls]


# ---- the property ------------------------------------------------------------------------

class Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer in {ALARM} s")


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of main(argv) in-process; exceptions propagate."""
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(ALARM)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue()


def one_error_line(code: int, err: str) -> bool:
    """Exit 2 and one ``t2hx: error:`` line, or argparse's usage and error line."""
    if code != 2:
        return False
    lines = err.rstrip("\n").split("\n")
    if err.startswith("usage:"):     # argparse: the usage, then "t2hx CMD: error: ..."
        return re.search(r"\nt2hx[^\n]*: error: ", err) is not None
    return len(lines) == 1 and lines[0].startswith("t2hx: error: ")


def case_strategy(path: tuple[str, ...]) -> st.SearchStrategy[tuple[str, str, str]]:
    """(option, role, value class) of the command; rejected classes only for REJECT_ONLY."""
    cases = [(name_of(a), role(path, a), c) for a in options(LEAVES[path])
             for c in CLASSES[role(path, a)]]
    if path in REJECT_ONLY:
        cases = [x for x in cases if not allowed(path, x[0], x[2])]
    return st.sampled_from(cases)


def argv_of(path: tuple[str, ...], option: str, r: str, value: str,
            f: dict[str, str]) -> list[str]:
    base = [a.format(**f) for a in BASES[path]]
    if r == "flag":
        return ["-q", *base, option]
    if r == "remainder":
        return ["-q", *base, "--", value]
    if r == "pair":                # the job's hostfile is hostile
        return ["-q", *base, option, f["prefix"] if "build" in path else "j2", value]
    if option.startswith("-"):     # --opt=VALUE: a value starting with - stays a value
        return ["-q", *base, f"{option}={value}"]
    if path in POSITIONAL:
        k = POSITIONAL[path]
        return ["-q", *base[:k], *base[k + 1:], "--", value] if value.startswith("-") \
            else ["-q", *base[:k], value, *base[k + 1:]]
    return ["-q", *base, value]




@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_cli_option(files: dict[str, str], path: tuple[str, ...]) -> None:
    """Hostile values for every option of one command; all of its budget of examples runs
    (counted here, per command: under xdist a file-wide count would see one worker's share)."""
    ran = [0]

    @settings(max_examples=round(examples(path) * SCALE), derandomize=True, deadline=None,
              database=None, suppress_health_check=list(HealthCheck))
    @given(case=case_strategy(path), salt=st.integers(0, 10**6))
    def check(case: tuple[str, str, str], salt: int) -> None:
        option, r, cls = case
        ran[0] += 1
        argv = argv_of(path, option, r, hostile(cls, r, files, salt), files)
        try:
            code, _, err = run_cli(argv)
        except Hang:
            pytest.fail(f"HANG: {argv!r}")
        if allowed(path, option, cls):
            assert code in (0, 1, 2), (argv, code, err)
            assert code == 0 or one_error_line(code, err), (argv, code, err)
        else:
            assert one_error_line(code, err), (" ".join(argv), code, err)
    check()
    assert ran[0] >= round(examples(path) * SCALE), (path, ran[0])


def test_bases_are_valid(files: dict[str, str]) -> None:
    """Every cheap base exits 0 by itself (a failing base would pass every example)."""
    for path, base in BASES.items():
        if path in REJECT_ONLY:
            continue
        code, _, err = run_cli(["-q", *[a.format(**files) for a in base]])
        assert code == 0, (path, err)



def test_type_errors_name_the_option_and_the_fix(files: dict[str, str]) -> None:
    """Every option checked by t2hx/argtypes.py refuses an empty value in one line naming
    the option and the fix (argparse adds its usage above)."""
    checked = 0
    for path, parser in LEAVES.items():
        for action in options(parser):
            if getattr(action.type, "__module__", "") != A.__name__:
                continue
            option = name_of(action)
            argv = argv_of(path, option, role(path, action), "", files)
            code, _, err = run_cli(argv)
            last = err.rstrip("\n").split("\n")[-1]
            shown = argparse._get_action_name(action) or option    # as argparse names it
            assert code == 2 and f"argument {shown}: " in last and "(fix: " in last, (argv, err)
            checked += 1
    assert checked >= 60, checked


# ---- environment variables: the same hostile values through the environment -------------

#: A variable a command reads, the role of its value, and a cheap command that reads it.
ENV_CASES = {
    "T2HX_STUDY_PROFILE": ("name", ["hostfiles", "--system", "{mini}", "--placements",
                                    "linear", "--out", "{tmp}/env-hostfiles"]),
    "T2HX_STUDY": ("name", ["hostfiles", "--system", "{mini}", "--placements", "linear",
                            "--out", "{tmp}/env-hostfiles"]),
    "T2HX_WORK_ROOT": ("out-dir", ["fabric", "build", "--system", "{mini}", "--plane",
                                   "hyperx"]),
}


@contextlib.contextmanager
def env_set(name: str, value: str) -> Iterator[None]:
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def test_environment_variables(files: dict[str, str]) -> None:
    """A hostile value of a variable is refused in one line, or (empty: unset; a new folder
    for the work root) honoured: `fabric build` writes under $T2HX_WORK_ROOT, nowhere else."""
    cases = [(name, cls) for name, (r, _) in ENV_CASES.items() for cls in CLASSES[r]
             if "\udcff" not in hostile(cls, r, files, 0)]     # the environment is bytes

    @settings(max_examples=round(60 * SCALE), derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=st.sampled_from(cases), salt=st.integers(0, 10**6))
    def check(case: tuple[str, str], salt: int) -> None:
        name, cls = case
        r, argv = ENV_CASES[name]
        value = hostile(cls, r, files, salt)
        argv = ["-q", *(a.format(**files) for a in argv)]
        with env_set(name, value):
            try:
                code, _, err = run_cli(argv)
            except Hang:
                pytest.fail(f"HANG: {name}={value!r} {argv!r}")
        if cls == "empty":             # an empty variable is an unset one
            assert code == 0, (name, err)
        elif name == "T2HX_WORK_ROOT" and code == 0:
            root = os.path.abspath(value)
            assert os.path.isfile(os.path.join(root, "mini", "hyperx", "fabric.net")), value
        else:
            assert one_error_line(code, err), (name, value, code, err)
    check()
