"""The physics of a training step: memory per NPU (and, after the layout change, traffic, timing, cost, mapping)."""
