"""The all-pairs routing measures computed from each destination's forwarding tree
(t2hx/routing/analysis.py DestinationTrees) against walking every route through the real
LFTs (Tables.paths): the same hop histogram, EFI and channel dependencies on the mini
fabrics routed by real OpenSM, for every LID of an LMC, and the walk's own error for a
route that loops or ends in a black hole."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from t2hx.routing import analysis
from t2hx.routing.lft import PathError


def walked(t, lid_index: int):
    src, lids = analysis.all_pairs(t, lid_index=lid_index)
    p = t.paths(src, lids)
    efi = np.bincount(p[p >= 0], minlength=t.links)
    hops = np.bincount(t.switch_hops(src, lids))
    a, b = p[:, :-1].ravel(), p[:, 1:].ravel()
    ok = (a >= 0) & (b >= 0)
    deps = np.unique(np.stack([a[ok], b[ok]], axis=1), axis=0)
    return efi, hops, deps


@pytest.mark.parametrize("plane,engine,lmc", [("hyperx", "dfsssp", 0), ("hyperx", "minhop", 2),
                                              ("fattree", "ftree", 0), ("fattree", "updn", 1)])
def test_the_trees_give_what_walking_every_route_gives(mini, routed, plane, engine, lmc):
    t = routed(mini, plane, engine, lmc).tables
    for index in range(1 << lmc):
        efi, hops, deps = walked(t, index)
        trees = analysis.DestinationTrees(t, index)
        assert np.array_equal(trees.link_loads(), efi)
        assert np.array_equal(trees.hop_counts(), hops)
        assert np.array_equal(trees.dependencies(), deps)
    total = np.zeros(16, np.int64)
    for index in range(1 << lmc):
        hops = walked(t, index)[1]
        total[:len(hops)] += hops
    assert analysis.hop_histogram(t, list(range(1 << lmc))) == {
        k: int(n) for k, n in enumerate(total) if n}


def test_parx_on_the_mini_hyperx(mini, routed):
    t = routed(mini, "hyperx", "parx", 2).tables
    for index in range(4):
        efi, hops, deps = walked(t, index)
        trees = analysis.DestinationTrees(t, index)
        assert np.array_equal(trees.link_loads(), efi)
        assert np.array_equal(trees.dependencies(), deps)


def broken(t, how: str):
    """The tables with one switch's entry for one HCA's LID made a black hole or a loop."""
    lft = t.lft.copy()
    lid = int(t.hca_lids()[5])
    sw = t.fabric.switches()
    first = int(t.link_dst[t.link_of[t.fabric.hcas()[0], 1]])     # HCA 0's switch
    if first == t.lid_node[lid] or first not in sw:
        pytest.fail("pick another HCA")
    if how == "hole":
        lft[first, lid] = -1
    else:                       # back to where the route came from, and that one back here
        port = int(lft[first, lid])
        nxt = int(t.link_dst[t.link_of[first, port]])
        back = int(np.flatnonzero(t.link_dst[t.link_of[nxt]] == first)[0]) \
            if nxt in sw else port
        lft[nxt, lid] = back
    return dataclasses.replace(t, lft=lft)


@pytest.mark.parametrize("how,words", [("hole", "black hole"), ("loop", "routing loop")])
def test_a_broken_route_is_the_walks_error(mini, routed, how, words):
    t = broken(routed(mini, "hyperx", "dfsssp").tables, how)
    with pytest.raises(PathError, match=words):
        analysis.DestinationTrees(t)
