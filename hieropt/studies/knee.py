"""The knee of the time-cost trade-off: beside the fastest design, the cheapest design within
``within`` (1 % by default) of its time, and what the last ``within`` of speed costs.

The fastest answer is rarely the recommendation: on a fabric whose last GB/s are dear, giving up 1 %
of iteration time can save a large part of the network (a catalog's NVL72 design 1.9 % slower for 61
% less). The knee is two certified solves on one instance: the performance optimum T* (with its
cheapest design among equally fast ones, :func:`hieropt.solvers.objectives.solve_fastest_cheapest`)
and the min-cost optimum with the time target (1 + within) T*; for a parts catalog, the two integer
provisioning solves (:func:`hieropt.solvers.provision.provision`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..cache import scoped
from ..errors import InputError
from ..result import Solution
from ..solvers.objectives import SolveOptions, solve, solve_fastest_cheapest
from ..solvers.portfolio import hours_weighted
from ..solvers.procurement import FASTEST_SLACK, equally_fast
from ..spec import Instance
from ..units import usd_cents

WITHIN = 0.01
"""The default slack of the knee: the cheapest design within 1 % of the fastest time."""
EQUAL_TIME = FASTEST_SLACK
"""Designs whose times are within this relative slack of the fastest (and proven within the gap
target of the optimum: :func:`hieropt.solvers.procurement.tie_break_target_ns`, the one definition
the solve's tie-break and the Pareto front's fastest point use) are equally fast: the knee's
reference is the cheapest of them."""
MIN_WITHIN = EQUAL_TIME
"""The least slack of the knee (1e-8): the relative gap to which its solves prove the fastest time.
A knee within less of the fastest time is undecided (its time target lies within the fastest
time's optimality gap), so such a slack is refused (:func:`check_within`)."""


@dataclass(frozen=True)
class Knee:
    """The fastest design and the knee (times ns, costs $).

    Attributes:
        within: the slack (0.01 = 1 %).
        fastest_ns, fastest_usd: the fastest time and the cheapest network that reaches it.
        knee_ns, knee_usd: the cheapest design's time (<= (1 + within) x ``fastest_bound_ns``, so
            within ``within`` of the optimum whatever it is inside the proven gap) and cost.
        knee: the knee's solution (a :class:`~hieropt.result.Solution`, or a provisioning result).
        design_usd: the network cost of the fastest design printed beside the knee ($), when that
            design is not the cheapest of the equally fast ones (the optimum is often flat: many
            designs are as fast within the proven gap :data:`EQUAL_TIME`); None: it is.
        fastest_bound_ns: the proven lower bound on the fastest time (ns) the slack is measured
            from; None: ``fastest_ns`` (a catalog's integer optimum).
    """

    within: float
    fastest_ns: float
    fastest_usd: float
    knee_ns: float
    knee_usd: float
    knee: Any
    design_usd: float | None = None
    fastest_bound_ns: float | None = None

    @property
    def last_usd(self) -> float:
        """What the last ``within`` of speed costs: fastest cost - knee cost, $."""
        return self.fastest_usd - self.knee_usd

    def line(self) -> str:
        """One line: the knee against the fastest, e.g. "knee (cheapest within 1 % of the fastest):
        1.9 % slower, $36.3M instead of $94.1M: the last 1 % costs $57.9M (61 % of the network)".
        Costs that agree to the dollar are printed to the cent, rounded up (the budget that buys
        each design), with the saving as the difference of the printed figures. When they agree
        to the cent there is no knee: giving up speed saves nothing a buyer can spend, and the
        line says so (a budget that binds: a hair above the cheapest network every design within
        the slack costs the budget to a fraction of a cent; a catalog's designs may all cost the
        budget)."""
        pct = f"{self.within * 100:g} %"
        head = f"knee (the cheapest design within {pct} of the fastest time): "
        knee_usd, fastest_usd = (usd_cents(u, up=True) for u in (self.knee_usd, self.fastest_usd))
        if knee_usd == fastest_usd or self.last_usd <= 0:
            return head + (
                f"none: no design within {pct} of the fastest time costs a cent less than the "
                f"fastest (${fastest_usd}): buy the fastest"
            ) + self.reference_words()
        if round(self.knee_usd) == round(self.fastest_usd):
            saved = float(fastest_usd.replace(",", "")) - float(knee_usd.replace(",", ""))
            last_usd = f"${saved:,.2f}"
        else:
            knee_usd, fastest_usd, last_usd = (f"{u:,.0f}" for u in (
                self.knee_usd, self.fastest_usd, self.last_usd))
            last_usd = f"${last_usd}"
        slower = self.knee_ns / self.fastest_ns - 1
        slower_text = f"{slower:.2%}" if abs(slower) >= 5e-5 else f"{slower * 100:.2g}%"
        share = self.last_usd / self.fastest_usd if self.fastest_usd > 0 else 0.0
        share_text = f"{share:.1%}" if share >= 1e-3 else f"{share * 100:.1g} %"
        return (
            f"{head}{slower_text} slower, network ${knee_usd} instead of ${fastest_usd}: the last "
            f"{pct} of speed costs {last_usd} ({share_text} of the fastest network)"
        ) + self.reference_words()

    def reference_words(self) -> str:
        """"" when the printed fastest design is the knee's reference, else what the reference is:
        "; $13,659,960 is the cheapest of the designs as fast as the optimum (within 1e-08 of its
        time), $1,747 less than the fastest design printed ($13,661,707)"."""
        if self.design_usd is None or round(self.design_usd) == round(self.fastest_usd):
            return ""
        less = round(self.design_usd) - round(self.fastest_usd)  # (of the printed figures)
        return (
            f"; ${self.fastest_usd:,.0f} is the cheapest of the designs as fast as the optimum "
            f"({equally_fast('its time')}), ${less:,.0f} less than the fastest design "
            f"printed (${self.design_usd:,.0f})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (times ns, costs $)."""
        return {
            "within": self.within,
            "fastest_ns": self.fastest_ns,
            "fastest_usd": self.fastest_usd,
            "knee_ns": self.knee_ns,
            "knee_usd": self.knee_usd,
            "last_usd": self.last_usd,
            "knee_bw_gbps": [float(b) for b in self.knee.bw_gbps],
            "design_usd": self.design_usd,
            "fastest_bound_ns": self.fastest_bound_ns,
            "equal_time_rel": EQUAL_TIME,
        }


def check_within(within: float) -> float:
    """``within`` if it is a fraction in [:data:`MIN_WITHIN`, 1); InputError otherwise (1 for 1 %
    is the common slip; a slack below the fastest time's proven gap makes the knee undecided)."""
    if not 0 < within < 1:
        raise InputError("within", None, f"{within:g} is not a fraction in (0, 1)",
                         "give the slack as a fraction, e.g. 0.01 for 1 % (not 1)")
    if within < MIN_WITHIN:
        raise InputError(
            "within", None,
            f"{within:g} is below {MIN_WITHIN:g}, the relative gap to which the fastest time is "
            "proven: the knee within it is undecided",
            f"give a slack of at least {MIN_WITHIN:g} (or 0 to turn the knee off)")
    return within


@scoped
def knee(instance: Instance, within: float = WITHIN, time_limit_s: float = 60.0,
         design_usd: float | None = None) -> Knee:
    """The knee of ``instance`` (module docstring): its fastest design under its constraints and
    budget, and the cheapest within ``within`` of that time. The fastest cost is the cheapest of the
    designs within :data:`EQUAL_TIME` of the fastest time; ``design_usd`` ($) is the cost of the
    fastest design shown beside the knee (None: the performance solve's), named in the knee's line
    when it differs.

    Raises:
        InputError: ``within`` not in (0, 1).
        NoSolutionError, SolverError: as :func:`hieropt.solvers.objectives.solve`.
    """
    check_within(within)
    instance, _ = hours_weighted(instance, time_limit_s)  # (as solve: shares of hours -> weights)
    fast, cheap = solve_fastest_cheapest(instance, time_limit_s)
    return knee_of(instance, fast, cheap, within, time_limit_s, design_usd)


def knee_of(instance: Instance, fast: Solution, cheap: Solution | str, within: float = WITHIN,
            time_limit_s: float = 60.0, design_usd: float | None = None) -> Knee:
    """The knee of ``instance`` from :func:`~hieropt.solvers.objectives.solve_fastest_cheapest`'s
    answers: ``fast`` the performance optimum at the cheapest of the equally fast designs (its
    time and proven lower bound, ns; its cost, $, the knee's reference), ``cheap`` the tie-break's
    min-cost answer or the reason it failed (``fast`` then holds the optimum's own design).
    ``design_usd`` ($): as :func:`knee`.

    Raises:
        as :func:`knee_after`.
    """
    fastest_usd = fast.network_cost_usd  # (the tie-break's design when it is cheaper)
    bound = fast.lower_bound_ns if fast.lower_bound_ns is not None else fast.objective_bound
    k = knee_after(instance, fast.iteration_time_ns, fastest_usd, within, time_limit_s, bound)
    shown = fast.network_cost_usd if design_usd is None else design_usd
    return replace(k, design_usd=shown)


def knee_after(instance: Instance, fastest_ns: float, fastest_usd: float, within: float = WITHIN,
               time_limit_s: float = 60.0, bound_ns: float | None = None) -> Knee:
    """The knee of ``instance`` once its fastest time ``fastest_ns`` (ns), the proven lower bound
    on it ``bound_ns`` (ns; None: ``fastest_ns``) and that design's network cost ``fastest_usd``
    ($) are known: one certified ``min_cost`` solve with the target (1 + ``within``) x
    ``bound_ns``. Measured from the bound, the knee's time is within ``within`` of the optimum
    wherever the optimum lies inside the proven gap, and never above (1 + ``within``) x the
    fastest time printed; and never above the instance's time target when it has one.

    Raises:
        InputError: ``within`` not in (0, 1).
        NoSolutionError: the min-cost solve has no design (:meth:`hieropt.result.Solution.
            raise_for_status`).
        SolverError: as :func:`hieropt.solvers.objectives.solve`.
    """
    check_within(within)
    instance, _ = hours_weighted(instance, time_limit_s)  # (as solve: shares of hours -> weights)
    target = (fastest_ns if bound_ns is None else min(bound_ns, fastest_ns)) * (1 + within)
    if instance.max_iteration_time_ns is not None:  # (the buyer's time target holds the knee too)
        target = max(min(target, instance.max_iteration_time_ns), fastest_ns)
    options = SolveOptions(max_iteration_time_ns=target, time_limit_s=time_limit_s)
    sol = solve(instance, "min_cost", options=options).raise_for_status()
    return Knee(within, fastest_ns, fastest_usd, sol.iteration_time_ns, sol.network_cost_usd, sol,
                fastest_bound_ns=bound_ns)


def provision_knee(instance: Instance, catalog: Any, fastest: Any, within: float = WITHIN) -> Knee:
    """The knee of a provisioning answer: ``fastest`` (the catalog's fastest design, a
    :class:`~hieropt.solvers.provision.Provisioning`) and the catalog's cheapest design within
    ``within`` of its time (one integer min-cost solve)."""
    from ..solvers.provision import provision

    check_within(within)
    target = fastest.iteration_time_ns * (1 + within)
    p = provision(
        instance, catalog, objective="min_cost", max_iteration_time_ns=target, compare=False
    )
    return Knee(within, fastest.iteration_time_ns, fastest.network_cost_usd, p.iteration_time_ns,
                p.network_cost_usd, p)


__all__ = ["EQUAL_TIME", "knee_after", "knee_of", "Knee", "knee", "provision_knee",
           "check_within", "WITHIN", "MIN_WITHIN"]
