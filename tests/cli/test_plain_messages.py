"""Messages and lines in the user's words, not Python's: a TOML ``true`` is named ``true`` (not
``True``), a list of choices is a plain comma list (not ``['a', 'b']``), the objective's $ are
written as every $ of the output (``$8,755,833.00``, not ``8755832.996 $``), and ``pareto --help``
names every figure format ``--plot`` draws."""

from __future__ import annotations

from pathlib import Path

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
CLUSTER = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def _copy(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    """``source`` with ``old`` replaced by ``new`` (once) and its model paths made absolute,
    written to ``tmp_path``."""
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1
    text = text.replace(old, new).replace('"../models/', f'"{REPO / "models"}/')
    p = tmp_path / source.name
    p.write_text(text, encoding="utf-8")
    return p


def test_a_toml_boolean_is_named_as_written(tmp_path):
    p = _copy(tmp_path, GPT3, '{ block = "Ring", npus = 4, cost_class = "InterChiplet" }',
              '{ block = "Ring", npus = true, cost_class = "InterChiplet" }')
    r = run("solve", p)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {p}: network.dims[0]: npus: true is a boolean, not a number; fix: write a number"
    )


def test_the_sources_to_choose_from_are_a_plain_list(tmp_path):
    p = _copy(tmp_path, CLUSTER, 'source = "cushwake-2025" }', 'source = "cushwake" }')
    r = run("solve", p)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {p}: cluster: facility_usd_per_mw.source: unknown source 'cushwake'; fix: add "
        "[cluster.sources.cushwake] with ref, date and kind, or use one of cushwake-2025, "
        "epoch-cost-model, facility-life, nvidia-dgx-h100, nvidia-h100, semianalysis-dgx-h100"
    )


def test_the_min_cost_objective_is_written_in_dollars():
    r = run("solve", GPT3, "--objective", "min_cost", "--max-time", "1.3s", "--no-sensitivity")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert "network cost: $8,755,833" in lines
    assert "objective min_cost: $8,755,833.00; proven lower bound $8,755,832.98" in lines


def test_pareto_help_names_every_plot_format():
    r = run("pareto", "--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    assert "a .png, .svg or .pdf file" in text
    assert "FILE.png" not in text
