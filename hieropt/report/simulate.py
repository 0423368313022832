"""Presentation of a simulator check (:class:`hieropt.studies.simulate.SimulationStudy`): a rich
table and the JSON dict (per allocation ``predicted_own_model_ns``, what ``solve`` optimised,
``simulated_iteration_time_ns`` and ``predicted_iteration_time_ns``, hieropt in the simulator's
exact mode)."""

from __future__ import annotations

from rich.table import Table

from ..studies.simulate import SimulationStudy


def simulate_table(study: SimulationStudy) -> Table:
    """Per allocation: the instance's own prediction (what solve optimised) vs simulated, ms, with
    the prediction's error relative to the simulator, (predicted - simulated) / simulated in %
    (the one definition of the caption's largest difference, the tolerance's and the exit-3
    line's: :attr:`hieropt.studies.simulate.Simulated.own_error`), and hieropt in the
    simulator's exact mode beside them."""
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
        "predicted vs simulated",
        "simulator-mode ms",
    ):
        t.add_column(col, justify="left" if col in ("allocation", "GB/s per NPU") else "right")
    for _, label, r in study.rows:
        t.add_row(
            label,
            ", ".join(f"{b:.4g}" for b in r.bw_gbps),
            f"{r.predicted_own_ns / 1e6:,.4f}",
            f"{r.simulated_iteration_time_ns / 1e6:,.4f}",
            _percent((r.predicted_own_ns - r.simulated_iteration_time_ns)
                     / r.simulated_iteration_time_ns),
            f"{r.predicted_iteration_time_ns / 1e6:,.4f}",
        )
    fastest = "" if not any(n == "optimum" for n, *_ in study.rows) else (
        "; the optimum is the simulator's fastest" if study.optimum_fastest else
        "; the optimum is NOT the simulator's fastest")
    t.caption = (
        "predicted: the instance's own model (what solve optimised); predicted vs simulated: "
        "(predicted - simulated) / simulated, the prediction's error relative to the simulator; "
        "simulator-mode: hieropt with one collective in flight and latency per chunk. Tolerance "
        f"{100 * study.tolerance:g} % on that error's size, largest "
        f"{100 * study.worst_error:.3g} %{fastest}."
        + (
            f" The simulator cannot run in the mode solved: {study.mismatch}."
            if study.mismatch
            else ""
        )
    )
    return t


def _percent(x: float) -> str:
    """A relative difference ``x`` as a signed percent with two decimals (``-7.11 %``, ``+0.00 %``
    within 0.005 %; the caption's largest difference is its size, ``7.11 %``)."""
    return f"{100 * x:+.2f} %"


def simulate_dict(study: SimulationStudy) -> dict:
    """The study as a JSON-ready dict: :meth:`hieropt.studies.simulate.SimulationStudy.to_dict`."""
    return study.to_dict()
