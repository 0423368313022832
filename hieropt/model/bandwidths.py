"""The bandwidth vector a caller gives the evaluator (:func:`hieropt.model.timing.evaluate`),
checked: one finite, non-negative number (GB/s per NPU and direction) per dimension."""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..spec.overrides import is_real


def check_bw(D: int, bw_gbps) -> np.ndarray:
    """``bw_gbps`` as a float array of the D dimensions' per-NPU bandwidths (GB/s), checked.

    Raises:
        InputError (naming ``bw_gbps``): not a sequence of D numbers, or an entry negative or not
            finite: every such dimension by its index, with its value and what is wrong with it.
    """
    if isinstance(bw_gbps, np.ndarray) and bw_gbps.shape == (D,) and bw_gbps.dtype == np.float64:
        bw = bw_gbps  # (the solvers' own arrays: the common case)
    else:
        bw = as_bw(bw_gbps, D)
    if not np.isfinite(bw).all() or (bw < 0).any():
        bad = [f"dimension {d}: {b:g} GB/s per NPU is "
               + ("not a number" if np.isnan(b) else "not finite" if np.isinf(b) else "negative")
               for d, b in enumerate(bw.tolist()) if not (math.isfinite(b) and b >= 0)]
        raise InputError("bw_gbps", None, "; ".join(bad),
                         f"give each of the {D} dimensions a finite bandwidth >= 0 in GB/s per "
                         "NPU, dimension 0 first (1e6 for a dimension with no limit)")
    return bw


def as_bw(bw_gbps, D: int) -> np.ndarray:
    """``bw_gbps`` as a float array of shape (D,); raises InputError (naming ``bw_gbps``) for
    anything else."""
    if isinstance(bw_gbps, dict | str | bytes) or not hasattr(bw_gbps, "__len__"):
        raise InputError("bw_gbps", None, "expected one bandwidth (GB/s) per dimension as a list "
                         f"or array, got a {type(bw_gbps).__name__}",
                         f"give a sequence of {D} numbers, dimension 0 first")
    values = bw_gbps.ravel().tolist() if isinstance(bw_gbps, np.ndarray) else list(bw_gbps)
    odd = sorted({type(v).__name__ for v in values if not is_real(v)})
    if odd and not (isinstance(bw_gbps, np.ndarray) and bw_gbps.dtype.kind in "iuf"):
        raise InputError("bw_gbps", None, f"bandwidths must be numbers, got {', '.join(odd)}",
                         f"give {D} numbers (GB/s), not text or booleans")
    try:
        bw = np.asarray(bw_gbps, dtype=float)
    except (TypeError, ValueError) as e:
        raise InputError("bw_gbps", None, f"not a sequence of numbers ({e})",
                         f"give {D} numbers (GB/s)") from None
    if bw.ndim != 1:
        raise InputError("bw_gbps", None, f"an array of shape {bw.shape} given, not one value per "
                         f"dimension (shape ({D},))",
                         f"give a flat sequence of {D} values (GB/s), one per dimension (e.g. "
                         "bw_gbps=a.ravel() for one row)")
    if bw.shape != (D,):
        raise InputError("bw_gbps", None, f"{bw.size} bandwidths given for {D} dimensions",
                         f"give {D} values (GB/s), one per dimension")
    return bw


def check_bw_for_npus(instance, values: list[float], name: str, sep: str) -> None:
    """Refuse bandwidths ``values`` (GB/s per NPU, one per dimension of ``instance``) that look
    like a unit slip for a workload's NPU whose scale-up bandwidth is known (the datasheet's
    bidirectional figure, Gb/s, TB/s: :func:`hieropt.workloads.llm.links.check_bandwidths`), unless
    they meet the instance's own design rows and bounds (:func:`in_design_space`); 1e6, the
    what-if of a dimension with no limit, is not checked. The one check of the command line's
    ``--bw`` and the library's ``bw_gbps`` (``name``; ``sep``: how the fix joins the values).

    Raises:
        InputError: (exit 2) naming ``name``: the dimension, the figure converted and the fix.
    """
    from ..units import MAX_PLAUSIBLE_BW_GBPS
    from ..workloads.llm.links import check_bandwidths

    if in_design_space(instance, values):
        return
    outer = len(values) - 1 if len(values) >= 2 else None
    for job in instance.jobs:
        tr = job.workload.training
        if tr is not None:
            check_bandwidths(values, tr.scaleup_gbps, tr.npu, name, outer, None, sep,
                             MAX_PLAUSIBLE_BW_GBPS)




def in_design_space(instance, bw_gbps, rel: float = 1e-3) -> bool:
    """Whether ``bw_gbps`` (GB/s per NPU, one per dimension of ``instance``) meets the instance's
    design rows and bounds to ``rel`` of their size
    (:meth:`hieropt.spec.design.DesignMatrix.max_violation`): a design ``solve`` could answer,
    e.g. its own optimum printed to a few digits and evaluated again."""
    dm = instance.design_matrix
    bw = np.asarray(bw_gbps, dtype=float)
    if dm.max_violation(bw) > rel:
        return False
    return bool(np.all(bw >= dm.bw_lower * (1 - rel)) and np.all(bw <= dm.bw_upper * (1 + rel)))


def _shown(v: float) -> str:
    """``v`` to 6 significant digits when that is ``v`` itself (``1e+09``), else to 10
    (``1000001``, not the limit's ``1e+06``)."""
    return f"{v:g}" if float(f"{v:g}") == v else f"{v:.10g}"


def check_bw_in_gbps(instance, bw_gbps, name: str, write) -> None:
    """Refuse bandwidths ``bw_gbps`` (GB/s per NPU, one per dimension of ``instance``) of which one
    is above :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s per NPU, a thousand times the
    fastest scale-up link) as bytes/s written for GB/s (``300e9`` for 300 GB/s), unless they meet
    the instance's own design rows and bounds (:func:`in_design_space`: a design ``solve`` could
    answer): the rule of a design row or a bound
    (:func:`hieropt.spec.ranges.bytes_per_second_bound`). The one check of the command line's
    ``--bw`` and the library's ``bw_gbps`` (``hieropt.evaluate``, ``verify``, ``export_astrasim``,
    ``simulate``, ``run_figures``); a runs file's ``bw_gbps`` takes the same words
    (:func:`bytes_per_second_slip`). 1e6 itself passes: the what-if of a dimension with no limit.

    Args:
        name: the argument or flag named by the error (``bw_gbps``, ``--bw``).
        write: the values as the caller writes them, ``list[float] -> str`` (the fix's
            ``write --bw 300,50`` or ``write bw_gbps=[300, 50]``).

    Raises:
        InputError: (exit 2) naming ``name``: the first such dimension, its value in GB/s and
            every value to write (each above 1e6 divided by 1e9); no values to write when one is
            above 1e6 even divided by 1e9 (no unit slip explains it).
    """
    values = [float(v) for v in np.asarray(bw_gbps, dtype=float).ravel()]
    slip = bytes_per_second_slip(values, write, f"the most {name} takes: a dimension with no limit")
    if slip is not None and not in_design_space(instance, values):
        raise InputError(name, None, *slip)


def bytes_per_second_slip(values: list[float], write, most: str | None = None
                          ) -> tuple[str, str] | None:
    """(problem, fix) when one of the bandwidths ``values`` (GB/s per NPU, one per dimension) is
    above :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s per NPU, a thousand times the
    fastest scale-up link): bytes/s written for GB/s; None when none is. The problem names the
    first such dimension and its value; the fix every value to write (``write``: ``list[float] ->
    str``, each above 1e6 divided by 1e9), or, when one is above 1e6 even divided by 1e9 (no unit
    slip explains it), only the unit. ``most``: what 1e6 is to the caller (``--bw``'s what-if of a
    dimension with no limit), said in the fix; None: nothing. The words of
    :func:`check_bw_in_gbps` (``--bw``, the library's ``bw_gbps``) and of a runs file's
    ``bw_gbps`` (:func:`hieropt.io.runs.read_runs`), whatever the NPU."""
    from ..units import GB, MAX_PLAUSIBLE_BW_GBPS

    high = [d for d, v in enumerate(values) if v > MAX_PLAUSIBLE_BW_GBPS]
    if not high:
        return None
    d = high[0]
    fixed = [v / GB if v > MAX_PLAUSIBLE_BW_GBPS else v for v in values]
    if any(v > MAX_PLAUSIBLE_BW_GBPS for v in fixed):  # (no bytes/s slip: no reading to offer)
        e = next(e for e, v in enumerate(fixed) if v > MAX_PLAUSIBLE_BW_GBPS)
        return (
            f"dimension {e}: {_shown(values[e])} GB/s per NPU is above {MAX_PLAUSIBLE_BW_GBPS:g} "
            f"GB/s per NPU (a thousand times the fastest scale-up link), and still above it read "
            f"as bytes/s ({values[e] / GB:g} GB/s)",
            "give GB/s per NPU (1 GB = 1e9 bytes), at most 1e6" + (f" ({most})" if most else ""),
        )
    return (
        f"dimension {d}: {_shown(values[d])} GB/s per NPU is above {MAX_PLAUSIBLE_BW_GBPS:g} GB/s "
        "per NPU (a thousand times the fastest scale-up link): looks like bytes/s",
        f"give GB/s per NPU (1 GB = 1e9 bytes): {_shown(values[d])} bytes/s = "
        f"{values[d] / GB:g} GB/s: write {write(fixed)}" + (f" (1e6 is {most})" if most else ""),
    )


__all__ = ["check_bw", "as_bw", "in_design_space", "check_bw_in_gbps", "check_bw_for_npus",
           "bytes_per_second_slip"]
