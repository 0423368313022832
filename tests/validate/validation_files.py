"""The runs files of validation/ that the calibrate and validate checks run on, copies of them
with an edit, and the command-line runner of those checks."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from tests.cases import REPO

VALIDATION = REPO / "validation"
"""The folder of the measured runs, their models and networks."""
ONE_NODE = VALIDATION / "calibration" / "a100-one-node.csv"
"""The one-node A100 runs the shipped calibration is fitted on."""
KORTHIKANTI = VALIDATION / "korthikanti2022.csv"
"""Korthikanti et al. 2022's multi-node A100 runs."""
ALL_FIVE = (
    "matrix_efficiency,gemm_half_gflop,hbm_efficiency,kernel_overhead_us,attention_efficiency"
)
"""The five calibration fields, as ``--fit`` takes them."""
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})
"""A runner of the command line with a wide, colourless terminal."""


def copy_of(tmp_path: Path, source: Path, *edits: tuple[str, str]) -> Path:
    """``source`` copied into ``tmp_path/calibration`` (its model and network files beside, as in
    validation/) with each (old, new) text edit applied once."""
    for folder in ("models", "networks"):
        if not (tmp_path / folder).exists():
            shutil.copytree(VALIDATION / folder, tmp_path / folder)
    text = source.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    (tmp_path / "calibration").mkdir(exist_ok=True)
    out = tmp_path / "calibration" / source.name
    out.write_text(text.replace(",models/", ",../models/").replace(",networks/", ",../networks/"))
    return out
