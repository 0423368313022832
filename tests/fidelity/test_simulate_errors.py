"""simulate(): one-line errors for a missing / non-executable binary (exit 2) and failed runs (exit 3)."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError, SolverError
from hieropt.spec import Layer
from hieropt.studies.simulate import simulate

from .conftest import make_instance, ph


def _inst():
    layer = Layer(name="l", forward=ph(5, "ALLREDUCE", 1e6), input_grad=ph(), weight_grad=ph())
    return make_instance([("Ring", 2)], [layer], [2], [1], [1])


def _script(path, body):
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def test_missing_or_unusable_binary(tmp_path):
    with pytest.raises(InputError, match="no such file") as e:
        simulate(_inst(), [10], tmp_path / "missing")
    assert e.value.exit_code == 2
    with pytest.raises(InputError, match="is not a file"):
        simulate(_inst(), [10], tmp_path)
    plain = tmp_path / "plain"
    plain.write_text("x")
    with pytest.raises(InputError, match="is not executable"):
        simulate(_inst(), [10], plain)


def test_failed_run_reports_the_last_message(tmp_path):
    fail = _script(tmp_path / "fail", 'echo "starting"; echo "assertion failed: endpoint" >&2; exit 134')
    with pytest.raises(SolverError, match=r"failed .* \(exit 134\): assertion failed: endpoint") as e:
        simulate(_inst(), [10], fail)
    assert e.value.exit_code == 3
    assert "\n" not in str(e.value)


def test_run_without_result(tmp_path):
    quiet = _script(tmp_path / "quiet", 'echo "[info] reading the workload"')
    with pytest.raises(SolverError, match="printed no result.*reading the workload"):
        simulate(_inst(), [10], quiet)
    partial = _script(tmp_path / "partial", 'echo "sys[0] finished, 10 cycles, exposed communication 0 cycles."')
    with pytest.raises(SolverError, match="reported 1 of 2 NPUs"):
        simulate(_inst(), [10], partial)


def test_timeout(tmp_path):
    slow = _script(tmp_path / "slow", "sleep 5")
    with pytest.raises(SolverError, match="did not finish .* within 0.5 s"):
        simulate(_inst(), [10], slow, timeout_s=0.5)
