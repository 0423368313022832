"""Builders of small provisioning problems as files (instance TOML + ASTRA-sim 1.0 workload +
catalog TOML), read through the public readers so the tests exercise the same path as the command
line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import hieropt
from hieropt.spec import Instance

Layer = tuple[float, str, float, float, str, float, float, str, float]
"""(forward ns, collective, bytes, input-grad ns, collective, bytes, weight-grad ns, collective,
bytes)."""


def instance_text(
    dims: Sequence[tuple],
    mapping: dict[str, Sequence[int]],
    constraints: Sequence[str] = (),
    bounds: Sequence[dict] = (),
    training_loop: str = "no_overlap",
    dimension_mode: str = "concurrent",
) -> str:
    """An instance TOML naming ``wl.txt``; every cost class gets LIBRA prices (unused by
    provisioning). A dimension is (block, NPUs, cost class) or (block, NPUs, cost class, latency
    ns)."""
    lines = [
        'name = "t"',
        'objective = "performance"',
        f'training_loop = "{training_loop}"',
        'workload = "wl.txt"',
        f'dimension_mode = "{dimension_mode}"',
        "constraints = [" + ", ".join(f'"{c}"' for c in constraints) + "]",
    ]
    if bounds:
        lines.append(
            "bounds = ["
            + ", ".join("{" + ", ".join(f"{k} = {v}" for k, v in b.items()) + "}" for b in bounds)
            + "]"
        )
    lines += ["", "[network]", "dims = ["]
    lines += [f'  {{ block = "{d[0]}", npus = {d[1]}, cost_class = "{d[2]}"'
              + (f", latency_ns = {d[3]:g}" if len(d) > 3 else "") + " }," for d in dims]
    lines += ["]", "", "[mapping]"]
    lines += [f"{k} = [{', '.join(str(g) for g in v)}]" for k, v in mapping.items()]
    for c in dict.fromkeys(d[2] for d in dims):
        switch = any(d[0] == "Switch" and d[2] == c for d in dims)
        lines += ["", f"[cost.{c}]", "link_usd_per_gbps = 1.0"]
        if switch:
            lines += ["switch_usd_per_gbps = 1.0", "nic_usd_per_gbps = 1.0"]
    return "\n".join(lines) + "\n"


def workload_text(layers: Sequence[Layer]) -> str:
    """ASTRA-sim 1.0 text without header: one line per layer."""
    return "".join(
        f"L{i} -1 " + " ".join(f"{x:g}" if not isinstance(x, str) else x for x in layer) + " 0\n"
        for i, layer in enumerate(layers)
    )


def write_problem(
    tmp: Path,
    dims,
    mapping,
    layers,
    catalog: str,
    constraints=(),
    bounds=(),
    name: str = "p",
    **options: str,
) -> tuple[Path, Path]:
    """Write instance, workload and catalog under ``tmp/name``; return (instance path, catalog
    path)."""
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "wl.txt").write_text(workload_text(layers), encoding="utf-8")
    inst = d / "inst.toml"
    inst.write_text(instance_text(dims, mapping, constraints, bounds, **options), encoding="utf-8")
    cat = d / "catalog.toml"
    cat.write_text(catalog, encoding="utf-8")
    return inst, cat


def load(tmp: Path, *args, **kwargs) -> tuple[Instance, Path]:
    """:func:`write_problem`, then load the instance."""
    inst, cat = write_problem(tmp, *args, **kwargs)
    return hieropt.load_instance(inst), cat
