"""Table 1, the rules R1-R4 and the quadrant geometry: the C source (parx/table1.c, via
ctypes), the Python twin (t2hx.routing.parx) and docs/routing.md#table-1 must all agree."""

from __future__ import annotations

import ctypes
import math
import subprocess

import pytest

from t2hx import ROOT
from t2hx.routing import parx
from t2hx.fabric.graph import Fabric
from t2hx.fabric.hyperx import hyperx

# Seed 000 §3.2.1 Table 1 (a: small, b: large): rows d=Q0..Q3, columns s=Q0..Q3.
PUBLISHED_SMALL = """1|3 1 0|2 3
                  1 1|2 2 0|3
                  1|3 2 0|2 0
                  3 1|2 0 0|3"""
PUBLISHED_LARGE = """0|2 0 0|2 2
                  0 0|3 3 0|3
                  1|3 3 1|3 1
                  2 1|2 1 1|2"""


def published(text: str) -> dict[tuple[int, int], tuple[int, ...]]:
    out = {}
    for d, row in enumerate(text.splitlines()):
        for s, cell in enumerate(row.split()):
            out[(s, d)] = tuple(int(x) for x in cell.split("|"))
    return out


@pytest.fixture(scope="module")
def lib() -> ctypes.CDLL:
    subprocess.run(["make", "-s", "-C", str(ROOT / "parx")], check=True)
    so = ctypes.CDLL(str(ROOT / "parx" / "libparx_table1.so"))
    so.parx_table1_choices.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_int)]
    so.parx_table1_select.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t,
                                      ctypes.c_size_t, ctypes.c_uint]
    so.parx_lid_quadrant.argtypes = [ctypes.c_uint]
    return so


def c_choices(lib: ctypes.CDLL, s: int, d: int, large: bool) -> tuple[int, ...]:
    out = (ctypes.c_int * 2)()
    n = lib.parx_table1_choices(s, d, int(large), out)
    return tuple(out[:n])


@pytest.mark.parametrize("large,text", [(False, PUBLISHED_SMALL), (True, PUBLISHED_LARGE)])
def test_c_and_python_tables_equal_published(lib, large, text) -> None:
    for (s, d), want in published(text).items():
        assert c_choices(lib, s, d, large) == want, (s, d, large)
        assert parx.choices(s, d, large) == want, (s, d, large)


def docs_table(which: str) -> str:
    """The ``| small |`` or ``| large |`` table of docs/routing.md#table-1 as row text."""
    rows, inside = [], False
    for line in (ROOT / "docs" / "routing.md").read_text().splitlines():
        if line.startswith(f"| {which} |"):
            inside = True
        elif inside and line.startswith("| d=Q"):
            rows.append(" ".join(c.strip().replace("\\|", "|") for c in line.split(" | ")[1:])
                        .rstrip(" |"))
        elif inside and not line.startswith("|"):
            break
    return "\n".join(rows)


@pytest.mark.parametrize("which,text", [("small", PUBLISHED_SMALL), ("large", PUBLISHED_LARGE)])
def test_docs_table_equals_published(which, text) -> None:
    assert published(docs_table(which)) == published(text)


def test_select_threshold_and_coin_agree(lib) -> None:
    for s in range(4):
        for d in range(4):
            for size in (0, 1, 511, 512, 513, 1 << 20):
                for threshold in (512, 64):
                    for coin in (0, 1, 2, 7):
                        c = lib.parx_table1_select(s, d, size, threshold, coin)
                        py = parx.select(s, d, size, threshold, coin)
                        assert c == py
                        assert c in parx.choices(s, d, size >= threshold)
    # the paper's threshold: 511 B is small, 512 B large (seed 000 §3.2.4: small is < 512 B)
    assert parx.select(0, 0, 511, coin=0) == 1 and parx.select(0, 0, 512, coin=0) == 0
    assert lib.parx_table1_select(9, 0, 1, 512, 0) == -1


def test_rules_and_lid_quadrants_agree(lib) -> None:
    for x in range(4):
        for qa in range(4):
            for qb in range(4):
                assert bool(lib.parx_rule_removes(x, qa, qb)) == parx.rule_removes(x, qa, qb)
    for lid in (4, 999, 1000, 2500, 3999, 4000, 10000, 11007, 13999, 14000):
        assert lib.parx_lid_quadrant(lid) == parx.lid_quadrant(lid)
    assert [parx.lid_quadrant(v) for v in (4, 1000, 2999, 3000, 10001, 12000)] == \
        [0, 1, 2, 3, 0, 2]
    assert parx.lid_quadrant(4000) == -1


def test_quadrants_follow_design_geometry() -> None:
    dims = (12, 8)
    assert parx.quadrant((0, 0), dims) == 0       # top-left
    assert parx.quadrant((0, 7), dims) == 1       # bottom-left
    assert parx.quadrant((11, 7), dims) == 2      # bottom-right
    assert parx.quadrant((11, 0), dims) == 3      # top-right
    assert parx.quadrant((5, 3), dims) == 0 and parx.quadrant((6, 4), dims) == 2
    # R1 removes the left half (Q0+Q1), R2 the right, R3 the top (Q0+Q3), R4 the bottom
    assert parx.rule_removes(0, 0, 1) and not parx.rule_removes(0, 0, 3)
    assert parx.rule_removes(1, 2, 3) and not parx.rule_removes(1, 1, 2)
    assert parx.rule_removes(2, 0, 3) and not parx.rule_removes(2, 0, 1)
    assert parx.rule_removes(3, 1, 2) and not parx.rule_removes(3, 2, 3)


def test_small_choices_never_prune_the_pair_half_and_large_same_quadrant_ones_do() -> None:
    """Table 1a keeps minimal paths: its rule never removes the links inside a half that
    holds both ends; 1b for same-quadrant pairs always does (that forces the detour)."""
    halves = [frozenset(h) for h in parx.RULE_HALF]
    for s in range(4):
        for d in range(4):
            for x in parx.choices(s, d, False):
                assert not (s in halves[x] and d in halves[x]), (s, d, x)
            if s == d:
                for x in parx.choices(s, d, True):
                    assert s in halves[x]


def fabric(dims: list[int]) -> Fabric:
    hosts = [f"h{i}" for i in range(2 * math.prod(dims))]
    return hyperx("hx", hosts, dims, 2)


def test_lid_policy_is_lmc_aligned_per_quadrant_and_switches_plus_10000() -> None:
    fab = fabric([12, 8])
    lids = parx.lid_policy(fab)
    quads = parx.node_quadrants(fab)
    for h in fab.hcas():
        lid = lids[fab.nodes[h].port_guid(1)]
        assert lid % 4 == 0 and lid > 0 and parx.lid_quadrant(lid) == quads[h] and lid < 4000
    for s in fab.switches():
        lid = lids[fab.nodes[s].guid]
        assert 10000 <= lid < 14000 and parx.lid_quadrant(lid) == quads[s]
    assert min(lids.values()) == 4 and len(set(lids.values())) == len(lids)
    text = parx.guid2lid_file(fab, lids)
    first = text.split("\n\n")[0].split()
    assert first[1:] == ["0x0004", "0x0007"]


@pytest.mark.parametrize("dims", [[4, 4, 4], [5, 4], [4]])
def test_non_2d_or_odd_hyperx_is_refused_in_one_line(dims) -> None:
    with pytest.raises(parx.ConfError) as err:
        parx.lid_policy(fabric(dims))
    assert "\n" not in str(err.value) and "fix:" in str(err.value)
