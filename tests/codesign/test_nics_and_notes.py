"""One NIC count rule (every scale-out dimension, whole NICs per NPU or per node, never fractions)
and the note when a group that usually stays in the scale-up domain (TP) is placed on the scale-out
network."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hieropt.spec.space import nic_count
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import space


def test_nic_count_is_whole_nics_per_npu_or_node_on_every_scale_out_dimension():
    # 4,096 NPUs at 233.33 GB/s on one scale-out dimension, 50 GB/s NICs: 5 per NPU (4.67 rounded
    # up), not 19,115
    assert nic_count(4096, [233.33333333333337], 50) == 4096 * 5
    # per node of 8 NPUs: ceil(8 x 233.33 / 50) = 38 NICs per node (37.33 rounded up)
    assert nic_count(4096, [233.33333333333337], 50, 8) == 512 * 38
    # two scale-out dimensions each need their own: ceil(30 / 50) + ceil(30 / 50) = 2 per NPU, not
    # ceil(60 / 50)
    assert nic_count(16, [30.0, 30.0], 50) == 32
    # the solver's round-off above a whole number
    assert nic_count(16, [50.0 * (1 + 1e-14)], 50) == 16
    assert nic_count(16, [0.0], 50) == 0
    with pytest.raises(ValueError, match="nic_npus: 3 does not divide the 16 NPUs"):
        nic_count(16, [1.0], 50, 3)
    with pytest.raises(ValidationError, match="nic_npus: 3 does not divide the 8 NPUs"):
        space(nic_gbps=1.0, nic_npus=3)


@pytest.mark.heavy
def test_rows_count_nics_by_the_rule():
    rows: list[dict] = []
    codesign(space(nic_gbps=0.5, nic_npus=2), workers=1, prune=False, on_row=rows.append)
    solved = [r for r in rows if r["status"] == "optimal"]
    for r in solved:
        top = [d for d, s in enumerate(r["shape"].split()) if s.startswith("b:")]
        assert r["nics"] == nic_count(8, [r["bw_gbps"][d] for d in top], 0.5, 2)
        assert r["nics"] % 4 == 0  # whole NICs per node of 2 NPUs, 4 nodes


def test_tp_on_the_scale_out_dimension_is_noted():
    rows: list[dict] = []
    r = codesign(
        space(mapping_rule="all_placements", plans=PlanChoices(tp=(2,), pp=(1,))),
        workers=1,
        prune=False,
        on_row=rows.append,
    )
    noted = [x for x in rows if x["notes"]]
    assert noted and r.solved > len(noted)
    for x in rows:
        if x["status"] != "optimal":
            continue
        dims = x["shape"].split()
        on_b = any(
            dims[d].startswith("b:") and size > 1 for d, size in enumerate(x["placement"]["tp"])
        )
        assert bool(x["notes"]) == on_b, x["id"]
    assert "TP usually stays in the scale-up domain" in noted[0]["notes"][0]
    assert "bound the scale-out bandwidth" in noted[0]["notes"][0]


def test_a_peak_below_half_the_catalogs_is_noted_on_every_solved_row():
    # an NPU named from the catalog (A100-SXM-80GB: dense fp16 312 TFLOP/s) given 1e-4 TFLOP/s: the
    # note every command gives, on each row too (the search's summary takes it from the plan)
    from hieropt.workloads.llm import NPU
    from tests.codesign.spaces import SLOW

    npu = NPU(name="A100-SXM-80GB", accelerator="A100-SXM-80GB", peak_tflops=1e-4,
              catalog_peak_tflops=312.0, efficiency=1.0, hbm_gib=1.0, number_format="fp16")
    rows: list[dict] = []
    r = codesign(space(base=SLOW.model_copy(update={"npu": npu}),
                       plans=PlanChoices(tp=(2,), pp=(1,))),
                 workers=1, prune=False, on_row=rows.append)
    note = ("peak_tflops = 0.0001 is 3.2e-07 x the A100-SXM-80GB's dense fp16 peak of 312 TFLOP/s "
            "(catalog), below 0.5 x: compute times, MFU, days and $ are computed at this peak; if "
            "the part is not derated, give its dense peak in TFLOP/s or leave peak_tflops out (the "
            "catalog's)")
    solved = [x for x in rows if x["status"] == "optimal"]
    assert solved and r.solved == len(solved)
    assert all(x["notes"][0] == note for x in solved)
    # the same NPU at its catalog peak: no such note
    rows.clear()
    codesign(space(plans=PlanChoices(tp=(2,), pp=(1,))), workers=1, prune=False,
             on_row=rows.append)
    assert not any(n.startswith("peak_tflops") for x in rows for n in x["notes"] or [])


def test_the_shipped_space_reader_fills_the_catalog_peak(tmp_path):
    # a space file's model naming the H100 (dense bf16 989.4 TFLOP/s) at 400 TFLOP/s: its base NPU
    # carries the catalog's peak, so each plan of the space gets the note
    from hieropt.io.codesign import load_codesign
    from tests.cases import REPO

    model = (REPO / "models" / "llama3-405b.toml").read_text()
    (tmp_path / "m.toml").write_text(model.replace("[params.npu]\n",
                                                   "[params.npu]\npeak_tflops = 400\n"))
    space_text = (REPO / "spaces" / "codesign-llama3-405b.toml").read_text()
    assert '"../models/llama3-405b.toml"' in space_text
    p = tmp_path / "s.toml"
    p.write_text(space_text.replace('"../models/llama3-405b.toml"', '"m.toml"'))
    npu = load_codesign(p).base.npu
    assert (npu.peak_tflops, npu.catalog_peak_tflops) == (400.0, 989.4)
    assert npu.peak_note.startswith("peak_tflops = 400 is 0.4 x the H100-SXM's dense bf16 peak of "
                                    "989.4 TFLOP/s (catalog), below 0.5 x")


def test_a_written_instance_keeps_a_catalog_peak_given_inline():
    # the shipped catalog's H100 peak (989.4 TFLOP/s bf16) is left out (the reader fills it in
    # again); a model file's own figure (700) is written, so the instance read back keeps it
    from hieropt.studies.codesign.export import npu_document

    table = {"name": "H100-SXM", "accelerator": "H100-SXM", "number_format": "bf16",
             "peak_tflops": 400.0, "hbm_gib": 80.0}
    own = npu_document(None, {**table, "catalog_peak_tflops": 700.0})
    assert own == {**table, "catalog_peak_tflops": 700.0}
    assert npu_document(None, {**table, "catalog_peak_tflops": 989.4}) == table
