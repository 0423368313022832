"""The bandwidth vector a caller gives the evaluator (:func:`hieropt.model.timing.evaluate`),
checked: one finite, non-negative number (GB/s per NPU and direction) per dimension."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..spec.overrides import is_real


def check_bw(D: int, bw_gbps) -> np.ndarray:
    """``bw_gbps`` as a float array of the D dimensions' per-NPU bandwidths (GB/s), checked.

    Raises:
        InputError (naming ``bw_gbps``): not a sequence of D numbers, or an entry negative or not
            finite.
    """
    if isinstance(bw_gbps, np.ndarray) and bw_gbps.shape == (D,) and bw_gbps.dtype == np.float64:
        bw = bw_gbps  # (the solvers' own arrays: the common case)
    else:
        bw = as_bw(bw_gbps, D)
    if not np.isfinite(bw).all() or (bw < 0).any():
        raise InputError("bw_gbps", None,
                         f"bandwidths must be finite and >= 0 GB/s, got {bw.tolist()}",
                         "fix the values")
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
    if bw.shape != (D,):
        raise InputError("bw_gbps", None, f"{bw.size} bandwidths given for {D} dimensions",
                         f"give {D} values (GB/s), one per dimension")
    return bw


__all__ = ["check_bw", "as_bw"]
