"""Studies built from many solves: the comparison against rules of thumb (:mod:`.compare`, :mod:`.heuristics`) and
the topology-shape exploration (:mod:`.explore`). They call :mod:`hieropt.solvers`, never :mod:`hieropt.api`."""
