"""Presentation of a simulator validation (:class:`hieropt.studies.simulate.SimulationStudy`): a rich table and the
JSON dict (keys ``predicted_iteration_time_ns``, ``simulated_iteration_time_ns`` per allocation)."""

from __future__ import annotations

from rich.table import Table

from ..studies.simulate import SimulationStudy


def simulate_table(study: SimulationStudy) -> Table:
    """Predicted (matching mode and the instance's own model) vs simulated per allocation, ms, with the ratio."""
    t = Table(title=f"ASTRA-sim vs hieropt: {study.instance} ({study.chunks} chunk"
                    f"{'s' if study.chunks != 1 else ''} per collective)", title_justify="left")
    for col in ("allocation", "GB/s per NPU", "predicted ms", "simulated ms", "simulated / predicted",
                "own model ms"):
        t.add_column(col, justify="left" if col in ("allocation", "GB/s per NPU") else "right")
    for _, label, r in study.rows:
        t.add_row(label, ", ".join(f"{b:.4g}" for b in r.bw_gbps), f"{r.predicted_iteration_time_ns / 1e6:,.4f}",
                  f"{r.simulated_iteration_time_ns / 1e6:,.4f}", f"{r.ratio:.6f}", f"{r.predicted_own_ns / 1e6:,.4f}")
    t.caption = (f"predicted: hieropt in the simulator's mode (one collective in flight, latency per chunk, "
                 f"{'sequential' if study.chunks == 1 else 'concurrent'} dimensions); own model: the instance's "
                 f"modes (what solve optimises). Tolerance {100 * study.tolerance:g} %; ranking "
                 f"{'the same' if study.same_ranking else 'DIFFERENT'}.")
    return t


def simulate_dict(study: SimulationStudy) -> dict:
    """The study as a JSON-ready dict."""
    return {
        "instance": study.instance,
        "chunks": study.chunks,
        "tolerance": study.tolerance,
        "agree": bool(study.agree),
        "ranking_predicted": list(study.ranking_predicted),
        "ranking_simulated": list(study.ranking_simulated),
        "same_ranking": study.same_ranking,
        "notes": list(study.notes),
        "allocations": [{
            "name": name, "label": label, "bw_gbps": list(r.bw_gbps),
            "predicted_iteration_time_ns": r.predicted_iteration_time_ns,
            "predicted_own_model_ns": r.predicted_own_ns,
            "simulated_iteration_time_ns": r.simulated_iteration_time_ns,
            "simulated_per_workload_ns": list(r.per_workload_ns),
            "ratio": r.ratio, "relative_error": r.relative_error,
            "within_tolerance": bool(r.relative_error <= study.tolerance),
        } for name, label, r in study.rows],
    }
