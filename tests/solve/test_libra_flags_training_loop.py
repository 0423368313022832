"""The training loop LIBRA's flags take: LIBRA's ``no_overlap``, except for an ASTRA-sim workload
whose header asks for the forward pass again in the backward pass
(``HYBRID_TRANSFORMER_FWD_IN_BCKWD``), which is timed with the ``recompute`` loop and says so."""

from __future__ import annotations

from pathlib import Path

from hieropt.io.libra_instance import load_libra
from hieropt.model.timing import evaluate

BW = [200.0, 150.0, 100.0, 50.0]


def _libra(shared: Path, workload: str, communicator: str | None = None):
    return load_libra(shared / "libra/network/4d_network.yml", shared / workload,
                      communicator and shared / communicator,
                      shared / "libra/cost_model/4d_cost_model.yml", ["sum(bw) == 500"])


def test_forward_in_backward_header_takes_the_recompute_loop(shared_data):
    inst = _libra(shared_data, "astrasim1/Transformer_HybridParallel_Fwd_In_Bckwd.txt")
    assert inst.training_loop == "recompute"
    assert "loop recompute: the workload's header HYBRID_TRANSFORMER_FWD_IN_BCKWD" in (
        inst.mapping_note)
    # recompute = no_overlap + every layer's forward compute and collective once more
    plain = inst.model_copy(update={"training_loop": "no_overlap"})
    t_rec = evaluate(inst, BW).iteration_time_ns
    t_plain = evaluate(plain, BW).iteration_time_ns
    fwd = sum(layer.forward.compute_ns for layer in inst.workload.layers)
    assert t_rec > t_plain + fwd * (1 - 1e-12)


def test_libra_workloads_keep_no_overlap(shared_data):
    inst = _libra(shared_data, "libra/workload/GPT_3.txt", "libra/communicator/GPT_3_4d.yml")
    assert inst.training_loop == "no_overlap"
    assert "loop recompute" not in (inst.mapping_note or "")
