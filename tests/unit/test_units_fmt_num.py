"""fmt_num: a value that rounds to zero at the printed precision prints as 0, never "-0" (compare's
"final gap to the exact optimum -0.000%", codesign's bubble "-0.0")."""

from __future__ import annotations

import pytest

from hieropt.units import fmt_num


@pytest.mark.parametrize(
    ("value", "spec", "text"),
    [
        (-1e-9, ".3%", "0.000%"),
        (-0.04, ",.1f", "0.0"),
        (-0.0, ",.4f", "0.0000"),
        (-0.06, ",.1f", "-0.1"),
        (-1234.5, ",.1f", "-1,234.5"),
        (-1e-20, ".1e", "-1.0e-20"),
        (-0.0, ".1e", "0.0e+00"),
        (float("-inf"), "g", "-inf"),
        (2.5, ".2f", "2.50"),
    ],
)
def test_fmt_num(value: float, spec: str, text: str) -> None:
    assert fmt_num(value, spec) == text
