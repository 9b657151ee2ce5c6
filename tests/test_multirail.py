"""Rails and planes in the flow model (t2hx.flowsim.multirail, docs/modelling.md#multirail):
the policy is conf data, existing confs stay on one rail, and every policy conserves bytes."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from t2hx import ROOT
from t2hx.conf import load_system, system_path
from t2hx.errors import ConfError
from t2hx.flowsim.multirail import DEFAULT_THRESHOLD, MultiRail, shares

SRC = np.array([0, 0, 0, 1, 1, 2])
DST = np.array([1, 2, 3, 0, 2, 3])
SIZE = np.array([100, 1 << 20, 8192, 8191, 3, 1_000_001])


@pytest.mark.parametrize("name", ["t2hx", "mini"])
def test_existing_confs_keep_one_rail(name):
    rail = MultiRail.from_conf(load_system(system_path(name)).model)
    assert rail == MultiRail("single", 1, DEFAULT_THRESHOLD)
    msg, lane, nbytes = shares(rail, SRC, DST, SIZE)
    assert msg.tolist() == list(range(len(SRC)))
    assert not lane.any() and nbytes.tolist() == SIZE.tolist()


@pytest.mark.parametrize("policy", ["round_robin", "stripe"])
@pytest.mark.parametrize("rails", [2, 3])
def test_policies_conserve_bytes_per_message(policy, rails):
    msg, lane, nbytes = shares(MultiRail(policy, rails, 8192), SRC, DST, SIZE)
    assert np.bincount(msg, weights=nbytes, minlength=len(SRC)).tolist() == SIZE.tolist()
    assert lane.min() >= 0 and lane.max() < rails
    assert (np.diff(msg) >= 0).all()          # parts stay in message order


def test_round_robin_pins_each_peer_to_one_rail():
    msg, lane, _ = shares(MultiRail("round_robin", 2), SRC, DST, SIZE)
    assert len(msg) == len(SRC)
    assert lane.tolist() == (DST % 2).tolist()
    assert set(lane.tolist()) == {0, 1}       # both rails carry traffic


def test_stripe_splits_only_from_the_threshold_on():
    msg, lane, nbytes = shares(MultiRail("stripe", 2, 8192), SRC, DST, SIZE)
    parts = np.bincount(msg, minlength=len(SRC))
    assert parts.tolist() == [1, 2, 2, 1, 1, 2]   # 1 MiB, 8192 and 1,000,001 B are striped
    last = msg == 5
    assert sorted(nbytes[last].tolist()) == [500_000, 500_001]
    assert sorted(lane[last].tolist()) == [0, 1]


def _conf_with(tmp_path, multirail: dict):
    raw = yaml.safe_load((ROOT / "conf" / "systems" / "mini.yaml").read_text())
    raw.setdefault("model", {})["multirail"] = multirail
    path = tmp_path / "dual.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_conf_selects_a_policy(tmp_path):
    system = load_system(_conf_with(tmp_path, {"policy": "stripe", "rails": 2,
                                               "stripe_threshold": 65536}))
    assert MultiRail.from_conf(system.model, system.path) == MultiRail("stripe", 2, 65536)


@pytest.mark.parametrize("bad,field", [({"policy": "spray", "rails": 2}, "policy"),
                                       ({"policy": "stripe", "rails": 0}, "rails")])
def test_bad_multirail_conf_is_one_line(tmp_path, bad, field):
    with pytest.raises(ConfError) as err:
        load_system(_conf_with(tmp_path, bad))
    assert "\n" not in str(err.value) and field in str(err.value)


def test_a_policy_needs_two_rails(tmp_path):
    system = load_system(_conf_with(tmp_path, {"policy": "round_robin"}))
    with pytest.raises(ConfError, match="rails"):
        MultiRail.from_conf(system.model, system.path)
