"""A campaign's provenance (``log/<campaign>/provenance.json``): every run's command, git
hash, system, conf systems and profile (and how busy the machine's cores were while it ran),
the study, and the combos each system cannot run."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

from t2hx import ROOT
from t2hx.atomic import atomic_write
from t2hx.campaign.selection import SIM
from t2hx.conf import System
from t2hx.paths import log_root
from t2hx.study import load_study

LOCAL_BINARIES = "the Spack view of spack-env (T2HX_SPACK_VIEW)"


def provenance(campaign: str) -> dict:
    path = log_root() / campaign / "provenance.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def git_hash() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    return out.stdout.strip() or "unknown"


def portable(arg: str) -> str:
    """A command argument relative to the checkout: provenance travels with the log, and
    this machine's paths mean nothing elsewhere."""
    return arg.replace(f"{ROOT}/", "")


def plane_hardware(system: System) -> dict[str, dict[str, object]]:
    """plane → its link rate (Gbit/s) and the HCA's host interface (the packet engine's
    ``model.packet.hca``) in words."""
    from t2hx.flowsim.hostif import describe

    hca = describe((system.model.get("packet") or {}).get("hca"))
    return {p.name: {"gbps": p.gbps, "host_interface": hca} for p in system.planes.values()}


def write_provenance(campaign: str, system: str, profile: str, rf_system: str,
                     systems: list[System], cmd: list[str]) -> None:
    study = load_study(profile=profile)
    logdir = log_root() / campaign
    path = logdir / "provenance.json"
    prov = json.loads(path.read_text()) if path.is_file() else {}
    runs = prov.get("runs", [])
    names = [s.name for s in systems]
    run: dict[str, object] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": [portable(a) for a in cmd], "git_hash": git_hash(),
        "system": system, "conf_systems": names, "profile": profile}
    if rf_system.split(":")[0] == "local":
        run["binaries"] = LOCAL_BINARIES
    if rf_system == SIM:        # what the log goes stale against (t2hx/post/freshness.py)
        from t2hx.post.freshness import fingerprint

        run["fingerprint"] = fingerprint([s.path for s in systems], study.path, study.profile)
    runs.append(run)
    # The conf systems of every run: the report names them, status counts their cases.
    known = list(dict.fromkeys([*prov.get("systems", []), *names]))
    # ... and the study's combos each cannot run (the report lists them beside the system).
    left_out = {**prov.get("left_out", {}), **{s.name: study.left_out(s) for s in systems}}
    # Each plane's link and host interface: the report states them side by side.
    planes = {**prov.get("planes", {}), **{s.name: plane_hardware(s) for s in systems}}
    prov.update(campaign=campaign, baseline=study.baseline, study=study.name, planes=planes,
                study_file=portable(str(study.path.resolve())),
                profile=profile, git_hash=runs[-1]["git_hash"],
                simulated=rf_system == SIM, systems=known,
                left_out={k: v for k, v in left_out.items() if v}, runs=runs)
    logdir.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(prov, indent=2) + "\n")


def cpu_times() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine since boot (/proc/stat's first line;
    idle and iowait are not busy), or None where there is no /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(x) for x in fields]
    hz = os.sysconf("SC_CLK_TCK")
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks) - idle) / hz, sum(ticks) / hz


def record_cpu(campaign: str, before: tuple[float, float] | None, wall_s: float) -> None:
    """Adds to the campaign's last provenance run how busy the machine's cores were while
    it ran (bench/paper_scale.py's packing: a measured run needs an otherwise idle
    machine, which the record cannot tell)."""
    after = cpu_times()
    path = log_root() / campaign / "provenance.json"
    if before is None or after is None or not path.is_file():
        return
    prov = json.loads(path.read_text())
    if not prov.get("runs"):
        return
    busy, total = after[0] - before[0], after[1] - before[1]
    prov["runs"][-1]["cpu"] = {"cores": os.cpu_count(), "wall_s": round(wall_s, 1),
                               "busy_s": round(busy, 1),
                               "busy_fraction": round(busy / total, 3) if total > 0 else None}
    atomic_write(path, json.dumps(prov, indent=2) + "\n")
