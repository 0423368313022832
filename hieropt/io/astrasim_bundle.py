"""A complete, runnable ASTRA-sim 2.0 input bundle for an instance at given per-NPU bandwidths.

Folder layout (``write_bundle``)::

    DIR/network.yml           analytical network (hieropt/io/astrasim_network.py conventions, with
    latency) DIR/system.json           collective algorithm per simulator dimension, localBWAware,
    chunks, endpoint delay DIR/remote_memory.json    {"memory-type": "NO_MEMORY_EXPANSION"}
    DIR/traces/K/et.I.et      Chakra trace of workload K for NPU I (NPUs with equal traces: hard
    links to one file) DIR/bundle.json           what was written: instance, bandwidths, chunks,
    simulator dimensions, workloads DIR/run.sh                DIR/run.sh [BIN] runs BIN (default
    $ASTRA_SIM) on every workload, prints its output

The simulator names per-NPU traces ``PREFIX.I.et`` (I = 0 .. N-1, Workload.cc opens
``PREFIX.<id>.et``; its workload configuration is that prefix, nothing else). Without a pipeline
every NPU runs the same graph, so the files of one workload are hard links to one file (a copy where
the file system has no hard links). Loop ``step`` with pipeline stages
(:mod:`hieropt.io.astrasim_step`): one trace per stage, encoded once as a template, and per NPU a
copy with its absolute peers patched in (:func:`hieropt.io.chakra.instantiate`): sends name absolute
NPUs, so the NPUs of a stage differ in their peers and nothing else. Several workloads of an
instance are simulated one after another (``traces/0``, ``traces/1``, ...); their iteration times
combine with the instance's weights. """

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import InputError
from ..model.bandwidths import check_bw
from ..spec import Instance
from .astrasim_groups import PIPELINE
from .astrasim_network import SimNetwork, network_yml, sim_network, system_config
from .astrasim_stages import stage_workloads
from .astrasim_step import stage_trace
from .astrasim_trace import check_traceable, job_trace
from .chakra import encode_template, encode_trace, instantiate
from .files import OutputError, json_text, replacing

REMOTE_MEMORY = {"memory-type": "NO_MEMORY_EXPANSION"}
"""The remote-memory configuration every run needs (no memory expansion)."""
SIM_FLAGS = ("--num-queues-per-dim=1",)
"""Extra simulator flags (one queue per dimension, as the conventions were measured)."""


@dataclass(frozen=True)
class BundleWorkload:
    """One simulated workload: its name, weight in the objective, trace prefix (relative to the
    bundle folder), nodes of its traces (summed over the distinct traces: one per pipeline stage),
    the bytes of its distinct trace
    files (hard links counted once) and how many distinct files there are."""

    name: str
    weight: float
    prefix: str
    nodes: int
    trace_bytes: int
    trace_files: int = 1


@dataclass(frozen=True)
class Bundle:
    """What :func:`write_bundle` wrote.

    Attributes:
        folder: the bundle folder.
        npus: simulated NPUs (trace names per workload).
        bw_gbps: per-NPU bandwidths written, GB/s per hieropt dimension.
        chunks: ``preferred-dataset-splits``.
        workloads: one :class:`BundleWorkload` per workload.
        files: files (names) in the bundle, trace hard links included (5 + one per NPU and
            workload).
        bytes_on_disk: bytes of the distinct files (each hard-linked trace counted once).
    """

    folder: Path
    npus: int
    bw_gbps: tuple[float, ...]
    chunks: int
    workloads: tuple[BundleWorkload, ...]
    files: int
    bytes_on_disk: int

    def simulator_args(self, binary: str | Path, k: int) -> list[str]:
        """The command line that simulates workload ``k`` (absolute paths)."""
        f = self.folder.resolve()
        return [str(binary), f"--workload-configuration={f / self.workloads[k].prefix}",
                f"--system-configuration={f / 'system.json'}",
                f"--remote-memory-configuration={f / 'remote_memory.json'}",
                f"--network-configuration={f / 'network.yml'}", *SIM_FLAGS]


def _run_sh(instance: Instance, workloads: Sequence[BundleWorkload]) -> str:
    lines = [
        "#!/bin/sh",
        f"# ASTRA-sim 2.0 bundle written by hieropt for instance '{instance.name}'.",
        "# Usage: DIR/run.sh [BIN]   BIN: AstraSim_Analytical_Congestion_Unaware (default: "
        "$ASTRA_SIM).",
        "# Prints the simulator's output for every workload; one cycle = 1 ns.",
        'DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)',
        "BIN=${1:-${ASTRA_SIM:-}}",
        'if [ -z "$BIN" ]; then',
        '  echo "run.sh: give the ASTRA-sim binary as the argument or in ASTRA_SIM" >&2; exit 2',
        "fi",
        'if [ ! -f "$BIN" ] || [ ! -x "$BIN" ]; then',
        '  echo "run.sh: $BIN is not an executable file" >&2; exit 2',
        "fi",
        "status=0",
    ]
    for k, w in enumerate(workloads):
        lines.append(f'echo "== workload {k}: {w.name} (weight {w.weight:g}) =="')
        lines.append(
            f'"$BIN" --workload-configuration="$DIR/{w.prefix}" '
            '--system-configuration="$DIR/system.json" '
            '--remote-memory-configuration="$DIR/remote_memory.json" '
            f'--network-configuration="$DIR/network.yml" {" ".join(SIM_FLAGS)} || status=$?'
        )
    lines.append("exit $status")
    return "\n".join(lines) + "\n"


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_step(instance: Instance, job, simnet: SimNetwork, prefix: Path) -> tuple[int, int, int]:
    """Loop ``step``: every stage's trace, the NPUs of a stage from one template (module
    docstring); returns (nodes summed over the stages, bytes of the distinct files, distinct
    files)."""
    works = stage_workloads(instance, job)
    layout = simnet.layout
    n = simnet.npus
    stage = [layout.stage_of(i) for i in range(n)] if layout is not None else [0] * n
    if layout is None and instance.step.stages > 1:
        raise InputError(instance.name, "mapping.groups", f"{instance.step.stages} pipeline stages "
                         f"without a '{PIPELINE}' group: the NPUs of each stage are not known",
                         f"name the pipeline group in mapping.groups.{PIPELINE}")
    nodes = size = files = 0
    for r in range(instance.step.stages):
        trace = stage_trace(instance, job, simnet, works, r)
        template, slots = encode_template(trace)
        nodes += len(trace)
        members = [i for i in range(n) if stage[i] == r]
        first = None
        for i in members:
            path = Path(f"{prefix}.{i}.et")
            if slots or first is None:
                peers = {k: layout.peer(i, k) for k in {k for _, k in slots}} if slots else {}
                path.write_bytes(instantiate(template, slots, peers))
                first = path
                size += len(template)
                files += 1
            else:
                _link(first, path)
    os.sync()  # (every NPU's file on disk at once: one flush, not one per file)
    return nodes, size, files


def _link(first: Path, target: Path) -> None:
    try:
        os.link(first, target)
    except OSError:
        shutil.copyfile(first, target)


def _write_traces(instance: Instance, simnet: SimNetwork, traces: Path) -> list[BundleWorkload]:
    """Write the Chakra traces of every job of ``instance`` into the new folder ``traces``
    (``K/et.I.et``, hard links for NPUs with equal traces); returns the workloads written."""
    workloads = []
    traces.mkdir()
    for k, job in enumerate(instance.jobs):
        (traces / str(k)).mkdir()
        prefix = traces / str(k) / "et"
        if instance.training_loop == "step":
            nodes, size, files = _write_step(instance, job, simnet, prefix)
        else:
            trace = job_trace(instance, job, simnet)
            data = encode_trace(trace)
            first = Path(f"{prefix}.0.et")
            _write_file(first, data)
            for i in range(1, simnet.npus):
                _link(first, Path(f"{prefix}.{i}.et"))
            nodes, size, files = len(trace), len(data), 1
        prefix_name = f"traces/{k}/et"
        workloads.append(
            BundleWorkload(job.workload.name, job.weight, prefix_name, nodes, size, files)
        )
    return workloads


def write_bundle(instance: Instance, bw_gbps: Sequence[float], folder: str | Path, chunks: int = 1,
                 simnet: SimNetwork | None = None) -> Bundle:
    """Write the ASTRA-sim bundle of ``instance`` at ``bw_gbps`` (GB/s per NPU, one per dimension)
    into ``folder`` (created if missing; an existing ``traces/`` in it is replaced).

    Args:
        chunks: chunks per collective (``preferred-dataset-splits``); 1 reproduces hieropt's
            sequential dimension mode, many approach the concurrent mode from above.

    Raises:
        InputError: bad bandwidths (None or not one number per dimension: naming ``bw_gbps``, as
            :func:`hieropt.model.timing.evaluate` does; not > 0) or groups (see
            :func:`hieropt.io.astrasim_network.sim_network`),
            chunks < 1, a loop or collective without a trace
            (:func:`hieropt.io.astrasim_trace.check_traceable`), or a number of the bundle that is
            not finite.
        OutputError: the folder cannot be written (a full disk): every file is written beside its
            place first (the traces as a new folder) and all are renamed over the earlier ones only
            once every one is written (``bundle.json`` last), so an earlier bundle there is left
            whole when the writing fails.
    """
    check_bw(instance.network.n_dims, bw_gbps)  # (None or text: evaluate's InputError)
    check_traceable(instance)
    folder = Path(folder)
    simnet = simnet or sim_network(instance, bw_gbps)
    system = system_config(simnet, chunks)
    if folder.exists() and not folder.is_dir():
        raise InputError(
            folder, None, "exists and is not a folder", "give a folder path for the bundle"
        )
    texts = {"network.yml": network_yml(simnet, f"instance '{instance.name}'"),
             "system.json": json_text(system, str(folder / "system.json")),
             "remote_memory.json": json.dumps(REMOTE_MEMORY) + "\n"}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # every file beside its place first; renamed when all are written, manifest last
        with ExitStack() as stack:
            staged = {n: stack.enter_context(replacing(folder / n, f"{folder}/{n}"))
                      for n in ("bundle.json", "traces", *texts, "run.sh")}
            workloads = _write_traces(instance, simnet, staged["traces"])
            manifest = {
                "instance": instance.name, "training_loop": instance.training_loop,
                "bw_gbps": [float(b) for b in bw_gbps], "chunks": chunks, "npus": simnet.npus,
                "sim_dims": [asdict(s) for s in simnet.dims],
                "workloads": [asdict(w) for w in workloads],
            }
            texts |= {"run.sh": _run_sh(instance, workloads),
                      "bundle.json": json_text(manifest, str(folder / "bundle.json"))}
            for name, text in texts.items():
                with open(staged[name], "w", encoding="utf-8") as f:
                    f.write(text)
            run = staged["run.sh"]
            run.chmod(run.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            old = folder / "traces"
            # (a folder is not replaced by a rename: the earlier traces go once all is written)
            if old.is_dir():
                shutil.rmtree(old)
    except OSError as e:
        reason = getattr(e, "reason", None) or e.strerror or str(e)
        earlier = (
            "the earlier bundle there is intact"
            if (folder / "bundle.json").is_file()
            else "no bundle written"
        )
        raise OutputError(e.errno, f"{reason} ({earlier})", str(folder), reason) from None
    files = 5 + len(workloads) * simnet.npus
    size = sum(
        (folder / n).stat().st_size
        for n in ("network.yml", "system.json", "remote_memory.json", "bundle.json", "run.sh")
    )
    size += sum(w.trace_bytes for w in workloads)
    return Bundle(
        folder, simnet.npus, tuple(float(b) for b in bw_gbps), chunks, tuple(workloads), files, size
    )


BUNDLE_FILES = ("network.yml", "system.json", "remote_memory.json", "run.sh", "bundle.json")
"""The files :func:`write_bundle` writes into its folder, besides ``traces/``."""


def discard_bundle(folder: str | Path) -> None:
    """Remove the bundle an earlier :func:`write_bundle` left in ``folder`` (its files and
    ``traces/``; nothing else of the folder), when an export ends without a bundle to write, so that
    ``run.sh`` never runs an earlier export's allocation. A folder without ``bundle.json`` (not a
    bundle) is left alone, as are files that cannot be removed."""
    folder = Path(folder)
    if not (folder / "bundle.json").is_file():
        return
    shutil.rmtree(folder / "traces", ignore_errors=True)
    for name in BUNDLE_FILES:
        try:
            (folder / name).unlink(missing_ok=True)
        except OSError:
            pass


__all__ = [
    "Bundle",
    "BundleWorkload",
    "write_bundle",
    "discard_bundle",
    "BUNDLE_FILES",
    "REMOTE_MEMORY",
]
