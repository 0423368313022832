"""A cluster owner's own runs files: what a row resolves to is shown (NPUs, the plan in the JSON),
and the slips of a first runs file are caught or noted: a scale-out bandwidth above what an NPU's
NIC can carry, a one-dimension network grown past the scale-up domain, a sequence length in the
wrong unit, one plan measured several times, a tie for the predicted fastest, an interleaved
layout the standard flags cannot state, a dimension without its block or cost class."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.io.npus import DEFAULT_CATALOG, read_npu_catalog
from hieropt.studies.validate import validate
from hieropt.studies.validate.metrics import predicted_fastest_ties

from .tiny import refused

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "validation" / "models" / "megatron-gpt-a100.toml"
NETWORK = REPO / "validation" / "networks" / "dgx-a100-hdr.toml"
COLUMNS = ("name,model,network,bw_gbps,model.layers,model.hidden_size,model.heads,model.ffn_size,"
           "tp,pp,dp,micro_batch_size,global_batch_size")
GPT22B = "48,6144,64,24576"
"""The 22B model of Korthikanti et al. 2022 (layers, hidden, heads, FFN)."""
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def runs(folder: Path, rows: list[str], extra: str = "", network: Path = NETWORK,
         model: Path = MODEL) -> Path:
    """A runs file in ``folder``: the 22B model (of ``model``) on DGX A100 nodes, ``COLUMNS`` +
    ``extra`` then ``measured_ms`` and ``group``; each row
    ``name,bw,tp,pp,dp,mbs,gbs[,extra],ms,group``."""
    path = folder / "runs.csv"
    lines = [f"{COLUMNS}{extra},measured_ms,group"]
    for r in rows:
        name, bw, rest = r.split(",", 2)
        lines.append(f"{name},{model},{network},{bw},{GPT22B},{rest}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_catalog_states_each_accelerators_scale_up_domain_and_nic_bound():
    cat = read_npu_catalog(DEFAULT_CATALOG)
    got = {a.name: (a.scaleup_npus, a.nic_gbps) for a in cat.accelerator}
    # an HGX / DGX baseboard of 8 (a GB200 NVL72 rack of 72); PCIe Gen4 x16 = 64 GB/s both ways
    # on an A100 (32 per direction), one 400 Gb/s NIC (50 GB/s) on PCIe Gen5, one 800 Gb/s NIC
    # (100 GB/s) on a Blackwell's PCIe Gen6
    assert got == {
        "A100-SXM-80GB": (8, 32.0), "A100-SXM-40GB": (8, 32.0), "H100-SXM": (8, 50.0),
        "H200-SXM": (8, 50.0), "B200": (8, 100.0), "GB200": (72, 100.0), "MI300X": (8, 50.0),
    }
    assert all(a.sources["scaleup_npus"] and a.sources["nic_gbps"] for a in cat.accelerator)


def test_a_scale_out_bandwidth_within_the_nic_bound_passes_and_per_node_gbps_does_not(
        tmp_path: Path):
    # 8 x 2 x 4 = 64 A100s: dimension 1 reaches 64 NPUs, beyond the 8 of a DGX A100
    ok = runs(tmp_path, ["a,300;25,8,2,4,1,512,20000,g"])
    assert validate([ok]).rows[0].run.bw_gbps == (300.0, 25.0)
    # four 200 Gb/s NICs per node written as the node's 100 GB/s (12.5 per GPU)
    bad = runs(tmp_path, ["a,300;100,8,2,4,1,512,20000,g"])
    message = refused(bad)
    assert message.startswith(
        f"{bad}: line 2: bw_gbps: dimension 1: 100 GB/s per NPU is above the 32 GB/s per "
        "direction one A100-SXM-80GB can send through its NIC")
    assert "fix: give per-NPU GB/s per direction: 200 Gb/s per GPU is 25" in message
    # a run within one node (8 GPUs): dimension 1 is not used, not checked
    one = runs(tmp_path, ["a,300;100,8,1,1,1,4,1500,g"])
    assert validate([one]).rows[0].run.bw_gbps == (300.0,)


def test_the_nic_bound_is_the_model_files_and_names_its_source(tmp_path: Path):
    """A model file's [params.npu] nic_gbps = 64 in place of the A100's catalog 32: 50 GB/s on
    dimension 1 (64 A100s, past the 8 of a DGX A100) passes, 100 is refused naming the model
    file's figure; a model file naming its own catalog (npu_catalog) whose A100-SXM-80GB sends at
    most 20 GB/s: 25 is refused, naming that catalog's path for both figures."""
    text = MODEL.read_text()
    model = tmp_path / "model.toml"
    model.write_text(text.replace('hbm_reserve_gib = 4.0', 'hbm_reserve_gib = 4.0\nnic_gbps = 64'))
    ok = runs(tmp_path, ["a,300;50,8,2,4,1,512,20000,g"], model=model)
    assert validate([ok]).rows[0].run.bw_gbps == (300.0, 50.0)
    bad = runs(tmp_path, ["a,300;100,8,2,4,1,512,20000,g"], model=model)
    assert refused(bad).startswith(
        f"{bad}: line 2: bw_gbps: dimension 1: 100 GB/s per NPU is above the 64 GB/s per "
        "direction one A100-SXM-80GB can send through its NIC ([params.npu] nic_gbps of the "
        "model file, given in place of the catalog's: its PCIe x16 host link to the fastest NIC "
        "on it); the dimension reaches 64 NPUs, beyond the A100-SXM-80GB's scale-up domain of 8 "
        "(catalog scaleup_npus of the A100-SXM-80GB), so its traffic runs through the NIC")
    catalog = DEFAULT_CATALOG.read_text()
    head, entry = catalog.split('name = "A100-SXM-80GB"\n', 1)
    mine = tmp_path / "mine.toml"
    mine.write_text(head + 'name = "A100-SXM-80GB"\n'
                    + entry.replace("nic_gbps = 32.0\n", "nic_gbps = 20.0\n", 1))
    model.write_text('npu_catalog = "mine.toml"\n' + text)
    bad = runs(tmp_path, ["a,300;25,8,2,4,1,512,20000,g"], model=model)
    assert refused(bad).startswith(
        f"{bad}: line 2: bw_gbps: dimension 1: 25 GB/s per NPU is above the 20 GB/s per "
        "direction one A100-SXM-80GB can send through its NIC (catalog nic_gbps of the "
        f"A100-SXM-80GB in {mine}: its PCIe x16 host link to the fastest NIC on it); the "
        "dimension reaches 64 NPUs, beyond the A100-SXM-80GB's scale-up domain of 8 (catalog "
        f"scaleup_npus of the A100-SXM-80GB in {mine}), so its traffic runs through the NIC")


def test_a_one_dimension_network_is_not_grown_past_the_scale_up_domain(tmp_path: Path):
    net = tmp_path / "one.toml"
    net.write_text('[network]\ndims = [{ block = "Switch", npus = 8, cost_class = "NVLink" }]\n',
                   encoding="utf-8")
    # not grown silently to one 64-GPU NVLink switch
    path = runs(tmp_path, ["a,300,8,2,4,1,512,20000,g"], network=net)
    assert refused(path) == (
        f"{path}: line 2: network: the run's 64 NPUs do not fit {net}: its one dimension "
        "(Switch, 8 NPUs, NVLink) would grow to 64 NPUs, beyond the accelerator's scale-up domain "
        "of 8 (catalog scaleup_npus of the A100-SXM-80GB), and a file of one dimension describes "
        "no network beyond it "
        "(only the outermost dimension of a file of two or more grows); fix: add the network "
        'beyond it as a second dimension, e.g. dims = [{block = "Switch", npus = 8, cost_class = '
        '"NVLink"}, {block = "Switch", npus = 8, cost_class = "InfiniBand"}] (and its bandwidth '
        "in bw_gbps), or check the plan's degrees")
    # within the domain (4 of its 8 GPUs) it is used as it is
    four = runs(tmp_path, ["a,300,4,1,1,1,4,3000,g"], network=net)
    assert validate([four]).rows[0].run.network.dims[0].npus == 4


@pytest.mark.parametrize("seq, said, fix", [
    # 1 Mi tokens: a global batch's tokens (512 x 2,048); not "looks like seconds"
    ("1048576", "1,048,576 tokens per sequence (the row's) is outside the typical "
     "2,048-131,072: looks like the tokens of a global batch (global_batch_size x sequence "
     "length)", "give the tokens per sequence (e.g. 2048, 4096, 8192), and global_batch_size "
     "in sequences"),
    # 2 for 2K; not "looks like µs"
    ("2", "2 tokens per sequence (the row's) is outside the typical 2,048-131,072: looks like "
     "thousands of tokens (2K = 2,048)", "write 2048 for 2K"),
])
def test_a_sequence_length_in_another_unit_gets_a_length_s_hint(tmp_path: Path, seq, said, fix):
    path = runs(tmp_path, [f"a,300;25,8,2,4,1,512,{seq},27000,g"], ",model.sequence_length")
    message = refused(path)
    assert message.startswith(f"{path}: line 2: model.sequence_length: {said}; with it, the "
                              "measured time is implausible (measured_ms: 27,000 ms is ")
    assert message.endswith(f"; fix: {fix}; a sequence length is in tokens per sequence")
    assert "seconds" not in message and "µs" not in message


def test_a_time_in_seconds_is_not_blamed_on_a_valid_short_sequence_length(tmp_path: Path):
    # 1,024 tokens (GPT-2's) has no reading as another unit (1,024 x 1,024 is no typical length):
    # the time's error stands. By hand, 3 x 512 x (48 x (24 s h^2 + 4 s^2 h) + 2 s h V) with s
    # 1,024, h 6,144, V 51,200 = 7.1288e16 FLOPs at 64 x 312 TFLOP/s = 3,570 ms; 2.5 is 1,428 x less
    path = runs(tmp_path, ["a,300;25,8,2,4,1,512,1024,2.5,g"], ",model.sequence_length")
    assert refused(path) == (
        f"{path}: line 2: measured_ms: 2.5 ms is 1,428 x less than the model's FLOPs take at the "
        "peak FLOP/s of its 64 NPUs (3,570 ms): looks like seconds; fix: give the iteration time "
        "in ms: 2500 for 2.5 s")
    ok = runs(tmp_path, ["a,300;25,8,2,4,1,512,1024,8000,g"], ",model.sequence_length")
    assert validate([ok]).rows[0].run.params.model.sequence_length == 1024


def test_a_length_read_as_thousands_is_not_blamed_when_the_time_is_implausible_with_it_too(
        tmp_path: Path):
    # 2 read as 2K (2,048 tokens) gives 7,331 ms at the peak (the formula above, s 2,048): 0.5 ms
    # is implausible with it too (below 1/10 of it), so the length is not the cause named; with s
    # 2 the peak time is 6.787 ms, and 0.5 s = 500 ms is plausible (above 1 % of the peak)
    path = runs(tmp_path, ["a,300;25,8,2,4,1,512,2,0.5,g"], ",model.sequence_length")
    assert refused(path) == (
        f"{path}: line 2: measured_ms: 0.5 ms is 14 x less than the model's FLOPs take at the "
        "peak FLOP/s of its 64 NPUs (6.787 ms): looks like seconds; fix: give the iteration time "
        "in ms: 500 for 0.5 s")


def test_one_plan_measured_three_times_is_noted_and_its_tie_is_no_rank(tmp_path: Path):
    path = runs(tmp_path, ["a,300;25,8,2,4,1,512,27000,g", "b,300;25,8,2,4,1,512,28000,g",
                           "c,300;25,8,2,4,1,512,31000,g"])
    v = validate([path])
    (g,) = v.groups
    # three measurements, one prediction: every run predicted fastest, the rank arbitrary
    assert (g.runs, g.fastest_tied) == (3, 3)
    assert math.isnan(g.spearman)  # (the predictions are constant: no rank correlation)
    p = v.rows[0].predicted_ms
    assert [x.predicted_ms for x in v.rows] == [p, p, p]
    # 31,000 / 27,000 - 1 = 14.8 %, more than the 10 % calibrate warns at
    assert (f"note: {path}: line 2 (and lines 3, 4): one plan measured 3 times (27,000, 28,000, "
            f"31,000 ms), predicted once ({p:,.1f} ms): each measurement counts as a run here "
            f"(calibrate counts the plan once); {path}: line 4 and {path}: line 2 are the same "
            "plan measured at 31,000 and 27,000 ms (15% apart, more than 10%): no prediction "
            "can match both; check the rows (a plan that is not the run's), or keep the "
            "measurement you trust") in v.notes
    out = tmp_path / "v.json"
    r = runner.invoke(app, ["validate", str(path), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "tie: 3 predicted equal" in r.output
    (group,) = json.loads(out.read_text())["groups"]
    assert (group["predicted_fastest_measured_rank"], group["predicted_fastest_tied"]) == (None, 3)


def test_ties_for_the_fastest_prediction():
    assert predicted_fastest_ties([2.0, 1.0, 1.0]) == 2
    assert predicted_fastest_ties([1.0, 1.0 + 1e-6]) == 1  # (1 ppm apart: no tie)
    assert predicted_fastest_ties([3.0]) == 1
    assert predicted_fastest_ties([]) == 0


def test_the_resolved_plan_is_shown_and_a_model_file_dp_is_noted(tmp_path: Path):
    # no dp column: the model file's dp 32 makes tp 8 x pp 2 x dp 32 = 512 GPUs
    path = tmp_path / "runs.csv"
    path.write_text(
        "name,model,network,bw_gbps,model.layers,model.hidden_size,model.heads,model.ffn_size,"
        f"tp,pp,micro_batch_size,global_batch_size,measured_ms\n"
        f"a,{MODEL},{NETWORK},300;25,{GPT22B},8,2,1,512,3000\n", encoding="utf-8")
    out = tmp_path / "v.json"
    r = runner.invoke(app, ["validate", str(path), "--json", str(out)])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(out.read_text())["rows"]
    assert {k: row[k] for k in ("npus", "tp", "cp", "pp", "dp", "ep")} == {
        "npus": 512, "tp": 8, "cp": 1, "pp": 2, "dp": 32, "ep": 1}
    assert list(row)[:9] == ["file", "line", "run", "npus", "tp", "cp", "pp", "dp", "ep"]
    assert (f"note: {path}: line 2: no dp cell: dp 32 is the model file's "
            "(megatron-gpt-a100.toml), so the run is tp 8 x pp 2 x dp 32 = 512 NPUs; give a dp "
            "cell if the run had another") in r.output
    assert "│  512 │" in r.output.replace("┃", "│")  # (the table's NPUs column)


def test_a_plan_that_does_not_fit_says_by_how_much(tmp_path: Path):
    # the 22B model without tensor parallelism on 8 A100s (batch 32): 366 GB per GPU
    path = runs(tmp_path, ["a,300;25,1,1,8,4,32,11360,g"])
    v = validate([path])
    (x,) = v.rows
    assert not x.fits_memory
    (note,) = [n for n in v.notes if "memory model" in n]
    assert note.startswith(f"note: {path}: line 2: *: the memory model finds the measured plan "
                           "does not fit: stage 0 needs ")
    need = float(note.split("needs ")[1].split(" GB")[0].replace(",", ""))
    over = float(note.split("GB per NPU, ")[1].split(" GB")[0].replace(",", ""))
    # 80 GiB less the model file's 4 GiB reserve: 76 x 2^30 bytes = 81.60 GB available
    assert "81.60 GB available (80 GiB HBM less 4 GiB reserve)" in note
    assert need - over == pytest.approx(76 * 2**30 / 1e9, abs=0.01)
    assert need > 300


def test_an_interleaved_layout_the_standard_flags_cannot_state_is_noted(tmp_path: Path):
    # 48 layers over pp 4 x v 5 = 20 chunks: no whole number of layers per chunk; v 4: 3 each
    path = runs(tmp_path, ["a,300;25,8,4,2,1,512,interleaved,5,20000,g",
                           "b,300;25,8,4,2,1,512,interleaved,4,20000,g"],
                ",schedule,virtual_stages")
    notes = [n for n in validate([path]).notes if "chunks" in n]
    assert notes == [
        f"note: {path}: line 2: pp 4 x virtual_stages 5 = 20 chunks do not divide the 48 layers: "
        "Megatron-LM's standard flags refuse this plan, and hieropt times its own balanced "
        "layout (chunks of unequal layer counts); unless the run stated a custom layout "
        "(--pipeline-model-parallel-layout; give it as a stage_layers cell), check "
        "virtual_stages (codesign counts such plans invalid unless custom_layouts = true)"]


@pytest.mark.parametrize("dim, key, what", [
    ('{ block = "Switch", npus = 8 }', "cost_class", 'a name for its parts, e.g. "NVLink" or '
     '"InfiniBand" (a runs file\'s network is not priced: any name)'),
    ('{ npus = 8, cost_class = "NVLink" }', "block",
     "the building block: one of Ring, FullyConnected, Switch"),
])
def test_a_dimension_without_block_or_cost_class_names_what_it_takes(tmp_path: Path, dim, key,
                                                                     what):
    net = tmp_path / "net.toml"
    net.write_text(f'[network]\ndims = [{dim}, {{ block = "Switch", npus = 2, cost_class = "IB" '
                   "}]\n", encoding="utf-8")
    path = runs(tmp_path, ["a,300;25,8,2,4,1,512,20000,g"], network=net)
    # not "Field required; fix: add it"
    assert refused(path) == (
        f"{path}: line 2: network: {net}: network.dims[0].{key}: missing: every dimension needs "
        f"block, npus and cost_class; fix: add {key}, {what}: e.g. {{block = \"Switch\", npus = "
        '8, cost_class = "NVLink"}')
