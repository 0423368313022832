"""The ``model`` cell of a runs file: an LLM model file (``generator = "llm"``), not an instance
file. An instance file there (one written by ``hieropt codesign --write-instances``, say) is refused
with what the column takes and where the instance's model is: its workload file, or its inline
``[workload]`` table to write out as a model file (:mod:`hieropt.io.runs` calls
:func:`check_model_file` on every row's model)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import InputError

INSTANCE_KEYS = ("workload", "workloads", "network", "objective", "mapping")
"""Top-level keys of an instance file that no model file has."""


def check_model_file(data: dict[str, Any], model: Path, cell: str, runs: Path, where: str) -> None:
    """Refuse a ``model`` cell ``cell`` (the file ``model``, parsed as ``data``) that names an
    instance file: no ``generator`` and a key of :data:`INSTANCE_KEYS`. Other files go on to
    :func:`hieropt.io.llm.llm_params`, which refuses another generator.

    Raises:
        InputError: ``where: model``, the file, what the column takes, and the fix: the instance's
            workload file (a path relative to the runs file ``runs``) when it names one, else how to
            write its inline LLM workload as a model file; the instance itself goes in the
            ``network`` column.
    """
    keys = [k for k in INSTANCE_KEYS if k in data]
    if "generator" in data or not keys:
        return
    tables = " and ".join(f"[{k}]" if k in ("network", "workload") else k for k in keys[:2])
    raise InputError(
        where,
        "model",
        f"{cell} is an instance file (it has {tables}), not an LLM model file: the model column "
        'takes a model file (generator = "llm" with [params.model], [params.plan] and '
        "[params.npu], e.g. models/gpt3-175b-llm.toml)",
        _fix(data.get("workload"), model, runs)
        + "; an instance file goes in the network column (its network and mapping)",
    )


def _fix(workload: Any, model: Path, runs: Path) -> str:
    """What to give instead of the instance ``model`` whose ``workload`` entry this is."""
    ref = workload
    if isinstance(workload, dict) and len(workload) == 1:
        ref = workload.get("file", workload.get("model"))
    if isinstance(ref, str) and ref.endswith(".toml"):
        path = Path(ref) if Path(ref).is_absolute() else model.parent / ref
        rel = os.path.relpath(path, runs.parent)
        return f'give its workload file {rel} in the model column (if it has generator = "llm")'
    if isinstance(workload, dict) and workload.get("generator") == "llm":
        return (
            "write its [workload] table as a model file (generator = \"llm\", its "
            "[workload.params.*] tables as [params.*]) and give that file in the model column"
        )
    return "give the run's LLM model file in the model column"


__all__ = ["INSTANCE_KEYS", "check_model_file"]
