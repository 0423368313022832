"""Presentation of a simulator check (:class:`hieropt.studies.simulate.SimulationStudy`): a rich
table and the JSON dict (per allocation ``predicted_own_model_ns``, what ``solve`` optimised,
``simulated_iteration_time_ns`` and ``predicted_iteration_time_ns``, hieropt in the simulator's
exact mode)."""

from __future__ import annotations

from rich.table import Table

from ..studies.simulate import SimulationStudy


def simulate_table(study: SimulationStudy) -> Table:
    """Per allocation: the instance's own prediction (what solve optimised) vs simulated, ms, with
    their ratio, and hieropt in the simulator's exact mode beside them."""
    t = Table(
        title=f"ASTRA-sim vs hieropt: {study.instance} ({study.solved_text} as solved; "
        f"{study.chunks} "
        f"chunk{'s' if study.chunks != 1 else ''} per collective)",
        title_justify="left",
    )
    for col in (
        "allocation",
        "GB/s per NPU",
        "predicted ms",
        "simulated ms",
        "simulated / predicted",
        "simulator-mode ms",
    ):
        t.add_column(col, justify="left" if col in ("allocation", "GB/s per NPU") else "right")
    for _, label, r in study.rows:
        t.add_row(
            label,
            ", ".join(f"{b:.4g}" for b in r.bw_gbps),
            f"{r.predicted_own_ns / 1e6:,.4f}",
            f"{r.simulated_iteration_time_ns / 1e6:,.4f}",
            f"{r.own_ratio:.6f}",
            f"{r.predicted_iteration_time_ns / 1e6:,.4f}",
        )
    fastest = "" if not any(n == "optimum" for n, *_ in study.rows) else (
        "; the optimum is the simulator's fastest" if study.optimum_fastest else
        "; the optimum is NOT the simulator's fastest")
    t.caption = (
        "predicted: the instance's own model (what solve optimised); simulator-mode: "
        "hieropt with one "
        f"collective in flight and latency per chunk. Tolerance {100 * study.tolerance:g} "
        "%, largest "
        f"difference {100 * study.worst_error:.3g} %{fastest}."
        + (
            f" The simulator cannot run in the mode solved: {study.mismatch}."
            if study.mismatch
            else ""
        )
    )
    return t


def simulate_dict(study: SimulationStudy) -> dict:
    """The study as a JSON-ready dict: :meth:`hieropt.studies.simulate.SimulationStudy.to_dict`."""
    return study.to_dict()
