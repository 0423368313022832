"""Exact solvers: cutting planes on one LP, solved by DAQP while it is small (:mod:`.dense_lp`)
and by HiGHS after (:mod:`.highs`), and the provisioning MILP on HiGHS;
:func:`hieropt.solvers.objectives.solve` is the one entry for every objective (it walks the route
tables of :mod:`.routes` and :mod:`.procurement`) and returns a verified
:class:`hieropt.result.Solution`."""
