"""A LIBRA file set (network YAML, ASTRA-sim 1.0 workload text, communicator YAML, cost model
YAML) and constraint strings -> :class:`hieropt.spec.Instance`, as the CLI's LIBRA flags build
it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..names import FWD_IN_BCKWD, OBJECTIVES
from .common import read_text
from .instance import instance_from

if TYPE_CHECKING:
    from ..spec import Instance


def load_libra(
    network: str | Path,
    workload: str | Path,
    communicator: str | Path | None = None,
    cost: str | Path | None = None,
    constraints: Sequence[str] = (),
    objective: str = "performance",
    name: str | None = None,
    max_iteration_time_ns: float | None = None,
    max_network_cost_usd: float | None = None,
) -> Instance:
    """Build an instance from LIBRA's files (paths) and constraint strings, as the CLI's LIBRA flags
    do.

    ``objective`` defaults to LIBRA's ``PerfOpt`` (``"performance"``); the training loop is LIBRA's
    ``no_overlap``, or ``recompute`` for a workload whose ASTRA-sim header is
    ``HYBRID_TRANSFORMER_FWD_IN_BCKWD`` (the forward pass recomputed in the backward pass; the
    mapping note says so). ``max_iteration_time_ns`` (ns; required by ``min_cost``) and
    ``max_network_cost_usd`` ($) are optional caps. ``communicator=None`` derives the mapping from
    the workload's ASTRA-sim header (:mod:`hieropt.model.mapping`). ``cost`` is required (its
    default None only lets ``communicator`` be left out: ``load_libra(network, workload,
    cost=...)``).

    Raises:
        InputError: any bad file, flag or constraint; no ``cost``.
    """
    if cost is None:
        raise InputError("cost", None, "no cost model file given (it is required)",
                         'pass LIBRA\'s cost model file\'s path, e.g. cost="4d_cost_model.yml"')
    if objective not in OBJECTIVES:
        raise InputError(
            "objective",
            None,
            f"unknown objective {objective!r}",
            f"use one of {', '.join(OBJECTIVES)}",
        )
    for path, what in ((network, "network"), (workload, "workload"), (communicator, "communicator"),
                       # a missing file or a folder: the reader's message, before numpy loads
                       (cost, "cost model")):
        if path is not None and not Path(path).is_file():
            read_text(Path(path), what)
    from ..model.mapping import derive_mapping
    from ..spec.constraint_text import parse_constraint
    from .astrasim1 import read_workload
    from .libra import read_communicator, read_cost_model, read_network

    net = read_network(network)
    wl = read_workload(workload)
    note = None
    if communicator is None:
        mapping, why = derive_mapping(wl, net, str(workload))
        note = f"mapping derived from the workload header: {why}"
    else:
        mapping = read_communicator(communicator, net)
    cm = read_cost_model(cost)
    cons = tuple(parse_constraint(t, net.n_dims, "constraints") for t in constraints)
    loop = "no_overlap"
    if wl.header is not None and wl.header.policy == FWD_IN_BCKWD:
        loop = "recompute"
        why = (f"loop recompute: the workload's header {FWD_IN_BCKWD} recomputes every layer's "
               "forward pass in the backward pass (LIBRA's no_overlap loop, which these flags take "
               "otherwise, would leave it out); an instance file sets training_loop")
        note = why if note is None else f"{note}; {why}"
    try:
        return instance_from(
            str(network),
            name=name or Path(workload).stem,
            network=net,
            workload=wl,
            mapping=mapping,
            mapping_note=note,
            cost=cm,
            constraints=cons,
            bounds=None,
            objective=objective,
            training_loop=loop,
            max_iteration_time_ns=max_iteration_time_ns,
            max_network_cost_usd=max_network_cost_usd,
        )
    except InputError as e:
        # the communicator's groups
        if communicator is not None and e.field and e.field.startswith("mapping"):
            raise e.with_source(communicator) from None
        # a price missing for the network's Switch: the cost file's fault
        if e.field and e.field.startswith("cost."):
            raise e.with_source(cost) from None
        m = re.fullmatch(r"network\.dims\[(\d+)\]\.cost_class", e.field or "")
        # a cost class the cost model lacks: name the network file's own key, and the cost file
        if m:
            raise InputError(
                network, f"CostDimension[{m[1]}]", e.problem, f"{e.fix} ({cost})"
            ) from None
        raise


__all__ = ["load_libra"]
