"""ASTRA-sim 1.0 workload text, every dialect: the shared reference files (ASTRA-sim 1.0's own
inputs and SimAI's example), small self-written files of each header policy, 13-token lines, scoped
names, CRLF, scientific numbers, trailing tabs; the errors (count mismatch, unknown names, malformed
headers); and the writer's round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from hieropt.errors import InputError
from hieropt.io.astrasim1 import (
    format_workload,
    parse_collective,
    parse_header,
    parse_workload,
    read_workload,
    write_workload,
)
from hieropt.spec import POLICIES, Collective, Layer, Phase, Workload, WorkloadHeader
from hieropt.workloads.transformer import TransformerParams, generate

L12 = "L{i}\t-1\t1000\tALLREDUCE\t1000000\t1000\tNONE\t0\t1000\tALLREDUCE\t2000000\t10"


def layers(n: int, extra: str = "") -> str:
    return "\n".join(L12.format(i=i) + extra for i in range(n)) + "\n"


def err(text: str) -> InputError:
    with pytest.raises(InputError) as e:
        parse_workload(text, source="w.txt")
    return e.value


# ------------------------------------------------------------------------------------- shared files
SHARED = {
    # file: (layers, header line as hieropt renders it)
    "DLRM_HybridParallel.txt": (8, "HYBRID_DLRM 4"),
    "MLP_HybridParallel_Data_Model.txt": (6, "HYBRID_DATA_MODEL"),
    "MLP_HybridParallel_Model_Data.txt": (6, "HYBRID_MODEL_DATA"),
    "MLP_ModelParallel.txt": (6, "MODEL"),
    "Resnet50_DataParallel.txt": (54, "DATA"),
    "Transformer_HybridParallel.txt": (57, "HYBRID_TRANSFORMER model_parallel_NPU_group: 4"),
    "Transformer_HybridParallel_Fwd_In_Bckwd.txt": (
        21,
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 "
        "checkpoints: 2 2 11 checkpoint_initiates: 2 19 10",
    ),
    "microAllReduce.txt": (1, "MICRO"),
    "microAllToAll.txt": (1, "MICRO"),
    "sample_per_layer_parallel_HybridCustomized.txt": (6, "HYBRID_CUSTOMIZED"),
}


def test_every_shared_astrasim1_file_parses(shared_data: Path) -> None:
    files = sorted((shared_data / "astrasim1").glob("*.txt"))
    assert {f.name for f in files} == set(SHARED), "a new reference file: add it to SHARED"
    for f in files:
        w = read_workload(f)
        n, line = SHARED[f.name]
        assert len(w.layers) == n, f.name
        assert w.header is not None and w.header.declared_layers == n
        assert w.header.line == line
        assert w.policy == line  # the backwards-compatible property


def test_shared_exact_values(shared_data: Path) -> None:
    d = shared_data / "astrasim1"
    # CRLF, trailing tabs, bare last-bottom-layer number
    dlrm = read_workload(d / "DLRM_HybridParallel.txt")
    assert dlrm.header.last_bottom_layer == 4
    emb = dlrm.layers[0]
    assert (emb.forward.collective, emb.forward.size_bytes) == (Collective.ALL_TO_ALL, 98304)
    assert (emb.input_grad.collective, emb.input_grad.size_bytes) == (Collective.ALL_TO_ALL, 98304)
    assert dlrm.layers[5].weight_grad.size_bytes == 1064960 and dlrm.layers[5].update_ns == 1065

    tr = read_workload(d / "Transformer_HybridParallel.txt")
    assert tr.header.model_parallel_npu_group == 4
    assert (
        tr.layers[0].forward.collective is Collective.ALL_GATHER
        and tr.layers[0].forward.size_bytes == 8388608
    )
    q1 = tr.layers[1]
    assert (
        q1.name,
        q1.forward.compute_ns,
        q1.input_grad.size_bytes,
        q1.weight_grad.size_bytes,
    ) == ("Q1", 3145728, 8388608, 33554432)

    # runs of tabs, trailing space
    fib = read_workload(d / "Transformer_HybridParallel_Fwd_In_Bckwd.txt")
    assert fib.header.checkpoints == (2, 11) and fib.header.checkpoint_initiates == (19, 10)
    assert fib.layers[-1].name == "projection" and fib.layers[-1].forward.size_bytes == 49152

    # 13 tokens per layer line
    hc = read_workload(d / "sample_per_layer_parallel_HybridCustomized.txt")
    assert [layer.policy for layer in hc.layers] == [
        "HYBRID_DATA_MODEL",
        "HYBRID_MODEL_DATA",
        "DATA",
        "MODEL",
        "MODEL",
        "HYBRID_MODEL_DATA",
    ]
    assert hc.layers[1].input_grad.collective is Collective.REDUCE_SCATTER

    rn = read_workload(d / "Resnet50_DataParallel.txt")
    assert rn.layers[0].weight_grad.size_bytes == 37632 == 7 * 7 * 3 * 64 * 4
    assert rn.layers[-1].name == "fc1000" and rn.layers[-1].weight_grad.size_bytes == 8192000

    a2a = read_workload(d / "microAllToAll.txt")
    assert a2a.layers[0].weight_grad.collective is Collective.ALL_TO_ALL
    assert a2a.layers[0].weight_grad.size_bytes == 1048576


def test_simai_extended_header_and_scoped_names(shared_data: Path) -> None:
    w = read_workload(shared_data / "simai" / "workload_analytical.txt")
    h = w.header
    assert len(w.layers) == 1789
    assert (h.policy, h.model_parallel_npu_group, h.ep, h.pp, h.vpp, h.ga, h.all_gpus) == \
        ("HYBRID_TRANSFORMER_FWD_IN_BCKWD", 2, 16, 12, 8, 24, 9216)
    assert h.pp_comm_bytes == 50331648  # 'pp_comm 50331648': no colon
    assert h.checkpoints == () and h.checkpoint_initiates == ()
    first = w.layers[0]
    assert (
        first.name,
        first.weight_grad.collective,
        first.weight_grad.size_bytes,
        first.update_ns,
    ) == ("grad_gather", Collective.ALL_GATHER, 2807758848, 100)
    names = [
        getattr(layer, p).collective_name
        for layer in w.layers
        for p in ("forward", "input_grad", "weight_grad")
    ]
    assert names.count("ALLTOALL_EP") == 768
    assert names.count("ALLGATHER_DP_EP") == 1 and names.count("REDUCESCATTER_DP_EP") == 1
    scoped = [
        getattr(layer, p) for layer in w.layers for p in ("forward", "input_grad", "weight_grad")
    ]
    ep = next(ph for ph in scoped if ph.scope == "EP")
    assert ep.collective is Collective.ALL_TO_ALL
    dp_ep = next(
        ph for ph in scoped if ph.scope == "DP_EP" and ph.collective is Collective.REDUCE_SCATTER
    )
    assert dp_ep.size_bytes > 0


# ---------------------------------------------------------------------------- self-written dialects
@pytest.mark.parametrize(
    "policy",
    ["DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "MICRO", "DISTRIBUTED_INFERENCE"],
)
def test_plain_policies(policy: str) -> None:
    w = parse_workload(f"{policy}\n2\n" + layers(2))
    assert w.header == WorkloadHeader(policy=policy, declared_layers=2)
    assert w.policy == policy


def test_every_policy_is_covered() -> None:
    assert set(POLICIES) == {
        "DATA",
        "MODEL",
        "HYBRID_DATA_MODEL",
        "HYBRID_MODEL_DATA",
        "HYBRID_TRANSFORMER",
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
        "HYBRID_DLRM",
        "HYBRID_DLRM_ENHANCED",
        "HYBRID_CUSTOMIZED",
        "MICRO",
        "DISTRIBUTED_INFERENCE",
    }


def test_transformer_header() -> None:
    w = parse_workload("HYBRID_TRANSFORMER model_parallel_NPU_group: 8\n2\n" + layers(2))
    assert w.header.model_parallel_npu_group == 8


def test_fwd_in_bckwd_header_with_checkpoints() -> None:
    w = parse_workload(
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2 checkpoints: 3 0 1 2 "
        "checkpoint_initiates: 1 3\n4\n" + layers(4)
    )
    assert w.header.checkpoints == (0, 1, 2) and w.header.checkpoint_initiates == (3,)
    assert w.header.line.endswith("checkpoints: 3 0 1 2 checkpoint_initiates: 1 3")


@pytest.mark.parametrize(
    "head",
    [
        "HYBRID_DLRM 1",
        "HYBRID_DLRM_ENHANCED 1",
        "HYBRID_DLRM DLRM_LAST_BOTTOM_LAYER: 1",
        "hybrid_dlrm\t1\t\t\t",
    ],
)
def test_dlrm_headers(head: str) -> None:
    w = parse_workload(f"{head}\n3\n" + layers(3))
    assert w.header.last_bottom_layer == 1
    assert w.header.policy.startswith("HYBRID_DLRM")


@pytest.mark.parametrize("pp_comm", ["pp_comm 1048576", "pp_comm: 1048576", "PP_COMM: 1.048576e6"])
def test_simai_header_variants(pp_comm: str) -> None:
    head = (
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 4 vpp: 1 ga: "
        "8 all_gpus: 4 "
        f"checkpoints: 0 checkpoint_initiates: 0 {pp_comm}"
    )
    h = parse_workload(f"{head}\n1\n" + layers(1)).header
    assert (h.pp, h.ga, h.all_gpus, h.pp_comm_bytes) == (4, 8, 4, 1048576)


def test_simai_header_without_checkpoints_or_pp_comm() -> None:
    h = parse_workload(
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 8\n1\n"
        + layers(1)
    ).header
    assert (h.ep, h.vpp, h.pp_comm_bytes, h.checkpoints) == (1, 8, None, None)


def test_hybrid_customized_13_tokens() -> None:
    text = (
        "HYBRID_CUSTOMIZED\n3\n"
        + "\n".join(
            L12.format(i=i) + f"\t{p}"
            for i, p in enumerate(["DATA", "model", "HYBRID_TRANSFORMER"])
        )
        + "\n"
    )
    w = parse_workload(text)
    assert [layer.policy for layer in w.layers] == ["DATA", "MODEL", "HYBRID_TRANSFORMER"]


def test_scoped_names_case_insensitive() -> None:
    line = ("moe\t-1\t1\talltoall_ep\t4096\t1\tAllGather_DP_EP\t8192\t1\t"
            "REDUCESCATTER_DP_EP\t16384\t1\n")
    w = parse_workload("HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n1\n" + line)
    f, ig, wg = w.layers[0].forward, w.layers[0].input_grad, w.layers[0].weight_grad
    assert (f.collective, f.scope, f.collective_name) == (
        Collective.ALL_TO_ALL,
        "EP",
        "ALLTOALL_EP",
    )
    assert (ig.collective, ig.scope) == (Collective.ALL_GATHER, "DP_EP")
    assert (wg.collective, wg.scope, wg.size_bytes) == (Collective.REDUCE_SCATTER, "DP_EP", 16384)
    assert parse_collective("ALLREDUCE_DP_EP") == (Collective.ALL_REDUCE, "DP_EP")
    assert parse_collective("allreduce") == (Collective.ALL_REDUCE, None)


def test_crlf_scientific_trailing_tabs_bom_blank_lines() -> None:
    text = ("\ufeffDATA\t\t\t\r\n\r\n2\t\t\r\n"
            "a\t-1\t1.5e3\tNONE\t0\t2E3\tNONE\t0\t1e+03\tALLREDUCE\t4.194304e6\t1e1\t\t\r\n"
            "\r\n"
            "b -1 1000.0 ALLGATHER 1.0E+05 0 NONE 0 0.5 NONE 0 0\t\r\n")
    w = parse_workload(text)
    a, b = w.layers
    assert (a.forward.compute_ns, a.input_grad.compute_ns, a.weight_grad.compute_ns) == (
        1500,
        2000,
        1000,
    )
    assert a.weight_grad.size_bytes == 4194304 and a.update_ns == 10
    assert (b.forward.collective, b.forward.size_bytes, b.weight_grad.compute_ns) == (
        Collective.ALL_GATHER,
        1e5,
        0.5,
    )


def test_headerless_libra_file() -> None:
    w = parse_workload(layers(3))
    assert w.header is None and w.policy is None and len(w.layers) == 3


def test_headerless_layer_named_like_a_policy() -> None:
    w = parse_workload(layers(2).replace("L0", "DATA"))
    assert w.header is None and w.layers[0].name == "DATA"


# ------------------------------------------------------------------------------------------- errors
def test_count_mismatch() -> None:
    e = err("DATA\n3\n" + layers(2))
    assert e.field == "header layer count"
    assert (
        "says 3 layers" in e.problem
        and "has 2 layer lines" in e.problem
        and e.fix.startswith("set line 2 to 2")
    )


@pytest.mark.parametrize("name", ["ALLREDUCEX", "BROADCAST", "NONE_EP", "P2P"])
def test_unknown_collective_is_an_error_never_none(name: str) -> None:
    e = err("DATA\n1\n" + layers(1).replace("\tNONE\t", f"\t{name}\t", 1))
    assert e.field == "line 3, field 7 (collective)"
    assert f"unknown collective '{name}'" in e.problem
    assert "NONE, ALLREDUCE, REDUCESCATTER, ALLGATHER, ALLTOALL" in e.fix


def test_unknown_scope() -> None:
    e = err(layers(1).replace("\tNONE\t", "\tALLTOALL_TP\t", 1))
    assert "unknown collective scope '_TP'" in e.problem and "ALLTOALL_EP" in e.fix


def test_allreduce_alltoall_not_modelled() -> None:
    e = err(layers(1).replace("\tNONE\t", "\tALLREDUCEALLTOALL\t", 1))
    assert "not modelled" in e.problem


def test_unknown_policy() -> None:
    e = err("HYBRID_PIPELINE\n2\n" + layers(2))
    assert e.field == "line 1 (header)" and "unknown header policy 'HYBRID_PIPELINE'" in e.problem
    assert "HYBRID_TRANSFORMER_FWD_IN_BCKWD" in e.fix


def test_neither_header_nor_layer_line() -> None:
    e = err("HYBRID_PIPELINE\n" + layers(2))
    assert "neither a header" in e.problem


@pytest.mark.parametrize(
    "head, field, problem",
    [
        ("HYBRID_TRANSFORMER", "line 1 (header)", "needs the model-parallel group size"),
        (
            "HYBRID_TRANSFORMER model_parallel_NPU_group:",
            "line 1 (header), model_parallel_NPU_group",
            "has no value",
        ),
        (
            "HYBRID_TRANSFORMER model_parallel_NPU_group: four",
            "model_parallel_NPU_group",
            "'four' is not an integer",
        ),
        (
            "HYBRID_TRANSFORMER model_parallel_NPU_group: 0",
            "model_parallel_npu_group",
            "0 is below 1",
        ),
        ("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 2 ep: 4", "ep", "given twice"),
        (
            "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 tp: 2",
            "line 1 (header)",
            "unknown header token 'tp:'",
        ),
        ("HYBRID_DLRM", "line 1 (header)", "needs the number of the last bottom-MLP layer"),
        ("HYBRID_DLRM 7", "header.last bottom layer", "layer 7 does not exist"),
        ("DATA ep: 2", "ep", "not read with policy DATA"),
        (
            "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 checkpoints: 1 0",
            "checkpoints",
            "not read with policy HYBRID_TRANSFORMER",
        ),
        (
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 3 0 1 "
            "checkpoint_initiates: 0",
            "checkpoints",
            "says 3 layer numbers",
        ),
        (
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 1 5 "
            "checkpoint_initiates: 0",
            "header.checkpoints",
            "layer 5 does not exist",
        ),
        ("DATA pp_comm -5", "pp_comm", "not a finite number >= 0"),
    ],
)
def test_bad_headers(head: str, field: str, problem: str) -> None:
    e = err(f"{head}\n2\n" + layers(2))
    assert field in e.field and problem in e.problem, e


def test_13_tokens_outside_hybrid_customized() -> None:
    e = err("DATA\n1\n" + layers(1, "\tDATA"))
    assert (
        e.field == "line 3"
        and "13 fields, expected 12" in e.problem
        and "HYBRID_CUSTOMIZED" in e.problem
    )


def test_12_tokens_under_hybrid_customized() -> None:
    e = err("HYBRID_CUSTOMIZED\n1\n" + layers(1))
    assert "12 fields, expected 13" in e.problem and "DATA" in e.fix


def test_unknown_per_layer_policy() -> None:
    e = err("HYBRID_CUSTOMIZED\n1\n" + layers(1, "\tPIPELINE"))
    assert (
        e.field == "line 3, field 13 (layer policy)"
        and "unknown per-layer policy 'PIPELINE'" in e.problem
    )


def test_wrong_field_count() -> None:
    e = err(layers(2).replace("\t10\n", "\n", 1))
    assert e.field == "line 1" and "11 fields, expected 12" in e.problem


# ----------------------------------------------------------------------------------------- the spec
def test_spec_is_backwards_compatible() -> None:
    ph = Phase(compute_ns=1, collective=Collective.NONE, size_bytes=0)
    layer = Layer(name="x", forward=ph, input_grad=ph, weight_grad=ph)
    assert layer.policy is None and ph.scope is None
    w = Workload(name="w", layers=(layer,), policy="DATA")
    assert w.header == WorkloadHeader(policy="DATA") and w.policy == "DATA"
    assert Workload(name="w", layers=(layer,)).policy is None
    with pytest.raises(ValidationError, match="not a bare policy name"):
        Workload(name="w", layers=(layer,), policy="HYBRID_TRANSFORMER model_parallel_NPU_group: 4")
    with pytest.raises(ValidationError, match="NONE collective has no scope"):
        Phase(compute_ns=1, collective=Collective.NONE, size_bytes=0, scope="EP")
    with pytest.raises(ValidationError, match="unknown collective scope"):
        Phase(compute_ns=1, collective=Collective.ALL_REDUCE, size_bytes=0, scope="TP")
    with pytest.raises(ValidationError, match="only read under a HYBRID_CUSTOMIZED header"):
        Workload(name="w", layers=(layer.model_copy(update={"policy": "DATA"}),), policy="DATA")


def test_parse_header_alone() -> None:
    h = parse_header("HYBRID_TRANSFORMER model_parallel_NPU_group: 4 ep: 2")
    assert (h.policy, h.model_parallel_npu_group, h.ep, h.declared_layers) == (
        "HYBRID_TRANSFORMER",
        4,
        2,
        None,
    )


# ------------------------------------------------------------------------------------------- writer
def test_round_trip_of_every_shared_file(shared_data: Path, tmp_path: Path) -> None:
    files = sorted((shared_data / "astrasim1").glob("*.txt")) + [
        shared_data / "simai" / "workload_analytical.txt"
    ]
    for f in files:
        w = read_workload(f)
        # integral values: the default integer text is exact
        out = write_workload(w, tmp_path / f.name)
        back = read_workload(out)
        assert back.layers == w.layers, f.name
        assert back.header == w.header, f.name


def test_written_text_format(tmp_path: Path) -> None:
    w = parse_workload(
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2\n2\n" + layers(2)
    )
    text = format_workload(w)
    lines = text.splitlines()
    assert (
        lines[0] == "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 0 "
        "checkpoint_initiates: 0"
    )  # ASTRA-sim 1.0 reads both lists positionally
    assert lines[1] == "2"
    assert (
        lines[2] == "L0\t-1\t1000\tALLREDUCE\t1000000\t1000\tNONE\t0\t1000\tALLREDUCE\t2000000\t10"
    )


def test_round_trip_of_a_generated_workload_exact_and_rounded(tmp_path: Path) -> None:
    p = TransformerParams(
        name="t",
        layers=2,
        hidden_size=8,
        sequence_length=4,
        micro_batch=2,
        bytes_per_element=2,
        tp=2,
        dp=4,
        npu_peak_tflops=1.0,
        efficiency=1.0,
    )
    w = generate(p)
    header = WorkloadHeader(policy="HYBRID_TRANSFORMER", model_parallel_npu_group=2)
    back = read_workload(write_workload(w, tmp_path / "t.txt", header=header, exact=True))
    assert back.layers == w.layers  # fractional ns (2.56, 3.072, ...) survive exactly
    assert back.header == header.model_copy(update={"declared_layers": 4})
    rounded = read_workload(write_workload(w, tmp_path / "r.txt", header=header))
    assert rounded.layers[0].forward.compute_ns == 3  # 2.56 ns -> 3
    assert rounded.layers[0].forward.size_bytes == w.layers[0].forward.size_bytes


def test_round_trip_scoped_and_customized() -> None:
    text = ("HYBRID_CUSTOMIZED\n1\n"
            "moe\t-1\t1\tALLTOALL_EP\t4096\t1\tALLGATHER_DP_EP\t8192\t1\tNONE\t0\t1\tMODEL\n")
    w = parse_workload(text)
    assert format_workload(w) == text


def test_writer_errors() -> None:
    w = parse_workload(layers(1))
    with pytest.raises(InputError, match="no ASTRA-sim header policy"):
        format_workload(w)
    with pytest.raises(InputError, match="needs the model-parallel group size"):
        format_workload(w, header=WorkloadHeader(policy="HYBRID_TRANSFORMER"))
    with pytest.raises(InputError, match="last bottom-MLP layer"):
        format_workload(w, header=WorkloadHeader(policy="HYBRID_DLRM"))
    with pytest.raises(InputError, match="layers\\[0\\].policy"):
        format_workload(w, header=WorkloadHeader(policy="HYBRID_CUSTOMIZED"))
    spaced = w.model_copy(update={"layers": (w.layers[0].model_copy(update={"name": "a b"}),)})
    with pytest.raises(InputError, match="whitespace"):
        format_workload(spaced, header=WorkloadHeader(policy="DATA"))
