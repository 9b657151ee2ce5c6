"""Synthetic campaigns in the real on-disk format (perflogs, analysis files), for tests and
``bench/post.py``. Values are random but seeded; nothing here is a measurement.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from t2hx.wire import PERFLOG_HEADER as HEADER
from t2hx.wire import perflog_line

# The five combos (docs/modelling.md#the-study); (1) is the baseline.
COMBOS = [("ft-ftree-linear", "fattree", "ftree", "linear"),
          ("ft-sssp-clustered", "fattree", "sssp", "clustered"),
          ("hx-dfsssp-linear", "hyperx", "dfsssp", "linear"),
          ("hx-dfsssp-random", "hyperx", "dfsssp", "random"),
          ("hx-parx-clustered", "hyperx", "parx", "clustered")]
COLLECTIVES = ["barrier", "bcast", "gather", "scatter", "reduce", "allreduce", "alltoall"]
APPS = ["amg", "comd", "minife", "swfft", "milc"]


def _cases(nodes: list[int], sizes: list[int]):
    for combo in COMBOS:
        for n in nodes:
            for coll in COLLECTIVES:
                for s in sizes if coll != "barrier" else [0]:
                    yield combo, f"imb-{coll}", "t_min", "us", n, s, 2.0 + s / 1e3
            yield combo, "ebb", "bandwidth", "MB/s", n, 1048576, 2000.0
            for app in APPS:
                yield combo, app, "solver_walltime", "s", n, None, 100.0
            yield combo, "hpl", "gflops", "Gflop/s", n, None, 50.0 * n
            for s in (4, 4096, 1 << 20):
                yield combo, "ring-allreduce", "t_avg", "s", n, s, 1e-5 * (1 + s / 1e4)


def write_campaign(logdir: Path, rows: int = 2000, reps: int = 3, seed: int = 1,
                   nodes: tuple[int, ...] = (4, 8, 16), sizes: tuple[int, ...] = (0, 1024, 65536),
                   simulated: bool = True) -> int:
    """Write ``rows`` perflog lines (cycling through the case matrix) under logdir/perflogs,
    a capacity perflog and routing-analysis files. Returns the number of perflog lines."""
    rng = np.random.default_rng(seed)
    cases = list(_cases(list(nodes), list(sizes)))
    factor = {c[0]: f for c, f in zip(COMBOS, (1.0, 1.1, 0.9, 1.3, 1.5))}
    out = logdir / "perflogs" / "sim"
    out.mkdir(parents=True, exist_ok=True)
    noise = rng.uniform(1.0, 1.3, size=rows)
    lines = [HEADER]
    for i in range(rows):
        (combo, topo, routing, place), bench, metric, unit, n, size, base = cases[i % len(cases)]
        rep = (i // len(cases)) % reps if reps else i // len(cases)
        f = factor[combo] if unit in ("us", "s") else 1.0 / factor[combo]
        lines.append(perflog_line(
            job_completion_time=f"2026-11-21T10:{(i // 60) % 60:02d}:{i % 60:02d}+00:00",
            version="4.10.4", info=f"{bench} %combo={combo}", system="sim", partition=topo,
            environ="builtin", campaign=logdir.name, combo=combo, topology=topo,
            routing=routing, placement=place, benchmark=bench, num_nodes=n, repetition=rep,
            msg_size="null" if size is None else size, git_hash="0123abc",
            simulated="true" if simulated else "false", perf_var=metric,
            perf_value=f"{base * f * noise[i]:.6g}", perf_unit=unit, perf_ref=0,
            result="pass"))
    (out / "campaign.log").write_text("\n".join(lines) + "\n")
    cap = [HEADER]
    for k, (combo, topo, routing, place) in enumerate(COMBOS):
        for j, app in enumerate(APPS + ["graph500", "mupp"]):
            cap.append(perflog_line(system="sim", partition=topo, combo=combo, topology=topo,
                                    routing=routing, placement=place, benchmark="capacity",
                                    num_nodes=664, repetition=0, perf_var=app,
                                    perf_value=20 + 3 * j - k, perf_unit="runs",
                                    simulated="true", result="pass"))
    (out / "capacity.log").write_text("\n".join(cap) + "\n")
    ana = logdir / "analysis"
    ana.mkdir(parents=True, exist_ok=True)
    for name, scale, dark in (("hyperx-dfsssp", 40, 0.05), ("hyperx-sar", 25, 0.12)):
        efi = rng.poisson(scale, size=200)
        efi[: int(dark * 200)] = 0
        (ana / f"{name}.csv").write_text("link,efi\n" + "".join(
            f"s{i}-s{i + 1},{v}\n" for i, v in enumerate(efi)))
        (ana / f"{name}.json").write_text(json.dumps({"dark_fiber": dark}) + "\n")
    return rows
