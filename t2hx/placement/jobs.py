"""Job placement of a multi-job workload: seed 003 §6's "randomized clusters" policy.

"Nodes are allocated to jobs using a randomized clusters policy: jobs are assigned nodes in
small clusters spread throughout the system" (seed 003 §6). The paper does not give the
cluster size; it is study data (``workloads.cluster``, docs/fattree-configs.md#the-study).
The usable nodes, in physical order, are cut into clusters of ``cluster`` consecutive nodes;
the clusters are shuffled with the workload's seed and dealt to the jobs in turn, so every
job gets nodes spread over the machine, in whole clusters, and jobs never share a node.
"""

from __future__ import annotations

import numpy as np

from t2hx.placement.nodes import PlacementError


def random_clusters(total: int, jobs: int, per_job: int, cluster: int,
                    rng: np.random.Generator) -> list[np.ndarray]:
    """Indices into the usable node list of each job's nodes (rank order = cluster order)."""
    if cluster < 1 or per_job % cluster:
        raise PlacementError(f"{per_job} nodes per job are not whole clusters of {cluster}",
                             field="workloads.cluster",
                             fix="pick a cluster size that divides nodes_per_job")
    need = jobs * per_job
    if need > total:
        raise PlacementError(f"{jobs} jobs x {per_job} nodes = {need} > {total} usable nodes",
                             field="workloads.jobs", fix="use fewer or smaller jobs")
    starts = rng.permutation(total // cluster)[:need // cluster] * cluster
    blocks = starts[:, None] + np.arange(cluster)
    # Dealt in turn: job j gets clusters j, j + jobs, j + 2 jobs, ...
    return [blocks[j::jobs].ravel().astype(np.int64) for j in range(jobs)]


def assign_apps(apps: list[str], jobs: int, rng: np.random.Generator) -> list[str]:
    """Each job's application, drawn uniformly from ``apps`` ("each job is arbitrarily
    assigned one of the applications", seed 003 §6)."""
    if not apps:
        raise PlacementError("no applications to assign", field="workloads.apps",
                             fix="list the workload's applications")
    return [apps[i] for i in rng.integers(0, len(apps), size=jobs)]


def draw(study, system, k: int) -> tuple[list[str], list[list[str]]]:
    """(application, hostnames) of every job of workload ``k`` of a study's ``workloads:``.
    Drawn from (seed, k) alone: the same workload on every system with the same hosts."""
    from t2hx.errors import ConfError
    from t2hx.placement.nodes import usable_nodes

    spec = study.workloads
    if not spec:
        raise ConfError("the study has no multi-job workloads", file=study.path,
                        field="workloads", fix="add a workloads: section (docs/studies.md)")
    if not 0 <= k < spec["count"]:
        raise ConfError(f"workload {k} is not one of 0..{spec['count'] - 1}", file=study.path,
                        field="workloads.count", fix="pick an index below the count")
    rng = np.random.default_rng([spec["seed"], k])
    apps = assign_apps(list(spec["apps"]), spec["jobs"], rng)
    nodes = usable_nodes(system)
    sets = random_clusters(len(nodes), spec["jobs"], spec["nodes_per_job"], spec["cluster"],
                           rng)
    return apps, [[nodes[i] for i in s] for s in sets]
