"""How MPI spreads one rank's traffic over its rails or planes (docs/modelling.md#multirail).

A host with several HCA ports (XGFT w1 = 2 in one plane) or one HCA in each of several planes
has several *rails*. The policy is conf data (``model: multirail:`` of a system conf):

- ``single`` (default): every message on rail 0, the behaviour of every conf before rails;
- ``round_robin``: each peer pinned to one rail, peers dealt out in turn (rail = dst mod n);
- ``stripe``: like round_robin below ``stripe_threshold`` bytes; at or above it a message is
  cut into equal parts, one per rail (UCX's multi-rail bandwidth lanes behave this way).

:func:`shares` turns a message list into (message, rail, bytes) parts; the flow model then
routes each part on its rail's *lane*: an HCA port of a plane (``lanes: [fattree:1,
fattree2:1]`` for one HCA in each of two planes; default ports 1..rails of the simulated
plane, two ports of one HCA on the same leaf).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from t2hx.errors import ConfError

POLICIES = ("single", "round_robin", "stripe")
DEFAULT_THRESHOLD = 8192   # bytes; UCX's default rendezvous switch point is of this order


@dataclass(frozen=True)
class MultiRail:
    policy: str = "single"
    rails: int = 1
    stripe_threshold: int = DEFAULT_THRESHOLD
    #: (plane, HCA port) of each rail; plane None = the plane the network simulates.
    #: Default: ports 1..rails of that plane (two ports of one HCA, XGFT p1 = 2).
    lanes: tuple = ()

    @classmethod
    def from_conf(cls, model: dict | None, path: object = None,
                  planes: tuple = ()) -> MultiRail:
        spec = (model or {}).get("multirail") or {}
        lanes = tuple(_lane(text, planes, path) for text in spec.get("lanes", []))
        rails = spec.get("rails", len(lanes) or 1)
        rail = cls(spec.get("policy", "single"), rails,
                   spec.get("stripe_threshold", DEFAULT_THRESHOLD), lanes)
        if rail.policy != "single" and rail.rails < 2:
            raise ConfError(f"policy {rail.policy} with one rail", file=path,
                            field="model.multirail.rails",
                            fix="set rails: 2 (or more), or policy: single")
        if lanes and len(lanes) != rails:
            raise ConfError(f"{len(lanes)} lanes for {rails} rails", file=path,
                            field="model.multirail.lanes", fix="give one plane:port per rail")
        return rail

    def lane(self, rail: int) -> tuple[str | None, int]:
        """(plane, port) of a rail."""
        return self.lanes[rail] if self.lanes else (None, rail + 1)


def _lane(text: object, planes: tuple, path: object) -> tuple[str, int]:
    plane, _, port = str(text).partition(":")
    if planes and plane not in planes or not port.isdigit() or int(port) < 1:
        raise ConfError(f"lane {text!r}", file=path, field="model.multirail.lanes",
                        fix="write plane:port with a plane of planes:, e.g. fattree2:1")
    return plane, int(port)


def shares(rail: MultiRail, src: np.ndarray, dst: np.ndarray, size: int | np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(message index, rail, bytes) of every part; the bytes of a message's parts sum to its
    size, so the policy moves traffic between rails and never creates or loses any."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    size = np.broadcast_to(np.asarray(size, dtype=np.int64), src.shape)
    idx = np.arange(src.size, dtype=np.int64)
    if rail.policy == "single" or rail.rails == 1:
        return idx, np.zeros_like(idx), size.copy()
    pinned = dst % rail.rails
    if rail.policy == "round_robin":
        return idx, pinned, size.copy()
    big = size >= rail.stripe_threshold
    small_idx = idx[~big]
    big_idx = np.repeat(idx[big], rail.rails)
    big_rail = np.tile(np.arange(rail.rails, dtype=np.int64), int(big.sum()))
    # Equal parts; the remainder bytes go to the first rails so the sum stays exact.
    base, extra = np.divmod(size[big], rail.rails)
    big_bytes = np.repeat(base, rail.rails) + (big_rail < np.repeat(extra, rail.rails))
    order = np.argsort(np.concatenate([small_idx, big_idx]), kind="stable")
    return (np.concatenate([small_idx, big_idx])[order],
            np.concatenate([pinned[~big], big_rail])[order],
            np.concatenate([size[~big], big_bytes])[order])
