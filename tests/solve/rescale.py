"""An instance rescaled in bytes and bandwidth and in prices (the scaling rule of
hieropt/formulation/scale.py leaves every time unchanged)."""

from __future__ import annotations

from hieropt.spec import Bound, CostClass, CostModel, Instance, LinearConstraint, Workload


def scaled(inst: Instance, a: float, c: float) -> Instance:
    """``inst`` with bytes and bandwidth limits x ``a`` and prices x ``c`` (times unchanged)."""
    def layer(lay):
        return lay.model_copy(
            update={
                p: getattr(lay, p).model_copy(update={"size_bytes": getattr(lay, p).size_bytes * a})
                for p in ("forward", "input_grad", "weight_grad")
            }
        )
    w = inst.workload
    workload = Workload(name=w.name, layers=tuple(layer(lay) for lay in w.layers), header=w.header)
    rows = tuple(
        LinearConstraint(coefficients=r.coefficients, sense=r.sense, rhs=r.rhs * a, text=r.text)
        for r in inst.constraints
    )
    bounds = (
        None
        if inst.bounds is None
        else tuple(
            Bound(
                lower_gbps=b.lower_gbps * a,
                upper_gbps=None if b.upper_gbps is None else b.upper_gbps * a,
            )
            for b in inst.bounds
        )
    )
    cost = CostModel(
        classes={
            k: CostClass(**{f: (None if v is None else v * c) for f, v in cc.model_dump().items()})
            for k, cc in inst.cost.classes.items()
        }
    )
    return Instance(
        **{
            **inst.model_dump(exclude={"workload", "constraints", "bounds", "cost"}),
            "workload": workload,
            "constraints": rows,
            "bounds": bounds,
            "cost": cost,
        }
    )
