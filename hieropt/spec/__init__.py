"""The problem statement: frozen, validated pydantic models of a network, a workload, a mapping, a
cost model and the design constraints, joined in :class:`Instance` (plus the shape space of
``hieropt explore``). Imports only :mod:`hieropt.errors`, :mod:`hieropt.units`, numpy and pydantic;
every name is re-exported here.

The re-exports are imported on first use (module ``__getattr__``): ``from hieropt.spec import
Network`` loads :mod:`.network` (pydantic only), not the workload tables (numpy), so a bad network
field of an instance file is reported before numpy is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..lazy import lazy_attribute
from ..names import (
    ALGORITHMS,
    BLOCKS,
    COLLECTIVE_SCOPES,
    DEFAULT_ALGORITHM,
    DLRM_POLICIES,
    LAYER_POLICIES,
    OBJECTIVES,
    PHASES,
    POLICIES,
    SENSES,
    TRAINING_LOOPS,
    TRANSFORMER_POLICIES,
)

_MODULES = {
    "base": ("Block", "Frozen", "NonNegFloat"),
    "instance": (
        "Bound",
        "CostClass",
        "CostModel",
        "Instance",
        "Job",
        "LinearConstraint",
        "Pipeline",
    ),
    "mapping": ("Mapping",),
    "network": ("Collective", "Dimension", "Network"),
    "training": ("Training",),
    "workload": (
        "Layer", "LayerTable", "Phase", "PhaseTable", "StepSchedule", "Workload", "WorkloadHeader"
    ),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}
"""Re-exported model name -> the submodule that defines (or imports) it."""

__all__ = [
    "ALGORITHMS",
    "BLOCKS",
    "COLLECTIVE_SCOPES",
    "DEFAULT_ALGORITHM",
    "DLRM_POLICIES",
    "LAYER_POLICIES",
    "OBJECTIVES",
    "PHASES",
    "POLICIES",
    "SENSES",
    "TRAINING_LOOPS",
    "TRANSFORMER_POLICIES",
    "Block",
    "Bound",
    "Frozen",
    "Collective",
    "CostClass",
    "CostModel",
    "Dimension",
    "Instance",
    "Job",
    "Layer",
    "LinearConstraint",
    "LayerTable",
    "Mapping",
    "Network",
    "NonNegFloat",
    "Phase",
    "PhaseTable",
    "Pipeline",
    "StepSchedule",
    "Training",
    "Workload",
    "WorkloadHeader",
]


def __getattr__(name: str) -> Any:
    """Import a re-exported model name (or a submodule such as ``hieropt.spec.space``) on first
    use."""
    value = globals()[name] = lazy_attribute(__name__, _HOME, name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # static checkers and IDEs see the eager imports
    from .base import Block, Frozen, NonNegFloat
    from .instance import (
        Bound,
        CostClass,
        CostModel,
        Instance,
        Job,
        LinearConstraint,
        Pipeline,
    )
    from .mapping import Mapping
    from .network import Collective, Dimension, Network
    from .training import Training
    from .workload import (
        Layer,
        LayerTable,
        Phase,
        PhaseTable,
        StepSchedule,
        Workload,
        WorkloadHeader,
    )
