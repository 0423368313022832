"""Parts-catalog files (TOML or YAML) -> :class:`hieropt.model.catalog.Catalog`, checked against an
instance.

Format (TOML; the same keys in YAML)::

    name = "example-4d"
    description = "EXAMPLE prices, invented"

    [classes.InterNode]                                   # a cost class of the instance's network
    links = [                                             # Ring / FullyConnected dimensions: link
                                                          # ports
      # Gb/s, converted: / 8 -> 25 GB/s
      { name = "link-200g", gbit_per_s = 200, usd = 300, max_per_npu = 8 },
      { name = "link-50GBs", gbps = 50, usd = 550, max_per_npu = 4 },         # GB/s per direction
    ]

    [classes.InterPod]                                    # Switch dimensions: NICs and switches
    nics = [
      { name = "nic-400g", gbit_per_s = 400, usd = 1500, max_per_npu = 2 },
      { name = "nic-800g-node", gbit_per_s = 800, usd = 2600, max_per_node = 4, node_npus = 4 },
    ]
    switches = [
      { name = "sw-64p", radix = 64, usd_per_switch = 40000, port_gbit_per_s = 400 },
      { name = "sw-128p", radix = 128, usd_per_port = 700 },
    ]

Sources, power, optics and fabrics (:mod:`hieropt.model.parts`; ``catalogs/nvl72-infiniband.toml``
is a full
example)::

    require_sources = true                       # every price needs a source
    check_units = false                          # (toy prices only) a NIC and a switch port
                                                 # 300 x apart in $ or W are meant, not a slip
    [sources.vendor-sheet]
    ref = "https://... (vendor data sheet)"
    date = "2026-12-01"
    kind = "spec"                                # list | street | estimate | spec | assumption |
                                                 # invented

    [[classes.InterPod.nics]]                    # (arrays of tables read best with comments per
                                                 # figure)
    name = "nic-400g"
    gbit_per_s = 400
    max_per_npu = 1
    usd = 1500
    watts = 25                                   # W per unit
    source = "vendor-sheet"                      # covers the price (and the power unless
                                                 # watts_source is given)
    [[classes.InterPod.optics]]
    name = "2x400G OSFP DR4"
    reach_m = 100
    ports = 2                                    # switch ports per module (twin-port OSFP)
    fits = "switch"                              # switch | nic | both; kind = "cable" for DAC / AOC
    port_gbit_per_s = 400
    usd = 1250
    watts = 17
    [classes.InterPod.fabric]
    placement = ["per_group", "rail_optimized"]  # or multi_plane; one value or a list to choose
                                                 # from
    oversubscription = [[1, 2]]                  # per tier, leaves first: a ratio >= 1 or a list of
                                                 # choices
    max_tiers = 3
    link_length_m = [30, 100, 500]               # NIC-leaf, leaf-spine, spine-core

Every problem is a one-line :class:`hieropt.errors.InputError` (exit 2) naming the file, the field
and the fix: unknown keys, a missing price, a price without a source where the catalog requires one,
an unknown source key, a bad source date or kind, negative power, a switch radix below 4, an
oversubscription below 1, optics or a fabric on a class without Switch dimensions, optics without
link lengths, zero or negative bandwidth, a cost class the instance's network does not use whose
name is close to one it uses (a typo; other unused classes are left out with a note), a class it
uses with no parts, parts of the wrong kind for the dimension's building block, a node size that
does not divide the cluster, and a dimension none of whose parts can meet the instance's bounds and
design constraints. A part that cannot while others of its dimension can is left out with a note
(:mod:`hieropt.io.catalog_fit`: interval arithmetic over the other dimensions' reachable
bandwidths, so no usable part is ever left out).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..model.catalog import LINK_BLOCKS, Catalog, PartClass
from ..names import close_name
from ..spec import Instance
from .catalog_fit import dimension_parts, part_label, usable_catalog
from .common import (
    model_fields_at,
    path_argument,
    read_toml,
    read_yaml_mapping,
    unknown_key_error,
    validation_error,
)

__all__ = ["read_catalog", "check_catalog", "checked_catalog", "without_unused_classes"]

_KINDS = {"links": "link port", "nics": "NIC", "switches": "switch", "optics": "optic"}
_TOP = ("name", "description", "classes", "sources", "require_sources", "check_units")
_CLASS_KEYS = (*_KINDS, "fabric")


def read_catalog(path: str | Path, instance: Instance | None = None) -> Catalog:
    """Read a catalog file (``.toml``, or ``.yml`` / ``.yaml``) and, if ``instance`` is given, check
    it against the instance (:func:`check_catalog`: then without the parts no design of the
    instance can use).

    Raises:
        InputError: any bad file, key or value, naming the file, the field and the fix; a ``path``
            not a str or Path, naming it.
    """
    path = path_argument(path, "a parts catalog file",
                         'hieropt.load_catalog("catalogs/example-4d.toml")')
    src = str(path)
    if path.suffix.lower() in (".yml", ".yaml"):
        data = read_yaml_mapping(path, "parts catalog")
    else:
        data = read_toml(path, "parts catalog")
    catalog = parse_catalog(data, src)
    from .cluster_units import check_catalog_units

    check_catalog_units(catalog, src)
    if instance is not None:
        catalog = check_catalog(catalog, instance, src)
    return catalog


def parse_catalog(data: Any, source: str) -> Catalog:
    """Validate a catalog given as a mapping (as read from TOML / YAML); ``source`` names it in
    errors."""
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a 'classes' table", "see docs/how-to/provision.md")
    for k in data:
        if k not in _TOP:
            raise unknown_key_error(source, str(k), k, _TOP,
                                    otherwise=f"use only {', '.join(_TOP)}")
    classes = data.get("classes")
    if not isinstance(classes, dict) or not classes:
        raise InputError(source, "classes", "missing or empty",
                         "add one [classes.<cost class>] table per cost class of the network")
    for cname, pc in classes.items():
        if not isinstance(pc, dict):
            raise InputError(
                source,
                f"classes.{cname}",
                "expected a table of parts",
                "give links = [...] (Ring / FullyConnected) or nics, switches, optics and "
                "fabric (Switch)",
            )
        for kind, parts in pc.items():
            if kind not in _CLASS_KEYS:
                raise unknown_key_error(source, f"classes.{cname}.{kind}", kind, _CLASS_KEYS,
                                        otherwise=f"use only {', '.join(_CLASS_KEYS)}")
            if kind in _KINDS and not isinstance(parts, list):
                raise InputError(source, f"classes.{cname}.{kind}", "expected a list of tables",
                                 f"write {kind} = [{{ name = ..., ... }}]")
            for i, p in enumerate(parts if kind in _KINDS else []):
                _precheck(p, f"classes.{cname}.{kind}[{i}]", kind, source)
        _unique_names(pc, cname, source)
    try:
        return Catalog(**data)
    except ValidationError as e:
        raise _error(e, data, source) from e


def _unique_names(pc: dict, cname: str, source: str) -> None:
    """Refuse two parts of one class with one name: the bill of materials could not tell which was
    bought."""
    seen: dict[str, str] = {}
    for field, name in (
        (f"classes.{cname}.{k}[{i}]", p.get("name"))
        for k, ps in pc.items()
        if k in _KINDS
        for i, p in enumerate(ps)
        if isinstance(p, dict) and isinstance(p.get("name"), str)
    ):
        if name in seen:
            raise InputError(
                source,
                f"{field}.name",
                f"'{name}' is also the name of {seen[name]}",
                "give every "
                "part of a class its own name (the bill of materials lists parts by name)",
            )
        seen[name] = field


def _precheck(p: Any, field: str, kind: str, source: str) -> None:
    """Errors pydantic would word poorly: a part that is not a table, an unknown key (named with
    the key it most likely meant, before the price it misspells is reported missing), a missing
    price."""
    if not isinstance(p, dict):
        raise InputError(source, field, f"expected a table, got {p!r}", "write { name = ..., ... }")
    name = f"{field} ('{p['name']}')" if isinstance(p.get("name"), str) else field
    known = model_fields_at(PartClass, (kind,))
    for key in p:  # (an unknown key first: a misspelt price is not a missing one)
        if key not in known:
            raise unknown_key_error(source, f"{name}.{key}", key, known)
    if kind in ("links", "nics", "optics") and "usd" not in p:
        raise InputError(
            source, f"{name}.usd", "missing price", f"add usd = <price of one {_KINDS[kind]} in $>"
        )
    if kind == "switches" and "usd_per_switch" not in p and "usd_per_port" not in p:
        raise InputError(source, f"{name}.usd_per_switch", "missing price",
                         "add usd_per_switch = <$ per switch> or usd_per_port = <$ per port>")


def _error(e: ValidationError, data: dict[str, Any], source: str) -> InputError:
    """The first pydantic error as an InputError, with the part's name added to its field."""
    out = validation_error(e, source)
    loc = e.errors()[0]["loc"]
    if (
        len(loc) >= 4
        and loc[0] == "classes"
        and loc[2] in _KINDS
        and isinstance(loc[3], int)
        and out.field
    ):
        try:
            name = data["classes"][loc[1]][loc[2]][loc[3]].get("name")
        except (KeyError, IndexError, TypeError, AttributeError):
            name = None
        head = f"classes.{loc[1]}.{loc[2]}[{loc[3]}]"
        if isinstance(name, str) and out.field.startswith(head):
            return InputError(
                source, out.field.replace(head, f"{head} ('{name}')", 1), out.problem, out.fix
            )
    return out


def check_catalog(catalog: Catalog, instance: Instance,
                  source: str | Path = "catalog") -> Catalog:
    """:func:`checked_catalog` without its notes: ``catalog`` checked against ``instance``, without
    the parts no design can use.

    Raises:
        InputError: as :func:`checked_catalog`.
    """
    return checked_catalog(catalog, instance, source)[0]


def checked_catalog(catalog: Catalog, instance: Instance, source: str | Path = "catalog",
                    caps: Mapping[int, str] | None = None) -> tuple[Catalog, tuple[str, ...]]:
    """Check ``catalog`` against ``instance``'s network, design constraints and bounds; return it
    without the classes its network does not use and the parts no design can use, and the notes:
    the classes left out (:func:`without_unused_classes`), then one per part left out naming it,
    the bound or constraint it cannot meet and the file
    (:func:`hieropt.io.catalog_fit.usable_catalog`; ``caps``, dimension -> the words naming its
    upper bound, for the bounds that are a cap's, not the instance's: the accelerator's NIC cap,
    :func:`hieropt.io.nic_bound.nic_checked_catalog`), then one per class whose parts are
    faster than the accelerator's scale-up (:func:`hieropt.io.catalog_scaleup.scaleup_notes`).

    Raises:
        InputError: a catalog class the network does not use whose name is close to a used one
            (a typo; an unused class otherwise is left out with a note:
            :func:`without_unused_classes`), a network class without parts, parts
            of the wrong kind for a building block, a node size that does not divide the NPU count,
            a dimension none of whose parts can meet its bounds and the design constraints, or
            more options than the MILP takes.
    """
    src = str(source)
    net = instance.network
    N = net.npus_total
    given = list(catalog.classes)
    catalog, unused = without_unused_classes(catalog, instance, src)
    spare = [c for c in given if c not in catalog.classes]
    for d, dim in enumerate(net.dims):
        pc = catalog.classes.get(dim.cost_class)
        need = ("links",) if dim.block in LINK_BLOCKS else ("nics", "switches")
        if pc is None:
            raise InputError(
                src,
                f"classes.{dim.cost_class}",
                f"missing: dimension {d} ({dim.block}) uses cost class "
                f"'{dim.cost_class}' but the catalog has no parts for it"
                + (f" (its classes {', '.join(spare)} are used by no dimension)" if spare else ""),
                f"add [classes.{dim.cost_class}] with {' and '.join(need)}"
                + (f", or rename one of {', '.join(spare)} to it" if spare else ""),
            )
        for kind in need:
            if not getattr(pc, kind):
                raise InputError(
                    src,
                    f"classes.{dim.cost_class}.{kind}",
                    f"missing: dimension {d} is a {dim.block}",
                    f"add {kind} = [...] "
                    f"({'link ports' if kind == 'links' else _KINDS[kind] + 's'})",
                )
    for cname, pc in catalog.classes.items():
        blocks = {dim.block for dim in net.dims if dim.cost_class == cname}
        for kind in ("links", "nics", "switches"):
            wanted = bool(blocks & set(LINK_BLOCKS)) if kind == "links" else "Switch" in blocks
            if getattr(pc, kind) and not wanted:
                use = "nics and switches" if kind == "links" else "links"
                raise InputError(
                    src,
                    f"classes.{cname}.{kind}",
                    f"class '{cname}' is used only by "
                    f"{'/'.join(sorted(blocks))} dimensions, which are provisioned with {use}",
                    f"remove {kind} or give {use}",
                )
        for kind in ("links", "nics"):
            for i, part in enumerate(getattr(pc, kind)):
                if part.node_npus is not None and (part.node_npus > N or N % part.node_npus):
                    raise InputError(
                        src,
                        f"{part_label(cname, kind, i, part)}.node_npus",
                        f"a node of {part.node_npus} NPUs does not divide the cluster's {N:,} NPUs",
                        f"use a divisor of {N}",
                    )
    _check_fabrics(catalog, instance, src)
    usable, notes = usable_catalog(catalog, instance, src, caps)
    _check_option_count(usable, instance, src)
    from .catalog_scaleup import scaleup_notes

    return usable, unused + notes + scaleup_notes(usable, instance, src)


def without_unused_classes(catalog: Catalog, instance: Instance,
                           source: str | Path = "catalog") -> tuple[Catalog, tuple[str, ...]]:
    """``catalog`` without the cost classes ``instance``'s network does not use, and the note
    naming them (none when every class is used). A parts catalog lists the parts of many designs,
    so a class a given design does not use is ignored, not refused; but a class whose name is
    close (:func:`hieropt.names.close_name`) to a class the network uses and the catalog lacks
    (``InterNod`` for a network using ``InterNode``) is a typo, refused with the name it stands
    for. (A class the catalog defines is no typo of another: ``InterPackage`` beside the
    catalog's ``InterPod`` is left out, not refused.)

    Returns:
        (the catalog with only the classes the network uses, the notes: one line ``FILE: classes
        A, B not used by the instance's network (it uses C, D): ignored``, or none).

    Raises:
        InputError: an unused class whose name is close to a used class's ("did you mean").
    """
    src = str(source)
    used = {dim.cost_class for dim in instance.network.dims}
    unused = [c for c in catalog.classes if c not in used]
    if not unused:
        return catalog, ()
    uses = ", ".join(sorted(used))
    lacking = sorted(used - set(catalog.classes))
    for cname in unused:
        near = close_name(cname, lacking)
        if near is not None:
            raise InputError(
                src,
                f"classes.{cname}",
                f"unknown cost class '{cname}': the instance's network uses {uses}; did you mean "
                f"'{near}'?",
                f"rename the class to '{near}', or remove it",
            )
    kept = catalog.model_copy(
        update={"classes": {k: v for k, v in catalog.classes.items() if k in used}}
    )
    word = "class" if len(unused) == 1 else "classes"
    return kept, (
        f"{src}: {word} {', '.join(unused)} not used by the instance's network (it uses "
        f"{uses}): ignored",
    )


MAX_OPTIONS = 20_000
"""Most provisioning options (part x unit count x switch model x fabric choice) of one dimension:
the MILP has one binary per option, so a unit limit of a million would take minutes and gigabytes
before the first solve."""


def _check_option_count(catalog: Catalog, instance: Instance, src: str) -> None:
    """Reject a catalog whose unit limits give a dimension more than :data:`MAX_OPTIONS` options
    (naming the part with the largest limit)."""
    for d, dim in enumerate(instance.network.dims):
        pc = catalog.classes[dim.cost_class]
        per_unit = 1
        if dim.block not in LINK_BLOCKS:
            spec = pc.fabric
            fabric_choices = (
                len(spec.placement) * len(spec.ratio_choices()) if spec is not None else 1
            )
            per_unit = max(1, len(pc.switches)) * max(1, fabric_choices)
        parts = dimension_parts(catalog, instance, d)
        count = sum(p.max_units for _, _, p in parts) * per_unit
        if count > MAX_OPTIONS:
            kind, i, part = max(parts, key=lambda e: e[2].max_units)
            key = "max_per_npu" if part.per == "NPU" else "max_per_node"
            raise InputError(
                src,
                f"{part_label(dim.cost_class, kind, i, part)}.{key}",
                f"{part.max_units:,} units per {part.per} give dimension {d} {count:,} "
                "options (one "
                f"MILP binary each; at most {MAX_OPTIONS:,})",
                f"lower {key} to the most units an NPU can really take (a few dozen), or "
                "use a faster "
                "part",
            )


def _check_fabrics(catalog: Catalog, instance: Instance, src: str) -> None:
    """Optics and fabric tables only on classes with Switch dimensions; link lengths wherever optics
    are given."""
    for cname, pc in catalog.classes.items():
        blocks = {dim.block for dim in instance.network.dims if dim.cost_class == cname}
        for key in ("optics", "fabric"):
            if getattr(pc, key) and "Switch" not in blocks:
                raise InputError(
                    src,
                    f"classes.{cname}.{key}",
                    f"class '{cname}' has no Switch dimension (it is "
                    f"used by {'/'.join(sorted(blocks))} dimensions)",
                    f"remove {key}; a link port's price includes its cable",
                )
        if pc.optics and (pc.fabric is None or not pc.fabric.link_length_m):
            raise InputError(
                src,
                f"classes.{cname}.fabric.link_length_m",
                "missing: optics are chosen by the length of each link level",
                "add [classes.<class>.fabric] link_length_m = [NIC-leaf, leaf-spine, ...] in m",
            )
