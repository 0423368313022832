"""Command line for workloads: ``hieropt workload show | transformer | dlrm | cnn | plan``.

``workload show FILE`` prints an ASTRA-sim 1.0 workload (any dialect) or a workload model: the
header, every layer's compute and collectives, and totals per phase and per collective type.
``workload transformer|dlrm|cnn`` runs a generator and writes ASTRA-sim 1.0 text (``hieropt export``
for ASTRA-sim 2.0 lives in :mod:`hieropt.cli.astrasim`). ``workload plan MODEL.toml --set tp=8 ...``
prints one LLM training plan's memory per NPU (per pipeline stage), compute and collectives per
parallel group. Registered on :data:`hieropt.cli.app`.

Exit codes as ``hieropt solve``: 0 done; 2 bad input (one line ``error: ...`` on stderr naming the
file, the field and the fix); 3 a plan that does not fit in the NPU's memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import Command, Group, console, error_console, fail, write_stdout
from .outputs import answer_outputs, inputs_read

if TYPE_CHECKING:
    from ..spec import Workload, WorkloadHeader

workload_app = typer.Typer(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Show ASTRA-sim 1.0 workloads (every dialect), generate them from workload models "
    "(transformer, DLRM, CNN), and size LLM training plans (memory, compute, collectives). "
    "Times in ns, sizes in "
    "bytes per NPU.",
)


def load_workload(path: Path) -> Workload:
    """A workload from ASTRA-sim 1.0 text, or from a workload model (``.toml``: generator and
    parameters)."""
    from ..io.common import read_text

    model = Path(path).suffix == ".toml"
    # a missing file or a folder: the reader's message, before numpy loads
    if not Path(path).is_file():
        read_text(Path(path), "workload model" if model else "workload")
    if model:
        from ..io.workload_file import read_model

        return read_model(path)
    from ..io.astrasim1 import read_workload

    return read_workload(path)


@workload_app.command("show", cls=Command)
def show(
    file: Annotated[
        Path,
        typer.Argument(
            help="ASTRA-sim 1.0 workload text (any dialect, or LIBRA's header-less "
            "file) or a workload model (.toml).",
            show_default=False,
        ),
    ],
    summary: Annotated[
        bool, typer.Option("--summary", help="Header and totals only, no per-layer table.")
    ] = False,
) -> None:
    """Print a workload: its header, every layer's compute and collectives, and totals per phase and
    collective (a pipelined LLM plan: the stage with the most compute, and the names of its other
    distinct stages)."""
    from ..errors import HieroptError

    err = error_console()
    try:
        w = load_workload(file)
    except HieroptError as e:
        raise fail(err, e) from None
    from ..report.workload import header_lines, layer_table, totals_tables

    out = console(160)
    for line in header_lines(w):
        out.print(line, highlight=False, soft_wrap=True)
    if not summary:
        out.print(layer_table(w))
    for t in totals_tables(w):
        out.print(t)


# ----------------------------------------------------------------------------------------- generate
ModelOpt = Annotated[
    Path | None,
    typer.Option(
        "--model", help="Workload model TOML (generator and [params]), e.g. models/gpt3-175b.toml."
    ),
]
OutOpt = Annotated[
    Path,
    typer.Option(
        "-o",
        "--output",
        metavar="FILE",
        help="ASTRA-sim 1.0 text file to write ('-': stdout).",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override or give a parameter, KEY=VALUE with a TOML "
        "value (e.g. --set tp=8 --set 'bottom_mlp=[64, 16]'); repeatable.",
    ),
]
ExactOpt = Annotated[
    bool,
    typer.Option(
        "--exact",
        help="Write exact values instead of whole ns and bytes (ASTRA-sim "
        "1.0 reads integers; hieropt and LIBRA read either).",
    ),
]


def _set_value(text: str) -> tuple[str, Any]:
    import tomllib

    from ..errors import InputError

    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise InputError("--set", None, f"'{text}' is not KEY=VALUE", "write e.g. --set tp=8")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except ValueError:  # not a TOML value (or an integer of thousands of digits): the text itself
        value = raw.strip()  # a bare word: a string
    return key, value


def generate_workload(
    kind: str, model: Path | None, sets: list[str] | None
) -> tuple[Workload, WorkloadHeader]:
    """Run generator ``kind`` on the model file's parameters (if any) with ``--set`` overrides;
    returns the workload and the header to write (for the transformer, ``model_parallel_NPU_group``
    = its ``tp``)."""

    from ..errors import InputError
    from ..io.common import read_toml
    from ..io.workload_file import GENERATOR_NAMES, generators, run_generator
    from ..names import TRANSFORMER_POLICIES
    from ..spec import WorkloadHeader

    params_cls, generate = generators()[kind]
    params: dict[str, Any] = {}
    source: str | Path = "command line"
    if model is not None:
        source = model
        data = read_toml(model, "workload model")
        gen = data.get("generator")
        if gen != kind:
            raise InputError(
                model,
                "generator",
                f"the model is for generator {gen!r}, not {kind!r}",
                f"use 'hieropt workload plan {model}' or 'hieropt workload show {model}' "
                "for an LLM plan"
                if gen == "llm"
                else f"use 'hieropt workload {gen} --model {model}' for it"
                if gen in GENERATOR_NAMES
                else f'give a model with generator = "{kind}"',
            )
        params = dict(data.get("params", {}))
    for text in sets or []:
        key, value = _set_value(text)
        params[key] = value
    w = run_generator(params_cls, generate, params, source)
    h = w.header if w.header is not None else WorkloadHeader(policy="DATA")
    if h.policy in TRANSFORMER_POLICIES and h.model_parallel_npu_group is None and "tp" in params:
        h = h.model_copy(update={"model_parallel_npu_group": params["tp"]})
    return w, h


def _generate_command(
    kind: str, model: Path | None, output: Path, sets: list[str] | None, exact: bool
) -> None:
    from ..errors import HieroptError, InputError
    from ..io.astrasim1 import format_workload
    from ..report.workload import totals

    err = error_console()
    to_stdout = str(output) == "-"
    answer_outputs(output)  # (a run without its workload leaves no earlier one there)
    inputs_read()  # (its one input file, the model, is on the command line)
    try:
        w, h = generate_workload(kind, model, sets)
        text = format_workload(w, header=h, exact=exact)
        if not to_stdout:
            try:
                from ..io.files import write_atomic

                write_atomic(output, text)
            except OSError as e:
                raise InputError(output, None, f"cannot write the workload file: {e.strerror or e}",
                                 "check the folder exists and is writable") from e
    except HieroptError as e:
        raise fail(err, e) from None
    if to_stdout:
        write_stdout(text)
        return
    compute, _, by_type = totals(w)
    out = console()
    out.print(f"wrote {str(output)}: ASTRA-sim 1.0 workload '{w.name}', {len(w.layers):,} layers, "
              f"header '{text.splitlines()[0]}'", highlight=False, soft_wrap=True)
    out.print(
        f"compute {sum(compute.values()):,.0f} ns per iteration; collectives: "
        + (
            ", ".join(f"{n} x{int(c)} {s:,.0f} bytes" for n, (c, s) in sorted(by_type.items()))
            or "none"
        )
        + ("" if exact else " (times rounded to whole ns, sizes to whole bytes)"),
        highlight=False,
        soft_wrap=True,
    )


@workload_app.command("transformer", cls=Command)
def transformer_command(
    output: OutOpt, model: ModelOpt = None, set_: SetOpt = None, exact: ExactOpt = False
) -> None:
    """Generate a Megatron-LM TP x DP transformer workload (hieropt/workloads/transformer.py) as
    ASTRA-sim 1.0 text (header HYBRID_TRANSFORMER, model_parallel_NPU_group = tp)."""
    _generate_command("transformer", model, output, set_, exact)


@workload_app.command("dlrm", cls=Command)
def dlrm_command(
    output: OutOpt, model: ModelOpt = None, set_: SetOpt = None, exact: ExactOpt = False
) -> None:
    """Generate a DLRM workload (hieropt/workloads/dlrm.py: embedding all-to-all, data-parallel
    MLPs) as ASTRA-sim 1.0 text (header HYBRID_DLRM with the last bottom-MLP layer)."""
    _generate_command("dlrm", model, output, set_, exact)


@workload_app.command("cnn", cls=Command)
def cnn_command(
    output: OutOpt, model: ModelOpt = None, set_: SetOpt = None, exact: ExactOpt = False
) -> None:
    """Generate a data-parallel CNN workload (hieropt/workloads/cnn.py, e.g. models/resnet50.toml)
    as ASTRA-sim 1.0 text (header DATA)."""
    _generate_command("cnn", model, output, set_, exact)


# --------------------------------------------------------------------------------------------- plan
def _finite_figures(figures: dict, model: Path) -> None:
    """Refuse a plan whose figures (``figures``, as written to ``--json``) hold a NaN or infinity:
    an input too large or too small for a double (an efficiency of 1e-310 makes the compute time
    infinite).

    Raises:
        InputError: naming the model file and the figure.
    """
    from ..errors import InputError
    from ..io.files import nonfinite_field

    field = nonfinite_field(figures)
    if field is not None:
        raise InputError(
            model,
            field,
            "not a finite number: an input of the model (or a --set) is too large or too "
            "small for a double (e.g. an efficiency of 1e-310)",
            "give values of realistic size (efficiency in (0, 1], sizes and rates well "
            "within 1e300)",
        )


@workload_app.command("plan", cls=Command)
def plan_command(
    model: Annotated[
        Path,
        typer.Argument(
            help='LLM model TOML (generator = "llm"), e.g. models/llama3-70b.toml.',
            show_default=False,
        ),
    ],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Override a model, plan, NPU or precision field, "
            "KEY=VALUE with a TOML value: tp=8, pp=8, dp=64, ep=8, "
            "zero_stage=1, recompute=full, sequence_parallel=true, "
            "schedule=interleaved, virtual_stages=2, microbatch_group_size=8, "
            "micro_batch_size=2, "
            "hbm_gib=96, model.layers=64; repeatable.",
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the figures as JSON ('-': JSON on stdout, tables on stderr).",
        ),
    ] = None,
) -> None:
    """Size one LLM training plan: the model's parameters and model FLOPs per iteration (the MFU
    numerator; its peak the NPU's dense peak in its number format, under FP8 the FP8 peak), memory
    per NPU (weights, gradients, optimizer state, activations;
    per pipeline stage where they differ) against the HBM less its reserve, compute per iteration
    and pipeline bubble of the stage with the most compute (with communication another stage can be
    slower: hieropt solve times every stage), and every parallel group's collectives with their
    bytes (hieropt/workloads/llm, hieropt/model/memory.py). Exit 3 when the plan does not fit in
    memory (the figures are still printed)."""
    from ..errors import HieroptError
    from ..io.llm import read_llm
    from ..model.plan import plan_figures
    from ..report.plan import collectives_table, memory_table, plan_notes, summary_lines
    from .common import to_stdout, write_json

    err = error_console()
    try:
        fig = plan_figures(read_llm(model, set_ or []))
        _finite_figures(fig.as_dict(), model)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    out = err if to_stdout(json_out) else console(140)
    notes = plan_notes(fig)
    # the file first: a stdout its reader closes (| head) cannot keep it from being written
    if json_out is not None:
        write_json(json_out, {**fig.as_dict(), "notes": notes})
    for line in summary_lines(fig) + [f"note: {n}" for n in notes]:
        out.print(line, highlight=False, soft_wrap=True)
    out.print(memory_table(fig))
    out.print(collectives_table(fig))
    if not fig.memory.fits:
        raise typer.Exit(3)
