"""Runs files: measured training iterations, one per row of a CSV file, for ``hieropt validate`` and
``calibrate``.

A runs file is CSV with a header row, parsed by :mod:`csv` over the whole text (a quoted cell may
hold commas and line breaks); lines starting with ``#`` where a row would start are comments
(sources, FLOP formulas), and blank lines and rows of only commas are skipped; empty cells past
the last named column (a spreadsheet's trailing commas) are ignored. Columns:

- ``model``: an LLM model file (``generator = "llm"``, :mod:`hieropt.io.llm`), path relative to the
  CSV file; not an instance file (:mod:`hieropt.io.run_model`);
- ``network``: a network file, path relative to the CSV file: a LIBRA network YAML, a TOML file with
  a ``[network]`` table (``dims = [{block, npus, cost_class}, ...]``) and optionally ``chunks``,
  ``collectives_in_flight`` and ``description`` (not ``dimension_mode``: each group of the plan
  runs its collectives by the plan's algorithm, a ``collective_algorithms`` column, default
  ``sequential``), or a whole instance file (its network, cost, those settings and the named groups
  of its ``[mapping.groups]``, checked against the row's plan: the instance's own workload plays
  no part). The plan's groups are placed lowest-first (tp, dp, pp,
  :func:`hieropt.model.groups.place_lowest`) unless the file maps them. The network is sized to the
  run, an instance file's as any (:func:`~hieropt.io.run_network.sized_network`): a file of 8
  NPUs per node (dimension 0) and nodes (dimension 1) holds runs of 16, 64 or 3,072 NPUs (the
  outermost dimension resized); a run within the inner dimensions (8 NPUs: one node) drops the
  outer ones, which carry none of its traffic, and their bandwidths, however many the file has; a
  file of one dimension is not grown past the accelerator's scale-up domain (catalog
  ``scaleup_npus``): it describes no network beyond it;
- ``bw_gbps``: per-NPU bandwidth of each dimension of the file, GB/s per direction (1 GB = 1e9
  bytes), ``;``-separated, dimension 0 first (the values ``hieropt evaluate --bw`` takes
  comma-separated: ``300;25`` here is ``--bw 300,25``), or only those of the dimensions the run
  uses (``300`` for a run of one node); a trailing ``;`` is refused (:func:`parse_bw_cell`);
- ``measured_ms``: the measured iteration time, ms;
- optional ``group`` (runs compared with each other: ranked), ``source`` (where the measurement is
  published), ``name`` (a label) and ``note``;
- any other column is a plan, NPU, precision or model field, named as a ``--set`` key of ``hieropt
  workload plan`` (``tp``, ``pp``, ``dp``, ``micro_batch_size``, ``global_batch_size``,
  ``recompute``, ``recompute_layers``, ``sequence_parallel``, ``zero_stage``, ``schedule``,
  ``virtual_stages``, ``efficiency``, ``model.layers``, ...), its cell a TOML value or a bare word
  (an empty cell: the model file's value). A run's NPU count is tp x cp x pp x dp (the model
  file's ``plan.npus`` is ignored unless the row gives ``npus``).

Every problem is one :class:`~hieropt.errors.InputError` naming the file, the line, the column and
the fix; that includes a ``bw_gbps`` or ``measured_ms`` that looks like the wrong unit (bytes/s,
as ``evaluate --bw`` refuses it: :func:`hieropt.model.bandwidths.bytes_per_second_slip`, for any
NPU; Gb/s, seconds, microseconds: :mod:`hieropt.io.run_units`), a scale-out bandwidth above what
the NPU's NIC carries (:func:`~hieropt.io.run_units.check_nic_bandwidth`), a sequence length in
another unit (:func:`~hieropt.io.run_units.sequence_length_error`) and a decimal comma
(:func:`decimal_comma_fix`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..model.bandwidths import bytes_per_second_slip
from ..units import number_text_fix, plain_number, plural
from .common import path_argument, read_text, read_toml
from .kinds import check_kind
from .llm import llm_params, override_path, parse_override_value
from .run_header import (
    ALIASES,
    OPTIONAL,
    REQUIRED,
    check_header,
    csv_records,
    without_trailing_empty,
)
from .run_model import check_model_file
from .run_network import NetworkFile, read_network_file, run_placement, sized, sized_network
from .run_units import (
    check_bandwidths,
    check_measured,
    check_nic_bandwidth,
    nic_limit,
    scaleup_gbps,
    sequence_length_error,
)

if TYPE_CHECKING:
    from ..spec import Network
    from ..workloads.llm.params import LLMParams

@dataclass(frozen=True)
class Run:
    """One measured run (one row of a runs file).

    Attributes:
        path: the runs file; ``line``: the row's line number in it (1-based).
        model_path: the model file; ``model_data``: its parsed TOML (``npus`` dropped unless the row
            gives it).
        overrides: the row's model fields as ``KEY=VALUE`` overrides (``--set`` syntax), in column
            order.
        net: the network file; ``network``: its dimensions sized to the run; ``bw_gbps``: (D,) GB/s
            per NPU of those dimensions.
        measured_ms: the measured iteration time, ms.
        params: the run's model, plan and NPU (the model file with the overrides).
        group, source, name, note: the optional columns ('' when absent).
        placement: the network file's named groups for this run (an instance file's
            ``[mapping.groups]`` checked against the row's plan and cut to ``network``:
            :func:`~hieropt.io.run_network.run_placement`), or None: placed lowest-first.
    """

    path: Path
    line: int
    model_path: Path
    model_data: dict[str, Any] = field(repr=False)
    overrides: tuple[str, ...]
    net: NetworkFile = field(repr=False)
    network: Network = field(repr=False)
    bw_gbps: tuple[float, ...]
    measured_ms: float
    params: LLMParams = field(repr=False)
    group: str = ""
    source: str = ""
    name: str = ""
    note: str = ""
    placement: dict[str, tuple[int, ...]] | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """``FILE: line N``, the origin of the run in messages."""
        return f"{self.path}: line {self.line}"

    @property
    def label(self) -> str:
        """The run's name, or its plan in short (``tp8 pp8 dp1 mb1 full``; ``full5`` with
        ``recompute_layers`` 5)."""
        if self.name:
            return self.name
        p = self.params.plan
        sp = " sp" if p.sequence_parallel else ""
        return (
            f"{self.params.workload_name} tp{p.tp} pp{p.pp} dp{p.dp} mb{p.micro_batch_size} "
            f"{p.recompute}{'' if p.recompute_layers is None else p.recompute_layers}{sp}"
        )

    def with_values(self, overrides: tuple[str, ...]) -> LLMParams:
        """The run's parameters with more ``KEY=VALUE`` overrides after the row's (e.g.
        ``npu.efficiency=0.4``).

        Raises:
            InputError: a value the model rejects, naming the run.
        """
        return row_params(self.model_data, self.model_path, self.overrides + overrides, self.where)


def row_params(
    data: dict[str, Any], model: Path, overrides: tuple[str, ...], where: str
) -> LLMParams:
    """The parameters of a run: model file ``data`` with ``overrides``; errors name the run's line
    ``where``.

    Raises:
        InputError: ``where``: the field, the problem (and the model file when it is the file's) and
            the fix.
    """
    try:
        return llm_params(data, model, overrides, where)
    except InputError as e:
        if e.source == where:
            raise
        said = f"{e.field}: {e.problem}"
        column = next((o for o in reversed(overrides) if _field(o, where) in said), e.field)
        raise InputError(where, column, f"{said} (model {e.source})", e.fix) from None


def _field(override: str, where: str) -> str:
    """The dotted field below ``params`` an override sets (``tp=3`` -> ``plan.tp``)."""
    return ".".join(override_path(override.partition("=")[0].strip(), where))


def read_runs(path: str | Path) -> tuple[Run, ...]:
    """Read a runs file (module docstring): every row checked, its model and network read and its
    plan placed.

    Raises:
        InputError: a path that is not a str or Path (naming ``path``), a missing file or
            column, an unknown column, a bad cell, a model or network file that cannot be read,
            or a plan that does not fit the model or the network: ``FILE: line N: COLUMN:
            problem; fix: ...``.
    """
    path = path_argument(path, "a runs file",
                         'hieropt.load_runs("validation/calibration/a100-one-node.csv")')
    text = read_text(path, "runs")
    check_kind(path, "runs", text)
    records = list(csv_records(path, text))
    if not records:
        raise InputError(
            path, None, "no header row", f"write a header row: {','.join(REQUIRED)},tp,pp,dp,..."
        )
    (header_line, _, header_cells), rows = records[0], records[1:]
    header = without_trailing_empty([h.strip() for h in header_cells])
    check_header(path, header_line, header)
    if not rows:
        raise InputError(path, None, "no runs (only a header row)", "add one row per measured run")
    models: dict[Path, dict[str, Any]] = {}
    networks: dict[Path, NetworkFile] = {}
    out = []
    for line, last, cells in rows:
        where = f"{path}: line {line}"
        if len(cells) > len(header) and not any(c.strip() for c in cells[len(header) :]):
            cells = cells[: len(header)]  # (empty cells past the last column: Excel's commas)
        if len(cells) != len(header):
            spans = f" (the row runs on to line {last})" if last > line else ""
            raise InputError(
                where,
                None,
                f"{plural(len(cells), 'cell')} for {plural(len(header), 'column')}{spans}",
                "give one cell per column (quote a cell holding a comma)",
            )
        out.append(
            _run(
                path,
                line,
                where,
                dict(zip(header, (c.strip() for c in cells), strict=True)),
                models,
                networks,
            )
        )
    return tuple(out)


def _run(
    path: Path, line: int, where: str, row: dict[str, str], models: dict, networks: dict
) -> Run:
    for col in REQUIRED:
        if not row[col]:
            raise InputError(where, col, "empty cell", f"give the run's {col}")
    model = _relative(path, row["model"])
    if model not in models:
        try:
            # (an instance file: check_model_file says what the column takes)
            models[model] = read_toml(model, "model", "runs model")
        except InputError as e:
            raise InputError(where, "model", _inner(e), _cell_fix(e, path, row["model"])) from None
    data = models[model]
    check_model_file(data, model, row["model"], path, where)
    overrides = tuple(f"{k}={v}" for k, v in row.items() if k not in REQUIRED + OPTIONAL and v)
    for k, v in row.items():
        if k not in REQUIRED + OPTIONAL and v:
            check_number_cell(v, where, k)
    if not any(o.startswith(("npus=", "plan.npus=")) for o in overrides):
        data = _without_npus(data)
    params = row_params(data, model, overrides, where)
    net_path = _relative(path, row["network"])
    if net_path not in networks:
        try:
            networks[net_path] = read_network_file(net_path)
        except InputError as e:
            raise InputError(
                where, "network", _inner(e), _cell_fix(e, path, row["network"])
            ) from None
    net = networks[net_path]
    limit = nic_limit(params)
    network = sized_network(net, params.plan.total_npus, where, limit and limit[::2])
    placement = run_placement(net, params, network, where)
    bw = parse_bw_cell(row["bw_gbps"], net.network.n_dims, where, network.n_dims)
    # (bytes/s for GB/s, whatever the NPU: --bw's and the library's words)
    if (slip := bytes_per_second_slip(list(bw), lambda v: ";".join(f"{x:g}" for x in v))):
        raise InputError(where, "bw_gbps", *slip)
    bw = bw[: network.n_dims]  # (the bandwidths of dimensions the run does not use: no traffic)
    # (the file's outermost dimension is its scale-out network, whatever the run's size: checked
    # when the run uses it)
    outer = net.network.n_dims - 1
    scaleup = scaleup_gbps(params, data, model)
    check_bandwidths(bw, scaleup, params.npu.name, where)  # (each dimension against the NPU's)
    check_nic_bandwidth(bw, tuple(d.npus for d in network.dims), limit, scaleup,
                        params.npu.name, where)
    check_bandwidths(bw, scaleup, params.npu.name, where, outer if outer else None)
    measured = _positive(
        row["measured_ms"], where, "measured_ms", measured_fix(row["measured_ms"])
    )
    try:
        check_measured(measured, params, where)
    except InputError as e:
        column = next((k for k in row if k in SEQUENCE_CELLS and row[k]), None)
        raise sequence_length_error(params, column, where, e, measured) or e from None
    return Run(
        path=path,
        line=line,
        model_path=model,
        model_data=data,
        overrides=overrides,
        net=net,
        network=network,
        bw_gbps=bw,
        measured_ms=measured,
        params=params,
        placement=placement,
        **{k: row.get(k, "") for k in OPTIONAL},
    )


def check_number_cell(text: str, where: str, column: str) -> None:
    """Refuse a plan or model cell ``text`` that TOML reads as a number but that is no plain ASCII
    decimal number (:func:`hieropt.units.plain_number`): ``1_536`` and ``0x600`` (both 1536 to
    TOML) would time another plan than a typo meant, unseen; the cells take the numbers
    ``measured_ms`` and ``--bw`` take.

    Raises:
        InputError: ``where``, ``column``, the problem and the number to write.
    """
    value = parse_override_value(text)
    if (isinstance(value, int | float) and not isinstance(value, bool)
            and plain_number(text) is None):
        raise InputError(where, column, f"'{text}' is not a plain decimal number",
                         number_text_fix(text) or "write the number in plain ASCII decimal digits "
                         f"(TOML reads it as {value!r}; no '_' separators, no 0x / 0o / 0b)")


def _inner(e: InputError) -> str:
    """An error of a file a run names, as the problem of the run's cell: ``FILE: FIELD: problem``
    (a path is taken relative to the runs file)."""
    return ": ".join(p for p in (e.source, e.field, e.problem) if p)


def _cell_fix(e: InputError, csv_path: Path, value: str) -> str:
    """The fix of an error reading the file a runs file's cell ``value`` names: for a file not
    found, a path written with ``\\`` (Windows) told to use ``/``, else what was searched (a
    relative path is taken from the runs file's folder alone, not the current folder); else the
    reader's own fix."""
    if not (e.problem or "").endswith("file not found") or e.source != str(
        _relative(csv_path, value)
    ):
        return e.fix
    if "\\" in value and "\\" != os.sep:  # (a Windows path: '\\' is no folder separator here)
        return (f"write the path with '/' between folders: {value.replace(chr(92), '/')} (a "
                "runs file's paths take '/' on every system)")
    if Path(value).is_absolute():
        return f"check the path ({value} does not exist)"
    return (
        f"check the path: a relative path in a runs file's cell is looked for in the runs file's "
        f"folder alone ({csv_path.parent.resolve()}), not in the current folder"
    )


def _relative(csv_path: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else csv_path.parent / p


def _without_npus(data: dict[str, Any]) -> dict[str, Any]:
    plan = (data.get("params") or {}).get("plan")
    if not isinstance(plan, dict) or "npus" not in plan:
        return data
    return {
        **data,
        "params": {**data["params"], "plan": {k: v for k, v in plan.items() if k != "npus"}},
    }


SEQUENCE_CELLS = ("model.sequence_length", "sequence_length", "params.model.sequence_length")
"""The columns that set a run's sequence length."""

MS_PER_UNIT = {"ms": 1.0, "s": 1e3, "sec": 1e3, "min": 6e4, "h": 3.6e6, "us": 1e-3, "µs": 1e-3,
               "ns": 1e-6}
"""Milliseconds per unit a ``measured_ms`` cell may be written in by mistake
(:func:`measured_fix`)."""


def measured_fix(text: str) -> str:
    """The fix of a ``measured_ms`` cell that is not a positive number: the cell in ms when it is a
    number followed by a time unit (``14.72s``: "write 14720 (14.72 s in ms)"), else the plain fix;
    the column holds ms per iteration, without a unit."""
    fix = "give the measured iteration time in ms"
    if comma := decimal_comma_fix(text):
        return f"{fix}: {comma}"
    if number_text_fix(text):  # (1_000, 1 000: the plain number, added by _positive)
        return fix
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-zµ]+)\s*", text or "")
    if m is None or m.group(2).lower() not in MS_PER_UNIT:
        return fix
    try:
        value = float(m.group(1)) * MS_PER_UNIT[m.group(2).lower()]
    except ValueError:
        return fix
    if m.group(2).lower() == "ms":
        return f"{fix}: write {value:.10g} (without 'ms')"
    return f"{fix}: write {value:.10g} ({m.group(1)} {m.group(2)} = {value:.10g} ms)"


def decimal_comma_fix(text: str) -> str:
    """For a number written with a comma (``27000,5``; ``27,000``): the number with a decimal point
    (``write 27000.5: a decimal point, not a comma``), and for three digits after the comma also
    without it (a thousands separator: ``27000``); "" for any other text."""
    m = re.fullmatch(r"\s*(\d+),(\d+)\s*", text or "")
    if m is None:
        return ""
    point = f"{m[1]}.{m[2]}"
    if len(m[2]) == 3:
        return (f"write {m[1]}{m[2]} if ',' separates thousands, or {point} if it is a decimal "
                "comma (a number takes a decimal point, and no thousands separator)")
    return f"write {point}: a decimal point, not a comma"


def _positive(text: str, where: str, column: str, fix: str) -> float:
    """The cell ``text`` of ``column`` as a positive, finite number: a plain ASCII decimal number
    (:func:`hieropt.units.plain_number`, as ``--bw`` reads one: ``1_000``, full-width digits and
    ``1 000`` are refused with the number to write, :func:`hieropt.units.number_text_fix`).

    Raises:
        InputError: ``where``, ``column``, the problem and ``fix``.
    """
    value = plain_number(text)
    if value is None:
        hint = number_text_fix(text)
        problem = (f"'{text}' is not a plain decimal number" if hint
                   else f"'{text}' is not a number")
        raise InputError(where, column, problem, f"{fix}: {hint}" if hint else fix)
    if not (math.isfinite(value) and value > 0):
        raise InputError(where, column, f"{text} is not a positive, finite number", fix)
    return value


def parse_bw_cell(
    text: str, n_dims: int, where: str, used: int | None = None
) -> tuple[float, ...]:
    """A ``bw_gbps`` cell: ``n_dims`` positive GB/s values separated by ``;`` (``"300;25"``), or
    only the ``used`` innermost dimensions' (those of the network sized to the run,
    :func:`~hieropt.io.run_network.sized_network`: the outer ones carry none of its traffic).

    Raises:
        InputError: values separated by ``,`` (a quoted cell), a trailing ``;`` (refused, not
            ignored: it may end a list whose last value is missing) or another empty value,
            another count of values, or a value that is not a positive, finite number.
    """
    if "," in text and (";" in text or len(text.split(",")) not in (n_dims, used)):
        raise InputError(
            where,
            "bw_gbps",
            f"'{text}': a ',' inside a value (a decimal comma?)",
            f"write a decimal point: {text.replace(',', '.')} (values separated by ';', "
            "dimension 0 first)",
        )
    if "," in text:
        raise InputError(
            where,
            "bw_gbps",
            f"'{text}': values separated by ',' (the columns' separator)",
            f"separate the values with ';', dimension 0 first: {text.replace(',', ';')}",
        )
    parts = [t.strip() for t in text.split(";")]
    fewer = used is not None and used < n_dims
    example = bw_example(n_dims)
    counts = (
        f"{n_dims} values separated by ';', dimension 0 first (e.g. {example})"
        if n_dims > 1
        else f"1 value (e.g. {example})"
    )
    if used is not None and fewer:
        counts += f", or {_first(used)} (e.g. {';'.join(example.split(';')[:used])})"
    if len(parts) > 1 and not parts[-1]:
        kept = text.strip().rstrip(";").strip()
        fits = len(kept.split(";")) in (n_dims, used)
        raise InputError(
            where,
            "bw_gbps",
            f"'{text}': a trailing ';' with no value after it",
            f"drop the trailing ';': {kept}" if fits else f"give {counts}",
        )
    if len(parts) > 1 and not all(parts):
        raise InputError(
            where,
            "bw_gbps",
            f"'{text}': an empty value (dimension {parts.index('')})",
            f"give {counts}",
        )
    if len(parts) != n_dims and (used is None or len(parts) != used):
        raise InputError(
            where,
            "bw_gbps",
            f"{plural(len(parts), 'value')} for the network's {plural(n_dims, 'dimension')}"
            + (f" (the run uses {_first(used)})" if used is not None and fewer else ""),
            f"give {counts}",
        )
    fix = f"give GB/s per NPU per direction, e.g. {bw_example(len(parts))}"
    for t in parts:
        _bw_unit(t, where)
        if plain_number(t) is None and (hint := number_text_fix(t)):
            raise InputError(where, "bw_gbps", f"'{t}' is not a plain decimal number", hint)
    return tuple(_positive(t, where, "bw_gbps", fix) for t in parts)


def _bw_unit(text: str, where: str) -> None:
    """Refuse a ``bw_gbps`` value ``text`` written with a bandwidth unit (``200Gb/s``), with the
    plain GB/s to write (:func:`hieropt.spec.constraint_parser.number_with_unit`: Gb/s divided by
    8); a value without one passes.

    Raises:
        InputError: ``where``, ``bw_gbps``, the unit and the value in GB/s per NPU per direction.
    """
    from ..spec.constraint_parser import number_with_unit

    if plain_number(text) is not None or (unit := number_with_unit(text)) is None:
        return
    number, name, gbps = unit
    said = "" if gbps == float(number) else f"{number} {name} = {gbps:.10g} GB/s per direction: "
    raise InputError(where, "bw_gbps", f"'{text}' is not a number (it has the unit '{name}')",
                     f"{said}write {gbps:.10g} (the column takes plain GB/s per NPU per "
                     "direction, without a unit)")


def bw_example(n: int) -> str:
    """An example ``bw_gbps`` cell of ``n`` values, GB/s per NPU per direction, dimension 0 first:
    an NVLink-class 300 first, an InfiniBand-class 25 last (``300;25``, as an A100 node and its
    HDR NIC), halving steps from 100 between (``300;100;25``, ``300;100;50;25``)."""
    if n <= 1:
        return "300"
    return ";".join(["300"] + [f"{100 / 2**k:g}" for k in range(n - 2)] + ["25"])


def _first(used: int) -> str:
    """The dimensions a run of ``used`` inner ones uses, in words."""
    return "dimension 0 only" if used == 1 else f"the first {used}"


__all__ = [
    "measured_fix",
    "decimal_comma_fix",
    "SEQUENCE_CELLS",
    "MS_PER_UNIT",
    "Run",
    "NetworkFile",
    "read_runs",
    "read_network_file",
    "parse_bw_cell",
    "bw_example",
    "sized",
    "row_params",
    "REQUIRED",
    "OPTIONAL",
    "ALIASES",
    "csv_records",
    "without_trailing_empty",
]
