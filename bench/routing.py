#!/usr/bin/env python3
"""Routing time and peak memory of every OpenSM engine on both planes of t2hx.yaml, with
and without the missing cables. Each run is a fresh subprocess, so its peak RSS is that of
its own ibsim/opensm children. Writes bench/results/routing.json.

``--smoke DIR``: dfsssp on both planes of mini.yaml (both variants), the rows in
DIR/routing.json (tests/test_bench_smoke.py)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402

ENGINES = ["minhop", "updn", "ftree", "sssp", "dfsssp", "lash", "nue", "dor"]
CHILD = """
import json, resource, sys
from t2hx.conf import load_system
from t2hx.fabric.build import build_plane
from t2hx.routing.lft import load_tables
from t2hx.routing import analysis
from t2hx.routing.opensm import route
conf, plane, engine, lmc, out = sys.argv[1:6]
fabric = build_plane(load_system(conf), plane)
run = route(fabric, out, engine, int(lmc), timeout=900)
s = analysis.summary(load_tables(fabric, out), run.summary)
s["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
print(json.dumps(s))
"""


def perfect_copy(conf: Path, tmp: Path) -> Path:
    data = yaml.safe_load(conf.read_text())
    for plane in data["planes"].values():
        plane["missing_cables"] = {}
    path = tmp / f"{conf.stem}-perfect.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_one(conf: Path, plane: str, engine: str, lmc: int, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(conf), plane, engine, str(lmc),
                           str(out)], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"engine": engine, "lmc": lmc, "error": tail}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--engines", nargs="*", default=ENGINES)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "routing.json"))
    ap.add_argument("--system", default="t2hx", help="conf/systems/<name>.yaml")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds on mini.yaml, result in DIR (not bench/results/)")
    args = ap.parse_args()
    if args.smoke:
        args.system, args.engines, args.out = "mini", ["dfsssp"], args.smoke / "routing.json"
    conf = ROOT / "conf" / "systems" / f"{args.system}.yaml"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"missing-cables": conf, "perfect": perfect_copy(conf, Path(tmp))}
        for variant, path in variants.items():
            for plane in ("fattree", "hyperx"):
                for engine in args.engines:
                    lmc = 2 if (plane == "hyperx" and engine == "dfsssp") else 0
                    r = run_one(path, plane, engine, lmc, Path(tmp) / f"{variant}-{plane}-{engine}")
                    r.update(variant=variant, plane=plane)
                    for bulky in ("hop_histogram", "errors"):
                        r.pop(bulky, None)
                    rows.append(r)
                    if not args.quiet:
                        print(f"{variant:15} {plane:8} {engine:7} lmc={lmc} "
                              f"{r.get('seconds', '-')} s {r.get('peak_rss_mib', '-')} MiB "
                              f"fallback={r.get('fallback', '-')} vls={r.get('vls', '-')} "
                              f"{r.get('error', '')}", file=sys.stderr, flush=True)
    atomic_write(Path(args.out), json.dumps(rows, indent=2) + "\n")
    # An engine may fail on a topology (recorded); dfsssp on mini must not: a failing smoke
    # run is a broken script, not a result.
    return 1 if args.smoke and any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
