"""Studies built from many solves: the comparison against rules of thumb (:mod:`.compare`,
:mod:`.heuristics`, a heuristic's placement into the feasible set :mod:`.placement`), the
topology-shape exploration (:mod:`.explore`), the co-design of the training plan with the network
(:mod:`.codesign`) and the cluster size it buys (:mod:`.sizing`), the knee of the time-cost
trade-off (:mod:`.knee`), the check against ASTRA-sim (:mod:`.simulate`, :mod:`.simulator_run`)
and predictions against measured runs (:mod:`.validate`). They call :mod:`hieropt.solvers`,
never :mod:`hieropt.api`."""
