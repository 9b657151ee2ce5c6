"""Bill of materials of a system conf: switches, cables and HCA ports as the generators
build them, summed over planes (docs/fattree-configs.md).

Counts only, no prices: a price list is a site's input, and seed 003's relative costs
(Table 5) are assumptions of that paper, not measurements we could calibrate from.
"""

from __future__ import annotations

from collections import Counter

from t2hx.conf import System
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric

COLUMNS = ("planes", "gbps", "switches", "switch_ports_used", "hca_ports", "host_cables",
           "switch_cables", "cables")


def plane_counts(fabric: Fabric) -> dict:
    """Counts of one built plane; ``levels`` maps a switch level (1 = leaf) to its count."""
    switches = set(fabric.switches())
    host = sum(1 for c in fabric.cables if (c.a in switches) != (c.b in switches))
    inter = sum(1 for c in fabric.cables if c.a in switches and c.b in switches)
    levels = Counter(fabric.nodes[s].attrs.get("level", 0) for s in switches)
    return {"switches": len(switches), "subnets": fabric.subnets(),
            "levels": dict(sorted(levels.items())),
            "switch_ports_used": host + 2 * inter, "hca_ports": host,
            "host_cables": host, "switch_cables": inter, "cables": host + inter}


def system_counts(system: System) -> dict:
    """Per-plane counts and their sums for the whole system."""
    planes = {name: plane_counts(build_plane(system, name)) for name in system.planes}
    total = {key: sum(p[key] for p in planes.values())
             for key in COLUMNS if key not in ("planes", "gbps")}
    rates = sorted({system.plane(name).gbps for name in planes})
    return {"system": system.name, "nodes": len(system.hostnames()), "planes": len(planes),
            "gbps": rates[0] if len(rates) == 1 else rates, **total, "per_plane": planes}


def table(rows: list[dict], reference: str | None = None) -> str:
    """A Markdown table of ``system_counts`` rows; with ``reference``, ratios to that row."""
    ref = next((r for r in rows if r["system"] == reference), None)
    head = ["system", "nodes", *COLUMNS]
    if ref:
        head += ["switches_rel", "cables_rel"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r[k]) for k in head[:len(COLUMNS) + 2]]
        if ref:
            cells += [f"{r['switches'] / ref['switches']:.2f}",
                      f"{r['cables'] / ref['cables']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
