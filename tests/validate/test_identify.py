"""A fit whose runs do not determine its fields is refused: a field no prediction depends on, and
fields the runs do not separate (the scaled Jacobian of the predictions without full column
rank)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.runs import read_runs
from hieropt.studies.validate import CalibrationField, fit_npu, predict_ms
from hieropt.studies.validate.identify import SEPARATION, STEP, scaled_jacobian

from .synthetic import HEADER
from .tiny import MODEL, write_case

runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})
VALIDATION = Path(__file__).resolve().parents[2] / "validation"
GPT = VALIDATION / "models" / "megatron-gpt-a100.toml"
DGX = VALIDATION / "networks" / "dgx-a100-hdr.toml"
RUNS_HEADER = ("name,model,network,bw_gbps,tp,pp,dp,micro_batch_size,global_batch_size,recompute,"
               "measured_ms")


@pytest.mark.heavy
def test_a_field_no_run_depends_on_is_refused_naming_the_runs_that_would_determine_it(
        tmp_path: Path):
    # the 1.7B model without FlashAttention: attention_efficiency times no kernel of its runs;
    # not "attention_efficiency = 0.6" (its start value) printed as fitted, exit 0
    rows = ["a,{m},{n},300;25,1,1,8,4,128,full,3911", "b,{m},{n},300;25,2,1,8,4,128,selective,1785",
            "c,{m},{n},300;25,4,2,2,2,128,none,1946", "d,{m},{n},300;25,1,2,8,1,64,full,1180"]
    path = tmp_path / "four.csv"
    path.write_text("\n".join([RUNS_HEADER] + [r.format(m=GPT, n=DGX) for r in rows]) + "\n")
    out = tmp_path / "npu.toml"
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(out),
                            "--fit", "attention_efficiency"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (
        f"error: --fit: attention_efficiency: no prediction of the 4 runs of {path} depends on it "
        "(a step of 1% moves none by more than 1e-09): the runs do not determine it, and the "
        "value the fit would report (0.6) is its start value; fix: leave attention_efficiency out "
        "of fields (--fit), or add runs with flash_attention = true (the fused FlashAttention "
        "kernel it times)"
    )
    assert not out.exists()


@pytest.mark.heavy
def test_fields_two_runs_of_one_plan_at_two_bandwidths_do_not_separate_are_refused(
        tmp_path: Path):
    # one plan at two scale-out bandwidths: every compute field moves both times by the same ms,
    # so the columns of the scaled Jacobian are both proportional to 1 / predicted time; not
    # three different pairs each fitted within 0.2 %, exit 0
    rows = ["fast,{m},{n},300;25,1,1,16,4,256,full,3767.1",
            "slow,{m},{n},300;2,1,1,16,4,256,full,3976.1"]
    path = tmp_path / "two.csv"
    path.write_text("\n".join([RUNS_HEADER] + [r.format(m=GPT, n=DGX) for r in rows]) + "\n")
    out = tmp_path / "npu.toml"
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(out),
                            "--fit", "matrix_efficiency,hbm_efficiency"])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert line.startswith(
        f"error: --fit: matrix_efficiency and hbm_efficiency are not separated by the 2 runs of "
        f"{path}: changed together in some proportion they move no predicted time (the smallest "
        "singular value of the predictions' Jacobian, columns scaled to unit length, is "
    )
    assert line.endswith(
        "below 0.001), so other values along it fit as well as the ones found (matrix_efficiency "
        "= 0.645, hbm_efficiency = 0.6508); fix: fit fewer fields (one of matrix_efficiency, "
        "hbm_efficiency), or add runs that separate them: several micro-batch sizes, model widths "
        "and recompute strategies (runs that differ only in the network or its bandwidths move "
        "every compute field alike)"
    )
    assert not out.exists()
    # one of them is determined: matrix_efficiency alone fits
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "matrix_efficiency = 0.6456" in r.stdout


@pytest.mark.heavy
def test_the_scaled_jacobian_by_hand(tmp_path: Path):
    # the tiny flat model, one plan at 10 and 5 GB/s: the time is compute C / efficiency plus the
    # optimizer step's HBM time H / hbm_gbps plus the gradients' G / bw, so each field's column is
    # (its part of the time) / (time) x (-1 per relative step, to first order): both columns are
    # proportional to 1 / time, rank 1
    model = MODEL + "hbm_gbps = 100.0\n"
    rows = ["tiny.toml,net.toml,10,2,4,1,{},g", "tiny.toml,net.toml,5,2,4,1,{},g"]
    path = write_case(tmp_path, [r.format(1) for r in rows], HEADER, model)
    times = [predict_ms(r) for r in read_runs(path)]  # (measured: the model's own times)
    path = write_case(tmp_path, [r.format(repr(t)) for r, t in zip(rows, times, strict=True)],
                      HEADER, model)
    runs = read_runs(path)
    fields = ("efficiency", "hbm_gbps")

    def predict(x: np.ndarray) -> list[float]:
        sets = tuple(f"npu.{f}={float(v)!r}" for f, v in zip(fields, x, strict=True))
        return [predict_ms(r, sets) for r in runs]

    x = np.array([0.5, 100.0])
    j = scaled_jacobian(predict, x, [0.05, 10.0], [1.0, 1e3])
    base = np.array(predict(x))
    compute = predict(np.array([0.5 * (1 + STEP), 100.0]))
    # column 0 by hand: (t(0.505) - t(0.5)) / t(0.5) / 0.01
    assert j[:, 0] == pytest.approx((np.array(compute) - base) / base / STEP, rel=1e-12)
    assert j[0, 0] / j[1, 0] == pytest.approx(base[1] / base[0], rel=1e-9)
    assert j[0, 1] / j[1, 1] == pytest.approx(base[1] / base[0], rel=1e-9)
    unit = j / np.linalg.norm(j, axis=0)
    assert np.linalg.svd(unit, compute_uv=False)[-1] < 1e-9 < SEPARATION
    # (the library's argument, fields; the command line names its flag, --fit)
    with pytest.raises(InputError, match=r"^fields: efficiency and hbm_gbps are not separated by "
                       r"the 2 runs of .*; fix: fit fewer fields \(one of efficiency, hbm_gbps\)"):
        fit_npu(runs, [CalibrationField(f, lo, hi) for f, lo, hi in
                       (("efficiency", 0.05, 1.0), ("hbm_gbps", 10.0, 1e3))])
    # the memory reserve times nothing: refused by name, with the generic hint
    with pytest.raises(InputError) as e:
        fit_npu(runs, [CalibrationField("hbm_reserve_gib", 0.0, 0.5)])
    assert e.value.one_line().endswith(
        "fix: leave hbm_reserve_gib out of fields (--fit), or add runs that time it")
