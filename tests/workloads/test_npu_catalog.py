"""The accelerator catalog (catalogs/npus.toml): loading, its one-line errors, and model files that
name an accelerator (hieropt/io/npus.py, hieropt/io/llm.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.llm import read_llm
from hieropt.io.npus import read_npu_catalog
from hieropt.workloads.llm.accelerators import (
    CALIBRATION_FIELDS,
    CALIBRATION_NAMES,
    FORMAT_CALIBRATIONS,
)

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["A100-SXM-80GB", "A100-SXM-40GB", "H100-SXM", "H200-SXM", "B200", "GB200", "MI300X"]

ENTRY = """
[[accelerator]]
name = "X1"
vendor = "Acme"
hbm_gib = {hbm}
hbm_gbps = 1000.0
tdp_w = 500.0
scaleup_gbps = 100.0
[accelerator.peak_tflops]
bf16 = {peak}
[accelerator.sources]
peak_tflops = "Acme X1 datasheet (2026)"
hbm_gib = "Acme X1 datasheet (2026)"
hbm_gbps = "Acme X1 datasheet (2026)"
{tdp_source}
scaleup_gbps = "Acme X1 datasheet (2026)"
[accelerator.calibration]
matrix_efficiency = 0.8
gemm_half_gflop = 1.0
hbm_efficiency = 0.7
kernel_overhead_us = 3.0
attention_efficiency = 0.5
fitted_on = "nothing (test)"
"""


def entry(hbm="64.0", peak="100.0", tdp_source='tdp_w = "Acme X1 datasheet (2026)"') -> str:
    return ENTRY.format(hbm=hbm, peak=peak, tdp_source=tdp_source)


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "npus.toml"
    p.write_text(text)
    return p


def test_shipped_catalog_loads_with_every_source():
    cat = read_npu_catalog()
    assert [a.name for a in cat.accelerator] == NAMES
    for a in cat.accelerator:
        for f in ("peak_tflops", "hbm_gib", "hbm_gbps", "tdp_w", "scaleup_gbps"):
            assert a.sources[f].strip()
        assert "bf16" in a.peak_tflops and a.calibration.fitted_on
    # a few figures, as their datasheets give them
    assert cat.find("a100").peak("bf16") == 312.0 and cat.find("A100-40GB").hbm_gbps == 1555.0
    assert (
        cat.find("H100-SXM-80GB").peak("fp8") == 1978.9 and cat.find("H100").scaleup_gbps == 450.0
    )
    assert cat.find("MI300X").hbm_gib == 192.0 and cat.find("GB200").tdp_w == 1200.0


def test_a_valid_entry_loads(tmp_path):
    a = read_npu_catalog(write(tmp_path, entry())).find("x1")
    assert (a.hbm_gib, a.peak("bf16"), a.calibration.kernel_overhead_us) == (64.0, 100.0, 3.0)


@pytest.mark.parametrize(
    "kw, message",
    [
        (
            dict(tdp_source=""),
            "accelerator[0]: sources.tdp_w: missing; fix: give the public source and date of tdp_w",
        ),
        (
            dict(hbm="68719476736.0"),
            "accelerator[0]: hbm_gib: 6.87195e+10 looks like bytes; fix: give GiB "
            "(6.87195e+10 bytes = 64 GiB)",
        ),
        (
            dict(peak="1e14"),
            "accelerator[0]: peak_tflops.bf16: 1e+14 TFLOP/s is above 1e+06 TFLOP/s per NPU "
            "(over 200 x the fastest dense peak): looks like FLOP/s; fix: give TFLOP/s (1e12 "
            "FLOP/s): 1e+14 FLOP/s = 100 TFLOP/s",
        ),
        (
            dict(peak="0.5"),
            "accelerator[0]: peak_tflops.bf16: 0.5 TFLOP/s is below any accelerator's dense peak "
            "(the catalog's are 156 to 4,500 TFLOP/s): looks like PFLOP/s; fix: give TFLOP/s "
            "(1e12 FLOP/s): 0.5 PFLOP/s = 500 TFLOP/s",
        ),
        (
            dict(peak="2.25"),  # (a B200's 2,250 TFLOP/s in PFLOP/s)
            "accelerator[0]: peak_tflops.bf16: 2.25 TFLOP/s is below 10 TFLOP/s, less than any "
            "accelerator's: looks like PFLOP/s; fix: give TFLOP/s: 2.25 PFLOP/s = 2250 TFLOP/s",
        ),
        (dict(peak='"100"'), "accelerator[0].peak_tflops.bf16"),
    ],
)
def test_catalog_errors_are_one_line(tmp_path, kw, message):
    path = write(tmp_path, entry(**kw))
    with pytest.raises(InputError) as e:
        read_npu_catalog(path)
    assert str(e.value).startswith(f"{path.resolve()}: {message}")
    assert "\n" not in str(e.value)


def test_duplicate_names_and_unknown_keys(tmp_path):
    with pytest.raises(InputError, match="'X1' names two entries; fix: give each a distinct name"):
        read_npu_catalog(write(tmp_path, entry() + entry()))
    with pytest.raises(InputError, match=r"accelerator\[0\].colour: unknown key"):
        read_npu_catalog(
            write(tmp_path, entry().replace('vendor = "Acme"', 'vendor = "Acme"\ncolour = "red"'))
        )


MODEL = """
generator = "llm"
{top}
[params.model]
name = "m"
layers = 2
hidden_size = 64
heads = 4
ffn_size = 256
vocab_size = 1000
sequence_length = 128
[params.plan]
global_batch_size = 8
[params.npu]
{npu}
"""


def model(tmp_path: Path, npu: str, top: str = "") -> Path:
    p = tmp_path / "m.toml"
    p.write_text(MODEL.format(npu=npu, top=top))
    return p


def test_model_file_names_an_accelerator(tmp_path):
    p = read_llm(model(tmp_path, 'accelerator = "H100"\nhbm_reserve_gib = 4.0'))
    npu = p.npu
    assert (npu.name, npu.accelerator, npu.peak_tflops, npu.hbm_gib, npu.hbm_gbps) == (
        "H100-SXM",
        "H100-SXM",
        989.4,
        80.0,
        3350.0,
    )
    assert npu.roofline and npu.matrix_efficiency == 0.5993 and npu.hbm_reserve_gib == 4.0
    fp8 = read_llm(model(tmp_path, 'accelerator = "H100"\nnumber_format = "fp8"'))
    assert fp8.npu.peak_tflops == 1978.9
    # fields given win; efficiency keeps the flat model with the catalog's peak
    flat = read_llm(model(tmp_path, 'accelerator = "A100"\nefficiency = 0.5\nhbm_gbps = 1000.0'))
    assert (
        flat.npu.roofline,
        flat.npu.peak_tflops,
        flat.npu.hbm_gbps,
        flat.npu.matrix_efficiency,
    ) == (False, 312.0, 1000.0, None)
    over = read_llm(
        model(tmp_path, 'accelerator = "A100"'), ["accelerator=MI300X", "kernel_overhead_us=1.5"]
    )
    assert (over.npu.name, over.npu.peak_tflops, over.npu.kernel_overhead_us) == (
        "MI300X",
        1307.4,
        1.5,
    )


def test_a_catalog_peak_given_inline_wins_over_the_catalogs(tmp_path):
    # the H100-SXM's dense bf16 peak is 989.4 TFLOP/s in the catalog; a model file stating the
    # part's own 700 keeps it (the reader wrote 989.4 over it, and noted a peak of 400 as 0.4 x)
    npu = read_llm(model(tmp_path, 'accelerator = "H100"\npeak_tflops = 400.0\n'
                                   'catalog_peak_tflops = 700.0')).npu
    assert (npu.peak_tflops, npu.catalog_peak_tflops) == (400.0, 700.0)
    assert npu.peak_note is None  # 400 / 700 = 0.57, not below 0.5
    low = read_llm(model(tmp_path, 'accelerator = "H100"\npeak_tflops = 300.0\n'
                                   'catalog_peak_tflops = 700.0')).npu
    assert low.peak_note.startswith(
        "peak_tflops = 300 is 0.43 x the H100-SXM's dense bf16 peak of 700 TFLOP/s")
    # without peak_tflops, the peak is the figure given; without either, the catalog's
    own = read_llm(model(tmp_path, 'accelerator = "H100"\ncatalog_peak_tflops = 700.0')).npu
    assert (own.peak_tflops, own.catalog_peak_tflops) == (700.0, 700.0)
    cat = read_llm(model(tmp_path, 'accelerator = "H100"\npeak_tflops = 400.0')).npu
    assert (cat.peak_tflops, cat.catalog_peak_tflops) == (400.0, 989.4)
    # the refusal above 1.5 x compares with the figure given: 1,100 > 1.5 x 700 = 1,050
    with pytest.raises(InputError, match=r"params.npu.peak_tflops: 1100 TFLOP/s is 1.571 x the "
                       r"H100-SXM's dense bf16 peak of 700 TFLOP/s"):
        read_llm(model(tmp_path, 'accelerator = "H100"\npeak_tflops = 1100.0\n'
                                 'catalog_peak_tflops = 700.0'))
    # (1,100 is within 1.5 x the catalog's 989.4 = 1,484.1)
    assert read_llm(model(tmp_path, 'accelerator = "H100"\npeak_tflops = 1100.0')).npu.peak_note \
        is None
    # an override of it wins too, as any field's
    over = read_llm(model(tmp_path, 'accelerator = "H100"\npeak_tflops = 400.0'),
                    ["catalog_peak_tflops=800"]).npu
    assert over.catalog_peak_tflops == 800.0


def test_model_file_catalog_errors(tmp_path):
    with pytest.raises(
        InputError,
        match=r"params.npu.accelerator: 'H900' is not in .*npus.toml; fix: use one of "
        r"A100-SXM-80GB, A100-SXM-40GB, H100-SXM",
    ):
        read_llm(model(tmp_path, 'accelerator = "H900"'))
    with pytest.raises(
        InputError,
        match="params.npu.number_format: A100-SXM-80GB has no fp8 peak in the catalog; "
        "fix: use one of bf16, fp16, tf32, or give peak_tflops",
    ):
        read_llm(model(tmp_path, 'accelerator = "A100"\nnumber_format = "fp8"'))
    with pytest.raises(
        InputError, match="params.npu: matrix_efficiency: missing .*fix: name a catalog entry"
    ):
        read_llm(model(tmp_path, "peak_tflops = 100.0\nhbm_gib = 8.0\nhbm_gbps = 100.0"))


def test_model_file_names_its_own_catalog(tmp_path):
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "mine.toml").write_text(entry())
    p = read_llm(model(tmp_path, 'accelerator = "X1"', top='npu_catalog = "cat/mine.toml"'))
    assert (p.npu.name, p.npu.peak_tflops, p.npu.hbm_efficiency) == ("X1", 100.0, 0.7)
    with pytest.raises(InputError, match="npu_catalog: accelerator catalog file not found"):
        read_llm(model(tmp_path, 'accelerator = "X1"', top='npu_catalog = "cat/none.toml"'))


def test_calibration_names_are_the_catalog_table():
    cal = read_npu_catalog().find("A100").calibration
    assert set(CALIBRATION_NAMES) | {"fitted_on", "runs_file", *FORMAT_CALIBRATIONS} == set(
        type(cal).model_fields)
    assert FORMAT_CALIBRATIONS == ("fp16", "fp8", "tf32")


def test_generic_defaults_are_the_a100_fit():
    cal = read_npu_catalog().find("A100-SXM-80GB").calibration
    assert {f.name: f.default for f in CALIBRATION_FIELDS} == {
        n: getattr(cal, n) for n in CALIBRATION_NAMES
    }


def test_the_runs_a_default_was_fitted_on(monkeypatch):
    """``default_runs_file``: the shipped A100's default names its one-node runs; an NPU whose
    calibration differs from the default, or a kernel-level default, has none; a catalog entry
    naming a runs file that is gone is one line naming the catalog, the field and the fix."""
    from hieropt.io import npus
    from hieropt.io.npus import default_runs_file, fill_npu
    from hieropt.workloads.llm.npu import NPU

    a100 = NPU(**fill_npu({"accelerator": "A100"}, "m.toml"))
    assert default_runs_file(a100) == ROOT / "validation/calibration/a100-one-node.csv"
    kernel = NPU(**fill_npu({"accelerator": "A100", "matrix_efficiency": 0.869}, "m.toml"))
    assert default_runs_file(kernel) is None
    assert default_runs_file(NPU(**fill_npu({"accelerator": "B200"}, "m.toml"))) is None
    # in FP8 the default is the entry's [calibration.fp8], fitted on its own runs file
    for name, system in (("H100", "h100"), ("B200", "b200"), ("GB200", "gb200")):
        fp8 = NPU(**fill_npu({"accelerator": name, "number_format": "fp8"}, "m.toml"))
        assert default_runs_file(fp8) == ROOT / f"validation/calibration/{system}-fp8-one-node.csv"
    h200 = NPU(**fill_npu({"accelerator": "H200", "number_format": "fp8"}, "m.toml"))
    assert default_runs_file(h200) is None  # (its BF16 fit extrapolated to FP8: not validated)
    cat = read_npu_catalog()
    gone = [
        a.model_copy(update={"calibration": a.calibration.model_copy(
            update={"runs_file": "validation/calibration/gone.csv"})})
        if a.name == "A100-SXM-80GB" else a
        for a in cat.accelerator
    ]
    edited = cat.model_copy(update={"accelerator": gone})
    monkeypatch.setattr(npus, "read_npu_catalog", lambda: edited)
    with pytest.raises(InputError) as e:
        default_runs_file(a100)
    assert str(e.value).count("\n") == 0
    assert "npus.toml" in str(e.value) and "A100-SXM-80GB: calibration.runs_file" in str(e.value)
    assert "gone.csv is missing" in str(e.value) and "restore the file" in str(e.value)


@pytest.mark.parametrize(("fmt", "hint"), [
    ("fp32", " (FP32 training on Tensor Cores is tf32, a matmul mode on FP32 tensors)"),
    ("FP8", ' (write "fp8": lower case)'),
    ("int8", ""),
])
def test_a_number_format_hieropt_does_not_time_is_named_so(tmp_path, fmt, hint):
    # not "the catalog has no fp32 peak ... or give peak_tflops": no peak makes fp32 a format
    with pytest.raises(InputError) as e:
        read_llm(model(tmp_path, f'accelerator = "A100"\nnumber_format = "{fmt}"'))
    assert e.value.one_line().split(": ", 1)[1] == (
        f"params.npu.number_format: '{fmt}' is not a training number format hieropt times "
        "(bf16, fp16, fp8, tf32); fix: use one of bf16, fp16, tf32 for the A100-SXM-80GB" + hint)


FP8_TABLE = """
[accelerator.calibration.fp8]
matrix_efficiency = 0.5
fitted_on = "one FP8 run (test)"
runs_file = "runs/x1-fp8.csv"
"""


def test_a_format_sub_table_overrides_only_the_fields_it_gives(tmp_path):
    """``[accelerator.calibration.fp8]`` gives matrix_efficiency 0.5 and its own provenance; the
    other four fields are the base's (0.7 HBM, 3 us, 0.5 attention, 1 GFLOP), and bf16, fp16 and
    tf32 (no sub-table) take the base itself."""
    cal = read_npu_catalog(write(tmp_path, entry() + FP8_TABLE)).find("X1").calibration
    fp8 = cal.in_format("fp8")
    assert {n: getattr(fp8, n) for n in CALIBRATION_NAMES} == {
        "matrix_efficiency": 0.5, "gemm_half_gflop": 1.0, "hbm_efficiency": 0.7,
        "kernel_overhead_us": 3.0, "attention_efficiency": 0.5}
    assert (fp8.fitted_on, fp8.runs_file) == ("one FP8 run (test)", "runs/x1-fp8.csv")
    assert (cal.matrix_efficiency, cal.fitted_on, cal.runs_file) == (0.8, "nothing (test)", None)
    assert cal.in_format("bf16") is cal and cal.in_format("fp16") is cal
    assert cal.in_format("tf32") is cal
    assert [cal.fitted_format(f) for f in ("bf16", "fp16", "fp8", "tf32")] == [
        "bf16", "fp16", "fp8", "bf16"]


@pytest.mark.parametrize(("table", "message"), [
    (FP8_TABLE.replace("matrix_efficiency", "matrix_eficiency"),
     "accelerator[0].calibration.fp8.matrix_eficiency: unknown key (did you mean "
     "'matrix_efficiency'?); fix: rename 'matrix_eficiency' to 'matrix_efficiency'"),
    (FP8_TABLE.replace("calibration.fp8", "calibration.fp4"),
     "accelerator[0].calibration.fp4: unknown key (did you mean 'fp8'?); fix: rename 'fp4' to "
     "'fp8'"),
    (FP8_TABLE.replace("calibration.fp8", "calibration.bf16"),
     "accelerator[0].calibration: bf16: the base calibration is bf16's; fix: give its fields in "
     "[accelerator.calibration] itself (a sub-table is for fp16, fp8 or tf32)"),
    (FP8_TABLE.replace('fitted_on = "one FP8 run (test)"\n', ""),
     "accelerator[0].calibration.fp8.fitted_on: Field required; fix: add it"),
    (FP8_TABLE.replace("0.5", "1.5"),
     "accelerator[0].calibration.fp8.matrix_efficiency: 1.5 is above 1; "
     "fix: use a number <= 1"),
])
def test_a_bad_format_sub_table_is_one_line(tmp_path, table, message):
    path = write(tmp_path, entry() + table)
    with pytest.raises(InputError) as e:
        read_npu_catalog(path)
    assert str(e.value) == f"{path.resolve()}: {message}"


def test_fill_npu_takes_the_calibration_of_the_number_format(tmp_path):
    """The shipped catalog: the H100-SXM, B200 and GB200 in FP8 take their FP8 fits (0.6173,
    0.4962, 0.4544 of the FP8 peak), in BF16 their 16-bit values (0.5993, the MAMFs 0.776 and
    0.729); the H200 (no FP8 fit) keeps its BF16 value in FP8; the other fields are the base's.
    A catalog of the model file's own (``npu_catalog``) is read the same way."""
    from hieropt.io.npus import fill_npu

    def eff(name, fmt):
        return fill_npu({"accelerator": name, "number_format": fmt}, "m.toml")["matrix_efficiency"]

    assert [eff(n, "fp8") for n in ("H100", "B200", "GB200", "H200")] == [
        0.6173, 0.4962, 0.4544, 0.5993]
    assert [eff(n, "bf16") for n in ("H100", "B200", "GB200", "H200")] == [
        0.5993, 0.776, 0.729, 0.5993]
    fp8 = fill_npu({"accelerator": "B200", "number_format": "fp8"}, "m.toml")
    assert (fp8["peak_tflops"], fp8["gemm_half_gflop"], fp8["attention_efficiency"]) == (
        4500.0, 7.2, 0.6)
    own = write(tmp_path, entry(peak="100.0\nfp8 = 200.0") + FP8_TABLE)
    assert fill_npu({"accelerator": "X1", "number_format": "fp8"}, "m.toml", own)[
        "matrix_efficiency"] == 0.5
    assert fill_npu({"accelerator": "X1"}, "m.toml", own)["matrix_efficiency"] == 0.8
    # a given field still wins over the format's calibration
    assert fill_npu({"accelerator": "H100", "number_format": "fp8", "matrix_efficiency": 0.45},
                    "m.toml")["matrix_efficiency"] == 0.45


def test_a_model_files_hbm_bandwidth_in_tb_per_s_is_refused(tmp_path):
    """``hbm_gbps = 3.35`` for an H100 named from the catalog (3,350 GB/s): its own figure in
    TB/s, which would make every memory-bound kernel 1,000 x too slow."""
    text = (ROOT / "models" / "llama3-405b.toml").read_text()
    text = text.replace("[params.npu]", "[params.npu]\nhbm_gbps = 3.35", 1)
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        read_llm(path)
    assert str(e.value) == (
        f"{path}: params.npu.hbm_gbps: 3.35 GB/s is the H100-SXM's 3350 GB/s of HBM in TB/s, not "
        "GB/s; fix: give GB/s (1e9 bytes/s): hbm_gbps = 3350, or leave it out (the catalog's)")
