"""matplotlib figures (imported lazily, Agg backend): the Pareto front of ``hieropt pareto`` and the
figures of ``hieropt report``. Each function writes the file it is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..spec import Instance
from ..units import RELATIVE_UNIT
from .common import fmt_gap


def time_axis(unit: str) -> tuple[float, str]:
    """The divisor and label of a time axis in ``unit``: ns shown as ms, or
    :data:`hieropt.units.RELATIVE_UNIT` (workloads weighted by shares of hours) as it is."""
    if unit == RELATIVE_UNIT:
        return 1.0, "hour-weighted ratio to the own optima"
    return 1e6, "iteration time (ms)"


def plot_front(instance: Instance, front: Any, path: Any) -> None:
    """Draw the front (cost $M vs iteration time ms, or the hour-weighted ratio of workloads
    weighted by shares of hours: ``front.time_unit``) with the two optima marked, to a PNG at
    ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    scale, label = time_axis(getattr(front, "time_unit", "ns"))
    cost = [p.network_cost_usd / 1e6 for p in front.points]
    time_ms = [p.iteration_time_ns / scale for p in front.points]
    ax.plot(cost, time_ms, "o-", ms=3, lw=1.2, label="Pareto front (fastest network per budget)")
    f = front.fastest
    if f is not None:
        ax.plot(f.network_cost_usd / 1e6, f.iteration_time_ns / scale, "s", ms=9, color="tab:red",
                label="performance optimum")
    b = front.best_per_cost
    if b is not None:
        ax.plot(b.network_cost_usd / 1e6, b.iteration_time_ns / scale, "*", ms=13,
                color="tab:green",
                label="performance-per-cost optimum")
    ax.set_xlabel("network cost (M$)")
    ax.set_ylabel(label)
    # (a cheap end that starves a dimension)
    if time_ms and min(time_ms) > 0 and max(time_ms) > 100 * min(time_ms):
        ax.set_yscale("log")
        ax.set_ylabel(label.replace("(ms)", "(ms, log scale)") if "(ms)" in label
                      else f"{label} (log scale)")
    ax.set_title(
        f"{instance.name}: {instance.network.npus_total:,} NPUs, {instance.network.n_dims} "
        "dimensions"
    )
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    save(fig, path)


FIGURES = ("bandwidth.png", "utilisation.png", "front.png", "gap.png")


_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def save(fig: Any, path: Any) -> None:
    """Save the matplotlib figure ``fig`` to ``path`` (its suffix names the format) atomically
    (:func:`hieropt.io.files.replacing`: an earlier file there stays intact when the write fails)
    and close it.

    Raises:
        OutputError: the file could not be written.
    """
    import matplotlib.pyplot as plt

    from ..io.files import replacing

    try:
        with replacing(path) as tmp:
            fig.savefig(tmp)
    finally:
        plt.close(fig)


def _colors(labels: list[str]) -> list[str]:
    return [
        "#222222" if lab == "exact optimum" else _PALETTE[i % len(_PALETTE)]
        for i, lab in enumerate(labels)
    ]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_grouped(data: dict[str, Any], path: Any, ylabel: str) -> None:
    """Grouped bars: one group per dimension, one bar per design."""
    plt = _plt()
    series = data["series"]
    n, D = len(series), len(data["dims"])
    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=110)
    width = 0.8 / max(n, 1)
    x = np.arange(D)
    for i, (s, c) in enumerate(zip(series, _colors([s["label"] for s in series]), strict=True)):
        ax.bar(x - 0.4 + width * (i + 0.5), s["values"], width, label=s["label"], color=c,
               edgecolor="black" if s["label"] == "exact optimum" else "none", linewidth=0.6)
    ax.set_xticks(x, data["dims"])
    top = max((max(s["values"]) for s in series if s["values"]), default=1.0)
    ax.set_ylim(0, top * (1.12 + 0.07 * ((n + 3) // 4)))  # headroom for the legend
    ax.set_ylabel(ylabel)
    ax.set_title(data["title"])
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=min(n, 4))
    fig.tight_layout()
    save(fig, path)


def front_points_ylim(data: dict[str, Any]) -> tuple[float, float]:
    """The time axis's limits of :func:`plot_front_points` (ms, or the hour-weighted ratio, as
    :func:`time_axis` of ``data["time_unit"]``): zoomed on the designs, whose slowest sets the top
    (the front's cheapest end can be orders of magnitude slower), from 5 % of their span below
    the fastest time to 60 % above the slowest design, in the axis's unit."""
    scale, _ = time_axis(data.get("time_unit", "ns"))
    pts = data["points"]
    times = [p["time_ns"] / scale for p in pts] + [t / scale for t in data["front_time_ns"]]
    top = max(p["time_ns"] for p in pts) / scale
    low = min(times)
    return low - 0.05 * (top - low) - 1e-9, top + 0.6 * (top - low) + 1e-9


def plot_front_points(data: dict[str, Any], path: Any) -> None:
    """The exact Pareto front (cost M$ vs iteration time ms, or the hour-weighted ratio:
    ``data["time_unit"]``) with every design as a point."""
    plt = _plt()
    scale, label = time_axis(data.get("time_unit", "ns"))
    fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
    ax.plot(
        np.array(data["front_cost_usd"]) / 1e6,
        np.array(data["front_time_ns"]) / scale,
        "-",
        color="#999999",
        lw=1.5,
        label="exact Pareto front (fastest network per budget)",
    )
    pts = data["points"]
    for p, c in zip(pts, _colors([p["label"] for p in pts]), strict=True):
        opt = p["label"] == "exact optimum"
        ax.plot(
            p["cost_usd"] / 1e6,
            p["time_ns"] / scale,
            "*" if opt else "o",
            ms=14 if opt else 8,
            color=c,
            markeredgecolor="black",
            label=p["label"],
            zorder=3,
        )
    iso = data.get("iso_time_x_cost")
    if iso:  # the designs as good as the optimum per dollar lie on time = iso / cost
        c = np.linspace(
            min(p["cost_usd"] for p in pts) * 0.5, max(p["cost_usd"] for p in pts) * 1.05, 200
        )
        ax.plot(c / 1e6, iso / c / scale, "--", color="#222222", lw=0.8, alpha=0.6,
                label="same time x cost as the optimum")
    ax.set_ylim(*front_points_ylim(data))
    ax.set_xlabel("network cost (M$)")
    ax.set_ylabel(label)
    ax.set_title(data["title"] + " (zoomed on the designs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, path)


def plot_gap(data: dict[str, Any], path: Any) -> None:
    """Horizontal bars of each heuristic's gap to the optimum (%), labelled with the table's
    strings."""
    plt = _plt()
    labels, gaps = data["labels"], data["gap_pct"]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(labels) + 1.4), dpi=110)
    y = np.arange(len(labels))
    colors = [_PALETTE[(i + 1) % len(_PALETTE)] for i in range(len(labels))]
    ax.barh(y, gaps, color=colors)
    for yi, g in zip(y, gaps, strict=True):
        ax.text(g, yi, " " + fmt_gap(g), va="center", fontsize=8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("gap to the exact optimum (%)")
    ax.set_title(data["title"])
    ax.grid(axis="x", alpha=0.3)
    ax.margins(x=0.18)
    fig.tight_layout()
    save(fig, path)


def write_figures(figs: dict[str, Any], out_dir: Path) -> list[Path]:
    """Draw every figure of :func:`hieropt.report.compare.figure_data` into ``out_dir``; returns
    the written paths."""
    out = []
    for name, data in figs.items():
        path = out_dir / name
        if name == "bandwidth.png":
            plot_grouped(data, path, "GB/s per NPU")
        elif name == "utilisation.png":
            plot_grouped(data, path, "utilisation (%)")
        elif name == "front.png":
            plot_front_points(data, path)
        elif name == "gap.png":
            plot_gap(data, path)
        out.append(path)
    return out
