"""A campaign: the study through ReFrame as one named log (``log/<campaign>/``).

``run`` wraps ``reframe -C conf/reframe.py -c checks -r --system SYS`` with the campaign and
study profile in the environment and records provenance (command, git hash, system, the conf
systems it ran on, profile) in ``log/<campaign>/provenance.json``. Rerunning the same
campaign resumes it: cases with a passing perflog record are skipped
(t2hx/checks/resume.py). ``status`` counts recorded cases against what the campaign's study
and profile imply on the systems it ran on. One module per concern: ``selection`` (which
systems ``--system`` means), ``provenance``, ``status``; this module runs ReFrame.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

from t2hx import ROOT
from t2hx.campaign import guard, schedule
from t2hx.post import archive
from t2hx.campaign.provenance import cpu_times, provenance, record_cpu, write_provenance
from t2hx.campaign.warm import warm_simulator
from t2hx.campaign.selection import (SIM, check_selection, say_left_out, select_study,
                                     selection)
from t2hx.campaign.status import status
from t2hx.conf import System
from t2hx.errors import T2hxError
from t2hx.paths import log_root, work_root
from t2hx.reframe_site import CAMPAIGN_ENV, NAME_RE, SIM_SYSTEMS_ENV
from t2hx.study import PROFILE_ENV, load_study

VERBS = ("run", "dry-run", "status")


@dataclass(frozen=True)
class CampaignRequest:
    """One ``t2hx campaign run|dry-run|status`` (the CLI's, ``t2hx reproduce``'s)."""
    verb: str
    system: str = SIM
    campaign: str = "default"
    profile: str | None = None          # None: full (status: the campaign's own)
    study: str | None = None            # None: $T2HX_STUDY or the default study
    reframe_args: list[str] = field(default_factory=list)
    quiet: bool = False
    report: bool = False                # run: replay the log into log/<campaign>/paper/


@dataclass(frozen=True)
class Prepared:
    """A request checked against the study and the conf systems, ready for ReFrame."""
    req: CampaignRequest
    env: dict[str, str]
    rf_system: str = ""
    conf_systems: tuple[System, ...] = ()


def prepare(req: CampaignRequest) -> Prepared:
    if not NAME_RE.match(req.campaign):
        raise T2hxError(f"campaign name {req.campaign!r}", field="--campaign",
                        fix="use letters, digits, '-' and '_' only")
    prov = provenance(req.campaign)
    profile = req.profile
    if profile is None:            # status: the campaign's own profile
        profile = prov.get("profile", "full") if req.verb == "status" else "full"
        req = replace(req, profile=profile)
    select_study(req.study, req.verb, req.campaign, profile, prov)
    study = load_study(profile=profile)  # fail early, with the study's one-line error
    env = dict(os.environ, **{CAMPAIGN_ENV: req.campaign, PROFILE_ENV: profile})
    if req.verb == "status":
        return Prepared(req, env)
    rf_system, systems = selection(req.system, study)
    check_selection(req.verb, req.campaign, rf_system, systems, study, prov)
    from t2hx.campaign import preflight   # builds planes (numpy): not for `t2hx --help`

    preflight.check(study, systems, rf_system)
    env.pop(SIM_SYSTEMS_ENV, None)
    if rf_system == SIM:
        env[SIM_SYSTEMS_ENV] = ",".join(s.name for s in systems)
    say_left_out(study, systems)
    return Prepared(req, env, rf_system, tuple(systems))


def run(req: CampaignRequest) -> int:
    """Run, dry-run or report the status of a campaign; ReFrame's exit status."""
    if req.verb not in VERBS:
        raise T2hxError(f"unknown verb {req.verb!r}", field="verb", fix=", ".join(VERBS))
    ready = prepare(req)
    req = ready.req
    assert req.profile is not None, "prepare() fills in the profile"
    if req.verb == "status":
        print(status(req.campaign, req.system, req.profile))
        return 0
    action = "--dry-run" if req.verb == "dry-run" else "-r"
    with guard.campaign_lock(work_root() / "reframe" / req.campaign, req.campaign):
        # The campaign's earlier sessions say which check files take longest (schedule).
        cmds = session_commands(ready, action)
        if req.verb == "run":
            _tidy(req.campaign, req.quiet)
            write_provenance(req.campaign, req.system, req.profile, ready.rf_system,
                             list(ready.conf_systems), reframe_command(ready, action))
        cpu, clock = cpu_times(), time.monotonic()
        warm = (warm_simulator(ready.env)
                if req.verb == "run" and ready.rf_system == SIM else nullcontext(ready.env))
        with warm as env:
            # ReFrame and its cases die with this process (t2hx.campaign.guard).
            returncode = guard.run_in_turn(cmds, env=env, cwd=ROOT,
                                           stdout=subprocess.DEVNULL if req.quiet else None)
        if req.verb == "run":
            record_cpu(req.campaign, cpu, time.monotonic() - clock)
    if req.verb == "run" and returncode == 0 and req.report:
        from t2hx.post.replay import replay

        # The figures and report of the study that produced the log (its figure set).
        done = replay(log_root() / req.campaign, quiet=req.quiet or None)
        print(f"campaign {req.campaign}: figures and report in {done.out}")
    return returncode


def _tidy(campaign: str, quiet: bool) -> None:
    """Before a run appends to a campaign: what an earlier run's death left half-done."""
    folder = log_root() / campaign
    for line in guard.repair_perflogs(folder / "perflogs"):
        print(line, file=sys.stderr)
    for name in archive.PACKED:         # a packed campaign (t2hx replay --pack) resumed
        if archive.unpack(folder, name) and not quiet:
            print(f"campaign {campaign}: unpacked {name}{archive.SUFFIX} to append to it",
                  file=sys.stderr)
    gone = guard.sweep_temporaries(folder) + guard.sweep_temporaries(
        work_root() / "reframe" / campaign)
    if gone and not quiet:
        print(f"campaign {campaign}: removed {gone} temporary files an earlier run left",
              file=sys.stderr)


def dry_run_dir(campaign: str) -> Path:
    """Where a dry run's job scripts' perflog records go (never log/<campaign>/)."""
    return work_root() / "reframe" / campaign / "dry-run" / "perflogs"


def session_commands(ready: Prepared, action: str) -> list[list[str]]:
    """The ReFrame commands of a run, in turn (t2hx/campaign/schedule.py): on the simulated
    systems misses first, then the repetitions the run cache serves, the costliest check
    files first; otherwise the one command of :func:`reframe_command`."""
    req = ready.req
    if action != "-r" or ready.rf_system != SIM:
        return [reframe_command(ready, action)]
    logs = [log_root() / req.campaign, log_root() / f".{req.campaign}.previous" / req.campaign]
    files = None if schedule.names_checks(req.reframe_args) else schedule.check_files(logs)
    return [reframe_command(ready, action, args, files)
            for args in schedule.sessions(req.reframe_args, simulated=True)]


def reframe_command(ready: Prepared, action: str, reframe_args: list[str] | None = None,
                    check_files: list[Path] | None = None) -> list[str]:
    """ReFrame over checks/ (or ``check_files``, in that order) with the request's
    ReFrame arguments (or ``reframe_args``)."""
    req = ready.req
    given = req.reframe_args if reframe_args is None else reframe_args
    extra = [a for a in given if a != "--"]
    if action == "-r":      # the session report belongs to the campaign's records
        report = log_root() / req.campaign / "reframe" / "report-{sessionid}.json"
        extra.insert(0, f"--report-file={report}")
    else:                   # ReFrame logs a valueless record per dry-run case: not ours
        extra.insert(0, f"--perflogdir={dry_run_dir(req.campaign)}")
    # Check files named after ``--`` are the ones loaded: ReFrame instantiates every case of
    # every file it loads before filtering (all of checks/ took 17 s for one mini case).
    if schedule.names_checks(extra):
        checks: list[str] = []
    elif check_files is not None:
        checks = [a for f in check_files for a in ("-c", str(f))]
    else:
        checks = ["-c", str(ROOT / "checks")]
    return [str(Path(sys.executable).parent / "reframe"), "-C", str(ROOT / "conf" / "reframe.py"),
            *checks, "--system", ready.rf_system, action, *extra]
