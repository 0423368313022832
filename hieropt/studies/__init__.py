"""Studies built from many solves: the comparison against rules of thumb (:mod:`.compare`,
:mod:`.heuristics`), the topology-shape exploration (:mod:`.explore`) and the validation against
ASTRA-sim (:mod:`.simulate`). They call :mod:`hieropt.solvers`, never :mod:`hieropt.api`."""
