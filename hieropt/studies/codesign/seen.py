"""The ids of a co-design search's rows read back from a results file (:class:`Seen`) and the
refusal of a space without a plan that fits (:func:`no_plan`), for
:mod:`hieropt.studies.codesign.search`."""

from __future__ import annotations

import hashlib

import numpy as np

from ...errors import InputError, NoSolutionError
from ...workloads.llm.space import CodesignSpace, PlanChoices
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
        reasons, sized = invalid_reasons(plans.invalid)
        batch = space.base.plan.global_batch_size
        fix = (f"give a cluster size (npus, --sizes) that tp x pp of the choices divides and "
               f"whose dp = npus / (tp x cp x pp) divides the global batch of {batch:,} sequences "
               "(with the micro-batch), or widen the plan choices") if sized \
            else "widen the plan choices"
        raise InputError(
            space.name,
            "plans",
            f"none of the {plans.combinations} plan combinations is valid for "
            f"the model ({reasons})",
            # (a reason of the model's: widening the choices alone cannot help)
            "; or ".join((*model, *([fix] if sized else []))) if (model := model_fixes(
                plans.invalid)) else fix,
        )
    avail = space.base.npu.hbm_gib - space.base.npu.hbm_reserve_gib
    raise NoSolutionError(
        "infeasible",
        f"no plan fits: the smallest needs {need / 1e9:,.2f} GB per NPU, "
        f"{avail * 2**30 / 1e9:,.2f} GB are available (HBM less reserve); allow more sharding, "
        "recompute or pipeline stages, or more HBM",
    )


MODEL_FIXES = {
    "plan.cp: context parallelism is modelled for dense models only": (
        "drop context parallelism (cp = 1: the space's set = [\"cp=1\"] or the model file's "
        "plan) or use a dense model; the plan choices do not vary cp, so widening them cannot help"
    ),
}
"""The fixes of reasons no plan choice can change, by the reason's start."""


def model_fixes(invalid: dict[str, int]) -> list[str]:
    """The fixes of the reasons in ``invalid`` (reason -> combinations) that lie with the model
    file's plan or architecture, not with the plan choices (:data:`MODEL_FIXES`; any other field the
    choices do not vary: change it in the model file or the space's ``set``), once each: a space
    none of whose plans is valid gets them instead of "widen the plan choices"."""
    fixes: dict[str, None] = {}
    for reason in invalid:
        known = [fix for start, fix in MODEL_FIXES.items() if reason.startswith(start)]
        field = reason.split(": ", 1)[0]
        if known:
            fixes.update(dict.fromkeys(known))
        elif (field.startswith("plan.") and field not in SIZE_FIELDS
              and field.removeprefix("plan.") not in PlanChoices.model_fields):
            fixes[f"change {field} in the model file's plan or the space's set (the plan "
                  "choices do not vary it)"] = None
    return list(fixes)


SIZE_FIELDS = ("plan.npus", "plan.global_batch_size")
"""The reasons a plan is invalid on one cluster size and valid on another: its tp x pp does not
divide the NPUs, or its dp (the NPUs over tp x cp x pp) times the micro-batch does not divide the
global batch."""


def invalid_reasons(invalid: dict[str, int], most: int = 3) -> tuple[str, bool]:
    """The ``most`` commonest reasons of ``invalid`` (reason -> combinations, :class:`~hieropt.
    studies.codesign.plans.PlanEnumeration`'s), grouped by the field each names (its text before
    the first ``": "``; the example shown is the field's commonest reason), the cluster size's
    own (:data:`SIZE_FIELDS`) first, as ``"reason (n combinations like it)"`` joined by commas;
    and whether a size field is among them."""
    total: dict[str, int] = {}
    example: dict[str, tuple[int, str]] = {}
    for reason, n in invalid.items():
        field = reason.split(": ", 1)[0]
        total[field] = total.get(field, 0) + n
        if n > example.get(field, (0, ""))[0]:
            example[field] = (n, reason)
    order = sorted(total, key=lambda f: (f not in SIZE_FIELDS, -total[f], f))[:most]
    text = ", ".join(
        f"{example[f][1]} ({total[f]:,} combination{'s' if total[f] > 1 else ''}"
        f"{' like it' if total[f] > example[f][0] else ''})" for f in order)
    return text, any(f in SIZE_FIELDS for f in order)


__all__ = ["Seen", "no_plan", "invalid_reasons", "model_fixes", "MODEL_FIXES", "SIZE_FIELDS"]
