"""bench/independent_count.py reads a claim's direction and size from its numbers, not from
its verdict (#47 item 5)."""

from __future__ import annotations

import importlib.util

from t2hx import ROOT

_spec = importlib.util.spec_from_file_location("independent_count",
                                               ROOT / "bench" / "independent_count.py")
assert _spec and _spec.loader
ic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ic)


def test_percent_effects_by_sign_and_size() -> None:
    assert ic.judge("+66.0 %", "+153.3 % [mpigraph, n=28]", "same direction") == (True, True)
    assert ic.judge("+46.0 %", "+2.1 % [hpl]", "weaker") == (True, False)
    assert ic.judge("+16.0 %", "-22.8 % [capacity]", "contradicts") == (False, False)
    # the numbers decide, not the verdict
    assert ic.judge("+10.0 %", "+12.0 %", "contradicts") == (True, True)


def test_ratios_compare_their_logarithms() -> None:
    assert ic.judge("0.372×", "0.391× [mpigraph]", "agrees") == (True, True)
    assert ic.judge("0.615×", "0.992× [mpigraph]", "contradicts") == (True, False)
    assert ic.judge("1.9×", "0.8×", "contradicts") == (False, False)


def test_ranges_count_by_their_middle_and_words_by_the_verdict() -> None:
    assert ic.judge("+2.0 % … +6.0 %", "-16.3 % … -4.7 % [ebb]", "contradicts") == (False, False)
    assert ic.judge("on par", "-2.9 % [imb-bcast]", "agrees") == (True, True)
    assert ic.judge("#1", "#3 of 5 (median gain -5.3 %)", "contradicts") == (False, False)
    assert ic.judge("≥ -1.0 %", "-0.3 % [minife]", "agrees") == (True, True)
    assert ic.judge("last", "#4 of 5", "weaker") == (True, False)
