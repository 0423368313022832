"""The committee page of a procurement answer: an instance solved for the alternatives a committee
weighs, each a certified optimum (:func:`hieropt.solvers.objectives.solve`):

- ``fastest``: the least iteration time, the design ``hieropt solve`` prints (the performance
  optimum of :func:`~hieropt.solvers.objectives.solve_fastest_cheapest`);
- ``knee``: the cheapest network within ``within`` of that time (objective ``min_cost`` with the
  time target (1 + within) x the proven lower bound on the fastest time,
  :func:`hieropt.studies.knee.knee_of`, the knee ``hieropt solve`` prints);
- ``min_run_cost``: the least $ per training run (needs the instance's ``[cluster]`` cost rate);
- ``performance_per_cost``: the least iteration time x network cost;
- ``min_cost``: the cheapest network meeting the iteration-time target (when the objective asked is
  ``min_cost``, or the instance has an iteration-time cap in ns);
- ``cheapest``: the fastest design at the cheapest network's cost (the Pareto front's first point);
- ``catalog``: with a parts catalog, the fastest design in whole parts
  (:func:`~hieropt.solvers.provision.provision`), its bill of materials' cost and power.

Each is solved under the instance's targets (its iteration-time cap and network budget, e.g. from
``--max-time`` and ``--budget``), and its label names its objective and those targets
(:func:`hieropt.report.committee_asked.titled`). The objective asked (``--objective``, else the
instance's) is answered by the column of :data:`hieropt.report.committee_asked.ANSWERS`, the design
``hieropt solve`` gives with the same objective and targets; asked with ``--objective``, it is the
recommendation.

The instance fixes its training plan, so every alternative is a LIBRA-style fixed plan (the network
optimised for one plan); the page says so instead of showing a separate fixed-plan column.
"""

from __future__ import annotations

from typing import Any

from ..errors import HieroptError
from ..model.run import provisioned_run, run_figures
from ..spec import Instance
from ..studies.knee import knee_of
from ..units import objective_unit
from .committee import (
    Alternative,
    Committee,
    Missing,
    caveat_notes,
    non_dominated,
    ordered,
    pareto_data,
    practical,
    practical_limit,
    practical_note,
    slowdown_words,
    subject_lines,
    unknown_lines,
)
from .committee_asked import ANSWERS, Asked, asked_lines, titled
from .committee_basis import basis_lines, priced_labels, recommend
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
    objective: str | None = None,
    max_time_ns: float | None = None,
    budget_usd: float | None = None,
    gap: float | None = None,
    catalog: bool = False,
    status: str | None = None,
) -> Alternative:
    """The :class:`Alternative` of a design of ``instance`` (bandwidths GB/s per NPU, time ns or the
    hour-weighted ratio of workloads weighted by shares of hours, cost $), the optimum of
    ``objective`` under the targets ``max_time_ns`` (same unit as the time) and ``budget_usd``
    ($), proven within the relative ``gap`` of it (None: unknown).

    Its buyer's figures: :func:`hieropt.model.run.run_figures`; for a design in a catalog's whole
    parts (``catalog``) those ``hieropt provision`` gives
    (:func:`hieropt.model.run.provisioned_run`: the bill of materials' cost and its power
    ``power_w``, W, in the MW, MWh, capex and $), its ``how`` followed by the line saying which
    network power they count."""
    bw = tuple(float(b) for b in bw)
    if catalog:
        run, power_line = provisioned_run(instance, time_ns, cost_usd, power_w, bw)
        how += "" if power_line is None else f"; {power_line}"
    else:
        run = run_figures(instance, time_ns, cost_usd, bw_gbps=bw)
    return Alternative(key, label, how, plan_text(instance), fabric_text(instance, bw),
                       instance.network.npus_total, bw, float(time_ns), float(cost_usd),
                       run, power_w,
                       time_unit(instance), objective=objective, max_time_ns=max_time_ns,
                       budget_usd=budget_usd, calibration=instance_calibration(instance), gap=gap,
                       status=status)


def time_unit(instance: Instance) -> str:
    """The unit of ``instance``'s iteration times on the page: ns, or the hour-weighted ratio of
    workloads weighted by shares of hours (:func:`hieropt.units.objective_unit`)."""
    return objective_unit("performance", instance.relative_time)


WHAT = {"fastest": "the least iteration time (the performance optimum hieropt solve prints)",
        "knee": "the cheapest network with an iteration time within the slack of the fastest",
        "min_run_cost": "the least $ per training run (run time x the cluster's cost rate)",
        "performance_per_cost": "the least iteration time x network capex",
        "min_cost": "the cheapest network meeting the iteration-time target (the min_cost "
                    "optimum hieropt solve prints)"}

NAMES = {"fastest": "fastest", "min_run_cost": "least $ per run",
         "performance_per_cost": "performance per network $",
         "min_cost": "cheapest network meeting the time target",
         "catalog": "fastest in whole parts"}
"""The name of each solved column, before the objective and targets of its label."""


def _solved(instance: Instance, key: str, label: str, sol: Any, objective: str,
            max_time_ns: float | None, budget_usd: float | None) -> Alternative:
    return alternative(
        instance,
        key,
        label,
        f"{WHAT[key]}; {sol.method}",
        sol.bw_gbps,
        sol.iteration_time_ns,
        sol.network_cost_usd,
        objective=objective,
        max_time_ns=max_time_ns,
        budget_usd=budget_usd,
        gap=sol.gap,
        status=sol.status.value,
    )


def procurement_alternatives(
    instance: Instance,
    front: Any | None,
    within: float,
    catalog: Any | None = None,
    time_limit_s: float = 60.0,
    objective: str | None = None,
) -> tuple[list[Alternative], list[Missing]]:
    """The alternatives of the module docstring and those the instance cannot give (with the
    solver's reason).

    Args:
        instance: the problem; front: its Pareto front (:func:`hieropt.solvers.front.pareto`) or
            None.
        within: the knee's slack, a fraction in [0, 1) (0: no knee).
        catalog: a parts catalog (path or :class:`~hieropt.model.catalog.Catalog`) or None.
        objective: the objective asked (None: the instance's); ``min_cost`` adds the cheapest
            network meeting the instance's time target even without a cap in ns.

    Each is solved under the instance's iteration-time cap and network budget, and labelled with
    its objective and those targets (:func:`~hieropt.report.committee_asked.titled`). An alternative
    whose solve fails (no fastest design without an upper limit on bandwidth, no cost rate for
    ``min_run_cost``, ...) is Missing, with the solver's one-line reason.
    """
    from ..solvers.objectives import recommended_options, solve, solve_fastest_cheapest
    from ..solvers.portfolio import hours_weighted

    given = instance
    instance, _ = hours_weighted(instance, time_limit_s)  # (as solve: shares of hours -> weights)
    alts: list[Alternative] = []
    missing: list[Missing] = []
    pct = f"{within * 100:g} %"
    cap, budget, unit = given.max_iteration_time_ns, given.max_network_cost_usd, time_unit(given)

    def label(key: str, objective: str | None, max_time: float | None = cap) -> str:
        return titled(NAMES.get(key, key), objective, max_time, budget, unit)

    def attempt(key: str, objective: str) -> None:
        try:
            options = recommended_options(time_limit_s=time_limit_s)
            sol = solve(instance, objective, options=options).raise_for_status()
            alts.append(_solved(instance, key, label(key, objective), sol, objective, cap, budget))
        except HieroptError as e:
            missing.append(Missing(key, label(key, objective), str(e)))

    knee_name = f"knee, cheapest within {pct}"
    try:
        fast, cheap = solve_fastest_cheapest(instance, time_limit_s)
    except HieroptError as e:  # e.g. no upper limit on bandwidth: no fastest design, no knee
        missing.append(Missing("fastest", label("fastest", "performance"), str(e)))
        if within > 0:
            missing.append(Missing("knee", titled(knee_name, "min_cost", None, budget, unit),
                                   "no fastest design to be within " + pct + " of"))
    else:
        # (the design solve prints)
        alts.append(_solved(instance, "fastest", label("fastest", "performance"), fast,
                            "performance", cap, budget))
    if within > 0 and any(a.key == "fastest" for a in alts):  # (within 0: the knee turned off)
        try:
            k = knee_of(instance, fast, cheap, within, time_limit_s)
            target = min(k.fastest_bound_ns or k.fastest_ns, k.fastest_ns) * (1 + within)
            alts.append(_solved(instance, "knee", titled(knee_name, "min_cost", target, budget,
                                                         unit), k.knee, "min_cost", target,
                                budget))
        except HieroptError as e:
            missing.append(Missing("knee", titled(knee_name, "min_cost", None, budget, unit),
                                   str(e)))
    attempt("min_run_cost", "min_run_cost")
    if cap is not None and ((objective or given.objective) == "min_cost"
                            or not given.relative_time):  # (min cost needs a time target)
        attempt("min_cost", "min_cost")
    if front is not None and front.best_per_cost is not None:
        alts.append(_solved(instance, "performance_per_cost",
                            label("performance_per_cost", "performance_per_cost"),
                            front.best_per_cost, "performance_per_cost", cap, budget))
    else:
        attempt("performance_per_cost", "performance_per_cost")
    if front is not None and front.points and cap is not None and any(
            a.key == "min_cost" for a in alts):  # (the front starts at the target: min_cost's)
        missing.append(Missing("cheapest", "cheapest network", (
            "the same design as the column 'cheapest network meeting the time target': the Pareto "
            "front starts at the time target, every point meeting it")))
    elif front is not None and front.points:
        p = front.points[0]
        alts.append(
            alternative(
                instance,
                "cheapest",
                titled("cheapest network", "performance", None, p.network_cost_usd, unit),
                "the fastest design at the cheapest "
                "network's cost (the Pareto front's first point)",
                p.bw,
                p.iteration_time_ns,
                p.network_cost_usd,
                objective="performance",
                budget_usd=p.network_cost_usd,
                gap=p.gap,
                status=p.status.value,
            )
        )
    else:
        missing.append(Missing("cheapest", "cheapest network", "no Pareto front"))
    if catalog is not None:
        alts += _catalog(instance, catalog, missing, time_limit_s,
                         label("catalog", "performance"), cap, budget, within)
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
    instance: Instance, catalog: Any, missing: list[Missing], time_limit_s: float, label: str,
    cap: float | None, budget: float | None, within: float = 0.0,
) -> list[Alternative]:
    """The catalog's fastest design in whole parts and, with ``within`` > 0, its knee in whole
    parts (:func:`hieropt.studies.knee.provision_knee`: the cheapest buildable design within
    ``within`` of that time, what ``hieropt provision --within`` prints), or their reasons in
    ``missing``."""
    from ..solvers.provision import provision

    try:
        p = provision(
            instance, catalog, objective="performance", compare=False, time_limit_s=time_limit_s
        )
    except HieroptError as e:
        missing.append(Missing("catalog", label, str(e)))
        return []
    how = (f"catalog {p.catalog}: {p.method} (bill of materials' cost and power; its $ are the "
           "catalog's parts, the other columns' the cost model's $ per GB/s: compare its time, "
           "not its $, with theirs)" + "".join(f"; {line}" for line in p.nic_bounds))
    out = [
        alternative(
            instance,
            "catalog",
            label,
            how,
            p.bw_gbps,
            p.iteration_time_ns,
            p.network_cost_usd,
            p.power_w,
            objective="performance",
            max_time_ns=cap,
            budget_usd=budget,
            gap=p.gap,
            catalog=True,
            status=p.status.value,
        )
    ]
    if within > 0:
        out += _catalog_knee(instance, catalog, p, within, missing, cap, budget)
    return out


def _catalog_knee(instance: Instance, catalog: Any, fastest: Any, within: float,
                  missing: list[Missing], cap: float | None,
                  budget: float | None) -> list[Alternative]:
    """The knee in the catalog's whole parts beside its ``fastest`` design (a provisioning
    answer), or [] with the reason in ``missing``."""
    from ..studies.knee import provision_knee

    pct = f"{within * 100:g} %"
    name = f"knee in whole parts, cheapest within {pct}"
    try:
        k = provision_knee(instance, catalog, fastest, within)
    except HieroptError as e:
        missing.append(Missing("catalog_knee", name, str(e)))
        return []
    p = k.knee
    how = (f"the cheapest design in the catalog's whole parts within {pct} of its fastest "
           f"({p.method}; the catalog's $, as its fastest column)")
    return [alternative(instance, "catalog_knee", name, how, p.bw_gbps, p.iteration_time_ns,
                        p.network_cost_usd, p.power_w, objective="min_cost",
                        max_time_ns=k.fastest_ns * (1 + within), budget_usd=budget, gap=p.gap,
                        catalog=True, status=p.status.value)]


WORKLOADS_NOTE = (
    "several workloads share the fabric: each design's iteration time is their weighted "
    "objective (sum of weight x time; for shares of hours the hour-weighted ratio), and the "
    "portfolio table gives each workload's own iteration time at "
    "each design (the independent evaluator), its ratio to its own optimum (its fastest network "
    "under the same constraints and budget; for shares of hours whatever the budget) and to its "
    "time at the fastest design, as hieropt "
    "solve's portfolio table")
"""The page's note on a portfolio of workloads."""


def asked_of(instance: Instance, objective: str | None) -> Asked:
    """The question ``instance``'s page answers (:class:`~hieropt.report.committee.Asked`, its
    ``answer`` not yet known): ``objective`` (``--objective``; None: the instance's own) under the
    instance's iteration-time cap and network budget. An objective with no column
    (``min_max_regret``, or ``min_cost`` within a ``max_regret`` bound) gets the reason and the
    command that answers it as ``why_not``."""
    asked = objective or instance.objective
    why_not = None
    if asked == "min_max_regret":
        why_not = "'hieropt solve INSTANCE --objective min_max_regret' gives the most even design"
    elif asked == "min_cost" and instance.max_regret is not None:
        asked = f"min_cost with max_regret {instance.max_regret:g}"
        why_not = ("'hieropt solve INSTANCE' gives the cheapest network with every workload "
                   f"within {instance.max_regret * 100:g} % of its own optimum")
    return Asked(asked, objective is not None, instance.max_iteration_time_ns,
                 instance.max_network_cost_usd, None, why_not, time_unit(instance))


def procurement_committee(
    instance: Instance,
    front: Any | None,
    within: float = 0.01,
    catalog: Any | None = None,
    time_limit_s: float = 60.0,
    objective: str | None = None,
) -> Committee:
    """The :class:`~hieropt.report.committee.Committee` of ``instance`` (module docstring), its
    Pareto plot from ``front``'s points (each mapped to days and $ per run when they are known).

    ``objective`` is the one asked with ``--objective`` (None: the instance's own answers the
    page's question, and the recommendation follows the page's rule). Its optimum under the
    instance's targets is the column :data:`~hieropt.report.committee_asked.ANSWERS` names, and,
    asked with ``--objective``, the recommendation. A ``max_regret`` bound is left out of the
    alternatives (``hieropt solve`` answers it; :func:`asked_of`).

    Raises:
        NoSolutionError: no alternative could be solved (the first one's reason).
    """
    from dataclasses import replace

    asked = asked_of(instance, objective)
    if instance.max_regret is not None:
        instance = instance.model_copy(update={"max_regret": None})
    alts, missing = procurement_alternatives(instance, front, within, catalog, time_limit_s,
                                             objective)
    if not alts:
        from ..errors import NoSolutionError

        raise NoSolutionError("infeasible", f"no design to recommend: {missing[0].why}")
    key_of = ANSWERS.get(asked.objective)
    if asked.why_not is None and key_of is not None:
        if any(a.key == key_of for a in alts):
            asked = replace(asked, answer=key_of)
        else:
            asked = replace(asked, why_not=next(
                (m.why for m in missing if m.key == key_of), "no column gives it"))
    alts_t = ordered(priced_labels(alts))
    key, why = recommend(list(alts_t), within, asked)
    cap = instance.max_iteration_time_ns
    alts_t, dropped = practical(alts_t, key, cap, asked.answer)
    missing += dropped
    fastest = next((a for a in alts_t if a.key == "fastest"), None)
    words = slowdown_words(next(a for a in alts_t if a.key == key), fastest)
    why = why if words is None else f"{why}; {words}"
    limit = practical_limit(alts_t, cap)
    points = front.points if front is not None else ()
    designs = [(p.iteration_time_ns, p.network_cost_usd,
                run_figures(instance, p.iteration_time_ns, p.network_cost_usd, bw_gbps=p.bw))
               for p in points if limit is None or p.iteration_time_ns <= limit]
    source = f"the exact time-cost Pareto front ({len(points)} budgets)"
    if len(designs) < len(points):
        source += (f"; {len(points) - len(designs)} of its designs, beyond the practical limit, "
                   "left out")
    pareto = pareto_data(designs, alts_t, source)
    tr = instance.workload.training
    notes = [
        "every alternative is a certified optimum of the objective its label names, under the "
        "targets it names, re-checked by the independent evaluator",
        "the instance fixes the training plan: every alternative is the network for that "
        "plan (as LIBRA "
        "designs it); a co-design result shows the plan chosen with the network",
        practical_note(cap),
    ]
    if len(instance.jobs) > 1:
        notes.append(WORKLOADS_NOTE)
    notes += caveat_notes(alts_t)  # (what the validation says of the plan: ZeRO-3, experts)
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
            asked_lines(asked, {a.key: a.label for a in alts_t}, key),
        ),
        key,
        why,
        alts_t,
        tuple(missing),
        within,
        pareto,
        unknown_lines(alts_t),
        tuple(notes),
        asked,
        basis_lines(alts_t),
    )


__all__ = [
    "procurement_committee",
    "asked_of",
    "time_unit",
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
