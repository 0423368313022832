"""Several cluster sizes, one of which no network shape holds: that size is skipped with a note
naming it and why, the others searched; only when no size with a fitting plan has a shape is it
an error, naming the sizes and the fix. A fixed network takes ``--sizes`` of its own NPU count and
refuses other sizes, naming both.

The tiny space limited to one dimension (``dims = [1, 1]``) has shapes of 2 to 8 NPUs (each level
holds 2 to 8): 8 NPUs are held (``a:R8``, ``a:FC8``, ``b:SW8``), 16 and 32 are not, though plans fit
on them (TP 1 x PP 1 x DP 16, ...)."""

from __future__ import annotations

import json

import pytest

from hieropt.errors import InputError
from hieropt.studies.codesign.search import codesign
from hieropt.studies.sizing import size_outcomes, sized_space
from hieropt.workloads.llm.space import PlanChoices
from tests.cli.util import runner
from tests.codesign.spaces import SPACE, space, write_space_files

WHY16 = ("no shape of 1 to 1 dimensions multiplies to 16 NPUs within the levels' sizes and "
         "limits; fix: widen the space's dims (now [1, 1]), the levels' npus ranges or max_dims, "
         "or their limits")
PLANS = PlanChoices(tp=(1, 2), pp=(1,), zero_stage=(0,), recompute=("none",))


def test_a_size_without_a_shape_is_skipped_with_a_note():
    r = codesign(space(npus=(8, 16), max_dims=1, plans=PLANS), workers=1)
    alone = codesign(space(npus=8, max_dims=1, plans=PLANS), workers=1)
    assert r.enumeration.no_shape == {16: WHY16}
    assert sorted(n for _, net in r.enumeration.shapes for n in [net.npus_total]) == [8, 8, 8]
    assert r.best.npus == 8 and r.best.objective_value == alone.best.objective_value
    assert [e["npus"] for e in r.by_npus()] == [8]
    assert r.to_dict()["sizes_without_shape"] == [{"npus": 16, "reason": WHY16}]
    notes = {o.npus: o.note for o in size_outcomes(r).sizes}
    assert notes == {8: None, 16: f"skipped: no network shape holds it ({WHY16})"}
    assert alone.enumeration.no_shape == {} and alone.to_dict()["sizes_without_shape"] == []


def test_no_size_with_a_shape_is_an_error_naming_the_sizes():
    with pytest.raises(InputError) as e:
        codesign(space(npus=(16, 32), max_dims=1, plans=PLANS), workers=1)
    assert str(e.value) == (
        "tiny: levels: no shape of 1 to 1 dimensions multiplies to any of the cluster sizes 16, "
        "32 NPUs (those with a plan that fits) within the levels' sizes and limits; fix: widen "
        "the space's dims (now [1, 1]), the levels' npus ranges or max_dims, or their limits; or "
        "list cluster sizes the levels can hold "
        "(npus, --sizes)")
    with pytest.raises(InputError) as e:  # one size: the error of that size, as before
        codesign(space(npus=16, max_dims=1, plans=PLANS), workers=1)
    assert str(e.value) == f"tiny: levels: {WHY16}"


def test_the_command_skips_the_size_and_names_it(tmp_path):
    path = write_space_files(tmp_path, SPACE.replace("dims = [1, 2]\n", "dims = [1, 1]\n")
                  .replace("tp = [1, 2, 4]\npp = [1, 2]\n",
                           "tp = [1, 2]\npp = [1]\nmicro_batch_size = [1]\n"))
    r = runner.invoke(app(), ["codesign", str(path), "--sizes", "8,16", "--workers", "1"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert ("note: 16 NPUs skipped: no shape of 1 to 1 dimensions multiplies to 16 NPUs" in text)
    assert "skipped: no network shape holds it" in text  # (the sizes table's row of 16)
    r = runner.invoke(app(), ["codesign", str(path), "--sizes", "8,16", "--workers", "1",
                              "--json", "-"])
    d = json.loads(r.stdout)
    assert d["sizes_without_shape"] == [{"npus": 16, "reason": WHY16}]
    assert d["chosen_npus"] == 8 and d["sizes"][1]["note"].startswith("skipped: no network shape")
    r = runner.invoke(app(), ["codesign", str(path), "--sizes", "16,32", "--workers", "1"])
    assert r.exit_code == 2
    assert "any of the cluster sizes 16, 32 NPUs" in " ".join(r.output.split())


def test_a_fixed_network_takes_its_own_size_only():
    from hieropt.spec import Dimension, Network

    net = Network(dims=(Dimension(block="Ring", npus=8, cost_class="A"),))
    fixed = space(network=net, levels=())
    assert sized_space(fixed, [8, 8]).npus == 8
    with pytest.raises(InputError) as e:
        sized_space(fixed, [8, 16, 32])
    assert str(e.value) == (
        "tiny: network: the fixed network holds 8 NPUs, not 16, 32: one fixed network has one "
        "cluster size; fix: describe the network family with [[levels]] to search several sizes, "
        "or give only 8 (the network's)")


def app():
    from hieropt.cli import app as typer_app

    return typer_app
