"""How far a campaign got: its recorded cases against the cases its study and profile
have on the conf systems it ran on."""

from __future__ import annotations

from t2hx.campaign.provenance import provenance
from t2hx.campaign.selection import SIM, selection
from t2hx.errors import T2hxError
from t2hx.paths import log_root
from t2hx.reframe_site import load_systems
from t2hx.study import load_study


def status(campaign: str, system: str, profile: str) -> str:
    """Recorded cases of the campaign on one ReFrame system against the cases its study and
    profile have on the conf systems it ran on there (provenance), each with its own ladder
    clip, planes and engines (Study.cases_on); a campaign not run yet: on ``--system``'s."""
    from t2hx.post.perflog import CASE_KEY, recorded_cases

    study = load_study(profile=profile)
    rf, systems = selection(system, study)
    rf = rf.split(":")[0]                  # perflogs/<ReFrame system>/<partition>/
    folder = log_root() / campaign / "perflogs" / rf
    keys = recorded_cases(folder, ("partition", *CASE_KEY))
    if rf == "local":      # which checks have a local binary is the checks' business
        return f"campaign {campaign} on local: {len(keys)} cases recorded"
    ran = [n for run in provenance(campaign).get("runs", [])
           if run.get("system", "").split(":")[0] == rf for n in run.get("conf_systems", [])]
    if ran:
        known = {s.name: s for s in load_systems()}
        missing = [n for n in ran if n not in known]
        if missing:
            raise T2hxError(f"campaign '{campaign}' ran on '{missing[0]}', which has no "
                            "conf file here", field="--system",
                            fix=f"restore conf/systems/{missing[0]}.yaml")
        systems = [known[n] for n in dict.fromkeys(ran)]
    expected = sum(study.cases_on(s, simulated=rf == SIM) for s in systems)
    names = ", ".join(s.name for s in systems)
    return (f"campaign {campaign} on {rf} ({names}; profile {profile}): "
            f"{len(keys)} of {expected} cases recorded")
