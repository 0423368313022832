"""Workload of a convolutional network trained with data parallelism (e.g. ResNet-50, He et al.
2016).

The network is a compact list of layers, each given in one of three forms:

- ``conv = [k, c_in, c_out, s]``: a k×k convolution from c_in to c_out channels with an s×s output,
  followed by batch normalisation (no bias, as in ResNet): 2·k²·c_in·c_out·s² FLOPs per sample
  forward (a multiply-add counts 2) and k²·c_in·c_out + 2·c_out parameters (the weights, and batch
  norm's scale and shift; its running statistics are not trained and not all-reduced);
- ``fc = [n_in, n_out]``: a fully connected layer with bias: 2·n_in·n_out FLOPs, n_in·n_out + n_out
  parameters;
- ``forward_flops`` (per sample) and ``params`` given directly.

Pooling, activations and the batch-norm arithmetic are not counted (they are a few per cent of the
FLOPs).

Per NPU, with b = ``micro_batch`` samples and F the layer's forward FLOPs per sample: forward b·F
FLOPs; backward twice the forward, split into input gradient b·F and weight gradient b·F (each
weight matmul / convolution is repeated once for the gradient of its input and once for the gradient
of its weights), except the first layer, whose input gradient (with respect to the images) is not
computed:
0. Compute time: FLOPs / (``npu_peak_tflops``·1e12·``efficiency``)·1e9 ns.

Data parallelism over ``dp`` replicas: the weight gradient of every layer is all-reduced, ALLREDUCE
of params·``bytes_per_element`` bytes (NONE with 0 bytes when ``dp`` = 1 or the layer has no
parameters); forward and input gradient have no collectives. Header policy ``DATA``, as ASTRA-sim's
``Resnet50_DataParallel`` workload (which counts weights only, without batch-norm parameters or
biases, at 4 bytes).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..spec import Collective, Layer, Phase, Workload, WorkloadHeader
from ..spec.base import check_number_fields

POLICY = "DATA"
"""ASTRA-sim header policy written into generated workloads (data parallelism only)."""


class CNNLayer(BaseModel):
    """One layer of a CNN, as ``conv``, ``fc``, or ``forward_flops`` with ``params`` (module
    docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        # (a float for a count or degree, tp = 8.0, is an error)
        return check_number_fields(cls, data)

    name: str = Field(min_length=1)
    conv: tuple[int, int, int, int] | None = None
    fc: tuple[int, int] | None = None
    forward_flops: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    params: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_form(self) -> CNNLayer:
        forms = [
            self.conv is not None,
            self.fc is not None,
            self.forward_flops is not None or self.params is not None,
        ]
        if sum(forms) != 1:
            raise ValueError(
                f"layer '{self.name}': give exactly one of conv = [k, c_in, c_out, s], fc = "
                "[n_in, n_out] "
                "or forward_flops with params; fix: keep one form"
            )
        if forms[2] and (self.forward_flops is None or self.params is None):
            raise ValueError(
                f"layer '{self.name}': forward_flops and params go together; fix: give both"
            )
        for key in ("conv", "fc"):
            v = getattr(self, key)
            if v is not None and any(x <= 0 for x in v):
                raise ValueError(
                    f"layer '{self.name}': {key} entries must be > 0 (got {list(v)}); fix: "
                    "use positive "
                    "sizes"
                )
        return self

    @property
    def flops_per_sample(self) -> float:
        """Forward FLOPs per sample: 2·k²·c_in·c_out·s² (conv), 2·n_in·n_out (fc), or
        ``forward_flops``."""
        if self.conv is not None:
            k, c_in, c_out, s = self.conv
            return float(2 * k * k * c_in * c_out * s * s)
        if self.fc is not None:
            n_in, n_out = self.fc
            return float(2 * n_in * n_out)
        assert self.forward_flops is not None
        return self.forward_flops

    @property
    def param_count(self) -> int:
        """Trained parameters: k²·c_in·c_out + 2·c_out (conv + batch norm), n_in·n_out + n_out (fc),
        or ``params``."""
        if self.conv is not None:
            k, c_in, c_out, _ = self.conv
            return k * k * c_in * c_out + 2 * c_out
        if self.fc is not None:
            n_in, n_out = self.fc
            return n_in * n_out + n_out
        assert self.params is not None
        return self.params


class CNNParams(BaseModel):
    """Parameters of a data-parallel CNN and of the NPUs that train it.

    Attributes:
        name: workload name.
        layers: the layers in forward order (:class:`CNNLayer`); names must be unique.
        micro_batch: samples (images) per NPU per iteration b.
        bytes_per_element: bytes of one gradient element in the all-reduce (4 for fp32, 2 for fp16 /
            bf16).
        dp: data-parallel degree (replicas all-reducing weight gradients).
        npu_peak_tflops: peak throughput of one NPU in TFLOP/s (1e12 FLOP/s).
        efficiency: fraction of peak achieved, 0 < efficiency <= 1.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        # (a float for a count or degree, tp = 8.0, is an error)
        return check_number_fields(cls, data)

    name: str = Field(min_length=1)
    layers: tuple[CNNLayer, ...] = Field(min_length=1)
    micro_batch: int = Field(gt=0)
    bytes_per_element: int = Field(gt=0)
    dp: int = Field(gt=0)
    npu_peak_tflops: float = Field(gt=0, allow_inf_nan=False)
    efficiency: float = Field(gt=0, le=1, allow_inf_nan=False)

    @model_validator(mode="after")
    def _unique_names(self) -> CNNParams:
        seen: set[str] = set()
        for layer in self.layers:
            if layer.name in seen:
                raise ValueError(
                    f"layers: name '{layer.name}' is used twice; fix: give every layer its own name"
                )
            seen.add(layer.name)
        return self

    @property
    def total_params(self) -> int:
        """Trained parameters of the whole network."""
        return sum(layer.param_count for layer in self.layers)

    @property
    def total_flops_per_sample(self) -> float:
        """Forward FLOPs per sample of the whole network."""
        return sum(layer.flops_per_sample for layer in self.layers)


def _ns(flops: float, p: CNNParams) -> float:
    """Time in ns to run ``flops`` FLOPs on one NPU at ``efficiency`` × ``npu_peak_tflops``."""
    return flops / (p.npu_peak_tflops * 1e12 * p.efficiency) * 1e9


def generate(params: CNNParams) -> Workload:
    """Build the training workload of a data-parallel CNN (formulas: module docstring).

    Returns:
        a :class:`~hieropt.spec.Workload` named ``params.name``, one layer per :class:`CNNLayer`,
        header ``DATA``; ``group_npus`` states the data-parallel group (``dp`` NPUs).
    """
    p = params
    layers = []
    for i, spec in enumerate(p.layers):
        t = _ns(p.micro_batch * spec.flops_per_sample, p)
        if p.dp > 1 and spec.param_count > 0:
            wg = Phase(compute_ns=t, collective=Collective.ALL_REDUCE,
                       size_bytes=float(spec.param_count * p.bytes_per_element))
        else:
            wg = Phase(compute_ns=t, collective=Collective.NONE, size_bytes=0.0)
        layers.append(
            Layer(
                name=spec.name,
                forward=Phase(compute_ns=t, collective=Collective.NONE, size_bytes=0.0),
                input_grad=Phase(
                    compute_ns=t if i > 0 else 0.0, collective=Collective.NONE, size_bytes=0.0
                ),
                weight_grad=wg,
            )
        )
    return Workload(name=p.name, layers=tuple(layers), header=WorkloadHeader(policy=POLICY),
                    group_npus=(("weight_grad", "dp", p.dp),))
