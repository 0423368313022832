"""Shipped LLM model files, whole-model FLOPs against Narayanan et al. 2021, agreement with the
older TP x DP transformer generator, and one-line errors for plans that do not fit the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.instance import read_model
from hieropt.io.llm import apply_overrides, override_path, read_llm
from hieropt.model.memory import memory
from hieropt.workloads.llm import NPU, Architecture, LLMParams, Plan, build_step
from hieropt.workloads.llm.lower import lower_stage

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "models"

# published parameter counts (billions): Brown et al. 2020; Narayanan et al. 2021 (1008B); Llama 3
# paper Table 3; Mixtral: Jiang et al. 2024 (46.7B total, 12.9B active)
PUBLISHED = {"gpt3-175b-llm.toml": 175.0, "megatron-1t.toml": 1008.0, "llama3-70b.toml": 70.6,
             "llama3-405b.toml": 405.0, "mixtral-8x7b.toml": 46.7}


def total_params(p: LLMParams) -> float:
    """Every distinct parameter of the model: per stage, TP-split parameters x t plus replicated
    ones once; expert parameters x ep."""
    single = LLMParams(
        model=p.model, plan=Plan(global_batch_size=1, vocab_pad_multiple=1), npu=p.npu
    )
    step = build_step(single)
    return sum(op.dense_params + op.expert_params for st in step.stages for op in st.ops)


def test_the_1t_model_trains_in_fp16_as_published(tmp_path):
    """Narayanan et al. 2021 trained the 1008B model in FP16 (section 5, as
    validation/narayanan2021.csv states): 2-byte gradients, reduced in 16 bits over DP. A middle
    stage (2 of the 128 layers, TP 8) holds per layer 12 h^2 + 7 h TP-split parameters (QKV,
    projection and FFN weights, QKV and FFN-in biases) and 6 h whole ones (2 LayerNorms, 2 output
    biases): (12 x 25,600^2 + 7 x 25,600) / 8 + 6 x 25,600 = 983,216,000; its DP all-reduces send
    2 x 983,216,000 x 2 bytes per iteration (7,865,728,000 with bf16's 4-byte gradients)."""
    import json

    from tests.cli.util import run

    p = read_llm(MODELS / "megatron-1t.toml")
    assert (p.npu.number_format, p.npu.peak_tflops) == ("fp16", 312.0)
    r = run("workload", "plan", MODELS / "megatron-1t.toml", "--json", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["precision"]["gradient_bytes"] == 2
    h = 25600
    per_layer = (12 * h**2 + 7 * h) // 8 + 6 * h
    assert per_layer == 983_216_000
    stage1 = data["collectives"][1]["bytes_per_iteration"]
    assert stage1["dp"] == 2 * per_layer * 2 == 3_932_864_000


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_model_files_load_fit_and_match_published_size(name):
    p = read_llm(MODELS / name)
    assert memory(p).fits, memory(p).message()
    assert total_params(p) / 1e9 == pytest.approx(PUBLISHED[name], rel=0.01)


def test_narayanan_flops_per_iteration():
    """Sum over NPUs and micro-batches of every layer's FLOPs = Narayanan et al. 2021 eq. (3):
    96 B s l h^2 (1 + s / 6h + V / (16 l h)) with full recompute, 72 B s l h^2 (1 + s / 6h + V / (12
    l h)) without."""
    arch = Architecture(
        name="gpt3",
        layers=96,
        hidden_size=12288,
        heads=96,
        ffn_size=49152,
        vocab_size=51200,
        sequence_length=2048,
        biases=False,
    )
    B, s, L, h, V = 1536, 2048, 96, 12288, 51200
    for re, expect in (("full", 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))),
                       ("none", 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)))):
        p = LLMParams(model=arch, plan=Plan(tp=8, pp=8, dp=16, global_batch_size=B, recompute=re),
                      npu=NPU(peak_tflops=312, efficiency=1, hbm_gib=80))
        step = build_step(p)
        per_npu = sum(sum(op.flops) + op.recompute_flops for st in step.stages for op in st.ops)
        assert per_npu * 8 * 16 * step.microbatches == pytest.approx(expect, rel=1e-14)


def test_same_as_transformer_generator_on_its_plan():
    """The older generator's GPT-3 TP 16 x DP 256 workload (models/gpt3-175b.toml): identical
    compute and TP bytes; DP bytes larger by what it leaves out (its docstring): the LayerNorm (2h)
    and the row-parallel bias it splits over t (h - h/t), 3h - h/t parameters per attention or MLP
    layer."""
    old = read_model(MODELS / "gpt3-175b.toml")
    arch = Architecture(
        name="gpt3-175b",
        layers=96,
        hidden_size=12288,
        heads=96,
        ffn_size=49152,
        vocab_size=50257,
        sequence_length=2048,
    )
    # (fp16 training: 2-byte gradients, as the older generator's; bf16 would reduce 4-byte ones)
    p = LLMParams(model=arch, plan=Plan(tp=16, dp=256, global_batch_size=256),
                  npu=NPU(peak_tflops=312, efficiency=0.5, hbm_gib=80, number_format="fp16"))
    new = [
        layer
        for layer in lower_stage(build_step(p)).layers
        if layer.name[0] in "am" and "+" not in layer.name
    ]
    assert [x.name for x in new] == [x.name for x in old.layers]
    h, t = 12288, 16
    for a, b in zip(old.layers, new, strict=True):
        for ph in ("forward", "input_grad", "weight_grad"):
            assert getattr(b, ph).compute_ns == pytest.approx(getattr(a, ph).compute_ns, rel=1e-15)
        assert (b.forward.size_bytes, b.input_grad.size_bytes) == (
            a.forward.size_bytes,
            a.input_grad.size_bytes,
        )
        assert b.weight_grad.size_bytes - a.weight_grad.size_bytes == (3 * h - h // t) * 2


BAD = [
    (
        {"plan.npus": 4096, "dp": 32},
        "params: plan.npus: tp x pp x dp = 8 x 8 x 32 = 2048 is not the 4096 NPUs",
    ),
    ({"tp": 5, "npus": 2560}, "plan.tp: 5 does not divide the 96 attention heads"),
    (
        {"pp": 128, "npus": 65536},
        "plan.pp: pp 128 chunks need at least as many layers, the model has 96",
    ),
    (
        {"pp": 16, "dp": 32, "global_batch_size": 256, "schedule": "interleaved",
         "virtual_stages": 2},
        "8 micro-batches per iteration are fewer than the 16 pipeline",
    ),
    ({"global_batch_size": 1000}, "not a multiple of dp x micro_batch_size"),
    ({"schedule": "interleaved"}, "plan.virtual_stages: 1 with schedule interleaved"),
    ({"ep": 2}, "plan.ep: expert parallelism (2) needs an MoE model"),
]


@pytest.mark.parametrize("overrides, message", BAD)
def test_bad_plans_are_one_line_errors(overrides, message):
    with pytest.raises(InputError) as e:
        read_llm(MODELS / "gpt3-175b-llm.toml", [f"{k}={v}" for k, v in overrides.items()])
    text = str(e.value)
    assert message in text and "\n" not in text and "fix: " in text
    assert text.startswith(str(MODELS / "gpt3-175b-llm.toml"))


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "zero_stage=4",
            "zero_stage=4: 4 is above 3; fix: use an integer <= 3",
        ),
        ("npus=abc", "npus=abc: 'abc' is text, not a number; fix: write the number without quotes"),
        (
            "npu.hbm_gib=80GB",
            "npu.hbm_gib=80GB: '80GB' is text, not a number: a number takes no unit, the unit is "
            "implied by the field's name; fix: write 80 if 80GB is a vendor's memory capacity "
            "(binary: an 80 GB H100 holds 80 GiB), or 74.5058 for 80e9 bytes (in the unit of "
            "'hbm_gib')",
        ),
        ("model.layers=0", "model.layers=0: 0 is below 1; fix: use an integer >= 1"),
        # (a validator of [params.npu] naming the field and opening with the value)
        (
            "npu.nic_gbps=400",
            "npu.nic_gbps=400: 400 GB/s per direction is a 3.2 Tb/s NIC, and 400 is a NIC's "
            "rating in Gb/s; fix: write nic_gbps = 50 (GB/s per direction: the 400 Gb/s rating "
            "/ 8)",
        ),
        # (a layer count beyond any model is refused at once, not lowered layer by layer for hours)
        (
            f"model.layers={10**60}",
            f"model.layers={10**60}: 1e+60 is above 10000; fix: use an integer <= 10000",
        ),
    ],
)
def test_a_bad_override_value_is_blamed_on_the_override(override, message):
    # (not blamed on the model file, which holds no such value)
    with pytest.raises(InputError) as e:
        read_llm(MODELS / "gpt3-175b-llm.toml", [override])
    assert str(e.value).startswith(f"--set: {message}")
    with pytest.raises(InputError) as e:
        read_llm(MODELS / "gpt3-175b-llm.toml", ["tp=8", override], "space.toml: set")
    assert str(e.value).startswith(f"space.toml: set: {message}")


def test_moe_errors():
    with pytest.raises(InputError, match="plan.ep: 3 does not divide the 8 experts"):
        read_llm(MODELS / "mixtral-8x7b.toml", ["ep=3"])
    with pytest.raises(InputError, match="plan.ep: 8 does not divide dp 4"):
        read_llm(
            MODELS / "mixtral-8x7b.toml", ["dp=4", "pp=32", "npus=256", "global_batch_size=128"]
        )


def test_overrides():
    assert override_path("tp") == ["plan", "tp"]
    assert override_path("hbm_gib") == ["npu", "hbm_gib"]
    assert override_path("experts") == ["model", "moe", "experts"]
    assert override_path("model.moe.top_k") == ["model", "moe", "top_k"]
    with pytest.raises(
        InputError, match="ambiguous: a field of npu and model; fix: write npu.name or model.name"
    ):
        override_path("name")
    with pytest.raises(InputError, match="tpp: unknown key"):
        override_path("tpp")
    with pytest.raises(InputError, match="expected KEY=VALUE"):
        apply_overrides({}, ["tp"])
    out = apply_overrides(
        {"plan": {"tp": 1}},
        ["tp=8", "schedule=interleaved", "stage_layers=[1, 2]", "sequence_parallel=true"],
    )
    assert out["plan"] == {
        "tp": 8,
        "schedule": "interleaved",
        "stage_layers": [1, 2],
        "sequence_parallel": True,
    }
    p = read_llm(MODELS / "llama3-70b.toml", ["tp=4", "dp=256", "recompute=full"])
    assert (p.plan.tp, p.plan.dp, p.plan.recompute) == (4, 256, "full")


def test_memory_says_how_much_too_big():
    # GPT-3 at TP 16 x DP 256 without PP, sharding or recompute: far more than 80 GB per NPU
    p = read_llm(
        MODELS / "gpt3-175b-llm.toml",
        [
            "tp=16",
            "pp=1",
            "dp=256",
            "zero_stage=0",
            "recompute=none",
            "sequence_parallel=false",
            "global_batch_size=1536",
        ],
    )
    rep = memory(p)
    assert not rep.fits
    assert rep.over_bytes > 100e9
    assert rep.message().startswith("does not fit: stage 0 needs")


def test_several_settings_in_one_override_are_told_one_per_key():
    # ('8,pp=8' was read as the text value of tp: "'8,pp=8' is text, not a number")
    with pytest.raises(InputError) as e:
        read_llm(MODELS / "gpt3-175b-llm.toml", ["tp=8,pp=8"])
    assert str(e.value) == ("--set: tp=8,pp=8: 2 KEY=VALUE pairs in one --set; fix: give one --set "
                            "per key: --set tp=8 --set pp=8")
    with pytest.raises(InputError) as e:
        read_llm(MODELS / "gpt3-175b-llm.toml", ["tp=8, pp=8,dp=4"], "space.toml: set")
    assert str(e.value) == ('space.toml: set: tp=8, pp=8,dp=4: 3 KEY=VALUE pairs in one entry; '
                            'fix: give one entry per key: set = ["tp=8", "pp=8", "dp=4"]')
    # a value that is a TOML table may hold commas and '='
    p = read_llm(MODELS / "gpt3-175b-llm.toml",
                 ['collective_algorithms={tp="concurrent",dp="sequential"}'])
    assert p.plan.collective_algorithms == (("dp", "sequential"), ("tp", "concurrent"))


def test_the_npu_count_fix_names_a_dp_that_exists():
    # 4,095 NPUs under TP 8 x PP 4 (32): no dp makes it, so the fix says so instead of
    # "e.g. dp = 4095 / (tp x pp)"; 8,192 NPUs: dp = 8192 / 32 = 256

    model = REPO / "models" / "llama3-70b.toml"
    with pytest.raises(InputError) as e:
        read_llm(model, ["npus=4095"])
    assert e.value.one_line().endswith(
        "plan.npus: tp x pp x dp = 8 x 4 x 128 = 4096 is not the 4095 NPUs; fix: tp x pp = 32 "
        "does not divide 4095: plan a multiple of 32 NPUs, or choose degrees whose product is 4095")
    with pytest.raises(InputError) as e:
        read_llm(model, ["npus=8192"])
    assert e.value.one_line().endswith(
        "is not the 8192 NPUs; fix: choose degrees whose product is 8192 (e.g. dp = 8192 / "
        "(tp x pp) = 256)")


@pytest.mark.parametrize("table", ["[params.npu]", "[params.plan]", "[params]"])
def test_a_top_level_key_below_a_table_says_where_it_belongs(tmp_path, table):
    """``npu_catalog`` written below ``[params.npu]`` belongs to that table in TOML: the error
    names the key's path and the fix moves it to the top."""
    text = (MODELS / "llama3-405b.toml").read_text()
    if table == "[params]":
        top = '[params]\nnpu_catalog = "mine.toml"\n\n[params.model]'
        text = text.replace("[params.model]", top, 1)
    else:
        text = text.replace(table, f'{table}\nnpu_catalog = "mine.toml"', 1)
    path = tmp_path / "m.toml"
    path.write_text(text)
    where = table.strip("[]")
    with pytest.raises(InputError) as e:
        read_llm(path)
    assert str(e.value) == (
        f"{path}: {where}.npu_catalog: unknown key: npu_catalog is a top-level key of the model "
        f"file, not a key of [{where}] (a key written below a [table] line belongs to that "
        'table); fix: move npu_catalog = "mine.toml" above the first [table] line')
