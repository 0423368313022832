"""The answer of a co-design search, carried on: a solved row back to its candidate and instance
(:func:`candidate_instance`), the best rows as self-contained instance files that ``hieropt solve``
re-solves to the same optimum (:func:`write_instances`), and the shortlist provisioned with whole
parts from a catalog and ranked by its bill of materials (:func:`provision_codesign`, as ``explore
--catalog``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError, NoSolutionError
from ...model.catalog import Catalog
from ...model.groups import instance_for
from ...names import with_flag
from ...solvers.cutting import REL_GAP
from ...spec import Instance, Network
from ...spec.cluster import Cluster
from ...spec.space import resolve_top
from ...workloads.llm.comms import own_stream_groups
from ...workloads.llm.space import CodesignSpace
from ..knee import WITHIN, Knee, check_within, knee_after
from .figures import row_params
from .search import Codesign
from .solve import network_cap, space_constraints


def row_network(result: Codesign, row: dict[str, Any]) -> Network:
    """The network of a row's shape (from the search's shapes)."""
    for sid, net in result.enumeration.shapes:
        if sid == row["shape"]:
            return net
    raise InputError(
        "row", "shape", f"no shape {row['shape']!r} in the space", "give a row of this search"
    )


def space_row_network(space: CodesignSpace, row: dict[str, Any]) -> Network:
    """The network of a row's shape from its space alone (the shapes of the row's cluster size, as
    the search enumerated them: :func:`~hieropt.studies.codesign.candidates.shapes_of`), for a
    result read back from its JSON.

    Raises:
        InputError: the space has no shape of that id (the row is of another space)."""
    from ...workloads.llm.lower import lower_stage
    from ...workloads.llm.step import build_step
    from .candidates import shapes_of

    placeholder = lower_stage(build_step(row_params(space, row)))
    for sid, net in shapes_of(space, placeholder, row["npus"] or space.npus):
        if sid == row["shape"]:
            return net
    raise InputError("row", "shape", f"no shape {row['shape']!r} in the space {space.name}",
                     "give the space the result was searched on")


def candidate_instance(result: Codesign, row: dict[str, Any]) -> Instance:
    """The instance the search solved for ``row`` (the same plan, network, placement, constraints,
    targets and dimension mode), with the space's token budget and ``[cluster]``: the instance
    ``hieropt provision`` and ``solve`` give the run's days, MW, MWh and $ of."""
    return row_instance(result.space, row, row_network(result, row))


def row_instance(space: CodesignSpace, row: dict[str, Any], net: Network) -> Instance:
    """:func:`candidate_instance` of ``row`` on ``net`` (its shape's network) in ``space``."""
    placement = {k: tuple(v) for k, v in row["placement"].items()}
    return instance_for(
        row_params(space, row),
        net,
        space.cost,
        placement,
        objective=space.objective,
        constraints=space_constraints(space, net.n_dims),
        name=row["id"],
        max_iteration_time_ns=space.max_iteration_time_ns,
        max_network_cost_usd=network_cap(space, net.npus_total),
        dimension_mode=space.dimension_mode,
        group_bandwidth=space.group_bandwidth,
        tokens=space.tokens,
        cluster=space.cluster,
    )


def instance_document(result: Codesign, row: dict[str, Any],
                      folder: str | Path | None = None) -> dict[str, Any]:
    """A self-contained instance file's content (TOML-ready: no None) for ``row``: the model and
    plan inline (``workload = {generator = "llm", params = ...}``), the network, the placement as
    named groups, the step options (micro-batches, stages, virtual stages, ``overlap_dp`` = the
    plan's ``overlap_grad_reduce``, ``overlap_gather`` = its ``overlap_param_gather``, the
    own-stream groups of its ``overlap_sharded_comms``), the
    constraints, targets, dimension mode and cost model, and the space's token budget and
    ``[cluster]`` (its figures with their sources) when it has them; the network budget is the
    candidate's (:func:`~hieropt.studies.codesign.solve.network_cap`). An NPU from a calibrated
    accelerator file is written as that file (:func:`npu_document`; ``folder``: where the
    instance file goes, the file's path relative to it)."""
    space = result.space
    p = row_params(space, row)
    net = row_network(result, row)
    pl = p.plan
    params = _clean(p.model_dump(mode="json"))
    params["npu"] = npu_document(p.npu, params["npu"], folder)
    doc: dict[str, Any] = {
        "name": f"{space.name}-rank{row.get('rank') or 1}",
        "description": f"co-design candidate {row['id']} of {space.name} ({space.objective} "
        f"{row['objective_value']!r} {row['objective_unit'] or ''})".rstrip(),
        "objective": space.objective,
        "training_loop": "step",
        "dimension_mode": space.dimension_mode,
        "group_bandwidth": space.group_bandwidth,
        "constraints": [resolve_top(t, net.n_dims) for t in space.constraints],
        "network": {"dims": [_clean(d.model_dump(mode="json")) for d in net.dims]},
        "workload": {"generator": "llm", "params": params},
        "mapping": {"groups": _groups(row["placement"])},
        "step": {
            "microbatches": pl.microbatches,
            "stages": pl.pp,
            "virtual_stages": pl.virtual_stages,
            # (the lowering's schedule: an own stream replaces the last backward's overlap)
            "overlap_dp": bool(pl.overlap_grad_reduce) and not own_stream_groups(pl),
            "overlap_gather": bool(pl.overlap_param_gather) and not own_stream_groups(pl),
            **({"overlap_groups": list(own)} if (own := own_stream_groups(pl)) else {}),
        },
        "cost": {k: _clean(c.model_dump(mode="json")) for k, c in space.cost.classes.items()},
    }
    for k in ("max_iteration_time_ns", "tokens"):
        if getattr(space, k) is not None:
            doc[k] = getattr(space, k)
    if (cap := network_cap(space, net.npus_total)) is not None:
        doc["max_network_cost_usd"] = cap  # (with a total budget: what this size's cluster leaves)
    if space.cluster is not None:
        doc["cluster"] = cluster_table(space.cluster)
    return doc


def npu_document(npu: Any, table: dict[str, Any],
                 folder: str | Path | None = None) -> dict[str, Any]:
    """The ``[workload.params.npu]`` of a written instance for ``npu``
    (:class:`hieropt.workloads.llm.NPU`; ``table``: its fields, TOML-ready). An NPU filled from a
    calibrated accelerator file (:func:`hieropt.io.npus.fill_calibrated`) whose fitted values, peak
    and number format are the file's is written as ``calibrated = "FILE"`` (relative to
    ``folder``, the instance file's; absolute without a folder or on another drive) and the fields
    the model file set otherwise (``hbm_reserve_gib``, ...): read back, the plan has the same
    figures and the note states the same fit. One whose fitted value, peak or number format was
    changed by an override is written inline without the file (the same figures; a model file
    may not give them beside the file, and the note then loses the fit's words). Any other NPU:
    ``table`` as it is. ``catalog_peak_tflops`` is left out of every one where it is the shipped
    catalog's (:func:`hieropt.io.npus.catalog_peak_of`: the reader fills it in again from the
    accelerator named); one given otherwise (the model file's own figure) is written."""
    import os

    from ...io.npus import PINNED, catalog_peak_of, read_calibrated_npu

    given = table.get("catalog_peak_tflops")
    table = {k: v for k, v in table.items() if k != "catalog_peak_tflops"}
    if given is not None and given != catalog_peak_of(table):
        table["catalog_peak_tflops"] = given
    path = getattr(npu, "calibrated", None)
    if path is None:
        return table
    file_table, _, values = read_calibrated_npu(path)
    # (the FP8 recipe is the model's, not the file's: written when it is not the default)
    own = {k: v for k, v in table.items() if k not in ("calibrated", "accelerator")
           and (k not in file_table or file_table[k] != v)
           and not (k == "fp8_recipe" and v == "current")}
    if any(k in own for k in (*values, *PINNED)):
        return {k: v for k, v in table.items() if k != "calibrated"}
    where = Path(path)
    if folder is not None:
        try:
            where = Path(os.path.relpath(Path(path).resolve(), Path(folder).resolve()))
        except ValueError:  # (another drive)
            pass
    return {"calibrated": where.as_posix(), **own}


def cluster_table(cluster: Cluster) -> dict[str, Any]:
    """A ``[cluster]`` section as a file gives it (TOML-ready), read back by
    :func:`hieropt.io.cluster.cluster_entry` to the same :class:`Cluster`: each figure a number,
    or ``{value, source}`` when it names a source, and the ``sources`` tables."""
    skip = {"sources", "references", "require_sources"}
    out: dict[str, Any] = {k: v for k, v in cluster.model_dump(mode="json").items()
                           if k not in skip and v is not None}
    for k, key in cluster.sources.items():
        if k in out:
            out[k] = {"value": out[k], "source": key}
    if cluster.references:
        out["sources"] = {k: _clean(r.model_dump(mode="json"))
                          for k, r in cluster.references.items()}
    if cluster.require_sources:
        out["require_sources"] = True
    return out


def _groups(placement: dict[str, Any]) -> dict[str, list[int]]:
    """The placement's named groups for the file, with dp = ep x edp when a mixture-of-experts
    placement gives
    ep and edp only (the reader takes forward / input_grad from tp and weight_grad from dp)."""
    out = {k: list(v) for k, v in placement.items()}
    if "dp" not in out and "ep" in out and "edp" in out:
        out["dp"] = [a * b for a, b in zip(out["ep"], out["edp"], strict=True)]
    return out


def _clean(value: Any) -> Any:
    """``value`` without None entries (TOML has no null)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _design_lines(objective: str, row: dict[str, Any], name: str) -> list[str]:
    """The written file's lines on the row's design: the command that evaluates it, and the re-solve
    (with the performance objective ``hieropt solve`` prints the fastest design it finds, equally
    fast, and this design's cost as its knee line's cheapest of the equally fast designs)."""
    bw = ",".join(repr(float(b)) for b in row["bw_gbps"])
    out = [f"the row's design, GB/s per NPU: hieropt evaluate {name} --bw {bw}"]
    if objective == "performance":
        out.append(f"re-solve: hieropt solve {name} (the same time; the design it prints may be "
                   "dearer: its knee line names this design's cost, the cheapest equally fast)")
    else:
        out.append("re-solve: hieropt solve " + name)
    return out


def instance_files(folder: str | Path, space: str) -> list[Path]:
    """The instance files :func:`write_instances` wrote into ``folder`` for the space named
    ``space`` in any run: ``<space>-rank<r>-<k>.toml`` and ``<space>-solved-rank<r>-<k>.toml``
    (r, k whole numbers), no other file; none when the folder does not exist."""
    import re

    folder = Path(folder)
    name = re.compile(re.escape(space) + r"-(?:solved-)?rank[0-9]+-[0-9]+\.toml")
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if name.fullmatch(p.name) and p.is_file())


def write_instances(result: Codesign, folder: str | Path, top: int = 1) -> list[Path]:
    """Write the ``top`` best candidates of ``result`` as instance files
    ``FOLDER/<space>-rank<r>-<k>.toml`` (:func:`instance_document`; a header comment gives the
    candidate and its proven optimum): the rows of the ranked table, a row of the same plan, time
    and cost as an earlier one folded into it
    (:func:`~hieropt.studies.codesign.rows.fold_ties`). A row whose rank is among the solved
    candidates only (``rank_exact`` False, :attr:`Codesign.ranking`) is written as
    ``<space>-solved-rank<r>-<k>.toml``, its header saying so.

    Raises:
        InputError: ``top`` < 1, or the folder cannot be created or written.
    """
    from ...io.codesign import write_instance_file

    if top < 1:
        raise InputError(with_flag("top", "--top"), None, f"{top} candidates", "give at least 1")
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            with_flag("folder", "--write-instances"),
            str(folder),
            f"cannot create the folder: {e.strerror}",
            "name a folder you can write",
        ) from None
    from .rows import fold_ties

    out = []
    for k, (row, _) in enumerate(fold_ties(result.ranking)[:top], start=1):
        exact = row.get("rank_exact", True)
        solved = "" if exact else "solved-"
        path = folder / f"{result.space.name}-{solved}rank{row['rank']}-{k}.toml"
        among = "" if exact else " among the solved candidates only (the space's: at least it)"
        head = [
            f"co-design candidate {row['id']}",
            f"of space {result.space.name} ({result.space_hash}), rank "
            f"{row['rank']}{among}: {result.space.objective} {row['objective_value']!r} "
            f"{row['objective_unit'] or ''}",
            f"iteration {row['iteration_time_ns']!r} ns, network ${row['network_cost_usd']!r}",
            *_design_lines(result.space.objective, row, path.name),
        ]
        write_instance_file(path, instance_document(result, row, folder), head)
        out.append(path)
    return out


def codesign_knee(space: CodesignSpace, rows: list[dict[str, Any]],
                  within: float = WITHIN) -> tuple[dict[str, Any], Knee] | None:
    """The knee of a co-design answer: the cheapest network within ``within`` of the fastest
    ranked time, over the ranked ``rows`` (:data:`~hieropt.studies.codesign.rows.COLUMNS`; a
    result's ranking, read back from its JSON) that reach that time. The target is (1 + within) x
    the fastest row's proven lower bound on its time (its ``objective_bound`` with the performance
    objective, else its time), and each row's candidate is solved for its cheapest network meeting
    it (:func:`hieropt.studies.knee.knee_after`, the min-cost solve of ``hieropt solve``'s knee):
    for the fastest candidate that is the knee ``hieropt solve`` prints for its instance, and a
    candidate that trades time for network $ better gives a cheaper knee. Knees within the gap
    target (1e-8) of the cheapest are equally cheap: the one on the fewest dimensions, then the
    fewest NICs of its row, then the first in ``rows``' order (on ``codesign-llama3-405b`` 15
    networks give the knee at $332,128,803: ``nvl:SW16 spine:SW1024``'s, not a 3-level split of
    the 50 GB/s scale-out).

    Returns:
        (the knee's row, its :class:`~hieropt.studies.knee.Knee`: ``knee`` the design's
        Solution), or None when no row's candidate has a certified answer at the target.

    Raises:
        InputError: ``within`` not in (0, 1), or a row whose shape is not in ``space``.
    """
    check_within(within)
    fastest = min(rows, key=lambda r: (r["iteration_time_ns"], r["network_cost_usd"]))
    t, usd = float(fastest["iteration_time_ns"]), float(fastest["network_cost_usd"])
    bound = fastest.get("objective_bound") if space.objective == "performance" else None
    bound = min(t, float(bound)) if bound is not None else t
    target = bound * (1 + within)
    found: list[tuple[dict[str, Any], Knee]] = []
    for row in (r for r in rows if r["iteration_time_ns"] <= target):
        inst = row_instance(space, row, space_row_network(space, row))
        try:
            found.append((row, knee_after(inst, t, usd, within, bound_ns=bound)))
        except NoSolutionError:
            continue
    if not found:
        return None
    # (knees within the gap target of the cheapest are equally cheap: the simplest network's)
    least = min(k.knee_usd for _, k in found)
    return min((f for f in found if f[1].knee_usd <= least * (1 + REL_GAP)),
               key=lambda f: (f[0]["n_dims"], f[0].get("nics") or 0))


def provision_codesign(
    result: Codesign, catalog: Catalog | str | Path, top: int = 5
) -> list[dict[str, Any]]:
    """Integer designs (whole parts of ``catalog``) of the ``top`` best candidates of ``result``,
    ranked by the provisioned objective (:func:`hieropt.solvers.provision.provision`, the space's
    objective; its time target when min_cost; its total budget, ``max_total_capex_usd``, with the
    facility the parts' power needs), as ``explore --catalog`` does for shapes.

    Returns:
        One dict per candidate, ranked ones first (``bom_rank`` 1, 2, ...; None when not
            provisioned): ``id``,
        ``continuous_rank``, ``continuous_objective``, ``status``, ``message``, ``objective_value``,
        ``gap``, ``iteration_time_ns``, ``network_cost_usd`` (catalog $), ``power_w`` (W),
        ``bw_gbps`` (GB/s per NPU per dimension) and ``parts`` (one label per dimension: the integer
        bill of materials).

    Raises:
        InputError: a bad catalog file or ``top`` < 1.
    """
    from ..explore.provision import provision_ranked

    if top < 1:
        raise InputError(with_flag("top", "--provision-top"), None, f"{top} candidates",
                         "give at least 1")
    space = result.space
    target = space.max_iteration_time_ns if space.objective == "min_cost" else None
    items = (({"id": row["id"], "continuous_rank": row["rank"],
               "continuous_objective": row["objective_value"], "bom_rank": None},
              candidate_instance(result, row)) for row in result.ranking[:top])
    return provision_ranked(items, catalog, space.objective, target, "id",
                            space.max_total_capex_usd)


__all__ = [
    "row_network",
    "candidate_instance",
    "row_instance",
    "space_row_network",
    "codesign_knee",
    "instance_document",
    "npu_document",
    "cluster_table",
    "instance_files",
    "write_instances",
    "provision_codesign",
]
