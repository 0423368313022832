"""A measured run's predicted iteration time: the plan's instance on the run's network
(:func:`hieropt.model.groups.instance_for`, training loop ``step``, every distinct pipeline stage)
evaluated at the run's bandwidths (:func:`hieropt.model.timing.evaluate`) — the path of ``hieropt
evaluate`` on an instance whose workload is an LLM model file, with the groups placed lowest-first
unless the network file maps them.
"""

from __future__ import annotations

from pydantic import ValidationError

from ...errors import InputError
from ...io.common import validation_error
from ...io.runs import Run
from ...model.groups import instance_for
from ...model.timing import evaluate
from ...spec import CostClass, CostModel, Instance, Network
from ...workloads.llm.params import LLMParams


def unit_cost(network: Network) -> CostModel:
    """A cost model of 1 $ per GB/s for every part of every cost class of ``network`` (cost plays no
    part in a run's time; an instance needs one)."""
    one = CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)
    return CostModel(classes={d.cost_class: one for d in network.dims})


def run_instance(run: Run, params: LLMParams | None = None) -> Instance:
    """The instance of ``run`` (or of its plan with other ``params``, e.g. calibrated NPU fields).

    Raises:
        InputError: the plan's groups cannot be placed on the run's network, or the network file's
            groups or settings do not fit the plan (naming the run's line).
    """
    p = params if params is not None else run.params
    cost = run.net.cost or unit_cost(run.network)
    try:
        return instance_for(
            p, run.network, cost, run.placement, name=p.workload_name, **run.net.settings
        )
    except InputError as e:
        raise InputError(run.where, e.field, e.problem, e.fix) from None
    except ValidationError as e:
        err = validation_error(e, run.where)
        raise InputError(
            run.where, "network", f"{run.net.path}: {err.field}: {err.problem}", err.fix
        ) from None


def predict_ms(
    run: Run, overrides: tuple[str, ...] = (), params: LLMParams | None = None
) -> float:
    """The predicted iteration time of ``run``, ms, with ``overrides`` (``KEY=VALUE``, after the
    row's own), or with ``params`` in place of the run's (e.g. the accelerator of a calibrated file,
    :func:`hieropt.studies.validate.run.timed_params`).

    Raises:
        InputError: a value the model rejects, a plan that cannot be placed, or bandwidths the
            network rejects, naming the run's line.
    """
    p = params if params is not None else run.with_values(overrides) if overrides else run.params
    inst = run_instance(run, p)
    try:
        return evaluate(inst, list(run.bw_gbps)).iteration_time_ns / 1e6
    except InputError as e:
        raise InputError(run.where, "bw_gbps", e.problem, e.fix) from None


__all__ = ["unit_cost", "run_instance", "predict_ms"]
