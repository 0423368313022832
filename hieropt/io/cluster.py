"""The ``[cluster]`` section of instance and space files -> :class:`hieropt.spec.cluster.Cluster`.

Each figure is a number or ``{ value = ..., source = "<key>" }``; sources are
``[cluster.sources.<key>]`` tables with ``ref``, ``date`` (YYYY-MM-DD) and ``kind`` (list, street,
estimate, spec, assumption, invented), as in the
parts catalogs::

    [cluster]
    accelerator_usd = { value = 33750, source = "semianalysis-dgx" }
    accelerator_w = 700
    pue = 1.2
    amortisation_years = 5
    require_sources = false
    [cluster.sources.semianalysis-dgx]
    ref = "SemiAnalysis, AI server cost analysis (2023-05-29): DGX H100 about $270,000"
    date = "2026-12-05"
    kind = "estimate"
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .common import short_repr, validation_error

if TYPE_CHECKING:
    from ..spec.cluster import Cluster


def cluster_entry(value: Any, src: str | Path, field: str = "cluster") -> Cluster:
    """The ``[cluster]`` table ``value`` of file ``src`` as a
    :class:`~hieropt.spec.cluster.Cluster`.

    Raises:
        InputError: not a table, a figure neither a number nor ``{value, source}``, an unknown key,
            a bad value, a unit slip (:func:`hieropt.io.cluster_units.check_cluster_units`: 0.7 W
            per accelerator looks like kW) or an unknown source (naming ``src`` and the field).
    """
    from pydantic import ValidationError

    from ..spec.cluster import Cluster

    if not isinstance(value, dict):
        raise InputError(src, field, f"expected a table, got {short_repr(value)}",
                         "write [cluster] with accelerator_usd = ..., accelerator_w = ..., ...")
    figures: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, v in value.items():
        if key in ("sources", "require_sources"):
            continue
        if isinstance(v, dict):
            extra = set(v) - {"value", "source"}
            if extra or "value" not in v:
                raise InputError(
                    src,
                    f"{field}.{key}",
                    'expected a number or { value = ..., source = "<key>" }',
                    'write e.g. accelerator_usd = { value = 33750, source = "epoch" }',
                )
            if "source" in v:
                if not isinstance(v["source"], str):
                    raise InputError(
                        src,
                        f"{field}.{key}.source",
                        "expected the key of a [cluster.sources] table",
                        'write source = "<key>"',
                    )
                sources[key] = v["source"]
            v = v["value"]
        figures[key] = v
    refs = value.get("sources", {})
    if not isinstance(refs, dict) or not all(isinstance(r, dict) for r in refs.values()):
        raise InputError(src, f"{field}.sources", "expected [cluster.sources.<key>] tables",
                         "write [cluster.sources.<key>] with ref, date and kind")
    from .cluster_units import CLUSTER_RANGES, unit_problem

    for key, rule in CLUSTER_RANGES.items():  # (a figure far above its range is a unit slip
        v = figures.get(key)                 # before it is above the model's cap: 60 months)
        if isinstance(v, int | float) and not isinstance(v, bool) and v > rule.high:
            found = unit_problem(float(v), rule)
            if found is not None:
                raise InputError(src, f"{field}.{key}", *found)
    try:
        cluster = Cluster(**figures, sources=sources, references=refs,
                          require_sources=value.get("require_sources", False))
    except ValidationError as e:
        err = validation_error(e, src, field, Cluster)
        raise InputError(src, as_written(err.field, field), err.problem, err.fix) from e
    from .cluster_units import check_cluster_units

    check_cluster_units(cluster, src, field)
    return cluster


def as_written(path: str | None, field: str = "cluster") -> str | None:
    """The field ``path`` of a :class:`~hieropt.spec.cluster.Cluster` (under ``field``) as the file
    writes it: the model's ``references.<key>`` is the file's ``[cluster.sources.<key>]`` table, and
    its ``sources.<figure>`` (the figure's source key) the file's ``<figure>.source``; any other
    path as it is (None stays None)."""
    if path is None:
        return None
    head = f"{field}.references"
    if path == head or path.startswith((f"{head}.", f"{head}[")):
        return f"{field}.sources{path[len(head):]}"
    head = f"{field}.sources."
    if path.startswith(head) and "." not in path[len(head):]:
        return f"{field}.{path[len(head):]}.source"
    return path


MIN_RUN_TOKENS = 1e6
"""Token budgets below this are taken for a unit slip: one iteration of an LLM trains on millions
of tokens (Llama 3 405B: 16.8M; GPT-3: 3.1M), and pre-training runs on billions to trillions
(``--tokens 15`` meant 15T)."""


def tokens_unit_problem(tokens: float) -> str | None:
    """Why a run's token budget ``tokens`` (> 0) is a wrong unit (below :data:`MIN_RUN_TOKENS`):
    the problem of an InputError, else None."""
    if tokens >= MIN_RUN_TOKENS:
        return None
    return (
        f"{tokens:,.6g} tokens is below {MIN_RUN_TOKENS:,.0f}, fewer than one iteration of an LLM "
        "training: the budget is a plain token count"
    )


MAX_RUN_TOKENS = 1e15
"""Token budgets above this (1,000T) are refused as absurd: about 28 x the largest published
pre-training run, Qwen3's 36T tokens (Qwen3 Technical Report, arXiv:2505.09388; Llama 3 405B:
15.6T, DeepSeek-V3: 14.8T). A typo of the exponent (``1e30``) would otherwise print a run of
billions of billions of days."""


def tokens_excess_problem(tokens: float) -> str | None:
    """Why a run's token budget ``tokens`` is absurd (above :data:`MAX_RUN_TOKENS`): the problem of
    an InputError, else None."""
    if tokens <= MAX_RUN_TOKENS:
        return None
    return (
        f"{tokens:,.6g} tokens is above 1,000T (1e15), the limit (about 28 x the largest "
        "published pre-training run, 36T tokens, Qwen3 Technical Report, arXiv:2505.09388)"
    )


def tokens_entry(value: Any, src: str | Path) -> float:
    """A ``tokens`` entry (the token budget of one run, e.g. ``15e12``) as a float > 0.

    Raises:
        InputError: not a positive, finite number, below :data:`MIN_RUN_TOKENS` (a unit slip:
            ``tokens = 15`` for 15T) or above :data:`MAX_RUN_TOKENS`.
    """
    from .common import positive_number

    tokens = positive_number(
        value, src, "tokens", "give the run's token budget, e.g. tokens = 15e12"
    )
    problem = tokens_unit_problem(tokens)
    if problem is not None:
        raise InputError(
            src, "tokens", problem,
            f"did you mean {tokens:g}B or {tokens:g}T? write tokens = {tokens:g}e9 or "
            f"{tokens:g}e12",
        )
    problem = tokens_excess_problem(tokens)
    if problem is not None:
        raise InputError(src, "tokens", problem,
                         "give the run's token budget, at most 1e15, e.g. tokens = 15e12")
    return tokens


__all__ = ["cluster_entry", "as_written", "tokens_entry", "tokens_unit_problem",
           "tokens_excess_problem",
           "MIN_RUN_TOKENS", "MAX_RUN_TOKENS"]
