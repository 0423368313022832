"""Tests of the safe linear-constraint parser
:func:`hieropt.spec.constraint_text.parse_constraint`."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieropt.errors import InputError
from hieropt.spec import LinearConstraint
from hieropt.spec.constraint_text import parse_constraint

# ----------------------------------------------------------------------------------- exact examples


@pytest.mark.parametrize(
    ("text", "coefficients", "sense", "rhs"),
    [
        ("sum(bw) == 500", (1, 1, 1, 1), "==", 500),
        ("bw[0] >= bw[1]", (1, -1, 0, 0), ">=", 0),
        ("bw[2] + bw[3] == 200", (0, 0, 1, 1), "==", 200),
        ("bw[0] == 500", (1, 0, 0, 0), "==", 500),
        ("2*bw[0] - 0.5*bw[1] <= 1e3", (2, -0.5, 0, 0), "<=", 1000),
        ("sum(bw[1:]) <= 3 * bw[0]", (-3, 1, 1, 1), "<=", 0),
        ("(bw[0] + bw[1]) / 2 >= 10", (0.5, 0.5, 0, 0), ">=", 10),
        # more forms of the grammar
        ("bw[0]*2 >= 2*(bw[1]+bw[2])", (2, -2, -2, 0), ">=", 0),
        ("sum(bw[:2]) - sum(bw[2:4]) <= -7.5", (1, 1, -1, -1), "<=", -7.5),
        ("sum(bw[:]) + 10 >= 3 + 2.5E2", (1, 1, 1, 1), ">=", 243),
        # the end is the dimension count at most (not clamped)
        ("sum(bw[1:4]) <= 1", (0, 1, 1, 1), "<=", 1),
        ("-bw[0] * 2 + -(-bw[3]) / 4 <= .5", (-2, 0, 0, 0.25), "<=", 0.5),
        ("bw[0] - bw[1] - bw[2] == 0", (1, -1, -1, 0), "==", 0),  # left associative
        ("1 + 2 * bw[0] <= 5", (2, 0, 0, 0), "<=", 4),  # * binds tighter than +
        ("bw[0] / 2 / 4 <= 1", (0.125, 0, 0, 0), "<=", 1),
        ("12 / 4 * bw[1] >= 3", (0, 3, 0, 0), ">=", 3),
        ("  bw [ 3 ]>=sum ( bw ) ", (-1, -1, -1, 0), ">=", 0),
        ("+bw[0] <= 2e-3", (1, 0, 0, 0), "<=", 0.002),
    ],
)
def test_examples(text: str, coefficients: tuple[float, ...], sense: str, rhs: float) -> None:
    c = parse_constraint(text, 4)
    assert isinstance(c, LinearConstraint)
    assert c.coefficients == tuple(float(x) for x in coefficients)
    assert c.sense == sense
    assert c.rhs == rhs
    assert c.text == text.strip()


def test_no_negative_zero() -> None:
    c = parse_constraint("-bw[0] >= 0", 2)
    assert c.rhs == 0.0 and str(c.rhs) == "0.0"
    assert [str(x) for x in c.coefficients] == ["-1.0", "0.0"]


def test_single_dimension_and_source() -> None:
    assert parse_constraint("bw[0] <= 4", 1).coefficients == (1.0,)
    with pytest.raises(InputError) as ei:
        parse_constraint("bw[1] <= 4", 1, source="instance.yaml")
    e = ei.value
    assert e.source == "instance.yaml"
    assert e.field == "constraint 'bw[1] <= 4'"
    assert "1 dimension" in e.problem and "dimensions" not in e.problem
    assert e.fix == "use bw[0]"


@pytest.mark.parametrize("n_dims", [0, -1, True, 2.0])
def test_bad_n_dims_is_a_programming_error(n_dims: object) -> None:
    with pytest.raises(ValueError, match="n_dims"):
        parse_constraint("bw[0] <= 1", n_dims)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------- errors


def _error(text: str, n_dims: int = 4) -> InputError:
    with pytest.raises(InputError) as ei:
        parse_constraint(text, n_dims)
    e = ei.value
    assert e.source == "--constraint"
    shown = "".join(" " if c.isspace() else c for c in text)  # one line: whitespace shown as spaces
    assert e.field == f"constraint '{shown}'"
    assert e.fix
    assert "\n" not in str(e)
    return e


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty(text: str) -> None:
    e = _error(text)
    assert e.problem == "empty constraint"


@pytest.mark.parametrize("text", ["bandwidth[0] <= 3", "bw[0] <= x", "max(bw) <= 4", "BW[0] <= 1"])
def test_unknown_name(text: str) -> None:
    e = _error(text)
    assert e.problem.startswith("unknown name '")
    assert "bw[i]" in e.fix


def test_unknown_name_column() -> None:
    e = _error("bw[0] <= bandwidth[1]")
    assert e.problem == "unknown name 'bandwidth' at column 10"


def test_index_out_of_range() -> None:
    e = _error("bw[0] + bw[4] <= 10")
    assert "bw[4]" in e.problem and "out of range" in e.problem
    assert "the network has 4 dimensions" in e.problem
    assert e.fix == "use bw[0]..bw[3]"


@pytest.mark.parametrize("text", ["bw[-1] <= 3", "sum(bw[-2:]) <= 3", "sum(bw[:-1]) <= 3"])
def test_negative_index(text: str) -> None:
    e = _error(text)
    assert "negative" in e.problem
    assert "bw[0]..bw[3]" in e.fix


@pytest.mark.parametrize("text", ["bw[1.5] <= 3", "bw[1e0] <= 3", "bw[i] <= 3", "bw[] <= 3"])
def test_non_integer_index(text: str) -> None:
    e = _error(text)
    assert "must be a non-negative integer" in e.problem


@pytest.mark.parametrize("text", ["sum(bw[4:]) <= 3", "sum(bw[2:2]) <= 3", "sum(bw[3:1]) <= 3"])
def test_empty_slice(text: str) -> None:
    e = _error(text)
    assert "selects no dimension" in e.problem


@pytest.mark.parametrize("text", ["sum(bw[1:5]) <= 300", "sum(bw[0:100]) <= 1", "sum(bw[:5]) <= 1"])
def test_slice_past_the_last_dimension(text: str) -> None:
    """Not clamped like a Python slice (4 dimensions: bw[1:5] would silently mean bw[1:4])."""
    e = _error(text)
    assert "reaches past the last dimension" in e.problem
    assert ":4]" in e.fix or "bw[" in e.fix


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("sum(bw[2]) <= 1", "single dimension"),
        ("sum(bw[::2]) <= 1", "slice steps"),
        ("sum(bw[0:2:1]) <= 1", "slice steps"),
        ("bw[0:2] <= 1", "only allowed inside sum"),
        ("sum(bw bw) <= 1", "expected ')'"),
        ("sum(bw, bw) <= 1", "unexpected character ','"),
        ("sum(2*bw) <= 1", "takes bw"),
        ("sum bw <= 1", "expected '('"),
        ("bw <= 1", "bare 'bw'"),
    ],
)
def test_sum_and_bw_forms(text: str, needle: str) -> None:
    assert needle in _error(text).problem


@pytest.mark.parametrize("text", ["bw[0]", "sum(bw) + 3", "bw[0] 500"])
def test_missing_sense(text: str) -> None:
    e = _error(text)
    assert "comparison operator" in e.problem or "missing operator" in e.problem


def test_missing_sense_message() -> None:
    e = _error("sum(bw) - 500")
    assert e.problem.startswith("missing comparison operator")
    assert "<=" in e.problem and ">=" in e.problem and "==" in e.problem


@pytest.mark.parametrize("text", ["0 <= bw[0] <= 5", "bw[0] == bw[1] == 3", "bw[0] >= 1 <= 2"])
def test_extra_sense(text: str) -> None:
    e = _error(text)
    assert e.problem.startswith("more than one comparison operator")
    assert "split" in e.fix


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        ("bw[0] = 500", "use =="),
        ("bw[0] < 500", "use <="),
        ("bw[0] > 500", "use >="),
        ("bw[0] =< 500", "use <="),
        ("bw[0] => 500", "use >="),
        ("bw[0] != 500", "not equal"),
        ("bw[0] ≤ 500", "use <="),
    ],
)
def test_bad_sense(text: str, fix: str) -> None:
    e = _error(text)
    assert "column 7" in e.problem
    assert fix in e.fix


@pytest.mark.parametrize(
    ("text", "typed", "fix"),
    [
        # one operator typed with a key too many: the operator nearest to it, not '==' for the '='
        ("bw[0] >== 100", ">==", "use >="),
        ("bw[0] <== 100", "<==", "use <="),
        ("bw[0] =>= 100", "=>=", "use >="),
        ("bw[0] === 100", "===", "use == for equality"),
        ("bw[0] !== 100", "!==", "'not equal' is not a linear constraint; use <=, >= or =="),
        ("bw[0] <=> 100", "<=>", "use one of <=, >=, =="),
    ],
)
def test_an_operator_typed_with_a_key_too_many_is_named_whole(text: str, typed: str,
                                                               fix: str) -> None:
    e = _error(text)
    assert e.problem == f"syntax error at column 7: '{typed}' is not a comparison operator"
    assert e.fix == fix


@pytest.mark.parametrize(
    ("text", "coefficients", "rhs"),
    [
        ("bw[top] <= 100", (0, 0, 1), 100),
        ("sum(bw[:top]) >= 300", (1, 1, 0), 300),
        ("sum(bw[top:]) + bw[0] <= 7", (1, 0, 1), 7),
    ],
)
def test_top_is_the_last_dimension_in_a_space_s_text(text, coefficients, rhs) -> None:
    c = parse_constraint(text, 3, top=True)
    assert c.coefficients == tuple(float(x) for x in coefficients) and c.rhs == rhs
    # elsewhere 'top' is no index
    assert "must be a non-negative integer, found 'top'" in _error(text, 3).problem


def test_a_space_s_text_is_parsed_as_written_so_its_columns_are_the_text_s() -> None:
    # 'top' was replaced by the last index before parsing: the message quoted 'bw[1] <= 200 Gb/s',
    # text never written, at column 10 of that text
    with pytest.raises(InputError) as ei:
        parse_constraint("bw[top] <= 200 Gb/s", 2, "space.toml", top=True)
    assert ei.value.field == "constraint 'bw[top] <= 200 Gb/s'"
    assert ei.value.problem.startswith("syntax error at column 12: '200' has the unit 'Gb/s'")
    assert ei.value.fix == "write the number alone: 25 (200 Gb/s = 25 GB/s per NPU)"


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("bw[0] <= (1", 12),
        ("bw[0] <= 1)", 11),
        ("(bw[0] <= 1", 8),
        ("bw[0] <= ", 10),
        ("<= 5", 1),
        ("bw[0] + * 2 <= 1", 9),
        ("bw[0] <= 1 @ 2", 12),
        ("bw[0 <= 1", 6),
        ("bw[0] <= 2bw[1]", 10),
        ("bw[0] <= 1.2.3", 10),
        ("bw[0] <= 1e", 10),
    ],
)
def test_syntax_error_column(text: str, column: int) -> None:
    e = _error(text)
    assert e.problem.startswith(f"syntax error at column {column}: ")


@pytest.mark.parametrize(
    "text", ["2 bw[0] <= 1", "bw[0] (bw[1]) <= 1", "2 (bw[0]) <= 1", "bw[0] bw[1] <= 1"]
)
def test_juxtaposition_is_an_error(text: str) -> None:
    e = _error(text)
    assert "missing operator" in e.problem
    assert "*" in e.fix


@pytest.mark.parametrize(
    "text",
    [
        "bw[0] * bw[1] <= 3",
        "2 * bw[0] * (bw[1] + 1) <= 3",
        "1 / bw[0] >= 2",
        "bw[0] / bw[1] >= 1",
        # structurally non-linear, even though the first factor is 0
        "(bw[0] - bw[0]) * bw[1] <= 1",
        "sum(bw) * sum(bw[1:]) <= 1",
        "bw[0] ** 2 <= 1",
    ],
)
def test_not_linear(text: str) -> None:
    e = _error(text)
    assert e.problem.startswith("not linear: ")


def test_not_linear_quotes_the_factors() -> None:
    e = _error("3*bw[0] + bw[1]*bw[2] <= 1")
    assert "'bw[1]' * 'bw[2]'" in e.problem


@pytest.mark.parametrize("text", ["bw[0] / 0 <= 1", "bw[0] / (2 - 2) <= 1", "bw[0] / 0.0e5 <= 1"])
def test_division_by_zero(text: str) -> None:
    e = _error(text)
    assert e.problem.startswith("division by zero")
    assert "non-zero" in e.fix


@pytest.mark.parametrize(
    "text",
    [
        "3 <= 5",
        "0 == 0",
        "(1 + 2) * 3 >= 4",
        "bw[0] - bw[0] <= 5",
        "bw[1] >= bw[1]",
        "0 * bw[0] <= 1",
    ],
)
def test_no_bandwidth_term(text: str) -> None:
    e = _error(text)
    assert e.problem.startswith("no bandwidth term")


@pytest.mark.parametrize(
    "text", ["1e400 * bw[0] <= 1", "1e300 * 1e300 * bw[0] <= 1", "bw[0] <= 1e200 * 1e200"]
)
def test_overflow(text: str) -> None:
    assert "too large" in _error(text).problem


def test_multiline_text_keeps_message_on_one_line_and_columns() -> None:
    e = _error("bw[0]\n\t<= bw[9]")
    assert e.field == "constraint 'bw[0]  <= bw[9]'"
    assert "bw[9] at column 11" in e.problem
    assert parse_constraint("bw[0]\n<=\r\n1", 1).text == "bw[0]\n<=\r\n1"


def test_deep_nesting_is_an_input_error() -> None:
    text = "(" * 5000 + "bw[0]" + ")" * 5000 + " <= 1"
    assert "nested" in _error(text).problem
    assert "nested" in _error("-" * 5000 + "bw[0] <= 1").problem
    # moderate nesting is fine
    assert parse_constraint("(" * 40 + "bw[0]" + ")" * 40 + " <= 1", 1).coefficients == (1.0,)


def test_infeasible_is_not_a_parse_error() -> None:
    c = parse_constraint("bw[0] - bw[0] + bw[1] <= -5", 2)
    assert c.coefficients == (0.0, 1.0) and c.rhs == -5.0


# ---------------------------------------------------------------------- property-based: random text

# Numbers are dyadic (k/4) and divisors powers of two, so float arithmetic in the parser is exact
# and the Fraction reference can be compared tightly.
_DIVISORS = [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4), Fraction(8)]
_SP = st.sampled_from(["", " ", "  "])


@st.composite
def _number(draw: st.DrawFn) -> tuple[str, Fraction]:
    value = Fraction(draw(st.integers(0, 40)), 4)
    f = float(value)
    forms = [repr(f), f"{f:e}", f"{f:E}", f"{f * 100:g}e-2"]
    if value.denominator == 1:
        forms.append(str(value.numerator))
    if repr(f).startswith("0."):
        forms.append(repr(f)[1:])  # ".25"
    return draw(st.sampled_from(forms)), value


@st.composite
def _const_expr(draw: st.DrawFn, depth: int) -> tuple[str, int, Fraction]:
    """(text, precedence, value): 1 = sum, 2 = product, 3 = unary, 4 = atom."""
    if depth == 0 or draw(st.booleans()):
        text, value = draw(_number())
        return text, 4, value
    kind = draw(st.sampled_from(["+", "-", "*", "neg", "paren"]))
    a = draw(_const_expr(depth - 1))
    if kind == "neg":
        text, prec, value = _unary(draw, a)
        return text, prec, value
    if kind == "paren":
        return f"({a[0]})", 4, a[2]
    b = draw(_const_expr(depth - 1))
    text, prec = _binary(draw, a, kind, b)
    value = a[2] + b[2] if kind == "+" else a[2] - b[2] if kind == "-" else a[2] * b[2]
    return text, prec, value


def _wrap(text: str, prec: int, needed: int) -> str:
    return f"({text})" if prec < needed else text


def _binary(draw: st.DrawFn, a: tuple, op: str, b: tuple) -> tuple[str, int]:
    """``a op b`` with the parentheses the precedences need; a and b start with (text, precedence,
    ...)."""
    prec = 1 if op in "+-" else 2
    sp = draw(_SP)
    # left associative: the right operand of the same precedence needs parentheses
    return f"{_wrap(a[0], a[1], prec)}{sp}{op}{draw(_SP)}{_wrap(b[0], b[1], prec + 1)}", prec


def _unary(draw: st.DrawFn, a: tuple) -> tuple:
    """``-a`` or ``+a``: (text, 3, sign * a[2], [sign * coefficients] if a has them)."""
    sign = draw(st.sampled_from(["-", "+"]))
    k = -1 if sign == "-" else 1
    text = f"{sign}{draw(_SP)}{_wrap(a[0], a[1], 3)}"
    return (text, 3, k * a[2]) + ((([k * c for c in a[3]]),) if len(a) > 3 else ())


@st.composite
def _lin_expr(draw: st.DrawFn, n: int, depth: int) -> tuple[str, int, Fraction, list[Fraction]]:
    """(text, precedence, constant, coefficients) of a random linear expression in bw[0..n-1]."""
    zero = [Fraction(0)] * n
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.sampled_from(["bw", "sum", "slice", "num"]))
        if leaf == "num":
            text, value = draw(_number())
            return text, 4, value, zero
        if leaf == "bw":
            i = draw(st.integers(0, n - 1))
            return (
                f"bw{draw(_SP)}[{draw(_SP)}{i}{draw(_SP)}]",
                4,
                Fraction(0),
                [Fraction(d == i) for d in range(n)],
            )
        if leaf == "sum":
            return f"sum({draw(_SP)}bw{draw(_SP)})", 4, Fraction(0), [Fraction(1)] * n
        lo = draw(st.integers(0, n - 1))
        hi = draw(st.integers(lo + 1, n))  # past the end is an error (tested separately)
        lo_text = draw(st.sampled_from([str(lo), ""] if lo == 0 else [str(lo)]))
        hi_text = draw(st.sampled_from([str(hi), ""] if hi >= n else [str(hi)]))
        coeffs = [Fraction(lo <= d < hi) for d in range(n)]
        return f"sum(bw[{lo_text}{draw(_SP)}:{draw(_SP)}{hi_text}])", 4, Fraction(0), coeffs
    kind = draw(st.sampled_from(["+", "-", "neg", "paren", "c*", "*c", "/"]))
    a = draw(_lin_expr(n, depth - 1))
    if kind in ("+", "-"):
        b = draw(_lin_expr(n, depth - 1))
        text, prec = _binary(draw, a, kind, b)
        k = 1 if kind == "+" else -1
        return text, prec, a[2] + k * b[2], [x + k * y for x, y in zip(a[3], b[3], strict=True)]
    if kind == "neg":
        return _unary(draw, a)
    if kind == "paren":
        return f"({a[0]})", 4, a[2], a[3]
    if kind == "/":
        div = draw(st.sampled_from(_DIVISORS))
        div_text = draw(st.sampled_from([repr(float(div)), f"{float(div):e}", f"({float(div)!r})"]))
        text, prec = _binary(draw, a, "/", (div_text, 4))
        return text, prec, a[2] / div, [x / div for x in a[3]]
    c = draw(_const_expr(2))
    text, prec = _binary(draw, c, "*", a) if kind == "c*" else _binary(draw, a, "*", c)
    return text, prec, a[2] * c[2], [x * c[2] for x in a[3]]


@st.composite
def _constraint(draw: st.DrawFn) -> tuple[str, int, list[Fraction], str, Fraction]:
    n = draw(st.integers(1, 6))
    lhs = draw(_lin_expr(n, draw(st.integers(0, 4))))
    rhs = draw(_lin_expr(n, draw(st.integers(0, 3))))
    sense = draw(st.sampled_from(["<=", ">=", "=="]))
    text = f"{draw(_SP)}{lhs[0]}{draw(_SP)}{sense}{draw(_SP)}{rhs[0]}{draw(_SP)}"
    coeffs = [x - y for x, y in zip(lhs[3], rhs[3], strict=True)]
    return text, n, coeffs, sense, rhs[2] - lhs[2]


@pytest.mark.heavy
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_constraint())
def test_random_linear_expressions(case: tuple[str, int, list[Fraction], str, Fraction]) -> None:
    text, n, coeffs, sense, rhs = case
    if not any(coeffs):
        with pytest.raises(InputError, match="no bandwidth term"):
            parse_constraint(text, n)
        return
    c = parse_constraint(text, n)
    assert len(c.coefficients) == n
    assert c.coefficients == pytest.approx([float(x) for x in coeffs], rel=1e-12)
    assert c.rhs == pytest.approx(float(rhs), rel=1e-12)
    assert c.sense == sense
    assert c.text == text.strip()


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="bwsum[]():0123456789.eE+-*/<>=! xq", max_size=40), st.integers(1, 5))
def test_garbage_raises_only_input_error(text: str, n: int) -> None:
    try:
        c = parse_constraint(text, n)
    except InputError as e:
        assert e.problem and e.fix
        assert len(str(e).splitlines()) == 1
    else:
        assert len(c.coefficients) == n and any(c.coefficients)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_arbitrary_unicode_raises_only_input_error(text: str) -> None:
    try:
        parse_constraint(text, 3)
    except InputError as e:
        assert len(str(e).splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "unit", "write"),
    [
        ("sum(bw) == 500 GB/s", "GB/s", "500 (500 GB/s per NPU)"),
        ("sum(bw) == 4000Gb/s", "Gb/s", "500 (4000 Gb/s = 500 GB/s per NPU)"),
        ("bw[0] <= 25Gbps", "Gbps", "3.125 (25 Gbps = 3.125 GB/s per NPU)"),
        ("sum(bw) == 500e9 bytes/s", "bytes/s", "500 (500e9 bytes/s = 500 GB/s per NPU)"),
        # (GiB = 2^30 bytes: 80 x 1.073741824)
        ("sum(bw) <= 80 GiB/s", "GiB/s", "85.89934592 (80 GiB/s = 85.89934592 GB/s per NPU)"),
    ],
)
def test_a_number_with_a_unit_is_told_the_constraints_unit(text: str, unit: str, write: str):
    e = _error(text)
    assert f"has the unit '{unit}': constraints take plain numbers, in GB/s per NPU" in e.problem
    assert "Gb/s / 8 = GB/s" in e.problem
    assert e.fix == f"write the number alone: {write}"


def test_a_factor_next_to_bw_is_not_a_unit() -> None:
    assert "missing operator" in _error("2 bw[0] <= 1").problem
    assert "malformed number '5x'" in _error("sum(bw) == 5x").problem
