"""How MPI spreads one rank's traffic over its rails or planes (docs/modelling.md#multirail).

A host with several HCA ports (XGFT w1 = 2 in one plane) or one HCA in each of several planes
has several *rails*. The policy is conf data (``model: multirail:`` of a system conf):

- ``single`` (default): every message on rail 0, the behaviour of every conf before rails;
- ``round_robin``: each peer pinned to one rail, peers dealt out in turn (rail = dst mod n);
- ``stripe``: like round_robin below ``stripe_threshold`` bytes; at or above it a message is
  cut into equal parts, one per rail (UCX's multi-rail bandwidth lanes behave this way).

:func:`shares` turns a message list into (message, rail, bytes) parts; the flow model then
routes each part on its rail's plane.
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

    @classmethod
    def from_conf(cls, model: dict | None, path: object = None) -> "MultiRail":
        spec = (model or {}).get("multirail") or {}
        rail = cls(spec.get("policy", "single"), spec.get("rails", 1),
                   spec.get("stripe_threshold", DEFAULT_THRESHOLD))
        if rail.policy != "single" and rail.rails < 2:
            raise ConfError(f"policy {rail.policy} with one rail", file=path,
                            field="model.multirail.rails",
                            fix="set rails: 2 (or more), or policy: single")
        return rail


def shares(rail: MultiRail, src: np.ndarray, dst: np.ndarray, size: np.ndarray
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
