"""The enumerator's counts against hand counts, and the exact duplicates it prunes."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError
from hieropt.studies.explore import candidates, enumerate_shapes, load_space, shape_id

from .util import write_space


def _ids(space, prune=False):
    return [c.id for c in candidates(space, prune=prune).candidates]


def test_shape_count_small_n_by_hand(tmp_path):
    # Hand count, 16 NPUs, level a (Ring or FullyConnected, 2..4 NPUs, <= 2 dims), level b (one
    # Switch, 2..16):
    #   2 dims (a, b):    a = 2 (b = 8) or a = 4 (b = 4)                       -> 2 sizes x 2 blocks
    # = 4
    #   3 dims (a, a, b): (2,2,4), (2,4,2), (4,2,2); (4,4,1) has b = 1 < 2     -> 3 sizes x 2 x 2
    # blocks = 12
    #   total 16 shapes.
    space = load_space(write_space(tmp_path))
    shapes = enumerate_shapes(space)
    assert len(shapes) == 16
    assert sum(len(s) == 2 for s in shapes) == 4
    assert len({shape_id(space, s) for s in shapes}) == 16  # ids are unique
    assert "a:R2 a:FC4 b:SW2" in {shape_id(space, s) for s in shapes}
    # With at most 4 NPUs inside one unit of level a: the 2-dim shapes stay (4), of the 3-dim ones
    # only (2,2,4): 4.
    limited = load_space(write_space(tmp_path, "l.toml", a_extra="max_npus_within = 4"))
    assert len(enumerate_shapes(limited)) == 8
    # Dimension counts: exactly 3 dimensions -> the 12 shapes (a, a, b).
    three = load_space(write_space(tmp_path, "t.toml", dims="3"))
    assert len(enumerate_shapes(three)) == 12


def test_placement_count_by_hand(tmp_path):
    # all_placements with TP 4 on the 16 shapes above: TP groups g (g_d divides p_d, product 4) per
    # size pattern:
    #   (2,8): (1,4) (2,2) = 2;  (4,4): (1,4) (2,2) (4,1) = 3               -> 5 x 2 blocks = 10
    #   (2,2,4): (1,1,4) (1,2,2) (2,1,2) (2,2,1) = 4; (2,4,2): (1,2,2) (1,4,1) (2,1,2) (2,2,1) = 4;
    #   (4,2,2): (1,2,2) (2,1,2) (2,2,1) (4,1,1) = 4                        -> 12 x 4 blocks = 48
    #   total 58 candidates.
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    enum = candidates(space, prune=False)
    assert enum.placements == len(enum.candidates) == 58
    assert "a:R2 a:R2 b:SW4 | tp 1x2x2" in _ids(space)


def test_pruned_count_by_hand(tmp_path):
    # tp_lowest, TP 2, no latency. Ring and FullyConnected at one level have the same price and no
    # latency: for groups that fill their dimensions the model cannot tell them apart, so the block
    # variants of a size pattern are one problem; a group on part of a dimension gets the links it
    # reaches there (Ring 4: TP 2 a path, B/2, DP's pair of stride 2 a shared cycle, B/2;
    # FullyConnected 4: 1 of 3 links each, B/3), so there the blocks differ. The size patterns:
    #   (2,8): TP on a, DP on b                                            -> 1 class
    #   (4,4): TP 2 of a's 4, DP 2 x 4: R4 and FC4 differ                  -> 2 classes
    #   (2,2,4), (2,4,2): TP fills the first a, DP the second a and b      -> 1 class each
    #   (4,2,2): TP 2 and DP 2 share the first a: R4 and FC4 differ        -> 2 classes
    #   total 7 of the 16 shapes.
    space = load_space(write_space(tmp_path))
    enum = candidates(space)
    assert len(enum.candidates) == 7 and enum.placements == 16 and enum.pruned == 9
    assert sorted(enum.equivalents["a:R2 b:SW8"]) == ["a:FC2 b:SW8"]
    assert sorted(enum.equivalents["a:R2 a:R2 b:SW4"]) == ["a:FC2 a:FC2 b:SW4", "a:FC2 a:R2 b:SW4",
                                                           "a:R2 a:FC2 b:SW4"]


def test_order_symmetry_of_identical_adjacent_dimensions(tmp_path):
    # Data parallel only (TP 1), 64 NPUs, Ring only at level a: every collective spans the two a
    # dimensions fully, so their order (and the split of their product) does not matter: a run of
    # them is one dimension of their product. Classes with 3 dimensions by the product of the a
    # sizes: 4 {2x2}, 8 {2x4, 4x2}, 16 {2x8, 8x2, 4x4}, 32 {4x8, 8x4}; with 2 dimensions: a = 2, 4,
    # 8.
    space = load_space(write_space(tmp_path, npus=64, tp=1, a_blocks='["Ring"]', a_npus="[2, 8]"))
    enum = candidates(space)
    assert len(enum.candidates) == 7
    assert enum.equivalents["a:R2 a:R4 b:SW8"] == ("a:R4 a:R2 b:SW8",)
    assert sorted(enum.equivalents["a:R2 a:R8 b:SW4"]) == ["a:R4 a:R4 b:SW4", "a:R8 a:R2 b:SW4"]
    # With TP 2 on the lowest dimension, the first a dimension carries TP traffic and the second
    # does not: the order matters (4x2: TP takes 2 of the first 4) and both orders are solved.
    tp2 = load_space(
        write_space(tmp_path, "tp2.toml", npus=64, tp=2, a_blocks='["Ring"]', a_npus="[2, 8]")
    )
    kept = _ids(tp2, prune=True)
    assert "a:R2 a:R4 b:SW8" in kept and "a:R4 a:R2 b:SW8" in kept


def test_relabelling_symmetry_of_placements(tmp_path):
    # all_placements, TP 4 on a:2 x a:2 x b:4: TP (1,2,2) and (2,1,2) differ only by swapping the
    # two identical a dimensions (with their traffic): the same problem, solved once.
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements", a_blocks='["Ring"]'))
    enum = candidates(space)
    assert "a:R2 a:R2 b:SW4 | tp 2x1x2" in enum.equivalents["a:R2 a:R2 b:SW4 | tp 1x2x2"]
    assert "a:R2 a:R2 b:SW4 | tp 2x1x2" not in {c.id for c in enum.candidates}


def test_latency_tells_blocks_apart(tmp_path):
    # With a per-step latency, a Ring (p - 1 steps) and a FullyConnected (1 step) are different
    # problems when the groups span more than 2 NPUs of them (TP 4 on a:4; on a group of 2 both take
    # one step per phase).
    space = load_space(write_space(tmp_path, tp=4, a_extra="latency_ns = 500"))
    ids = _ids(space, prune=True)
    assert "a:R4 b:SW4" in ids and "a:FC4 b:SW4" in ids


def test_no_duplicate_keys_among_kept(tmp_path):
    from hieropt.studies.explore import build_instance, problem_key

    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    enum = candidates(space)
    keys = [problem_key(build_instance(space, c)) for c in enum.candidates]
    assert len(set(keys)) == len(keys)
    assert len(enum.candidates) + sum(len(v) for v in enum.equivalents.values()) == enum.placements


def test_no_shape_fits(tmp_path):
    # 15 = 3 x 5: b would have to be 5
    space = load_space(write_space(tmp_path, npus=15, tp=1, a_npus="[2, 4]"))
    with pytest.raises(InputError, match="no shape of 2 to 3 dimensions"):
        candidates(load_space(write_space(tmp_path, "x.toml", npus=7, tp=1)))
    assert len(enumerate_shapes(space)) == 2  # a:R3 b:SW5, a:FC3 b:SW5


def test_a_required_key_written_inside_a_table_is_named_as_such(tmp_path):
    """``levels = ...`` after ``[mapping]`` belongs to that table in TOML: the error says so (not
    only "levels: missing")."""
    path = tmp_path / "space.toml"
    path.write_text(
        'npus = 64\nobjective = "performance"\ntraining_loop = "no_overlap"\n[mapping]\n'
        'rule = "tp_lowest"\nlevels = 5\n',
        encoding="utf-8",
    )
    with pytest.raises(
        InputError, match=r"levels: missing at the top level \(it is inside \[mapping\]"
    ) as e:
        load_space(path)
    assert "move 'levels' above the first [table] header" in str(e.value)
    path.write_text("npus = 64\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"levels: missing; fix: give one \[\[levels\]\] table per level"
    ):
        load_space(path)
