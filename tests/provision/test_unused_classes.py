"""A parts catalog with cost classes an instance's network does not use: the classes are left out
with a note naming them (a real catalog lists the parts of many designs), the answer is the one of
the catalog without them, and a class whose name is a slip for a class the network uses (and the
catalog lacks) is still refused with the name it stands for."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.io.catalog import read_catalog, without_unused_classes
from hieropt.io.instance import load_instance

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "gpt3-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"
EXTRA = """
[classes.Optical]          # parts of another design: no dimension of gpt3-4d uses them
links = [{ name = "optical-800G", gbit_per_s = 800, usd = 1200, max_per_npu = 4 }]
"""

runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def provision_json(*args: str | Path) -> tuple[dict, str]:
    result = runner.invoke(app, ["provision", *(str(a) for a in args), "--json", "-"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_an_unused_class_is_left_out_with_a_note(tmp_path: Path):
    cat = tmp_path / "cat.toml"
    cat.write_text(CATALOG.read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    plain, _ = provision_json(INSTANCE, "--catalog", CATALOG)
    more, err = provision_json(INSTANCE, "--catalog", cat)
    # the same integer design: the bill of materials of the shipped catalog ($19,563,520:
    # tests/provision/test_cli.py's test_default_instance_report derives it)
    assert plain["network_cost_usd"] == more["network_cost_usd"] == 19_563_520
    assert more["bw_gbps_per_dim"] == plain["bw_gbps_per_dim"]
    assert more["bom"] == plain["bom"]
    note = (f"note: {cat}: class Optical not used by the instance's network (it uses InterChiplet, "
            "InterNode, InterPackage, InterPod): ignored")
    assert note in " ".join(err.split())


def test_classes_of_a_smaller_design_are_ignored():
    """The network of a co-design answer on two levels (InterNode, InterPod): the 4-D catalog's
    InterChiplet and InterPackage are left out, InterPackage though close to InterPod (a class the
    catalog defines is no slip for another)."""
    inst = load_instance(INSTANCE)
    dims = [d for d in inst.network.dims if d.cost_class in ("InterNode", "InterPod")]
    two = inst.model_copy(update={"network": inst.network.model_copy(update={"dims": dims})})
    kept, notes = without_unused_classes(read_catalog(CATALOG), two, "cat.toml")
    assert sorted(kept.classes) == ["InterNode", "InterPod"]
    assert notes == ("cat.toml: classes InterChiplet, InterPackage not used by the instance's "
                     "network (it uses InterNode, InterPod): ignored",)


def test_a_misspelt_class_is_refused_with_the_name_it_stands_for(tmp_path: Path):
    cat = tmp_path / "cat.toml"
    text = CATALOG.read_text(encoding="utf-8")
    cat.write_text(text.replace("[classes.InterNode]", "[classes.InterNod]"), encoding="utf-8")
    result = runner.invoke(app, ["provision", str(INSTANCE), "--catalog", str(cat)])
    assert result.exit_code == 2, result.output
    msg = " ".join(result.stderr.split())
    assert msg == (f"error: {cat}: classes.InterNod: unknown cost class 'InterNod': the "
                   "instance's network uses InterChiplet, InterNode, InterPackage, InterPod; did "
                   "you mean 'InterNode'?; fix: rename the class to 'InterNode', or remove it")
