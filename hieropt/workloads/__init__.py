"""Workload generators: build :class:`hieropt.spec.Workload` objects from a few model and system
parameters."""
