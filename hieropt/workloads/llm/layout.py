"""Which transformer blocks each pipeline stage (and each of its model chunks) holds.

- ``stage_layers`` given (e.g. Llama 3 405B's 7, 8 x 14, 7; Llama Team 2024, arXiv 2407.21783,
  §3.3.2): stage r holds that many blocks; with the interleaved schedule (v chunks per stage;
  Narayanan et al. 2021, arXiv 2104.04473, §2.2.2) they are split into v chunks as evenly as
  possible, the first chunks taking the extra block, except on the first stage, whose short chunks
  are its first ones: the embedding stands for a block there, as the output layer does in the last
  stage's short last chunks (Megatron-LM's ``account_for_embedding_in_pipeline_split`` and
  ``account_for_loss_in_pipeline_split``). A chunk may so hold no block: Llama 3 405B's 7, 8 x 14, 7
  over 8 chunks, "the first model chunk on the first stage has only the embedding, and the last
  model chunk on the last stage has only output projection and loss calculation" (§3.3.2).
- not given, and the layers divide evenly over the pp x v chunks: L / (pp v) blocks per chunk
  (Megatron-LM's default).
- otherwise the stages are **balanced** (:func:`balanced_stage_layers`): each stage's compute per
  micro-batch, n_r blocks x a block's FLOPs plus the output layer's on the last stage, has the
  smallest possible maximum (every stage holding at least v blocks); among equal stages the extra
  blocks go to the later stages, which keep fewer micro-batches in flight (1F1B: p - r), so the
  first stage, whose activations and embedding weigh most, gets the fewest. 126 layers on 16 stages
  give 7, 8 x 14, 7.

Model chunk c = j p + r is stage r's j-th chunk (the interleaved schedule's round-robin), blocks
numbered in model order over c = 0, 1, ...

**Recomputed blocks** (:func:`recomputed_blocks`): with ``full`` recompute and ``recompute_layers``
N, the first min(N, n) of a chunk's n blocks, as Megatron-LM's block method checkpoints the first
``recompute_num_layers`` layers of each TransformerBlock (one per pipeline stage, one per virtual
chunk with interleaving: megatron/core/transformer/transformer_block.py, ``_checkpointed_forward``;
its rule of skipping layers whose input needs no gradient under FP8 is not modelled); every block
without ``recompute_layers``, none without ``full`` recompute.
"""

from __future__ import annotations

from itertools import accumulate

from .counts import attention_flops, ffn_flops, moe_flops, output_flops, shape
from .params import LLMParams


def _block_flops(p: LLMParams, moe: bool) -> float:
    """FLOPs of one block per micro-batch (forward, input and weight gradient), an MoE block or a
    dense one."""
    ffn = moe_flops(p) if moe else ffn_flops(p, shape(p).f_t)
    return float(sum(attention_flops(p)) + sum(ffn))


def balanced_stage_layers(p: LLMParams) -> tuple[int, ...]:
    """Blocks per stage with the smallest largest stage compute (module docstring); a block's FLOPs
    are the model's mean block (exact for dense models, whose blocks are equal).

    Raises:
        ValueError: fewer blocks than pp x v (each chunk needs one).
    """
    pl, L = p.plan, p.model.layers
    v, pp = pl.virtual_stages, pl.pp
    if L < pp * v:
        raise ValueError(
            f"plan.pp: {L} layers cannot fill pp x virtual_stages = {pp} x {v} chunks; fix: "
            "use fewer "
            "stages or chunks"
        )
    n_moe = sum(1 for i in range(L) if p.model.is_moe(i))
    kinds = [(n_moe, True), (L - n_moe, False)]
    block = sum(n * _block_flops(p, moe) for n, moe in kinds if n) / L
    extra = [0.0] * pp
    extra[-1] += float(sum(output_flops(p)))
    n = [v] * pp
    # one block at a time to the stage that stays the lightest (later ones on ties)
    for _ in range(L - pp * v):
        r = min(range(pp), key=lambda r: ((n[r] + 1) * block + extra[r], -r))
        n[r] += 1
    return tuple(n)


def stage_layer_counts(p: LLMParams) -> tuple[int, ...]:
    """Blocks per stage: ``stage_layers``, the even split, or :func:`balanced_stage_layers`."""
    pl, L = p.plan, p.model.layers
    if pl.stage_layers is not None:
        return tuple(pl.stage_layers)
    if L % (pl.pp * pl.virtual_stages) == 0:
        return (L // pl.pp,) * pl.pp
    return balanced_stage_layers(p)


def split_chunks(n: int, v: int, first_stage: bool = False) -> list[int]:
    """``n`` blocks of a stage over its ``v`` chunks, as evenly as possible, the first chunks taking
    the extra; on the ``first_stage`` the last ones (its first chunk holds the embedding)."""
    out = [n // v + (1 if j < n % v else 0) for j in range(v)]
    return out[::-1] if first_stage else out


def chunk_share(p: LLMParams) -> float | None:
    """The largest model chunk's blocks over the fullest stage's, when the interleaved schedule's
    chunks are not all equal (:attr:`hieropt.spec.StepSchedule.chunk_share`: the fill and drain
    run at that chunk's pace); None for 1F1B and for equal chunks (1 / v). 5 blocks per stage in 4
    chunks (2, 1, 1, 1): 2 / 5. Llama 3 405B's 7, 8 x 14, 7 blocks in 8 chunks: 1 / 8 (None)."""
    v = p.plan.virtual_stages
    if v == 1:
        return None
    counts = stage_layer_counts(p)
    chunk = max(max(split_chunks(n, v, r == 0)) for r, n in enumerate(counts))
    stage = max(counts)
    return None if chunk * v == stage else chunk / stage


def stage_chunks(p: LLMParams) -> list[list[range]]:
    """Blocks of every chunk of every stage: ``out[r][j]`` = the 0-based blocks of stage r's j-th
    chunk, model chunk j p + r (module docstring)."""
    pl = p.plan
    v, pp = pl.virtual_stages, pl.pp
    sizes = [split_chunks(n, v, r == 0) for r, n in enumerate(stage_layer_counts(p))]
    order = [sizes[c % pp][c // pp] for c in range(pp * v)]  # chunk sizes in model order
    ends = list(accumulate(order))
    return [
        [range(ends[j * pp + r] - order[j * pp + r], ends[j * pp + r]) for j in range(v)]
        for r in range(pp)
    ]


def recomputed_blocks(p: LLMParams, blocks: range) -> int:
    """How many of a chunk's ``blocks`` full recompute recomputes: its first min(recompute_layers,
    len(blocks)) (module docstring), all of them without ``recompute_layers``, none unless the
    plan's recompute is ``full``."""
    pl = p.plan
    if pl.recompute != "full":
        return 0
    n = len(blocks)
    return n if pl.recompute_layers is None else min(pl.recompute_layers, n)


def partial_recompute(p: LLMParams) -> bool:
    """Whether some blocks are recomputed and others not, or may be: ``full`` recompute with
    ``recompute_layers`` given."""
    return p.plan.recompute == "full" and p.plan.recompute_layers is not None


def unequal_chunks(p: LLMParams) -> int | None:
    """The pp x v chunk count of an interleaved plan ``p`` whose layers it does not divide and that
    states no ``stage_layers`` (48 layers at pp 4 x v 5), else None. Megatron-LM's standard flags
    (``--num-layers-per-virtual-pipeline-stage``, NeMo's ``virtual_pipeline_model_parallel_size``)
    need the layers to divide into the chunks and refuse such a plan; hieropt times its own
    balanced layout (module docstring), which Megatron-Core runs only from a layout written per
    chunk (``--pipeline-model-parallel-layout``). ``codesign`` counts such plans invalid unless
    ``custom_layouts = true``; ``validate`` notes them."""
    pl = p.plan
    chunks = pl.pp * pl.virtual_stages
    if pl.virtual_stages < 2 or pl.stage_layers is not None or p.model.layers % chunks == 0:
        return None
    return chunks


def unequal_chunks_note(p: LLMParams) -> str | None:
    """The note on an interleaved plan Megatron-LM's standard flags refuse
    (:func:`unequal_chunks`), naming its fixes; None for another plan."""
    chunks = unequal_chunks(p)
    if chunks is None:
        return None
    pl = p.plan
    return (f"pp {pl.pp} x virtual_stages {pl.virtual_stages} = {chunks} chunks do not divide the "
            f"{p.model.layers} layers: Megatron-LM's standard flags refuse this plan "
            "(--num-layers-per-virtual-pipeline-stage needs equal chunks), and hieropt times its "
            f"own balanced layout (stages {list(stage_layer_counts(p))}, chunks of unequal layer "
            "counts), which Megatron-Core runs only from a layout written per chunk "
            "(--pipeline-model-parallel-layout); choose a virtual_stages whose chunks divide the "
            "layers, or state the layout as stage_layers (codesign counts such plans invalid "
            "unless custom_layouts = true)")


__all__ = ["recomputed_blocks", "partial_recompute",
           "balanced_stage_layers", "stage_layer_counts", "split_chunks", "stage_chunks",
           "chunk_share", "unequal_chunks", "unequal_chunks_note"]
