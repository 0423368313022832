"""A misspelled key in an instance file is named, with the key it most likely meant: at the top
level, in a nested table (a [cost.X] class, a dims entry) where pydantic also reports the meant key
missing (the unknown one is reported: it names the slip), and for an optional field."""

from __future__ import annotations

import pytest

from hieropt.io.common import model_fields_at
from hieropt.names import close_name
from hieropt.spec import CostModel, Network
from tests.cases import REPO
from tests.cli.util import error_line, run

GPT3 = REPO / "instances" / "gpt3-4d.toml"


def _instance(tmp_path, old: str, new: str, count: int = 1):
    text = GPT3.read_text()
    assert old in text
    text = text.replace(old, new, count).replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "i.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("old", "new", "line"), [
    ("link_usd_per_gbps", "link_usd_per_gbs",
     "cost.InterChiplet.link_usd_per_gbs: unknown key (did you mean 'link_usd_per_gbps'?); "
     "fix: rename 'link_usd_per_gbs' to 'link_usd_per_gbps'"),
    ("npus = 4,", "npu = 4,",
     "network.dims[0].npu: unknown key (did you mean 'npus'?); fix: rename 'npu' to 'npus'"),
    ("cost_class = \"InterChiplet\"", "cost_class = \"InterChiplet\", latency_nss = 5",
     "network.dims[0].latency_nss: unknown key (did you mean 'latency_ns'?); fix: rename "
     "'latency_nss' to 'latency_ns'"),
    ("cost_class = \"InterChiplet\"", "cost_class = \"InterChiplet\", colour = 5",
     "network.dims[0].colour: unknown key; fix: remove it or check its spelling"),
])
def test_a_nested_typo_names_the_key(tmp_path, old, new, line):
    path = _instance(tmp_path, old, new)
    r = run("solve", path)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {path}: {line}"


def test_a_top_level_typo_suggests_the_key(tmp_path):
    path = _instance(tmp_path, "\nobjective =", "\nobjectiv =")
    line = error_line(run("solve", path))
    assert line.startswith(f"error: {path}: objectiv: unknown key (did you mean 'objective'?); "
                           "fix: use only name, description, objective,")


def test_the_helpers():
    assert close_name("npu", ["block", "npus", "cost_class"]) == "npus"
    assert close_name("colour", ["block", "npus", "cost_class"]) is None
    assert model_fields_at(Network, ("dims", 3)) == [
        "block", "npus", "cost_class", "latency_ns", "algorithm"]
    assert model_fields_at(CostModel, ("classes", "InterPod")) == [
        "link_usd_per_gbps", "switch_usd_per_gbps", "nic_usd_per_gbps"]
    assert model_fields_at(None, ("dims", 0)) == []


@pytest.mark.parametrize(("key", "known", "meant"), [
    ("tpp", ["pp", "tp", "dp"], "tp"),  # (one letter inserted; the shared head breaks the tie)
    ("a", ["b", "c"], None),  # (any one-letter name is one letter from any other: no guess)
    ("ffn_szie", ["ffn_size", "hidden_size"], "ffn_size"),  # (two letters swapped)
    ("ep", ["pe", "tp"], "pe"),  # (a swap in a two-letter name: a ratio of 0.5 misses it)
    ("acelerator_usd", ["accelerator_w", "accelerator_usd"], "accelerator_usd"),
    ("sequence_paralel", ["sequence_length", "sequence_parallel"], "sequence_parallel"),
    ("measured_s", ["model", "network", "measured_ms"], "measured_ms"),
    ("TP", ["tp", "pp"], "tp"),
    ("colour", ["block", "npus"], None),
])
def test_the_one_suggestion_catches_one_letter_slips(key, known, meant):
    assert close_name(key, known) == meant


def test_a_set_key_typo_suggests_the_key():
    r = run("workload", "plan", REPO / "models" / "gpt3-175b-llm.toml", "--set", "tpp=8")
    assert r.exit_code == 2
    assert error_line(r) == ("error: --set: tpp: unknown key (did you mean 'tp'?); fix: use 'tp' "
                             "(or a dotted path like plan.tp)")


def test_a_plans_typo_in_a_space_suggests_the_field(tmp_path):
    space = REPO / "spaces" / "codesign-gpt3-4096.toml"
    text = space.read_text().replace('"../models/', f'"{REPO}/models/')
    assert "\ntp = [1, 2, 4, 8, 16]" in text
    path = tmp_path / "s.toml"
    path.write_text(text.replace("\ntp = [1, 2, 4, 8, 16]", "\ntpp = [1, 2]"))
    r = run("codesign", path)
    assert r.exit_code == 2
    assert error_line(r) == (f"error: {path}: plans.tpp: unknown key (did you mean 'tp'?); fix: "
                             "rename 'tpp' to 'tp'")


def _copy(tmp_path, src, old: str, new: str, name: str):
    text = src.read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1).replace('"../models/', f'"{REPO}/models/'))
    return path


def test_every_table_suggests_the_key(tmp_path):
    """A model file's top level, a parts catalog's class, an instance's [mapping] and a LIBRA
    network YAML: the same suggestion as any other table."""
    model = _copy(tmp_path, REPO / "models" / "gpt3-175b-llm.toml", 'generator = "llm"',
                  'generator = "llm"\ndescripton = "x"', "m.toml")
    assert error_line(run("workload", "plan", model)) == (
        f"error: {model}: descripton: unknown key (did you mean 'description'?); fix: rename "
        "'descripton' to 'description'")
    catalog = _copy(tmp_path, REPO / "catalogs" / "example-4d.toml", "links = [", "link = [",
                    "c.toml")
    assert error_line(run("provision", GPT3, "--catalog", catalog)) == (
        f"error: {catalog}: classes.InterChiplet.link: unknown key (did you mean 'links'?); fix: "
        "rename 'link' to 'links'")
    inst = _instance(tmp_path, "forward =", "fowrard =")
    assert error_line(run("solve", inst)) == (
        f"error: {inst}: mapping.fowrard: unknown key (did you mean 'forward'?); fix: rename "
        "'fowrard' to 'forward'")
    net = tmp_path / "n.yml"
    net.write_text("Topolgy: [ Ring ]\nNpusCount: [ 4 ]\nCostDimension: [ A ]\n")
    assert error_line(run("solve", "--network", net, "--workload", REPO / "models" / "moe-16l.txt",
                          "--cost", net)) == (
        f"error: {net}: Topolgy: unknown key (did you mean 'Topology'?); fix: rename 'Topolgy' to "
        "'Topology'")


@pytest.mark.parametrize(("setting", "shown"), [
    ('group_bandwidth = "links"', 'group_bandwidth = "links"'),
    ('dimension_mode = "sequential"', 'dimension_mode = "sequential"'),
    ("chunks = 4", "chunks = 4"),
])
def test_an_instance_setting_below_network_names_where_it_goes(tmp_path, setting, shown):
    # not "network.group_bandwidth: unknown key; fix: remove it or check its spelling", for a
    # setting that is right, only written below the [network] line (so in that TOML table)
    path = _instance(tmp_path, "[network]\n", f"[network]\n{setting}\n")
    key = setting.split(" =")[0]
    for command in (["solve"], ["evaluate", "--bw", "250,125,75,50"]):
        r = run(*command, path)
        assert r.exit_code == 2
        assert error_line(r) == (
            f"error: {path}: network.{key}: unknown key: {key} is a top-level key of the file, "
            "not a key of [network] (a key written below the [network] line belongs to that "
            f"table); fix: move {shown} above the [network] line (and above any other [table] "
            "line: a file's top-level keys come first)"
        )
    # above the [network] line it is the file's setting: solved
    above = _instance(tmp_path, "[network]\n", f"{setting}\n[network]\n")
    assert run("solve", above).exit_code == 0
