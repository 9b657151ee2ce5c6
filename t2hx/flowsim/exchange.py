"""Seed 001's point-to-point exchange (Fig 5.13) timed with a conf system's flow-model
parameters. Seed 001's network analysis, not a simulated case: it lives apart from
t2hx/flowsim/network.py so that the simulator's import closure (the run cache's key) does not
reach the placement package."""

from __future__ import annotations

from t2hx.conf import System
from t2hx.errors import ConfError
from t2hx.flowsim.network import GBIT, LogGP
from t2hx.placement.network_analysis import P2PTiming


def p2p_timing(system: System, size: int) -> P2PTiming:
    """The exchange timed with a system's model and its (one) plane's link rate: the node
    and link parameters of Tables 3.3/4.2 live in the thesis' conf systems."""
    if len(system.planes) != 1:
        raise ConfError(f"{len(system.planes)} planes: the timing needs one link rate",
                        file=system.path, field="planes",
                        fix="time the exchanges with a one-plane system (e.g. thesis-rsn1024)")
    plane = next(iter(system.planes.values()))
    return P2PTiming(LogGP.from_conf(system.model).latency, plane.gbps * GBIT, size)
