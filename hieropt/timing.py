"""Time model and the independent numpy evaluator of the training-iteration time (design.md §2.2).

LIBRA's ``no_overlap`` loop (``inputs/training_loop/no_overlap.py``): the forward phases of all layers in order, then
the layers in reverse with input-gradient then weight-gradient phases; each phase is its compute time followed by its
collective, nothing overlapped. Dimensions of one collective work concurrently (pipelined), so a collective with
per-dimension traffic m (bytes) takes ``max_d m_d / B_d`` ns at per-NPU bandwidths B (GB/s = bytes/ns):

    T(B) = sum of all compute_ns + sum over collectives k of max_d m_kd / B_d

T is convex and piecewise linear in t = 1/B, the fact behind the exact solvers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cost import cost_per_dim_usd
from .errors import InputError
from .spec import PHASES, Instance
from .traffic import aggregate, phase_traffic, workload_terms


@dataclass(frozen=True)
class TimeModel:
    """T(B) = ``compute_ns + sum_k max_d terms_bytes[k, d] / B_d`` after exact aggregation.

    Attributes:
        compute_ns: total compute time of one iteration (ns).
        terms_bytes: shape (K, D), aggregated collective traffic (bytes); K does not grow with the layer count.
        n_collectives: collectives (non-zero traffic) before aggregation.
    """

    compute_ns: float
    terms_bytes: np.ndarray
    n_collectives: int

    @property
    def n_dims(self) -> int:
        """Number of dimensions D."""
        return self.terms_bytes.shape[1]

    @property
    def carries_traffic(self) -> np.ndarray:
        """Boolean (D,): whether any collective puts bytes on dimension d."""
        return (self.terms_bytes > 0).any(axis=0)

    def time_ns(self, bw_gbps: np.ndarray) -> float:
        """T(B) in ns for per-NPU bandwidths ``bw_gbps`` (shape (D,), GB/s); inf if a loaded dimension has B = 0."""
        return self.compute_ns + _sum_max(self.terms_bytes, np.asarray(bw_gbps, dtype=float))


def _sum_max(traffic: np.ndarray, bw: np.ndarray) -> float:
    if traffic.shape[0] == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        per_dim = np.where(traffic > 0, np.where(bw > 0, traffic / bw, np.inf), 0.0)
    return float(per_dim.max(axis=1).sum())


def build_time_model(instance: Instance) -> TimeModel:
    """Aggregate the workload's collectives into the compact :class:`TimeModel` the formulations use."""
    traffic, count = workload_terms(instance)
    terms = aggregate(traffic)
    return TimeModel(
        compute_ns=float(instance.workload.table.compute_ns.sum()),
        terms_bytes=terms.bytes,
        n_collectives=int(count.sum()),
    )


@dataclass(frozen=True)
class Breakdown:
    """Where the iteration time goes at one bandwidth vector (all times ns, bytes per NPU, cost $).

    Attributes:
        bw_gbps: (D,) the evaluated per-NPU bandwidths.
        iteration_time_ns: T(B).
        compute_ns: total compute time.
        communication_ns: total (exposed) collective time.
        communication_by_phase_ns: collective time of forward / input_grad / weight_grad phases.
        bytes_per_dim: (D,) bytes each NPU sends on each dimension in one iteration.
        busy_ns_per_dim: (D,) time dimension d transmits, sum_k m_kd / B_d.
        utilisation_per_dim: (D,) busy time / iteration time.
        bottleneck_ns_per_dim: (D,) collective time during which d is the slowest dimension.
        cost_per_dim_usd: (D,) network cost of each dimension; ``network_cost_usd`` their sum.
    """

    bw_gbps: np.ndarray
    iteration_time_ns: float
    compute_ns: float
    communication_ns: float
    communication_by_phase_ns: dict[str, float]
    bytes_per_dim: np.ndarray
    busy_ns_per_dim: np.ndarray
    utilisation_per_dim: np.ndarray
    bottleneck_ns_per_dim: np.ndarray
    cost_per_dim_usd: np.ndarray
    network_cost_usd: float


def evaluate(instance: Instance, bw_gbps: np.ndarray | list[float]) -> Breakdown:
    """Evaluate the no_overlap iteration time and its breakdown at ``bw_gbps``, layer by layer (no aggregation,
    no solver), so it independently checks every solver result.

    Args:
        instance: the problem.
        bw_gbps: per-NPU bandwidth of each dimension, GB/s, shape (D,).

    Raises:
        InputError: wrong length, a negative or non-finite entry, or zero bandwidth on a dimension with traffic.
    """
    D = instance.network.n_dims
    bw = np.asarray(bw_gbps, dtype=float)
    if bw.shape != (D,):
        raise InputError("--bw", None, f"{bw.size} bandwidths given for {D} dimensions",
                         f"give {D} comma-separated GB/s values")
    if not np.all(np.isfinite(bw)) or np.any(bw < 0):
        raise InputError("--bw", None, f"bandwidths must be finite and >= 0 GB/s, got {bw.tolist()}",
                         "fix the values")
    traffic = phase_traffic(instance)  # (L, 3, D)
    bytes_per_dim = traffic.sum(axis=(0, 1))
    starved = (bw == 0) & (bytes_per_dim > 0)
    if starved.any():
        d = int(np.flatnonzero(starved)[0])
        raise InputError(
            "--bw", f"bw[{d}]", f"0 GB/s but dimension {d} carries {bytes_per_dim[d]:.6g} bytes per iteration",
            "give it a positive bandwidth",
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        per_dim_ns = np.where(traffic > 0, traffic / bw, 0.0)  # (L, 3, D)
    coll_ns = per_dim_ns.max(axis=2)  # (L, 3)
    compute = instance.workload.table.compute_ns
    comm_total = float(coll_ns.sum())
    compute_total = float(compute.sum())
    T = compute_total + comm_total
    busy = per_dim_ns.sum(axis=(0, 1))
    slowest = per_dim_ns.argmax(axis=2)
    bottleneck = np.array([coll_ns[slowest == d].sum() for d in range(D)])
    costs = cost_per_dim_usd(instance, bw)
    return Breakdown(
        bw_gbps=bw,
        iteration_time_ns=T,
        compute_ns=compute_total,
        communication_ns=comm_total,
        communication_by_phase_ns={p: float(coll_ns[:, j].sum()) for j, p in enumerate(PHASES)},
        bytes_per_dim=bytes_per_dim,
        busy_ns_per_dim=busy,
        utilisation_per_dim=busy / T if T > 0 else np.zeros(D),
        bottleneck_ns_per_dim=bottleneck,
        cost_per_dim_usd=costs,
        network_cost_usd=float(costs.sum()),
    )
