#!/usr/bin/env python3
"""Route the reference fabrics with the real OpenSM (as t2hx does), ask OpenSM's SA for the
path SLs, and write the committed inputs of every case to tests/data/refsim/<fabric>/:
hostfile.txt, routing/ (LFT dump + guid2lid), routing.json, path_sl.csv, <pattern>.json.

    PYTHONPATH=. python bench/refsim/prepare.py [--work DIR] [FABRIC ...]

docs/validation.md#reference-packet-simulator describes the whole procedure.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from cases import FABRICS, MTU, PATTERNS, fabric, pattern_pairs  # noqa: E402
from data import PATH_SL_COLUMNS, lft_digest  # noqa: E402
from pathsl import daemon_tables, query_path_sls  # noqa: E402

from t2hx.conf import load_system  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.routing.engines import route_args  # noqa: E402


def prepare(name: str, work: Path) -> None:
    case = fabric(name)
    system = load_system(case.system)
    hosts = system.hostnames()
    net = open_network(system, case.plane, case.engine, hosts=hosts, work=work)
    tables, fab = net.tables, net.fabric
    out = case.dir
    (out / "hostfile.txt").write_text("".join(h + "\n" for h in hosts))
    (out / "routing").mkdir(exist_ok=True)
    for f in ("opensm-lfts.dump", "guid2lid"):
        shutil.copyfile(net.dumps / f, out / "routing" / f)
    lids = [int(tables.base_lid[h, 1]) for h in net.rank_hca]
    digest = lft_digest(tables)

    # the SA's SL for every ordered pair, from a daemon OpenSM with the same conf and LIDs
    args = route_args(fab, case.engine, system.plane(case.plane).opensm, system.path)
    n = len(hosts)
    pairs = [(lids[s], lids[d]) for s in range(n) for d in range(n) if s != d]
    sls, run = query_path_sls(fab, case.engine, args["lmc"], args["extra_conf"],
                              work / "pathsl" / name, pairs, net.dumps / "guid2lid")
    again = lft_digest(daemon_tables(fab, run))
    if again != digest:
        raise SystemExit(f"{name}: the daemon OpenSM routed differently ({again} != {digest})")
    with open(out / "path_sl.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(PATH_SL_COLUMNS)
        for s in range(n):
            for d in range(n):
                if s != d:
                    w.writerow([s, d, lids[s], lids[d], sls[(lids[s], lids[d])]])
    summary = json.loads((net.dumps / "opensm-run.json").read_text())
    used = sorted(set(sls.values()))
    (out / "routing.json").write_text(json.dumps({
        "system": "system.yaml", "plane": case.plane, "engine": case.engine,
        "lmc": args["lmc"], "opensm_conf": conf_lines(net.dumps / "opensm.conf"),
        "lft_sha256": digest, "rank_lid": lids,
        "vls_needed": summary.get("vls", 1), "sls_answered": used,
        "vl_groups": vl_groups(net.dumps / "opensm.log"),
        "sl2vl": "identity (SL i on VL i), as DFSSSP assumes",
        "mtu_bytes": MTU,
    }, indent=1) + "\n")
    for pattern in PATTERNS:
        write_pattern(out, pattern, n, sls, lids)
    print(f"{name}: {n} ranks, LFT sha256 {digest[:12]}, SLs {used}")


def conf_lines(path: Path) -> list[str]:
    """opensm.conf of the routing run, its paths relative to the dump directory."""
    out = []
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if value.startswith("/"):
            value = "<dump_dir>" if key == "dump_files_dir" else f"<dump_dir>/{Path(value).name}"
        out.append(f"{key} {value}")
    return out


def vl_groups(log: Path) -> list[list[int]]:
    """DFSSSP's balancing: consecutive VLs that share one layer's paths (OpenSM logs the
    approximate paths per VL after balancing; equal counts in a row are one layer split)."""
    text = log.read_text(errors="replace")
    if "after balancing" not in text:
        return [[0]]
    tail = text.split("after balancing", 1)[1].splitlines()[1:]
    counts = []
    for line in tail:
        if ". lane:" not in line:
            break
        counts.append(int(line.rsplit(":", 1)[1]))
    groups: list[list[int]] = []
    for vl, c in enumerate(counts):
        if groups and counts[groups[-1][0]] == c:
            groups[-1].append(vl)
        else:
            groups.append([vl])
    return groups


def write_pattern(out: Path, pattern: str, n: int, sls: dict, lids: list[int]) -> None:
    pairs, size, params = pattern_pairs(pattern, n)
    assert size % MTU == 0
    flows = [{"id": k, "src": s, "dst": d, "bytes": size, "start_s": 0.0,
              "sl": sls[(lids[s], lids[d])]} for k, (s, d) in enumerate(pairs)]
    (out / f"{pattern}.json").write_text(json.dumps({
        "fabric": out.name, "pattern": pattern, "ranks": n, "params": params,
        "bytes_per_flow": size, "flows": flows}, indent=None, separators=(",", ":")) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fabrics", nargs="*", default=[f.name for f in FABRICS])
    ap.add_argument("--work", type=Path, default=Path("work"),
                    help="t2hx work root (routing cache) and the SA runs' directory")
    a = ap.parse_args()
    for name in a.fabrics:
        prepare(name, a.work.resolve())


if __name__ == "__main__":
    main()
