"""Tables of ``hieropt workload show``: the ASTRA-sim header, every layer's compute and collectives,
and totals per phase and per collective type (ns, bytes per NPU). Returns values; never prints."""

from __future__ import annotations

from collections import defaultdict

from rich.table import Table

from ..names import PHASES
from ..spec.workload import Workload

_PHASE_LABEL = {"forward": "forward", "input_grad": "input-grad", "weight_grad": "weight-grad"}


_HEADER_FIELDS = (
    ("model_parallel_npu_group", "model_parallel_NPU_group"),
    ("last_bottom_layer", "last bottom layer"),
    ("checkpoints", "checkpoints"),
    ("checkpoint_initiates", "checkpoint_initiates"),
    ("ep", "ep"),
    ("pp", "pp"),
    ("vpp", "vpp"),
    ("ga", "ga"),
    ("all_gpus", "all_gpus"),
    ("pp_comm_bytes", "pp_comm (bytes)"),
    ("declared_layers", "layer count (line 2)"),
)


def _num(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.3f}"


# --------------------------------------------------------------------------------------------- show
def header_lines(w: Workload) -> list[str]:
    """The workload's name, size, its further pipeline stages (and how the iteration time combines
    them: composed by the schedule when the stages' pipeline positions are known,
    :func:`hieropt.model.pipeline.composition`; else the slowest stage's), and its header, field by
    field."""
    lines = [f"workload {w.name}: {len(w.layers):,} layers"]
    if w.more_stages:
        lines.append(
            f"pipeline stages: {len(w.stages)} distinct, this one (the most compute; shown "
            "below) and "
            + ", ".join(f"{s.name} ({len(s.layers):,} layers)" for s in w.more_stages)
            + (
                "; loop step composes them by the schedule (each stage's forwards and backwards "
                "at its own pace, the steady state at the slowest stage's), so the iteration time "
                "can be below the slowest stage's time as if every stage were it"
                if w.pipeline_stages
                else "; the iteration time is the slowest stage's at the bandwidths in question"
            )
        )
    h = w.header
    if h is None:
        lines.append("header: none (a header-less LIBRA file, or a generated workload without one)")
        return lines
    lines.append(f"header: {h.line}")
    lines.append(f"  policy: {h.policy}")
    for key, label in _HEADER_FIELDS:
        v = getattr(h, key)
        if v is not None:
            text = (
                ", ".join(str(i) for i in v)
                if isinstance(v, tuple)
                else _num(v)
                if key == "pp_comm_bytes"
                else v
            )
            lines.append(f"  {label}: {text if text != '' else '(none)'}")
    return lines


def layer_table(w: Workload) -> Table:
    """One row per layer: compute ns and collective (bytes) of every phase, update ns (and the
    per-layer policy)."""
    t = Table(title="Layers (compute ns; collective and bytes per NPU)", title_justify="left")
    t.add_column("#", justify="right")
    t.add_column("layer", overflow="fold")
    for p in PHASES:
        t.add_column(f"{_PHASE_LABEL[p]} ns", justify="right", overflow="fold")
        t.add_column(f"{_PHASE_LABEL[p]} collective", overflow="fold")
    t.add_column("update ns", justify="right")
    customized = any(layer.policy is not None for layer in w.layers)
    if customized:
        t.add_column("policy", overflow="fold")
    for i, layer in enumerate(w.layers):
        row = [str(i), layer.name]
        for p in PHASES:
            ph = getattr(layer, p)
            coll = "-" if ph.collective.value == "NONE" and ph.size_bytes == 0 else \
                f"{ph.collective_name} {_num(ph.size_bytes)}"
            row += [_num(ph.compute_ns), coll]
        row.append(_num(layer.update_ns))
        if customized:
            row.append(layer.policy or "")
        t.add_row(*row)
    return t


def totals(
    w: Workload,
) -> tuple[dict[str, float], dict[tuple[str, str], list[float]], dict[str, list[float]]]:
    """(compute ns per phase, [count, bytes] per (phase, collective), [count, bytes] per
    collective); collectives by their written name (with scope), NONE left out."""
    compute = {p: 0.0 for p in PHASES}
    by_phase: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    by_type: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for layer in w.layers:
        for p in PHASES:
            ph = getattr(layer, p)
            compute[p] += ph.compute_ns
            if ph.collective.value != "NONE":
                for acc in (by_phase[(p, ph.collective_name)], by_type[ph.collective_name]):
                    acc[0] += 1
                    acc[1] += ph.size_bytes
    return compute, dict(by_phase), dict(by_type)


def totals_tables(w: Workload) -> tuple[Table, Table]:
    """Totals per phase (compute, and count and bytes of each collective) and per collective
    type."""
    compute, by_phase, by_type = totals(w)
    t = Table(title="Totals per phase", title_justify="left")
    for col in ("phase", "compute ns", "collective", "count", "bytes"):
        t.add_column(col, justify="left" if col in ("phase", "collective") else "right")
    for p in PHASES:
        rows = sorted((k[1], v) for k, v in by_phase.items() if k[0] == p)
        if not rows:
            t.add_row(_PHASE_LABEL[p], _num(compute[p]), "none", "0", "0")
        for j, (name, (count, size)) in enumerate(rows):
            t.add_row(
                _PHASE_LABEL[p] if j == 0 else "",
                _num(compute[p]) if j == 0 else "",
                name,
                f"{count:,}",
                _num(size),
            )
    t.add_row(
        "all",
        _num(sum(compute.values())),
        "",
        f"{sum(int(v[0]) for v in by_type.values()):,}",
        _num(sum(v[1] for v in by_type.values())),
    )
    u = Table(title="Totals per collective type", title_justify="left")
    for col in ("collective", "count", "bytes"):
        u.add_column(col, justify="left" if col == "collective" else "right")
    for name, (count, size) in sorted(by_type.items()):
        u.add_row(name, f"{count:,}", _num(size))
    if not by_type:
        u.add_row("none", "0", "0")
    return t, u
