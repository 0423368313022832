"""Exact solvers on HiGHS; :func:`hieropt.solvers.objectives.solve` is the one entry for every
objective and returns a verified :class:`hieropt.result.Solution`."""
