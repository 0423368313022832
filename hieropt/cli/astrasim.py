"""Command line for ASTRA-sim 2.0: ``hieropt export INSTANCE --astra-sim DIR`` and ``hieropt
simulate INSTANCE --astra-sim BIN``. Registered on :data:`hieropt.cli.app`.

``export`` writes the complete simulator bundle of an allocation (the optimum unless ``--bw``) into
a folder; a path ending in ``.yml`` / ``.yaml`` writes the network file alone, ``-`` prints it on
stdout. ``simulate`` writes the bundle of every allocation (``--bw``, or the optimum, the equal
split and the traffic-proportional split), runs the binary in the dimension mode the instance was
solved in, and prints solve's prediction vs simulated. Exit codes: 0 done (simulate: every
allocation within the tolerance of solve's prediction and the optimum the simulator's fastest); 2
bad input (one line ``error: ...`` naming the file, the field and the fix), including a missing or
non-executable binary; 3 no certified optimum, a failed simulator run (its last message), or
predicted and simulated disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import (
    check_output_file,
    console,
    error_console,
    error_line,
    fail,
    to_stdout,
    write_json,
    write_stdout,
)
from .numbers import parse_seconds, read_bw
from .outputs import answer_outputs, inputs_read

BwOpt = Annotated[
    str | None,
    typer.Option(
        "--bw",
        help="Comma-separated GB/s per NPU, one per dimension (default: the instance's "
        "optimum). Above 1e6 (bytes/s) is refused, as by evaluate, unless the instance's own "
        "constraints and bounds allow it; 1e6 is a dimension with no limit.",
        show_default=False,
    ),
]
ChunksOpt = Annotated[
    int | None,
    typer.Option(
        "--chunks",
        help="Chunks per collective (ASTRA-sim "
        "preferred-dataset-splits). Default: the instance's mode as solved: "
        "its chunks (1) for sequential dimensions, which 1 reproduces "
        "exactly; for concurrent ones enough chunks (a power of two, at most "
        "256) that the simulator lands within 3 % of the concurrent time, or, "
        "where the latency paid per chunk outweighs the overlap more chunks "
        "give, the count expected to differ least. 1 where no collective spans "
        "several dimensions, or where a group spans simulator dimensions cut "
        "from one dimension (a DP x CP or EP x expert-DP group): more chunks "
        "would overlap them, each at that dimension's whole bandwidth.",
        min=1,
        show_default=False,
    ),
]
GapOpt = Annotated[
    float | None,
    typer.Option(
        "--gap",
        help="Target relative optimality gap of the solve, in [5e-9, 1); default as solve's (1e-8, "
        "1e-7 for performance_per_cost and min_run_cost). The design exported is the one solve "
        "recommends (with performance: the cheapest of the designs within the gap of the "
        "fastest).",
        show_default=False,
    ),
]


def _allocation(inst, bw: str | None, gap: float | None) -> tuple[list[float], str]:
    from .. import api
    from ..errors import SolverError
    from ..solvers.objectives import recommended_options

    if bw is not None:
        return read_bw(bw, inst), "given"
    # (solve's design: the same options as hieropt solve's)
    sol = api.solve(inst, options=recommended_options(rel_gap=gap)).raise_for_status()
    if not sol.success:
        raise SolverError(
            f"no certified optimum to export ({sol.status.value}: {sol.message}); nothing written "
            "(pass --bw to export a given allocation)"
        )
    from ..units import fmt_relative

    # (shares of hours: the hour-weighted ratio, not ms)
    value = (fmt_relative(sol.iteration_time_ns) if inst.relative_time
             else f"{sol.iteration_time_ns / 1e6:,.6f} ms")
    return list(sol.bw_gbps), f"optimum ({value}, relative gap {sol.gap:.2g})"


def _discard_bundle(marker: Path) -> None:
    """Remove the earlier bundle whose ``bundle.json`` is ``marker``
    (:func:`hieropt.io.astrasim_bundle.discard_bundle`)."""
    from ..io.astrasim_bundle import discard_bundle

    discard_bundle(marker.parent)


def export_command(
    instance: Annotated[Path, typer.Argument(help="Instance TOML file.", show_default=False)],
    astra_sim: Annotated[
        Path,
        typer.Option(
            "--astra-sim",
            help="Bundle folder to write; a path ending in .yml "
            "writes the network file alone; '-' prints it.",
            show_default=False,
        ),
    ],
    bw: BwOpt = None,
    chunks: ChunksOpt = None,
    gap: GapOpt = None,
) -> None:
    """Write an ASTRA-sim 2.0 bundle for INSTANCE: network.yml, system.json, Chakra traces of every
    NPU, remote_memory.json and run.sh (`DIR/run.sh [BIN]`, BIN default `$ASTRA_SIM`).

    The network uses the conventions that make ASTRA-sim's collective algorithms reproduce hieropt's
    per-NPU bandwidth per building block (Ring: one link of B with the ring algorithm;
    FullyConnected / Switch: B/(p-1) per link with direct; GB = 2^30 bytes per link) and the
    instance's latency per hop; groups spanning part of a dimension become simulator dimensions of
    their own. The traces follow the instance's training loop; under loop 'step' (an LLM plan) one
    trace per pipeline stage in its 1F1B or interleaved order, with sends to the neighbouring
    stages' NPUs, so each NPU of a pipelined plan gets its own file (docs/astra-sim.md).

    A given --bw allocation is written as given, with evaluate's warning for every limit of the
    instance it breaks: a design constraint or bound, the network budget (max_network_cost_usd)
    or the time target (max_iteration_time_ns). """
    from ..errors import HieroptError
    from ..io.instance import load_instance

    err = error_console()
    alone = str(astra_sim) == "-" or astra_sim.suffix.lower() in (".yml", ".yaml")
    out = err if to_stdout(astra_sim) else console()
    # no network file or bundle from this run: none of an earlier one either (its run.sh would run
    # that allocation)
    if alone:
        answer_outputs(astra_sim)
    else:
        answer_outputs(astra_sim / "bundle.json", remove=_discard_bundle)
    try:
        if alone:
            # a missing folder is reported before any work
            check_output_file(astra_sim, "--astra-sim")
        inst = load_instance(instance)
        inputs_read()
        # loaded once the input is valid (a bad input is reported fast)
        from .. import api
        from ..io.astrasim_bundle import write_bundle
        from ..io.astrasim_network import network_yml, sim_network
        from ..io.astrasim_trace import check_traceable

        if not alone:
            # before solving: refuse what the bundle cannot state
            check_traceable(inst, str(instance))
            # (shares of hours -> weights, as solve: the bundle combines the workloads with them)
            inst, _ = api.hours_weighted(inst)
        values, what = _allocation(inst, bw, gap)
        simnet = sim_network(inst, values, f"{instance}: ASTRA-sim export")
        # a given allocation: evaluate's warnings, every limit it breaks (rows and bounds, budget,
        # time target: Breakdown.violations), from one evaluation of the design (before the files)
        warnings = () if bw is None else api.evaluate(inst, values).violations
        if alone:
            text = network_yml(simnet, f"instance '{inst.name}'")
            if str(astra_sim) == "-":
                write_stdout(text)
            # (a write that fails, e.g. a full disk, leaves an earlier file whole: one line from
            # main)
            else:
                from ..io.files import write_atomic

                write_atomic(astra_sim, text, f"--astra-sim {astra_sim}")
        else:
            from ..studies.simulate import simulator_chunks

            bundle = write_bundle(
                inst, values, astra_sim, chunks or simulator_chunks(inst, values), simnet
            )
    except HieroptError as e:
        raise fail(err, e) from None
    # a given allocation is exported as given, with evaluate's warnings (after the files: a bad
    # input stays one error line)
    for warning in warnings:
        error_line(err, warning, label="warning:", style="yellow")
    out.print(
        f"allocation: {what}: {', '.join(f'{b:.6g}' for b in values)} GB/s per NPU",
        highlight=False,
        soft_wrap=True,
    )
    out.print(_sim_table(simnet))
    if alone:
        if str(astra_sim) != "-":
            out.print(f"wrote {str(astra_sim)} (network only; its algorithms are in the comments)",
                      highlight=False, soft_wrap=True)
        return
    t = bundle.workloads
    distinct = sum(w.trace_files for w in t)
    nodes = sum(w.nodes for w in t)
    out.print(f"wrote {str(astra_sim)}: {bundle.files:,} files ({bundle.npus:,} trace names per "
              f"workload, {distinct:,} distinct trace file(s), the others hard links), "
              f"{bundle.bytes_on_disk:,} bytes; {len(t)} workload(s), {nodes:,} trace nodes; run: "
              f"{str(astra_sim)}/run.sh BIN", highlight=False, soft_wrap=True)


def _sim_table(simnet):
    from rich.table import Table

    t = Table(title="ASTRA-sim network (simulator dimensions)", title_justify="left")
    for col in (
        "sim dim",
        "hieropt dim",
        "block",
        "NPUs",
        "GB/s per NPU",
        "algorithm",
        "all-to-all",
        "link GB/s (2^30)",
        "latency ns/hop",
    ):
        t.add_column(
            col, justify="left" if col in ("block", "algorithm", "all-to-all") else "right"
        )
    for i, s in enumerate(simnet.dims):
        t.add_row(
            str(i),
            str(s.parent),
            s.block,
            str(s.npus),
            f"{s.bw_gbps:,.6g}",
            s.implementation,
            s.all_to_all_implementation,
            f"{s.link_gib:,.6g}",
            f"{s.link_latency_ns:g}",
        )
    return t


def simulate_command(
    instance: Annotated[Path, typer.Argument(help="Instance TOML file.", show_default=False)],
    astra_sim: Annotated[
        Path | None,
        typer.Option(
            "--astra-sim",
            help="The simulator binary "
            "(AstraSim_Analytical_Congestion_Unaware; default $ASTRA_SIM).",
            show_default=False,
        ),
    ] = None,
    bw: Annotated[
        str | None,
        typer.Option(
            "--bw",
            help="Comma-separated GB/s per NPU (default: the optimum, the "
            "equal split and the traffic-proportional split).",
            show_default=False,
        ),
    ] = None,
    chunks: ChunksOpt = None,
    timeout: Annotated[
        str, typer.Option("--timeout", help="Time allowed per simulator run, with a unit: 2h, "
                          "90min, 3600s; a plain number is s (at least 1 s).")
    ] = "3600",
    tolerance: Annotated[
        float,
        typer.Option(
            "--tolerance",
            help="Largest relative difference between the simulated "
            "and solve's predicted time that passes (0.03 = 3 %).",
        ),
    ] = 0.03,
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep",
            metavar="DIR",
            help="Keep the bundles in this folder (one per allocation).",
            show_default=False,
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the comparison as JSON ('-': stdout).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run ASTRA-sim on INSTANCE's bundle and compare its iteration time with hieropt's prediction.

    The simulator runs in the dimension mode the instance was solved in (sequential: 1 chunk per
    collective; concurrent: enough chunks, see --chunks) and is compared with solve's own
    prediction; hieropt in the simulator's exact mode (one collective in flight, latency per chunk)
    is shown beside it, and where the simulator cannot run in the mode solved the output says why.
    Exit 0 when every allocation is within --tolerance of solve's prediction and the optimum is the
    simulator's fastest allocation; 3 otherwise.

    Run time: the simulator simulates every NPU. Tens of NPUs take seconds; one allocation of a
    4,096-NPU instance at one chunk about 17 CPU minutes and 7 GB of memory, and more chunks take
    longer (about 2x per doubling from 32). Check one allocation first with --bw, and raise
    --timeout (per simulator run: --timeout 4h) for large instances. Each run's start (what runs,
    its NPUs, its trace's size) and its elapsed time are told on stderr.
    """
    import os

    from ..errors import HieroptError, SolverError
    from ..io.instance import load_instance

    err = error_console()
    out = err if to_stdout(json_out) else console()
    binary = astra_sim if astra_sim is not None else os.environ.get("ASTRA_SIM")
    try:
        timeout_s = parse_seconds(timeout, "--timeout")
        inst = load_instance(instance)
        values = read_bw(bw, inst) if bw is not None else None
        from ..studies.simulate import simulate_allocations  # loaded once the input is valid

        study = simulate_allocations(inst, binary, values, chunks, keep, timeout_s, tolerance,
                                     f"{instance}: ASTRA-sim export", progress=True)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report.simulate import simulate_dict, simulate_table

    # the file first: a stdout its reader closes (| head) cannot keep it from being written
    if json_out is not None:
        write_json(json_out, simulate_dict(study))
    out.print(simulate_table(study))
    if study.status is not None:  # (the optimum's solve, in solve's words)
        from ..report.common import status_words

        out.print(f"optimum: {status_words(study.status, study.gap)}", highlight=False)
    for note in study.notes:
        out.print(f"note: {note}", highlight=False)
    if not study.agree:
        raise fail(
            err, SolverError(f"the simulator does not confirm the answer: {study.verdict()}")
        )
