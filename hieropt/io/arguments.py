"""The library's checks of arguments that name something to read or run, or a plain setting: a
co-design space, a parts catalog, a folder to write, the simulator's binary, a number of workers, a
callback, a time limit, a fraction, an iteration time or a run's deadline in ns, a run's token
budget.

Each is ``(value, argument name) -> the value``, raising an
:class:`~hieropt.errors.InputError` that names the argument and says what to pass (the facade's
table of argument checks, :data:`hieropt.api._ARGUMENTS`, applies them; a path is read by the
function that takes it)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..cache import Cache
from ..errors import InputError, number_problem
from ..model.catalog import Catalog
from ..names import OBJECTIVES
from ..spec.overrides import check_time_limit, is_real
from ..units import (
    MAX_PLAUSIBLE_DEADLINE_NS,
    MIN_PLAUSIBLE_DEADLINE_NS,
    MIN_PLAUSIBLE_ITERATION_NS,
)
from .cluster import tokens_excess_problem, tokens_unit_problem


def space_argument(value: Any, name: str) -> Any:
    """A co-design space (:func:`load_codesign`'s
    :class:`~hieropt.workloads.llm.space.CodesignSpace`), or the path (str or Path) of a
    co-design space file (read by the search)."""
    from ..workloads.llm.space import CodesignSpace

    return _loaded_or_path(value, name, CodesignSpace, "load_codesign", "a co-design space file",
                           "spaces/codesign-gpt3-4096.toml")


def catalog_argument(value: Any, name: str) -> Any:
    """A parts catalog (:func:`load_catalog`'s :class:`Catalog`), or the path (str or Path) of a
    catalog file (read by the provisioning)."""
    return _loaded_or_path(value, name, Catalog, "load_catalog", "a catalog file",
                           "catalogs/example-4d.toml")


def _loaded_or_path(value: Any, name: str, kind: type, loader: str, file: str,
                    example: str) -> Any:
    """``value`` when it is a ``kind`` (what ``hieropt.<loader>`` returns) or a path; else the
    InputError naming argument ``name``, with ``example`` as the path to pass."""
    if isinstance(value, kind | str | Path):
        return value
    raise InputError(
        name, None,
        f"expected hieropt.{loader}(path) or the path of {file}, got a {type(value).__name__}",
        f'pass the path itself, e.g. "{example}", or hieropt.{loader}(path)',
    )


def workers_argument(value: Any, name: str) -> Any:
    """A number of local processes: a whole number >= 1, or None (the CPU count)."""
    if value is None:
        return value
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
        raise InputError(name, None, f"{value!r} is not a whole number >= 1",
                         f"give {name}=1 (this process) or more, or None (one per CPU)")
    return value


def _callback(value: Any, name: str, count: int, want: str, fix: str) -> Any:
    """``value``, a function that can be called with ``count`` positional arguments, or None;
    else an InputError naming ``name`` (expected ``want``). A function whose signature Python
    cannot read (some builtins) is taken as it is."""
    if value is None:
        return None
    if not callable(value):
        raise InputError(name, None, f"expected {want}, got a {type(value).__name__}", fix)
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return value
    try:
        signature.bind(*range(count))
    except TypeError:
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        takes = sum(p.kind in positional for p in signature.parameters.values())
        raise InputError(name, None, f"expected {want}, got one that takes {takes}", fix) from None
    return value


def callback_argument(value: Any, name: str) -> Any:
    """A function called with each row (one argument), or None."""
    return _callback(value, name, 1, "a function of one row",
                     f"pass e.g. {name}=print (None: none)")


def progress_argument(value: Any, name: str) -> Any:
    """A co-design search's progress function, called as ``progress(settled, total)`` (counts of
    candidates), or None."""
    return _callback(value, name, 2, "a function of two arguments (settled, total)",
                     f"pass e.g. {name}=lambda settled, total: print(settled, total) (None: none)")


def front_progress_argument(value: Any, name: str) -> Any:
    """A Pareto front's progress function, called as ``progress(done, points)`` (counts of
    budgets), or None."""
    return _callback(value, name, 2, "a function of two arguments (done, points)",
                     f"pass e.g. {name}=lambda done, points: print(done, points) (None: none)")


def time_limit_argument(value: Any, name: str) -> float:
    """A time limit per solve, s: a number > 0 (inf: none)."""
    return check_time_limit(value, name)


def folder_argument(value: Any, name: str) -> Any:
    """The path (str or Path) of a folder to write."""
    if not isinstance(value, str | Path):
        raise InputError(name, None, f"expected a folder's path (str or Path), got a "
                         f"{type(value).__name__}", f'pass e.g. {name}="bundle/"')
    return value


def binary_argument(value: Any, name: str) -> Any:
    """The path (str or Path) of the ASTRA-sim binary (its own checks: a file, executable, follow
    in the simulation)."""
    if value is None or value == "" or not isinstance(value, str | Path):
        got = "no binary" if value is None or value == "" else f"a {type(value).__name__}"
        raise InputError(
            name, None, f"expected the path of the ASTRA-sim binary, got {got}",
            f"pass the path of AstraSim_Analytical_Congestion_Unaware, e.g. "
            f'{name}=os.environ["ASTRA_SIM"]',
        )
    return value


def fraction_argument(value: Any, name: str) -> Any:
    """A fraction in (0, 1), e.g. 0.03 for 3 %."""
    if not is_real(value) or not 0 < float(value) < 1:
        problem = (f"{value!r} is not a number" if not is_real(value)
                   else f"{value:g} is not in (0, 1)")
        raise InputError(name, None, problem, f"give a fraction, e.g. {name}=0.03 for 3 %")
    return value


ITERATION_TIME_FIX = "give the iteration time in ns, e.g. 1.2e9 (the solution's iteration_time_ns)"
"""The fix of an iteration time that is not a finite number > 0
(:func:`iteration_time_argument`)."""
TARGET_FIX = "give the iteration-time target in ns, e.g. 1.3e9 for 1.3 s (None: the input's)"
"""The fix of an iteration-time target that is not a finite number > 0
(:func:`iteration_target_argument`)."""
DEADLINE_FIX = "give the run's wall time in ns, e.g. 90 * 86400e9 for 90 days"
"""The fix of a deadline that is not a finite number > 0 (:func:`deadline_argument`)."""


TOKENS_FIX = "give the run's token budget as a number, e.g. 15e12 for 15T (None: the instance's)"
"""The fix of a token budget that is not a finite number > 0 (:func:`tokens_argument`)."""


def tokens_argument(value: Any, name: str) -> Any:
    """A run's token budget, tokens, or None (the instance's): a finite number > 0 from
    :data:`hieropt.io.cluster.MIN_RUN_TOKENS` (1M, fewer than one iteration of an LLM: ``15``
    meant 15T) to :data:`hieropt.io.cluster.MAX_RUN_TOKENS` (1,000T), as the command line's
    ``--tokens`` and an instance file's ``tokens`` are.

    Raises:
        InputError: (exit 2) naming ``name``: not a number, NaN, infinite, <= 0 (fix
            :data:`TOKENS_FIX`), below 1M or above 1,000T.
    """
    if value is None:
        return value
    v = _positive_ns(value, name, TOKENS_FIX)
    if (problem := tokens_unit_problem(v)) is not None:
        raise InputError(name, None, problem, f"give the run's token budget in tokens, e.g. "
                         f"{name}=15e12 for 15T ({v:g} would be {v:g} tokens)")
    if (problem := tokens_excess_problem(v)) is not None:
        raise InputError(name, None, problem,
                         f"give the run's token budget, at most 1000T, e.g. {name}=15e12")
    return value


def _positive_ns(value: Any, name: str, fix: str) -> float:
    """``value`` (a time in ns, or another amount) as a float when it is a real number, finite and
    > 0; else the InputError naming ``name`` with ``fix``."""
    if not is_real(value):
        raise InputError(name, None, f"{value!r} is not a number", fix)
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise InputError(name, None, number_problem(v, "a number > 0"), fix)
    return v


def _other_readings(v: float, name: str, least_ns: float,
                    units: tuple[tuple[str, float], ...]) -> str:
    """`` (for V ms, NAME=X; ...)``: ``v`` read in each of ``units`` (name, ns per unit) whose
    reading is at least ``least_ns``; "" when none is."""
    alts = [f"for {v:g} {unit}, {name}={v * ns:g}" for unit, ns in units if v * ns >= least_ns]
    return f" ({'; '.join(alts)})" if alts else ""


def iteration_time_argument(value: Any, name: str) -> Any:
    """An iteration time, ns: a finite number > 0 and at least
    :data:`hieropt.units.MIN_PLAUSIBLE_ITERATION_NS` (1e3 ns = 1 us, a thousand times shorter than
    any training iteration of an LLM). A smaller one is a time in s or ms read as ns (``12.5`` for
    12.5 s), whose run would take 1e9 times too few days and $ and an MFU 1e9 times too high: it
    is refused, as ``bw_gbps`` in bytes/s is (:func:`hieropt.model.bandwidths.check_bw_in_gbps`).

    Raises:
        InputError: (exit 2) naming ``name``: not a number, NaN, infinite, <= 0 (fix
            :data:`ITERATION_TIME_FIX`), or below 1e3 ns (the fix writes the value read as s and
            as ms in ns).
    """
    v = _positive_ns(value, name, ITERATION_TIME_FIX)
    if v < MIN_PLAUSIBLE_ITERATION_NS:
        raise InputError(
            name, None,
            f"{v:g} ns is below {MIN_PLAUSIBLE_ITERATION_NS:,g} ns (1 µs), shorter than any "
            "training iteration: looks like seconds or milliseconds",
            f"give the time in ns (1 s = 1e9 ns, 1 ms = 1e6 ns): {v:g} s = {v * 1e9:g} ns: write "
            f"{name}={v * 1e9:g}" + _other_readings(v, name, MIN_PLAUSIBLE_ITERATION_NS,
                                                    (("ms", 1e6),)),
        )
    return value


def iteration_target_argument(value: Any, name: str) -> Any:
    """An iteration-time target of an LLM plan search, ns, or None (the input's): as
    :func:`iteration_time_argument` (a target below 1 us is a time in s or ms read as ns: every
    candidate would be infeasible by its bound, not a unit slip told).

    Raises:
        InputError: (exit 2) naming ``name``, as :func:`iteration_time_argument`.
    """
    if value is None:
        return None
    _positive_ns(value, name, TARGET_FIX)
    return iteration_time_argument(value, name)


def deadline_argument(value: Any, name: str) -> Any:
    """A run's wall-time deadline, ns, or None (no deadline): a finite number > 0 and at least
    :data:`hieropt.units.MIN_PLAUSIBLE_DEADLINE_NS` (one hour; a training run takes days). A
    smaller one is a deadline in days, hours or seconds read as ns (``90`` for 90 days), whose
    iteration-time target would be 1e14 times too tight: it is refused (the command line's
    ``--deadline`` needs its unit, ``90d``).

    Raises:
        InputError: (exit 2) naming ``name``: not a number, NaN, infinite, <= 0 (fix
            :data:`DEADLINE_FIX`), or below one hour (the fix writes the value read as days,
            hours or seconds in ns, the readings from one hour to ten years, days first:
            ``7776000`` is 90 days in seconds).
    """
    if value is None:
        return value
    v = _positive_ns(value, name, DEADLINE_FIX)
    if v < MIN_PLAUSIBLE_DEADLINE_NS:
        # (the readings from one hour to ten years, days first; days when none is)
        readings = [(unit, ns, what) for unit, ns, what in _DEADLINE_UNITS
                    if MIN_PLAUSIBLE_DEADLINE_NS <= v * ns <= MAX_PLAUSIBLE_DEADLINE_NS]
        unit, ns, what = (readings or _DEADLINE_UNITS)[0]
        rest = tuple((u, n) for u, n, _ in readings[1:])
        raise InputError(
            name, None,
            f"{v:g} ns is below one hour ({MIN_PLAUSIBLE_DEADLINE_NS:g} ns), shorter than any "
            "training run: looks like days, hours or seconds",
            f"give the run's wall time in ns ({what}): {v:g} {unit} = {v * ns:g} ns: write "
            f"{name}={v * ns:g}" + _other_readings(v, name, MIN_PLAUSIBLE_DEADLINE_NS, rest),
        )
    return value


_DEADLINE_UNITS = (("days", 86400e9, "1 day = 86400e9 ns"), ("h", 3600e9, "1 h = 3600e9 ns"),
                   ("s", 1e9, "1 s = 1e9 ns"))
"""The units a deadline refused as ns may have been meant in: name, ns per unit, the conversion."""


LIBRA_EXAMPLES = {"network": "4d_network.yml", "workload": "GPT_3.txt",
                  "communicator": "GPT_3_4d.yml", "cost": "4d_cost_model.yml"}
"""An example file name of each of ``load_libra``'s file arguments (LIBRA's GPT-3 4-D set)."""


def libra_file_argument(value: Any, name: str) -> Any:
    """The path (str or Path) of one of LIBRA's files, ``name`` one of :data:`LIBRA_EXAMPLES`
    (``communicator`` may be None: derived from the workload's header)."""
    if value is None and name in ("communicator", "cost"):
        return None  # (no cost file: refused by load_libra, which requires one)
    if not isinstance(value, str | Path):
        what = "cost model" if name == "cost" else name
        raise InputError(name, None, f"expected the path (str or Path) of LIBRA's {what} file, "
                         f"got a {type(value).__name__}",
                         f'pass the file\'s path, e.g. {name}="{LIBRA_EXAMPLES[name]}"')
    return value


def items_argument(value: Any, name: str, want: str, fix: str,
                   kinds: Any = str | Path) -> tuple[Any, ...]:
    """``value`` as a tuple: one str or Path is one item (when it is of ``kinds``), a list (any
    iterable but a str, bytes or mapping) its items, each of ``kinds``.

    Raises:
        InputError: naming ``name`` (expected ``want``, with ``fix``) for another type, or a list
            holding an item of another type.
    """
    if isinstance(value, str | Path) and isinstance(value, kinds):
        return (value,)
    if isinstance(value, bytes | str | Path | Mapping) or not isinstance(value, Iterable):
        raise InputError(name, None, f"expected {want}, got a {type(value).__name__}", fix)
    items = tuple(value)
    for item in items:
        if not isinstance(item, kinds):
            raise InputError(name, None, f"expected {want}, got a list holding a "
                             f"{type(item).__name__}", fix)
    return items


def constraints_argument(value: Any, name: str) -> tuple[str, ...]:
    """Constraint texts (``"sum(bw) == 500"``): one str is one constraint, or a list of them
    (:func:`items_argument`)."""
    return items_argument(value, name, "constraint texts",
                          f'pass e.g. {name}=["sum(bw) == 500"]', str)


def objective_argument(value: Any, name: str) -> str:
    """An objective's name (:data:`hieropt.names.OBJECTIVES`)."""
    if value not in OBJECTIVES:
        raise InputError(name, None, f"unknown objective {value!r}",
                         f"use one of {', '.join(OBJECTIVES)}")
    return value


def results_file_argument(value: Any, name: str) -> Any:
    """The path (str or Path) of a sweep's results file, or None (none written); its format
    (``.csv``, ``.parquet``) the sweep checks."""
    if value is not None and not isinstance(value, str | Path):
        raise InputError(name, None, "expected the path (str or Path) of a results file, got a "
                         f"{type(value).__name__}", f'pass e.g. {name}="rows.csv" (None: no file)')
    return value


def keep_argument(value: Any, name: str) -> Any:
    """A number of rows to keep: a whole number >= 1."""
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
        raise InputError(name, None, f"{value!r} is not a whole number >= 1",
                         f"give the number of solved rows to keep for the ranking, e.g. {name}=50")
    return value


def chunks_argument(value: Any, name: str) -> int:
    """A number of chunks per collective: a whole number >= 1."""
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
        raise InputError(name, None, f"{value!r} is not a whole number >= 1",
                         f"give the chunks per collective, e.g. {name}=4 (1: hieropt's model)")
    return int(value)


def optional_instance_argument(value: Any, name: str) -> Any:
    """An :class:`~hieropt.spec.Instance`, the path of an instance file (read), or None."""
    from .instance import as_instance

    return None if value is None else as_instance(value, name)


def cache_argument(value: Any, name: str) -> Any:
    """A :class:`~hieropt.cache.Cache` shared between calls, or None (the call's own)."""
    if value is not None and not isinstance(value, Cache):
        raise InputError(name, None, f"expected a hieropt.cache.Cache, got a "
                         f"{type(value).__name__}", f"pass {name}=Cache() (from hieropt.cache "
                         "import Cache), or None for one of the call's own")
    return value


def sizes_argument(value: Any, name: str) -> Any:
    """Cluster sizes (NPU counts): a list of whole numbers >= 1, or None (the space's)."""
    fix = f"pass e.g. {name}=[2048, 4096] (None: the space's npus)"
    if value is None:
        return None
    if isinstance(value, str | bytes | dict) or not isinstance(value, Iterable):
        raise InputError(name, None, "expected NPU counts (whole numbers >= 1), got a "
                         f"{type(value).__name__}", fix)
    sizes = list(value)
    for n in sizes:
        if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 1:
            raise InputError(name, None, f"{n!r} is not a whole number >= 1", fix)
    return sizes


def switch_argument(value: Any, name: str) -> bool:
    """A switch: True or False (``"no"`` is text, and would be taken as true)."""
    if not isinstance(value, bool | np.bool_):
        raise InputError(name, None, f"{value!r} is not a boolean",
                         f"give {name}=True or {name}=False")
    return bool(value)


def calibrations_argument(value: Any, name: str, kind: type) -> tuple[Any, ...]:
    """Calibrations (:func:`hieropt.calibrate`'s, of class ``kind``): one, or a list of them
    (empty: none)."""
    fix = f"pass e.g. {name}=[hieropt.calibrate(runs)] (empty: the model files' own)"
    if isinstance(value, kind):
        return (value,)
    if isinstance(value, str | bytes | dict | Path) or not isinstance(value, Iterable):
        raise InputError(name, None, "expected calibrations (hieropt.calibrate(...)), got a "
                         f"{type(value).__name__}", fix)
    items = tuple(value)
    for item in items:
        if not isinstance(item, kind):
            raise InputError(name, None, "expected calibrations (hieropt.calibrate(...)), got a "
                             f"list holding a {type(item).__name__}", fix)
    return items


def bind_arguments(signature: inspect.Signature, function: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> inspect.BoundArguments:
    """``signature.bind(*args, **kwargs)`` of the library function ``function`` (its name, e.g.
    ``"provision_tradeoff"``).

    Raises:
        InputError: a keyword the function does not take, named with the closest valid name
            (:func:`difflib.get_close_matches`) and all of them; other mismatches (a missing or
            surplus positional argument) stay Python's ``TypeError``.
    """
    import difflib

    params = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    names = [n for n, p in params.items() if p.kind not in (
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD,
        inspect.Parameter.POSITIONAL_ONLY)]
    unknown = [] if takes_any else [k for k in kwargs if k not in names]
    if unknown:
        close = difflib.get_close_matches(unknown[0], names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(f"hieropt.{function}", unknown[0],
                         f"{function}() has no argument {unknown[0]!r}",
                         f"{hint}valid arguments: {', '.join(names)}")
    return signature.bind(*args, **kwargs)
