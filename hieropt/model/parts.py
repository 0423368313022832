"""Sourced parts catalogs: the parts catalog of :mod:`hieropt.catalog` plus power, sources, optics and fabrics.

Extends the catalog schema (every existing catalog file stays valid) with:

- ``watts`` on every link port, NIC and switch (W per unit, >= 0; optional, but a power objective or budget needs it
  on every part it may choose);
- a source per figure: ``source`` (the key of a ``[sources.<key>]`` table, for the price and, unless
  ``watts_source`` is given, the power) and ``watts_source``; each source has a ``ref`` (URL or citation), a ``date``
  (YYYY-MM-DD) and a ``kind`` (:data:`SOURCE_KINDS`: a vendor ``list`` price, a ``street`` price, an
  ``estimate``, a ``spec`` figure from a data sheet, an ``assumption`` with no public figure behind it, or
  ``invented``). With ``require_sources = true`` at the top of the file every priced part must name its source,
  and every part with ``watts`` a source for them;
- ``optics`` per cost class: transceivers and cables with their reach (m), ports per module, port speed (optional:
  ``port_gbps`` or ``port_gbit_per_s``; then only links of that speed use it), price and power;
- ``fabric`` per Switch class: ``placement`` (``per_group`` | ``multi_plane`` | ``rail_optimized``, or a list to
  choose from), ``oversubscription`` per tier, leaves first (each a ratio >= 1, or a list of ratios to choose from;
  tiers not listed are non-blocking), ``max_tiers`` and ``link_length_m`` (one length per link level: NIC to leaf,
  leaf to spine, spine to core, ...). Switch radix must be >= 4 (:data:`hieropt.model.fabric.MIN_RADIX`).

Counting, tiers and optics follow :mod:`hieropt.model.fabric`. Validation errors are ``ValueError`` messages of the
form ``"<problem>; fix: <fix>"`` that :mod:`hieropt.io.fabric_catalog` turns into one-line InputErrors.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..units import gbit_to_gbyte
from .catalog import Catalog, Part, PartClass, Switch
from .fabric import PLACEMENTS, check_radix, check_ratio
from .optics import Optic

__all__ = ["SOURCE_KINDS", "Source", "SourcedPart", "SourcedSwitch", "OpticPart", "FabricSpec", "SourcedPartClass",
           "SourcedCatalog"]

SOURCE_KINDS = ("list", "street", "estimate", "spec", "assumption", "invented")
"""What a figure is: a vendor list price, a street (reseller or reported) price, an estimate, a technical
specification (data sheet or spec summary; the ref says whose), an assumption with no public figure behind it, or an
invented example."""

Watts = float | None


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _watts(v: float | None) -> float | None:
    if v is not None and not (math.isfinite(v) and v >= 0):
        raise ValueError(f"power {v:g} W is negative (or not finite); fix: give watts >= 0 (W per unit)")
    return v


class Source(_Frozen):
    """Where a figure comes from: ``ref`` (URL or citation), ``date`` it was read (YYYY-MM-DD), ``kind``."""

    ref: str = Field(min_length=1)
    date: str
    kind: Literal["list", "street", "estimate", "spec", "assumption", "invented"]
    note: str = ""

    @field_validator("date")
    @classmethod
    def _iso(cls, v: str) -> str:
        try:
            _dt.date.fromisoformat(v)
        except ValueError as e:
            raise ValueError(f"date {v!r} is not YYYY-MM-DD; fix: give the date the figure was read, e.g. "
                             "'2026-12-01'") from e
        return v


class _Sourced(BaseModel):
    """Power and source fields shared by every part (mixed into the part models)."""

    watts: float | None = None
    source: str | None = None
    watts_source: str | None = None

    @field_validator("watts")
    @classmethod
    def _w(cls, v: float | None) -> float | None:
        return _watts(v)


class SourcedPart(_Sourced, Part):
    """A link port or NIC (:class:`hieropt.catalog.Part`) with ``watts`` (W per unit) and sources."""


class SourcedSwitch(_Sourced, Switch):
    """A switch (:class:`hieropt.catalog.Switch`) with ``watts`` (W per switch) and sources; radix >= 4."""

    @field_validator("radix")
    @classmethod
    def _radix(cls, v: int) -> int:
        return check_radix(v)


class OpticPart(_Frozen):
    """A transceiver (one per link end; ``ports`` switch or NIC ports per module) or a cable (both ends; ``ports``
    links per cable, > 1 for a splitter), reaching ``reach_m`` m, at ``usd`` $ and ``watts`` W each."""

    name: str = Field(min_length=1)
    reach_m: float = Field(gt=0, allow_inf_nan=False)
    usd: float = Field(ge=0, allow_inf_nan=False)
    watts: float | None = None
    ports: int = Field(default=1, ge=1)
    kind: Literal["transceiver", "cable"] = "transceiver"
    fits: Literal["switch", "nic", "both"] = "both"
    port_gbps: float | None = None
    port_gbit_per_s: float | None = None
    source: str | None = None
    watts_source: str | None = None
    note: str = ""

    @field_validator("watts")
    @classmethod
    def _w(cls, v: float | None) -> float | None:
        return _watts(v)

    @field_validator("port_gbps", "port_gbit_per_s")
    @classmethod
    def _speed(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and v > 0):
            raise ValueError(f"port speed {v:g}; fix: give a speed > 0 (port_gbps in GB/s, port_gbit_per_s in Gb/s)")
        return v

    @model_validator(mode="after")
    def _one_speed(self) -> OpticPart:
        if self.port_gbps is not None and self.port_gbit_per_s is not None:
            raise ValueError(f"optic '{self.name}' has two port speeds; fix: give port_gbps or port_gbit_per_s")
        return self

    @property
    def speed_gbps(self) -> float | None:
        """Port speed served, GB/s per direction (None: any)."""
        if self.port_gbps is not None:
            return self.port_gbps
        return gbit_to_gbyte(self.port_gbit_per_s) if self.port_gbit_per_s is not None else None

    def to_optic(self) -> Optic:
        """The part as a :class:`hieropt.model.fabric.Optic` (no power figure: 0 W)."""
        return Optic(self.name, self.reach_m, self.usd, self.watts or 0.0, self.ports, self.kind, self.fits,
                     self.speed_gbps)


Ratio = float | tuple[float, ...]


class FabricSpec(_Frozen):
    """How a Switch class's fabric is built (see :mod:`hieropt.model.fabric`)."""

    placement: tuple[Literal["per_group", "multi_plane", "rail_optimized"], ...] = ("per_group",)
    oversubscription: tuple[Ratio, ...] = ()
    max_tiers: int | None = Field(default=None, ge=1)
    link_length_m: tuple[float, ...] = ()

    @field_validator("placement", mode="before")
    @classmethod
    def _one_or_many(cls, v):
        if isinstance(v, str):
            v = (v,)
        if isinstance(v, list | tuple) and not v:
            raise ValueError(f"empty placement list; fix: give one of {', '.join(PLACEMENTS)} or a list of them")
        return v

    @field_validator("oversubscription")
    @classmethod
    def _ratios(cls, v: tuple[Ratio, ...]) -> tuple[Ratio, ...]:
        for r in v:
            for x in (r if isinstance(r, tuple) else (r,)):
                check_ratio(x)
            if isinstance(r, tuple) and not r:
                raise ValueError("empty list of oversubscription choices; fix: give a ratio >= 1 or a list of them")
        return v

    @field_validator("link_length_m")
    @classmethod
    def _lengths(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        for x in v:
            if not (math.isfinite(x) and x > 0):
                raise ValueError(f"link length {x:g} m; fix: give lengths > 0 m, one per link level")
        return v

    def ratio_choices(self) -> list[tuple[float, ...]]:
        """Every combination of the per-tier choices (one tuple of ratios per combination, leaves first)."""
        per_tier = [r if isinstance(r, tuple) else (r,) for r in self.oversubscription]
        return [tuple(float(x) for x in c) for c in itertools.product(*per_tier)] if per_tier else [()]


class SourcedPartClass(PartClass):
    """The parts of one cost class with power and sources, plus ``optics`` and a ``fabric`` (Switch classes)."""

    links: tuple[SourcedPart, ...] = ()
    nics: tuple[SourcedPart, ...] = ()
    switches: tuple[SourcedSwitch, ...] = ()
    optics: tuple[OpticPart, ...] = ()
    fabric: FabricSpec | None = None


def _parts_of(pc: SourcedPartClass):
    for kind in ("links", "nics", "switches", "optics"):
        for i, p in enumerate(getattr(pc, kind)):
            yield kind, i, p


class SourcedCatalog(Catalog):
    """A parts catalog with power figures, sources, optics and fabric settings (module docstring)."""

    require_sources: bool = False
    sources: dict[str, Source] = Field(default_factory=dict)
    classes: dict[str, SourcedPartClass] = Field(min_length=1)

    @model_validator(mode="after")
    def _sources_known_and_present(self) -> SourcedCatalog:
        keys = ", ".join(sorted(self.sources)) or "none defined"
        for cname, pc in self.classes.items():
            for kind, i, p in _parts_of(pc):
                field = f"classes.{cname}.{kind}[{i}] ('{p.name}')"
                for attr in ("source", "watts_source"):
                    key = getattr(p, attr)
                    if key is not None and key not in self.sources:
                        raise ValueError(f"{field}.{attr}: unknown source '{key}' (known: {keys}); fix: add "
                                         f"[sources.{key}] with ref, date and kind, or use a known key")
                if not self.require_sources:
                    continue
                if p.source is None:
                    raise ValueError(f"{field}.source: missing: the catalog sets require_sources = true, so every "
                                     "price needs a source; fix: add source = \"<key of a [sources.<key>] table>\"")
        return self

    def missing_power(self) -> list[str]:
        """Fields of parts without a power figure (a power objective needs none missing)."""
        return [f"classes.{c}.{k}[{i}] ('{p.name}').watts" for c, pc in self.classes.items()
                for k, i, p in _parts_of(pc) if p.watts is None]
