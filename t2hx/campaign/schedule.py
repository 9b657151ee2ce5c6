"""The order a simulated campaign's cases start in: cache misses first, costly check files first.

**Misses first.** A deterministic case is simulated once per run-cache key
(t2hx/flowsim/runcache.py): its first repetition simulates while the others wait on the
entry's lock, then reuse it. In one ReFrame session those repetitions start beside the one that
simulates, each holding a job slot while it waits (0.86 h of slot time for IMB Alltoall in the
paper-scale run). So a simulated run is two ReFrame sessions: repetition 0 of every case, then
the other repetitions, which find their entry written (a seeded case such as eBB has a key per
repetition: it simulates in either session and never waits on another). The second session
excludes exactly the first one's cases, so neither relies on resume to skip the other's.

**Longest first.** ReFrame starts the cases of a session in load order (the check files as
``-c`` names them, each file's parameter space in order), a job slot of a partition taking
the next one as it frees. The check files are named by their longest case first (then by
their total), as the campaign's earlier sessions timed their passing cases (ReFrame's reports
in log/<campaign>/reframe/, and those of its previous complete run, moved aside to
log/.<campaign>.previous/): a long case started last leaves the other core idle until it
ends (the paper-scale run's longest: eBB 535 s, IMB 490 s, the capacity mix 441 s; its
ReFrame jobs: ~1 s). A file without a record goes first (its cost is unknown); without any
record the order is by name, as ReFrame's own listing of checks/.
"""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path

from t2hx import ROOT

CHECKS = ROOT / "checks"
#: ReFrame's exclusion filters (a regex searched in the display name without blanks, e.g.
#: ``MpiGraph%combo=ft-ftree-linear%num_nodes=7%repetition=0``) of the two sessions: the
#: first leaves out every repetition but 0, the second keeps only those, so each case runs in
#: exactly one (a check without the parameter, such as the network analysis, in the first).
MISSES = ["-x", "%repetition=[1-9]"]
REPEATS = ["-x", "^(?!.*%repetition=[1-9])"]
#: ReFrame options that name check files or select repetitions: a run given them is the
#: caller's own selection and runs as one session, its files in the caller's order.
CHECK_PATH = re.compile(r"^(-c|--checkpath)(=|$)|^-c.")


def sessions(reframe_args: list[str], simulated: bool) -> list[list[str]]:
    """The ReFrame arguments of each session of a run: misses, then repeats (simulated
    systems), or the caller's arguments alone."""
    if not simulated or any("repetition" in a for a in reframe_args):
        return [reframe_args]
    return [[*MISSES, *reframe_args], [*REPEATS, *reframe_args]]


def names_checks(reframe_args: list[str]) -> bool:
    return any(CHECK_PATH.match(a) for a in reframe_args)


def check_files(logdirs: list[Path], checks: Path = CHECKS) -> list[Path]:
    """The check files, the costliest first (see the module's docstring)."""
    cost = job_seconds(logdirs)
    unknown = (float("inf"), float("inf"))
    files = sorted(checks.glob("*.py"))
    return sorted(files, key=lambda f: tuple(-x for x in cost.get(f.name, unknown)))


def job_seconds(logdirs: list[Path]) -> dict[str, tuple[float, float]]:
    """Check file name -> (longest, total) run time of its passing cases in the ReFrame
    reports under ``logdirs``' reframe/ folders."""
    out: dict[str, tuple[float, float]] = {}
    for logdir in logdirs:
        for path in sorted((logdir / "reframe").glob("report-*.json*")):
            for case in _cases(path):
                if case.get("result") == "pass" and case.get("filename"):
                    name, t = Path(case["filename"]).name, float(case.get("time_run") or 0.0)
                    longest, total = out.get(name, (0.0, 0.0))
                    out[name] = (max(longest, t), total + t)
    return out


def _cases(path: Path) -> list[dict]:
    """The test cases of a ReFrame session report (``.json`` or ``.json.xz``); none if the
    report is unreadable (an interrupted session's)."""
    try:
        text = lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()
        runs = json.loads(text).get("runs", [])
    except (OSError, ValueError, EOFError, lzma.LZMAError):
        return []
    return [c for r in runs for c in r.get("testcases", []) if isinstance(c, dict)]
