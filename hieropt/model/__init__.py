"""The physics of a design: per-dimension traffic, the time model and its evaluator T(B), network
cost, the parallel mapping and the parts catalog. numpy only: no Pyomo, no solver."""
