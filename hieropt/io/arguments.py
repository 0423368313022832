"""The library's checks of arguments that name something to read or run, or a plain setting: a
co-design space, a parts catalog, a folder to write, the simulator's binary, a number of workers, a
callback, a time limit, a fraction. Each is ``(value, argument name) -> the value``, raising an
:class:`~hieropt.errors.InputError` that names the argument and says what to pass (the facade's
table of argument checks, :data:`hieropt.api._ARGUMENTS`, applies them; a path is read by the
function that takes it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..model.catalog import Catalog
from ..spec.overrides import check_time_limit, is_real


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


def callback_argument(value: Any, name: str) -> Any:
    """A function (called with each row), or None."""
    if value is not None and not callable(value):
        raise InputError(name, None, f"expected a function, got a {type(value).__name__}",
                         f"pass a function of one row, e.g. {name}=print (None: none)")
    return value


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
