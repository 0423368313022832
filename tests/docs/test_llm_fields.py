"""docs/reference/workloads.md names every registered workload generator, and its LLM model file
tables (generated at build time by docs/hooks/llm_fields.py from the pydantic models) hold every
field the reader takes, each with its meaning; a field without one stops the build."""

from __future__ import annotations

import importlib.util
import re

import pytest
from pydantic import BaseModel

from hieropt.io.workload_file import GENERATOR_NAMES
from tests.cases import REPO

PAGE = REPO / "docs" / "reference" / "workloads.md"
HOOK = REPO / "docs" / "hooks" / "llm_fields.py"


def hook():
    spec = importlib.util.spec_from_file_location("llm_fields", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_names_every_generator():
    text = " ".join(PAGE.read_text().split())
    m = re.search(r"registered in `hieropt\.io\.instance\.GENERATORS`: ((?:`\w+`(?:, )?)+);", text)
    assert m, "the generators sentence is gone"
    assert tuple(re.findall(r"`(\w+)`", m.group(1))) == GENERATOR_NAMES


def test_every_field_of_an_llm_model_file_is_documented():
    fields = hook()
    assert fields.MARKER in PAGE.read_text()
    assert "docs/hooks/llm_fields.py" in (REPO / "mkdocs.yml").read_text()
    text = fields.reference()
    tables = [t for t, _ in fields.sections()]
    assert tables == ["[params]", "[params.model]", "[params.model.moe]", "[params.plan]",
                      "[params.npu]", "[params.precision]"]
    for table, cls in fields.sections():
        block = text.split(f"**`{table}`**", 1)[1].split("**`[", 1)[0]
        keys = re.findall(r"^\| `(\w+)` \| [^|]+ \| [^|]+ \| (.+) \|$", block, re.M)
        assert [k for k, _ in keys] == list(cls.model_fields), table
        assert all(len(meaning) > 3 for _, meaning in keys), table


def test_the_tables_give_types_bounds_defaults_and_meanings():
    text = hook().reference()
    for row in (
        "| `kv_heads` | int or none, ≥ 1, ≤ 2^40 | none | key/value heads g for grouped-query "
        "attention (default `heads`: multi-head attention; 1: multi-query attention). |",
        "| `tied_embeddings` | bool | `true` | the output layer reuses the input embedding matrix "
        "(GPT-3) or has its own (Llama). |",
        "| `schedule` | `\"1f1b\"` / `\"interleaved\"` | `\"1f1b\"` |",
        "| `top_k` | int, ≥ 1 | required | experts each token is routed to k (1 <= k <= E). |",
        "| `gradient_bytes` | int or none, ≥ 1 | the number format's: `4` (fp32 reduce) for bf16, "
        "fp8 and tf32, `2` for fp16 | weight gradients, as kept and reduced over data "
        "parallelism; None (the default): the NPU's number format's (`GRADIENT_BYTES`: 4, an FP32 "
        "reduction, for bf16, fp8 and tf32; 2 for fp16), resolved by `LLMParams.gradient_bytes`. "
        "A value given wins. |",
        # one docstring entry for five fields, each with the description of its Field
        "| `kernel_overhead_us` | float or none, ≥ 0, ≤ 1000 | none | fixed time of every kernel "
        "launched",
        "| `stage_layers` | list of int or none | none |",
    ):
        assert row in text, row
    assert re.search(r"\| `collective_algorithms` \| table of `\"tp\"` / .* \| `\{\}` \|", text)


def test_a_field_without_a_meaning_stops_the_build():
    class Toy(BaseModel):
        """A model.

        Attributes:
            a, b: documented together.
        """

        a: int = 1
        b: float = 2.0
        c: bool = False

    fields = hook()
    assert fields.attributes(Toy) == {"a": "documented together.", "b": "documented together."}
    with pytest.raises(ValueError, match=r"Toy\.c: no description and no entry"):
        fields.rows(Toy)
