"""A packet phase simulated as its link-disjoint groups (t2hx/flowsim/components.py) gives
the whole phase's results bit for bit, on the recorded kernel cases (eBB rounds at 56 and
224 nodes, an mpiGraph step, a rendezvous Gather, several VLs, output buffers, queues per
output, concurrent jobs, reference cases: tests/data/packetk/README.md); a group moved to
other links of the same parameters gives its results again; and the engine's eBB is the
same with and without groups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from t2hx.flowsim import components, packetk, patterns
from t2hx.flowsim.packet import open_packet
from tests.test_packet_kernel_identical import CASES, case


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_groups_alone_give_the_whole_phase_bit_for_bit(path: Path) -> None:
    links, msgs, arb, want = case(path)
    groups = components.split(msgs, links.pair)
    assert sorted(np.concatenate(groups).tolist()) == list(range(len(msgs.bytes)))
    kernel = packetk.Kernel(links, arb, 1)
    first, end = np.empty(len(msgs.bytes)), np.empty(len(msgs.bytes))
    subsets = [components.subset(msgs, g) for g in groups]
    for g, (f, e, _) in zip(groups, kernel.run(subsets)):
        first[g], end[g] = f, e
    assert first.tobytes() == want["first"].tobytes()
    assert end.tobytes() == want["end"].tobytes()


def test_ebb_rounds_fall_into_many_groups() -> None:
    """The premise of the speed-up: an eBB round at 224 nodes is not one group."""
    links, msgs, _, _ = case(next(p for p in CASES if p.stem == "ebb_224_round0"))
    groups = components.split(msgs, links.pair)
    assert len(groups) > 10
    # no group shares a link or a charged partner with another
    seen: dict[int, int] = {}
    for i, g in enumerate(groups):
        sub = components.subset(msgs, g)
        used = set(sub.route.tolist())
        used |= {int(links.pair[x]) for x in used if links.pair[x] >= 0}
        for x in used:
            assert seen.setdefault(x, i) == i


def test_equal_signatures_give_equal_results_on_other_links() -> None:
    """A group's results depend on its structure and link parameters, not on which links:
    groups of equal signature on different links (eBB's isolated pairs) time the same."""
    seen: dict[str, dict] = {}
    compared = 0
    for path in CASES:
        if not path.stem.startswith("ebb_"):
            continue
        links, msgs, arb, _ = case(path)
        kernel = packetk.Kernel(links, arb, 1)
        classes = components.link_classes(links)
        fabric = seen.setdefault(path.stem.split("_round")[0], {})   # rounds of one fabric
        for g in components.split(msgs, links.pair):
            sub = components.subset(msgs, g)
            key = components.signature(sub, classes, links.pair)
            first, end, _ = kernel.run([sub])[0]
            if key in fabric:
                other_route, other_first, other_end = fabric[key]
                assert first.tobytes() == other_first.tobytes()
                assert end.tobytes() == other_end.tobytes()
                compared += not np.array_equal(np.sort(other_route), np.sort(sub.route))
            else:
                fabric[key] = (sub.route, first, end)
    assert compared >= 5


@pytest.mark.parametrize("size", [4096, 1 << 20])
def test_the_engine_gives_the_same_ebb_with_and_without_groups(mini_hyperx, size) -> None:
    grouped = open_packet(mini_hyperx)
    whole = open_packet(mini_hyperx)
    whole.decompose = False
    a = patterns.ebb(grouped, size, 8, 20, 5)
    b = patterns.ebb(whole, size, 8, 20, 5)
    assert a.round_times.tobytes() == b.round_times.tobytes()
    assert grouped.stats["groups"] > grouped.stats["phases"]
    assert grouped.stats["events"] <= whole.stats["events"]
