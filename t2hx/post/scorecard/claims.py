"""Claims files (``conf/claims/<study>.yaml``): every quantitative statement of a seed, with
how ours is computed and judged; loaded and checked here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from t2hx import ROOT
from t2hx.errors import T2hxError
from t2hx.post.scorecard.schema import check_claim
from t2hx.post.scorecard.selection import RUNS_STATS

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


#: Computations whose verdict cannot depend on the network's behaviour or the routing: the
#: properties of a generated graph (diameter, ASPL, hops, cables). Any correct generator
#: reproduces them, so they are *generator checks*, counted apart from the findings (#47).
CHECK_KINDS = frozenset({"network"})


def is_check(claim: dict[str, Any]) -> bool:
    """A generator check: a kind of CHECK_KINDS, or ``check: <why it cannot fail>``."""
    return claim["compute"]["kind"] in CHECK_KINDS or bool(claim.get("check"))


def load_claims(path: Path = CLAIMS) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The defaults and the claims of a claims file, every claim checked
    (t2hx.post.scorecard.schema); the first mistake raises one line naming it."""
    top = _read(Path(path))
    claims, defaults = top.get("claims"), top.get("defaults") or {}
    if not isinstance(claims, list) or not claims:
        raise T2hxError("no claims" if claims in (None, []) else
                        f"claims is a {type(claims).__name__}, not a list", file=path,
                        field="claims", fix="list the claims under claims: (one '- id: ...' each)")
    if not isinstance(defaults, dict):
        raise T2hxError(f"defaults is a {type(defaults).__name__}, not a mapping", file=path,
                        field="defaults", fix="write defaults: {dead_band: 0.01, ...} or drop it")
    if defaults.get("runs", "best") not in RUNS_STATS:
        raise T2hxError(f"runs is {defaults['runs']!r}", file=path, field="defaults.runs",
                        fix="one of " + ", ".join(RUNS_STATS))
    seen: set[str] = set()
    for k, c in enumerate(claims):
        check_claim(c, k, Path(path))
        if c["id"] in seen:
            raise T2hxError("a second claim with this id", file=path,
                            field=f"claims[{c['id']}].id", fix="give every claim its own id")
        seen.add(c["id"])
        if c.get("mechanism") not in MECHANISMS:
            raise T2hxError(f"mechanism is {c.get('mechanism')!r}", file=path,
                            field=f"claims[{c['id']}].mechanism",
                            fix="one of " + ", ".join(MECHANISMS))
        if c.get("runs", "best") not in RUNS_STATS:
            raise T2hxError(f"runs is {c['runs']!r}", file=path, field=f"claims[{c['id']}].runs",
                            fix="one of " + ", ".join(RUNS_STATS))
        if "check" in c and (not isinstance(c["check"], str) or not c["check"].strip()):
            raise T2hxError("check is not text", file=path, field=f"claims[{c['id']}].check",
                            fix="say why the claim cannot fail (a generator check), or drop it")
        _check_portable(c, path)
    return defaults, claims


def _read(path: Path) -> dict[str, Any]:
    """The file's top-level mapping."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise T2hxError(f"claims file unreadable: {err}", file=path,
                        fix="a YAML claims file such as conf/claims/" + CLAIMS.name) from None
    if data is None:
        raise T2hxError("empty claims file", file=path,
                        fix="write defaults: and claims: as in conf/claims/" + CLAIMS.name)
    if not isinstance(data, dict):
        raise T2hxError(f"a {type(data).__name__} at the top level, not a mapping", file=path,
                        fix="put the claims under a key: 'claims:', each '- id: ...' below it")
    return data


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
