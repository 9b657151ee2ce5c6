"""This machine's single-core compute and memory rates, the reference the calibrated app
models scale from (``t2hx calibrate --machine`` -> conf/calibration/machine.json;
docs/modelling.md#application-models).

The calibration runs are single-threaded ranks (the `local` system has OMP_NUM_THREADS=1),
so the rates are one core's: a double-precision matrix multiply (numpy's BLAS, pinned to one
thread) for flops and a STREAM-triad-like a = b + s*c over arrays far larger than the caches
for memory. Best of several repetitions, as STREAM reports.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

from t2hx.atomic import atomic_write

PROBE = r"""
import json, time
import numpy as np
def best(fn, reps):
    out = float("inf")
    for _ in range(reps):
        t = time.perf_counter(); fn(); out = min(out, time.perf_counter() - t)
    return out
n = 2048
a, b = np.random.rand(n, n), np.random.rand(n, n)
gflops = 2 * n ** 3 / best(lambda: a @ b, 5) / 1e9
m = 20_000_000                      # 160 MB per array: far beyond any cache
x, y, z = np.ones(m), np.ones(m), np.empty(m)
def triad():
    np.multiply(y, 3.0, out=z)      # numpy needs two passes: reads y, writes z,
    np.add(z, x, out=z)             # reads z and x, writes z = 5 x 8 bytes per element
mem_gbs = 5 * 8 * m / best(triad, 5) / 1e9
print(json.dumps({"gflops": gflops, "mem_gbs": mem_gbs}))
"""
SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def measure() -> dict:
    """Run the probe in a fresh interpreter (BLAS reads its thread count at import)."""
    env = dict(os.environ, **SINGLE_THREAD)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def write(path: Path, cpu: str) -> dict:
    rates = measure()
    import numpy as np

    data = {**{k: round(v, 3) for k, v in rates.items()},
            "method": "one core: numpy float64 2048^3 matmul (OpenBLAS, 1 thread) and "
                      "a = b + 3c over 160 MB arrays counting 40 B per element, best of 5",
            "provenance": {"cpu": cpu, "cores": os.cpu_count(), "numpy": np.__version__,
                           "loadavg_1m_before": os.getloadavg()[0],
                           "date": dt.datetime.now(dt.UTC).strftime(
                               "%Y-%m-%dT%H:%M:%SZ"),
                           "command": "t2hx calibrate --machine"}}
    atomic_write(path, json.dumps(data, indent=1) + "\n")
    return data
