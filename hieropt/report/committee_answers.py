"""The committee page of a procurement answer: an instance solved for the alternatives a committee
weighs, each a certified optimum (:func:`hieropt.solvers.objectives.solve`):

- ``fastest``: the least iteration time, the design ``hieropt solve`` prints (the performance
  optimum of :func:`~hieropt.solvers.objectives.solve_fastest_cheapest`);
- ``knee``: the cheapest network within ``within`` of that time (objective ``min_cost`` with the
  time target (1 + within) x the proven lower bound on the fastest time,
  :func:`hieropt.studies.knee.knee_of`, the knee ``hieropt solve`` prints);
- ``min_run_cost``: the least $ per training run (needs the instance's ``[cluster]`` cost rate);
- ``performance_per_cost``: the least iteration time x network cost;
- ``cheapest``: the fastest design at the cheapest network's cost (the Pareto front's first point);
- ``catalog``: with a parts catalog, the fastest design in whole parts
  (:func:`~hieropt.solvers.provision. provision`), its bill of materials' cost and power.

The instance fixes its training plan, so every alternative is a LIBRA-style fixed plan (the network
optimised for one plan); the page says so instead of showing a separate fixed-plan column.
"""

from __future__ import annotations

from typing import Any

from ..errors import HieroptError
from ..model.run import run_figures
from ..spec import Instance
from ..studies.knee import knee_of
from ..units import objective_unit
from .committee import (
    Alternative,
    Committee,
    Missing,
    non_dominated,
    ordered,
    pareto_data,
    practical,
    practical_limit,
    practical_note,
    recommend,
    slowdown_words,
    subject_lines,
    unknown_lines,
)
from .run import calibration_note, instance_calibration

PLAN_FACTORS = ("tp", "cp", "pp", "dp")
"""The groups whose sizes multiply to a plan's NPUs (TP x CP x PP x DP); ``ep`` and ``edp`` split
DP, and ``dpc`` = dp x cp is derived."""


def plan_text(instance: Instance) -> str:
    """The training plan of ``instance``, named after its model: its true factors and their product
    (``llama3-405b: TP 8 x PP 16 x DP 128 = 16,384 NPUs``, with ``(EP 8 x expert-DP 16)`` for
    experts), else its other named groups' sizes, else the sizes of the forward and weight-gradient
    groups, with the workload's name."""
    return f"{workload_name(instance)}: {_plan_sizes(instance)}"


def workload_name(instance: Instance) -> str:
    """The primary workload's name: its LLM model's, else the workload file's."""
    training = instance.workload.training
    return training.model if training is not None and training.model else instance.workload.name


def weight_words(instance: Instance, w: int) -> str:
    """Workload ``w``'s weight as the input gives it: ``60 % of the hours`` for shares of hours
    (``hours_share``, normalised), else ``weight 0.466555``."""
    job = instance.jobs[w]
    if instance.weights == "hours":
        return f"{job.weight * 100:.4g} % of the hours"
    return f"weight {job.weight:.6g}"


def workloads_text(instance: Instance) -> str:
    """Every workload of ``instance`` with its weight (:func:`weight_words`), joined by `` + ``
    (``gpt3-175b (weight 0.466555) + dlrm (weight 3263)``); the workload's name alone for one."""
    from ..solvers.portfolio import single_job

    if len(instance.jobs) == 1:
        return workload_name(instance)
    return " + ".join(f"{workload_name(single_job(instance, w))} ({weight_words(instance, w)})"
                      for w in range(len(instance.jobs)))


def plans_text(instance: Instance) -> str:
    """The training plan of every workload (:func:`plan_text`), each with its weight
    (:func:`weight_words`) when several share the fabric, joined by ``; ``."""
    from ..solvers.portfolio import single_job

    if len(instance.jobs) == 1:
        return plan_text(instance)
    jobs = (single_job(instance, w) for w in range(len(instance.jobs)))
    return "; ".join(f"{workload_name(j)} ({weight_words(instance, w)}): {_plan_sizes(j)}"
                     for w, j in enumerate(jobs))


def _plan_sizes(instance: Instance) -> str:
    """The sizes of :func:`plan_text` (the part after the workload's name)."""
    from math import prod

    m = instance.mapping
    groups = {g: prod(s) for g, s in (m.groups or {}).items()}
    factors = {g: groups[g] for g in PLAN_FACTORS if groups.get(g, 1) > 1}
    others = {g: n for g, n in groups.items() if g not in ("edp", "dpc") and n > 1}
    if factors:
        sizes = " x ".join(f"{g.upper()} {n:,}" for g, n in factors.items())
        sizes += f" = {prod(factors.values()):,} NPUs"
        if groups.get("ep", 1) > 1:
            sizes += f" (EP {groups['ep']:,} x expert-DP {groups.get('edp', 1):,})"
    elif others:
        sizes = " x ".join(f"{g} {n:,}" for g, n in others.items())
    else:
        sizes = (f"forward groups {prod(m.forward):,}, weight-gradient groups "
                 f"{prod(m.weight_grad):,}")
    return sizes


def fabric_text(instance: Instance, bw_gbps: Any) -> str:
    """Each dimension's block, size, cost class and GB/s per NPU, innermost first, e.g. ``Switch 72
    (NVLink) 900 GB/s x Switch 32 (ScaleOut) 150 GB/s``."""
    return " x ".join(f"{d.block} {d.npus} ({d.cost_class}) {float(b):,.4g} GB/s"
                      for d, b in zip(instance.network.dims, bw_gbps, strict=True))


def alternative(
    instance: Instance,
    key: str,
    label: str,
    how: str,
    bw: Any,
    time_ns: float,
    cost_usd: float,
    power_w: float | None = None,
) -> Alternative:
    """The :class:`Alternative` of a design of ``instance`` (bandwidths GB/s per NPU, time ns or the
    hour-weighted ratio of workloads weighted by shares of hours, cost $)."""
    bw = tuple(float(b) for b in bw)
    return Alternative(key, label, how, plan_text(instance), fabric_text(instance, bw),
                       instance.network.npus_total, bw, float(time_ns), float(cost_usd),
                       run_figures(instance, time_ns, cost_usd), power_w,
                       objective_unit("performance", instance.relative_time))


WHAT = {"fastest": "the least iteration time (the performance optimum hieropt solve prints)",
        "knee": "the cheapest network with an iteration time within the slack of the fastest",
        "min_run_cost": "the least $ per training run (run time x the cluster's cost rate)",
        "performance_per_cost": "the least iteration time x network capex"}


def _solved(instance: Instance, key: str, label: str, sol: Any) -> Alternative:
    return alternative(
        instance,
        key,
        label,
        f"{WHAT[key]}; {sol.method}",
        sol.bw_gbps,
        sol.iteration_time_ns,
        sol.network_cost_usd,
    )


def procurement_alternatives(
    instance: Instance,
    front: Any | None,
    within: float,
    catalog: Any | None = None,
    time_limit_s: float = 60.0,
) -> tuple[list[Alternative], list[Missing]]:
    """The alternatives of the module docstring and those the instance cannot give (with the
    solver's reason).

    Args:
        instance: the problem; front: its Pareto front (:func:`hieropt.solvers.front.pareto`) or
            None.
        within: the knee's slack, a fraction in (0, 1).
        catalog: a parts catalog (path or :class:`~hieropt.model.catalog.Catalog`) or None.

    An alternative whose solve fails (no fastest design without an upper limit on bandwidth, no cost
    rate for ``min_run_cost``, ...) is Missing, with the solver's one-line reason.
    """
    from ..solvers.objectives import SolveOptions, solve, solve_fastest_cheapest
    from ..solvers.portfolio import hours_weighted

    given = instance
    instance, _ = hours_weighted(instance, time_limit_s)  # (as solve: shares of hours -> weights)
    alts: list[Alternative] = []
    missing: list[Missing] = []
    pct = f"{within * 100:g} %"

    def attempt(key: str, label: str, objective: str, **kw: Any) -> None:
        try:
            options = SolveOptions(time_limit_s=time_limit_s, **kw)
            sol = solve(instance, objective, options=options).raise_for_status()
            alts.append(_solved(instance, key, label, sol))
        except HieroptError as e:
            missing.append(Missing(key, label, str(e)))

    try:
        fast, cheap = solve_fastest_cheapest(instance, time_limit_s)
    except HieroptError as e:  # e.g. no upper limit on bandwidth: no fastest design, no knee
        missing += [
            Missing("fastest", "fastest", str(e)),
            Missing(
                "knee",
                f"knee (cheapest within {pct})",
                "no fastest design to be within " + pct + " of",
            ),
        ]
    else:
        alts.append(_solved(instance, "fastest", "fastest", fast))  # (the design solve prints)
        try:
            k = knee_of(instance, fast, cheap, within, time_limit_s)
            alts.append(_solved(instance, "knee", f"knee (cheapest within {pct})", k.knee))
        except HieroptError as e:
            missing.append(Missing("knee", f"knee (cheapest within {pct})", str(e)))
    attempt("min_run_cost", "least $ per run", "min_run_cost")
    if front is not None and front.best_per_cost is not None:
        alts.append(
            _solved(
                instance, "performance_per_cost", "performance per network $", front.best_per_cost
            )
        )
    else:
        attempt("performance_per_cost", "performance per network $", "performance_per_cost")
    if front is not None and front.points:
        p = front.points[0]
        alts.append(
            alternative(
                instance,
                "cheapest",
                "cheapest network",
                "the fastest design at the cheapest "
                "network's cost (the Pareto front's first point)",
                p.bw,
                p.iteration_time_ns,
                p.network_cost_usd,
            )
        )
    else:
        missing.append(Missing("cheapest", "cheapest network", "no Pareto front"))
    if catalog is not None:
        alts += _catalog(instance, catalog, missing, time_limit_s)
    return with_workloads(given, instance, alts, time_limit_s), missing


def with_workloads(given: Instance, instance: Instance, alts: list[Alternative],
                   time_limit_s: float = 60.0) -> list[Alternative]:
    """``alts`` with every workload of a multi-workload ``instance`` (its weights resolved,
    :func:`hieropt.solvers.portfolio.hours_weighted`): the plan of each, with its weight as
    ``given`` (:func:`plans_text`), and each workload's time at the design against its own optimum
    (:func:`hieropt.solvers.portfolio.portfolio_of`, the table ``hieropt solve`` prints; the own
    optima solved once, as solve solves them: without the budget for shares of hours); ``alts``
    unchanged for one workload."""
    from dataclasses import replace

    import numpy as np

    from ..solvers.cutting import REL_GAP
    from ..solvers.portfolio import own_optima, portfolio_of

    if len(instance.jobs) == 1 or not alts:
        return alts
    within = not instance.relative_time  # (as solve: the optima of shares of hours, no budget)
    optima = own_optima(instance, REL_GAP, time_limit_s, within_budget=within)
    plans = plans_text(given)
    return [replace(a, plan=plans, portfolio=portfolio_of(instance, np.asarray(a.bw_gbps), optima,
                                                          within_budget=within))
            for a in alts]


def _catalog(
    instance: Instance, catalog: Any, missing: list[Missing], time_limit_s: float
) -> list[Alternative]:
    from ..solvers.provision import provision

    label = "fastest in whole parts"
    try:
        p = provision(
            instance, catalog, objective="performance", compare=False, time_limit_s=time_limit_s
        )
    except HieroptError as e:
        missing.append(Missing("catalog", label, str(e)))
        return []
    how = f"catalog {p.catalog}: {p.method} (bill of materials' cost and power)"
    return [
        alternative(
            instance,
            "catalog",
            label,
            how,
            p.bw_gbps,
            p.iteration_time_ns,
            p.network_cost_usd,
            p.power_w,
        )
    ]


WORKLOADS_NOTE = (
    "several workloads share the fabric: each design's iteration time is their weighted "
    "objective (sum of weight x time; for shares of hours the hour-weighted ratio), and the "
    "portfolio table gives each workload's own iteration time at "
    "each design (the independent evaluator), its ratio to its own optimum (its fastest network "
    "under the same constraints and budget; for shares of hours whatever the budget) and to its "
    "time at the fastest design, as hieropt "
    "solve's portfolio table")
"""The page's note on a portfolio of workloads."""


def procurement_committee(
    instance: Instance,
    front: Any | None,
    within: float = 0.01,
    catalog: Any | None = None,
    time_limit_s: float = 60.0,
) -> Committee:
    """The :class:`~hieropt.report.committee.Committee` of ``instance`` (module docstring), its
    Pareto plot from ``front``'s points (each mapped to days and $ per run when they are known).

    Raises:
        NoSolutionError: no alternative could be solved (the first one's reason).
    """
    alts, missing = procurement_alternatives(instance, front, within, catalog, time_limit_s)
    if not alts:
        from ..errors import NoSolutionError

        raise NoSolutionError("infeasible", f"no design to recommend: {missing[0].why}")
    alts_t = ordered(alts)
    key, why = recommend(list(alts_t), within)
    cap = instance.max_iteration_time_ns
    alts_t, dropped = practical(alts_t, key, cap)
    missing += dropped
    fastest = next((a for a in alts_t if a.key == "fastest"), None)
    words = slowdown_words(next(a for a in alts_t if a.key == key), fastest)
    why = why if words is None else f"{why}; {words}"
    limit = practical_limit(alts_t, cap)
    points = front.points if front is not None else ()
    designs = [(p.iteration_time_ns, p.network_cost_usd, run_figures(instance, p.iteration_time_ns,
                                                                     p.network_cost_usd))
               for p in points if limit is None or p.iteration_time_ns <= limit]
    source = f"the exact time-cost Pareto front ({len(points)} budgets)"
    if len(designs) < len(points):
        source += (f"; {len(points) - len(designs)} of its designs, beyond the practical limit, "
                   "left out")
    pareto = pareto_data(designs, alts_t, source)
    tr = instance.workload.training
    notes = [
        "every alternative is a certified optimum of its objective, re-checked by the "
        "independent evaluator",
        "the instance fixes the training plan: every alternative is the network for that "
        "plan (as LIBRA "
        "designs it); a co-design result shows the plan chosen with the network",
        practical_note(cap),
    ]
    if len(instance.jobs) > 1:
        notes.append(WORKLOADS_NOTE)
    note = calibration_note(instance_calibration(instance))
    if note is not None and tr is not None:
        notes.append(note)
    if pareto is not None and pareto.axes == "run":
        on_front = non_dominated([(f.time_to_train_days, f.run_cost_usd) for *_, f in designs])
        notes.append(
            f"{len(on_front)} of the {len(designs)} front points are on the $ per run vs days front"
        )
    return Committee(
        "procurement",
        instance.name,
        subject_lines(
            workloads_text(instance) if len(instance.jobs) > 1 else
            (tr.model if tr else instance.workload.name),
            instance.network.npus_total,
            instance.tokens,
            instance.objective,
        ),
        key,
        why,
        alts_t,
        tuple(missing),
        within,
        pareto,
        unknown_lines(alts_t),
        tuple(notes),
    )


__all__ = [
    "procurement_committee",
    "procurement_alternatives",
    "plan_text",
    "plans_text",
    "workloads_text",
    "workload_name",
    "weight_words",
    "with_workloads",
    "fabric_text",
    "alternative",
]
