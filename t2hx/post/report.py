"""``report.md`` and ``report.html``: every figure with the table behind it, provenance, what
was skipped, and (simulated campaigns) the seeds' reference numbers beside ours.

The report is built as a list of blocks and rendered twice, so the HTML needs no Markdown
library. Provenance comes from ``<logdir>/provenance.json`` (keys shown as given; the usual
ones are campaign, conf_hash, git_hash, versions, date, baseline). The systems section names
the systems the runs come from. The scorecard section lists every quantitative statement of
the study's seed (Fig 1, §5 for seed 000) with ours from the study's own system and a verdict
(t2hx.post.scorecard); another system (a port) gets a section of the portable claims only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from t2hx.post import html_report
from t2hx.post.flow_vs_packet import ModelComparison
from t2hx.post.scorecard.text import VERDICTS, profile_label
from t2hx import benchmarks
from t2hx.post.figures import Figure, bytes_label
from t2hx.post.store import write_text
from t2hx.routing.reroute import DERIVED, NO_DEMAND, demand_line

Block = tuple


#: Columns whose numbers are relative gains (shown in %), counts (integers), bytes.
GAIN_COLUMNS = ("gain", "best-run gain", "median gain")
COUNT_COLUMNS = ("runs", "repetitions", "records", "finished", "count", "nodes", "ranks",
                 "jobs", "cases")
SIZE_COLUMNS = ("msg_size",)


def _cell(v: Any, column: str = "") -> str:
    """A table cell for people: gains in %, counts as integers, message sizes with units."""
    if v is None or (isinstance(v, float) and pd.isna(v)) or v is pd.NA:
        return "–"
    number = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    if number and column in GAIN_COLUMNS:
        return f"{100 * float(v):+.1f} %"
    if number and column in COUNT_COLUMNS and float(v).is_integer():
        return str(int(v))
    if number and column in SIZE_COLUMNS and float(v).is_integer():
        return bytes_label(int(v))
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|")


def on_systems(names: list[str]) -> str:
    """' on <system>, …' for a title, from the systems a log holds runs of."""
    named = [n for n in names if n]
    return f" on {', '.join(named)}" if named else ""


def systems_table(results: pd.DataFrame, systems: pd.Series, names: list[str],
                  own: list[str] | None, scores: list, study: str | None,
                  left_out: dict[str, dict[str, str]] | None = None) -> pd.DataFrame:
    """One row per system the log holds runs of: records, how they ran, the study's combos
    it could not run (provenance ``left_out``: plane or engine missing), what is scored
    there (``scores``: t2hx.post.replay.Scored per system)."""
    study = study or "hyperx-vs-fattree-sc19"
    left_out = left_out if isinstance(left_out, dict) else {}
    rows = []
    for name in names:
        sub = results[systems == name]
        how = ("this machine (local)" if name == "local" else
               "simulated" if sub["simulated"].all() else
               "real" if not sub["simulated"].any() else "simulated and real")
        mine = own is None or name in own or name == ""
        hit = next((x for x in scores if x.own == mine and (mine or x.system == name)), None)
        if hit is None:
            scored = "–"
        elif mine:
            scored = f"every claim of conf/claims/{study}.yaml"
        elif hit.frame is None:
            scored = "none: no claim is marked portable"
        else:
            scored = f"the {len(hit.frame)} portable claims only"
        skipped = left_out.get(name) or {}
        reasons: dict[str, list[str]] = {}
        for combo, why in (skipped.items() if isinstance(skipped, dict) else []):
            reasons.setdefault(str(why), []).append(str(combo))
        rows.append([name or "not named (partitions name planes only)", len(sub), how,
                     "; ".join(f"{', '.join(c)} ({why})" for why, c in reasons.items())
                     or "none",
                     "yes" if mine and own is not None else "no" if own is not None else "–",
                     scored])
    return pd.DataFrame(rows, columns=["system", "records", "runs", "combos not run",
                                       "the study's own", "scorecard"])


@dataclass
class ReportInputs:
    """Everything a report is made of (run/replay gathers it; :func:`blocks` lays it out).
    ``values`` (from :func:`measured_values`) replaces the comparisons for a log of one
    combo, e.g. a campaign on the `local` system. ``systems`` (:func:`systems_table`) names
    the systems the runs come from; ``others`` are the scorecards of systems the study was
    not written for (portable claims; None: none portable), ``own`` the study's systems,
    ``ran`` how many runs, benchmarks and combos the log holds (:func:`glance_blocks`),
    ``pictures`` the scorecard's and the engines' summary pictures (t2hx.post.tiles)."""
    campaign: str
    prov: dict[str, Any]
    summary: dict[str, Any]
    baseline: str | None
    figs: list[Figure]
    simulated: bool
    reference: pd.DataFrame | None
    out: Path
    scorecard: pd.DataFrame | None = None
    capacity: list[dict] | None = None
    values: pd.DataFrame | None = None
    systems: pd.DataFrame | None = None
    others: list[tuple[str, pd.DataFrame | None]] | None = None
    own: list[str] | None = None
    engines: ModelComparison | None = None
    ran: dict[str, int] | None = None
    pictures: dict[str, Figure] = field(default_factory=dict)


def blocks(r: ReportInputs) -> list[Block]:
    """The report's blocks, in page order."""
    named = [] if r.systems is None else \
        [n for n in r.systems["system"] if not n.startswith("not named")]
    b: list[Block] = [("h", 1, f"t2hx report — campaign {r.campaign}" + on_systems(named))]
    if r.values is None:
        b.append(("p", "Generated by `run/replay` from the log directory alone. Gains are "
                  "relative to the baseline combo from the best of N runs "
                  "(docs/modelling.md#relative-gain): lower-is-better gain = t_base/t − 1, "
                  "higher-is-better gain = x/x_base − 1; missing cells stay empty."))
    else:
        b.append(("p", "Generated by `run/replay` from the log directory alone. The log holds "
                  f"one combo ({r.baseline}), so there are no relative gains, gain figures or "
                  "scorecard (they compare combos); the measured values follow, best of N."))
    if r.summary.get("model"):
        b.append(("p", f"Model when this report was generated: {r.summary['model']} "
                  "(`t2hx scorecard` says it for today)."))
    if r.ran is not None:
        b += glance_blocks(r.ran, r.simulated, r.scorecard, r.engines, r.prov.get("profile"))
    if r.systems is not None and len(r.systems):
        study = str(r.prov.get("study") or "hyperx-vs-fattree-sc19")
        b.append(("h", 2, "Systems"))
        b.append(("p", f"The runs of this log come from {len(r.systems)} system(s), named by "
                  "their ReFrame partitions (sim: `<system>-<plane>`) and provenance.json. "
                  f"Study {study} was written for "
                  f"{', '.join(r.own) if r.own else 'a system not known here'}: its seed's claims "
                  "and reference numbers are compared with the runs of "
                  f"{'those systems' if r.own and len(r.own) > 1 else 'that system'} only; another "
                  "system (a port) gets the figures, and a scorecard of the claims the claims "
                  "file marks portable, if any (docs/studies.md#ports-and-the-seeds-claims)."))
        b.append(("table", r.systems))
    b += plane_blocks(r.prov.get("planes"))
    b += provenance_blocks(r.prov, r.baseline, r.simulated)
    if sources := r.summary.get("parx_demand"):     # what the runs assumed, stated once
        said = [demand_line(sources), "recorded profiles live in conf/profiles/ (`t2hx demand "
                "record`)"]
        if sources.get(DERIVED):
            said.append("a derived demand is the simulator's pattern, not a measurement")
        if sources.get(NO_DEMAND):
            said.append("a job without demand ran on PARX's demand-free routing")
        b.append(("p", "; ".join(said) + " (docs/routing.md#derived-demand)."))
    b.append(("h", 2, "Inputs"))
    counts = {k: v for k, v in r.summary.items() if isinstance(v, int)}
    b.append(("table", pd.DataFrame(sorted(counts.items()), columns=["count", "value"])))
    b.append(("h", 3, f"Skipped ({len(r.summary['skipped'])})"))
    if r.summary["skipped"]:
        b.append(("table", pd.DataFrame(r.summary["skipped"])[["what", "path", "reason"]]))
    else:
        b.append(("p", "Nothing was skipped."))
    if r.summary["ignored"]:
        b.append(("p", f"{len(r.summary['ignored'])} raw file(s) without a result were ignored in "
                  "runs whose other files had results (listed in data/summary.json)."))
    if r.simulated and r.reference is not None:
        b.append(("h", 2, "Seeds' reference numbers beside ours"))
        b.append(("table", r.reference))
    if r.scorecard is not None:
        b += scorecard_blocks(r.scorecard, str(r.prov.get("study") or "hyperx-vs-fattree-sc19"),
                              picture_block(r.pictures.get("scorecard"), r.out))
    if r.engines is not None:
        b += engine_blocks(r.engines, picture_block(r.pictures.get("engines"), r.out))
    for name, frame in r.others or []:
        b += port_scorecard_blocks(name, frame, str(r.prov.get("study") or
                                                   "hyperx-vs-fattree-sc19"), r.own)
    if r.values is not None:
        b += values_blocks(r.values)
    b.append(("h", 2, "Figures"))
    b.append(("p", FIGURE_FILES))
    if r.values is None:
        b.append(("p", "Where each figure of the study's seed paper stands here:"))
        b.append(("table", paper_map(r.figs)))
    elif not r.figs:
        b.append(("p", "None: every figure compares combos."))
    for fig in r.figs:
        b.append(("h", 3, fig.title))
        b += picture_block(fig, r.out)
        if fig.table is not None and not fig.table.empty:
            b.append(("table", fig.table))
        if fig.kind == "capacity" and r.capacity:
            b.append(("p", capacity_paragraph(r.capacity)))
    return b


def plane_blocks(planes: Any) -> list[Block]:
    """Each plane's link beside its host interface (provenance ``planes``; a log written
    before they were recorded has none)."""
    if not isinstance(planes, dict) or not planes:
        return []
    rows = [[system, plane, f"{hw.get('gbps')} Gbit/s", hw.get("host_interface", "–")]
            for system, by_plane in planes.items() if isinstance(by_plane, dict)
            for plane, hw in by_plane.items() if isinstance(hw, dict)]
    if not rows:
        return []
    return [("p", "Links and host interfaces (the packet engine moves every byte through the "
             "host interface too; docs/modelling.md#packet-engine):"),
            ("table", pd.DataFrame(rows, columns=["system", "plane", "link",
                                                  "host interface"]))]


def provenance_blocks(prov: dict[str, Any], baseline: str | None,
                      simulated: bool) -> list[Block]:
    """provenance.json as a table of its scalar keys (each once), and its runs as a table."""
    rows = [[k, _words(prov[k])] for k in sorted(prov) if k != "runs"]
    if not prov:
        rows = [["provenance.json", "absent in the log directory"]]
    if "baseline" not in prov:
        rows.append(["baseline", baseline or "none"])
    rows = [r for r in rows if r[0] != "simulated"] + [["simulated", "yes" if simulated
                                                        else "no"]]
    out: list[Block] = [("h", 2, "Provenance"),
                        ("table", pd.DataFrame(rows, columns=["key", "value"]))]
    runs = [r for r in prov.get("runs") or [] if isinstance(r, dict)]
    if runs:
        out.append(("h", 3, f"Runs of the campaign ({len(runs)})"))
        out.append(("table", pd.DataFrame([{
            "date": r.get("date", ""), "system": r.get("system", ""),
            "profile": r.get("profile", ""), "git": str(r.get("git_hash", ""))[:12],
            "command": " ".join(map(str, r.get("command") or []))} for r in runs])))
    return out


def _words(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        text = ", ".join(f"{a}={c}" for a, c in v.items())
    elif isinstance(v, list):
        text = ", ".join(map(str, v))
    else:
        text = "" if v is None else str(v)
    return text or "none"


def glance_blocks(ran: dict[str, int], simulated: bool, scorecard: pd.DataFrame | None,
                  engines: ModelComparison | None, profile: str | None = None) -> list[Block]:
    """What an evaluator needs first: what ran, simulated or measured and how, and the
    scorecard's counts."""
    what = (f"{ran['runs']} runs of {ran['benchmarks']} benchmarks on {ran['combos']} "
            f"combos ({ran['records']} records)")
    if not simulated:
        how = (f"{what}, measured on the cluster the log names (Systems, Provenance). The "
               "spread of repeated runs is the machine's.")
    else:
        packet = sorted(engines.side_by_side["benchmark"].unique()) if engines is not None \
            else []
        how = (f"{what}, all simulated: each plane built in ibsim and routed by the real "
               "OpenSM (PARX and SAR through our plugin); "
               + (f"{', '.join(packet)} on the packet engine (MTU packets, credit flow "
                  "control per VL, the HCA's PCIe interface; each case also on the flow "
                  "model: Network engines"
                  + ("; above the profile's packet_up_to nodes on the flow model" if profile ==
                     "paper" else "") + "), " if packet else "")
               + "every other benchmark on the flow model (max-min fair rates) with the "
               "application models calibrated from real runs (docs/modelling.md); the "
               "capacity mix on the fluid engine with the inter-job term fitted to the "
               "packet engine (docs/modelling.md#interference), each run with its launch "
               "and set-up (docs/modelling.md#run-overheads). Nothing in this log was "
               "measured on hardware. The spread of repeated runs is the noise model's "
               "(docs/modelling.md#run-to-run-noise): every combo draws from the same "
               "measured distribution, so a whisker's width says nothing about which fabric "
               "varies less.")
    out: list[Block] = [("h", 2, "At a glance"), ("p", how)]
    if scorecard is not None:
        n = {v: int((scorecard["verdict"] == v).sum()) for v in VERDICTS}
        label = f"; {profile_label(profile)}" if profile else ""
        out.append(("p", f"Scorecard ({len(scorecard)} claims of the seed paper, strict rules: "
                    f"docs/modelling.md#scorecard{label}): " + ", ".join(
                        f"{n[v]} {v}" for v in VERDICTS if n[v]) + "."))
    return out


VALUE_COLUMNS = ["benchmark", "ranks", "metric", "msg_size", "value", "unit", "repetitions"]


def measured_values(results: pd.DataFrame) -> pd.DataFrame:
    """Per study benchmark (a registry name, as its check records it) and rank count: its
    registry metric (seed 000 Table 2), best over the repetitions; for a message-size sweep at
    the largest size (the value the check's perflog records). Other parser records of a raw
    output (IMB's PingPong rows of MuPP, …) stay in data/results.csv."""
    from t2hx.post.figures import primary_metric

    rows = []
    known = results.assign(benchmark=results["benchmark"].map(_study_name)).dropna(
        subset=["benchmark"])
    for (bench, nodes), cell in known.groupby(["benchmark", "nodes"], sort=True):
        metrics = sorted(cell["metric"].dropna().unique())
        metric: str | None = benchmarks.get(bench).metric   # the registry's Table-2 metric
        metric = metric if metric in metrics else primary_metric(bench, metrics)
        cell = cell[cell["metric"] == metric]
        size = cell["msg_size"].max()
        if pd.notna(size):
            cell = cell[cell["msg_size"] == size]
        pick = cell["value"].max() if cell["better"].iloc[0] == "higher" else cell["value"].min()
        rows.append([bench, int(nodes), metric, pd.NA if pd.isna(size) else int(size),
                     float(pick), cell["unit"].iloc[0], int(cell["repetition"].nunique())])
    return pd.DataFrame(rows, columns=VALUE_COLUMNS).astype({"msg_size": "Int64"})


def _study_name(name: object) -> str | None:
    """The registry name a record's benchmark stands for (a parser family such as qbox ->
    qball), None for a record of no study benchmark (IMB's PingPong rows of MuPP)."""
    hit = benchmarks.find(str(name))
    return None if hit is None else hit[0].name(hit[1])


def values_blocks(values: pd.DataFrame) -> list[Block]:
    return [("h", 2, f"Measured values ({values['benchmark'].nunique()} benchmarks)"),
            ("p", "One row per benchmark and rank count: the primary metric of seed 000 "
             "Table 2 as parsed from the run's records, best over the repetitions (message "
             "sweeps: the largest size [bytes]; every size and metric is in "
             "data/results.csv)."),
            ("table", values)]


def capacity_paragraph(windows: list[dict]) -> str:
    """What window the capacity runs had and why (window.json of checks/capacity.py)."""
    seconds = sorted({float(w["window_s"]) for w in windows})
    nodes = sorted({int(w["nodes"]) for w in windows})
    notes = sorted({w.get("note", "") for w in windows} - {""})
    text = (f"Capacity window: {', '.join(f'{s:g}' for s in seconds)} s per combo "
            f"(seed 000 §4.4.2 ran 3 h = 10800 s) on {', '.join(map(str, nodes))} nodes. "
            "A run lasts its whole job: the launch at its node count, the code's set-up and "
            "teardown, then the solve (docs/modelling.md#run-overheads); only runs that "
            "ended within the window count, as the real driver counts them. Each app's "
            "label gives its mean finished run; the table gives it per combo and, for "
            "simulated windows, one run alone and its parts.")
    return text + (" " + " ".join(notes) if notes else "")


VERDICT_RULES = ("agrees: within the claim's tolerance; same direction: same sign, magnitude "
                 "within 3× of the published one; weaker / stronger: same sign, more than 3× "
                 "smaller / larger; vacuous: an on-par or bound claim that holds where the "
                 "same cells show no effect at all, so it could not have failed; "
                 "contradicts: opposite sign or ordering, or no effect where the paper "
                 "reports one; not run: no like-for-like data here (the note says which "
                 "case is needed)")


def picture_block(fig: Figure | None, out: Path) -> list[Block]:
    """A figure's PNG with a link to it (relative to the report). Its PDF and data file are
    not linked: a committed log keeps only the report and the PNGs (FIGURE_FILES)."""
    if fig is None:
        return []
    png = next((f for f in fig.files if f.suffix == ".png"), None)
    return [("img", fig.title, os.path.relpath(png, out),
             [("PNG", os.path.relpath(png, out))])] if png is not None else []


FIGURE_FILES = ("Each figure's PDF and the gnuplot data file it was drawn from "
                "(`figures/<name>.pdf`, `figures/<name>.dat`) and the tidy tables (`data/`) "
                "are written beside this report by `t2hx replay` of the log; a committed log "
                "keeps the report and the PNGs (docs/formats.md#paper-directory).")


def scorecard_blocks(sc: pd.DataFrame, study: str = "hyperx-vs-fattree-sc19",
                     picture: list[Block] | None = None) -> list[Block]:
    """The scorecard: the study's seed statements, published vs ours, verdict, and what a
    'not run' needs (columns of t2hx.post.scorecard.frame); ``picture``: its tile picture."""
    n = {v: int((sc["verdict"] == v).sum()) for v in VERDICTS}
    return [
        ("h", 2, "Scorecard: the seed paper's statements beside ours"),
        ("p", "Every quantitative statement of the study's seed paper about its results that "
         "this study can test, with the published number, ours from this campaign "
         "like for like (the same node counts, message sizes and combos; best of N), and "
         f"a verdict ({VERDICT_RULES}). Node counts where the compared combos run on the "
         "same fabric by construction are left out (the note says which), and a claim over "
         "several node counts is also judged at each. Claims and tolerances: "
         f"conf/claims/{study}.yaml; rules: docs/modelling.md#scorecard. Regenerate alone "
         "with `t2hx scorecard LOGDIR`."),
        ("p", f"{len(sc)} claims: " + ", ".join(f"{n[v]} {v}" for v in VERDICTS) + "."),
        ("p", "By the mechanism the paper gives for each claim: " + "; ".join(
            f"{mech} ({len(g)}): " + ", ".join(f"{k} {v}" for v in VERDICTS
                                               if (k := int((g["verdict"] == v).sum())))
            for mech, g in sc.groupby("mechanism", sort=False)) + "."),
        *(picture or []),
        ("table", sc[["claim", "source", "published", "ours", "verdict"]]),
        ("h", 3, "Statements, verdicts per node count, and what is missing"),
        ("table", sc[["claim", "statement", "per node count", "note"]]),
    ]


def moves_blocks(logdir: Path, sc: pd.DataFrame) -> list[Block]:
    """Per claim, the verdict before and after the model change that a rerun replaced
    (``scorecard-before.json`` in the log, t2hx.post.scorecard.moves); nothing without one."""
    from t2hx.post.scorecard import moves

    path = logdir / moves.BEFORE
    if not path.is_file():
        return []
    after = {r.claim: {"verdict": r.verdict, "ours": r.ours, "mechanism": r.mechanism}
             for r in sc.itertuples()}
    ms = moves.moves(moves.read_contract(path), after)
    rows = pd.DataFrame([[m.id, m.mechanism, m.before, m.after, m.ours_before, m.ours_after]
                         for m in ms], columns=["claim", "mechanism", "verdict before",
                                                "verdict after", "ours before", "ours after"])
    return [("h", 2, "Verdicts before and after the last model change"),
            ("p", f"The scorecard this rerun replaced is kept as {moves.BEFORE}; "
             + moves.summary(ms, len(sc)) + ". Why each moved: the session notes and "
             "docs/modelling.md name the model change."),
            *([("table", rows)] if len(rows) else [])]


def engine_blocks(cmp: ModelComparison, picture: list[Block] | None = None) -> list[Block]:
    """Flow model and packet engine side by side (``picture``: their ratio grid), and the
    verdicts the engine changes."""
    side = cmp.side_by_side.assign(packet_vs_flow=cmp.side_by_side["packet_vs_flow"].round(3))
    out: list[Block] = [
        ("h", 2, "Network engines: flow model and packet engine side by side"),
        ("p", f"The study simulates some benchmarks on the packet engine (MTU packets, credit "
         "flow control per VL, the HCA's host interface: docs/modelling.md#packet-engine); "
         f"each of their cases also ran on the flow model (max-min fair rates), {cmp.cases} "
         "rows in all (log/<campaign>/companion/flow/). Best of the repetitions per cell, at "
         "each case's largest message size; packet_vs_flow is packet / flow."),
        *(picture or []),
        ("table", side),
        ("h", 3, f"Verdicts the engine changes ({len(cmp.changes)} of {cmp.scored} claims)"),
    ]
    if cmp.changes.empty:
        out.append(("p", "None: every claim gets the same verdict with the flow model's rows "
                    "in place of the packet engine's."))
    else:
        out.append(("p", "The scorecard twice, with the same rules: on this campaign, and on "
                    "it with every packet-engine row replaced by its flow-model companion. "
                    "No constant was chosen to move a verdict."))
        out.append(("table", cmp.changes))
    return out


def port_scorecard_blocks(system: str, sc: pd.DataFrame | None, study: str,
                          own: list[str] | None) -> list[Block]:
    """A system the study was not written for: its portable claims, or why there is none."""
    seed = ", ".join(own or []) or "its own system"
    head = ("h", 2, f"Scorecard on {system}: portable claims only")
    if sc is None:
        return [("h", 2, f"No scorecard on {system}"),
                ("p", f"The seed's claims (conf/claims/{study}.yaml) are statements about "
                 f"{seed}: its racks, node counts and cables. {system} is another machine, so "
                 "they are not scored on its runs, and the claims file marks none portable. "
                 "The figures above compare its combos.")]

    n = {v: int((sc["verdict"] == v).sum()) for v in VERDICTS}
    return [head,
            ("p", f"The seed's claims (conf/claims/{study}.yaml) are statements about {seed}. "
             f"On {system} only those marked `portable: true` are scored: orderings of "
             "combos (a sign, a rank, on par) over no fixed node count, which do not depend "
             f"on the seed machine's racks or sizes. Verdicts: {VERDICT_RULES}."),
            ("p", f"{len(sc)} claims: " + ", ".join(f"{n[v]} {v}" for v in VERDICTS) + "."),
            ("table", sc[["claim", "source", "published", "ours", "verdict"]]),
            ("table", sc[["claim", "statement", "per node count", "note"]])]


NETWORK_BENCHMARKS = tuple(b.key for b in benchmarks.REGISTRY if b.group == "network")
PAPER_FIGURES = {"Fig 1": "mpiGraph bandwidth matrices, 28 nodes of one rack",
                 "Fig 4": "relative gain of the MPI collectives (IMB)",
                 "Fig 5": "the other network benchmarks (eBB, ring allreduce, MuPP, EmDL, "
                          "mpiGraph)",
                 "Fig 6": "proxy applications and x500, whisker plots",
                 "Fig 7": "capacity run: finished runs per app and combo",
                 "§3": "routing analysis (EFI, dark fiber)"}


def paper_figure(fig: Figure) -> str:
    """The figure of seed 000 a figure of ours corresponds to (by kind and benchmark)."""
    network = any(f"-{b}" in fig.name for b in NETWORK_BENCHMARKS)
    return {"mpigraph": "Fig 1", "capacity": "Fig 7", "routing": "§3", "lines": "Fig 5",
            "gain-grid": "Fig 4" if "-imb" in fig.name else "Fig 5",
            "whisker": "Fig 5" if network else "Fig 6"}.get(fig.kind, "–")


def paper_map(figs: list[Figure]) -> pd.DataFrame:
    if any(f.kind.startswith("configs") for f in figs):
        return configs_map(figs)
    if any(f.kind.startswith("history") for f in figs):
        return histories_map(figs)
    if any(f.kind.startswith("network") for f in figs):
        return shortcut_map(figs)
    rows = [[key, what, ", ".join(f.name for f in figs if paper_figure(f) == key) or "–"]
            for key, what in PAPER_FIGURES.items()]
    return pd.DataFrame(rows, columns=["seed 000", "what", "figures here"])


# Seed 003's figures and the figures of t2hx/post/fattree_configs.py that stand for them (by kind).
SEED003_FIGURES = {
    "Fig 6": ("gain per configuration, communication only", ("configs-gain-comm",)),
    "Fig 7": ("best vs worst configuration by compute scale", ("configs-spread",)),
    "Fig 8": ("scaling from 256 to 1,024 nodes at 2x and 10x", ("configs-scaling",)),
    "Fig 9": ("multi-job workloads: step time and interference slowdown",
              ("configs-workload-gain", "configs-workload-slowdown")),
    "Fig 10": ("total normalised performance of the workloads", ("configs-throughput",)),
    "Table 5": ("cost and performance per configuration", ("configs-cost",))}


def configs_map(figs: list[Figure]) -> pd.DataFrame:
    rows = [[key, what, ", ".join(f.name for f in figs if f.kind in kinds) or "–"]
            for key, (what, kinds) in SEED003_FIGURES.items()]
    return pd.DataFrame(rows, columns=["seed 003", "what", "figures here"])


# Seed 004's figures and the figures of t2hx/post/histories.py and routing_runs.py that stand
# for them (by kind).
SEED004_FIGURES = {
    "Fig 1": ("the multi-switch jobs of the replayed history", "history-jobs"),
    "Fig 7": ("four metrics over the replayed history, four routings", "history-lines"),
    "Table 1": ("SAR's improvement over DFSSSP, fat-tree, Up*/Down*", "history-table1"),
    "§4.3.2": ("re-routings per day", "history-reroutes"),
    "Fig 8": ("MPI_Alltoall 1 MiB, 28 nodes on ten switches, per routing and engine",
              "routing-runs")}


def histories_map(figs: list[Figure]) -> pd.DataFrame:
    rows = [[key, what, ", ".join(f.name for f in figs if f.kind == kind) or "–"]
            for key, (what, kind) in SEED004_FIGURES.items()]
    return pd.DataFrame(rows, columns=["seed 004", "what", "figures here"])


# Seed 001's figures and ours (by name prefix): t2hx/post/generated_networks.py and the NPB whiskers.
SEED001_FIGURES = {
    "Tables 3.4–3.6": ("two-opt's total hops from each mapping", ("network-twoopt",)),
    "Figs 3.17, 3.18": ("a Broadcast's total hops and CPU time: conventional, two-opt, simulated "
                        "annealing", ("network-annealing-",)),
    "Figs 3.13–3.16, 4.9–4.12, 5.15–5.18": ("NPB FT, IS, MG, LU per network and mapping",
                                            ("whisker-npb-",)),
    "Figs 5.1, 5.2": ("diameter and ASPL per network size", ("network-diameter",
                                                              "network-aspl")),
    "Figs 5.3–5.5": ("total hops of Broadcast, Allreduce, Alltoall per network size",
                     ("network-bcast-", "network-allreduce-", "network-alltoall-")),
    "Figs 3.10–3.12": ("collective times per mapping on the random shortcut network, "
                       "ascending and two-opt for hops and contention", ("collective-rsn-",)),
    "Figs 4.6–4.8": ("collective times per mapping on the circulant network",
                     ("collective-circ-",)),
    "Figs 5.6–5.11": ("Broadcast, Allreduce, Alltoall time per message size on the three "
                      "networks, small and large", ("collective-networks-",)),
    "Fig 5.12": ("point-to-point hops per mapped node count", ("network-p2p-hops",)),
    "Fig 5.13": ("point-to-point exchange time per mapped node count", ("network-p2p-time",)),
    "Fig 5.19": ("mean cable length per network size", ("network-cable-",)),
}


def shortcut_map(figs: list[Figure]) -> pd.DataFrame:
    rows = [[key, what, ", ".join(f.name for f in figs if f.name.startswith(prefixes)) or "–"]
            for key, (what, prefixes) in SEED001_FIGURES.items()]
    return pd.DataFrame(rows, columns=["seed 001", "what", "figures here"])


def to_markdown(bl: list[Block]) -> str:
    out: list[str] = []
    for block in bl:
        kind = block[0]
        if kind == "h":
            out += ["#" * block[1] + " " + block[2], ""]
        elif kind == "p":
            out += [block[1], ""]
        elif kind == "img":
            _, alt, src, links = block
            out += [f"![{alt}]({src})", "", " · ".join(f"[{n}]({p})" for n, p in links), ""]
        elif kind == "table":
            df = block[1]
            out.append("| " + " | ".join(str(c) for c in df.columns) + " |")
            out.append("|" + "---|" * len(df.columns))
            for row in df.itertuples(index=False):
                out.append("| " + " | ".join(_cell(v, str(c)) for v, c in zip(row, df.columns))
                           + " |")
            out.append("")
    return "\n".join(out)


def write_report(out: Path, bl: list[Block], title: str) -> list[Path]:
    md, page = out / "report.md", out / "report.html"
    write_text(md, to_markdown(bl))
    write_text(page, html_report.to_html(bl, title, _cell))
    return [md, page]
