"""Which design the committee page recommends, and the price basis of each column.

A page's columns are priced on one of two bases (:attr:`Alternative.price_basis`): a parts
catalog's whole parts (``catalog``: the bill of materials' $ and power, a design that can be
bought) or the cost model's $ per GB/s per NPU (``cost_model``: a continuous design whose
bandwidths no catalog part need give, so its $ is a bound on what such a network costs, not a
purchase). The two bases' $ are not comparable: on one page the catalog's fastest design can cost
less than the cost model's cheapest network. So when a page has whole-parts columns, the
recommendation is chosen among them (:func:`recommend`), every cost-model column's label says its
basis (:func:`priced_labels`), and the page says, next to the recommendation, which basis each
column uses (:func:`basis_lines`).
"""

from __future__ import annotations

import dataclasses

from .committee import Alternative
from .committee_asked import Asked

PAGE_RUN_COST = "least $ per run on this page"
"""The label of the least $ per run among a co-design page's designs when the search minimised
another objective: a design of a candidate the result did not rank can be cheaper per run
(``codesign --objective min_run_cost`` finds the least over every candidate)."""

PAGE_CHEAPEST = "cheapest network on this page"
"""The label of the least network capex among a co-design page's designs when the search minimised
another objective."""

PAGE_WIDE = (PAGE_RUN_COST, PAGE_CHEAPEST)
"""The labels of a superlative over every design on a co-design page: on a page with whole-parts
columns they read "of the continuous designs" (:func:`priced_labels`)."""

PER_GBPS = "[$ per GB/s]"
"""The mark a cost-model column's label ends with on a page that also has whole-parts columns."""

BASIS_WORDS = {
    "catalog": "whole parts from the catalog, priced by their bill of materials (designs that "
               "can be bought)",
    "cost_model": "the cost model's $ per GB/s per NPU (continuous bandwidths no catalog part "
                  "need give: a bound on the network's $, not a purchase; compare their times, "
                  "not their $, with the whole-parts columns')",
}
"""What each price basis means, for the page's lines (:func:`basis_lines`)."""


def mixed(alternatives: list[Alternative] | tuple[Alternative, ...]) -> bool:
    """True when ``alternatives`` have columns of both price bases (whole parts and $ per GB/s)."""
    return len({a.price_basis for a in alternatives}) > 1


def priced_labels(alternatives: list[Alternative]) -> list[Alternative]:
    """``alternatives`` with each cost-model column's label marked :data:`PER_GBPS` when the page
    also has whole-parts columns (a superlative "on this page", e.g. "cheapest network on this
    page", then reads "of the continuous designs": a whole-parts column priced on the other basis
    can be cheaper); unchanged on a page of one basis."""
    if not mixed(alternatives):
        return alternatives
    out = []
    for a in alternatives:
        if a.price_basis == "catalog":
            out.append(a)
            continue
        label = a.label
        if label in PAGE_WIDE:
            label = label.replace("on this page", "of the continuous designs")
        out.append(dataclasses.replace(a, label=f"{label} {PER_GBPS}"))
    return out


def basis_lines(alternatives: list[Alternative] | tuple[Alternative, ...]) -> tuple[str, ...]:
    """One line per price basis naming its columns, whole parts first (e.g. ``whole parts from the
    catalog, ...: fastest in whole parts (performance)``); empty on a page of one basis."""
    if not mixed(alternatives):
        return ()
    out = []
    for basis in ("catalog", "cost_model"):
        labels = "; ".join(a.label for a in alternatives if a.price_basis == basis)
        out.append(f"{BASIS_WORDS[basis]}: {labels}")
    return tuple(out)


RUN_COST_WHY = ("the least $ per training run (run time x the whole cluster's cost rate); the "
                "accelerators are paid for every hour the training takes")
"""Why the least $ per run is recommended (a page of one price basis)."""

BOUGHT_WHY = (
    "the least $ per training run (run time x the whole cluster's cost rate) among the designs "
    "on this page that can be bought: whole parts from the catalog, priced by their bill of "
    "materials; the other columns are continuous designs priced by the cost model's $ per GB/s, "
    "bounds rather than purchases; the accelerators are paid for every hour the training takes")
"""Why the least $ per run in whole parts is recommended (a page with whole-parts columns)."""


def no_knee(knee: Alternative, fastest: Alternative) -> bool:
    """Whether the knee alternative saves nothing on the fastest: its network costs, to the cent
    rounded up, the same or more ($; the rule of :meth:`hieropt.studies.knee.Knee.line`, whose
    "knee: none ... buy the fastest" ``hieropt solve`` prints)."""
    from ..units import usd_cents

    k, f = knee.network_cost_usd, fastest.network_cost_usd
    if k is None or f is None:
        return False
    return usd_cents(k, up=True) == usd_cents(f, up=True) or k >= f


def recommend(alternatives: list[Alternative], within: float,
              asked: Asked | None = None) -> tuple[str, str]:
    """(key, why) of the recommended alternative: the optimum of the objective asked with
    ``--objective`` (``asked``, when given and on the page); else, on a page with whole-parts
    columns (:data:`~hieropt.report.committee.WHOLE_PARTS`), the least $ per run among them when
    it is known (a design that can be bought: the cost model's columns are bounds on another
    price basis); else the cheapest run when $ per run is known; else the knee in whole parts,
    else the fastest in whole parts; else the knee (none when ``within`` is 0; the fastest when
    the knee saves nothing on it, :func:`no_knee`), else the fastest,
    else the first of ``alternatives``. Ties in $ per run go to the faster design, then to the
    page's order."""
    keys = {a.key: a for a in alternatives}
    pct = f"{within * 100:g} %"
    if asked is not None and asked.given and asked.answer in keys:
        also = ("; the least $ per run is its own column" if asked.answer != "min_run_cost"
                and "min_run_cost" in keys else "")
        return asked.answer, (
            f"the certified optimum of the objective asked ({asked.words()}), the design "
            f"hieropt solve gives with the same --objective and targets{also}"
        )
    lead = ""
    if asked is not None and asked.given:
        lead = (f"the objective asked ({asked.words()}) has no optimum on this page "
                f"({asked.why_not or 'no column gives it'}); instead ")
    bought = [a for a in alternatives
              if a.price_basis == "catalog" and a.run.run_cost_usd is not None]
    if bought:
        a = min(bought, key=lambda a: (a.run.run_cost_usd, a.iteration_time_ns))
        return a.key, lead + BOUGHT_WHY
    if "min_run_cost" in keys and keys["min_run_cost"].run.run_cost_usd is not None:
        return "min_run_cost", lead + RUN_COST_WHY
    unpriced = ("the $ per run is unknown: give a [cluster] section and a token budget to rank "
                "by it")
    if "catalog_knee" in keys:
        return "catalog_knee", lead + (
            f"the cheapest design in the catalog's whole parts within {pct} of the catalog's "
            f"fastest (buildable: the continuous knee's bandwidths are not all catalog parts; "
            f"{unpriced})"
        )
    if "catalog" in keys:
        return "catalog", lead + (
            f"the fastest design in the catalog's whole parts (buildable: the continuous "
            f"designs' bandwidths are not all catalog parts; {unpriced})")
    if "knee" in keys and "fastest" in keys and no_knee(keys["knee"], keys["fastest"]):
        return "fastest", lead + (
            f"the fastest design: no design within {pct} of the fastest time costs a cent less "
            f"(no knee: buy the fastest, as hieropt solve's knee line says; {unpriced})")
    if "knee" in keys:
        return "knee", lead + (
            f"the cheapest network within {pct} of the fastest iteration time ({unpriced})"
        )
    if "fastest" in keys:
        return "fastest", lead + ("the fastest design (the $ per run is unknown, and --within 0 "
                                  "turns the knee off)" if within <= 0 else
                                  "the fastest design (neither the $ per run nor a knee is known)")
    a = alternatives[0]
    return a.key, lead + (
        f"{a.label}: neither the $ per run, nor a knee, nor the fastest design is known")


__all__ = [
    "BASIS_WORDS",
    "BOUGHT_WHY",
    "PAGE_CHEAPEST",
    "PAGE_RUN_COST",
    "PAGE_WIDE",
    "PER_GBPS",
    "RUN_COST_WHY",
    "basis_lines",
    "mixed",
    "priced_labels",
    "no_knee",
    "recommend",
]
