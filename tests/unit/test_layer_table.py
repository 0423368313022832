"""LayerTable (a workload's layers as columns) and the columnar ASTRA-sim 1.0 reader give the same
workload as the Layer objects and the line-by-line reader: same layers, same numpy table, same
errors."""

from __future__ import annotations

import numpy as np
import pytest

from hieropt.errors import InputError
from hieropt.io.astrasim1 import parse_workload
from hieropt.io.astrasim1_columns import TokenLines, layer_table
from hieropt.spec import Collective, Layer, LayerTable, Phase, Workload

AR = Collective.ALL_REDUCE
LINES = ("a\t-1\t10\tNONE\t0\t20\tALLREDUCE\t3e5\t30\tREDUCESCATTER\t7\t1\n"
         "b -1 1 ALLTOALL_EP 5 2 ALLGATHER 6 3 NONE 0 0\n")


def _layers() -> tuple[Layer, ...]:
    # any whitespace: the same layers
    return parse_workload(LINES.replace("\t", "  "), name="w").layers


def test_columnar_reader_equals_line_by_line(shared_data):
    for path in sorted((shared_data / "libra" / "workload").glob("*.txt")):
        text = path.read_text()
        fast = parse_workload(text, name=path.stem)
        lines = [(i + 1, ln.split()) for i, ln in enumerate(text.splitlines()) if ln.split()]
        body = lines if len(lines[0][1]) >= 12 else lines[2:]
        slow = tuple(parse_workload(" ".join(t) + "\n", name="x").layers[0] for _, t in body)
        assert isinstance(fast.layers, LayerTable)
        assert list(fast.layers) == list(slow)
        np.testing.assert_array_equal(
            fast.table.size_bytes, Workload(name="s", layers=slow).table.size_bytes
        )


def test_layer_table_round_trip_and_sequence():
    layers = tuple(_layers())
    table = LayerTable.from_layers(layers)
    assert len(table) == 2 and list(table) == list(layers) and table[-1] == layers[-1]
    assert table[0].input_grad == Phase(compute_ns=20.0, collective=AR, size_bytes=3e5)
    assert table[1].forward.scope == "EP"
    assert list(table[1:]) == [layers[1]]
    assert len(table * 3) == 6 and (table * 3)[4] == layers[0]
    assert list(table + layers) == list(layers) * 2
    np.testing.assert_array_equal(Workload(name="t", layers=table).table.size_bytes,
                                  Workload(name="l", layers=layers).table.size_bytes)


def test_workload_copy_with_new_layers_gets_a_new_table():
    """``model_copy(update={"layers": ...})`` is solved with its new layers (no cached table
    survives)."""
    w = Workload(name="w", layers=tuple(_layers()))
    assert w.table.size_bytes[0, 1] == 3e5
    bigger = w.layers[0].model_copy(
        update={"input_grad": Phase(compute_ns=20.0, collective=AR, size_bytes=9e5)}
    )
    w2 = w.model_copy(update={"layers": (bigger,) + tuple(w.layers[1:])})
    assert w2.table.size_bytes[0, 1] == 9e5 and w.table.size_bytes[0, 1] == 3e5


# 11 fields
@pytest.mark.parametrize("bad", ["a -1 10 NONE 0 20 ALLREDUCE 3e5 30 REDUCESCATTER 7\n",
                                 # negative size
                                 "a -1 10 NONE 0 20 ALLREDUCE -3 30 REDUCESCATTER 7 1\n",
                                 # unknown collective
                                 "a -1 10 NONE 0 20 ALLREDUCEX 3 30 REDUCESCATTER 7 1\n",
                                 # not finite
                                 "a -1 10 NONE 0 20 ALLREDUCE inf 30 REDUCESCATTER 7 1\n"])
def test_malformed_lines_fall_back_to_the_line_reader(bad):
    """The columnar reader declines; the line-by-line reader names line 2 and the field."""
    text = LINES.split("\n")[0] + "\n" + bad
    assert layer_table(TokenLines.of(text), False) is None
    with pytest.raises(InputError, match="line 2"):
        parse_workload(text, source="t.txt")


def test_token_lines_count_tokens_per_line():
    lines = TokenLines.of("a b c\n\n  d e\r\nf\n")
    assert [(n, t) for n, t in lines] == [(1, ["a", "b", "c"]), (3, ["d", "e"]), (4, ["f"])]
    assert TokenLines.of("caf\u00e9 1\n") is None  # not ASCII: the line-by-line reader handles it


def test_layer_table_rejects_bad_columns():
    with pytest.raises(ValueError, match="finite number >= 0"):
        LayerTable(["x"], [[0, -1, 0]], [[0, 0, 0]], [[0, 0, 0]])
    with pytest.raises(ValueError, match="NONE collective has no scope"):
        LayerTable(["x"], [[0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]], [[1, 0, 0]])
