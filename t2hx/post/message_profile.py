"""Seed 003's stand-ins against its Table 4: what each simulated code sends, classified as the
paper classifies its traced codes (docs/fattree-configs.md#table-4-profile-check).

The paper profiles 16K-process runs (§3) and summarises them in Table 4: point-to-point
traffic *light*, *medium* or *heavy*, and the collectives each code calls, light or heavy.
Its classes rest on message size: a send is small below 512 B, medium below 64 KiB and large
above (the PSM2 protocol cut-offs of §3); Hypre, Atratus and Mercury send mostly small or
medium messages (light), MILC, pF3D and Qbox mostly large ones (heavy), ParaDiS many of both
(medium); a collective is heavy when its calls move large messages (Table 3: "All" or
"Large" size) and light otherwise, with Alltoall and Allgather sized per rank pair.

Here the same rules read the flow model's messages of one solver step of each stand-in
(t2hx/flowsim/apps.py ``term_phases``, the calibrated terms of conf/appmodels.yaml) at the
study's largest node count times its ranks per node, with the study's input. The tolerance:
the point-to-point class is decided by the share of sends that are large (under a third:
light; two thirds or more: heavy; between: medium); a heavy collective of Table 4 must be
heavy in the stand-in and the stand-in may have no heavy collective Table 4 lists as light or
not at all; a light collective of Table 4 the stand-in does not call is listed, not counted
(it moves little and its absence changes no network verdict).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from t2hx.study import Study, load_study

SMALL, LARGE = 512, 64 * 1024          # bytes: seed 003 §3's small / medium / large cut-offs
LIGHT_BELOW, HEAVY_FROM = 1 / 3, 2 / 3  # share of large sends: light / medium / heavy

#: Seed 003 Table 4: point-to-point class, and each collective light or heavy.
TABLE_4: dict[str, tuple[str, dict[str, str]]] = {
    "Hypre": ("light", {"allreduce": "light", "bcast": "light"}),
    "Atratus": ("light", {"allreduce": "light", "bcast": "light"}),
    "Mercury": ("light", {"alltoall": "light", "allgather": "light", "allreduce": "heavy",
                          "bcast": "heavy", "reduce": "heavy"}),
    "MILC": ("heavy", {"allreduce": "light"}),
    "ParaDiS": ("medium", {"allgather": "light", "allreduce": "heavy"}),
    "pF3D": ("heavy", {"allreduce": "light", "bcast": "light", "allgather": "light",
                       "alltoall": "heavy"}),
    "Qbox": ("heavy", {"alltoall": "light", "allreduce": "heavy", "bcast": "heavy",
                       "reduce": "heavy"}),
}


@dataclass(frozen=True)
class Profile:
    code: str                      # the paper's code (Table 4's row)
    benchmark: str                 # our stand-in
    ranks: int
    sends: int                     # point-to-point sends of one step, all ranks
    large_share: float             # of those sends, the share of large ones
    mean_bytes: float              # mean send size
    partners: float                # mean distinct destinations per rank
    p2p: str                       # light | medium | heavy | none
    collectives: dict[str, str]    # collective -> light | heavy

    def verdict(self) -> tuple[bool, list[str]]:
        """(agrees, what differs) against Table 4 under the module's tolerance."""
        p2p, coll = TABLE_4[self.code]
        diffs = [] if self.p2p == p2p else [f"p2p {self.p2p}, Table 4 {p2p}"]
        for name, weight in coll.items():
            ours = self.collectives.get(name)
            if weight == "heavy" and ours != "heavy":
                diffs.append(f"{name} {ours or 'absent'}, Table 4 heavy")
        for name, weight in self.collectives.items():
            if weight == "heavy" and coll.get(name) != "heavy":
                diffs.append(f"{name} heavy, Table 4 {coll.get(name, 'absent')}")
        return not diffs, diffs

    def missing_light(self) -> list[str]:
        return [n for n, w in TABLE_4[self.code][1].items()
                if w == "light" and n not in self.collectives]


def p2p_class(large_share: float) -> str:
    if large_share < LIGHT_BELOW:
        return "light"
    return "heavy" if large_share >= HEAVY_FROM else "medium"


def collective_class(call_bytes: float) -> str:
    """A collective's weight from the bytes one call moves per rank (per pair for Alltoall)."""
    return "heavy" if call_bytes >= LARGE else "light"


def stand_ins(study: Study) -> dict[str, str]:
    """Table 4's code -> our benchmark, from the study's titles ("Hypre -> AMG2013 …")."""
    out = {}
    for name, spec in study.catalog.items():
        code = str(spec.get("title", "")).split(" -> ")[0].strip()
        if code in TABLE_4:
            out[code] = name
    return out


def profile(study: Study, code: str, benchmark: str, ranks: int,
            inputs: dict | None = None) -> Profile:
    """One step of ``benchmark``'s calibrated model at ``ranks`` ranks, classified; with
    ``inputs``, those keys set over the study's input."""
    from t2hx.benchmarks import app
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim import appmodel
    from t2hx.flowsim.apps import term_phases

    spec, inp = app(benchmark), {**study.catalog[benchmark].get("input", {}), **(inputs or {})}
    model = appmodel.model(spec)
    if model is None:
        raise ValueError(f"{benchmark} has no calibrated model (conf/appmodels.yaml)")
    rules = load_system(system_path(study.all_combos()[0].system or study.system)).model["collectives"]
    sizes, pairs = [], []
    collectives: dict[str, str] = {}
    for term, total in zip(model.terms, model.term_bytes(ranks, inp)):
        per_rank = total / model.iterations
        coll = appmodel.COLLECTIVE.get(term.pattern)
        # an "all" term is one fit of both kinds; the calibrations find the transposes it
        # stands for point-to-point above two ranks (conf/appmodels.yaml)
        if coll and term.kind == "coll":
            call = per_rank / appmodel.PATTERNS[term.pattern](ranks, 1.0)
            call /= ranks if coll == "Alltoall" else 1
            collectives[coll.lower()] = max(collectives.get(coll.lower(), "light"),
                                            collective_class(call), key=("light", "heavy").index)
            continue
        for ph in term_phases(term.pattern, ranks, per_rank, 1e9, rules,
                              model.rules.measure(term.measure, inp, ranks)):
            sizes.append(ph.size)
            pairs.append(np.unique(ph.src.astype(np.int64) * ranks + ph.dst))
    # a rank's distinct destinations, summed over the phases (a partner met in two phases
    # counts twice, as it did per phase)
    partners = (np.bincount(np.concatenate(pairs) // ranks, minlength=ranks) if pairs
                else np.zeros(ranks))
    sent = np.concatenate(sizes) if sizes else np.zeros(0)
    share = float((sent >= LARGE).mean()) if len(sent) else 0.0
    return Profile(code, benchmark, ranks, len(sent), share,
                   float(sent.mean()) if len(sent) else 0.0, float(partners.mean()),
                   p2p_class(share) if len(sent) else "none", collectives)


def largest(study: Study) -> int:
    """The study's largest ladder step."""
    return max(max(v) for v in study.ladders.values())


def profiles(study_file: str | Path | None = None, profile_name: str | None = None,
             nodes: int | None = None) -> list[Profile]:
    """Every stand-in of the study as ``profile_name`` runs it, at ``nodes`` (default: its
    largest ladder step) times the ranks per node it runs at."""
    study = load_study(study_file, profile_name)
    n = nodes or largest(study)
    return [profile(study, code, bench, n * study.ranks_per_node_of(bench, n))
            for code, bench in stand_ins(study).items()]


#: Seed 003 §4 ran 16 processes per node (16,384 on 1,024 nodes) on Table 2's problems,
#: given per process. The study's default holds them (conf/studies/fattree-configs-sc17.yaml
#: says which input stands for which problem); the stand-ins that cannot hold theirs run one
#: rank per node there (docs/fattree-configs.md#at-the-papers-settings).
PAPER_RANKS_PER_NODE = 16


def paper_profiles(study_file: str | Path | None = None, nodes: int | None = None
                   ) -> list[Profile]:
    """The stand-ins the study's default runs at seed 003 §4's ranks per node."""
    study = load_study(study_file)
    n = nodes or largest(study)
    return [p for p in profiles(study_file, None, n)
            if study.ranks_per_node_of(p.benchmark, n) == PAPER_RANKS_PER_NODE]


def table(rows: list[Profile]) -> str:
    """The Markdown table docs/fattree-configs.md quotes."""
    out = ["| code → stand-in | sends/step | large | mean size | partners | p2p (Table 4) "
           "| collectives | verdict |", "|---|---|---|---|---|---|---|---|"]
    for p in rows:
        agrees, diffs = p.verdict()
        coll = ", ".join(f"{k} {v}" for k, v in sorted(p.collectives.items())) or "none"
        out.append(f"| {p.code} → {p.benchmark} | {p.sends:,} | {p.large_share:.0%} "
                   f"| {p.mean_bytes / 1024:,.1f} KiB | {p.partners:.1f} "
                   f"| {p.p2p} ({TABLE_4[p.code][0]}) | {coll} "
                   f"| {'agrees' if agrees else 'differs: ' + '; '.join(diffs)} |")
    return "\n".join(out) + "\n"
