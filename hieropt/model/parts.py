"""The parts of a catalog beyond links, NICs and switches: sources, optics, fabric settings, power
checks.

They extend the catalog schema of :mod:`hieropt.model.catalog` (every older catalog file stays
valid) with:

- ``watts`` on every link port, NIC and switch (W per unit, >= 0; optional, but a power objective or
  budget needs it on every part it may choose);
- a source per figure: ``source`` (the key of a ``[sources.<key>]`` table, for the price and, unless
  ``watts_source`` is given, the power) and ``watts_source``; each source has a ``ref`` (URL or
  citation), a ``date`` (YYYY-MM-DD) and a ``kind`` (:data:`SOURCE_KINDS`: a vendor ``list`` price,
  a ``street`` price, an ``estimate``, a ``spec`` figure from a data sheet, an ``assumption`` with
  no public figure behind it, or ``invented``). With ``require_sources = true`` at the top of the
  file every priced part must name its source, and every part with ``watts`` a source for them;
- ``optics`` per cost class: transceivers and cables with their reach (m), ports per module, port
  speed (optional: ``port_gbps`` or ``port_gbit_per_s``; then only links of that speed use it),
  price and power;
- ``fabric`` per Switch class: ``placement`` (``per_group`` | ``multi_plane`` | ``rail_optimized``,
  or a list to choose from), ``oversubscription`` per tier, leaves first (each a ratio >= 1, or a
  list of ratios to choose from; tiers not listed are non-blocking), ``max_tiers`` and
  ``link_length_m`` (one length per link level: NIC to leaf, leaf to spine, spine to core, ...).
  Switch radix must be >= 4 (:data:`hieropt.model.fabric.MIN_RADIX`).

Counting, tiers and optics follow :mod:`hieropt.model.fabric` and :mod:`hieropt.model.optics`.
Validation errors are ``ValueError`` messages of the form ``"<problem>; fix: <fix>"`` that
:mod:`hieropt.io.catalog` turns into one-line InputErrors.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..spec.base import MAX_EXACT_INT, Frozen
from ..units import gbit_to_gbyte
from .fabric import PLACEMENTS, check_ratio
from .optics import Optic

MAX_PART_USD = 1e12
"""The dearest part a catalog may list, $ (a price beyond it is a wrong unit or a typo: a whole
cluster costs under 1e11 $)."""

__all__ = ["SOURCE_KINDS", "Source", "OpticPart", "FabricSpec", "check_power", "check_sources"]

SOURCE_KINDS = ("list", "street", "estimate", "spec", "assumption", "invented")
"""What a figure is: a vendor list price, a street (reseller or reported) price, an estimate, a
technical specification (data sheet or spec summary; the ref says whose), an assumption with no
public figure behind it, or an invented example."""



def check_power(v: float | None) -> float | None:
    """Return ``v`` (W per unit) if it is None or a finite number >= 0, else raise ValueError."""
    if v is not None and not (math.isfinite(v) and v >= 0):
        raise ValueError(
            f"power {v:g} W is negative (or not finite); fix: give watts >= 0 (W per unit)"
        )
    return v


class Source(Frozen):
    """Where a figure comes from: ``ref`` (URL or citation), ``date`` it was read (YYYY-MM-DD),
    ``kind``."""

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
            raise ValueError(
                f"date {v!r} is not YYYY-MM-DD; fix: give the date the figure was read, e.g. "
                "'2026-12-01'"
            ) from e
        return v


class OpticPart(Frozen):
    """A transceiver (one per link end; ``ports`` switch or NIC ports per module) or a cable (both
    ends; ``ports`` links per cable, > 1 for a splitter), reaching ``reach_m`` m, at ``usd`` $ and
    ``watts`` W each."""

    name: str = Field(min_length=1)
    reach_m: float = Field(gt=0, allow_inf_nan=False)
    usd: float = Field(ge=0, le=MAX_PART_USD, allow_inf_nan=False)
    watts: float | None = None
    ports: int = Field(default=1, ge=1, le=MAX_EXACT_INT)
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
        return check_power(v)

    @field_validator("port_gbps", "port_gbit_per_s")
    @classmethod
    def _speed(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and v > 0):
            raise ValueError(
                f"port speed {v:g}; fix: give a speed > 0 (port_gbps in GB/s, "
                "port_gbit_per_s in Gb/s)"
            )
        return v

    @model_validator(mode="after")
    def _one_speed(self) -> OpticPart:
        if self.port_gbps is not None and self.port_gbit_per_s is not None:
            raise ValueError(
                f"optic '{self.name}' has two port speeds; fix: give port_gbps or port_gbit_per_s"
            )
        return self

    @property
    def speed_gbps(self) -> float | None:
        """Port speed served, GB/s per direction (None: any)."""
        if self.port_gbps is not None:
            return self.port_gbps
        return gbit_to_gbyte(self.port_gbit_per_s) if self.port_gbit_per_s is not None else None

    def to_optic(self) -> Optic:
        """The part as a :class:`hieropt.model.optics.Optic` (no power figure: 0 W)."""
        return Optic(
            self.name,
            self.reach_m,
            self.usd,
            self.watts or 0.0,
            self.ports,
            self.kind,
            self.fits,
            self.speed_gbps,
        )


Ratio = float | tuple[float, ...]


class FabricSpec(Frozen):
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
            raise ValueError(
                f"empty placement list; fix: give one of {', '.join(PLACEMENTS)} or a list of them"
            )
        return v

    @field_validator("oversubscription")
    @classmethod
    def _ratios(cls, v: tuple[Ratio, ...]) -> tuple[Ratio, ...]:
        for r in v:
            for x in (r if isinstance(r, tuple) else (r,)):
                check_ratio(x)
            if isinstance(r, tuple) and not r:
                raise ValueError(
                    "empty list of oversubscription choices; fix: give a ratio >= 1 or a "
                    "list of them"
                )
        return v

    @field_validator("link_length_m")
    @classmethod
    def _lengths(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        for x in v:
            if not (math.isfinite(x) and x > 0):
                raise ValueError(
                    f"link length {x:g} m; fix: give lengths > 0 m, one per link level"
                )
        return v

    def ratio_choices(self) -> list[tuple[float, ...]]:
        """Every combination of the per-tier choices (one tuple of ratios per combination, leaves
        first)."""
        per_tier = [r if isinstance(r, tuple) else (r,) for r in self.oversubscription]
        return (
            [tuple(float(x) for x in c) for c in itertools.product(*per_tier)] if per_tier else [()]
        )


def check_sources(catalog: Any) -> None:
    """Every ``source`` / ``watts_source`` key of ``catalog``'s parts names one of its ``sources``;
    with ``require_sources``, every part names a source (for its price, and its power unless
    ``watts_source``).

    Raises:
        ValueError: ``"<field>: <problem>; fix: <fix>"`` for the first offending part.
    """
    keys = ", ".join(sorted(catalog.sources)) or "none defined"
    for cname, kind, i, p in catalog.parts():
        field = f"classes.{cname}.{kind}[{i}] ('{p.name}')"
        for attr in ("source", "watts_source"):
            key = getattr(p, attr)
            if key is not None and key not in catalog.sources:
                raise ValueError(
                    f"{field}.{attr}: unknown source '{key}' (known: {keys}); fix: add "
                    f"[sources.{key}] with ref, date and kind, or use a known key"
                )
        if catalog.require_sources and p.source is None:
            raise ValueError(
                f"{field}.source: missing: the catalog sets require_sources = true, so every price "
                'needs a source; fix: add source = "<key of a [sources.<key>] table>"'
            )
