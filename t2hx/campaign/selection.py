"""Which systems a campaign runs on: ``--system`` as ReFrame's system and the conf systems
it covers, checked against the study before ReFrame starts (one-line errors)."""

from __future__ import annotations

import os
import sys

from t2hx.conf import System
from t2hx.errors import ConfError, T2hxError
from t2hx.paths import hostfiles_root
from t2hx.reframe_site import load_systems
from t2hx.study import STUDY_ENV, Study, load_study, study_names, study_path

SIM = "sim"


def select_study(name: str | None, verb: str, campaign: str, profile: str,
                 prov: dict) -> None:
    """``--study`` for this process and ReFrame's (the checks read $T2HX_STUDY); a campaign
    keeps the study it started with (``status`` without --study reads that one)."""
    was = prov.get("study")
    if not name and verb == "status" and was and was in study_names():
        name = was
    if name:
        study_path(name)                      # an unknown name fails here, listing the known
        os.environ[STUDY_ENV] = name
    if was:
        now = load_study(profile=profile).name
        if was != now:
            raise T2hxError(f"campaign '{campaign}' was run with study '{was}', not "
                            f"'{now}'", field="--study",
                            fix=f"use --study {was} or another --campaign")


def selection(value: str, study: Study) -> tuple[str, list[System]]:
    """The ReFrame system and the conf systems of ``--system`` (module help): ``sim`` is the
    study's own systems, ``sim:A,B`` those, ``local`` none, another name a real cluster
    (``NAME:PLANE`` and ``local:slurm`` pass ReFrame's partition through)."""
    if value.split(":")[0] == "local":
        return value, []
    known = {s.name: s for s in load_systems()}
    if value == SIM or value.startswith(f"{SIM}:"):
        names = study.own_systems() if value == SIM else \
            [n.strip() for n in value[len(SIM) + 1:].split(",") if n.strip()]
        if not names:
            raise T2hxError(f"--system {value} names no system", field="--system",
                            fix="use sim:NAME with NAME a file of conf/systems/, e.g. "
                            f"sim:{next(iter(known))}")
        rf = SIM
    else:
        names, rf = [value.split(":")[0]], value
    for name in names:
        if name not in known and value == SIM:     # the study names it: the study's error
            raise ConfError(f"no conf system '{name}' (the study's own system)",
                            file=study.path, field="system",
                            fix="use one of: " + ", ".join(known))
        if name not in known:
            raise T2hxError(f"no conf system '{name}'", field="--system",
                            fix="use one of: " + ", ".join(known))
    return rf, [known[n] for n in dict.fromkeys(names)]


def check_selection(verb: str, campaign: str, rf_system: str, systems: list[System],
                    study: Study, prov: dict) -> None:
    """One-line errors before ReFrame starts: a simulated system without hostfiles, a system
    the study's combos cannot use, and (run) a campaign that would mix systems its study
    does not compare."""
    names = [s.name for s in systems]
    if study.systems():           # a study that compares systems runs only on those
        bad = [n for n in names if n not in study.own_systems()]
        if bad:
            raise T2hxError(f"study '{study.name}' runs on its own systems "
                            f"({', '.join(study.own_systems())}), not '{bad[0]}'",
                            field="--system", fix=f"use --system {SIM} or another --study")
    else:
        # A study that compares combos on one machine: one system per campaign, so its
        # report and scorecard never pool two machines' runs.
        if len(names) > 1:
            raise T2hxError(f"study '{study.name}' compares combos on one system, not "
                            f"{len(names)} ({', '.join(names)})", field="--system",
                            fix=f"one campaign per system, e.g. --system {SIM}:{names[0]}")
        was = [n for n in prov.get("systems", []) if n not in names]
        if verb == "run" and names and was:
            raise T2hxError(f"campaign '{campaign}' ran on {', '.join(was)}, not "
                            f"{', '.join(names)}", field="--system",
                            fix=f"use --system {SIM}:{was[0]} or another --campaign")
    # Only placed cases read hostfiles: a study of job histories places its own jobs.
    if rf_system == SIM:
        for name in names:
            if study.needs_hostfiles(name) and not (hostfiles_root() / name).is_dir():
                raise T2hxError(f"system '{name}' has no hostfiles in {hostfiles_root()}",
                                field="--system", fix=f"run/t2hx hostfiles --system {name}")


def say_left_out(study: Study, systems: list[System]) -> None:
    """Once per system: the study's combos it cannot run (a plane it lacks, an engine its
    plane does not route with); ReFrame then generates none of their cases there."""
    for system in systems:
        by_reason: dict[str, list[str]] = {}
        for combo, why in study.left_out(system).items():
            by_reason.setdefault(why, []).append(combo)
        for why, combos in by_reason.items():
            print(f"campaign: {system.name}: not run: {', '.join(combos)} ({why})",
                  file=sys.stderr)
