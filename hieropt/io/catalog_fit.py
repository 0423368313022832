"""Which parts of a catalog can serve an instance's network (:func:`usable_catalog`): a part whose
every unit count lies outside a dimension's bounds, or that can never meet a design constraint
whatever the other dimensions choose, is left out with a note; a dimension left with no part is
refused. Interval arithmetic over the bandwidths each remaining part reaches within the bounds, so a
part that some design can use is never left out, and the answer with a left-out part equals the
answer of the catalog without it.

Units: GB/s per NPU per direction (1 GB = 1e9 bytes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InputError
from ..model.catalog import LINK_BLOCKS, Catalog, Part, link_peers, unit_step
from ..spec import Instance

__all__ = ["check_served", "dimension_parts", "part_label", "usable_catalog"]

TOL = 1e-9
"""Relative tolerance of a bound (and, absolute, of a unit count) when deciding that a part cannot
meet it."""

CON_TOL = 1e-6
"""Relative tolerance of a design constraint when deciding that no design can meet it: the
independent evaluator's (:data:`hieropt.verify.FEAS_TOL`), so that no part of a design it accepts
is left out or refused."""


def dimension_parts(catalog: Catalog, instance: Instance, d: int) -> list[tuple[str, int, Part]]:
    """The parts dimension ``d`` may use: ``(kind, index in its class's list, part)``, links for
    Ring / FullyConnected dimensions, NICs for Switch ones."""
    dim = instance.network.dims[d]
    kind = "links" if dim.block in LINK_BLOCKS else "nics"
    return [(kind, i, p) for i, p in enumerate(getattr(catalog.classes[dim.cost_class], kind))]


def part_label(cname: str, kind: str, i: int, part: Part) -> str:
    """``classes.<class>.<kind>[i] ('name')``: the field naming a part in errors and notes."""
    return f"classes.{cname}.{kind}[{i}] ('{part.name}')"


def _range(part: Part) -> tuple[float, float]:
    return part.bw_gbps(1), part.bw_gbps(part.max_units)


def _reach(part: Part) -> str:
    """``'name' 4 x 25 GB/s = 100``: the most a part gives (GB/s per NPU; per node of n when
    shared)."""
    return (f"'{part.name}' {part.max_units} x {part.unit_gbps:g} GB/s"
            + (f" per node of {part.share}" if part.share > 1 else "") + f" = {_range(part)[1]:g}")


def _units_needed(part: Part, need_gbps: float, step: int = 1) -> int:
    """The fewest units of ``part`` (per NPU, or per node) giving ``need_gbps`` GB/s per NPU, in
    whole multiples of ``step`` (:func:`hieropt.model.catalog.unit_step`)."""
    return max(1, math.ceil(need_gbps * part.share / part.unit_gbps / step - TOL)) * step


def _units_for(part: Part, need_gbps: float, step: int = 1) -> str:
    key = "max_per_npu" if part.per == "NPU" else "max_per_node"
    return f"'{part.name}' {key} >= {_units_needed(part, need_gbps, step)}"


def _reach_units(part: Part, units: int, capped: bool = False) -> str:
    """``4 x 25 GB/s = 100 GB/s per NPU``: what ``units`` of ``part`` give (per node of n when
    shared), said to be the most within the bounds when below the unit limit (``capped``: the
    dimension's upper bound is the NIC cap, not the instance's)."""
    within = " within the NIC cap" if capped else " within the instance's bounds"
    return (f"{units} x {part.unit_gbps:g} GB/s"
            + (f" per node of {part.share}" if part.share > 1 else "")
            + f" = {part.bw_gbps(units):g} GB/s per NPU"
            + (within if units < part.max_units else ""))


def _more_units(part: Part, need_gbps: float, step: int = 1) -> str:
    """The fix of a part too slow for ``need_gbps`` GB/s per NPU: its unit limit raised to the
    fewest units that give it, a whole multiple of ``step`` (the peers its link ports reach)."""
    units = _units_needed(part, need_gbps, step)
    key = "max_per_npu" if part.per == "NPU" else "max_per_node"
    multiple = f" (a multiple of {step}, one port to each peer)" if step > 1 else ""
    return f"raise {key} to at least {units}{multiple} or use a faster part"


def _ports(n: int) -> str:
    """``1 link port`` / ``2 link ports``."""
    return f"{n} link port" + ("" if n == 1 else "s")


def _lhs(a: tuple[float, ...], ranges: list[tuple[float, float]], dims) -> tuple[float, float]:
    """The least and the most of ``sum(a[j] * bw[j] for j in dims)`` over the ranges (GB/s)."""
    return (sum(min(a[j] * ranges[j][0], a[j] * ranges[j][1]) for j in dims),
            sum(max(a[j] * ranges[j][0], a[j] * ranges[j][1]) for j in dims))


def _con_tol(con, ranges: list[tuple[float, float]]) -> float:
    """How far (GB/s) the left-hand side of ``con`` may miss its right-hand side and still meet it:
    :data:`CON_TOL` of the largest of 1, the right-hand side and the left-hand side's terms."""
    mag = sum(abs(a) * max(abs(lo), abs(hi))
              for a, (lo, hi) in zip(con.coefficients, ranges, strict=True)
              if a != 0 and math.isfinite(lo) and math.isfinite(hi))
    return CON_TOL * max(1.0, abs(con.rhs), mag)


def check_served(catalog: Catalog, instance: Instance, src: str) -> None:
    """Reject a network that no choice of parts can serve: a bound or a design constraint out of
    reach of every part of the dimensions it involves (interval arithmetic over each dimension's
    whole range, so the error is certain). The error names every part of the dimensions concerned
    and what each reaches, not one of them (a dimension of one part is left to
    :func:`usable_catalog`, whose error names the part's own field).

    Raises:
        InputError: naming the file ``src``, the class (or ``classes``) and the fix.
    """
    D = instance.network.n_dims
    parts = [[p for _, _, p in dimension_parts(catalog, instance, d)] for d in range(D)]
    ranges = [(min(_range(p)[0] for p in ps), max(_range(p)[1] for p in ps)) for ps in parts]

    def where(d: int) -> str:
        return f"dimension {d} (class {instance.network.dims[d].cost_class})"

    def units_for(p: Part, d: int, need_gbps: float) -> str:
        dim = instance.network.dims[d]
        return _units_for(p, need_gbps, unit_step(p, dim.block, dim.npus))

    for d, ps in enumerate(parts):
        if len(ps) < 2:
            continue  # one part: the per-part check names it
        bound = instance.bounds_or_default[d]
        if ranges[d][1] < bound.lower_gbps * (1 - TOL):
            raise InputError(
                src,
                f"classes.{instance.network.dims[d].cost_class}",
                f"no part serves {where(d)}: "
                f"the bound bw[{d}] >= {bound.lower_gbps:g} needs {bound.lower_gbps:g} GB/s "
                "per NPU, "
                f"but its parts reach at most {', '.join(_reach(p) for p in ps)} GB/s per NPU",
                "raise a unit limit "
                f"({', '.join(units_for(p, d, bound.lower_gbps) for p in ps)}), add a "
                f"faster part, or lower the bound",
            )
        if bound.upper_gbps is not None and ranges[d][0] > bound.upper_gbps * (1 + TOL):
            raise InputError(
                src,
                f"classes.{instance.network.dims[d].cost_class}",
                f"no part serves {where(d)}: "
                f"the bound bw[{d}] <= {bound.upper_gbps:g}, but one unit of its slowest "
                "part gives "
                f"{ranges[d][0]:g} GB/s per NPU",
                "add a slower part, or raise the bound",
            )
    for con in instance.constraints:
        a = con.coefficients
        dims = [d for d in range(D) if a[d] != 0]
        if len(dims) == 1 and len(parts[dims[0]]) < 2:
            continue  # one part on one dimension: the per-part check names it
        lhs_lo, lhs_hi = _lhs(a, ranges, dims)
        tol = _con_tol(con, ranges)
        too_low = con.sense in (">=", "==") and lhs_hi < con.rhs - tol
        too_high = con.sense in ("<=", "==") and lhs_lo > con.rhs + tol
        if not (too_low or too_high):
            continue
        if len(dims) == 1:
            d = dims[0]
            field = f"classes.{instance.network.dims[d].cost_class}"
            bound = con.rhs / a[d]
            if too_low == (a[d] > 0):
                raise InputError(
                    src,
                    field,
                    f"no part serves {where(d)}: constraint '{con.text}' needs {bound:g} GB/s "
                    "per NPU, but its parts reach at most "
                    f"{', '.join(_reach(p) for p in parts[d])} GB/s "
                    "per NPU",
                    f"raise a unit limit ({', '.join(units_for(p, d, bound) for p in parts[d])}),"
                    " add a faster part, or relax the constraint",
                )
            raise InputError(
                src,
                field,
                f"no part serves {where(d)}: constraint '{con.text}' allows at most {bound:g} "
                f"GB/s per NPU, but one unit of its slowest part gives {ranges[d][0]:g}",
                "add a slower part, or relax the constraint",
            )
        if too_low:
            side = f"reaches at most {lhs_hi:g}"
            each = "; ".join(
                f"{where(d)}: at most {', '.join(_reach(p) for p in parts[d])} GB/s per NPU"
                for d in dims
            )
            fix = (
                "raise the unit limits (max_per_npu / max_per_node) or add faster parts, or "
                "relax the constraint"
            )
        else:
            side = f"is at least {lhs_lo:g}"
            each = "; ".join(
                f"{where(d)}: one unit gives at least {ranges[d][0]:g} GB/s per NPU" for d in dims
            )
            fix = "add slower parts, or relax the constraint"
        raise InputError(
            src,
            "classes",
            f"no choice of parts serves this network: the left-hand side of constraint "
            f"'{con.text}' {side} with any of them ({each})",
            fix,
        )


@dataclass(frozen=True)
class _Misfit:
    """Why a part cannot serve a dimension: ``problem`` and ``fix`` as an InputError words them."""

    problem: str
    fix: str


def _bound_misfit(part: Part, d: int, instance: Instance,
                  caps: Mapping[int, str] | None = None) -> _Misfit | tuple[float, float]:
    """The part's bandwidth range within dimension ``d``'s bounds (GB/s per NPU, its fewest and
    most units that fit), or why no unit count fits (the upper bound of a dimension in ``caps`` is
    named by its words there: a cap's, not the instance's)."""
    bound = instance.bounds_or_default[d]
    cap = (caps or {}).get(d)
    upper = cap or f"the instance's bound bw[{d}] <= {bound.upper_gbps or math.inf:g}"
    raise_it = ("raise the bound" if cap is None else
                "give the model file's [params.npu] nic_gbps (a faster host link)")
    dim = instance.network.dims[d]
    step = unit_step(part, dim.block, dim.npus)
    if part.max_units < step:  # (a link port goes to one peer: whole multiples of the peers)
        key = "max_per_npu" if part.per == "NPU" else "max_per_node"
        peers = link_peers(dim.block, dim.npus)
        each = (f"its units come in multiples of {step}" if part.share == 1 else
                f"a node of {part.share} NPUs needs its units in multiples of {part.share} x "
                f"{peers} = {step}")
        return _Misfit(f"at most {_ports(part.max_units)} per {part.per} cannot reach the "
                       f"{peers} peers each NPU has on dimension {d} ({dim.block} {dim.npus}): "
                       f"a link port goes to one peer, so {each}",
                       f"raise {key} to at least {step}, or use a part with enough ports")
    lo, most = part.bw_gbps(step), part.max_units // step * step
    k_lo = _units_needed(part, bound.lower_gbps, step)
    k_hi = most
    if bound.upper_gbps is not None:
        k_hi = min(k_hi, math.floor(bound.upper_gbps * part.share / part.unit_gbps / step + TOL)
                   * step)
    if k_lo > most:
        return _Misfit(f"reaches at most {_reach_units(part, most)} on dimension {d}, "
                       "below the instance's "
                       f"bound bw[{d}] >= {bound.lower_gbps:g}",
                       _more_units(part, bound.lower_gbps, step))
    if k_hi < 1:
        least = "one unit gives" if step == 1 else f"{step} units (one per peer) give"
        return _Misfit(f"{least} {lo:g} GB/s per NPU on dimension {d}, above {upper}",
                       f"use a slower part or {raise_it}")
    if k_lo > k_hi:
        fits = (f"the instance's bounds {bound.lower_gbps:g} <= bw[{d}] <= {bound.upper_gbps:g}"
                if cap is None else
                f"the instance's bound bw[{d}] >= {bound.lower_gbps:g} and {upper}")
        return _Misfit(f"no unit count fits {fits} on dimension {d}: {k_hi} give "
                       f"{part.bw_gbps(k_hi):g} and {k_lo} give {part.bw_gbps(k_lo):g} GB/s per "
                       "NPU", "use a part whose unit count can fit the bounds, or widen them")
    return part.bw_gbps(k_lo), part.bw_gbps(k_hi)


def _constraint_misfit(part: Part, d: int, span: tuple[float, float],
                       ranges: list[tuple[float, float]], instance: Instance,
                       capped: bool = False) -> _Misfit | None:
    """Why a part whose bandwidths on dimension ``d`` span ``span`` (GB/s per NPU, within the
    bounds) can never meet a design constraint whatever the other dimensions choose from
    ``ranges``, or None."""
    lo, hi = span
    D = instance.network.n_dims
    for con in instance.constraints:
        a = con.coefficients
        if a[d] == 0:
            continue
        others_lo, others_hi = _lhs(a, ranges, [j for j in range(D) if j != d])
        lhs_lo = others_lo + min(a[d] * lo, a[d] * hi)
        lhs_hi = others_hi + max(a[d] * lo, a[d] * hi)
        tol = _con_tol(con, [span if j == d else r for j, r in enumerate(ranges)])
        too_low = con.sense in (">=", "==") and lhs_hi < con.rhs - tol
        too_high = con.sense in ("<=", "==") and lhs_lo > con.rhs + tol
        if not (too_low or too_high):
            continue
        if sum(1 for x in a if x != 0) == 1:
            if too_low == (a[d] > 0):
                units = round(hi * part.share / part.unit_gbps)
                dim = instance.network.dims[d]
                return _Misfit(f"reaches at most {_reach_units(part, units, capped)} on "
                               f"dimension {d}, but constraint '{con.text}' needs "
                               f"{con.rhs / a[d]:g}",
                               _more_units(part, con.rhs / a[d],
                                           unit_step(part, dim.block, dim.npus)))
            return _Misfit(f"one unit gives {lo:g} GB/s per NPU on dimension {d}, but "
                           f"constraint '{con.text}' allows at most {con.rhs / a[d]:g}",
                           "use a slower part or relax the constraint")
        side = f"reaches at most {lhs_hi:g}" if too_low else f"is at least {lhs_lo:g}"
        return _Misfit(f"with this part on dimension {d} ({lo:g} to {hi:g} GB/s per NPU) the "
                       f"left-hand side of constraint '{con.text}' {side} whatever the other "
                       "dimensions choose",
                       "change the part's unit bandwidth or unit limit, or the constraint")
    return None


def _misfit(part: Part, d: int, ranges: list[tuple[float, float]], instance: Instance,
            caps: Mapping[int, str] | None = None) -> _Misfit | tuple[float, float]:
    """Why ``part`` cannot serve dimension ``d`` (:func:`_bound_misfit`, then
    :func:`_constraint_misfit`), or its bandwidth range there within the bounds (GB/s per NPU)."""
    span = _bound_misfit(part, d, instance, caps)
    if isinstance(span, _Misfit):
        return span
    return _constraint_misfit(part, d, span, ranges, instance, d in (caps or {})) or span


def _refuse_empty(instance: Instance, d: int, parts: list, why: dict, src: str) -> InputError:
    """The error for dimension ``d`` left with no part: the part's own field when it has one, the
    class naming each part and why when it has several."""
    cname = instance.network.dims[d].cost_class
    if len(parts) == 1:
        kind, i, part = parts[0]
        m = why[(d, i)]
        return InputError(src, part_label(cname, kind, i, part), m.problem, m.fix)
    return InputError(
        src,
        f"classes.{cname}",
        f"no part serves dimension {d} (class {cname}): "
        + "; ".join(f"'{p.name}' {why[(d, i)].problem}" for _, i, p in parts),
        "make one of them fit: " + "; ".join(f"'{p.name}': {why[(d, i)].fix}"
                                             for _, i, p in parts),
    )


def usable_catalog(catalog: Catalog, instance: Instance, src: str = "catalog",
                   caps: Mapping[int, str] | None = None) -> tuple[Catalog, tuple[str, ...]]:
    """``catalog`` without the parts no design of ``instance`` can use, and one note per part left
    out (``FILE: FIELD ('name'): why``, naming the bound or constraint it cannot meet; the upper
    bound of a dimension in ``caps`` is named by its words there, e.g. the accelerator's NIC cap
    of :mod:`hieropt.io.nic_bound`, not as the instance's bound).

    A part cannot be used on a dimension when none of its unit counts (1 to its unit limit) gives
    a bandwidth within the dimension's bounds, or when its bandwidths within them can never meet a
    design constraint whatever the other dimensions choose from their remaining parts (interval
    arithmetic, repeated until nothing more is left out). A part of a class several dimensions use
    is left out only when none of them can use it. The catalog's checks that need no instance are
    assumed done (:func:`hieropt.io.catalog.check_catalog` calls this last).

    Raises:
        InputError: no choice of parts serves the network (:func:`check_served`), or a dimension is
            left with no part: naming the file ``src``, the part (or the class of several) and the
            fix.
    """
    check_served(catalog, instance, src)
    D = instance.network.n_dims
    parts = [dimension_parts(catalog, instance, d) for d in range(D)]
    live = [list(ps) for ps in parts]
    why: dict[tuple[int, int], _Misfit] = {}
    while True:
        spans = [[_bound_misfit(p, d, instance, caps) for _, _, p in live[d]]
                 for d in range(D)]
        ranges = [(min((s[0] for s in ss if not isinstance(s, _Misfit)), default=math.inf),
                   max((s[1] for s in ss if not isinstance(s, _Misfit)), default=-math.inf))
                  for ss in spans]
        dropped = False
        for d in range(D):
            keep = []
            for kind, i, p in live[d]:
                m = _misfit(p, d, ranges, instance, caps)
                if isinstance(m, _Misfit):
                    why[(d, i)] = m
                    dropped = True
                else:
                    keep.append((kind, i, p))
            live[d] = keep
            if not keep:
                raise _refuse_empty(instance, d, parts[d], why, src)
        if not dropped:
            break
    return _without(catalog, instance, parts, live, why, src)


def _without(catalog: Catalog, instance: Instance, parts: list, live: list, why: dict,
             src: str) -> tuple[Catalog, tuple[str, ...]]:
    """The catalog without the parts that no dimension using them kept, and a note for each."""
    notes: list[str] = []
    classes = dict(catalog.classes)
    for cname, pc in catalog.classes.items():
        for kind in ("links", "nics"):
            ds = [d for d in range(len(parts))
                  if instance.network.dims[d].cost_class == cname and parts[d]
                  and parts[d][0][0] == kind]
            if not ds:
                continue
            kept = {i for d in ds for _, i, _ in live[d]}
            gone = [(i, p) for _, i, p in parts[ds[0]] if i not in kept]
            for i, p in gone:
                notes.append(f"{src}: {part_label(cname, kind, i, p)}: "
                             + "; ".join(why[(d, i)].problem for d in ds)
                             + ": left out (other parts serve the network)")
            if gone:
                pc = pc.model_copy(update={kind: [
                    p for i, p in enumerate(getattr(pc, kind)) if i in kept]})
        classes[cname] = pc
    return catalog.model_copy(update={"classes": classes}), tuple(notes)
