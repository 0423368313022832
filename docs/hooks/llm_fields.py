"""MkDocs hook: the fields of an LLM model file (generator ``llm``), from the pydantic models.

The page ``reference/workloads.md`` holds the marker ``<!-- llm-model-fields -->``; at build time
it is replaced by one table per table of the file (``[params]``, ``[params.model]``,
``[params.model.moe]``, ``[params.plan]``, ``[params.npu]``, ``[params.precision]``): every field of
the model class that reads it, its type and bounds, its default, and its meaning (the field's
``description``, else its entry in the class docstring's ``Attributes:`` section). A field with
neither stops the build, so a new field cannot go undocumented.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any

from pydantic import BaseModel

MARKER = "<!-- llm-model-fields -->"
_BOUNDS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"), ("min_length", "length ≥"))


def sections() -> list[tuple[str, Any]]:
    """(TOML table, pydantic class) of an LLM model file's tables, in the file's order."""
    from hieropt.workloads.llm.params import NPU, Architecture, LLMParams, MoE, Plan, Precision

    return [("[params]", LLMParams), ("[params.model]", Architecture),
            ("[params.model.moe]", MoE), ("[params.plan]", Plan), ("[params.npu]", NPU),
            ("[params.precision]", Precision)]


def attributes(cls: type) -> dict[str, str]:
    """Field name -> its text in ``cls``'s docstring ``Attributes:`` section (Google style; an
    entry ``a, b: text`` gives ``text`` to both), continuation lines joined."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    m = re.search(r"^Attributes:\n((?:[ \t]+.*\n?|\n)*)", doc, re.M)
    if not m:
        return {}
    entries: list[str] = []
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        if re.match(r"^ {4}\S", line):
            entries.append(line.strip())
        elif entries:
            entries[-1] += " " + line.strip()
    out = {}
    for entry in entries:
        head, sep, text = entry.partition(": ")
        if sep and re.fullmatch(r"[\w, ]+", head):
            for name in head.split(","):
                out[name.strip()] = text
    return out


def type_text(annotation: Any) -> str:
    """A field's type in words: ``int``, ``float``, ``bool``, ``str``, the choices of a Literal,
    ``... or none`` for an optional field, a table for a nested model."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " / ".join(f'`"{a}"`' for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(type_text(a) for a in args) + " or none"
    if origin in (tuple, list):
        inner = typing.get_args(annotation)[0]
        if typing.get_origin(inner) is tuple:  # (pairs: a TOML table of key = value)
            key, value = typing.get_args(inner)
            return f"table of {type_text(key)} = {type_text(value)}"
        return f"list of {type_text(inner)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    return getattr(annotation, "__name__", str(annotation))


def bounds_text(field: Any) -> str:
    """The field's bounds (``≥ 1``, ``> 0``, ``≤ 1``), comma-separated, or empty."""
    out = []
    for item in field.metadata:
        for attr, sign in _BOUNDS:
            value = getattr(item, attr, None)
            if value is not None:
                out.append(f"{sign} {_number(value)}")
    return ", ".join(out)


def _number(value: float) -> str:
    """A bound or default as written: a large power of two as ``2^k``, a float shortest."""
    if isinstance(value, int) and value >= 2**20 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def markdown(text: str) -> str:
    """A docstring's text as Markdown: ``x`` as `x`, a Sphinx role :func:`~a.b.c` as `c` (`a.b.c`
    without the tilde), on one line."""
    text = re.sub(r":\w+:`~[\w.]*?(\w+)`", r"`\1`", text)
    text = re.sub(r":\w+:`([^`]+)`", r"`\1`", text)
    return " ".join(text.replace("``", "`").split())


def default_text(field: Any) -> str:
    """The default as a TOML reader would write it, ``required`` without one, ``none`` for None; a
    default resolved from other fields (``gradient_bytes``: the number format's) in the words of
    the field's ``json_schema_extra["default_text"]``."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if "default_text" in extra:
        return str(extra["default_text"])
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, int | float):
        return f"`{_number(value)}`"
    if isinstance(value, tuple | list) and not value:
        return "`[]`"
    return "the table's defaults" if isinstance(value, BaseModel) else f"`{value}`"


def rows(cls: type) -> list[tuple[str, str, str, str]]:
    """(field, type and bounds, default, meaning) of every field of ``cls``.

    Raises:
        ValueError: a field with neither a ``description`` nor an ``Attributes:`` entry.
    """
    texts = attributes(cls)
    out = []
    for name, field in cls.model_fields.items():
        meaning = field.description or texts.get(name)
        if not meaning:
            raise ValueError(
                f"{cls.__module__}.{cls.__name__}.{name}: no description and no entry in the "
                "class docstring's Attributes section; document the field there"
            )
        kind = type_text(field.annotation)
        bounds = bounds_text(field)
        default = default_text(field)
        if kind.startswith("table of") and default == "`[]`":
            default = "`{}`"
        out.append((name, f"{kind}, {bounds}" if bounds else kind, default, meaning))
    return out


def _cell(text: str) -> str:
    return markdown(text).replace("|", "\\|")


def reference() -> str:
    """The Markdown tables of every table of an LLM model file."""
    out = []
    for table, cls in sections():
        out += [f"**`{table}`** (`{cls.__module__}.{cls.__name__}`)", "",
                "| key | type | default | meaning |", "|---|---|---|---|"]
        out += [f"| `{n}` | {_cell(t)} | {_cell(d)} | {_cell(m)} |" for n, t, d, m in rows(cls)]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace the marker on the workload reference page with the generated tables."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
