"""The ids of a co-design search's rows read back from a results file (:class:`Seen`) and the
refusal of a space without a plan that fits (:func:`no_plan`), for
:mod:`hieropt.studies.codesign.search`."""

from __future__ import annotations

import hashlib

import numpy as np

from ...errors import InputError, NoSolutionError
from ...workloads.llm.space import CodesignSpace
from .candidates import CodesignEnumeration


class Seen:
    """The ids of rows read back from a results file, as 64-bit hashes (8 bytes each, sorted; a
    collision, about n^2 / 2^65, would only skip one candidate's solve)."""

    def __init__(self, ids):
        self.keys = (
            np.unique(np.frombuffer(ids, dtype=np.uint64))
            if len(ids)
            else np.zeros(0, dtype=np.uint64)
        )

    @staticmethod
    def key(cid: str) -> int:
        """The hash of an id."""
        return int.from_bytes(hashlib.blake2b(cid.encode(), digest_size=8).digest(), "little")

    def __contains__(self, cid: str) -> bool:
        if not len(self.keys):
            return False
        k = np.uint64(self.key(cid))
        i = int(np.searchsorted(self.keys, k))
        return i < len(self.keys) and self.keys[i] == k


def no_plan(space: CodesignSpace, enum: CodesignEnumeration) -> None:
    """Refuse a space none of whose plans fits in memory or is valid.

    Raises:
        InputError: no plan combination is valid for the model (the commonest reasons).
        NoSolutionError: (exit 3) no plan fits: the smallest need against the HBM less reserve.
    """
    plans = enum.plans
    if plans.fitting:
        return
    need = plans.smallest_need_bytes
    if need is None:
        reasons = ", ".join(
            f"{k} ({v})" for k, v in sorted(plans.invalid.items(), key=lambda kv: -kv[1])[:3]
        )
        raise InputError(
            space.name,
            "plans",
            f"none of the {plans.combinations} plan combinations is valid for "
            f"the model ({reasons})",
            "widen the plan choices",
        )
    avail = space.base.npu.hbm_gib - space.base.npu.hbm_reserve_gib
    raise NoSolutionError(
        "infeasible",
        f"no plan fits: the smallest needs {need / 1e9:,.2f} GB per NPU, "
        f"{avail * 2**30 / 1e9:,.2f} GB are available (HBM less reserve); allow more sharding, "
        "recompute or pipeline stages, or more HBM",
    )


__all__ = ["Seen", "no_plan"]
