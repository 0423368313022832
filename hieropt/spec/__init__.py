"""The problem statement: frozen, validated pydantic models of a network, a workload, a mapping, a cost model and
the design constraints, joined in :class:`Instance` (plus the shape space of ``hieropt explore``). Imports only
:mod:`hieropt.errors`, :mod:`hieropt.units` and pydantic; every name is re-exported here."""

from .models import (
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
    Block,
    Bound,
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Job,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    NonNegFloat,
    Phase,
    PhaseTable,
    Pipeline,
    Workload,
    WorkloadHeader,
)

__all__ = ["ALGORITHMS", "BLOCKS", "COLLECTIVE_SCOPES", "DEFAULT_ALGORITHM", "DLRM_POLICIES", "LAYER_POLICIES",
           "OBJECTIVES", "PHASES", "POLICIES", "SENSES", "TRAINING_LOOPS", "TRANSFORMER_POLICIES", "Block", "Bound",
           "Collective", "CostClass", "CostModel", "Dimension", "Instance", "Job", "Layer", "LinearConstraint",
           "Mapping", "Network", "NonNegFloat", "Phase", "PhaseTable", "Pipeline", "Workload", "WorkloadHeader"]
