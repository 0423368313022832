"""The whole cluster's cost and power beyond the network: the ``[cluster]`` section of an instance
or space file.

Every figure is optional; the buyer's figures (:mod:`hieropt.model.run`) say which are unknown
instead of guessing. Units are in the field names: $ (``_usd``), W (``_w``), $ per MW of IT power, $
per kWh, years, $ per NPU-hour. Each figure may name its source (``sources``: figure -> key of
``references``), as the parts catalogs do; with ``require_sources`` every figure given must name
one.

Cost rate of the cluster while it trains, $ per hour (:func:`hieropt.model.run.cost_rate`):

    (N accelerator_usd + servers server_usd + racks rack_usd + network capex) / (amortisation_years
    x 8760 h)
    + facility_usd_per_mw x IT MW / (facility_amortisation_years x 8760 h)
    + IT MW x PUE x 1000 x electricity_usd_per_kwh

with servers = ceil(N / npus_per_server), racks = ceil(N / npus_per_rack), IT power = N
(accelerator_w + network_w_per_npu) + servers server_w + racks rack_w. ``usd_per_npu_hour`` (an
all-in rental or internal rate) replaces the accelerators, servers, racks, facility and electricity
terms by N x that rate; the network's capex is still amortised on top when ``amortisation_years`` is
given (the network is what hieropt designs).
"""

from __future__ import annotations

import datetime as _dt
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import Frozen

SOURCE_KINDS = ("list", "street", "estimate", "spec", "assumption", "invented")
"""What a figure is (as in the parts catalogs): a vendor list price, a street price, an estimate, a
data-sheet figure, an assumption with no public figure behind it, or an invented example."""

FIGURES = (
    "accelerator_usd",
    "accelerator_w",
    "npus_per_server",
    "server_usd",
    "server_w",
    "npus_per_rack",
    "rack_usd",
    "rack_w",
    "network_w_per_npu",
    "facility_usd_per_mw",
    "pue",
    "electricity_usd_per_kwh",
    "amortisation_years",
    "facility_amortisation_years",
    "usd_per_npu_hour",
    "max_power_mw",
)
"""The figures of a ``[cluster]`` section, in the order they are documented."""

Money = float | None

CAPEX_FIGURES = (
    "accelerator_usd",
    "server_usd",
    "rack_usd",
    "facility_usd_per_mw",
    "electricity_usd_per_kwh",
)
"""The figures ``usd_per_npu_hour`` replaces (a file giving both is refused)."""


class ClusterSource(Frozen):
    """Where a figure comes from: ``ref`` (URL or citation), ``date`` it was read (YYYY-MM-DD),
    ``kind`` (:data:`SOURCE_KINDS`), an optional ``note``."""

    ref: str = Field(min_length=1)
    date: str
    kind: Literal[SOURCE_KINDS]
    note: str = ""

    @field_validator("date")
    @classmethod
    def _iso(cls, v: str) -> str:
        try:
            _dt.date.fromisoformat(v)
        except ValueError as e:
            raise ValueError(
                f"date {v!r} is not YYYY-MM-DD; fix: give the date the figure was read"
            ) from e
        return v


class Cluster(Frozen):
    """The cluster's cost and power figures (module docstring for the cost rate).

    Attributes:
        accelerator_usd: price of one accelerator (NPU), $.
        accelerator_w: power of one accelerator while training, W.
        npus_per_server, server_usd, server_w: accelerators per server; a server's price and power
            without its accelerators ($, W).
        npus_per_rack, rack_usd, rack_w: accelerators per rack; a rack's price and power beyond its
            servers.
        network_w_per_npu: network power per NPU (NICs, switches, optics), W.
        facility_usd_per_mw: data-centre build cost per MW of IT (critical) power, $ / MW.
        pue: power usage effectiveness (facility power / IT power, >= 1).
        electricity_usd_per_kwh: electricity price, $ / kWh.
        amortisation_years: years over which accelerators, servers, racks and the network are paid
            off.
        facility_amortisation_years: years for the facility (default: ``amortisation_years``).
        usd_per_npu_hour: an all-in rate per NPU-hour instead of the figures above (not the
            network's).
        max_power_mw: the site's power cap, MW of facility power (IT x PUE): a design above it is
            infeasible.
        sources: figure -> key of ``references`` (the figure's source).
        references: source key -> :class:`ClusterSource`.
        require_sources: every figure given must name a source.
    """

    accelerator_usd: Money = Field(default=None, ge=0, allow_inf_nan=False)
    accelerator_w: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    npus_per_server: int | None = Field(default=None, ge=1)
    server_usd: Money = Field(default=None, ge=0, allow_inf_nan=False)
    server_w: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    npus_per_rack: int | None = Field(default=None, ge=1)
    rack_usd: Money = Field(default=None, ge=0, allow_inf_nan=False)
    rack_w: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    network_w_per_npu: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    facility_usd_per_mw: Money = Field(default=None, ge=0, allow_inf_nan=False)
    pue: float | None = Field(default=None, ge=1, le=5, allow_inf_nan=False)
    electricity_usd_per_kwh: Money = Field(default=None, ge=0, le=10, allow_inf_nan=False)
    amortisation_years: float | None = Field(default=None, gt=0, le=50, allow_inf_nan=False)
    facility_amortisation_years: float | None = Field(
        default=None, gt=0, le=100, allow_inf_nan=False
    )
    usd_per_npu_hour: Money = Field(default=None, ge=0, allow_inf_nan=False)
    max_power_mw: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    sources: dict[str, str] = {}
    references: dict[str, ClusterSource] = {}
    require_sources: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Cluster:
        for key, ref in self.sources.items():
            if key not in FIGURES:
                raise ValueError(
                    f"sources.{key}: not a figure of [cluster]; fix: use one of "
                    f"{', '.join(FIGURES)}"
                )
            if ref not in self.references:
                raise ValueError(
                    f"{key}.source: unknown source {ref!r}; fix: add "
                    f"[cluster.sources.{ref}] with ref, "
                    f"date and kind, or use one of "
                    f"{', '.join(sorted(self.references)) or 'the sources given'}"
                )
        if self.require_sources:
            missing = [k for k in FIGURES if getattr(self, k) is not None and k not in self.sources]
            if missing:
                raise ValueError(
                    f"{missing[0]}: no source, and require_sources is true; fix: write "
                    f'{missing[0]} = {{ value = ..., source = "<key>" }}'
                )
        pairs = (
            ("server_usd", "npus_per_server"),
            ("server_w", "npus_per_server"),
            ("rack_usd", "npus_per_rack"),
            ("rack_w", "npus_per_rack"),
        )
        capex = [k for k in CAPEX_FIGURES if getattr(self, k) is not None]
        if self.usd_per_npu_hour is not None and capex:
            raise ValueError(
                f"usd_per_npu_hour: given with {', '.join(capex)}, which the all-in NPU-hour rate "
                "replaces; fix: give either usd_per_npu_hour (a rental or internal rate) or the "
                "capex figures, not both"
            )
        for figure, count in pairs:
            if getattr(self, figure) is not None and getattr(self, count) is None:
                raise ValueError(
                    f"{figure}: given without {count}; fix: give {count} (accelerators per "
                    f"{count.split('_')[-1]})"
                )
        return self

    def given(self) -> dict[str, float]:
        """The figures given (name -> value), in :data:`FIGURES` order."""
        return {k: getattr(self, k) for k in FIGURES if getattr(self, k) is not None}


__all__ = ["Cluster", "ClusterSource", "FIGURES", "CAPEX_FIGURES", "SOURCE_KINDS"]
