"""``hieropt workload show | transformer | dlrm | cnn``: output on good files, exit 2 with one line
``error: ...`` on bad ones, and generated text that reads back (``hieropt export``:
tests/cli/test_astrasim_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.io.astrasim1 import read_workload
from hieropt.io.instance import read_model
from tests.cli.util import WORKLOAD_TXT, assert_error, assert_ok, run

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------- show
def test_show_dlrm_file(shared_data: Path) -> None:
    r = run("workload", "show", shared_data / "astrasim1" / "DLRM_HybridParallel.txt")
    assert_ok(r)
    out = r.stdout
    assert "workload DLRM_HybridParallel: 8 layers" in out
    assert "header: HYBRID_DLRM 4" in out and "last bottom layer: 4" in out
    assert "ALLTOALL 98,304" in out  # layer 0's forward all-to-all
    assert "3,191,808" in out  # weight-gradient all-reduce bytes in total (7 layers)
    assert "Totals per collective type" in out


def test_show_simai_summary(shared_data: Path) -> None:
    r = run("workload", "show", "--summary", shared_data / "simai" / "workload_analytical.txt")
    assert_ok(r)
    out = r.stdout
    assert "1,789 layers" in out and "ep: 16" in out and "pp_comm (bytes): 50,331,648" in out
    assert "Layers" not in out  # --summary: no per-layer table
    row = next(
        line for line in out.splitlines() if "ALLTOALL_EP" in line and "77,309,411,328" in line
    )
    assert "768" in row


def test_show_customized_and_model_file(shared_data: Path) -> None:
    r = run(
        "workload",
        "show",
        shared_data / "astrasim1" / "sample_per_layer_parallel_HybridCustomized.txt",
    )
    assert_ok(r)
    assert "HYBRID_MODEL_DATA" in r.stdout and "policy" in r.stdout
    r = run("workload", "show", "--summary", REPO / "models" / "dlrm.toml")
    assert_ok(r)
    assert "header: HYBRID_DLRM 3" in r.stdout


@pytest.mark.parametrize(
    "text, parts",
    [
        (
            "DATA\n3\n" + WORKLOAD_TXT.split("\n", 2)[2],
            ("header layer count", "says 3 layers", "has 2 layer lines"),
        ),
        (
            WORKLOAD_TXT.replace("ALLREDUCE 2000000 10\nL2", "ALLREDUCEX 2000000 10\nL2"),
            ("line 3, field 10 (collective)", "unknown collective 'ALLREDUCEX'"),
        ),
        (
            WORKLOAD_TXT.replace("DATA", "HYBRID_PIPELINE"),
            ("line 1 (header)", "unknown header policy"),
        ),
        (
            WORKLOAD_TXT.replace(
                "NONE 0 1000 ALLREDUCE 2000000 10\nL2",
                "ALLTOALL_XP 0 1000 ALLREDUCE 2000000 10\nL2",
            ),
            ("unknown collective scope",),
        ),
    ],
)
def test_show_bad_file_exit_2(tmp_path: Path, text: str, parts: tuple[str, ...]) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    assert_error(run("workload", "show", path), 2, str(path), *parts)


def test_show_missing_file(tmp_path: Path) -> None:
    assert_error(run("workload", "show", tmp_path / "nope.txt"), 2, "workload file not found")


# ----------------------------------------------------------------------------------------- generate
def test_generate_transformer_from_model(tmp_path: Path) -> None:
    out = tmp_path / "gpt3.txt"
    r = run("workload", "transformer", "--model", REPO / "models" / "gpt3-175b.toml", "-o", out)
    assert_ok(r)
    assert f"wrote {out}" in r.stdout.replace("\n", "")
    w = read_workload(out)
    assert w.header.policy == "HYBRID_TRANSFORMER" and w.header.model_parallel_npu_group == 16
    assert len(w.layers) == 192
    ref = read_model(REPO / "models" / "gpt3-175b.toml")
    assert [layer.weight_grad.size_bytes for layer in w.layers] == \
        [layer.weight_grad.size_bytes for layer in ref.layers]
    assert w.layers[0].forward.compute_ns == round(ref.layers[0].forward.compute_ns)


def test_generate_exact_with_overrides(tmp_path: Path) -> None:
    out = tmp_path / "t.txt"
    r = run(
        "workload",
        "transformer",
        "--model",
        REPO / "models" / "gpt3-175b.toml",
        "--set",
        "layers=2",
        "--set",
        "tp=8",
        "--set",
        "name=small",
        "--exact",
        "-o",
        out,
    )
    assert_ok(r)
    w = read_workload(out)
    assert len(w.layers) == 4 and w.header.model_parallel_npu_group == 8
    ref = read_model(REPO / "models" / "gpt3-175b.toml")
    # exact: fractions kept
    assert w.layers[0].forward.compute_ns != round(w.layers[0].forward.compute_ns)
    # b s h B does not depend on tp
    assert w.layers[0].forward.size_bytes == ref.layers[0].forward.size_bytes


def test_generate_from_options_only_to_stdout() -> None:
    r = run(
        "workload",
        "dlrm",
        "-o",
        "-",
        "--set",
        "name=d",
        "--set",
        "dense_features=4",
        "--set",
        "bottom_mlp=[8, 4]",
        "--set",
        "top_mlp=[6, 1]",
        "--set",
        "num_tables=3",
        "--set",
        "embedding_dim=4",
        "--set",
        "micro_batch=2",
        "--set",
        "bytes_per_element=4",
        "--set",
        "npus=8",
        "--set",
        "npu_peak_tflops=1.0",
        "--set",
        "efficiency=1.0",
        "--set",
        "embedding_gbps=1.0",
    )
    assert_ok(r)
    lines = r.stdout.splitlines()
    assert lines[:3] == [
        "HYBRID_DLRM 2",
        "6",
        "embedding\t-1\t96\tALLTOALL\t96\t0\tALLTOALL\t96\t192\tNONE\t0\t0",
    ]


def test_generate_dlrm_and_cnn_models(tmp_path: Path) -> None:
    for kind, model, n, policy in (
        ("dlrm", "dlrm.toml", 10, "HYBRID_DLRM"),
        ("cnn", "resnet50.toml", 54, "DATA"),
    ):
        out = tmp_path / f"{kind}.txt"
        assert_ok(run("workload", kind, "--model", REPO / "models" / model, "-o", out))
        w = read_workload(out)
        assert len(w.layers) == n and w.header.policy == policy


def test_generate_errors(tmp_path: Path) -> None:
    assert_error(
        run("workload", "cnn", "--model", REPO / "models" / "dlrm.toml", "-o", tmp_path / "x.txt"),
        2,
        "generator",
        "not 'cnn'",
        "hieropt workload dlrm",
    )
    assert_error(
        run(
            "workload",
            "transformer",
            "--model",
            REPO / "models" / "gpt3-175b.toml",
            "--set",
            "tp=7",
            "-o",
            tmp_path / "x.txt",
        ),
        2,
        "gpt3-175b.toml",
        "not divisible by tp 7",
    )
    assert_error(
        run("workload", "cnn", "-o", tmp_path / "x.txt", "--set", "oops"),
        2,
        "--set",
        "not KEY=VALUE",
    )
    assert_error(
        run("workload", "dlrm", "-o", tmp_path / "x.txt", "--set", "name=d"),
        2,
        "command line",
        "params.dense_features",
    )
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.parametrize(("command", "model", "fix"), [
    ("transformer", "llama3-70b.toml",
     "use 'hieropt workload plan {m}' or 'hieropt workload show {m}' for an LLM plan"),
    ("dlrm", "gpt3-175b.toml", "use 'hieropt workload transformer --model {m}' for it"),
])
def test_a_model_of_another_generator_names_a_command_that_exists(
    tmp_path: Path, command: str, model: str, fix: str
) -> None:
    m = REPO / "models" / model
    r = run("workload", command, "--model", m, "-o", tmp_path / "x.txt")
    gen = "llm" if model.startswith("llama") else "transformer"
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {m}: generator: the model is for generator '{gen}', not '{command}'; fix: "
        + fix.format(m=m)
    )
    suggested = fix.format(m=m).split("'")[1].split()[1:]
    out = [] if gen == "llm" else ["-o", tmp_path / "y.txt"]
    assert run(*suggested, *out).exit_code == 0  # (the command it names runs on the model)
