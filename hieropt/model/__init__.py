"""The physics of the network: traffic, timing, cost, mapping, parts and fabrics (no solver imports)."""
