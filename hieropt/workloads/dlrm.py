"""Workload of a DLRM-style recommendation model: model-parallel embedding tables, data-parallel
MLPs.

Architecture (Naumov et al. 2019, "Deep Learning Recommendation Model for Personalization and
Recommendation Systems", arXiv 1906.00091, §2-3): dense features go through a bottom MLP; each
sparse feature looks up (and sums, "pooling") rows of its embedding table; a dot-product interaction
of the bottom-MLP output with the T pooled embeddings feeds a top MLP. The bottom MLP's output width
must equal the embedding dimension d.

Parallelism (Naumov et al. §4, and the ASTRA-sim 1.0 ``HYBRID_DLRM`` workload): the embedding tables
are **model-parallel** — spread over the ``npus`` NPUs — and the MLPs **data-parallel**. In the
forward pass an all-to-all ("butterfly shuffle") sends every pooled embedding from the NPU that
holds its table to the NPU that holds its sample; in the backward pass the reverse all-to-all
returns the embedding gradients. MLP weight gradients are all-reduced over the replicas. As in
ASTRA-sim's ``DLRM_HybridParallel`` workload, layer 0 is the embedding layer and the header gives
the number of the last bottom-MLP layer.

Notation (per NPU): b = ``micro_batch`` samples, T = ``num_tables``, d = ``embedding_dim``, L =
``pooling`` (lookups per table per sample), B = ``bytes_per_element``, N = ``npus``; a dense layer
n_in -> n_out.

Layers, in forward order (compute ns; collectives in bytes per NPU, :class:`hieropt.spec.Phase`
convention):

- ``embedding`` (layer 0). Each NPU gathers, for the b·N samples of the global batch, L rows of
  width d from each of its T/N tables (balanced sharding assumed — table-, row- or column-wise):
  b·L·T·d·B bytes read, at ``embedding_gbps`` (GB/s = bytes/ns): forward b·L·T·d·B /
  ``embedding_gbps`` ns. Forward ALLTOALL of b·T·d·B bytes (the NPU's pooled embeddings; (N-1)/N of
  them leave the NPU). Input gradient: no compute, ALLTOALL of b·T·d·B bytes (the gradients going
  back). Weight gradient: the sparse row update reads and writes the touched rows, 2·b·L·T·d·B /
  ``embedding_gbps`` ns, no collective (each table lives on one NPU).
- ``bottom1`` .. ``bottomK``: dense layers ``dense_features`` -> ``bottom_mlp[0]`` -> ... Forward,
  input gradient and weight gradient 2·b·n_in·n_out FLOPs each (a multiply-add counts 2), except
  ``bottom1``'s input gradient (0: its input is data). Weight gradient ALLREDUCE of (n_in·n_out +
  n_out)·B bytes (weights and bias).
- ``interaction``: F = T + 1 vectors of width d, P = F(F-1)/2 pairwise dot products (no
  self-interaction, the DLRM default): forward 2·b·P·d FLOPs, input gradient 4·b·P·d (both operands
  of every dot product), no weights. Output width d + P (the bottom-MLP output concatenated with the
  P dot products).
- ``top1`` .. ``topM``: dense layers (d + P) -> ``top_mlp[0]`` -> ... as the bottom MLP (all with
  input gradients).

Compute time of FLOPs: FLOPs / (``npu_peak_tflops``·1e12·``efficiency``)·1e9 ns. With ``npus`` = 1
every collective is NONE with 0 bytes. Not modelled: the loss, the optimizer step of the MLPs
(``update_ns = 0``), embedding-table load imbalance, caching.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..spec import Collective, Layer, Phase, Workload, WorkloadHeader
from ..spec.base import MAX_EXACT_INT, MAX_NPUS, check_number_fields

POLICY = "HYBRID_DLRM"
"""ASTRA-sim header policy written into generated workloads (with the number of the last bottom-MLP
layer)."""


MAX_WIDTH = MAX_EXACT_INT
"""The largest layer width, feature, table, lookup or batch count accepted (2^53,
:data:`hieropt.spec.base.MAX_EXACT_INT`: a workload's bytes and FLOPs are floats)."""
MAX_BYTES_PER_ELEMENT = 64
"""The largest element size accepted, bytes (fp64 is 8)."""


def _short(n: int) -> str:
    """An integer of any size in a few characters (``.3g``; 1.23e+400 beyond a float's range)."""
    try:
        return f"{n:.3g}"
    except OverflowError:
        text = str(n)
        return f"{text[0]}.{text[1:3]}e+{len(text) - 1}"


class DLRMParams(BaseModel):
    """Parameters of a DLRM-style model and of the NPUs that train it.

    Attributes:
        name: workload name.
        dense_features: width of the dense input (13 for the Criteo data sets).
        bottom_mlp: output widths of the bottom-MLP layers; the last must equal ``embedding_dim``.
        top_mlp: output widths of the top-MLP layers (the last is usually 1, the click probability).
        num_tables: number of embedding tables T (one per sparse feature; 26 for Criteo).
        embedding_dim: embedding width d (elements).
        pooling: lookups per table per sample L (1 for one-hot features).
        micro_batch: samples per NPU per iteration b.
        bytes_per_element: bytes of one embedding / activation / gradient element (4 for fp32).
        npus: NPUs sharing the tables and replicating the MLPs N (1: no collectives).
        npu_peak_tflops: peak throughput of one NPU in TFLOP/s (1e12 FLOP/s) for the MLP and
            interaction math.
        efficiency: fraction of peak achieved, 0 < efficiency <= 1.
        embedding_gbps: effective memory bandwidth of embedding lookups and updates, GB/s (1 GB =
            1e9 bytes).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        # (a float for a count or degree, tp = 8.0, is an error)
        return check_number_fields(cls, data)

    name: str = Field(min_length=1)
    dense_features: int = Field(gt=0, le=MAX_WIDTH)
    bottom_mlp: tuple[int, ...] = Field(min_length=1)
    top_mlp: tuple[int, ...] = Field(min_length=1)
    num_tables: int = Field(gt=0, le=MAX_WIDTH)
    embedding_dim: int = Field(gt=0, le=MAX_WIDTH)
    pooling: int = Field(default=1, gt=0, le=MAX_WIDTH)
    micro_batch: int = Field(gt=0, le=MAX_WIDTH)
    bytes_per_element: int = Field(gt=0, le=MAX_BYTES_PER_ELEMENT)
    npus: int = Field(gt=0, le=MAX_NPUS)
    npu_peak_tflops: float = Field(gt=0, allow_inf_nan=False)
    efficiency: float = Field(gt=0, le=1, allow_inf_nan=False)
    embedding_gbps: float = Field(gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _widths(self) -> DLRMParams:
        for key in ("bottom_mlp", "top_mlp"):
            widths = getattr(self, key)
            if any(w <= 0 for w in widths):
                raise ValueError(
                    f"{key}: layer widths must be > 0 (got {list(widths)}); fix: use "
                    "positive widths"
                )
            if any(w > MAX_WIDTH for w in widths):
                raise ValueError(
                    f"{key}: a layer width of {_short(max(widths))} is beyond "
                    f"{MAX_WIDTH:.3g} (a layer's "
                    "bytes and FLOPs would not fit a float); fix: give the widths of a real model"
                )
        if self.bottom_mlp[-1] != self.embedding_dim:
            raise ValueError(
                f"bottom_mlp: its last width {self.bottom_mlp[-1]} differs from "
                f"embedding_dim {self.embedding_dim}: "
                f"the dot-product interaction needs vectors of one width; fix: end bottom_mlp with "
                f"{self.embedding_dim}"
            )
        return self

    @property
    def interaction_pairs(self) -> int:
        """P = F(F-1)/2 pairwise dot products of the F = T + 1 interacting vectors."""
        f = self.num_tables + 1
        return f * (f - 1) // 2

    @property
    def top_input_width(self) -> int:
        """Input width of the top MLP: d + P."""
        return self.embedding_dim + self.interaction_pairs


def _ns(flops: int, p: DLRMParams) -> float:
    """Time in ns to run ``flops`` FLOPs on one NPU at ``efficiency`` × ``npu_peak_tflops``."""
    return flops / (p.npu_peak_tflops * 1e12 * p.efficiency) * 1e9


def _phase(compute_ns: float, collective: Collective, size: float, p: DLRMParams) -> Phase:
    if p.npus == 1 or collective is Collective.NONE or size == 0:
        return Phase(compute_ns=compute_ns, collective=Collective.NONE, size_bytes=0.0)
    return Phase(compute_ns=compute_ns, collective=collective, size_bytes=float(size))


def embedding_layer(p: DLRMParams) -> Layer:
    """Layer 0: lookups (b·L·T·d·B bytes read), all-to-all of b·T·d·B bytes forward and back, sparse
    update."""
    lookup_bytes = p.micro_batch * p.pooling * p.num_tables * p.embedding_dim * p.bytes_per_element
    a2a_bytes = p.micro_batch * p.num_tables * p.embedding_dim * p.bytes_per_element
    return Layer(
        name="embedding",
        forward=_phase(lookup_bytes / p.embedding_gbps, Collective.ALL_TO_ALL, a2a_bytes, p),
        input_grad=_phase(0.0, Collective.ALL_TO_ALL, a2a_bytes, p),
        weight_grad=_phase(2 * lookup_bytes / p.embedding_gbps, Collective.NONE, 0, p),
    )


def dense_layer(name: str, n_in: int, n_out: int, p: DLRMParams, input_grad: bool = True) -> Layer:
    """A data-parallel dense layer n_in -> n_out: 2·b·n_in·n_out FLOPs per phase, weight-gradient
    all-reduce of (n_in·n_out + n_out)·B bytes; ``input_grad=False`` for a layer whose input is
    data."""
    flops = 2 * p.micro_batch * n_in * n_out
    t = _ns(flops, p)
    grad_bytes = (n_in * n_out + n_out) * p.bytes_per_element
    return Layer(
        name=name,
        forward=_phase(t, Collective.NONE, 0, p),
        input_grad=_phase(t if input_grad else 0.0, Collective.NONE, 0, p),
        weight_grad=_phase(t, Collective.ALL_REDUCE, grad_bytes, p),
    )


def interaction_layer(p: DLRMParams) -> Layer:
    """Pairwise dot products: forward 2·b·P·d FLOPs, input gradient 4·b·P·d, no weights, no
    collectives."""
    fwd = 2 * p.micro_batch * p.interaction_pairs * p.embedding_dim
    return Layer(
        name="interaction",
        forward=_phase(_ns(fwd, p), Collective.NONE, 0, p),
        input_grad=_phase(_ns(2 * fwd, p), Collective.NONE, 0, p),
        weight_grad=_phase(0.0, Collective.NONE, 0, p),
    )


def generate(params: DLRMParams) -> Workload:
    """Build the training workload of a DLRM-style model (formulas and sources: module docstring).

    Returns:
        a :class:`~hieropt.spec.Workload` named ``params.name``: ``embedding``, ``bottom1`` ..
        ``bottomK``, ``interaction``, ``top1`` .. ``topM``; header ``HYBRID_DLRM`` with
        ``last_bottom_layer = K``; ``group_npus`` states that every phase's collectives span the
        ``npus`` NPUs.
    """
    p = params
    layers = [embedding_layer(p)]
    widths = (p.dense_features, *p.bottom_mlp)
    for i in range(len(p.bottom_mlp)):
        layers.append(dense_layer(f"bottom{i + 1}", widths[i], widths[i + 1], p, input_grad=i > 0))
    layers.append(interaction_layer(p))
    widths = (p.top_input_width, *p.top_mlp)
    for i in range(len(p.top_mlp)):
        layers.append(dense_layer(f"top{i + 1}", widths[i], widths[i + 1], p))
    header = WorkloadHeader(policy=POLICY, last_bottom_layer=len(p.bottom_mlp))
    return Workload(
        name=p.name,
        layers=tuple(layers),
        header=header,
        group_npus=tuple(
            (phase, "npus", p.npus) for phase in ("forward", "input_grad", "weight_grad")
        ),
    )
