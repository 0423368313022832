"""What the sweeps keep and share between candidates gives the values of
computing everything afresh: the step's copied layers, the memory report per block kind, the
placements shared by plans with the same group sizes, the rows of unsolved candidates typed per
plan, the time model's phase classes, the shared design matrix and constraints, the time split; and
the co-design search's answer on small spaces is the one computed without these caches (the same
solved candidates, the same best value)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hieropt.io.instance import load_instance
from hieropt.model import terms
from hieropt.model.groups import instance_for, place_lowest, plan_groups
from hieropt.model.memory import memory, stage_activation_bytes, stage_memory
from hieropt.model.sends import base_group, placed_job
from hieropt.model.stages import stage_jobs
from hieropt.model.timing import build_time_model
from hieropt.model.traffic import phase_classes, phase_latency, phase_traffic
from hieropt.spec import Instance
from hieropt.spec.design import DesignMatrix
from hieropt.spec.space import constraint_for
from hieropt.studies.codesign.candidates import enumerate_candidates
from hieropt.studies.codesign.rows import base_row
from hieropt.studies.codesign.search import (
    COLUMNS,
    UnsolvedRows,
    codesign,
    issued_by_group_ns,
)
from hieropt.studies.explore.results import typed_row
from hieropt.workloads.llm.lower import stage_workload
from hieropt.workloads.llm.space import PlanChoices
from hieropt.workloads.llm.step import Op, build_step
from tests.codesign.spaces import space

from .tiny import params

PLANS = [
    params(),
    params(recompute="selective", sequence_parallel=True),
    params(recompute="full", zero_stage=3),
    params(tp=1, pp=4, dp=2, zero_stage=2),
    params(tp=4, pp=1, dp=2, zero_stage=1, recompute="full", sequence_parallel=True),
]


@pytest.mark.parametrize("p", PLANS)
def test_step_layers_are_plain_copies(p):
    step = build_step(p)
    names = [op.name for st in step.stages for op in st.ops]
    blocks = p.model.layers
    assert [n for n in names if n.startswith("attn")] == [f"attn{i + 1}" for i in range(blocks)]
    assert [n for n in names if n.startswith("mlp")] == [f"mlp{i + 1}" for i in range(blocks)]
    seen = set()
    for st in step.stages:
        for op in st.ops:
            # a layer is an Op with exactly its fields (a copy, not a view of its template's fields)
            assert Op(**{f.name: getattr(op, f.name) for f in dataclasses.fields(Op)}) == op
            assert set(vars(op)) == {f.name for f in dataclasses.fields(Op)}
            assert id(vars(op)) not in seen
            seen.add(id(vars(op)))
            if op.block is not None:
                assert op.name.endswith(str(op.block + 1))
            with pytest.raises(dataclasses.FrozenInstanceError):
                op.name = "x"


@pytest.mark.parametrize("p", PLANS)
def test_memory_report_equals_stage_by_stage(p):
    step = build_step(p)
    rep = memory(p, step)
    assert len(rep.stages) == p.plan.pp
    for r, m in enumerate(rep.stages):  # the per-plan activation cache gives each stage's own value
        assert m == stage_memory(p, step, r)
        assert m.activations_bytes == stage_activation_bytes(p, step, r)
    assert rep.peak is rep.peak  # computed once
    assert rep.peak == max(rep.stages, key=lambda m: (m.total_bytes, -m.stage))


def _many_plans():
    """Plans of every kind the generator builds: dense and MoE (dense first layers, every 2nd layer
    MoE), 1F1B, interleaved and uneven stage layers, every recompute mode and ZeRO stage."""
    from hieropt.io.llm import read_llm
    from hieropt.workloads.llm.params import MoE

    out = list(PLANS) + [params(arch={"layers": 6}, pp=4, tp=1, dp=2, stage_layers=(3, 1, 1, 1)),
                         params(arch={"layers": 8}, pp=2, virtual_stages=2, schedule="interleaved")]
    moe = {
        "moe": MoE(
            experts=4, top_k=2, expert_ffn_size=8, first_dense_layers=1, moe_layer_interval=2
        )
    }
    for rec in ("none", "selective", "full"):
        for ep in (1, 2):
            out.append(params(arch={**moe, "layers": 6}, pp=2, tp=1, dp=4, ep=ep, recompute=rec,
                              zero_stage=3 if ep == 2 else 1))
    for path, sets in (
        ("models/mixtral-8x7b.toml", ([], ["recompute=full", "zero_stage=2"])),
        (
            "models/megatron-1t.toml",
            (
                ["npus=4096", "dp=8"],
                ["npus=4096", "pp=16", "dp=32", "virtual_stages=2", "schedule=interleaved"],
            ),
        ),
    ):
        out += [read_llm(path, overrides) for overrides in sets]
    return out


def test_counted_layers_give_the_memory_of_the_built_step():
    plans = _many_plans()
    assert any(p.model.moe is not None for p in plans) and any(
        p.plan.virtual_stages > 1 for p in plans
    )
    for p in plans:
        step = build_step(p)
        counted, built = memory(p), memory(p, step)
        assert counted == built, p.plan
        assert counted.peak == built.peak and counted.fits == built.fits


def test_step_without_names_has_the_values_of_the_step():
    from hieropt.studies.codesign.candidates import plan_compute_ns, plan_volume_bytes

    def values(op):
        return (
            op.kind,
            op.flops,
            op.recompute_flops,
            op.dense_params,
            op.expert_params,
            op.comms,
            op.update_ns,
        )

    for p in _many_plans():
        named, plain = build_step(p), build_step(p, names=False)
        assert [[values(op) for op in st.ops] for st in named.stages] == \
            [[values(op) for op in st.ops] for st in plain.stages]
        assert [st.in_flight for st in named.stages] == [st.in_flight for st in plain.stages]
        for r in range(len(named.stages)):
            assert named.compute_ns(r) == plain.compute_ns(r) and named.update_ns(
                r
            ) == plain.update_ns(r)
        assert plan_compute_ns(p, named) == plan_compute_ns(p, plain)
        assert plan_volume_bytes(p, named) == plan_volume_bytes(p, plain)
        assert {op.name for st in plain.stages for op in st.ops} <= {
            "embed",
            "attn",
            "mlp",
            "moe",
            "output",
        }


def test_tiny_activations_by_hand():
    # tiny: n = s b = 4 x 2 = 8 tokens, h = 8, t = 2, a_t = 2 heads, q = kv: d = 2, 2 bytes, gated
    # FFN f_t = 8, no dropout; per block attention 2nhe/T + n(q_t + 2kv_t)e + n q_t e + a_t b s^2 e
    # = 256 + 128 + 64 + 128, FFN 2nhe + 2 n f_t e (gated) + n f_t e = 256 + 256 + 128; 2 blocks per
    # stage (pp = 2)
    p = params()
    step = build_step(p)
    per_block = (256 + 8 * (4 + 2 * 2) * 2 + 8 * 4 * 2 + 2 * 2 * 4 * 4 * 2) + (
        256 + 2 * 8 * 8 * 2 + 8 * 8 * 2
    )
    assert per_block == 1216
    # stage 1 holds min(m, p - 1) = 1 micro-batch; its output layer keeps 2nhe + n V_t logits_bytes
    # more
    out = 2 * 8 * 8 * 2 + 8 * 16 * p.precision.logits_bytes
    assert stage_activation_bytes(p, step, 1) == 2 * per_block + out


def test_placements_are_shared_per_group_sizes_as_copies():
    sp = space()
    enum = enumerate_candidates(sp)
    cands = list(enum.candidates())
    assert len(cands) == enum.count == 360
    for c in cands:
        sizes = tuple(d.npus for d in c.network.dims)
        assert c.placement == place_lowest(sizes, plan_groups(c.params))
        assert c.id.endswith(
            " | " + " ".join(f"{k} {'x'.join(map(str, v))}" for k, v in c.placement.items())
        )
    a, b = cands[0], next(c for c in cands[1:] if c.placement == cands[0].placement)
    assert a.placement is not b.placement  # each candidate owns its dict
    ids = [(c.lower_bound, c.id) for c in cands]
    assert ids == sorted(ids)


def test_unsolved_rows_equal_typed_rows():
    sp = space(objective="performance_per_cost")
    rows = UnsolvedRows(sp, "abc")
    for c in list(enumerate_candidates(sp).candidates())[::7]:
        for status, message in (("pruned", f"lower bound {c.lower_bound:.10g} >= incumbent 1"),
                                ("infeasible", "its time bound exceeds the time target")):
            slow = typed_row(
                {**base_row(sp, c), "status": status, "message": message, "space_hash": "abc"},
                COLUMNS,
            )
            fast = rows.row(c, status, message)
            assert fast == slow and list(fast) == list(slow)
            assert all(type(fast[k]) is type(slow[k]) for k in slow)


def _instances():
    """Step instances of LLM stages on a few networks and placements, with latency and named groups,
    and the four-dimension GPT-3 instance (no named groups)."""
    from hieropt.spec import CostClass, CostModel, Dimension, Network

    cost = CostModel(classes={"A": CostClass(link_usd_per_gbps=1.0)})
    out = [load_instance("instances/gpt3-4d.toml")]
    for p in PLANS:
        for dims in ((2, 4), (8,), (4, 2), (2, 2, 2)):
            net = Network(
                dims=tuple(
                    Dimension(
                        block="Ring" if k % 2 else "FullyConnected",
                        npus=n,
                        cost_class="A",
                        latency_ns=50.0 * k,
                    )
                    for k, n in enumerate(dims)
                )
            )
            try:
                out.append(
                    instance_for(
                        p, net, cost, constraints=(constraint_for("sum(bw) == 10", len(dims)),)
                    )
                )
            except Exception:  # a placement the lowest rule cannot make
                continue
    assert len(out) > 10
    return out


def test_phase_classes_give_the_time_model_of_every_row():
    from hieropt.cache import use

    with use():  # (one cache, as a sweep's)
        for inst in _instances():
            table = inst.workload.table
            tr, la = phase_traffic(inst), phase_latency(inst)
            classes = phase_classes(table)
            assert classes is phase_classes(table)  # kept per table
            first, inverse = classes
            L = table.size_bytes.shape[0]
            rows = np.concatenate([tr, la], axis=2).reshape(3 * L, -1)
            assert np.array_equal(rows, rows[first][inverse])  # the rows of a class are equal
            assert list(first) == sorted(first)  # classes in order of first appearance
            b1, b2 = terms.TermBuilder(inst.network.n_dims), terms.TermBuilder(inst.network.n_dims)
            r1, r2 = terms.phase_refs(b1, tr, la), terms.phase_refs(b2, tr, la, classes)
            assert np.array_equal(r1.k, r2.k) and np.array_equal(r1.a, r2.a)
            assert b1.keys == b2.keys and b1.peaks == b2.peaks and b1.largest == b2.largest
            assert b1.collectives == b2.collectives
            assert all(np.array_equal(x, y)
                       for x, y in zip(b1.bytes + b1.latency, b2.bytes + b2.latency, strict=True))
            # (pp > 1: every distinct stage's collectives, the stages split by the boundaries their
            # sends cross; the first's are b1's)
            total = 0
            for job in stage_jobs(placed_job(inst, inst.jobs[0])):
                b = terms.TermBuilder(inst.network.n_dims)
                terms.phase_refs(b, phase_traffic(inst, job), phase_latency(inst, job))
                total += b.collectives
            assert build_time_model(inst).n_collectives == total >= b1.collectives


def test_traffic_by_classes_equals_traffic_by_rows(monkeypatch):
    from hieropt.cache import use
    from hieropt.model import traffic

    insts = _instances()
    with use():
        by_class = [(phase_traffic(i), phase_latency(i)) for i in insts]
    monkeypatch.setattr(traffic, "CLASS_ROWS", 0)
    with use():  # (a new cache: nothing kept, every row computed)
        for inst, (tr, la) in zip(insts, by_class, strict=True):
            assert phase_classes(inst.workload.table) is None
            assert np.array_equal(phase_traffic(inst), tr)
            assert np.array_equal(phase_latency(inst), la)
            assert not tr.flags.writeable and not la.flags.writeable
    assert any(la.any() for _, la in by_class) and all(tr.any() for tr, _ in by_class)


def _same_model(a, b) -> bool:
    return (
        a.constant_ns == b.constant_ns
        and a.nodes == b.nodes
        and a.dimension_mode == b.dimension_mode
        and a.n_collectives == b.n_collectives
        and all(
            np.array_equal(getattr(a, f), getattr(b, f))
            for f in ("terms_bytes", "terms_latency_ns", "term_weights", "node_weights")
        )
    )


def test_time_models_kept_by_their_inputs():
    from hieropt.cache import use
    from hieropt.model import timing
    from hieropt.spec import CostClass, CostModel, Dimension, Network

    insts = _instances()
    kept = [build_time_model(i) for i in insts]
    with use():  # (a new cache: nothing kept, every model built afresh)
        for inst, tm in zip(insts, kept, strict=True):
            fresh = timing._shared_time_model(inst)  # (past the per-instance memo)
            assert fresh is not tm and _same_model(fresh, tm)
            if timing._model_key(inst) is not None:
                assert not tm.terms_bytes.flags.writeable
    # the same plan on Ring / FullyConnected / Switch dimensions of equal sizes and other prices:
    # one model under LIBRA's convention (every group the NPU's whole bandwidth); other latency or
    # sizes: another; by the links a partial group reaches, other blocks: another
    p, cost = (
        PLANS[0],
        CostModel(
            classes={
                "A": CostClass(
                    link_usd_per_gbps=1.0, switch_usd_per_gbps=2.0, nic_usd_per_gbps=3.0
                ),
                "B": CostClass(link_usd_per_gbps=5.0),
            }
        ),
    )

    def inst(blocks, cls="A", latency=0.0, sizes=(2, 4), rule="whole"):
        net = Network(dims=tuple(Dimension(block=b, npus=n, cost_class=cls, latency_ns=latency)
                                 for b, n in zip(blocks, sizes, strict=True)))
        return instance_for(p, net, cost, group_bandwidth=rule)

    with use():  # (one cache, as a sweep's)
        a = build_time_model(inst(("Ring", "Ring")))
        assert build_time_model(inst(("FullyConnected", "Switch"))) is a
        assert build_time_model(inst(("Ring", "Ring"), "B")) is a
        other = build_time_model(inst(("Ring", "Ring"), latency=100.0))
        assert other is not a and other.terms_latency_ns.any() and not a.terms_latency_ns.any()
        # other step counts
        assert build_time_model(inst(("Ring", "FullyConnected"), latency=100.0)) is not other
        assert build_time_model(inst(("Ring", "Ring"), sizes=(4, 2))) is not a
        # (tp 2 x dp 2 x pp 2 on 2 x 4: tp fills the first dimension, whatever its block; dp and
        # pp share the second, where a Ring gives dp a path, a Switch its port)
        links = build_time_model(inst(("Ring", "Ring"), rule="links"))
        assert build_time_model(inst(("FullyConnected", "Ring"), rule="links")) is links
        assert build_time_model(inst(("Ring", "Switch"), rule="links")) is not links
    assert build_time_model(inst(("Ring", "Ring"))) is not a  # (outside it: a call of its own)


def test_kept_arrays_are_bounded():
    from hieropt.cache import Same, Table

    kept, tables = Table(count=3, elements=10), [object() for _ in range(5)]
    for i, t in enumerate(tables):
        kept.put((Same(t), i), np.zeros(2))
    found = [kept.get((Same(t), i)) is not None for i, t in enumerate(tables)]
    assert found == [False, False, True, True, True]
    assert kept.get((Same(tables[4]), 3)) is None  # (the key and the table)
    assert kept.get((Same(object()), 4)) is None
    big = np.zeros(50)
    assert kept.put((Same(tables[0]), 9), big) is big
    assert len(kept.items) == 1 and kept.size == 50  # the newest is kept
    assert kept.get((Same(tables[0]), 9)) is big


def test_paused_gc_restores_the_collector():
    import gc

    from hieropt.studies.explore.executors import paused_gc

    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()
    with paused_gc(False):
        assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # (left as it was)
    finally:
        gc.enable()


def test_design_matrix_and_constraints_shared():
    from hieropt.cache import use

    with use():  # (one cache, as a sweep's)
        c1 = constraint_for("sum(bw) == 500", 3)
        assert constraint_for("sum(bw) == 500", 3) is c1
        with pytest.raises(Exception, match="bw"):
            constraint_for("sum(bw) == 500 + bw[7]", 3)
        with pytest.raises(Exception, match="bw"):  # (errors are not kept: raised again)
            constraint_for("sum(bw) == 500 + bw[7]", 3)
        a = load_instance("instances/gpt3-4d.toml")
        b = a.model_copy(update={"name": "other"})
        assert Instance.model_validate(dict(b)).design_matrix is a.design_matrix
        fresh = DesignMatrix.of(a.constraints, a.bounds_or_default)
        for f in ("A", "lower", "upper", "bw_lower", "bw_upper"):
            assert np.array_equal(getattr(a.design_matrix, f), getattr(fresh, f))


def _split_by_layer(inst, bw):
    """The communication per group of :func:`issued_by_group_ns`, phase by phase and layer by layer
    in Python (its former code), of the slowest stage at ``bw``."""
    from hieropt.model.timing import evaluate
    from hieropt.spec import Collective

    # (a plan with pp > 1: the slowest stage at bw, each send on the dimensions it crosses; else
    # the workload)
    slowest = evaluate(inst, bw).slowest_stage
    job = next(j for j in stage_jobs(placed_job(inst, inst.jobs[0]))
               if slowest is None or j.workload.name == slowest)
    st, table = inst.step, job.workload.table
    per = phase_traffic(inst, job) / bw + phase_latency(inst, job)
    seq = np.array(
        [
            [
                g is not None
                and job.workload.algorithm(g) == "sequential"
                and k is not Collective.P2P
                for g, k in zip(gs, ks, strict=True)
            ]
            for gs, ks in zip(table.group, table.collective, strict=True)
        ],
        dtype=bool,
    )
    # (a sequential group's dimensions add up)
    coll = np.where(seq, per.sum(axis=-1), per.max(axis=-1))
    by_group: dict[str, float] = {}
    for j, times in ((0, st.microbatches), (1, st.microbatches), (2, 1)):
        for g, t in zip(table.group[:, j], coll[:, j], strict=True):
            if t > 0:
                name = base_group(g) or ("tp" if j < 2 else "dp")
                by_group[name] = by_group.get(name, 0.0) + times * float(t)
    return by_group


def test_issued_by_group_equals_the_layer_loop():
    rng = np.random.default_rng(3)
    for inst in _instances()[1:]:
        for _ in range(3):
            bw = rng.uniform(0.5, 20.0, inst.network.n_dims)
            assert issued_by_group_ns(inst, bw) == _split_by_layer(inst, bw)


def test_stage_workload_instances_share_the_workload():
    from hieropt.cache import use

    with use():  # (one cache, as a sweep's)
        p = PLANS[0]
        assert stage_workload(p) is stage_workload(p)


def test_serial_settles_the_tail_like_the_admission_test(tmp_path):
    """The serial search settles every candidate after its first pruned one at once: on a min-cost
    space (pruned and infeasible candidates interleaved) the same statuses and messages, row for
    row, as taking each candidate through the admission test gives, and a resumed run reads them all
    back."""
    import hashlib
    import json

    sp = space(objective="min_cost", max_iteration_time_ns=1.7e6)
    made: list[dict] = []
    r = codesign(sp, workers=1, on_row=made.append)
    rows = [(x["id"], x["status"], x["message"]) for x in made]
    assert [s for _, s, _ in rows].count("infeasible") == 210 and [s for _, s, _ in rows].count(
        "pruned"
    ) == 149
    assert r.best.id == f"{PLAN1.removesuffix(' ovl')} | a:FC2 a:FC4 | tp 1x1 dp 2x4 pp 1x1"
    assert r.best.objective_value == pytest.approx(24.0, rel=1e-12)
    # rows without caches (their ids name cp: "tp1 cp1 pp1 ...")
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16] == "fb8bc923f6227f7e"
    out = tmp_path / "rows.csv"
    first: list[dict] = []
    codesign(sp, workers=1, out=out, on_row=first.append)
    again: list[dict] = []
    r = codesign(sp, workers=1, out=out, on_row=again.append)
    assert r.solved == 0 and r.resumed == 360
    assert [(x["id"], x["status"], x["message"]) for x in again] == \
        [(x["id"], x["status"], x["message"]) for x in first] == rows


# the answers without the caches on the spaces of test_codesign_search: the solved
# candidates (shape | placement, all of the best plan) and the best
TWO = {"2x4": ("a:FC2 a:FC4", "a:FC2 a:R4", "a:FC2 b:SW4", "a:R2 a:FC4", "a:R2 a:R4", "a:R2 b:SW4"),
       "4x2": ("a:FC4 a:FC2", "a:FC4 a:R2", "a:FC4 b:SW2", "a:R4 a:FC2", "a:R4 a:R2", "a:R4 b:SW2")}
LOWEST = [f"{sh} | tp 1x1 dp {d} pp 1x1" for d, shapes in TWO.items() for sh in shapes] + [
    f"{sh} | tp 1 dp 8 pp 1" for sh in ("a:FC8", "a:R8", "b:SW8")]
PPC = [
    f"{sh} | tp 2x1 dp {d} pp 1x1"
    for d, shapes in (("1x4", TWO["2x4"][:3]), ("2x2", TWO["4x2"][:3]))
    for sh in shapes
] + ["a:FC8 | tp 2 dp 4 pp 1"]
ALL = PPC + [
    f"{sh} | tp 1x2 dp {d} pp 1x1"
    for d, shapes in (("2x2", TWO["2x4"][:3]), ("4x1", TWO["4x2"][:3]))
    for sh in shapes
]
PLAN1 = "tp1 cp1 pp1 dp8 ep1 z0 nore nosp v1 mb1 ovl"
PLAN2 = "tp2 cp1 pp1 dp4 ep1 z0 nore nosp v1 mb1"


def _concurrent(**kw):
    """:func:`space` with every group on LIBRA's concurrent algorithm and LIBRA's convention for
    partial groups (every group the NPU's whole bandwidth; the answers of the code before were
    found under them)."""
    from tests.codesign.spaces import SLOW

    algos = tuple((g, "concurrent") for g in ("dp", "pp", "tp"))
    return space(base=SLOW.model_copy(update={"plan": SLOW.plan.model_copy(
        update={"collective_algorithms": algos})}), group_bandwidth="whole", **kw)


@pytest.mark.parametrize("case", ["lowest", "ppc", "all"])
def test_codesign_answers_on_small_spaces_are_pinned(case):
    if case == "lowest":
        sp = _concurrent(
            plans=PlanChoices(
                tp=(1, 2, 4),
                pp=(1, 2),
                zero_stage=(0, 3),
                recompute=("none", "full"),
                overlap_grad_reduce=(False, True),
            )
        )
        # (a:FC8 and a:FC2 a:FC4 tie exactly, 1,352,212 ns for $24: the 1-dimension network
        # first, hieropt.studies.explore.run.rank_rows)
        n, plan, solved, best, value = (
            720,
            PLAN1,
            LOWEST,
            "a:FC8 | tp 1 dp 8 pp 1",
            1352212.0,
        )
    elif case == "ppc":
        sp = _concurrent(objective="performance_per_cost")
        n, plan, solved, best, value = 360, PLAN2, PPC, "a:FC8 | tp 2 dp 4 pp 1", 32512704.0
    else:
        sp = _concurrent(
            mapping_rule="all_placements",
            plans=PlanChoices(tp=(2, 4), pp=(1, 2), recompute=("none", "full")),
        )
        n, plan, solved, best, value = 240, PLAN2, ALL, "a:FC8 | tp 2 dp 4 pp 1", 1354696.0
    rows: list[dict] = []
    r = codesign(sp, workers=1, on_row=rows.append)
    assert len(rows) == n and r.solved + r.settled == n
    assert sorted(x["id"] for x in rows if x["status"] != "pruned") == sorted(
        f"{plan} | {s}" for s in solved
    )
    assert r.best.id == f"{plan} | {best}"
    assert r.best.objective_value == pytest.approx(value, rel=1e-12)
