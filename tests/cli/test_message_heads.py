"""Error lines name a field once and write a bound as a person would: a model file's error quoted
by a validation run's line (``params: plan.global_batch_size``, ``params.plan: tp``) is not
prefixed with its field a second time, and pydantic's ``greater than or equal to 0.000000000001``
reads ``1e-12``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.common import read_toml, readable_bound
from hieropt.io.runs import row_params
from tests.cases import REPO
from tests.cli.util import error_line, run

MODEL = REPO / "models" / "llama3-405b.toml"
WHERE = "runs.csv: line 3"


def _message(data: dict, overrides: tuple[str, ...] = ()) -> str:
    with pytest.raises(InputError) as e:
        row_params(data, MODEL, overrides, WHERE)
    return str(e.value)


def test_a_model_file_error_quoted_by_a_run_names_its_field_once():
    data = read_toml(MODEL, "model")
    data["params"]["plan"]["global_batch_size"] = 1000
    assert _message(data) == (
        f"{WHERE}: params: plan.global_batch_size: 1000 sequences are not a multiple of dp x "
        f"micro_batch_size = 128 x 1 = 128 (model {MODEL}); fix: use a micro_batch_size or dp "
        "dividing the global batch"
    )


def test_a_whole_number_check_quoted_by_a_run_names_its_field_once():
    msg = _message(read_toml(MODEL, "model"), ("tp=8.0",))
    assert "params.plan: params.plan" not in msg
    assert msg.startswith(f"{WHERE}: params.plan: tp: 8.0 is not a whole number")


def test_the_error_drops_a_repeated_head():
    assert InputError("f.toml", "a.b", "a.b: bad value", "fix it").one_line() == (
        "f.toml: a.b: bad value; fix: fix it"
    )
    # (another field's name at the head stays)
    assert InputError("f.toml", "a", "a.b: bad").one_line() == "f.toml: a: a.b: bad"


def test_a_bound_reads_as_written(tmp_path: Path):
    text = (REPO / "instances" / "gpt3-4d.toml").read_text()
    text = text.replace('"../models/', f'"{REPO}/models/').replace(
        "link_usd_per_gbps = 2.0", "link_usd_per_gbps = 1e-13", 1
    )
    path = tmp_path / "inst.toml"
    path.write_text(text)
    line = error_line(run("solve", path))
    assert line.endswith(
        "link_usd_per_gbps: 1e-13 is below 1e-12; fix: use a number >= 1e-12"
    )


@pytest.mark.parametrize(
    ("msg", "limit", "out"),
    [
        ("Input should be greater than or equal to 0.000000000001", 1e-12,
         "Input should be greater than or equal to 1e-12"),
        ("Input should be less than or equal to 1000000000000.0", 1e12,
         "Input should be less than or equal to 1e+12"),
        ("Input should be greater than or equal to 1", 1,
         "Input should be greater than or equal to 1"),
        ("Input should be a valid number", 1e-12, "Input should be a valid number"),
    ],
)
def test_readable_bound(msg, limit, out):
    assert readable_bound(msg, limit) == out
