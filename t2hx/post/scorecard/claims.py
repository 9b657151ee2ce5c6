"""Claims files (``conf/claims/<study>.yaml``): every quantitative statement of a seed, with
how ours is computed and judged; loaded and checked here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from t2hx import ROOT
from t2hx.errors import T2hxError

CLAIMS_DIR = ROOT / "conf" / "claims"          # <study name>.yaml: that study's seed claims
DEFAULT_CLAIMS_STUDY = "hyperx-vs-fattree-sc19"   # logs from before studies were recorded
CLAIMS = CLAIMS_DIR / f"{DEFAULT_CLAIMS_STUDY}.yaml"

# A portable claim states an ordering (better/worse, a rank, on par), never a magnitude
# or an absolute number: magnitudes belong to the seed's machine.
PORTABLE_FORMS = ("sign", "rank", "par")

#: What a claim's effect comes from, as its paper explains it (docs/modelling.md#scorecard).
MECHANISMS = {
    "congestion": "links shared by a job's own flows: routing, path diversity, topology",
    "endpoint": "software at the endpoints: the MPI path (PARX's bfo PML), per-message costs",
    "host": "the node's injection: HCA, host interface, absolute bandwidths",
    "placement": "which nodes a job gets: locality, spreading, isolation",
    "interference": "other jobs' traffic on shared links (capacity, multi-job workloads)",
    "compute": "the codes' compute share, which hides the network",
    "variability": "run-to-run spread",
    "bandwidth": "link rate, rails, planes and tapering of a configuration",
    "deadlock": "what the routing needs to stay deadlock-free (virtual lanes)",
    "topology": "the network graph itself: path lengths, diameter, cable layout",
}


def load_claims(path: Path = CLAIMS) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise T2hxError(f"claims file unreadable: {err}", file=path) from err
    claims = data.get("claims") or []
    ids = [c.get("id") for c in claims]
    if len(set(ids)) != len(ids) or not all(ids):
        raise T2hxError("claim ids must be present and unique", file=path)
    for c in claims:
        if "compute" not in c or "published" not in c or "source" not in c:
            raise T2hxError(f"claim {c['id']}: needs source, published and compute", file=path)
        _check_portable(c, path)
        if c.get("mechanism") not in MECHANISMS:
            raise T2hxError(f"claim {c['id']}: mechanism is {c.get('mechanism')!r}", file=path,
                            field=f"claims[{c['id']}].mechanism",
                            fix="one of " + ", ".join(MECHANISMS))
    return data.get("defaults") or {}, claims


def _check_portable(claim: dict[str, Any], path: Path) -> None:
    """``portable: true`` is scored on any system; only an ordering over no fixed node
    counts or campaign conditions can be (node counts and windows are the seed's)."""
    flag = claim.get("portable", False)
    where = f"claims[{claim['id']}].portable"
    if not isinstance(flag, bool):
        raise T2hxError(f"portable is {flag!r}", file=path, field=where, fix="true or false")
    if not flag:
        return
    comp = claim["compute"]
    if not any(k in claim["published"] for k in PORTABLE_FORMS) or \
            comp.get("kind") in ("value", "unmeasured"):
        raise T2hxError("a portable claim states an ordering", file=path, field=where,
                        fix="publish it as sign, rank or par, or drop portable")
    for key in ("nodes", "requires"):
        if comp.get(key) is not None:
            raise T2hxError(f"a portable claim has compute.{key} (the seed machine's)",
                            file=path, field=where, fix=f"drop compute.{key} or portable")


def portable_claims(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in claims if c.get("portable")]


def claims_of(study: str | None) -> Path | None:
    """The claims file of the study that produced a log (conf/claims/<study>.yaml), if any."""
    path = CLAIMS_DIR / f"{study or ''}.yaml"
    return path if study and path.is_file() else None
