"""The library's validate and calibrate results give the same JSON document as the command line's
``--json`` (one builder: :mod:`hieropt.studies.validate.dicts`)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import hieropt
from hieropt.cli import app

from .synthetic import synthetic

runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def test_validation_to_dict_is_the_commands_json(tmp_path: Path):
    path = synthetic(tmp_path, ("npu.efficiency=0.37",))
    js = tmp_path / "v.json"
    r = runner.invoke(app, ["validate", str(path), "--json", str(js)])
    assert r.exit_code == 0, r.output
    data = hieropt.validate(str(path)).to_dict()
    assert data == json.loads(js.read_text())
    assert data["summary"]["runs"] == 4 and len(data["rows"]) == 4
    assert data["rows"][0]["file"] == str(path) and data["rows"][0]["npus"] == 2


def test_calibration_to_dict_is_the_commands_json(tmp_path: Path):
    path = synthetic(tmp_path, ("npu.efficiency=0.37",))
    js = tmp_path / "c.json"
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "t.toml"),
                            "--json", str(js)])
    assert r.exit_code == 0, r.output
    (fit,) = hieropt.calibrate(str(path))  # (one accelerator: one fit)
    data = fit.to_dict()
    assert data == json.loads(js.read_text())
    assert (data["npu"], data["runs"], data["loss"]) == ("toy", 4, "mape")
    assert abs(data["values"]["efficiency"] - 0.37) < 1e-5
