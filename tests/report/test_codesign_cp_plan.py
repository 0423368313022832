"""The committee page of a co-design result with context parallelism names cp in its plan: the
tiny space (tests/codesign/spaces.py) with ``set = ["cp=2"]`` on 8 NPUs, whose plans are tp x 2 x
pp x dp = 8 (the page's cluster size)."""

from __future__ import annotations

import json

import pytest

from tests.cli.util import assert_error, run
from tests.codesign.spaces import SPACE, write_space_files


def test_the_page_plan_names_cp(tmp_path):
    space = write_space_files(tmp_path, SPACE.replace("npus = 8\n", 'npus = 8\nset = ["cp=2"]\n'))
    result = tmp_path / "result.json"
    r = run("codesign", space, "--workers", "1", "--json", result)
    assert r.exit_code == 0, r.output
    r = run("report", result, "-o", tmp_path / "out", "--json", "-")
    assert r.exit_code == 0, r.output
    page = json.loads(r.stdout)
    alts = {a["key"]: a for a in page["alternatives"]}
    assert alts["best"]["plan"] == json.loads(result.read_text())["best"]["plan"]
    assert page["headline"]["npus"] == 8
    for a in alts.values():
        tp, cp, pp, dp = (int(w[2:]) for w in a["plan"].split()[:4])
        assert a["plan"].split()[1] == "cp2" and tp * cp * pp * dp == 8
    html = (tmp_path / "out" / "report.html").read_text()
    assert f"data-value='{alts['best']['plan']}'" in html


def _older(result: dict) -> dict:
    """``result`` (a co-design JSON of the cp 2 space) as a hieropt written before plans carried
    cp wrote it: no ``cp`` in the rows, their placements or the space's model plan, plan ids (and
    the row ids' plan part) without ``cp2``; the ids' placement part kept (``cp 1x2``)."""
    old = json.loads(json.dumps(result))
    for row in [old["best"], *old["ranking"]]:
        row.pop("cp")
        row["placement"].pop("cp")
        plan = row["plan"]
        row["plan"] = plan.replace(" cp2 ", " ", 1)
        row["id"] = row["plan"] + row["id"][len(plan):]
        if row.get("tie_of"):
            row["tie_of"] = row["tie_of"].replace(" cp2 ", " ", 1)
    for e in old["by_dims"] + old["by_npus"]:
        e["best"] = e["best"].replace(" cp2 ", " ", 1)
    old["space_definition"]["base"]["plan"].pop("cp")
    return old


def test_an_older_result_without_cp_reads_back_as_the_new_one(tmp_path):
    """A result written before plans carried cp (npus 8 = tp x pp x dp x 2 in every row): its
    rows read back with cp 2 (npus / (tp pp dp)), the plan ids naming it and the cp group placed
    as the id says, so the page (and its knee, solved again from the space) is the new result's."""
    space = write_space_files(tmp_path, SPACE.replace("npus = 8\n", 'npus = 8\nset = ["cp=2"]\n'))
    result, older = tmp_path / "result.json", tmp_path / "older.json"
    assert run("codesign", space, "--workers", "1", "--json", result).exit_code == 0
    new = json.loads(result.read_text())
    old = _older(new)
    assert "cp" not in old["best"] and " cp2 " not in old["best"]["id"]
    older.write_text(json.dumps(old))
    pages = []
    for path, out in ((result, "new"), (older, "old")):
        r = run("report", path, "-o", tmp_path / out, "--json", "-")
        assert r.exit_code == 0, r.output
        pages.append(json.loads(r.stdout))
    new_alts, old_alts = ({a["key"]: a for a in p["alternatives"]} for p in pages)
    assert old_alts.keys() == new_alts.keys() and "knee" in old_alts
    for key, a in new_alts.items():
        assert a["plan"].split()[1] == "cp2"
        assert [old_alts[key][k] for k in ("plan", "fabric", "network_cost_usd")] == [
            a[k] for k in ("plan", "fabric", "network_cost_usd")]
    assert new_alts["knee"]["plan"] == "tp1 cp2 pp1 dp4 ep1 z0 nore nosp v1 mb2"
    assert new_alts["knee"]["network_cost_usd"] == pytest.approx(24.0, rel=1e-6)


def test_a_row_the_space_cannot_rebuild_is_the_files_error(tmp_path):
    """A ranked row whose placement does not hold its plan (cp placed on 1 NPU where the plan
    has cp 2) is refused as an error of the result file, exit 2, not a traceback."""
    space = write_space_files(tmp_path, SPACE.replace("npus = 8\n", 'npus = 8\nset = ["cp=2"]\n'))
    result, bad = tmp_path / "result.json", tmp_path / "bad.json"
    assert run("codesign", space, "--workers", "1", "--json", result).exit_code == 0
    data = json.loads(result.read_text())
    for row in [data["best"], *data["ranking"]]:
        row["placement"]["cp"] = [1] * len(row["placement"]["cp"])
    bad.write_text(json.dumps(data))
    r = run("report", bad, "-o", tmp_path / "out")
    assert_error(r, 2, f"error: {bad}: mapping.groups.cp:", "was generated for cp = 2",
                 "or give a file this hieropt wrote")
