"""The bandwidth an accelerator can have per NPU, GB/s per direction: one home for the thresholds
and the words of every check of a design's or a measured run's bandwidths against its NPU.

Two limits, both far from a design that exists:

- the NPU's scale-up bandwidth (``scaleup_gbps`` of its catalog entry, or of the model file's
  ``[params.npu]``: NVLink, Infinity Fabric, per NPU per direction) is the most any of its
  dimensions can have: its scale-up links are its fastest, a NIC is slower still. A design above
  it needs an NPU that does not exist (:func:`bandwidth_caveats`); a measured run's or
  ``evaluate --bw``'s value of :data:`BANDWIDTH_FACTOR` x it or more is a unit slip
  (:func:`check_bandwidths`): exactly that factor is the datasheet's bidirectional figure (600
  GB/s for an A100's NVLink of 300 GB/s per direction, 900 for an H100's 450), to be halved; more
  looks like Gb/s (``2400`` for an A100's NVLink is ``2400 / 8 = 300`` GB/s).
- the network's outermost dimension (of two or more) is its scale-out network: a bandwidth there
  above :data:`SCALEOUT_GBPS` (two of the fastest NICs the project's catalogs know per NPU) other
  than the scale-up bandwidth (an outer NVLink tier runs at that) needs more NICs per NPU than the
  shipped catalogs provision (a caveat on a design), and in a measured run or ``--bw`` looks like
  Gb/s: ``400`` for a 400 Gb/s NIC per GPU is ``400 / 8 = 50`` GB/s, ``800`` for an H100's 800
  Gb/s (above its 450 GB/s NVLink) is ``100`` GB/s.

Solved designs are not refused: co-design spaces explore hypothetical networks on purpose (LIBRA's
"500 GB/s per NPU" budget); the caveat names the NPU, its limit and the bound that keeps a design
within it. Whole parts bought from a catalog are no hypothetical network: there a dimension beyond
the scale-up domain is bounded at ``nic_gbps`` instead (:mod:`hieropt.io.nic_bound`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...errors import InputError

BANDWIDTH_FACTOR = 2.0
"""A dimension's bandwidth of this multiple of the accelerator's scale-up bandwidth is refused as
the datasheet's bidirectional figure, and one above it as Gb/s (a measured run's, ``--bw``'s)."""
NIC_GBPS = 100.0
"""The fastest NIC the shipped catalogs know, GB/s per direction: 800 Gb/s (NVIDIA ConnectX-8
SuperNIC)."""
SCALEOUT_GBPS = 2 * NIC_GBPS
"""The most scale-out bandwidth per NPU, GB/s per direction: two NICs of 800 Gb/s (100 GB/s each)
per NPU, the fastest NIC and the most per NPU the shipped catalogs provision (NVIDIA ConnectX-8
SuperNIC, 800 Gb/s, ``max_per_npu = 2`` in catalogs/nvl72-ethernet.toml and
nvl72-infiniband.toml)."""
LEAST_GBPS = 1.0
"""A known accelerator's dimensions all below this (GB/s per NPU per direction, 8 Gb/s: less than
one 10 Gb/s Ethernet port per NPU) are refused as TB/s in a measured run or ``--bw`` (``0.45,0.05``
for an H100's 450 GB/s of NVLink and 50 GB/s of scale-out); one slow dimension beside faster ones
(a port shared by many NPUs) is not."""
_REL = 1e-9
"""Relative tolerance of "equal to the scale-up bandwidth" and "above a limit" (a design bounded
at the limit is at it, not above)."""


def _above(b: float, limit: float) -> bool:
    return b > limit * (1 + _REL)


def _at(b: float, limit: float) -> bool:
    return abs(b - limit) <= _REL * max(abs(limit), abs(b))


def bandwidth_caveats(
    bw_gbps: Sequence[float],
    scaleup: float | None,
    npu: str,
    source: str = "catalog",
    scaleout_gbps: float | None = None,
    space: bool = False,
    domain: tuple[Sequence[int], int, float] | None = None,
    domain_sources: tuple[str, str] | None = None,
    scaleup_words: str | None = None,
) -> tuple[str, ...]:
    """Caveats on a design's bandwidths ``bw_gbps`` (GB/s per NPU per direction, one per dimension,
    innermost first) for an NPU ``npu`` whose scale-up bandwidth is ``scaleup`` (GB/s per
    direction; None: unknown, no caveat), as given by ``source`` (``catalog``, ``model file``,
    ``calibrated file NAME``):
    every dimension above ``scaleup`` (no such NPU exists), and scale-out above
    :data:`SCALEOUT_GBPS` other than ``scaleup`` (more NICs per NPU than two of the fastest):
    ``scaleout_gbps``, the scale-out per NPU (a co-design candidate's, over the dimensions of its
    scale-out level), else the outermost dimension's when there are two or more; an outermost
    dimension with that caveat gets no other. Empty when the design is within both. The fix
    bounds the dimension in an instance's syntax (``[[bounds]]`` ``upper_gbps``), or with
    ``space`` in a co-design space's (``constraints = ["bw[0] <= 300"]``: the dimension's index,
    ``top`` for the outermost). With ``domain`` (the NPUs of each dimension, innermost first; the
    NPU's scale-up domain, ``scaleup_npus``; its NIC limit, ``nic_gbps``, GB/s per direction,
    both from ``source``, or as ``domain_sources`` words them: :func:`training_figure_source`)
    also every dimension reaching beyond that domain faster than the NIC limit
    (:func:`domain_caveats`; not the outermost when it has the scale-out caveat).
    ``scaleup_words``: where ``scaleup`` comes from as the NIC cap words it
    (:func:`training_figure_source` of ``scaleup_gbps``; None: :func:`figure_source` of
    ``source``)."""
    if scaleup is None:
        return ()
    bw = [float(b) for b in bw_gbps]
    out = []
    scaleout = None
    if scaleout_gbps is not None:
        scaleout = ("scale-out", float(scaleout_gbps))
    elif len(bw) >= 2:
        scaleout = (f"dimension {len(bw) - 1} (scale-out)", bw[-1])
    nics = None
    if scaleout is not None and _above(scaleout[1], SCALEOUT_GBPS) and not _at(
        scaleout[1], scaleup
    ):
        what, b = scaleout
        nics = (
            f"{what}: {b:.4g} GB/s per NPU is more scale-out per NPU than two 800 Gb/s NICs "
            f"({math.ceil(b / NIC_GBPS * (1 - _REL))} such NICs per NPU; the shipped catalogs "
            f"provision at most two): bound it (at most {SCALEOUT_GBPS:g} GB/s per NPU) or take "
            "it as a hypothetical network"
        )
    for d, b in enumerate(bw):
        if nics is not None and d == len(bw) - 1:
            continue  # (the outermost dimension: its scale-out caveat says more)
        if _above(b, scaleup):
            out.append(
                f"dimension {d}: {b:.4g} GB/s per NPU is above the {npu}'s scale-up bandwidth of "
                f"{scaleup:g} GB/s per direction "
                f"({scaleup_words or figure_source('scaleup_gbps', npu, source)}): no such NPU "
                f"exists; bound it "
                f"({_bound_text(d, len(bw), scaleup, space)}) or name another accelerator"
            )
    beyond = () if domain is None else domain_caveats(bw, *domain, npu, space, source,
                                                      domain_sources)
    if nics is not None and domain is not None:  # (the outermost: its scale-out caveat says more)
        beyond = domain_caveats(bw[:-1], domain[0][:-1], *domain[1:], npu, space, source,
                                domain_sources)
    return tuple(out) + ((nics,) if nics is not None else ()) + beyond


def figure_source(field: str, npu: str, source: str = "catalog", given: bool = False,
                  catalog: str | None = None) -> str:
    """Where the figure ``field`` (``scaleup_gbps``, ``scaleup_npus``, ``nic_gbps``) of the NPU
    ``npu`` comes from, in
    the words of the scale-up domain's caveat (:func:`domain_caveats`), of the NIC cap's notes
    (:mod:`hieropt.io.nic_bound`) and of a measured run's check
    (:func:`hieropt.io.run_units.check_nic_bandwidth`): ``[params.npu] FIELD of the model file``
    (or ``of the calibrated file NAME``) when ``source``, where the NPU's figures come from
    (:attr:`hieropt.spec.Training.scaleup_source`: ``catalog``, ``model file``, ``calibrated file
    NAME``), is not the catalog; ``[params.npu] FIELD of the model file, given in place of the
    catalog's`` when the model file names an accelerator of the catalog but gives another figure
    (``given``); else ``catalog FIELD of the NPU``. ``catalog``: the path of the model file's own
    accelerator catalog (``npu_catalog``), named in place of "the catalog" (None: the shipped
    one, ``catalogs/npus.toml``)."""
    if source != "catalog":
        return f"[params.npu] {field} of the {source}"
    if given:
        theirs = "the catalog's" if catalog is None else f"the catalog {catalog}'s"
        return f"[params.npu] {field} of the model file, given in place of {theirs}"
    return f"catalog {field} of the {npu}" + ("" if catalog is None else f" in {catalog}")


def training_figure_source(training: Any, field: str) -> str:
    """:func:`figure_source` of the figure ``field`` (``scaleup_gbps``, ``scaleup_npus``,
    ``nic_gbps``) of the NPU of
    ``training`` (a :class:`hieropt.spec.Training`: its NPU's name, ``scaleup_source``,
    ``given_figures`` and ``npu_catalog``)."""
    tr = training
    return figure_source(field, tr.npu, tr.scaleup_source, field in tr.given_figures,
                         tr.npu_catalog)


def domain_caveats(bw_gbps: Sequence[float], dims_npus: Sequence[int], scaleup_npus: int,
                   nic_gbps: float, npu: str, space: bool = False,
                   source: str = "catalog",
                   sources: tuple[str, str] | None = None) -> tuple[str, ...]:
    """The caveat on the dimensions of a design (bandwidths ``bw_gbps``, GB/s per NPU per
    direction, and NPUs ``dims_npus`` per dimension, innermost first) that reach beyond the NPU's
    scale-up domain of ``scaleup_npus`` NPUs (the NPUs of the dimensions up to and with it,
    multiplied innermost first) at more than ``nic_gbps``, the most one NPU sends through its NIC
    (GB/s per direction: its PCIe x16 host link to the fastest NIC on it): their traffic leaves
    the baseboard or rack, so they need a scale-up tier beyond that domain (an NVLink Switch
    System, where the part has one) or a NIC faster than any the NPU can feed. One caveat naming
    every such dimension (empty: none), and where the two figures come from (``sources``: the
    words of ``scaleup_npus`` and ``nic_gbps``, :func:`training_figure_source`; None: those of
    ``source``, :func:`figure_source`). The measured-run form
    of the rule refuses such a value (:func:`hieropt.io.run_units.check_nic_bandwidth`); a design
    gets the caveat and keeps its answer, and whole parts bought from a catalog are bounded at
    ``nic_gbps`` (:func:`hieropt.io.nic_bound.nic_bounded`). The fix bounds each at
    ``nic_gbps`` (:func:`bandwidth_caveats`' syntax); in a co-design space (``space``) first the
    level's size (a constraint row bounds the dimension in every shape, the domain's own too)."""
    found, reach = [], 1
    for d, (b, n) in enumerate(zip(bw_gbps, dims_npus, strict=False)):
        reach *= int(n)
        if reach > scaleup_npus and _above(float(b), nic_gbps):
            found.append((d, float(b), reach))
    if not found:
        return ()
    one = len(found) == 1
    what = "dimension" if one else "dimensions"
    ids = ", ".join(str(d) for d, _, _ in found)
    gbps = ", ".join(f"{b:.4g}" for _, b, _ in found)
    npus = ", ".join(f"{r:,}" for _, _, r in found)
    n = len(bw_gbps)
    domain_words, nic_words = sources or (figure_source("scaleup_npus", npu, source),
                                          figure_source("nic_gbps", npu, source))
    if space:  # (a constraint row binds every shape: the level's size spares the domain's own)
        rows = ", ".join(
            _bound_text(d, n, nic_gbps, True).split("= [", 1)[1][:-1] for d, _, _ in found
        )
        fix = (f"give {'its level' if one else 'their levels'} at most {scaleup_npus} NPUs in "
               f"all ([[levels]] npus), or the space's constraints = [{rows}]")
    else:
        fix = _bound_text(found[0][0], n, nic_gbps, False) + ("" if one else " on each")
    return (
        f"{what} {ids}: {gbps} GB/s per NPU across {npus} NPUs, beyond the {npu}'s scale-up "
        f"domain of {scaleup_npus} ({domain_words}, its "
        f"baseboard or rack): past it one {npu} sends at most {nic_gbps:g} GB/s through its NIC "
        f"({nic_words}), so {'it needs' if one else 'they need'} a "
        f"scale-up tier beyond that domain; bound {'it' if one else 'them'} ({fix}) or take it "
        "as a hypothetical network",
    )


def _bound_text(d: int, n_dims: int, scaleup: float, space: bool) -> str:
    """How to bound dimension ``d`` of ``n_dims`` to ``scaleup`` GB/s per NPU: in a co-design
    space's constraints (``space``; ``bw[top]`` for the outermost, which fits every dimension
    count) or an instance's bounds."""
    if not space:
        return f"bounds upper_gbps = {scaleup:g}"
    index = "top" if d == n_dims - 1 and d > 0 else str(d)
    return f'the space\'s constraints = ["bw[{index}] <= {scaleup:g}"]'


def check_bandwidths(
    bw_gbps: Sequence[float],
    scaleup: float | None,
    npu: str,
    where: str,
    scaleout: int | None = None,
    field: str | None = "bw_gbps",
    sep: str = ";",
    above: float | None = None,
) -> None:
    """Refuse a dimension bandwidth of :data:`BANDWIDTH_FACTOR` x ``scaleup`` or more (GB/s per NPU
    per direction; None: not checked; exactly that factor: the datasheet's bidirectional figure),
    and a bandwidth of the network's scale-out dimension ``scaleout`` (its outermost, when the
    values use it; None: not checked) above :data:`SCALEOUT_GBPS` other than ``scaleup`` (a NIC's
    Gb/s). For a measured run's bandwidths and ``evaluate --bw`` (``field``: the field the values
    came from, None for a flag; ``sep``: how the fix writes a list of them, ``;`` in a runs file,
    ``,`` for ``--bw``; ``above``: values at or above it are not checked, ``--bw``'s what-if
    of a dimension with no limit, ``1e6``); and every dimension below :data:`LEAST_GBPS` (TB/s).

    Raises:
        InputError: ``where: field``, the dimension, the figure / 8 (or / 2) and the fix.
    """
    if scaleup is None:
        return
    bw = tuple(float(b) for b in bw_gbps)
    for i, b in enumerate(bw):
        if above is not None and b >= above:
            continue
        if abs(b - BANDWIDTH_FACTOR * scaleup) <= 1e-9 * b:
            raise InputError(
                where,
                field,
                f"dimension {i}: {b:g} GB/s per NPU is {BANDWIDTH_FACTOR:g} x the {npu}'s "
                f"scale-up bandwidth ({scaleup:g} GB/s per direction): looks like the datasheet's "
                "bidirectional figure",
                f"give GB/s per NPU per direction: the datasheet's bidirectional figure / 2 = "
                f"{b / 2:g} ("
                + sep.join(f"{b / 2 if j == i else x:g}" for j, x in enumerate(bw))
                + ")",
            )
        if b > BANDWIDTH_FACTOR * scaleup:
            raise InputError(
                where,
                field,
                f"dimension {i}: {b:g} GB/s per NPU is more than {BANDWIDTH_FACTOR:g} x the "
                f"{npu}'s scale-up bandwidth ({scaleup:g} GB/s per direction): looks like Gb/s "
                f"(/ 8 = {b / 8:g} GB/s)",
                "give GB/s per NPU per direction (a Gb/s link rate / 8, the datasheet's "
                f"bidirectional figure / 2): {sep.join(f'{x / 8:g}' for x in bw)} if every "
                "value is Gb/s",
            )
    checked = [b for b in bw if above is None or b < above]
    if checked and max(checked) < LEAST_GBPS and max(checked) > 0:
        raise InputError(
            where,
            field,
            f"every dimension below {LEAST_GBPS:g} GB/s per NPU "
            f"({', '.join(f'{b:g}' for b in bw)}) on the {npu}, whose scale-up alone has "
            f"{scaleup:g} GB/s per direction: looks like TB/s",
            f"give GB/s per NPU per direction (TB/s x 1,000): "
            f"{sep.join(f'{x * 1000:g}' for x in bw)} if every value is TB/s",
        )
    if scaleout is None or scaleout >= len(bw):
        return
    b = bw[scaleout]
    if b <= SCALEOUT_GBPS or abs(b - scaleup) <= 1e-9 * scaleup:
        return
    if above is not None and b >= above:
        return
    raise InputError(
        where,
        field,
        f"dimension {scaleout} (scale-out): {b:g} GB/s per NPU is more than {SCALEOUT_GBPS:g} "
        f"GB/s, two 800 Gb/s NICs per NPU: {b:g} looks like Gb/s: {b / 8:g} GB/s",
        "give GB/s per NPU per direction (NICs per NPU x Gb/s / 8): "
        + sep.join(f"{b / 8 if j == scaleout else x:g}" for j, x in enumerate(bw))
        + f" if it is Gb/s; an outer scale-up tier runs at the scale-up {scaleup:g} GB/s",
    )


def check_bound_units(bounds: Sequence[tuple[float, float | None]], scaleup: float | None,
                      npu: str, where: str) -> None:
    """Refuse an instance's bounds (``(lower_gbps, upper_gbps)`` per dimension, GB/s per NPU per
    direction; None: no upper bound) whose upper bounds are all below :data:`LEAST_GBPS` on a known
    accelerator (``scaleup``: its scale-up GB/s per direction, None: not checked): TB/s, as
    :func:`check_bandwidths` refuses ``--bw 0.45,0.05``.

    Raises:
        InputError: ``where: bounds``, the upper bounds and the same bounds in GB/s.
    """
    uppers = [u for _, u in bounds if u is not None]
    if scaleup is None or not uppers or max(uppers) >= LEAST_GBPS:
        return
    raise InputError(
        where, "bounds",
        f"every upper_gbps below {LEAST_GBPS:g} GB/s per NPU "
        f"({', '.join(f'{u:g}' for u in uppers)}) on the {npu}, whose scale-up alone has "
        f"{scaleup:g} GB/s per direction: looks like TB/s",
        "give GB/s per NPU per direction (TB/s x 1,000) in lower_gbps and upper_gbps: "
        + ", ".join(f"upper_gbps = {u * 1000:g}" for u in uppers) + " if every value is TB/s")


__all__ = [
    "check_bound_units",
    "domain_caveats",
    "figure_source",
    "training_figure_source",
    "BANDWIDTH_FACTOR",
    "LEAST_GBPS",
    "NIC_GBPS",
    "SCALEOUT_GBPS",
    "bandwidth_caveats",
    "check_bandwidths",
]
