"""simulate(): one-line errors for a missing / non-executable binary (exit 2) and failed runs (exit
3)."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError, SolverError
from hieropt.spec import Layer
from hieropt.studies.simulate import simulate
from tests.fidelity.instances import make_instance, ph


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
    # a text file is no program: not told to chmod +x it
    with pytest.raises(InputError) as e:
        simulate(_inst(), [10], plain)
    assert e.value.one_line() == (
        f"binary: {plain}: is not a program (neither an executable binary nor a script); "
        "fix: give the path of the ASTRA-sim binary (AstraSim_Analytical_Congestion_Unaware)")
    # a script or a binary without its x bit: chmod +x
    for name, head in (("script", "#!/bin/sh\n"), ("binary", "\x7fELF")):
        p = tmp_path / name
        p.write_bytes(head.encode("latin-1"))
        with pytest.raises(InputError) as e:
            simulate(_inst(), [10], p)
        assert e.value.one_line() == f"binary: {p}: is not executable; fix: chmod +x {p}"


def test_a_run_killed_by_sigkill_is_reported_as_out_of_memory(tmp_path):
    killed = _script(tmp_path / "killed", 'echo "[info] system 0 ready"; kill -9 $$')
    with pytest.raises(SolverError) as e:
        simulate(_inst(), [10], killed)
    assert str(e.value) == (
        "ASTRA-sim was killed by signal 9 on workload 'w' (likely out of memory: the trace is 177 "
        "bytes in 1 file for 2 NPUs); fix: simulate fewer chunks per collective (chunks, "
        "--chunks) or a smaller instance, or run on a machine with more memory (the kernel log, "
        "dmesg, names an out-of-memory kill)")
    assert e.value.exit_code == 3


def test_failed_run_reports_the_last_message(tmp_path):
    fail = _script(
        tmp_path / "fail", 'echo "starting"; echo "assertion failed: endpoint" >&2; exit 134'
    )
    with pytest.raises(
        SolverError, match=r"failed .* \(exit 134\): assertion failed: endpoint"
    ) as e:
        simulate(_inst(), [10], fail)
    assert e.value.exit_code == 3
    assert "\n" not in str(e.value)


def test_run_without_result(tmp_path):
    quiet = _script(tmp_path / "quiet", 'echo "[info] reading the workload"')
    with pytest.raises(SolverError, match="printed no result.*reading the workload"):
        simulate(_inst(), [10], quiet)
    partial = _script(
        tmp_path / "partial", 'echo "sys[0] finished, 10 cycles, exposed communication 0 cycles."'
    )
    with pytest.raises(SolverError, match="reported 1 of 2 NPUs"):
        simulate(_inst(), [10], partial)


def test_timeout(tmp_path):
    slow = _script(tmp_path / "slow", "sleep 5")
    with pytest.raises(SolverError, match="did not finish .* within 0.5 s"):
        simulate(_inst(), [10], slow, timeout_s=0.5)


def test_non_utf8_output_is_read(tmp_path):
    """Bytes that are not UTF-8 (a message in Latin-1, binary noise) are decoded tolerantly, not a
    UnicodeDecodeError: a failure still shows its last message, a result is still read."""
    noisy = _script(tmp_path / "noisy", r"printf 'caf\351 \377\376 erreur\n' >&2; exit 1")
    with pytest.raises(SolverError, match="failed .* \\(exit 1\\): caf\ufffd \ufffd\ufffd erreur"):
        simulate(_inst(), [10], noisy)
    ok = _script(
        tmp_path / "ok",
        r"""printf '\377\n'; for i in 0 1; do echo "sys[$i] finished, 7 cycles."; done""",
    )
    assert simulate(_inst(), [10], ok).simulated_iteration_time_ns == 7.0


def test_zero_cycles_is_a_failed_run(tmp_path):
    zero = _script(
        tmp_path / "zero", 'for i in 0 1; do echo "sys[$i] finished, 0 cycles."; done; echo done'
    )
    with pytest.raises(
        SolverError, match=r"reported 0 cycles on every NPU for workload 'w' .*: done"
    ) as e:
        simulate(_inst(), [10], zero)
    assert e.value.exit_code == 3


def test_a_relative_binary_path_is_taken_from_the_current_folder(tmp_path, monkeypatch):
    """The simulator runs in the bundle's folder, so a relative path (``--astra-sim
    bin/AstraSim...``, the common case) is resolved against the current folder first."""
    (tmp_path / "bin").mkdir()
    _script(tmp_path / "bin" / "sim", 'for i in 0 1; do echo "sys[$i] finished, 9 cycles."; done')
    monkeypatch.chdir(tmp_path)
    r = simulate(_inst(), [10], "bin/sim", folder=tmp_path / "bundle")
    assert r.simulated_iteration_time_ns == 9.0
