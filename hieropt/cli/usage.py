"""Command-line input errors in the project's one-line form: click's (typer's) usage errors
(:func:`usage_error_line`), the ``--json`` file named on a command line click could not parse
(:func:`json_option`), a study's error named after the input file (:func:`attribute_to_file`), and
a model's refusal of an input as its error (:func:`input_error`).
The error line and the ``--json`` document of a usage error are written by
:func:`hieropt.cli.common.usage_exit`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..errors import HieroptError


def json_option(args: list[str]) -> Path | None:
    """The value of the last ``--json`` option (``--json FILE`` or ``--json=FILE``) among raw
    command-line ``args``, up to a ``--`` (after which every word is an argument), or None. A
    minimal scan for a command line click could not parse: a ``--json`` that is the value of another
    option counts too."""
    out = None
    for i, word in enumerate(args):
        if word == "--":
            break
        if word == "--json" and i + 1 < len(args):
            out = args[i + 1]
        elif word.startswith("--json="):
            out = word.removeprefix("--json=")
    return Path(out) if out else None


def given_value(args: list[str], opts: Any) -> str | None:
    """The last value given to one of the option names ``opts`` among raw ``args`` (``--x V`` or
    ``--x=V``)."""
    value = None
    for i, word in enumerate(args):
        for opt in opts or ():
            if word == opt and i + 1 < len(args):
                value = args[i + 1]
            elif word.startswith(opt + "="):
                value = word[len(opt) + 1:]
    return value


def usage_error_line(e: Any, args: list[str], command: str | None = None) -> str:
    """click's (typer's) usage error ``e`` in the project's one-line form ``OPTION: PROBLEM; fix:
    FIX``: the option or argument it is about (``--top``; ``command line`` for an unknown command),
    what is wrong with the value given in the raw command-line ``args`` (``0 is not in the range
    x>=1``), and the fix (the command's ``--help``; ``command``: the command's path when ``e``
    carries no context)."""
    param = getattr(e, "param", None)
    msg = (e.message or "").strip().rstrip(".")
    ctx = getattr(e, "ctx", None)
    command = ctx.command_path if ctx is not None else command or "hieropt"
    # (the program as the user knows it: hieropt)
    sub = command.removeprefix("python -m ").split(" ")[1:]
    fix = f"see '{' '.join(['hieropt', *sub])} --help'"
    kind = type(e).__name__
    if kind == "MissingParameter":
        name = (
            max(param.opts, key=len) if param is not None and param.opts else None
        ) or "command line"
        what = "argument" if getattr(param, "param_type_name", "") == "argument" else "option"
        return f"{name.upper() if what == 'argument' else name}: missing {what}; fix: {fix}"
    if param is not None:
        opts = getattr(param, "opts", ()) or ()
        name = (
            max(opts, key=len)
            if getattr(param, "param_type_name", "") == "option"
            else param.name.upper()
        )
        value = given_value(args, opts)
        problem = msg[:1].lower() + msg[1:]
        if value is not None and f"'{value}'" not in problem and not problem.startswith(value):
            problem = f"{problem} (given '{value}')"
        return f"{name}: {problem}; fix: {fix}"
    option = getattr(e, "option_name", None)
    if option:
        maybe = sorted(getattr(e, "possibilities", None) or ())
        hint = f" (did you mean {' or '.join(maybe)}?)" if maybe else ""
        problem = (
            "no such option" + hint
            if kind == "NoSuchOption"
            else msg.replace(f"Option '{option}' ", "")
        )
        return f"{option}: {problem.strip()}; fix: {fix}"
    return f"command line: {msg}; fix: {fix}"


def attribute_to_file(e: HieroptError, path: Path, name: str | None) -> HieroptError:
    """``e`` named after the input file ``path`` when it names the file's ``name`` field (a study
    names the space it was given, e.g. ``gpt3-4096: levels: ...``) or nothing; any other error
    unchanged."""
    from ..errors import InputError

    if isinstance(e, InputError) and (e.source is None or e.source == name):
        return e.with_source(path)
    return e


def _dropped(p: Any, seen: tuple[str, str | None], name: str,
             value: str | None) -> tuple[str, str | None, str, str | None] | None:
    """(first name, its value, this name, its value) when option ``p``, first ``seen`` as
    (name, value), given again as ``name`` (``value``: None for a flag) drops a value: the same
    name with another value, or a flag with its negation (``secondary_opts``); else None."""
    if (seen[0] in p.opts) != (name in p.opts):
        return (seen[0], None, name, None)  # (a flag and its negation)
    if seen[0] == name and seen[1] != value:
        return (*seen, name, value)  # (the same name, two values)
    return None


def aliases_given_together(params: Any, args: list[str]) -> None:
    """Refuse an option given under two of its names among raw command-line ``args`` (up to a
    ``--``): ``--budget 1e7 --budget-usd 2e7`` would keep the last value, $20M, silently, where the
    library refuses ``budget_usd`` with ``max_network_cost_usd``. One check for every command's
    every option with several names (``params``: the command's click parameters; ``--budget``,
    ``--budget-usd``, ``--max-cost-usd``; ``--max-time``, ``--max-time-ns``; ``-o``, ``--out``).
    Likewise the same option given twice with two values (``--budget 1e7 --budget 9e6``) and a
    flag given with its negation (``--sensitivity --no-sensitivity``); an option that takes several
    values (``--set``, ``--constraint``: click's ``multiple``) or counts (``-v -v``) may repeat, and
    the same value given twice drops nothing.

    Raises:
        InputError: the first name given, the other and both values, and the fix.
    """
    from ..errors import InputError

    names: dict[str, Any] = {}
    for p in params:
        if getattr(p, "param_type_name", "") == "option":
            names.update(dict.fromkeys([*p.opts, *p.secondary_opts], p))
    used: dict[Any, dict[str, str | None]] = {}  # (option -> {name given: its value})
    first: dict[Any, tuple[str, str | None]] = {}  # (option -> the first name given, its value)
    twice: tuple[str, str | None, str, str | None] | None = None  # (the first repeat dropping one)
    words = iter(args)
    for word in words:
        if word == "--":
            break
        name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        p = names.get(name)
        if p is None:  # (an argument, a value, or a short option with its value attached)
            p = names.get(word[:2]) if len(word) > 2 and word[1:2] != "-" else None
            if p is None or getattr(p, "is_flag", False):
                continue
            name, eq, value = word[:2], "=", word[2:]
        takes = not getattr(p, "is_flag", False) and not getattr(p, "count", False)
        if takes and not eq:
            value = next(words, "")
        if name in p.opts:
            used.setdefault(p, {}).setdefault(name, value if takes else None)
        if twice is None and not (getattr(p, "multiple", False) or getattr(p, "count", False)):
            twice = _dropped(p, first.setdefault(p, (name, value if takes else None)), name,
                             value if takes else None)
    for given in used.values():
        if len(given) > 1:
            (a, va), (b, vb) = list(given.items())[:2]
            raise InputError(a, None, f"given together with {b}, another name of the same option "
                             f"({a} {va} and {b} {vb}: one value would be dropped)",
                             f"give one of {a} and {b}")
    if twice is not None:
        a, va, b, vb = twice
        if va is None and vb is None:
            raise InputError(a, None, f"given together with {b}, its negation (one would be "
                             "dropped)", f"give one of {a} and {b}")
        raise InputError(a, None, f"given twice ({a} {va} and {b} {vb}: one value would be "
                         "dropped)", f"give {a} once")


def input_error(e: Exception, source: Path | None) -> HieroptError:
    """``e`` as the command's error: a :class:`~hieropt.errors.HieroptError` as it is; a pydantic
    ``ValidationError`` (a model refusing what the input ``source`` gave, e.g. a co-design result's
    row its space cannot rebuild) as an :class:`~hieropt.errors.InputError` naming ``source``
    (:func:`hieropt.io.common.validation_error`; its fix ends "or give a file this hieropt
    wrote"), never a traceback.

    Raises:
        Exception: ``e`` itself when it is neither."""
    from pydantic import ValidationError

    from ..errors import HieroptError, InputError
    from ..io.common import validation_error

    if isinstance(e, HieroptError):
        return e
    if not isinstance(e, ValidationError):
        raise e
    found = validation_error(e, source if source is not None else "the input")
    rerun = "give a file this hieropt wrote (rerun the command that wrote it)"
    return InputError(found.source, found.field, found.problem,
                      f"{found.fix}; or {rerun}" if found.fix else rerun)
