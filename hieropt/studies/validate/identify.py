"""Whether the calibration runs determine the fitted fields: checked numerically at the best fit,
so that ``hieropt calibrate`` never reports as fitted a value the runs say nothing about.

At the fit x (k fields), each field j is stepped by :data:`STEP` of its value (of its range when
the value is 0; inwards from a bound) and every run predicted again: the column j of the scaled
Jacobian J (runs x k) is the relative change of each run's predicted time per relative change of
the field, (dp_i / p_i) / (dx_j / x_j).

- A field whose step moves no prediction by more than :data:`MOVES` (relative) is one the runs do
  not depend on (``attention_efficiency`` for a model without FlashAttention): refused, naming the
  field and the runs that would determine it (:data:`DETERMINED_BY`). Whatever value the fit
  reports is its start value.
- Fields the runs do not separate: with each column of J scaled to unit length, its smallest
  singular value below :data:`SEPARATION` (for two fields, the sine of the angle between their
  columns: 1e-3 is 0.06 degrees) means some combination of the fields moves no prediction, so a
  line (or more) of values fits as well as the one reported. Refused, naming the fields of that
  combination (the right singular vector's entries of at least :data:`IN_COMBINATION` in size),
  with the fix: fit fewer fields, or add runs that separate them. Refused rather than noted: the
  values reported would be one arbitrary point of that line (fitted on two runs of one plan at two
  bandwidths, the pairs matrix_efficiency and hbm_efficiency, matrix_efficiency and
  kernel_overhead_us, hbm_efficiency and kernel_overhead_us each fit within 0.2 % with different
  values), and a calibrated file is used as the accelerator's figures.

The shipped multi-field fits stay well above the threshold: on Narayanan et al.'s Table 1 (ten
runs) matrix_efficiency with hbm_efficiency 0.33, with kernel_overhead_us 0.18, and with
hbm_efficiency and gemm_half_gflop 0.13; matrix_efficiency with hbm_efficiency on the two one-node
A100 runs 0.009 (the HBM efficiency at its bound: a weak but real separation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...errors import InputError
from ...io.runs import Run
from ...names import with_flag
from .checks import runs_text

STEP = 0.01
"""The step of each field, as a fraction of its fitted value (of its range when the value is 0)."""
MOVES = 1e-9
"""A field whose step changes no run's predicted time by more than this fraction is one the runs
do not depend on."""
SEPARATION = 1e-3
"""The smallest singular value of the scaled Jacobian with unit columns below which the fitted
fields are not separated by the runs."""
IN_COMBINATION = 0.1
"""A field whose entry in the inseparable combination (a unit vector) is at least this large in
size is named as one of the fields the runs do not separate."""
DETERMINED_BY = {
    "efficiency": "runs whose compute takes a share of the iteration time",
    "matrix_efficiency": "runs whose GEMMs take a share of the iteration time",
    "gemm_half_gflop": "runs of small GEMMs (small micro-batch sizes or narrow models), on the "
    "ramp of the GEMM efficiency curve",
    "hbm_efficiency": "runs whose element-wise (memory-bound) kernels take a share of the "
    "iteration time",
    "kernel_overhead_us": "runs of many small kernels (several micro-batch sizes: the overhead is "
    "paid per kernel launched)",
    "attention_efficiency": "runs with flash_attention = true (the fused FlashAttention kernel it "
    "times)",
}
"""What runs would determine each calibration field, for the message refusing a field the runs
do not depend on."""


def scaled_jacobian(
    predict: Callable[[np.ndarray], Sequence[float]],
    x: np.ndarray,
    lower: Sequence[float],
    upper: Sequence[float],
) -> np.ndarray:
    """The scaled Jacobian (module docstring) of ``predict`` (fields (k,) -> predicted times (n,),
    ms) at ``x`` within the box [``lower``, ``upper``]: shape (n, k), entry (i, j) the relative
    change of prediction i per relative change of field j (per fraction of the range for a field
    at 0), by a forward step of :data:`STEP` (backward at the upper bound)."""
    base = np.asarray(predict(x), dtype=float)
    cols = []
    for j in range(x.size):
        lo, hi = float(lower[j]), float(upper[j])
        scale = abs(float(x[j])) or (hi - lo)
        h = STEP * scale
        if x[j] + h > hi and x[j] - h >= lo:
            h = -h
        y = x.copy()
        y[j] = x[j] + h
        moved = np.asarray(predict(y), dtype=float)
        cols.append((moved - base) / base / (h / scale))
    return np.array(cols).T


def check_identifiable(
    runs: Sequence[Run],
    names: Sequence[str],
    jacobian: np.ndarray,
    values: dict[str, float],
    distinct: int,
) -> None:
    """Refuse a fit whose runs do not determine its fields (module docstring).

    Args:
        runs: the calibration runs (named by their files); ``distinct``: how many distinct plans
            they hold.
        names: the fitted fields, in the Jacobian's column order; ``values``: the fitted values.
        jacobian: :func:`scaled_jacobian` at the fit, shape (runs, fields).

    Raises:
        InputError: ``fields`` (``--fit``): a field no run's prediction depends on (naming it and
            the runs that would determine it), or fields the runs do not separate (naming them,
            the singular value and the fix).
    """
    files = ", ".join(dict.fromkeys(str(r.path) for r in runs))
    on = f"{runs_text(distinct, len(runs))} of {files}"
    moves = np.abs(jacobian).max(axis=0) * STEP
    for name, m in zip(names, moves, strict=True):
        if m <= MOVES:
            raise InputError(
                "fields",
                None,
                f"{name}: no prediction of the {on} depends on it (a step of {STEP:.0%} moves "
                f"none by more than {MOVES:g}): the runs do not determine it, and the value the "
                f"fit would report ({values[name]:.4g}) is its start value",
                f"leave {name} out of {with_flag('fields')}, or add "
                f"{DETERMINED_BY.get(name, 'runs that time it')}",
            )
    if len(names) < 2:
        return
    unit = jacobian / np.linalg.norm(jacobian, axis=0)
    _, s, vt = np.linalg.svd(unit, full_matrices=False)
    if s[-1] >= SEPARATION:
        return
    mixed = [n for n, w in zip(names, vt[-1], strict=True) if abs(w) >= IN_COMBINATION]
    fitted = ", ".join(f"{n} = {values[n]:.4g}" for n in mixed)
    raise InputError(
        "fields",
        None,
        f"{' and '.join(mixed)} are not separated by the {on}: changed together in some "
        "proportion they move no predicted time (the smallest singular value of the predictions' "
        f"Jacobian, columns scaled to unit length, is {s[-1]:.2g}, below {SEPARATION:g}), so "
        f"other values along it fit as well as the ones found ({fitted})",
        f"fit fewer fields (one of {', '.join(mixed)}), or add runs that separate them: several "
        "micro-batch sizes, model widths and recompute strategies (runs that differ only in the "
        "network or its bandwidths move every compute field alike)",
    )


__all__ = [
    "STEP",
    "MOVES",
    "SEPARATION",
    "IN_COMBINATION",
    "DETERMINED_BY",
    "scaled_jacobian",
    "check_identifiable",
]
