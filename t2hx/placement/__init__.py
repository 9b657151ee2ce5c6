"""Rank placement (docs/modelling.md#placements; seeds 000 §3.1, 001 §3–4): rank → node.

A placement is an ordered list of distinct nodes: rank ``i`` runs on entry ``i``.

- ``basic``: the study's placements (linear, clustered, random) on a usable node list;
- ``mappings``: seed 001's process mappings on shortcut topologies (random, hierarchical
  tree / BFS, ring-consecutive, circulant) with ascending-order rank placement;
- ``collectives``: the point-to-point messages of binomial broadcast, recursive-doubling
  allreduce and Bruck alltoall;
- ``costs``: host×host hop matrices and paths (BFS minimal routing or real routing tables);
- ``twoopt``: two-opt rank re-placement (seed 001 §3.3.2) with incremental evaluation;
- ``nodes``: the usable node list of a system (down nodes excluded);
- ``hostfiles``: hostfiles and their manifest for every node count of the study ladders.
"""

from t2hx.placement.basic import clustered, linear, random_order
from t2hx.placement.collective_messages import COLLECTIVES, messages
from t2hx.placement.nodes import PlacementError, usable_nodes
from t2hx.placement.seeding import rng_for
from t2hx.placement.twoopt import ContentionObjective, HopObjective, two_opt

__all__ = ["COLLECTIVES", "ContentionObjective", "HopObjective", "PlacementError",
           "clustered", "linear", "messages", "random_order", "rng_for",
           "two_opt", "usable_nodes"]
