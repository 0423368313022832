"""Sourced parts-catalog files (TOML or YAML) -> :class:`hieropt.model.parts.SourcedCatalog`.

The format is that of :mod:`hieropt.io.catalog` plus ``require_sources``, ``[sources.<key>]`` tables, ``watts``,
``source`` and ``watts_source`` on every part, ``optics`` and ``[classes.<class>.fabric]``::

    name = "gb200-nvl72-ib-xdr"
    require_sources = true                       # every price needs a source

    [sources.nvidia-nvlink]
    ref = "nvidia.com/en-au/data-center/nvlink (vendor), via shared/research/parts.md"
    date = "2026-12-01"
    kind = "vendor-spec"                         # list | street | estimate | vendor-spec | assumption | invented

    [classes.ScaleOut]
    nics = [{ name = "ConnectX-8 800G", gbit_per_s = 800, usd = 1500, watts = 30, max_per_npu = 1,
              source = "some-key", watts_source = "other-key" }]
    switches = [{ name = "Q3400", radix = 144, port_gbit_per_s = 800, usd_per_switch = 50000, watts = 3000,
                  source = "some-key" }]
    optics = [{ name = "OSFP 2x400G DR4", reach_m = 100, ports = 2, usd = 1250, watts = 17, fits = "switch",
                source = "some-key" }]
    [classes.ScaleOut.fabric]
    placement = "rail_optimized"                 # per_group | multi_plane | rail_optimized, or a list to choose from
    oversubscription = [[1, 2]]                  # per tier, leaves first: a ratio >= 1 or a list of choices
    max_tiers = 3
    link_length_m = [30, 100, 500]               # NIC-leaf, leaf-spine, spine-core

Every problem is a one-line :class:`hieropt.errors.InputError` (exit 2) naming the file, the field and the fix:
everything :mod:`hieropt.io.catalog` checks, plus negative power, radix < 4, oversubscription < 1, a price without a
source when ``require_sources = true``, an unknown source key, a bad source date or kind, optics or a fabric on a
class without Switch dimensions, and optics without link lengths.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..model.parts import SourcedCatalog
from ..spec import Instance
from .catalog import check_catalog
from .common import read_text, read_yaml_mapping, validation_error

__all__ = ["read_sourced_catalog", "parse_sourced_catalog", "check_sourced_catalog"]

_TOP = ("name", "description", "classes", "sources", "require_sources")
_KINDS = {"links": "link port", "nics": "NIC", "switches": "switch", "optics": "optic"}
_CLASS_KEYS = (*_KINDS, "fabric")


def read_sourced_catalog(path: str | Path, instance: Instance | None = None) -> SourcedCatalog:
    """Read a sourced catalog (``.toml``, or ``.yml`` / ``.yaml``); with ``instance``, also check it against the
    instance's network, constraints and bounds (:func:`check_sourced_catalog`).

    Raises:
        InputError: any bad file, key or value, naming the file, the field and the fix.
    """
    path = Path(path)
    src = str(path)
    if path.suffix.lower() in (".yml", ".yaml"):
        data = read_yaml_mapping(path, "parts catalog")
    else:
        try:
            data = tomllib.loads(read_text(path, "parts catalog"))
        except tomllib.TOMLDecodeError as e:
            raise InputError(src, None, f"invalid TOML: {e}", "fix the TOML syntax") from e
    catalog = parse_sourced_catalog(data, src)
    if instance is not None:
        check_sourced_catalog(catalog, instance, src)
    return catalog


def parse_sourced_catalog(data: Any, source: str) -> SourcedCatalog:
    """Validate a sourced catalog given as a mapping (as read from TOML / YAML); ``source`` names it in errors."""
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a mapping with a 'classes' table", "see the README")
    for k in data:
        if k not in _TOP:
            raise InputError(source, str(k), "unknown key", f"use only {', '.join(_TOP)}")
    classes = data.get("classes")
    if not isinstance(classes, dict) or not classes:
        raise InputError(source, "classes", "missing or empty",
                         "add one [classes.<cost class>] table per cost class of the network")
    for cname, pc in classes.items():
        if not isinstance(pc, dict):
            raise InputError(source, f"classes.{cname}", "expected a table of parts",
                             "give links = [...] (Ring / FullyConnected) or nics, switches, optics and fabric (Switch)")
        for kind, parts in pc.items():
            if kind not in _CLASS_KEYS:
                raise InputError(source, f"classes.{cname}.{kind}", "unknown key", f"use only {', '.join(_CLASS_KEYS)}")
            if kind in _KINDS and not isinstance(parts, list):
                raise InputError(source, f"classes.{cname}.{kind}", "expected a list of tables",
                                 f"write {kind} = [{{ name = ..., ... }}]")
            for i, p in enumerate(parts if kind in _KINDS else []):
                _precheck(p, f"classes.{cname}.{kind}[{i}]", kind, source)
    try:
        return SourcedCatalog(**data)
    except ValidationError as e:
        raise _error(e, data, source) from e


def _precheck(p: Any, field: str, kind: str, source: str) -> None:
    """Errors pydantic would word poorly: a part that is not a table, a missing price."""
    if not isinstance(p, dict):
        raise InputError(source, field, f"expected a table, got {p!r}", "write { name = ..., ... }")
    name = f"{field} ('{p['name']}')" if isinstance(p.get("name"), str) else field
    if kind in ("links", "nics", "optics") and "usd" not in p:
        raise InputError(source, f"{name}.usd", "missing price", f"add usd = <price of one {_KINDS[kind]} in $>")
    if kind == "switches" and "usd_per_switch" not in p and "usd_per_port" not in p:
        raise InputError(source, f"{name}.usd_per_switch", "missing price",
                         "add usd_per_switch = <$ per switch> or usd_per_port = <$ per port>")


def _error(e: ValidationError, data: dict[str, Any], source: str) -> InputError:
    """The first pydantic error as an InputError, with the part's name added to its field."""
    out = validation_error(e, source)
    loc = e.errors()[0]["loc"]
    if len(loc) >= 4 and loc[0] == "classes" and loc[2] in _KINDS and isinstance(loc[3], int) and out.field:
        try:
            name = data["classes"][loc[1]][loc[2]][loc[3]].get("name")
        except (KeyError, IndexError, TypeError, AttributeError):
            name = None
        head = f"classes.{loc[1]}.{loc[2]}[{loc[3]}]"
        if isinstance(name, str) and out.field.startswith(head):
            return InputError(source, out.field.replace(head, f"{head} ('{name}')", 1), out.problem, out.fix)
    return out


def check_sourced_catalog(catalog: SourcedCatalog, instance: Instance, source: str | Path = "catalog") -> None:
    """Check ``catalog`` against ``instance``: everything :func:`hieropt.io.catalog.check_catalog` checks, plus
    optics and fabrics only on classes with Switch dimensions, and link lengths wherever optics are given.

    Raises:
        InputError: the first problem found.
    """
    src = str(source)
    check_catalog(catalog, instance, src)
    for cname, pc in catalog.classes.items():
        blocks = {dim.block for dim in instance.network.dims if dim.cost_class == cname}
        for key in ("optics", "fabric"):
            if getattr(pc, key) and "Switch" not in blocks:
                raise InputError(src, f"classes.{cname}.{key}", f"class '{cname}' has no Switch dimension (it is "
                                 f"used by {'/'.join(sorted(blocks))} dimensions)",
                                 f"remove {key}; a link port's price includes its cable")
        if pc.optics and (pc.fabric is None or not pc.fabric.link_length_m):
            raise InputError(src, f"classes.{cname}.fabric.link_length_m", "missing: optics are chosen by the "
                             "length of each link level", "add [classes.<class>.fabric] link_length_m = [NIC-leaf, "
                             "leaf-spine, ...] in m")
