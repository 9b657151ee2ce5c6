"""The committed reference campaign (log/reference/, written by run/reproduce) never reports a
number its hardware could not reach: no Gflop/s above the conf node's peak x nodes, no
bandwidth above the plane's link rate, no time <= 0 (but for calls that move nothing)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.conf import load_system, system_path
from t2hx.flowsim import appmodel
from t2hx.post.ingest import ingest

LOG = ROOT / "log" / "reference"
FLOPS = {"Gflop/s": 1e9, "GFLOP/s": 1e9}
BANDWIDTH = {"MiB/s": 2 ** 20, "MB/s": 1e6, "GB/s": 1e9}
TIMES = {"s", "us"}


@cache
def results():
    return ingest(Path(LOG)).results


@cache
def plane_of(partition: str) -> tuple[float, float]:
    """(peak Gflop/s per node, link bytes/s) of a sim partition <conf>-<plane>."""
    conf, plane = partition.rsplit("-", 1)
    system = load_system(system_path(conf))
    node = appmodel.node_of(system.nodes)
    return node["peak_gflops"], system.plane(plane).gbps * 1e9 / 8


def capability():
    df = results()
    return df[df["benchmark"] != "capacity"]


def test_reference_campaign_has_every_kind_of_number():
    units = set(capability()["unit"])
    assert {"Gflop/s", "GFLOP/s", "s", "us"} <= units and units & set(BANDWIDTH)


def test_no_flop_rate_above_node_peak_times_nodes():
    df = capability()
    rows = df[df["unit"].isin(FLOPS)]
    assert len(rows)
    for row in rows.itertuples():
        peak, _ = plane_of(row.partition)
        assert row.value * FLOPS[row.unit] <= peak * 1e9 * row.nodes, row


def test_no_bandwidth_above_the_link_rate():
    """Per-pair and per-rank bandwidths (mpiGraph, Multi-PingPong, eBB) are bounded by one
    HCA's link rate."""
    df = capability()
    rows = df[df["unit"].isin(BANDWIDTH)]
    assert len(rows)
    for row in rows.itertuples():
        _, link = plane_of(row.partition)
        scale = BANDWIDTH[row.unit]
        assert row.value * scale <= link * (1 + 1e-9), row


#: Calls Open MPI returns from before any communication when they move no data
#: (``ompi/mpi/c/bcast.c``, ``reduce.c``, ``allreduce.c``: ``0 == count``): IMB times next
#: to nothing there, and the model says 0 (EmDL is IMB's Allreduce).
EMPTY_AT_ZERO_BYTES = {"imb-bcast", "imb-reduce", "imb-allreduce", "emdl"}


@pytest.mark.parametrize("unit", sorted(TIMES))
def test_times_are_positive(unit):
    df = capability()
    rows = df[df["unit"] == unit]
    empty = rows["benchmark"].isin(EMPTY_AT_ZERO_BYTES) & (rows["msg_size"] == 0)
    assert len(rows[~empty]) and (rows.loc[~empty, "value"] > 0).all()
    assert (rows.loc[empty, "value"] >= 0).all()
