"""The problem statement: frozen, validated pydantic models of a network, a workload, a mapping, a cost model and
the design constraints, joined in :class:`Instance` (plus the shape space of ``hieropt explore``). Imports only
:mod:`hieropt.errors`, :mod:`hieropt.units` and pydantic; every name is re-exported here."""

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
from .base import Block, Frozen, NonNegFloat
from .instance import Bound, CostClass, CostModel, Instance, Job, LinearConstraint, Mapping, Pipeline, StepSchedule
from .network import Collective, Dimension, Network
from .workload import Layer, LayerTable, Phase, PhaseTable, Workload, WorkloadHeader

__all__ = ["ALGORITHMS", "BLOCKS", "COLLECTIVE_SCOPES", "DEFAULT_ALGORITHM", "DLRM_POLICIES", "LAYER_POLICIES",
           "OBJECTIVES", "PHASES", "POLICIES", "SENSES", "TRAINING_LOOPS", "TRANSFORMER_POLICIES", "Block", "Bound",
           "Frozen", "Collective", "CostClass", "CostModel", "Dimension", "Instance", "Job", "Layer",
           "LinearConstraint", "LayerTable", "Mapping", "Network", "NonNegFloat", "Phase", "PhaseTable", "Pipeline",
           "StepSchedule",
           "Workload", "WorkloadHeader"]
