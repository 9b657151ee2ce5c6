"""Hostfiles for every node count of the study ladders: ``<out>/<sys>/<placement>/<n>.txt``,
and, when the study has a capacity mix, one of every usable node (``<usable>.txt``) that the
capacity check cuts its node sets from.

Format: one hostname per line, rank order (line ``i`` hosts rank ``i``) — accepted by both
launchers (docs/formats.md#hostfiles):

- Open MPI: ``mpirun --hostfile F -np N --map-by node …`` (a hostfile line without
  ``slots=`` gets as many slots as the node has cores, so map one rank per node explicitly;
  Open MPI 4.1's ``--display-map`` shows rank ``i`` on line ``i``, see tests);
- Slurm: ``SLURM_HOSTFILE=F srun --distribution=arbitrary -n N …`` keeps the rank order;
  ``srun --nodelist=F -N N`` takes the node set but Slurm sorts it, which is only right for
  the linear placement.

Each placement directory also holds ``manifest.json`` (system sha256, generator version,
seed, parameters, sha256 of every file). A directory is built next to its final place and
swapped in with renames, so readers never see a half-written set; content depends only on
the inputs, so regenerating gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from t2hx import __version__
from t2hx.conf import System
from t2hx.study import PLACEMENT_FIX, hostfile_name, load_study, split_placement
from t2hx.placement import basic, mappings
from t2hx.placement.collective_messages import messages
from t2hx.placement.nodes import PlacementError, check_count, usable_nodes
from t2hx.placement.seeding import rng_for
from t2hx.placement.twoopt import ContentionObjective, HopObjective, two_opt
from t2hx.atomic import staged_dir

DEFAULT_SEED = 2019
OBJECTIVES = {"hops": "total switch hops",
              "contention": "message pairs of one step sharing a directed link"}
USAGE = {
    "mpirun": "mpirun --hostfile <n>.txt -np <n> --map-by node <program>",
    "slurm": "SLURM_HOSTFILE=<n>.txt srun --distribution=arbitrary -n <n> <program>",
}


@dataclass
class Options:
    seed: int = DEFAULT_SEED
    p: float = basic.DEFAULT_P
    plane: str | None = None          # two-opt / hierarchical: default 'hyperx' or the first
    engine: str | None = None         # two-opt: default the plane's first opensm.routing
    collective: str = "allreduce"
    objective: str = "hops"           # two-opt: hops | contention
    iterations: int = 200_000        # seed 001 §3.4.2
    #: Per node count, where it differs: seed 001 runs two-opt 20,000 times for its 128-rank
    #: applications (§3.4.3) and 200,000 times for its 512-rank collectives (§3.4.2).
    iterations_at: dict[int, int] = field(default_factory=dict)
    switches: int = 10               # spread: leaf switches of a job (seed 004 §4.3.4)
    counts: list[int] | None = None   # None: every ladder count that fits
    draws: int | None = None          # mapping draws per count (None: as the study's benchmarks
    #                                   ask, Study.draws_at)
    nodes: list[str] | None = None    # None: all hosts but nodes.down
    work_dir: Path | None = None      # two-opt routing scratch (default: a temp dir)
    _cache: dict = field(default_factory=dict, repr=False)

    def trials(self, n: int) -> int:
        """Two-opt swap trials for an ``n``-rank hostfile."""
        return self.iterations_at.get(n, self.iterations)

    def trials_of(self, counts: list[int]) -> dict[str, object]:
        """The manifest's record: ``iterations``, and per count where any count differs."""
        out: dict[str, object] = {"iterations": self.iterations}
        if any(self.trials(n) != self.iterations for n in counts):
            out["iterations_by_count"] = {str(n): self.trials(n) for n in counts}
        return out


def check_placements(names: list[str]) -> None:
    for name in names:
        try:
            split_placement(name)
        except ValueError:
            raise PlacementError(f"unknown placement '{name}'", field="--placements",
                                 fix=f"use {PLACEMENT_FIX}") from None


def counts_for(placement: str, usable: int, opts: Options, where: object) -> list[int]:
    if opts.counts is not None:
        for n in opts.counts:
            check_count(n, usable, where)
        return sorted(set(opts.counts))
    study = load_study(profile="full")
    counts = study.node_counts(usable)
    if study.capacity["apps"] and usable not in counts:
        # Capacity cuts its apps' node sets from the placement order of every usable node
        # (checks/capacity.py), whatever rung of the ladders fits (docs/modelling.md).
        counts = sorted([*counts, usable])
    if split_placement(placement)[0] == "circulant":   # Algorithm 4.1 needs a stride N/n
        counts = [n for n in counts if usable % n == 0]
    if not counts:
        raise PlacementError(f"no node count of the study's ladders fits into {usable} usable "
                             "nodes", file=where, field="nodes",
                             fix="repair down nodes, add a rung to the study or pass --counts")
    return counts


def generate(system: System, out_root: Path, placements: list[str], opts: Options,
             say: Callable[[str], None] = lambda _s: None) -> list[Path]:
    """Write every requested placement; returns the placement directories."""
    check_placements(placements)
    nodes = usable_nodes(system, opts.nodes)
    written = []
    for placement in placements:
        counts = counts_for(placement, len(nodes), opts, system.path)
        draws = {n: draws_for(system, placement, n, opts) for n in counts}
        files = {hostfile_name(n, k): "".join(h + "\n" for h in place(
                     system, placement, n, nodes, draw_options(opts, k)))
                 for n in counts for k in range(draws[n])}
        target = Path(out_root) / system.name / placement
        manifest = _manifest(system, placement, nodes, counts, files, opts, draws)
        _swap_in(target, files, manifest)
        say(f"{placement}: {len(files)} hostfiles in {target}")
        written.append(target)
    return written


def draws_for(system: System, placement: str, n: int, opts: Options) -> int:
    if opts.draws is not None:
        return opts.draws
    return load_study(profile="full").draws_at(system.name, placement, n)


def draw_seed(seed: int, draw: int) -> int:
    """The seed of mapping draw ``draw``: draw 0 is the placement's own seed (its ``<n>.txt``
    stays what it was), every other draw an independent stream derived from (seed, draw)."""
    if draw == 0:
        return seed
    return int(rng_for(seed, "mapping draw", draw).integers(2**31))


def draw_options(opts: Options, draw: int) -> Options:
    """``opts`` for one mapping draw: a draw changes the node choice and, for a refined
    placement, two-opt's own stream, both through the seed (the routed plane is shared)."""
    return opts if draw == 0 else replace(opts, seed=draw_seed(opts.seed, draw))


def place(system: System, placement: str, n: int, nodes: list[str], opts: Options) -> list[str]:
    """Hostnames in rank order for ``n`` ranks drawn from the usable ``nodes``."""
    total = len(nodes)
    check_count(n, total, system.path)
    base, refine = split_placement(placement)
    if refine is not None:
        # The base placement's own draw (same stream as the plain one), then rank placement.
        objective, collective = refine
        chosen = place(system, base, n, nodes, opts)
        if collective is None:                  # the CCO order (the only one without)
            return _cco(system, chosen, opts)
        return _two_opt(system, chosen, objective, collective, opts)
    rng = rng_for(opts.seed, placement)     # one stream per placement: nested node counts
    match placement:
        case "linear":
            idx = basic.linear(total, n)
        case "clustered":
            idx = basic.clustered(total, n, rng, opts.p, one_leaf=_first_leaf(system, nodes, opts))
        case "random":
            idx = basic.random_order(total, n, rng)
        case "ring":
            idx = mappings.ring_mapping(total, n, rng)
        case "circulant":
            idx = mappings.circulant_mapping(total, n, rng)
        case "spread":
            idx = basic.spread(_leaf_of(system, nodes, opts), n, opts.switches)
        case "hierarchical":
            return _hierarchical(system, n, nodes, opts, rng)
        case "two-opt":
            return _two_opt(system, nodes[:n], opts.objective, opts.collective, opts)
        case _:
            check_placements([placement])
            raise AssertionError(placement)    # every name in PLACEMENTS has a case above
    return [nodes[i] for i in idx]


def _first_leaf(system: System, nodes: list[str], opts: Options) -> int:
    """How many of the first usable nodes share the first node's switch on every plane: a
    job that small is given that one switch (seed 000 §5.1: at 7 nodes the clustered and
    linear lists are identical, all on one HyperX switch)."""
    key = ("first_leaf", tuple(nodes[:64]))
    if key not in opts._cache:
        from t2hx.fabric.build import build_plane
        whole = len(nodes)
        for plane in system.planes:
            fabric = build_plane(system, plane)
            leaf = fabric.switch_of(fabric.index(nodes[0]))
            same = 0
            for name in nodes[:whole]:
                if fabric.switch_of(fabric.index(name)) != leaf:
                    break
                same += 1
            whole = same
        opts._cache[key] = whole
    return opts._cache[key]


def _leaf_of(system: System, nodes: list[str], opts: Options) -> np.ndarray:
    """The leaf switch of every usable node on the placement's plane."""
    fabric = _fabric(system, opts)
    return np.array([fabric.switch_of(fabric.index(name)) for name in nodes], dtype=np.int64)


def _plane_name(system: System, opts: Options) -> str:
    if opts.plane:
        system.plane(opts.plane)
        return opts.plane
    return "hyperx" if "hyperx" in system.planes else next(iter(system.planes))


def _fabric(system: System, opts: Options):
    from t2hx.fabric.build import build_plane
    plane = _plane_name(system, opts)
    key = ("fabric", plane)
    if key not in opts._cache:
        opts._cache[key] = build_plane(system, plane)
    return opts._cache[key]


def _host_index(fabric, nodes: list[str]) -> np.ndarray:
    pos = {fabric.nodes[h].name: k for k, h in enumerate(fabric.hcas())}
    return np.array([pos[name] for name in nodes], dtype=np.int64)


def _hierarchical(system: System, n: int, nodes: list[str], opts: Options,
                  rng: np.random.Generator) -> list[str]:
    fabric = _fabric(system, opts)
    names = [fabric.nodes[h].name for h in fabric.hcas()]
    usable = np.zeros(len(names), dtype=bool)
    usable[_host_index(fabric, nodes)] = True
    return [names[i] for i in mappings.hierarchical_mapping(fabric, n, rng, usable)]


def _engine(system: System, opts: Options) -> str:
    plane = system.plane(_plane_name(system, opts))
    return opts.engine or plane.opensm["routing"][0]


def routed(system: System, opts: Options, with_paths: bool = False) -> dict:
    """Host×host switch hops (and, if asked, paths and the link count) under the plane's
    real OpenSM routing; the plane is routed once per run."""
    from t2hx.routing.lft import load_tables
    from t2hx.routing.opensm import route
    from t2hx.placement.costs import routed_hops, routed_paths
    plane_name = _plane_name(system, opts)
    engine = _engine(system, opts)
    key = ("routed", plane_name, engine)
    if key not in opts._cache:
        fabric = _fabric(system, opts)
        plane = system.plane(plane_name)
        with tempfile.TemporaryDirectory(prefix="t2hx-twoopt-", dir=opts.work_dir) as tmp:
            route(fabric, tmp, engine, plane.opensm["lmc"], plane.opensm["options"],
                  timeout=plane.opensm["timeout"])
            opts._cache[key] = {"tables": load_tables(fabric, tmp)}
        opts._cache[key]["hops"] = routed_hops(opts._cache[key]["tables"])  # paths to LID 0
    got = opts._cache[key]
    if with_paths and "paths" not in got:
        got["paths"] = routed_paths(got["tables"])
    return got


def _cco(system: System, chosen: list[str], opts: Options) -> list[str]:
    """``chosen`` (rank 0's node first) in Chain Concatenation Order over the plane's switch
    graph (``mappings.cco_order``)."""
    fabric = _fabric(system, opts)
    return [chosen[i] for i in mappings.cco_order(fabric, _host_index(fabric, chosen))]


def _two_opt(system: System, chosen: list[str], goal: str, collective: str,
             opts: Options) -> list[str]:
    """Ranks of ``chosen`` (rank i on node i to start: plain ``two-opt`` starts linear, a
    refined placement from its base's order) re-placed by two-opt on the total hops (or the
    link contention) of ``collective`` under the plane's routing
    (docs/modelling.md#placements)."""
    if goal not in OBJECTIVES:
        raise PlacementError(f"unknown two-opt objective '{goal}'",
                             field="--objective", fix=f"use one of: {', '.join(OBJECTIVES)}")
    fabric = _fabric(system, opts)
    n = len(chosen)
    idx = _host_index(fabric, chosen)
    msgs = messages(collective, n)
    labels: tuple = ("two-opt", collective, n)
    objective: HopObjective | ContentionObjective
    if goal == "hops":
        objective = HopObjective(routed(system, opts)["hops"][np.ix_(idx, idx)], msgs)
    else:
        got = routed(system, opts, with_paths=True)
        objective = ContentionObjective(got["paths"][np.ix_(idx, idx)], msgs,
                                        got["tables"].links)
        labels += ("contention",)
    result = two_opt(objective, np.arange(n), opts.trials(n), rng_for(opts.seed, *labels))
    return [chosen[i] for i in result.placement]


def _manifest(system: System, placement: str, nodes: list[str], counts: list[int],
              files: dict[str, str], opts: Options, draws: dict[int, int]) -> dict:
    params: dict[str, object] = {}
    if placement == "clustered":
        params = {"p": opts.p, "start": 0, "one_leaf_up_to": _first_leaf(system, nodes, opts)}
    elif placement == "spread":
        params = {"plane": _plane_name(system, opts), "switches": opts.switches}
    elif (refine := split_placement(placement)[1]) is not None and refine[1] is None:
        params = {"plane": _plane_name(system, opts), "start": split_placement(placement)[0],
                  "order": "chain concatenation (depth-first over a breadth-first tree from "
                  "rank 0's switch)"}
    elif refine is not None:
        base, (goal, collective) = split_placement(placement)[0], refine
        params = {"plane": _plane_name(system, opts), "engine": _engine(system, opts),
                  "collective": collective, **opts.trials_of(counts), "start": base,
                  "objective": OBJECTIVES[goal]}
    elif placement in ("two-opt", "hierarchical"):
        params = {"plane": _plane_name(system, opts)}
        if placement == "two-opt":
            params.update(engine=_engine(system, opts), collective=opts.collective,
                          **opts.trials_of(counts), start="linear",
                          objective=OBJECTIVES[opts.objective])
    return {
        "system": system.name,
        "system_file": system.path.name,
        "system_sha256": system.sha256,
        "generator": f"t2hx {__version__} (t2hx.placement)",
        "placement": placement,
        "seed": opts.seed,
        "params": params,
        "usable_nodes": len(nodes),
        "down": list(system.nodes["down"]),
        "node_list": "all usable" if opts.nodes is None else "explicit (--nodes)",
        "counts": counts,
        **({"draws": {str(n): {"count": d, "seeds": [draw_seed(opts.seed, k) for k in range(d)]}
                      for n, d in draws.items() if d > 1}}
           if any(d > 1 for d in draws.values()) else {}),
        "files": {name: hashlib.sha256(text.encode()).hexdigest()
                  for name, text in files.items()},
        "usage": USAGE,
    }


def _swap_in(target: Path, files: dict[str, str], manifest: dict) -> None:
    """Build the directory beside ``target`` and rename it into place."""
    with staged_dir(target) as fresh:
        for name, text in files.items():
            (fresh / name).write_text(text)
        (fresh / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
