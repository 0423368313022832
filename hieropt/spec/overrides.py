"""Objective and target overrides of a spec model (one home for :func:`hieropt.solve` and ``hieropt
explore``)."""

from __future__ import annotations

import math
import numbers
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

from ..errors import InputError, number_problem
from ..names import OBJECTIVES, with_flag
from .base import check_max_regret

M = TypeVar("M", bound=BaseModel)


def with_targets(
    model: M,
    objective: str | None,
    max_iteration_time_ns: float | None,
    max_network_cost_usd: float | None,
    flag_prefix: str = "",
    max_regret: float | None = None,
) -> M:
    """``model`` (an :class:`~hieropt.spec.Instance` or a :class:`~hieropt.spec.space.ShapeSpace`)
    with the given objective, iteration-time target (ns), budget ($) and (instances) regret bound
    replacing its own; None keeps the model's value.

    Raises:
        InputError: an unknown objective, a target or budget that is not a finite number > 0, a
            regret bound outside [0, 1) (a fraction: 0.08 = 8 %), or objective min_cost without a
            time target. Fields are named with ``flag_prefix`` (``"--"`` for command-line flags).
    """
    update = {
        k: v
        for k, v in (
            ("objective", objective),
            ("max_iteration_time_ns", max_iteration_time_ns),
            ("max_network_cost_usd", max_network_cost_usd),
            ("max_regret", max_regret),
        )
        if v is not None and getattr(model, k, None) != v
    }
    # nothing changes (values equal to the model's were validated with it): the model itself,
    # unless it asks for min cost without a target (a copy that dropped its regret bound)
    if not update:
        return _with_min_cost_target(model)
    if objective is not None and objective not in OBJECTIVES:
        raise InputError(f"{flag_prefix}objective", None, f"unknown objective {objective!r}",
                         f"use one of {', '.join(OBJECTIVES)}")
    for k in ("max_iteration_time_ns", "max_network_cost_usd"):
        v = update.get(k)
        if v is not None and not is_real(v):
            raise InputError(
                f"{flag_prefix}{k}", None, f"{v!r} is not a number", "give a finite value > 0"
            )
        if v is not None and not (math.isfinite(v) and v > 0):
            raise InputError(
                f"{flag_prefix}{k}", None, number_problem(v), "give a finite value > 0"
            )
    if max_regret is not None and (why := check_max_regret(max_regret)) is not None:
        problem, fix = why.split("; fix: ")
        raise InputError(f"{flag_prefix}max_regret", None, problem, fix)
    out = model.model_copy(update=update)
    regret = getattr(out, "max_regret", None)
    if regret is not None and out.objective != "min_cost":
        if max_regret is None:  # (the instance's own bound: its field, not a flag)
            raise InputError("instance", "max_regret", f"the instance's max_regret {regret:g} "
                             f"bounds objective min_cost only (asked: {out.objective})",
                             "remove max_regret from the instance, or ask for min_cost")
        raise InputError(
            f"{flag_prefix}max_regret",
            None,
            f"only objective min_cost takes it (got {out.objective})",
            "ask for objective min_cost with it (--objective min_cost --max-regret on the "
            "command line)",
        )
    if regret is not None and out.max_iteration_time_ns is not None:
        _refuse_regret_and_target(out, max_regret is not None, flag_prefix)
    return _with_min_cost_target(out)


def _refuse_regret_and_target(out, regret_given: bool, flag_prefix: str) -> None:
    """Refuse min_cost with both a regret bound and a time target (``regret_given``: the regret
    bound is an argument, else the instance's): the cheapest network within the regret bound is
    solved on the portfolio model, which has no row on the weighted iteration time.

    Raises:
        InputError: always, naming the regret bound's argument (or the instance's field) and the
            time target's.
    """
    regret = (f"max_regret {out.max_regret:g}" if regret_given
              else f"the instance's max_regret {out.max_regret:g}")
    source = f"{flag_prefix}max_regret" if regret_given else f"{flag_prefix}max_iteration_time_ns"
    raise InputError(
        source, None,
        f"{regret} and the time target {with_flag('max_iteration_time_ns')} "
        f"{out.max_iteration_time_ns:,.0f} ns together: the cheapest network within a regret "
        "bound bounds each workload against its own optimum and takes no time target",
        f"drop the time target {with_flag('max_iteration_time_ns')} for the cheapest network "
        f"within the regret, or the regret bound {with_flag('max_regret')} (or the instance's "
        "max_regret) for the cheapest network meeting the time target")


def _with_min_cost_target(out: M) -> M:
    """``out``, which asks for a time target or regret bound when its objective is min_cost.

    Raises:
        InputError: objective min_cost without either.
    """
    if (
        out.objective == "min_cost"
        and out.max_iteration_time_ns is None
        and getattr(out, "max_regret", None) is None
    ):
        # (only an instance has a regret bound: a shape or co-design space, and their commands, have
        # no --max-regret)
        regret = (", or a regret bound (max_regret, --max-regret)"
                  if "max_regret" in type(out).model_fields else "")
        raise InputError(
            "max_iteration_time_ns",
            None,
            "missing for objective min_cost",
            "give the iteration-time target (--max-time 1.3s, or max_iteration_time_ns in "
            f"ns){regret}",
        )
    return out


def is_real(v: object) -> bool:
    """Whether ``v`` is a real number (int, float or a numpy scalar of either; not a bool, not
    text). numpy's bool is no :class:`numbers.Real`; Python's is (a subclass of int), so it is
    refused by name."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def plain_number(value: object) -> object:
    """``value`` as a Python number when it is a numpy integer or float scalar (``np.int64(2e7)``
    -> ``20000000``), else unchanged: the library facade's one conversion of numpy scalars, so that
    the implementation (and the decimal arithmetic of its messages) sees the types it is written
    for."""
    if isinstance(value, np.integer | np.floating):
        return value.item()
    return value


def check_time_limit(time_limit_s: object, name: str = "time_limit_s") -> float:
    """``time_limit_s`` (s) as a float when it is a number > 0 (inf: no limit).

    Raises:
        InputError: not a number, NaN, or <= 0 (HiGHS would stop at once and the failure read as a
            solver's).
    """
    if not is_real(time_limit_s) or math.isnan(float(time_limit_s)) or float(time_limit_s) <= 0:
        raise InputError(name, None, f"{time_limit_s!r} is not a positive number of seconds",
                         "give a time limit per LP > 0 s (inf: none)")
    return float(time_limit_s)
