"""Whether a campaign log was simulated by today's model (#47, "never stale").

A simulated campaign run records a *fingerprint* in provenance.json: the run cache's code
versions of the model (t2hx/flowsim/runcache.py: the whole, and the flow model's, which
leaves the packet engine out; a log of a study that runs no packet case is stale only when
the flow model's changed), the code of what the study computes outside ``t2hx simulate``
(capacity runs, workloads, history replays, network analyses: ``OUTSIDE_SIMULATE``; for a
study that runs no packet case, that code without the packet engine's too), and
digests of the conf systems and the study file it ran with (their simulated parts, as the
run cache's keys take them). Today's fingerprint differing in any part makes the log stale,
and the line says which part. The study counts as changed only where the log's profile reads
it: its settings outside ``profiles:`` and its own profile's section (a profile added for
another run leaves the log fresh); a run recorded before that digest existed is compared by
the study file at its commit. A log written before runs recorded one falls back to git: the
model's sources, the systems and the study as the run's commit had them against the working
tree. Measured logs have no model to go stale."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from t2hx import ROOT


@dataclass(frozen=True)
class Freshness:
    state: str          # fresh | stale | unknown | measured
    line: str


def fingerprint(system_files: list[Path], study_file: Path, profile: str = "full") -> dict:
    """Today's model, conf systems (by name) and study (whole, and as ``profile`` reads it),
    as digests; and the code of what the study computes outside ``t2hx simulate``."""
    import yaml

    from t2hx.flowsim import runcache

    study = yaml.safe_load(Path(study_file).read_text())
    parts = outside_parts(study)
    return {"model": runcache.code_version(), "model_flow": runcache.code_version(runcache.FLOW),
            "systems": {Path(p).stem: runcache.system_digest(Path(p)) for p in system_files},
            "study": runcache.digest(study), "study_profile": profile_digest(study, profile),
            "outside": {part: code_digest(part) for part in parts},
            "outside_flow": {part: code_digest(part, runcache.FLOW) for part in parts}}


#: What a campaign computes outside ``t2hx simulate`` (whose sources the run cache's model
#: version covers), by the study section that asks for it, and the modules its
#: ``t2hx campaign`` command starts from (t2hx/commands/campaign.py): capacity runs and
#: multi-job workloads (the job-mix model), job-history replays, generated-network analyses.
#: Their results go stale with their code as a case's go with the model's.
OUTSIDE_SIMULATE: dict[str, tuple[str, ...]] = {
    "capacity": ("t2hx.jobmix",), "workloads": ("t2hx.jobmix",),
    "histories": ("t2hx.history.sample_routing",),
    "networks": ("t2hx.placement.network_analysis", "t2hx.flowsim.exchange")}


def outside_parts(study: dict) -> list[str]:
    """The sections of OUTSIDE_SIMULATE the study has."""
    return [part for part in OUTSIDE_SIMULATE if study.get(part)]


def outside_sources(part: str, model: str | None = None) -> list[Path]:
    """The sources a part's results depend on: the model's (the app models it runs) and
    every module its entry modules reach; for ``model="flow"`` without the packet engine's
    (runcache.PACKET_ONLY), which a study that names no packet model never runs."""
    from t2hx.flowsim import runcache
    from t2hx.imports import closure
    from t2hx.paths import work_root

    reached = set(closure(list(OUTSIDE_SIMULATE[part]), work_root() / "imports"))
    if model == runcache.FLOW:
        reached -= {ROOT / p for p in runcache.PACKET_ONLY}
    return sorted(set(runcache.model_sources(model)) | reached)


def code_digest(part: str, model: str | None = None) -> str:
    h = hashlib.sha256()
    for path in outside_sources(part, model):
        h.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


#: Study keys no run reads: where run/reproduce writes each profile's log.
NOT_RUN_SETTINGS = ("profiles", "logs")


def profile_digest(study: dict, profile: str) -> str:
    """The study as one profile reads it: all but ``profiles:`` (and what no run reads,
    NOT_RUN_SETTINGS), and that profile's section."""
    from t2hx.flowsim import runcache

    base = {k: v for k, v in study.items() if k not in NOT_RUN_SETTINGS}
    return runcache.digest({"study": base,
                            "profile": (study.get("profiles") or {}).get(profile)})


def freshness(logdir: Path) -> Freshness:
    """The log's state against today's model, with one line to print."""
    path = Path(logdir) / "provenance.json"
    if not path.is_file():
        return Freshness("unknown", f"{logdir.name}: no provenance.json, model unknown")
    try:
        prov = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        prov = None
    runs = prov.get("runs") if isinstance(prov, dict) else None
    if not isinstance(prov, dict) or not isinstance(runs or [], list) or \
            not all(isinstance(r, dict) for r in runs or []):
        # replay names a broken provenance.json itself; here it only leaves the model unknown
        return Freshness("unknown", f"{logdir.name}: provenance.json unreadable, model unknown")
    if not prov.get("simulated", False):
        return Freshness("measured", f"{logdir.name}: measured runs, no model")
    runs = runs or [{}]
    try:
        if all(r.get("fingerprint") for r in runs):
            return _by_fingerprint(logdir.name, prov, runs)
        return _by_git(logdir.name, prov, runs)
    except (AttributeError, KeyError, TypeError, ValueError, OSError):
        return Freshness("unknown", f"{logdir.name}: provenance.json malformed, model unknown")


def _study_file(prov: dict) -> str:
    return str(prov.get("study_file") or
               f"conf/studies/{prov.get('study', 'hyperx-vs-fattree-sc19')}.yaml")


def _current(prov: dict, names: list[str], profile: str) -> dict:
    from t2hx.conf import system_path

    return fingerprint([system_path(n) for n in names], ROOT / _study_file(prov), profile)


def _study_changed(prov: dict, run: dict, now: dict) -> bool:
    """Whether the study changed where the run's profile reads it (module docstring)."""
    last = run["fingerprint"]
    if last.get("study") == now["study"]:
        return False
    recorded = last.get("study_profile")
    if recorded is None and run.get("git_hash"):
        import yaml

        done = subprocess.run(["git", "show", f"{run['git_hash']}:{_study_file(prov)}"],
                              cwd=ROOT, capture_output=True, text=True)
        if done.returncode == 0:
            recorded = profile_digest(yaml.safe_load(done.stdout) or {},
                                      run.get("profile") or "full")
    return recorded != now["study_profile"]


def _by_fingerprint(name: str, prov: dict, runs: list[dict]) -> Freshness:
    last = runs[-1]["fingerprint"]
    now = _current(prov, sorted(last.get("systems", {})), runs[-1].get("profile") or "full")
    changed = ["model"] if _model_changed(prov, last, now) else []
    packet = _runs_packet(prov)
    changed += [f"{part} code" for part in sorted(now["outside"])
                if _outside_changed(part, runs[-1], now, packet)]
    changed += ["study"] if _study_changed(prov, runs[-1], now) else []
    changed += [f"system {s}" for s, d in sorted(last.get("systems", {}).items())
                if now["systems"].get(s) != d]
    mixed = len({r["fingerprint"].get("model") for r in runs}) > 1
    note = "; its runs used more than one model" if mixed else ""
    if not changed:
        return Freshness("stale" if mixed else "fresh",
                         f"{name}: produced by model {last['model'][:12]}, today's{note}")
    return Freshness("stale", f"{name}: STALE, produced by model {last['model'][:12]}; "
                     f"today's is {now['model'][:12]} ({', '.join(changed)} changed since)"
                     f"{note}: rerun the campaign")


def _outside_changed(part: str, run: dict, now: dict, packet: bool) -> bool:
    """Whether the code of a part the study computes outside ``t2hx simulate`` changed since
    the run: by its digest (without the packet engine's sources for a study that runs no
    packet model, as the model's own version, when the run recorded that digest), or for a
    run recorded before the digests existed, by git (its sources at the run's commit against
    today's; a commit this clone lacks counts as changed)."""
    flow = run["fingerprint"].get("outside_flow")
    if flow is not None and not packet:
        return flow.get(part) != now["outside_flow"][part]
    recorded = run["fingerprint"].get("outside")
    if recorded is not None:
        return recorded.get(part) != now["outside"][part]
    if not run.get("git_hash"):
        return True
    files = [str(p.relative_to(ROOT)) for p in outside_sources(part)]
    done = subprocess.run(["git", "diff", "--quiet", run["git_hash"], "--", *files], cwd=ROOT,
                          capture_output=True)
    return done.returncode != 0


def _model_changed(prov: dict, last: dict, now: dict) -> bool:
    """Whether the model the log ran changed: the whole model (the packet model's code), or
    for a study that runs the flow model only, the flow model's (runcache.PACKET_ONLY left
    out). A study whose benchmarks name no packet model runs none (t2hx.study)."""
    if last.get("model") == now["model"]:
        return False
    if last.get("model_flow") != now["model_flow"]:
        return True
    return _runs_packet(prov)


def _runs_packet(prov: dict) -> bool:
    import yaml

    study = yaml.safe_load((ROOT / _study_file(prov)).read_text()) or {}
    return runs_packet_model(study)


def runs_packet_model(study: dict) -> bool:
    """Whether any benchmark of the study, in any profile, names the packet model."""
    def names_packet(node: object) -> bool:
        if isinstance(node, dict):
            return node.get("model") == "packet" or any(names_packet(v) for v in node.values())
        if isinstance(node, list):
            return any(names_packet(v) for v in node)
        return False

    return names_packet(study.get("benchmarks")) or names_packet(study.get("profiles"))


def _by_git(name: str, prov: dict, runs: list[dict]) -> Freshness:
    from t2hx.flowsim import runcache

    hashes = list(dict.fromkeys(str(r.get("git_hash", "")) for r in runs if r.get("git_hash")))
    if not hashes:
        return Freshness("unknown", f"{name}: no fingerprint and no commit recorded")
    files = [str(p.relative_to(ROOT)) for p in runcache.model_sources()]
    files += [f"conf/systems/{s}.yaml" for s in prov.get("systems", [])]
    if prov.get("study_file"):
        files.append(str(prov["study_file"]))
    changed: list[str] = []
    for commit in hashes:
        done = subprocess.run(["git", "diff", "--name-only", commit, "--", *files], cwd=ROOT,
                              capture_output=True, text=True)
        if done.returncode:
            return Freshness("unknown", f"{name}: no fingerprint, and commit {commit[:8]} is "
                             "not in this clone's history (model unknown)")
        changed += [f for f in done.stdout.split() if f not in changed]
    if not changed:
        return Freshness("fresh", f"{name}: produced at {hashes[-1][:8]}, whose model, "
                         "systems and study are today's (git)")
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return Freshness("stale", f"{name}: STALE, produced at {hashes[-1][:8]}; {shown} changed "
                     "since (git): rerun the campaign")
