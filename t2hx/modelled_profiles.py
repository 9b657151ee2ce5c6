"""Modelled communication profiles: the traffic of a benchmark's flow-model skeleton written in Open
MPI's pml_monitoring format, so that PARX's demand pipeline (t2hx.routing.demand) can be
tried on codes that were never recorded. Each file says it is modelled on its first line;
they never go where recorded profiles live (``t2hx demand model``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from t2hx.atomic import atomic_write
from t2hx.benchmarks import app
from t2hx.flowsim.apps import iteration_phases

MODELLED = "# MODELLED by t2hx from the flow model's skeleton, not a measurement: "


def model_traffic(benchmark: str, ranks: int, iterations: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray, int]:
    """(bytes, messages, iterations) rank x rank of a flowsim app skeleton's run."""
    code = app(benchmark)
    its = iterations or code.skeleton.iterations
    size = np.zeros((ranks, ranks))
    count = np.zeros((ranks, ranks), dtype=np.int64)
    for ph in iteration_phases(code, ranks, 1.0, 4e9):
        np.add.at(size, (ph.src, ph.dst), ph.size)
        np.add.at(count, (ph.src, ph.dst), 1)
    return np.rint(size * its).astype(np.int64), count * its, its


def write_modelled_profile(benchmark: str, ranks: int, folder: Path, prefix: str,
                           iterations: int | None = None) -> np.ndarray:
    """``<prefix>.<rank>.prof`` files in pml_monitoring's format (``E`` lines) from the
    skeleton's traffic, each starting with a line that says it is modelled."""
    size, count, its = model_traffic(benchmark, ranks, iterations)
    folder.mkdir(parents=True, exist_ok=True)
    note = f"{MODELLED}skeleton '{benchmark}', {ranks} ranks, {its} iterations\n"
    for r in range(ranks):
        lines = [note, "# POINT TO POINT\n"]
        lines += [f"E\t{r}\t{d}\t{size[r, d]} bytes\t{count[r, d]} msgs sent\n"
                  for d in np.flatnonzero(size[r])]
        atomic_write(folder / f"{prefix}.{r}.prof", "".join(lines))
    return size
