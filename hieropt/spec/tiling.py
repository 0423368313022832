"""Whether a job's parallel groups can sit on the network together: the groups tile every
dimension.

A plan's groups (tp, cp, ep / edp or dp, pp) are orthogonal: every NPU is in one group of each, and
two groups of different kinds share one NPU. On a dimension of p_d NPUs the groups X therefore take
factors g^X_d whose product is p_d (prod_X g^X_d = p_d, :mod:`hieropt.model.groups`): TP 8 x DP 2 on
a dimension of 8 NPUs has no placement (a data-parallel pair would sit inside one tensor-parallel
group). The same holds for a mapping given per phase when the workload says which parallelism its
phases run (LIBRA's communicators, an ASTRA-sim header, a generator's degrees): forward and
input_grad run on the model-parallel group, weight_grad on the data-parallel one.

The *factors* are found as the ASTRA-sim export needs them (:mod:`hieropt.io.astrasim_groups`): in
the order :data:`ORDER` (Megatron-LM's rank order, innermost first; then the other names
alphabetically), each group that is neither all ones nor the product of its :data:`DERIVED` parts
takes a factor of what the earlier factors leave of every dimension. Every other group must be a
product of factors on every dimension (dp = ep x edp, a dense plan's edp = dp, a phase group equal
to a named one), and the factors must multiply to every dimension's NPUs.
"""

from __future__ import annotations

import math
from itertools import combinations

ORDER = ("tp", "cp", "ep", "edp", "dp", "pp")
"""Named groups in Megatron-LM's rank order, innermost first (others follow alphabetically)."""
PIPELINE = "pp"
"""The named group the pipeline stages run along."""
DERIVED = {"dp": ("ep", "edp"), "edp": ("dp",)}
"""Groups that are the product of others when those are factors (dp = ep x edp; a dense plan's edp =
dp)."""

Groups = dict[str, tuple[int, ...]]
"""Group name (a named group or a phase) -> its NPUs on each dimension."""


def ordered(names) -> list[str]:
    """``names`` in :data:`ORDER`, then the others alphabetically."""
    return [n for n in ORDER if n in names] + sorted(n for n in names if n not in ORDER)


def derived_parts(
    name: str, g: tuple[int, ...], factors: list[str], groups: Groups
) -> tuple | None:
    """The factors ``name`` (sizes ``g``) is the product of on every dimension: its
    :data:`DERIVED` parts that are factors; None when it is not."""
    parts = tuple(a for a in DERIVED.get(name, ()) if a in factors)
    if parts and all(math.prod(groups[a][d] for a in parts) == x for d, x in enumerate(g)):
        return parts
    return None


def group_factors(groups: Groups, sizes: tuple[int, ...]) -> list[str]:
    """The groups that are factors of the dimensions of ``sizes`` NPUs (module docstring), in
    :data:`ORDER`."""
    factors: list[str] = []
    room = list(sizes)
    for name in ordered(groups):
        g = groups[name]
        if all(x == 1 for x in g) or derived_parts(name, g, factors, groups) is not None:
            continue
        if any(r % x for r, x in zip(room, g, strict=True)):
            continue  # (not a factor of what is left: a product of factors, or refused)
        factors.append(name)
        room = [r // x for r, x in zip(room, g, strict=True)]
    return factors


def factor_subset(g: tuple[int, ...], factors: list[str], groups: Groups) -> tuple[str, ...] | None:
    """Factors whose sizes multiply to ``g`` on every dimension (the pipeline group last), or
    None."""
    pool = [a for a in factors if a != PIPELINE] + [a for a in factors if a == PIPELINE]
    for k in range(1, len(pool) + 1):
        for sub in combinations(pool, k):
            if all(math.prod(groups[a][d] for a in sub) == x for d, x in enumerate(g)):
                return sub
    return None


def _nested(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether ``a`` is a part of ``b`` on every dimension (its size divides b's)."""
    return len(a) == len(b) and all(y % x == 0 for x, y in zip(a, b, strict=True))


def mapping_groups(named: Groups, phases: Groups, sizes: tuple[int, ...]) -> Groups:
    """The groups of a mapping on dimensions of ``sizes`` NPUs: its named groups, then the phase
    groups that no named group equals, under the phase's name. The forward and input-gradient
    phases both run model parallel: when one is part of the other (equal, or a subgroup), they are
    one group, the larger. The weight gradient runs on a group of its own, orthogonal to the
    model-parallel one, unless it equals the forward group and that is the whole network (the
    whole-cluster policies): tp (2, 2) and dp (2, 2) on 4 x 4 NPUs are two groups."""
    out = {k: tuple(v) for k, v in named.items()}
    ph = {k: tuple(v) for k, v in phases.items()}
    fwd, inp = ph.get("forward"), ph.get("input_grad")
    if fwd is not None and inp is not None:
        if _nested(inp, fwd):
            ph.pop("input_grad")
        elif _nested(fwd, inp):
            ph.pop("forward")
    model = ph.get("forward", ph.get("input_grad"))
    for phase, g in ph.items():
        whole = phase == "weight_grad" and g == model and g == tuple(sizes)
        if g not in named.values() and not whole:
            out[phase] = g
    return out


def tiling_problem(
    groups: Groups, sizes: tuple[int, ...], exact: bool = True
) -> tuple[str, str, str] | None:
    """Why ``groups`` (from :func:`mapping_groups`) cannot sit together on dimensions of ``sizes``
    NPUs, as ``(field, problem, fix)`` (``field``: ``groups.<name>``, a phase, or ``groups``), None
    when they tile every dimension (module docstring; ``exact`` False: when they fit, their
    product a divisor of every dimension's NPUs).

    Example: tp (8, 1), dp (2, 8), pp (1, 4) on 8 x 64 -> ``("groups.dp", "[2, 8] does not fit
    beside tp [8, 1], pp [1, 4]: on dimension 0 they need 8 x 2 = 16 NPUs, and it has 8", ...)``.
    """
    fix = "give groups that tile every dimension (their sizes multiply to its NPUs)"
    factors = group_factors(groups, sizes)
    for name in ordered(groups):
        g = groups[name]
        if all(x == 1 for x in g) or name in factors:
            continue
        if derived_parts(name, g, factors, groups) or factor_subset(g, factors, groups):
            continue
        field = name if name in ("forward", "input_grad", "weight_grad") else f"groups.{name}"
        beside = ", ".join(f"{a} {list(groups[a])}" for a in factors)
        for d, p in enumerate(sizes):
            need = [groups[a][d] for a in factors if groups[a][d] > 1] + [g[d]]
            if p % math.prod(need):
                return field, (
                    f"{list(g)} does not fit beside {beside}: on dimension {d} they need "
                    f"{' x '.join(map(str, need))} = {math.prod(need)} NPUs, and it has {p}"
                ), fix
        return field, f"{list(g)} is no product of the groups {', '.join(factors)}", fix
    for d, p in enumerate(sizes if exact else ()):
        row = [a for a in factors if groups[a][d] > 1]
        if (got := math.prod(groups[a][d] for a in row)) != p:
            return "groups", (
                f"the groups {', '.join(factors)} give {got} of dimension {d}'s {p} NPUs"
            ), fix
    return None


PREFERRED = {"forward": ("tp",), "input_grad": ("tp",), "weight_grad": ("dp", "edp", "dpc")}
"""The named groups a phase is taken to run on when several have its sizes (an LLM plan's mapping:
forward and input_grad on tp, weight_grad on dp)."""


def group_strides(named: Groups, phases: Groups, sizes: tuple[int, ...]) -> Groups:
    """Every group's stride on each dimension: the product of the sizes there of the groups placed
    inside it, for :func:`hieropt.model.algorithms.group_links` (a Ring's share).

    The groups nest as :func:`group_factors` finds them, innermost first: :data:`ORDER`
    (Megatron-LM's rank order: tp, cp, ep, edp, dp, pp, the order
    :func:`hieropt.model.groups.place_lowest` places them), then the other names alphabetically, so
    that a mapping given per phase (LIBRA's communicators, which state no order) is taken model
    parallel (forward, input_grad) inside data parallel (weight_grad), as ASTRA-sim's header rule
    places them (model parallel on the lowest dimensions). A factor's stride on dimension d is the
    product of the earlier factors' sizes there; a product of factors (dp = ep x edp, a phase equal
    to a named group, :data:`PREFERRED` first) takes the product of the non-member factors placed
    before its outermost member that spans d. A group that is no product of factors (mappings whose
    groups do not tile, which the tiling check lets through only for workloads that state no
    parallelism) is taken contiguous: stride 1.

    Args:
        named: named group -> size per dimension.
        phases: phase name -> size per dimension.
        sizes: the NPUs of each dimension.

    Returns:
        group or phase name -> stride per dimension (1 where the group does not span it).

    Example: tp (2, 1), dp (2, 8), pp (2, 1) on 8 x 8 -> tp (1, 1), dp (2, 1), pp (4, 1).
    """
    D = len(sizes)
    groups = mapping_groups(named, phases, sizes)
    factors = group_factors(groups, sizes)

    def stride(members: tuple[str, ...]) -> tuple[int, ...]:
        out = []
        for d in range(D):
            spanning = [factors.index(a) for a in members if groups[a][d] > 1]
            last = max(spanning, default=0)  # (0: not spanned, stride 1)
            out.append(math.prod(groups[b][d] for b in factors[:last] if b not in members))
        return tuple(out)

    def members(name: str, g: tuple[int, ...]) -> tuple[str, ...] | None:
        if name in factors:
            return (name,)
        if name in groups:
            return derived_parts(name, g, factors, groups) or factor_subset(g, factors, groups)
        same = [a for a in PREFERRED.get(name, ()) if tuple(named.get(a, ())) == g]
        same += [a for a in ordered(groups) if tuple(groups[a]) == g]
        for a in same:
            if (m := members(a, g)) is not None:
                return m
        return factor_subset(g, factors, groups)

    out: Groups = {}
    for name, g in list(named.items()) + list(phases.items()):
        g = tuple(g)
        m = None if all(x == 1 for x in g) else members(name, g)
        out[name] = stride(m) if m else (1,) * D
    return out


__all__ = [
    "ORDER",
    "PREFERRED",
    "group_strides",
    "PIPELINE",
    "DERIVED",
    "Groups",
    "ordered",
    "derived_parts",
    "group_factors",
    "factor_subset",
    "mapping_groups",
    "tiling_problem",
]
