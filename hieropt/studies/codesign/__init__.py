"""Co-design of the training plan with the network: plans (:mod:`.plans`), candidates with proven
bounds (:mod:`.candidates`), and the exact pruned search (:mod:`.search`)."""

from .search import COLUMNS, Codesign, codesign

__all__ = ["codesign", "Codesign", "COLUMNS"]
