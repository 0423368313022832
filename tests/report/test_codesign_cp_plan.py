"""The committee page of a co-design result with context parallelism names cp in its plan: the
tiny space (tests/codesign/spaces.py) with ``set = ["cp=2"]`` on 8 NPUs, whose plans are tp x 2 x
pp x dp = 8 (the page's cluster size)."""

from __future__ import annotations

import json

from tests.cli.util import run
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
