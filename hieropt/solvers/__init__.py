"""Exact solvers; each returns raw results that :mod:`hieropt.api` turns into a verified :class:`Solution`."""
