#!/usr/bin/env python3
"""Endpoint costs of the MPI stacks seed 000 and t2hx run: Open MPI 4.1's ob1, Open MPI
1.10.7's ob1 and bfo, and 1.10.7's bfo with our PARX patch
(patches/openmpi/1.10.7-bfo-parx-lid-selection.patch), on the transports this machine has
(shared memory, TCP loopback; no InfiniBand). Writes log/mpi-stacks/runs.jsonl (raw) and
bench/results/mpi_stacks.json (derived; docs/modelling.md#mpi-stacks).

bench/mpi_stacks.c measures, per configuration and transport: latency (half round trip,
1 B ... 4 KiB), per-message overhead (time inside MPI_Isend of 1 B, receive pre-posted),
message rate (1 B in windows of 64) and Barrier/Bcast/Allreduce/Alltoall of 8 B at 2, 4, 8
and 16 ranks (oversubscribed on this machine's cores). The configurations take turns in
each of ``--rounds`` rounds, so load drifts hit them alike.

The model numbers (t2hx.conf.MPI_STACKS) are derived from the shared-memory runs by
:func:`stack_model`: per round, a stack's latency minus its own release's ob1 over the same
BTL (median over 1, 8, 64 B) and its inverse message rate minus that ob1's; the median over
rounds. ob1 1.10.7 against 4.1 (PML and BTL together) is reported as ``cross_release``. ``--derive`` redoes
that from the committed raw runs alone; tests/test_mpi_stacks.py does the same.

The 1.10.7 builds are made outside the repository (log/mpi-stacks/README.md gives the
commands); pass their prefixes with ``--plain`` and ``--parx``.

``--smoke DIR``: Open MPI 4.1 (Debian's) alone, shared memory, tiny counts, the result in
DIR/mpi_stacks.json (tests/test_bench_smoke.py); the 1.10.7 builds are left out unless given.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402

LOG = ROOT / "log" / "mpi-stacks"


def sessions() -> list[Path]:
    """The committed measurement sessions the model is derived from (log/mpi-stacks/)."""
    return sorted(LOG.glob("runs-*.jsonl"), key=lambda p: int(p.stem.split("-")[1]))

OUT = ROOT / "bench" / "results" / "mpi_stacks.json"
SIZES = (1, 8, 64, 512, 4096)
SMALL = (1, 8, 64)              # sizes whose latency difference is the per-message cost
RANKS = (2, 4, 8, 16)
REFERENCE = "ompi-4.1-ob1"
#: the conf's stacks: (the measured configuration, the ob1 of the same release and build
#: family it is compared with). Only a difference over the same BTL is the PML's own and
#: transfers to InfiniBand; ob1 1.10.7 against 4.1 mixes in the vader/tcp BTLs rewritten
#: between the releases, so it is reported (cross_release) but not in the model.
MODEL_FROM = {"ompi-4.1-ob1": ("ompi-4.1-ob1", "ompi-4.1-ob1"),
              "ompi-1.10.7-ob1": ("ompi-1.10.7-ob1", "ompi-1.10.7-ob1"),
              "ompi-1.10.7-bfo-parx": ("ompi-1.10.7-bfo-parx", "ompi-1.10.7-ob1")}
#: configuration -> (build, MCA settings); builds: debian (/usr), plain, parx
CONFIGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ompi-4.1-ob1": ("debian", ("pml", "ob1")),
    "ompi-1.10.7-ob1": ("plain", ("pml", "ob1")),
    "ompi-1.10.7-bfo": ("plain", ("pml", "bfo")),
    "ompi-1.10.7-bfo-parx-off": ("parx", ("pml", "bfo", "pml_bfo_parx_enable", "0")),
    "ompi-1.10.7-bfo-parx": ("parx", ("pml", "bfo", "pml_bfo_parx_enable", "1")),
}
TRANSPORTS = {"shm": ("btl", "self,vader"), "tcp": ("btl", "self,tcp", "btl_tcp_if_include", "lo")}


def build_exe(prefix: Path, out: Path) -> Path:
    exe = out / "mpi_stacks"
    subprocess.run([str(prefix / "bin" / "mpicc"), "-O2", "-o", str(exe),
                    str(ROOT / "bench" / "mpi_stacks.c")], check=True, env=env_for(prefix))
    return exe


def env_for(prefix: Path) -> dict[str, str]:
    if prefix == Path("/usr"):
        return dict(os.environ)
    return dict(os.environ, OPAL_PREFIX=str(prefix), PATH=f"{prefix}/bin:{os.environ['PATH']}",
                LD_LIBRARY_PATH=str(prefix / "lib"))


def command(prefix: Path, exe: Path, config: str, transport: str, ranks: int,
            args: list[str]) -> list[str]:
    mca = CONFIGS[config][1] + TRANSPORTS[transport]
    cmd = [str(prefix / "bin" / "mpirun"), "--allow-run-as-root", "--oversubscribe",
           "-np", str(ranks)]
    for key, value in zip(mca[::2], mca[1::2]):
        cmd += ["--mca", key, value]
    return cmd + [str(exe), *args]


def runs_of(iterations: dict, repeats: int) -> list[tuple[str, int, list[str]]]:
    """(transport, ranks, program arguments) of one configuration's round."""
    out = []
    for transport, scale in (("shm", 1), ("tcp", 10)):   # TCP loopback is ~30x slower
        it = {k: max(v // scale, 10) for k, v in iterations.items() if k != "ranks"}
        out += [(transport, 2, ["latency", str(it["latency"]), str(repeats), *map(str, SIZES)]),
                (transport, 2, ["overhead", str(it["stream"]), str(repeats)]),
                (transport, 2, ["rate", str(it["stream"]), str(repeats)])]
        out += [(transport, n, ["coll", str(it["coll"] if n > 2 else it["coll"] * 10),
                                str(repeats)]) for n in iterations["ranks"]]
    return out


def measure(prefixes: dict[str, Path], rounds: int, iterations: dict, repeats: int,
            transports: tuple[str, ...], raw: Path) -> None:
    configs = [c for c, (b, _) in CONFIGS.items() if b in prefixes]
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for b, prefix in prefixes.items():
            (Path(tmp) / b).mkdir()
            exes[b] = build_exe(prefix, Path(tmp) / b)
        raw.parent.mkdir(parents=True, exist_ok=True)
        with raw.open("w", encoding="utf-8") as log:
            for r in range(rounds):          # configurations take turns in every round
                for config in configs:
                    b = CONFIGS[config][0]
                    for transport, ranks, args in runs_of(iterations, repeats):
                        if transport not in transports:
                            continue
                        cmd = command(prefixes[b], exes[b], config, transport, ranks, args)
                        done = subprocess.run(cmd, capture_output=True, text=True,
                                              env=env_for(prefixes[b]), timeout=900)
                        rec = {"round": r, "config": config, "transport": transport,
                               "ranks": ranks, "mode": args[0], "loadavg_1m": os.getloadavg()[0],
                               "cmd": " ".join(cmd).replace(tmp, "$TMP"), "rc": done.returncode,
                               "out": done.stdout, "err": done.stderr[-2000:]}
                        log.write(json.dumps(rec) + "\n")
                        log.flush()


def parse(*raws: Path) -> list[dict]:
    """The raw runs of one or more sessions with their output lines as {key: value}; a run's
    round becomes (session, round). Failed runs are kept, marked by their exit code."""
    runs = []
    for session, raw in enumerate(raws):
        for line in raw.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            rec["round"] = (session, rec["round"])
            rec["values"] = {k: float(v) for k, v in (ln.split() for ln in
                                                      rec["out"].splitlines()
                                                      if len(ln.split()) == 2)}
            runs.append(rec)
    return runs


def table(runs: list[dict]) -> dict[str, dict[str, dict[str, list[float]]]]:
    """config -> transport -> key -> one value per round (round order)."""
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for rec in sorted(runs, key=lambda r: r["round"]):
        if rec["rc"] != 0:
            continue
        keys = out.setdefault(rec["config"], {}).setdefault(rec["transport"], {})
        for key, value in rec["values"].items():
            keys.setdefault(key, []).append(value)
    return out


def paired(a: list[float], b: list[float]) -> list[float]:
    return [x - y for x, y in zip(a, b)]


def deltas(tab: dict, config: str, base: str, transport: str) -> dict[str, float]:
    """``config`` beyond ``base`` on ``transport``: message_ns = median over rounds of the
    median over SMALL sizes of the latency difference (paired by round); gap_ns = median over
    rounds of the difference of 1 / message rate."""
    mine, ref = tab[config][transport], tab[base][transport]
    per_round = [statistics.median(d) for d in zip(*(
        paired(mine[f"latency_us.{s}"], ref[f"latency_us.{s}"]) for s in SMALL))]
    gaps = paired([1e9 / x for x in mine["rate_per_s"]], [1e9 / x for x in ref["rate_per_s"]])
    return {"message_ns": round(statistics.median(per_round) * 1e3, 1),
            "gap_ns": round(statistics.median(gaps), 1)}


def stack_model(runs: list[dict], transport: str = "shm") -> dict[str, dict[str, float]]:
    """Each stack's cost beyond its release's ob1 (t2hx.conf.MPI_STACKS), from
    ``transport``'s runs (MODEL_FROM)."""
    tab = table(runs)
    return {stack: deltas(tab, config, base, transport)
            for stack, (config, base) in MODEL_FROM.items()
            if transport in tab.get(config, {}) and transport in tab.get(base, {})}


def cross_release(runs: list[dict]) -> dict[str, dict[str, float]]:
    """1.10.7's ob1 beyond 4.1's per transport: PML and BTL together (not in the model)."""
    tab = table(runs)
    return {t: deltas(tab, "ompi-1.10.7-ob1", REFERENCE, t) for t in TRANSPORTS
            if t in tab.get("ompi-1.10.7-ob1", {}) and t in tab.get(REFERENCE, {})}


#: PML comparisons over one BTL (same release): name -> (configuration, baseline)
PML_PAIRS = {"bfo_vs_ob1": ("ompi-1.10.7-bfo", "ompi-1.10.7-ob1"),
             "patch_off_vs_bfo": ("ompi-1.10.7-bfo-parx-off", "ompi-1.10.7-bfo"),
             "parx_on_vs_off": ("ompi-1.10.7-bfo-parx", "ompi-1.10.7-bfo-parx-off"),
             "bfo_parx_vs_ob1": ("ompi-1.10.7-bfo-parx", "ompi-1.10.7-ob1")}


def pml(runs: list[dict]) -> dict[str, dict[str, dict[str, float]]]:
    """transport -> PML_PAIRS name -> deltas, plus the 2-rank Barrier and the Isend overhead
    as ratios (keys without dots, for docs quoting)."""
    tab = table(runs)
    out: dict = {}
    for t in TRANSPORTS:
        for name, (config, base) in PML_PAIRS.items():
            if t not in tab.get(config, {}) or t not in tab.get(base, {}):
                continue
            d = deltas(tab, config, base, t)
            mine, ref = tab[config][t], tab[base][t]
            for key, label in (("barrier_us.2", "barrier2_ratio"),
                               ("overhead_us", "isend_ratio")):
                d[label] = round(statistics.median(mine[key]) / statistics.median(ref[key]), 3)
            out.setdefault(t, {})[name] = d
    return out


def summary(runs: list[dict]) -> dict:
    """Medians over rounds per configuration and transport, and bfo's ratios to ob1."""
    tab = table(runs)
    med = {c: {t: {k: round(statistics.median(v), 4) for k, v in keys.items()}
               for t, keys in ts.items()} for c, ts in tab.items()}
    ratios: dict = {}
    for t in TRANSPORTS:
        base = med.get("ompi-1.10.7-ob1", {}).get(t)
        if not base:
            continue
        for c in ("ompi-1.10.7-bfo", "ompi-1.10.7-bfo-parx-off", "ompi-1.10.7-bfo-parx"):
            if t in med.get(c, {}):
                ratios.setdefault(t, {})[f"{c} / ompi-1.10.7-ob1"] = {
                    k: round(v / base[k], 3) for k, v in med[c][t].items()
                    if k in base and base[k] > 0 and k != "rate_per_s"}
    return {"median": med, "ratio_to_1.10.7_ob1": ratios}


def versions(prefixes: dict[str, Path]) -> dict[str, str]:
    out = {}
    for b, prefix in prefixes.items():
        out[b] = subprocess.run([str(prefix / "bin" / "mpirun"), "--version"], text=True,
                                capture_output=True, env=env_for(prefix),
                                check=True).stdout.splitlines()[0]
    return out


def machine() -> dict:
    cpu = next((ln.split(":", 1)[1].strip() for ln in
                Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name")),
               platform.processor())
    return {"cpu": cpu, "cores": len(os.sched_getaffinity(0)), "kernel": platform.release()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plain", type=Path, help="prefix of the unpatched Open MPI 1.10.7 build")
    ap.add_argument("--parx", type=Path, help="prefix of the 1.10.7 build with our bfo patch")
    ap.add_argument("--debian", type=Path, default=Path("/usr"), help="Open MPI 4.1 prefix")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--raw", type=Path, help="where this run's raw records go (default: "
                    "the next log/mpi-stacks/runs-N.jsonl; the model is derived from all)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--derive", action="store_true",
                    help="no runs: derive --out from the raw runs in --raw")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: 4.1 only, tiny counts; result in DIR (not bench/results/)")
    args = ap.parse_args()
    iterations = {"latency": 20000, "stream": 64000, "coll": 100, "ranks": RANKS}
    transports: tuple[str, ...] = tuple(TRANSPORTS)
    if args.smoke:
        args.rounds, args.repeats = 1, 1
        iterations = {"latency": 200, "stream": 640, "coll": 10, "ranks": (2,)}
        args.raw, args.out, transports = args.smoke / "runs-1.jsonl", \
            args.smoke / "mpi_stacks.json", ("shm",)
    elif not args.derive and (args.plain is None or args.parx is None):
        ap.error("--plain and --parx are required (the prefixes of the 1.10.7 builds)")
    prefixes = {"debian": args.debian, **({"plain": args.plain} if args.plain else {}),
                **({"parx": args.parx} if args.parx else {})}
    result: dict = {}
    if args.raw is None:
        args.raw = LOG / f"runs-{len(sessions()) + 1}.jsonl"
    if not args.derive:
        started = time.strftime("%Y-%m-%d %H:%M")
        measure(prefixes, args.rounds, iterations, args.repeats, transports, args.raw)
        result["run"] = {"started": started, "versions": versions(prefixes), **machine(),
                         "rounds": args.rounds, "repeats": args.repeats,
                         "iterations": {k: v for k, v in iterations.items() if k != "ranks"},
                         "ranks": list(iterations["ranks"])}
    raws = [args.raw] if args.smoke else sessions()
    runs = parse(*raws)
    result.update(raw=[str(r.relative_to(ROOT)) if r.is_relative_to(ROOT) else str(r)
                       for r in raws], runs=len(runs), failed=sum(r["rc"] != 0 for r in runs),
                  loadavg_1m={"min": min(r["loadavg_1m"] for r in runs),
                              "median": statistics.median(r["loadavg_1m"] for r in runs),
                              "max": max(r["loadavg_1m"] for r in runs)},
                  model=stack_model(runs), model_tcp=stack_model(runs, "tcp"),
                  cross_release=cross_release(runs), pml=pml(runs), **summary(runs))
    if args.derive and args.out.is_file():      # keep the runs' own facts
        result = {**{k: v for k, v in json.loads(args.out.read_text()).items()
                     if k == "run"}, **result}
    elif not args.smoke:                         # one entry per session, this run's last
        old = json.loads(args.out.read_text()).get("run", []) if args.out.is_file() else []
        result["run"] = [*(old if isinstance(old, list) else [old]), result["run"]]
    if args.smoke and not (args.plain and args.parx):
        result["smoke_left_out"] = {"ompi-1.10.7": "no --plain/--parx prefixes: the Open MPI "
                                    "1.10.7 builds are made outside the repository "
                                    "(log/mpi-stacks/README.md)"}
    atomic_write(args.out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["model"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
