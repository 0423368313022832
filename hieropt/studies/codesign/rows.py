"""The rows of a co-design search: their columns (:data:`COLUMNS`), the typed row of one candidate
(:class:`CodesignRow`), the rows of candidates settled without a solve (:class:`UnsolvedRows`), and
what a search keeps of its rows (:class:`Tally`: counts, the best rows, per dimension count), so
that its memory does not grow with the number of candidates: every row goes to the results file and
the caller's ``on_row`` and is dropped."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from typing import Any

from ...solvers.cutting import REL_GAP
from ...solvers.procurement import PPC_GAP
from ...workloads.llm.space import CodesignSpace
from ..explore.results import typed_row
from ..explore.run import SOLVED, rank_rows
from .candidates import CodesignCandidate

COLUMNS: tuple[tuple[str, type], ...] = (
    ("id", str),
    ("space_hash", str),
    ("plan", str),
    ("shape", str),
    ("placement", dict),
    ("n_dims", int),
    ("npus", int),
    ("tp", int),
    ("cp", int),
    ("pp", int),
    ("dp", int),
    ("ep", int),
    ("zero_stage", int),
    ("recompute", str),
    ("recompute_layers", int),
    ("sequence_parallel", int),
    ("virtual_stages", int),
    ("micro_batch_size", int),
    ("overlap_grad_reduce", int),
    ("status", str),
    ("message", str),
    ("objective", str),
    ("objective_value", float),
    ("objective_bound", float),
    ("objective_unit", str),
    ("gap", float),
    ("lower_bound", float),
    ("iteration_time_ns", float),
    ("compute_ns", float),
    ("bubble_ns", float),
    ("communication_ns", float),
    ("communication_by_group_ns", dict),
    ("memory_bytes", float),
    ("network_cost_usd", float),
    ("bw_gbps", list),
    ("scaleout_gbps_per_npu", float),
    ("nics", int),
    ("notes", list),
    ("solve_seconds", float),
    ("worker", str),
)
"""Columns of a co-design results file, with their types (empty: not applicable). ``status`` is
``optimal``, ``limit``, ``infeasible``, ``unbounded``, ``error`` or ``pruned`` (bound >= incumbent,
not solved). ``compute_ns`` + ``bubble_ns`` + ``communication_ns`` (exposed) =
``iteration_time_ns``, the evaluator's split (:mod:`hieropt.model.breakdown`). ``placement`` (group
-> its size on each dimension), ``communication_by_group_ns`` (group -> ns per iteration the slowest
stage issues; not parts of the exposed communication) and ``bw_gbps`` (GB/s per NPU per dimension)
are an object, an object and an array, ``notes`` an array of texts (an NPU peak below half
the catalog's, TP on a scale-out dimension) (JSON text in a CSV cell or Parquet string). ``nics``:
:func:`hieropt.spec.space.nic_count`. ``recompute_layers``: with ``full`` recompute, the blocks
recomputed per stage (per model chunk when interleaved), the first of each (the model file's
``plan.recompute_layers``; empty: every block, or no full recompute)."""
NAMES = tuple(n for n, _ in COLUMNS)
ADDED_COLUMNS = ("recompute_layers", "cp")
"""Columns a results file written by an older hieropt lacks: such a file is still resumed, its
rows read back with them filled in (:func:`with_added_columns`), and a CSV is rewritten so before
rows are appended: each old row with its cp, plan id, row id and placement as a search writes them
now (as ``hieropt report`` reads an older JSON, :func:`result_with_added_columns`)."""


def with_added_columns(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` read back from a results file, with what an older file's row lacks
    (:data:`ADDED_COLUMNS`) filled in: ``recompute_layers`` N of a ``fullN`` plan id
    (:func:`~hieropt.studies.codesign.plans.plan_id`), else empty (every block, or no full
    recompute); ``cp`` = npus / (tp pp dp), and the plan id (and the row's id, which starts with
    it) without ``cpN`` given it after ``tpN``, as a search names the plan now (so the candidate is
    known as resumed); a ``placement`` without ``cp`` gets the cp group's size per dimension from
    the id's placement (``... | tp 8x1 cp 1x2 dp 9x8 pp 1x2``: cp [1, 2])."""
    if row.get("recompute_layers") is None:
        m = re.search(r"(?:^| )full([0-9]+)(?: |$)", row.get("plan") or "")
        row["recompute_layers"] = int(m.group(1)) if m else None
    plan = row.get("plan") or ""
    if row.get("cp") is None and all(row.get(k) for k in ("npus", "tp", "pp", "dp")):
        row["cp"] = row["npus"] // (row["tp"] * row["pp"] * row["dp"])
    if row.get("cp") and not re.search(r"(?:^| )cp[0-9]+ ", plan):
        new = re.sub(r"^(tp[0-9]+) ", rf"\1 cp{row['cp']} ", plan)
        if (row.get("id") or "").startswith(plan + " |"):
            row["id"] = new + row["id"][len(plan):]
        row["plan"] = new
    sizes = re.search(r"\| [^|]*(?:^| )cp ([0-9]+(?:x[0-9]+)*)(?: |$)", row.get("id") or "")
    if sizes and isinstance(row.get("placement"), dict) and "cp" not in row["placement"]:
        cp = [int(x) for x in sizes.group(1).split("x")]
        row["placement"] = {**{k: v for k, v in row["placement"].items() if k == "tp"},
                            "cp": cp,
                            **{k: v for k, v in row["placement"].items() if k != "tp"}}
    return row


def result_with_added_columns(data: dict[str, Any]) -> dict[str, Any]:
    """A co-design result's JSON (``codesign --json``) read back with its rows as
    :func:`with_added_columns` gives them (``best``, ``ranking``, each size's ``best``: an older
    result's rows get ``cp`` = npus / (tp pp dp) and plan ids naming it, as a resumed results
    file's rows do), and the ids that refer to them (``tie_of``, ``by_dims`` and ``by_npus``'s
    ``best``, ``provisioned``'s ``id``) renamed alike. ``data`` is changed in place and
    returned."""
    renamed: dict[str, str] = {}

    def fill(row: Any) -> None:
        if isinstance(row, dict) and isinstance(row.get("plan"), str):
            old = row.get("id")
            with_added_columns(row)
            if isinstance(old, str) and row.get("id") != old:
                renamed[old] = row["id"]

    fill(data.get("best"))
    for row in data.get("ranking") or ():
        fill(row)
    for size in data.get("sizes") or ():
        if isinstance(size, dict):
            fill(size.get("best"))
    refs = [(r, "tie_of") for r in data.get("ranking") or ()]
    refs += [(e, "best") for k in ("by_dims", "by_npus") for e in data.get(k) or ()]
    refs += [(p, "id") for p in data.get("provisioned") or ()]
    for entry, key in refs:
        if isinstance(entry, dict) and isinstance(entry.get(key), str):
            entry[key] = renamed.get(entry[key], entry[key])
    return data


def base_row(space: CodesignSpace, cand: CodesignCandidate) -> dict[str, Any]:
    """The columns of ``cand``'s row that need no solve (plan, shape, placement, bound, memory)."""
    pl = cand.params.plan
    row: dict[str, Any] = dict.fromkeys(NAMES)
    row.update(
        id=cand.id,
        plan=cand.plan_id,
        shape=cand.shape_id,
        placement=_placement(cand),
        n_dims=cand.network.n_dims,
        npus=pl.npus,
        tp=pl.tp,
        cp=pl.cp,
        pp=pl.pp,
        dp=pl.dp,
        ep=pl.ep,
        zero_stage=pl.zero_stage,
        recompute=pl.recompute,
        recompute_layers=pl.recompute_layers,
        sequence_parallel=int(pl.sequence_parallel),
        virtual_stages=pl.virtual_stages,
        micro_batch_size=pl.micro_batch_size,
        overlap_grad_reduce=int(pl.overlap_grad_reduce),
        objective=space.objective,
        lower_bound=cand.lower_bound,
        memory_bytes=cand.memory_bytes,
    )
    return row


def _placement(cand: CodesignCandidate) -> dict[str, list[int]]:
    return {k: list(v) for k, v in cand.placement.items()}


_OWN = ("id", "shape", "placement", "n_dims", "status", "message", "lower_bound", "memory_bytes")
OWN_COLUMNS = tuple(c for c in COLUMNS if c[0] in _OWN)
"""The columns of a row that is not solved (pruned, or infeasible by its bound) in which the
candidates of one plan differ; the others are the plan's (:class:`UnsolvedRows`)."""


class UnsolvedRows:
    """Typed rows (:func:`~hieropt.studies.explore.results.typed_row` of :data:`COLUMNS`) of
    candidates that are not solved. A pruned search settles most candidates this way (13,172 of
    13,350 in ``spaces/codesign-1t-4096.toml``), so the columns a plan's candidates share are typed
    once per plan and only :data:`OWN_COLUMNS` per candidate; :meth:`row` equals ``typed_row({**row
    of the candidate, status, message, space_hash}, COLUMNS)`` (the tests check it). The shared
    columns are kept per plan (memory per plan, not per candidate)."""

    def __init__(self, space: CodesignSpace, space_hash: str):
        self.space, self.space_hash = space, space_hash
        self._plans: dict[str, dict[str, Any]] = {}

    def row(self, cand: CodesignCandidate, status: str, message: str) -> dict[str, Any]:
        """The typed row of ``cand`` with ``status`` and ``message``."""
        base = self._plans.get(cand.plan_id)
        if base is None:
            base = self._plans[cand.plan_id] = typed_row({**base_row(self.space, cand),
                                                          "space_hash": self.space_hash}, COLUMNS)
        # typed_row's rule for the own columns: "" / None / nan -> None ("" for message)
        row = base.copy()
        row["id"] = cand.id or None
        row["shape"] = cand.shape_id or None
        row["placement"] = _placement(cand)
        row["n_dims"] = len(cand.network.dims)
        row["status"] = status or None
        row["message"] = message or ""
        lb, mem = cand.lower_bound, cand.memory_bytes
        row["lower_bound"] = float(lb) if lb == lb else None  # (x != x: nan)
        row["memory_bytes"] = float(mem) if mem == mem else None
        return row


@dataclasses.dataclass(frozen=True)
class CodesignRow:
    """One candidate's row, typed (the fields are :data:`COLUMNS`, with their meanings and units
    there, plus ``rank``, ``equivalents`` and ``equivalent_shapes`` in a ranking,
    :func:`fold_equivalent`, and ``rank_exact``: whether the rank is the space's or among the
    solved candidates only, :attr:`~hieropt.studies.codesign.result.Codesign.ranking`). Lists and
    objects: ``placement`` {group: [size per dimension]}, ``bw_gbps`` (GB/s per NPU per
    dimension, innermost first), ``communication_by_group_ns`` {group: ns per iteration}.
    Build one with :meth:`from_row`; :meth:`to_dict` gives the JSON-ready dictionary."""

    id: str
    space_hash: str | None
    plan: str
    shape: str
    placement: dict[str, list[int]]
    n_dims: int
    npus: int | None
    tp: int
    cp: int
    pp: int
    dp: int
    ep: int
    zero_stage: int
    recompute: str
    recompute_layers: int | None
    sequence_parallel: int
    virtual_stages: int
    micro_batch_size: int
    overlap_grad_reduce: int | None
    status: str
    message: str
    objective: str
    objective_value: float | None
    objective_bound: float | None
    objective_unit: str | None
    gap: float | None
    lower_bound: float | None
    iteration_time_ns: float | None
    compute_ns: float | None
    bubble_ns: float | None
    communication_ns: float | None
    communication_by_group_ns: dict[str, float] | None
    memory_bytes: float | None
    network_cost_usd: float | None
    bw_gbps: list[float] | None
    scaleout_gbps_per_npu: float | None
    nics: int | None
    notes: list[str] | None
    solve_seconds: float | None
    worker: str | None
    rank: int | None = None
    equivalents: int = 0
    equivalent_shapes: list[str] = dataclasses.field(default_factory=list)
    rank_exact: bool | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CodesignRow:
        """The typed row of a row dictionary (the columns of :data:`COLUMNS`; ``rank``,
        ``equivalents`` and ``equivalent_shapes`` of a ranking optional)."""
        return cls(
            **{n: row.get(n) for n in NAMES},
            rank=row.get("rank"),
            equivalents=row.get("equivalents", 0),
            equivalent_shapes=list(row.get("equivalent_shapes", ())),
            rank_exact=row.get("rank_exact"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dictionary (lists and objects kept; the plan's flags as
        booleans, :func:`json_flags`)."""
        return json_flags(dataclasses.asdict(self))


def objective_unit(space: Any) -> str:
    """The unit of the space's objective values: ns, USD, ns*USD, and for min_run_cost ``USD per
    run`` with a token budget, ``USD per iteration`` without one."""
    if space.objective == "min_run_cost":
        return f"USD per {'iteration' if space.tokens is None else 'run'}"
    return {"performance": "ns", "min_cost": "USD"}.get(space.objective, "ns*USD")


FLAGS = ("sequence_parallel", "overlap_grad_reduce")
"""The plan's yes/no fields: 0/1 in a results file (a CSV or Parquet column of :data:`COLUMNS`,
which older files read back too), booleans in JSON (:func:`json_flags`)."""


def json_flags(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its :data:`FLAGS` as JSON booleans (``true``/``false``; an empty one stays
    null), the way ``workload plan --json`` writes the plan."""
    return {**row, **{k: None if row.get(k) is None else bool(row[k]) for k in FLAGS if k in row}}


def _sig(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.10g}")


def fold_equivalent(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Solved rows with the rows of *equivalent shapes* folded into one: the same plan and placement
    giving the same bandwidth per dimension, objective value and network cost (10 significant
    digits) on shapes that differ only in their level names or building blocks (e.g. ``chiplet:FC2
    pod:SW2048`` and ``chiplet:R2 pod:SW2048``). The first by id stays, with ``equivalents`` (how
    many were folded into it) and ``equivalent_shapes`` (their shape ids); every row stays in the
    results file."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["id"]):
        key = (r["plan"], json.dumps(r["placement"], sort_keys=True), _sig(r["objective_value"]),
               _sig(r["network_cost_usd"]), tuple(_sig(b) for b in r["bw_gbps"] or ()))
        groups.setdefault(key, []).append(r)
    return [{**g[0], "equivalents": len(g) - 1, "equivalent_shapes": [r["shape"] for r in g[1:]]}
            for g in groups.values()]


def fold_ties(ranking: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The rows a ranked table shows: ``ranking`` (best first, with ``rank``: :meth:`Tally.ranking`)
    with each row folded into the first earlier row of the same plan and rank: the same plan on
    another network (shape or placement) whose objective value ties it within the gap target,
    ranked after it by the tie-break (its network cost with the performance objective, else its
    time: :func:`~hieropt.studies.explore.run.rank_rows`), so no better for the buyer. E.g. on
    ``codesign-llama3-405b`` 34 networks of one plan at 5,317.1092 ms and $341,475,318 (the
    scale-out levels priced alike, the 50 GB/s per NPU split among them at will), and more of it
    at that time and a higher cost, fill the first 60 ranked rows.

    Returns:
        (row shown, the rows folded into it, in ranking order) per row shown, in ranking order.
    """
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    heads: dict[tuple[str, Any], int] = {}
    for r in ranking:
        i = heads.get(key := (r["plan"], r["rank"]))
        if i is None:
            heads[key] = len(out)
            out.append((r, []))
        else:
            out[i][1].append(r)
    return out


def json_ranking(ranking: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    """A JSON's ``ranking``: the ``top`` best rows of ``ranking`` (:meth:`Tally.ranking`) and the
    ``top`` rows the ranked table shows (:func:`fold_ties`), in ranking order, each with
    ``tie_of``: None for a row the table shows, else the id of the row it is folded into."""
    tie_of: dict[str, str | None] = {}
    shown = fold_ties(ranking)
    for head, folded in shown:
        tie_of[head["id"]] = None
        tie_of.update((r["id"], head["id"]) for r in folded)
    keep = {head["id"] for head, _ in shown[:top]}
    return [{**json_flags(r), "tie_of": tie_of[r["id"]]} for i, r in enumerate(ranking)
            if i < top or r["id"] in keep]


def tied_counts(head: dict[str, Any], folded: list[dict[str, Any]],
                shapes: bool = True) -> tuple[int, int]:
    """(networks as fast and as dear as ``head``, other networks) that the rows ``folded`` into it
    (:func:`fold_ties`) stand for, each row with its equivalent shapes (:func:`fold_equivalent`);
    with ``shapes`` False, ranked rows (the unit of ``rank``: a row's equivalent shapes not
    counted); as fast and as dear: time and network cost within the gap target
    (:data:`~hieropt.solvers.cutting.REL_GAP`, relative; the figures are certified to it only)."""
    same = other = 0
    for r in folded:
        n = 1 + ((r.get("equivalents") or 0) if shapes else 0)
        if all(abs(r[k] - head[k]) <= REL_GAP * abs(head[k])
               for k in ("iteration_time_ns", "network_cost_usd")):
            same += n
        else:
            other += n
    return same, other


KEEP_ROWS = 1000
"""Solved rows a search keeps for its ranking (the best by objective value; every row is in the
results file)."""


class Tally:
    """What a search keeps of its rows, whatever their number: the count and first message of each
    status, the best ``keep`` solved rows, and per dimension count and per cluster size the rows
    solved, the best rows (those within the ranking's tie tolerance of the best value) and the least
    scale-out GB/s per NPU and NICs."""

    def __init__(self, objective: str, keep: int = KEEP_ROWS):
        self.objective, self.keep = objective, keep
        self.tol = PPC_GAP if objective == "performance_per_cost" else REL_GAP
        self.statuses: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.top: list[dict[str, Any]] = []
        # (n_dims | npus, its value) -> summary
        self.dims: dict[tuple[str, int], dict[str, Any]] = {}

    def count(self, status: str, n: int, message: str) -> None:
        """``n`` more rows of ``status`` (not solved; their rows not made)."""
        if n > 0:
            self.statuses[status] += n
            self.examples.setdefault(status, message)

    def add(self, row: dict[str, Any]) -> None:
        """Take in one row (typed, :data:`COLUMNS`)."""
        self.count(row["status"], 1, row["message"])
        if row["status"] not in SOLVED:
            return
        self.top.append(row)
        if len(self.top) >= 2 * self.keep:
            self._trim()
        for field in ("n_dims", "npus"):
            self._summarise(field, row)

    def _summarise(self, field: str, row: dict[str, Any]) -> None:
        d = self.dims.setdefault(
            (field, row[field]),
            {"solved": 0, "best": [], "min_scaleout_gbps_per_npu": None, "min_nics": None},
        )
        d["solved"] += 1
        value = row["objective_value"]
        lead = min([r["objective_value"] for r in d["best"]] + [value])
        d["best"] = [
            r for r in d["best"] + [row] if r["objective_value"] <= lead + self.tol * abs(lead)
        ]
        for k, col in (
            ("min_scaleout_gbps_per_npu", "scaleout_gbps_per_npu"),
            ("min_nics", "nics"),
        ):
            if row[col] is not None:
                d[k] = row[col] if d[k] is None else min(d[k], row[col])

    def _trim(self) -> None:
        self.top.sort(key=lambda r: (r["objective_value"], r["id"]))
        del self.top[self.keep:]

    def ranking(self) -> list[dict[str, Any]]:
        """The kept solved rows, equivalent shapes folded (:func:`fold_equivalent`), best first,
        with their ``rank`` (:func:`~hieropt.studies.explore.run.rank_rows`)."""
        self._trim()
        return rank_rows(fold_equivalent(self.top), self.objective, key="id")

    def by_dims(self) -> list[dict[str, Any]]:
        """Per dimension count: ``n_dims``, ``solved``, ``best`` (the first of its ranked best
        rows), and the least scale-out GB/s per NPU and NICs among its solved rows."""
        return self._by("n_dims")

    def by_npus(self) -> list[dict[str, Any]]:
        """Per cluster size: ``npus`` and the figures of :meth:`by_dims`."""
        return self._by("npus")

    def _by(self, field: str) -> list[dict[str, Any]]:
        return [
            {
                field: n,
                "solved": d["solved"],
                "best": rank_rows(d["best"], self.objective, key="id")[0],
                "min_scaleout_gbps_per_npu": d["min_scaleout_gbps_per_npu"],
                "min_nics": d["min_nics"],
            }
            for (f, n), d in sorted(self.dims.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0))
            if f == field
        ]

__all__ = [
    "COLUMNS",
    "FLAGS",
    "json_flags",
    "objective_unit",
    "NAMES",
    "ADDED_COLUMNS",
    "with_added_columns",
    "result_with_added_columns",
    "OWN_COLUMNS",
    "CodesignRow",
    "UnsolvedRows",
    "Tally",
    "KEEP_ROWS",
    "base_row",
    "fold_equivalent",
    "fold_ties",
    "json_ranking",
    "tied_counts",
]
