"""Which workload each pipeline stage of loop ``step`` runs, and its model chunks (for the traces of
:mod:`hieropt.io.astrasim_step`).

Stage r runs the workload named ``<model>-stage<r>`` among the distinct stages
(:attr:`hieropt.spec.Workload.stages`); a stage not among them runs the one of its role (first,
middle, last) it equals: the LLM generator lists the first of equal stages only. With v virtual
stages a stage holds v model chunks; a chunk ends at a layer with a forward point-to-point send and
starts at one with an input-gradient send.
"""

from __future__ import annotations

import re

from ..errors import InputError
from ..model.pipeline import chunks_of
from ..spec import Collective, Instance, Job, Workload

_STAGE_NAME = re.compile(r"-stage(\d+)$")


def stage_workloads(
    instance: Instance, job: Job, source: str = "ASTRA-sim export"
) -> list[Workload]:
    """The workload of every pipeline stage 0 .. p - 1 of ``job`` (module docstring).

    Raises:
        InputError: a stage whose workload cannot be told (several distinct stages of its role, or
            stage names without their index).
    """
    p = instance.step.stages
    stages = job.workload.stages
    if len(stages) == 1:
        return [stages[0]] * p
    named: dict[int, Workload] = {}
    for w in stages:
        m = _STAGE_NAME.search(w.name)
        if m is None or not int(m[1]) < p:
            raise InputError(
                source,
                f"workload {w.name}",
                f"a stage of a {p}-stage pipeline without its stage "
                "number in its name (<model>-stage<r>), so the NPUs running it are not known",
                "write the instance from an LLM model file (generator 'llm')",
            )
        named[int(m[1])] = w
    out = []
    for r in range(p):
        if r in named:
            out.append(named[r])
            continue
        same = [k for k in named if (k == 0) == (r == 0) and (k == p - 1) == (r == p - 1)]
        if len(same) != 1:
            raise InputError(
                source,
                f"workload {job.workload.name}",
                f"stage {r} is not among the distinct stages "
                f"{sorted(named)} and equals one of {sorted(same) or 'none'} of its role",
                "write the instance from an LLM model file (generator 'llm')",
            )
        out.append(named[same[0]])
    return out


def chunks(workload: Workload, v: int, source: str = "ASTRA-sim export") -> list[list[list[int]]]:
    """The rows of ``workload`` as v chunks, each a list of layers, each the rows of one layer (a
    layer's further collectives sit on rows named ``<layer>+k``): a chunk ends after a layer with a
    forward ``P2P`` and starts at one with an input-gradient ``P2P``
    (:func:`hieropt.model.pipeline.chunks_of`, as the time model's schedule graph cuts them).

    Raises:
        InputError: the sends do not split the stage into ``v`` chunks.
    """
    out = chunks_of(workload)
    if len(out) != v:
        raise InputError(
            source,
            f"workload {workload.name}",
            f"its pipeline sends split it into {len(out)} chunks, "
            f"but the step has {v} virtual stages",
            "give step.virtual_stages the plan's value",
        )
    return out


def send_bytes(w: Workload, v: int) -> tuple[list[int], list[int]]:
    """Per chunk of ``w``: bytes of its forward send and of its backward (input-gradient) send (0:
    none)."""
    t = w.table
    fwd, bwd = [], []
    for chunk in chunks(w, v):
        rows = [row for op in chunk for row in op]
        for j, out in ((0, fwd), (1, bwd)):
            sent = [t.size_bytes[i, j] for i in rows if t.collective[i, j] is Collective.P2P]
            out.append(int(round(float(sum(sent)))))
    return fwd, bwd


__all__ = ["stage_workloads", "chunks", "send_bytes"]
