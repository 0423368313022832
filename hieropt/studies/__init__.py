"""Studies: many solves (compare, explore, co-design)."""
