"""MILC su3_rhmd_hisq (seed 000 §4.2, Trinity input): weak scaling of a
``lattice_per_rank``^4 block per rank on MILC's hyper_prime layout."""

from t2hx.benchmarks.proxyapp import K, Skeleton, proxy_app
from t2hx.grids import grid4


def milc_lattice(inp: dict, ranks: int) -> tuple[int, ...]:
    """Weak scaling: a ``lattice_per_rank``^4 block per rank on the grid4(ranks) layout (MILC
    then splits the global lattice back into those blocks)."""
    side = int(inp["lattice_per_rank"])
    return tuple(side * g for g in grid4(ranks))


def milc_steps(inp: dict) -> float:
    """Molecular-dynamics steps of a run: trajectories x steps per trajectory."""
    return float(inp["trajecs"] * inp["steps"])


BENCHMARK = proxy_app(
    "milc", "MILC (Trinity)", "MILC", "milc", markers=(r"RUNNING COMPLETED",),
    local_binary="su3_rhmd_hisq",
    skeleton=Skeleton(0.030, 200, (("halo", 96 * K), ("halo", 96 * K), ("allreduce", 8))),
    # Weak scaling: sites per rank x MD steps (each step's CG solves sweep the sites).
    work=lambda i, n: float(i["lattice_per_rank"]) ** 4 * milc_steps(i),
    measures={"face": lambda i, n: float(i["lattice_per_rank"]) ** 3 * milc_steps(i),
              "steps": lambda i, n: milc_steps(i)})
