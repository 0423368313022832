"""A number given as text to a numeric field: the fix states the plain number in the field's unit,
or none when it cannot be told (``hieropt.spec.base.text_for_number``)."""

from __future__ import annotations

import pytest

from hieropt.spec.base import text_for_number

HEAD = ("is text, not a number: a number takes no unit, the unit is implied by the field's name; "
        "fix: ")


@pytest.mark.parametrize(("name", "text", "message"), [
    # a quoted number: the same number without quotes (not the digits before its exponent)
    ("max_network_cost_usd", "1e7", "'1e7' is text, not a number; fix: write 1e7 without quotes"),
    ("tp", "8", "'8' is text, not a number; fix: write 8 without quotes"),
    # a multiplier: the number it stands for (not 10, a $10 budget)
    ("max_network_cost_usd", "10M", f"'10M' {HEAD}write 1e+07 (in the unit of "
                                    "'max_network_cost_usd')"),
    ("sequence_length", "8k", f"'8k' {HEAD}write 8000, or 8192 if 8Ki (x 1,024) is meant (in the "
                              "unit of 'sequence_length')"),
    # a time unit other than the field's: converted (1.3 s is 1.3e9 ns, not 1.3 ns)
    ("max_iteration_time_ns", "1.3s", f"'1.3s' {HEAD}write 1.3e+09 (in the unit of "
                                      "'max_iteration_time_ns')"),
    ("max_iteration_time_ns", "250 ms", f"'250 ms' {HEAD}write 2.5e+08 (in the unit of "
                                        "'max_iteration_time_ns')"),
    # the field's own unit, and GB for GiB: a vendor's "80GB" of HBM is 80 GiB (the catalog's
    # capacities are binary), 80e9 bytes are 74.5058 GiB; both are offered, the vendor's first
    ("bw_gbps", "500 GB/s", f"'500 GB/s' {HEAD}write 500 (in the unit of 'bw_gbps')"),
    ("hbm_gib", "80GB", f"'80GB' {HEAD}write 80 if 80GB is a vendor's memory capacity (binary: "
                        "an 80 GB H100 holds 80 GiB), or 74.5058 for 80e9 bytes (in the unit of "
                        "'hbm_gib')"),
    # a reserve is no vendor's capacity: GB are converted to GiB
    ("hbm_reserve_gib", "4GB", f"'4GB' {HEAD}write 3.72529 (in the unit of 'hbm_reserve_gib')"),
    # a unit that cannot be converted: no number offered
    ("hbm_gib", "80 bananas", f"'80 bananas' {HEAD}write the number in the unit of 'hbm_gib', "
                              "without quotes"),
    ("npus", "abc", "'abc' is text, not a number; fix: write the number without quotes"),
])
def test_the_fix_gives_the_number_in_the_fields_unit(name, text, message):
    assert text_for_number(name, text) == f"{name}: {message}"


def test_a_quoted_number_in_a_file_field_gets_the_same_fix():
    """``tokens = "15e12"`` in an instance file was "is not a positive number"; ``"15T"`` too."""
    from hieropt.errors import InputError
    from hieropt.io.common import positive_number

    with pytest.raises(InputError, match=r"tokens: '15e12' is text, not a number; fix: write "
                                         r"15e12 without quotes"):
        positive_number("15e12", "run.toml", "tokens", "give the run's token budget")
    with pytest.raises(InputError, match=r"fix: write 1.5e\+13 \(in the unit of 'tokens'\)"):
        positive_number("15T", "run.toml", "tokens", "give the run's token budget")
    assert positive_number(15e12, "run.toml", "tokens", "-") == 15e12



def test_a_model_size_beyond_any_model_is_refused_not_a_traceback():
    """A vocabulary of 311 digits was an OverflowError traceback in ``workload plan`` (an integer
    division into a float); widths, heads, vocabulary and sequence length stop at 2^40."""
    from pydantic import ValidationError

    from hieropt.workloads.llm import Architecture
    from hieropt.workloads.llm.params import MAX_SIZE

    fields = dict(name="m", layers=2, hidden_size=64, heads=4, ffn_size=256, sequence_length=32)
    with pytest.raises(ValidationError, match="vocab_size\n  Input should be less than or equal "
                                              "to 1099511627776"):
        Architecture(**fields, vocab_size=10**310)
    assert Architecture(**fields, vocab_size=MAX_SIZE).vocab_size == 2**40
