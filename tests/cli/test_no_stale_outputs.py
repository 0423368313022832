"""A run that ends without its answer never leaves an earlier run's answer in its output files, for
every command (one rule, :class:`hieropt.cli.common.Command`), each a reproducer:

- ``report -o DIR --budget 1M`` (infeasible, exit 3) left the earlier run's report.html and
  report.json in DIR;
- Ctrl-C during ``pareto --json F --csv C`` exited 130 with nothing on stderr and the earlier run's
  front.json and front.csv in place (only ``explore`` and ``codesign`` wrote an "interrupted"
  document); SIGTERM killed it without a word.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
COMPARE = REPO / "instances" / "gpt3-4d-compare.toml"
ONE_NODE = REPO / "validation" / "calibration" / "a100-one-node.csv"
CALCULON = REPO / "spaces" / "codesign-gpt3-calculon-a100.toml"
BUDGET_LINE = (
    "error: infeasible: the budget $1,000,000.00 is below the cheapest network the design "
    "constraints allow, $4,096,000.00"
)
INTERRUPTED = "interrupted: the run ended before its answer; rerun the same command"


def earlier(*paths: Path) -> None:
    """An earlier run's answer in each of ``paths``."""
    for p in paths:
        p.write_text('{"answer": "from an earlier run"}\n')


# -------------------------------------------------------------------------- exit 3: no answer left

def test_an_infeasible_report_removes_the_earlier_report(tmp_path):
    folder = tmp_path / "rep"
    folder.mkdir()
    from hieropt.cli.compare import REPORT_FILES

    earlier(*(folder / n for n in REPORT_FILES))
    (folder / "notes.txt").write_text("the user's own file")
    side = tmp_path / "committee.json"
    earlier(side)
    r = run("report", COMPARE, "-o", folder, "--budget", "1M", "--json", side)
    assert r.exit_code == 3
    assert error_line(r) == BUDGET_LINE
    # the page, its JSON and every figure of the earlier run are gone; the user's file stays
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert json.loads(side.read_text()) == {
        "status": "infeasible", "message": BUDGET_LINE.removeprefix("error: "), "exit_code": 3,
    }


def test_the_report_files_are_the_page_its_json_and_every_figure():
    from hieropt.cli.compare import REPORT_FILES
    from hieropt.report.plots import FIGURES

    assert set(REPORT_FILES) == {"report.html", "report.json", *FIGURES}


def test_a_failed_workload_generator_removes_the_earlier_workload(tmp_path):
    out = tmp_path / "w.txt"
    earlier(out)
    r = run("workload", "transformer", "--set", "tp=0", "-o", out)
    assert r.exit_code == 2, r.output
    assert not out.exists()


def test_a_failed_calibration_removes_the_earlier_accelerator_file(tmp_path):
    """The fit fails after the runs (and the model files they name) were read: the inputs are
    known, and --out is none of them (the flat model's field, which the runs' roofline accelerator
    does not take; a name of no compute model is refused before any input is read, and the
    earlier file stays: tests/validate/test_calibrated_file_record.py)."""
    out = tmp_path / "npu.toml"
    earlier(out)
    r = run("calibrate", ONE_NODE, "--fit", "efficiency", "--out", out)
    assert r.exit_code == 2
    assert error_line(r).startswith("error: --fit: unknown calibration field efficiency for")
    assert not out.exists()


def test_a_runs_file_that_does_not_parse_keeps_the_out_file(tmp_path):
    """The runs file names the model files it reads: when it does not parse they are unknown, and
    --out may be one of them, so it is kept."""
    out, runs = tmp_path / "npu.toml", tmp_path / "runs.csv"
    earlier(out)
    runs.write_text("not,a,runs,file\n")
    r = run("calibrate", runs, "--out", out)
    assert r.exit_code == 2
    assert error_line(r).startswith(f"error: {runs}")
    assert out.read_text() == '{"answer": "from an earlier run"}\n'


def test_a_limit_reached_keeps_the_runs_own_answer(tmp_path, monkeypatch):
    """Exit 3 after the run wrote its answer (``compare`` whose optimum is not certified): the file
    is this run's and stays."""
    from hieropt.studies import compare as studies

    real = studies.compare

    def uncertified(*args, **kwargs):
        comp = real(*args, **kwargs)
        from dataclasses import replace

        from hieropt.result import Status

        return replace(comp, optimum=replace(comp.optimum, status=Status.LIMIT))

    monkeypatch.setattr(studies, "compare", uncertified)
    out = tmp_path / "c.json"
    earlier(out)
    r = run("compare", GPT3, "--json", out)
    assert r.exit_code == 3
    data = json.loads(out.read_text())
    assert "answer" not in data and data["optimum"]["status"] == "limit"


# ------------------------------------------------------------------------- interrupted: 130 / 143

def test_an_interrupted_pareto_leaves_no_earlier_front(tmp_path, monkeypatch):
    from hieropt import api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "pareto", interrupted)
    js, csv, plot = tmp_path / "front.json", tmp_path / "front.csv", tmp_path / "front.png"
    earlier(js, csv, plot)
    r = run("pareto", GPT3, "--json", js, "--csv", csv, "--plot", plot)
    assert r.exit_code == 130
    assert r.stderr.strip() == INTERRUPTED
    assert json.loads(js.read_text()) == {
        "status": "interrupted", "message": INTERRUPTED, "exit_code": 130,
    }
    assert not csv.exists() and not plot.exists()


def test_an_interrupt_after_the_files_keeps_them(tmp_path, monkeypatch):
    """Ctrl-C while the table prints, after every file was written: exit 130, the answer stays."""
    from hieropt.report import text

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(text, "front_table", interrupted)
    js, csv = tmp_path / "front.json", tmp_path / "front.csv"
    earlier(js, csv)
    r = run("pareto", GPT3, "--points", "3", "--json", js, "--csv", csv)
    assert r.exit_code == 130
    assert r.stderr.strip() == f"interrupted: after writing its answer to {js}, {csv}"
    assert len(json.loads(js.read_text())["points"]) == 3
    assert len(csv.read_text().splitlines()) == 4  # the header and 3 points


@pytest.mark.parametrize("command", [
    ["solve", GPT3],
    ["evaluate", GPT3, "--bw", "250,125,75,50"],
    ["compare", GPT3],
    ["provision", GPT3, "--catalog", REPO / "catalogs" / "nvl72-ethernet.toml"],
])
def test_every_command_writes_the_interrupted_document(tmp_path, monkeypatch, command):
    from hieropt.io import instance

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(instance, "load_instance", interrupted)
    out = tmp_path / "r.json"
    earlier(out)
    r = run(*command, "--json", out)
    assert r.exit_code == 130
    assert r.stderr.strip() == INTERRUPTED
    assert json.loads(out.read_text())["status"] == "interrupted"


SCRIPT = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # (a background test run ignores it)
from hieropt import progress
update, calls = progress.ProgressBar.update, []
def update_then_signal(self, *args, **kwargs):  # the signal as the front's 3rd point is done
    calls.append(1)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.{signal})
    return update(self, *args, **kwargs)
progress.ProgressBar.update = update_then_signal
from hieropt.cli import main
sys.argv = ["hieropt", {args}]
main()
"""


@pytest.mark.parametrize(("sig", "code", "word"), [
    ("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated"),
])
def test_a_signal_during_pareto_leaves_no_earlier_front(tmp_path, sig, code, word):
    """A real Ctrl-C (SIGINT) or SIGTERM to the process while the front is solved."""
    js, csv = tmp_path / "front.json", tmp_path / "front.csv"
    earlier(js, csv)
    args = ", ".join(repr(str(a)) for a in ("pareto", GPT3, "--points", "50", "--json", js,
                                            "--csv", csv))
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(signal=sig, args=args)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    message = f"{word}: the run ended before its answer; rerun the same command"
    assert r.returncode == code, r.stderr[-2000:]
    assert r.stderr.strip().splitlines()[-1] == message
    assert "Traceback" not in r.stderr
    assert json.loads(js.read_text()) == {
        "status": "interrupted", "message": message, "exit_code": code,
    }
    assert not csv.exists()


# ------------------------------------------------------------- never an input, never a refused path

def beside_model(folder: Path) -> tuple[Path, Path]:
    """``folder/inst.toml``, the compare instance reading ``gpt3-175b.toml`` beside it (copied):
    (the instance, the model file)."""
    model = folder / "gpt3-175b.toml"
    model.write_bytes((REPO / "models" / "gpt3-175b.toml").read_bytes())
    inst = folder / "inst.toml"
    inst.write_text(COMPARE.read_text().replace("../models/gpt3-175b.toml", "gpt3-175b.toml"))
    return inst, model


PLOT_REFUSED = "error: --plot: cannot draw to '{}'; fix: name a .png, .svg or .pdf file"


def test_a_plot_path_refused_keeps_the_file_there(tmp_path):
    photo = tmp_path / "front.jpg"
    photo.write_text("photo\n")
    r = run("pareto", COMPARE, "--plot", photo)
    assert r.exit_code == 2
    assert error_line(r) == PLOT_REFUSED.format("front.jpg")
    assert photo.read_text() == "photo\n"


def test_a_file_the_instance_reads_is_never_removed(tmp_path):
    inst, model = beside_model(tmp_path)
    before = model.read_bytes()
    r = run("pareto", inst, "--plot", model)
    assert r.exit_code == 2
    assert error_line(r) == PLOT_REFUSED.format("gpt3-175b.toml")
    # --csv at the model, refused --plot: the run ends before the instance names its model file
    r = run("pareto", inst, "--csv", model, "--plot", tmp_path / "x.txt")
    assert r.exit_code == 2
    assert error_line(r) == PLOT_REFUSED.format("x.txt")
    assert model.read_bytes() == before


def test_an_early_failure_removes_an_earlier_figure_only(tmp_path):
    """Before the inputs are known only a figure or a page (never read by hieropt) is removed."""
    csv, png = tmp_path / "front.csv", tmp_path / "front.png"
    earlier(csv, png)
    missing = tmp_path / "no-folder" / "front.json"
    r = run("pareto", COMPARE, "--csv", csv, "--plot", png, "--json", missing)
    assert r.exit_code == 2, r.output
    assert error_line(r).startswith(f"error: --json {missing}: the folder")
    assert csv.is_file() and not png.exists()


@pytest.mark.parametrize("bad", [
    ["--max-time", "bogus"], ["--bogus"], ["--json"],
])
def test_no_error_document_over_a_file_the_instance_reads(tmp_path, bad):
    inst, model = beside_model(tmp_path)
    before = model.read_bytes()
    args = ["solve", inst, "--json", model, *bad]
    r = run(*args)
    assert r.exit_code == 2
    assert model.read_bytes() == before
    if bad != ["--json"]:  # (a --json without its value names no file)
        assert r.stderr.strip().splitlines()[-1] == (
            f"note: --json {model}: not replaced by the error document: it is not a hieropt "
            "JSON document and may be a file this command reads"
        )


def test_a_usage_error_replaces_a_hieropt_document_or_writes_a_new_one(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"status": "optimal", "design": "from an earlier run"}\n')
    message = ("--max-time: 'bogus' is not a number with an optional unit; fix: write e.g. "
               "--max-time 1.3s (units: ns, us, \u00b5s, ms, s, min, h, d; a plain number is ns)")
    for path in (old, new):
        r = run("solve", GPT3, "--max-time", "bogus", "--json", path)
        assert r.exit_code == 2
        assert json.loads(path.read_text()) == {
            "status": "bad_input", "message": message, "exit_code": 2,
        }


@pytest.fixture(scope="module")
def codesign_json(tmp_path_factory) -> Path:
    """The JSON of ``codesign`` on Calculon's GPT-3 space."""
    out = tmp_path_factory.mktemp("codesign") / "X.json"
    r = run("codesign", CALCULON, "--workers", "1", "--json", out)
    assert r.exit_code == 0, r.output
    return out


def test_a_report_never_replaces_its_codesign_result(tmp_path, codesign_json, monkeypatch):
    (tmp_path / "report").mkdir()
    result = tmp_path / "report" / "report.json"
    result.write_bytes(codesign_json.read_bytes())
    monkeypatch.chdir(tmp_path)
    r = run("report", "report/report.json", "--space", CALCULON)  # (-o report: the default)
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --out report/report.json: is the command's INSTANCE (report/report.json): "
        "writing there would replace it; fix: give another output path"
    )
    assert result.read_bytes() == codesign_json.read_bytes()
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == ["report.json"]


# ------------------------------------------------------------- each command owns its output names

def test_a_report_into_a_reused_folder_keeps_no_earlier_figure(tmp_path, codesign_json):
    folder = tmp_path / "rep"
    folder.mkdir()
    from hieropt.report.plots import FIGURES

    earlier(*(folder / n for n in FIGURES))
    (folder / "notes.txt").write_text("the user's own file")
    r = run("report", codesign_json, "-o", folder, "--space", CALCULON)
    assert r.exit_code == 0, r.output
    # the co-design page draws no figure file: none of the earlier report's is left beside it
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "report.html", "report.json"]


@pytest.mark.heavy
def test_write_instances_keeps_only_this_runs_rank_files(tmp_path):
    folder = tmp_path / "wi"
    r = run("codesign", CALCULON, "--workers", "1", "--top", "3", "--write-instances", folder)
    assert r.exit_code == 0, r.output
    name = "codesign-gpt3-calculon-a100-rank{}-{}.toml"
    assert sorted(p.name for p in folder.iterdir()) == [name.format(k, k) for k in (1, 2, 3)]
    (folder / "mine.toml").write_text("the user's own file")
    (folder / "other-rank2-2.toml").write_text("another space's rank file")
    r = run("codesign", CALCULON, "--workers", "1", "--top", "1", "--write-instances", folder)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in folder.iterdir()) == [
        name.format(1, 1), "mine.toml", "other-rank2-2.toml",
    ]
    assert "rank 1:" in (folder / name.format(1, 1)).read_text()


def test_an_interrupted_write_instances_leaves_no_earlier_rank_file(tmp_path, monkeypatch):
    folder = tmp_path / "wi"
    r = run("codesign", CALCULON, "--workers", "1", "--top", "2", "--write-instances", folder)
    assert r.exit_code == 0, r.output
    from hieropt.studies import codesign

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(codesign, "codesign", interrupted)
    r = run("codesign", CALCULON, "--workers", "1", "--top", "2", "--write-instances", folder)
    assert r.exit_code == 130
    assert list(folder.iterdir()) == []
