"""The ``mapping`` entry of an instance file: a LIBRA communicator path, or an inline table of phase
groups (``forward``, ``input_grad``, ``weight_grad``) and named groups (``[mapping.groups]``).

The named groups are those the workload runs collectives on (an LLM plan's tp, dp, pp, ...), and
tp and dp, which give the phases' groups when a phase is not written (forward and input_grad run on
tp, weight_grad on dp). Any other name is refused as an unknown key, with the closest name the
workload uses (``dpp`` -> ``dp``), except a group of one NPU on every dimension of a name a plan
may have (``cp = [1, 1]``). The groups the given ones imply are added as a plan's placement has
them (:func:`hieropt.model.groups.complete`: dp = ep x edp, dpc = dp x cp), so the mapping ``solve``
prints can be written back. Whether the groups fit the network together is the instance's check
(:func:`hieropt.spec.mapping.check_tiling`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..names import close_name
from .common import referenced_file, unknown_key_error

if TYPE_CHECKING:
    from ..spec import Mapping, Network, Workload

PHASE_DEFAULT = {"forward": "tp", "input_grad": "tp", "weight_grad": "dp"}
"""The named group a phase runs on when ``[mapping.groups]`` is given and the phase is not."""
PLAN_GROUPS = ("tp", "cp", "ep", "edp", "dp", "dpc", "pp")
"""Every group name a plan may have (:func:`hieropt.model.groups.complete`)."""


def used_groups(workload: Workload) -> list[str]:
    """The named groups ``workload`` (every stage of it) runs collectives on, sorted."""
    names = set(workload.named_groups)
    for stage in workload.more_stages:
        names |= stage.named_groups
    return sorted(names)


def check_group_names(names: list[str], groups: dict[str, list], workload: Workload,
                      src: str) -> None:
    """Every name of ``[mapping.groups]`` (``names``; ``groups``: name -> sizes as written) is a
    group ``workload`` uses, tp or dp (the phases' groups), or a plan's group name of one NPU on
    every dimension.

    Raises:
        InputError: ``mapping.groups.<name>``: an unknown group, naming the workload's groups.
    """
    used = used_groups(workload)
    known = sorted({*used, "tp", "dp"})
    for name in names:
        if name in known:
            continue
        if name in PLAN_GROUPS and all(x in (1, -1) for x in groups[name]):
            continue  # (not spanned: a group of one NPU)
        uses = ", ".join(used) or "none, its phases run on their own groups"
        guess = close_name(name, [k for k in known if k not in names])  # (a name not yet given)
        raise InputError(
            src,
            f"mapping.groups.{name}",
            "unknown key" + (f" (did you mean '{guess}'?)" if guess else "")
            + f": the workload {workload.name} runs no collective on a group '{name}' (its "
            f"groups: {uses})",
            f"rename '{name}' to '{guess}'" if guess else f"remove {name}",
        )


def mapping_entry(value: Any, workload: Workload, base: Path, src: str,
                  network: Network) -> Mapping:
    """The ``mapping`` entry ``value`` of file ``src`` for ``workload`` on ``network`` (module
    docstring; a communicator path is relative to ``base``).

    Raises:
        InputError: a bad entry, an unknown key or group, a phase without its group (naming the
            group it defaults to when ``[mapping.groups]`` is given).
    """
    from ..spec import Mapping
    from .libra import parse_group, read_communicator

    if isinstance(value, str):
        return read_communicator(
            referenced_file(base, value, src, "mapping", "communicator"), network
        )
    if not isinstance(value, dict):
        raise InputError(src, "mapping", f"expected a file name or a table, got {value!r}",
                         "see docs/reference/file-formats.md")
    known = ("forward", "input_grad", "weight_grad", "groups")
    extra = set(value) - set(known)
    if extra:
        key = sorted(extra)[0]
        raise unknown_key_error(src, f"mapping.{key}", key, known,
                                otherwise="use forward, input_grad, weight_grad and "
                                "[mapping.groups]")
    named = value.get("groups", {})
    if not isinstance(named, dict):
        raise InputError(
            src,
            "mapping.groups",
            "expected a table",
            "write [mapping.groups] tp = [4, 2, 1, 1] ...",
        )
    for name, g in named.items():
        if not isinstance(g, list):
            raise InputError(
                src, f"mapping.groups.{name}", "expected a list", "write e.g. [4, 2, 1, 1]"
            )
    check_group_names(list(named), named, workload, src)
    from ..model.groups import complete

    parsed = {
        name: parse_group(g, f"mapping.groups.{name}", src, network) for name, g in named.items()
    }
    # (with the groups they imply that the workload runs on, as a plan's own placement has them:
    # dp = ep x edp, dpc = dp x cp)
    needed = {*used_groups(workload), "dp"}
    parsed |= {k: v for k, v in complete(parsed).items() if k not in parsed and k in needed}
    groups = {}
    for phase, default in PHASE_DEFAULT.items():
        if phase in value:
            if not isinstance(value[phase], list):
                raise InputError(
                    src, f"mapping.{phase}", "expected a list", "write e.g. [4, 4, 1, 1]"
                )
            groups[phase] = parse_group(value[phase], f"mapping.{phase}", src, network)
        elif default in parsed:  # (a plan's groups: tp for forward and input_grad, dp for weights)
            groups[phase] = parsed[default]
        elif parsed:
            raise InputError(
                src,
                f"mapping.groups.{default}",
                f"missing ({phase} runs on the {default} group when [mapping.groups] is given "
                "without it)",
                f"give {default}'s size on every dimension, or mapping.{phase}",
            )
        else:
            raise InputError(
                src,
                f"mapping.{phase}",
                "missing",
                "give one group size per dimension (1: not spanned)",
            )
    return Mapping(**groups, groups=parsed)


__all__ = ["PHASE_DEFAULT", "PLAN_GROUPS", "used_groups", "check_group_names", "mapping_entry"]
