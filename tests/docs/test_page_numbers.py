"""The figures the documentation quotes from commands are what those commands print.

Each check names a page, the command the page states (run in-process, the repository's shipped
inputs) and the figures as the page writes them: every figure must be on the page (spaces collapsed,
so a quote may break across lines) and come out of the command, so that a change of the code that
moves a quoted figure fails here until the page follows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cases import REPO
from tests.cli.util import run

DOCS = REPO / "docs"


def squash(text: str) -> str:
    return " ".join(text.split())


def on_page(page: str, *phrases: str) -> None:
    """Each phrase is on ``docs/<page>`` (spaces collapsed)."""
    text = squash((DOCS / page).read_text())
    for phrase in phrases:
        assert squash(phrase) in text, f"docs/{page} does not say: {phrase}"


def printed(*args: str | Path) -> str:
    """What ``hieropt ARGS`` prints (exit 0), spaces collapsed."""
    r = run(*args)
    assert r.exit_code == 0, r.output
    return squash(r.stdout)


def solved(tmp_path: Path, *args: str | Path) -> dict:
    """``hieropt solve ARGS --no-sensitivity --json``'s answer."""
    out = tmp_path / "answer.json"
    r = run("solve", *args, "--no-sensitivity", "--json", out)
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text())


def quoted(page: str, phrase: str, *args: str | Path) -> None:
    """``phrase`` is on the page and in what ``hieropt ARGS`` prints."""
    on_page(page, phrase)
    assert squash(phrase) in printed(*args), f"hieropt {' '.join(map(str, args))}: {phrase}"


GPT3_4D = REPO / "instances" / "gpt3-4d.toml"
L405 = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def test_procurement_headline_figures(tmp_path):
    fast = solved(tmp_path, GPT3_4D)
    ppc = solved(tmp_path, GPT3_4D, "--objective", "performance_per_cost")
    cheap = solved(tmp_path, GPT3_4D, "--objective", "min_cost", "--max-time-ns", "1.3e9")
    budget = solved(tmp_path, GPT3_4D, "--budget-usd", "1e7")

    def ms(a):
        return f"{a['iteration_time_ns'] / 1e6:,.2f} ms"

    def musd(a):
        return f"${a['network_cost_usd'] / 1e6:.2f} M"

    on_page(
        "how-to/procurement.md",
        f"the fastest network trains an iteration in {ms(fast)} for {musd(fast)}",
        f"the best performance per cost is {ms(ppc)} for {musd(ppc)}",
        f"the cheapest network meeting 1,300 ms costs {musd(cheap)}",
        f"$10 M buys {ms(budget)}",
    )


def test_procurement_front_and_knee_quotes():
    quoted("how-to/procurement.md", "fastest (performance optimum): 1,166.5117 ms at $13,659,961",
           "pareto", GPT3_4D)
    on_page("how-to/procurement.md", "`hieropt solve` prints the cheapest of them, $13,659,961")
    out = printed("solve", GPT3_4D, "--no-sensitivity")
    assert "network cost: $13,659,961" in out
    assert "design: the cheapest of the designs within 1e-08 of the fastest one found" in out


@pytest.mark.heavy
def test_the_band_of_a_short_run_quoted_in_minutes():
    out = printed("solve", L405, "--tokens", "1e9", "--no-sensitivity")
    quote = ("6.4 minutes, 3 MWh, $2.35k per run; 6.0 to 6.8 minutes, $2.21k to $2.51k per run "
             "at")
    assert f"run of 1B tokens: {quote} the calibration's worst held-out error" in out
    on_page("committee-page.md", quote)


def test_buyer_knee_and_sensitivity_of_the_llama_example():
    out = printed("solve", L405, "--objective", "performance")
    knee = "the last 1 % of speed costs $53,627,458 (16.8% of the fastest network)"
    assert knee in out
    on_page("buyer.md", "the last 1 % of speed costs $53,627,458 of a $319.5M network (16.8 %)")
    line = (
        "1 GB/s more per NPU on dim 1 saves 6.259 ms per iteration (16,384 GB/s = 131.1 Tb/s "
        "across the cluster; saves 0.06736 days per run; costs $199k per run)"
    )
    assert line in out
    on_page("buyer.md", line)


def test_buyer_deadline_paragraph(tmp_path):
    """The deadline paragraph of buyer.md: the fastest design's and the cheapest run's days, the
    deadline between them that binds min_run_cost, and min_cost under a 150-day deadline."""
    fast = solved(tmp_path, L405, "--objective", "performance")["run"]
    cheap = solved(tmp_path, L405)["run"]
    met = solved(tmp_path, L405, "--deadline", "68.5d")
    floor = solved(tmp_path, L405, "--objective", "min_cost", "--deadline", "150d")
    on_page(
        "buyer.md",
        f"the fastest design trains in {fast['time_to_train_days']:.1f} days and the cheapest "
        f"run in {cheap['time_to_train_days']:.1f}",
        f"(`--deadline 68.5d`: {met['bw_gbps_per_dim'][1]:.1f} GB/s of scale-out, "
        f"${met['run']['run_cost_usd'] / 1e6:.1f}M per run)",
        f"buys {floor['bw_gbps_per_dim'][1]:.1f} GB/s of scale-out, a "
        f"${floor['network_cost_usd'] / 1e6:.1f}M network, and trains in exactly "
        f"{floor['run']['time_to_train_days']:.1f} days for "
        f"${floor['run']['run_cost_usd'] / 1e6:.1f}M per run",
    )


@pytest.mark.parametrize(
    "objective, row",
    [
        ("performance", "| $319.5M | 68.0 | 43.0 % | $39.1M |"),
        ("performance_per_cost", "| $120.5M | 137.8 | 21.2 % | $64.1M |"),
        ("min_run_cost", "| $240.5M | 69.1 | 42.3 % | $36.7M |"),
    ],
)
def test_buyer_objectives_table(tmp_path, objective, row):
    a = solved(tmp_path, L405, "--objective", objective)
    r = a["run"]
    assert row == (
        f"| ${a['network_cost_usd'] / 1e6:.1f}M | {r['time_to_train_days']:.1f} | "
        f"{100 * r['mfu']:.1f} % | ${r['run_cost_usd'] / 1e6:.1f}M |"
    )
    on_page("buyer.md", row)


@pytest.mark.heavy
def test_codesign_llama_space_counts():
    out = printed("codesign", REPO / "spaces" / "codesign-llama3-405b.toml", "--workers", "1")
    assert "candidates (plan x shape x placement): 13,882" in out
    assert ("solved 440 (440 optimal), settled without a solve 13,442 (13,442 pruned: proven "
            "bound >= the incumbent of its cluster size)") in out
    on_page(
        "codesign.md",
        "| `codesign-llama3-405b.toml` (3 sizes, 13,824 plan combinations, 2-4 dimensions) | "
        "13,882 | 440 with the default `--top 15` (its 15 rows exact; 286 with `--top 1`: each "
        "size's own optimum) |",
    )
    # the ranked table: one row per plan and rank (the best plan's 33 other networks of its time
    # and cost and 43 dearer ones of its time folded into its row: 29 and 39 ranked rows, the
    # unit of the ranks, 1 + 29 + 39 = 69 rows of rank 1, the next rank 70), every rank exact
    assert "Best 15 of 440 solved candidates with an answer" in out
    assert "nvl:SW16 spine:SW1024 (+29 as fast and as dear; +39 of the same rank)" in out
    for rank, plan in ((1, "tp8 cp1 pp1 dp2048 ep1 z3 nore"),
                       (70, "tp8 cp1 pp1 dp2048 ep1 z3 sel"),
                       (139, "tp8 cp1 pp2 dp1024 ep1 z3 nore"),
                       (143, "tp8 cp1 pp2 dp1024 ep1 z3 nore")):
        assert f"│ {rank} │ {plan} sp" in out
    assert "│ >=" not in out
    on_page("codesign.md", "34 networks of the best plan at 5,317.1092 ms and $341,475,318 and 43 "
            "more at that time and a higher cost", "`+29 as fast and as dear; +39 of",
            "the next rows are ranks 70, 139 and 143")


LLAMA_512 = """name = "llama70b-512"
objective = "performance"
training_loop = "step"
workload = "model.toml"
constraints = []
bounds = [{ dim = 0, lower_gbps = 50, upper_gbps = 450 },
          { dim = 1, lower_gbps = 12.5, upper_gbps = 50 }]
[network]
dims = [{ block = "Switch", npus = 8, cost_class = "A" },
        { block = "Switch", npus = 64, cost_class = "B" }]
[cost.A]
link_usd_per_gbps = 0.01
switch_usd_per_gbps = 0.01
nic_usd_per_gbps = 0.01
[cost.B]
link_usd_per_gbps = 56.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 240.0
"""


def test_export_bundle_size_of_a_pipelined_plan(tmp_path):
    """Llama 3 70B on 512 H100s (TP 8 x PP 4 x DP 16, m = 32): the bundle's size as
    docs/how-to/llm-plans.md and docs/astra-sim.md give it."""
    model = (REPO / "models" / "llama3-70b.toml").read_text()
    model = model.replace("npus = 4096", "npus = 512").replace("dp = 128", "dp = 16")
    model = model.replace("global_batch_size = 2048", "global_batch_size = 512")
    (tmp_path / "model.toml").write_text(model)
    (tmp_path / "inst.toml").write_text(LLAMA_512)
    bundle = tmp_path / "bundle"
    out = printed("export", tmp_path / "inst.toml", "--astra-sim", bundle)
    assert "517 files (512 trace names per workload, 512 distinct trace file(s)" in out
    assert "1 workload(s), 41,964 trace nodes" in out
    # (run.sh names the bundle's folder: a few bytes depend on its path)
    size = int(re.search(r"([\d,]+) bytes; 1 workload", out)[1].replace(",", ""))
    assert abs(size - 313_826_652) < 1_000, size
    on_page("how-to/llm-plans.md", "writes about 314 MB (313,826,652 bytes)")
    on_page(
        "astra-sim.md",
        "| Llama 3 70B, tp 8 × pp 4 × dp 16, m = 32 (Switch 8 × Switch 64) | 512 | 517 | 512 | "
        "313,826,652 | 41,964 |",
    )
    on_page("explanation/model.md", "about 314 MB for Llama 3 70B on 512 NPUs")


def test_procurement_sensitivity_quotes():
    budget = printed("solve", GPT3_4D, "--budget-usd", "1e7")
    for line in (
        "+1 on the right-hand side of 'sum(bw) == 500' costs 2.571e+04 ns per iteration",
        "1 GB/s more per NPU on dim 0 saves 0.2658 ms per iteration (4,096 GB/s = 32.77 Tb/s "
        "across the cluster)",
        "1 GB/s more per NPU on dim 3 saves 8.341 ms per iteration (4,096 GB/s = 32.77 Tb/s "
        "across the cluster)",
        "budget: $1 more saves 35.58 ns per iteration",
        "the budget row is worth $28,102 per ms",
    ):
        assert line in budget, line
        on_page("how-to/procurement.md", line)
    quoted("how-to/procurement.md", "1 GB/s more per NPU on dim 3 saves $227,537", "solve",
           GPT3_4D, "--objective", "min_cost", "--max-time-ns", "1.3e9")
    quoted("how-to/procurement.md", "relaxing the iteration time by 0.1% (1.167 ms) saves "
           "$549,090", "solve", GPT3_4D)
    quoted("how-to/procurement.md", "(within 10 % for bw[3] in [23.4, 43.46] GB/s)", "solve",
           GPT3_4D, "--ranges")


@pytest.mark.heavy
def test_committee_page_quotes_the_answer_to_the_objective_asked(tmp_path):
    """docs/committee-page.md: the recommendation of ``report --objective X`` with the targets
    given, as the report's JSON gives it, for the four questions the page quotes."""
    compare = REPO / "instances" / "gpt3-4d-compare.toml"

    def asked(*flags: str) -> dict:
        out = tmp_path / "-".join(f.strip("-") for f in flags)
        r = run("report", compare, *flags, "-o", out, "--points", "3", "--json", out / "c.json")
        assert r.exit_code == 0, r.output
        return json.loads((out / "c.json").read_text())

    def at(a: dict, digits: int = 0) -> str:
        return f"at {a['iteration_time_ns'] / 1e6:,.{digits}f} ms"

    from hieropt.report.run import fmt_money

    cheapest = asked("--objective", "min_cost", "--max-time", "1.3s")
    rec, knee = cheapest["headline"], next(a for a in cheapest["alternatives"]
                                           if a["key"] == "knee")
    assert cheapest["recommended"] == "min_cost"
    on_page("committee-page.md",
            f"recommends the cheapest network meeting 1.3 s, ${rec['network_cost_usd']:,.0f} "
            f"{at(rec)}, not the knee ({fmt_money(knee['network_cost_usd'])} {at(knee, 1)}")
    ppc = asked("--objective", "performance_per_cost")["headline"]
    capped = asked("--objective", "performance_per_cost", "--max-time", "1.3s")["headline"]
    on_page("committee-page.md",
            f"`--objective performance_per_cost` recommends {fmt_money(ppc['network_cost_usd'])} "
            f"{at(ppc, 1)}, and with `--max-time 1.3s` the optimum under that cap, "
            f"${capped['network_cost_usd']:,.0f} {at(capped)}")
    fast = asked("--objective", "performance", "--budget", "10M")
    assert fast["recommended"] == "fastest"
    on_page("committee-page.md", "`--objective performance --budget 10M` the fastest network "
            f"within $10M, {fast['headline']['iteration_time_ns'] / 1e6:,.1f} ms")


def test_the_time_split_quoted_for_the_llama_cluster(tmp_path):
    # the page quoted 9,453.63 ms (compute 3,638.54, bubble 1,686.20, exposed 4,128.89) and
    # T_0 = 5,324.74 ms, long after the model moved them
    page = "explanation/model.md"
    at_bounds = printed("evaluate", L405, "--bw", "450,50")
    free = printed("evaluate", L405, "--bw", "1e6,1e6")
    rows = [
        ("compute", "4,713.1557", "74.6%"),
        ("pipeline bubble (fill and drain)", "546.0759", "8.6%"),
        ("exposed communication", "1,058.3776", "16.8%"),
        ("iteration", "6,317.6092", "100.0%"),
        ("issued in forward", "353.1418", "-"),
        ("issued in input_grad", "4,535.4381", "-"),
        ("issued in weight_grad", "126.5211", "-"),
    ]
    for part, ms, share in rows:
        row = f"│ {part} │ {ms} │ {share} │"
        on_page(page, row)
        assert squash(row) in at_bounds, row
    on_page(page, "gives 5,259.5827 ms:")
    on_page(page, "T_0 = compute + bubble = 5,259.2316 ms")  # (4,713.1557 + 546.0759)
    on_page(page, "the collectives' exposed 0.3511 ms")
    assert "│ iteration │ 5,259.5827 │ 100.0% │" in free
    assert "│ compute │ 4,713.1557 │ 89.6% │" in free
    assert "│ pipeline bubble (fill and drain) │ 546.0759 │ 10.4% │" in free
    assert "│ exposed communication │ 0.3511 │ 0.0% │" in free
    on_page(page, "the file's own `min_run_cost` buys 37.6 GB/s of scale-out")
    assert [round(b, 1) for b in solved(tmp_path, L405)["bw_gbps_per_dim"]] == [450.0, 37.6]
    # (the cheapest of the designs within 1e-8 of the fastest time: 50 GB/s less 1e-4)
    fastest = solved(tmp_path, L405, "--objective", "performance")["bw_gbps_per_dim"]
    assert [round(b, 3) for b in fastest] == [450.0, 50.0]


def plan_printed(*args: str | Path) -> str:
    """What ``hieropt workload plan ARGS`` prints (exit 0, or 3 for a plan that does not fit),
    spaces collapsed."""
    r = run("workload", "plan", *args)
    assert r.exit_code in (0, 3), r.output
    return squash(r.stdout)


def test_the_memory_quoted_for_llm_plans():
    """The model files' plans as ``workload plan`` prints them: Llama 3 405B's v = 8 plan (the page
    quoted v = 2 and 75.63 GB after the file moved to v = 8), without FlashAttention, and GPT-3
    without PP, ZeRO, recompute or sequence parallelism (the page's command left out the last)."""
    llama = REPO / "models" / "llama3-405b.toml"
    fits = "stage 1 needs 76.33 GB per NPU of 81.60 GB available (80 GiB HBM less 4 GiB reserve)"
    on_page("llm-training.md", f"`hieropt workload plan models/llama3-405b.toml` prints \"{fits}\"",
            "interleaved with v = 8 one-layer chunks")
    assert fits in plan_printed(llama)
    assert "interleaved v=8" in plan_printed(llama)
    no_flash = "stage 1 needs 351.14 GB per NPU, 269.54 GB more than the 81.60 GB available"
    on_page("llm-training.md", f"(`--set flash_attention=false`) it prints \"{no_flash}")
    assert no_flash in plan_printed(llama, "--set", "flash_attention=false")
    gpt3 = ("--set", "tp=16", "--set", "pp=1", "--set", "dp=256", "--set", "zero_stage=0",
            "--set", "recompute=none")
    line = ("memory per NPU: does not fit: stage 0 needs 237.00 GB per NPU, 155.40 GB more than "
            "the 81.60 GB available (80 GiB HBM less 4 GiB reserve)")
    on_page("how-to/llm-plans.md",
            "hieropt workload plan models/gpt3-175b-llm.toml " + " ".join(gpt3[:6]) + " \\ "
            + " ".join(gpt3[6:]) + " --set sequence_parallel=false", f'prints "{line}"',
            "(with sequence parallelism, the file's default: 214.23 GB, 132.63 GB more;")
    model = REPO / "models" / "gpt3-175b-llm.toml"
    assert line in plan_printed(model, *gpt3, "--set", "sequence_parallel=false")
    assert "stage 0 needs 214.23 GB per NPU, 132.63 GB more" in plan_printed(model, *gpt3)


def test_calibrate_how_to_plans_the_cluster_to_buy_as_the_page_shows(tmp_path):
    """docs/how-to/calibrate.md §3 end to end: calibrate on the H100 one-node runs into mine/, the
    page's two TOML files beside it, and `hieropt solve mine/buy.toml --tokens 1T`: every line the
    page shows is printed (the tables omitted)."""
    page = (DOCS / "how-to" / "calibrate.md").read_text()
    section = page.split("## 3.", 1)[1].split("\n## ", 1)[0]
    mine = tmp_path / "mine"
    mine.mkdir()
    r = run("calibrate", REPO / "validation" / "calibration" / "h100-one-node.csv",
            "--out", mine / "h100-mine.toml")
    assert r.exit_code == 0, r.output
    for body, name in re.findall(r"```toml\n(# mine/(\S+)\n.*?)```", section, re.S):
        (mine / name).write_text(body)
    assert sorted(p.name for p in mine.iterdir()) == ["buy.toml", "h100-mine.toml",
                                                       "llama13b.toml"]
    shown = re.search(r"```\n\$ hieropt solve mine/buy.toml --tokens 1T[^\n]*\n(.*?)```",
                      section, re.S)
    assert shown is not None
    out = printed("solve", mine / "buy.toml", "--tokens", "1T")
    lines = [line for line in shown[1].splitlines() if line.strip()]
    assert len(lines) == 5
    for line in lines:
        assert squash(line).replace("mine/", "") in out.replace(str(mine) + "/", ""), line


def test_provision_how_to_output_lines_are_printed():
    """docs/how-to/provision.md's abridged output of the default instance: its headline lines
    (status, iteration time, continuous optimum, dimension 3's parts) are what provision prints."""
    page = (DOCS / "how-to" / "provision.md").read_text()
    block = page.split("Output on the default instance", 1)[1].split("```\n", 2)[1]
    heads = ("status:", "iteration time:", "continuous optimum", "dimension 3 ")
    lines = [line for line in block.splitlines() if line.startswith(heads)]
    assert len(lines) == 4
    out = printed("provision", GPT3_4D, "--catalog", REPO / "catalogs" / "example-4d.toml")
    for line in lines:
        assert squash(line) in out, line


def test_heuristics_how_to_table_rows_are_printed():
    """docs/how-to/heuristics.md's table of the default compare instance: each design's iteration
    time, network cost, gap and speed-up are what compare prints."""
    page = (DOCS / "how-to" / "heuristics.md").read_text()
    block = page.split("over-provisions (most dollars", 1)[1].split("```\n", 2)[1]
    rows = [line.split() for line in block.splitlines()[1:9]]
    out = run("compare", REPO / "instances" / "gpt3-4d-compare.toml")
    assert out.exit_code == 0, out.output
    printed_rows = {}
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 7:
            printed_rows[cells[0]] = cells
    assert len(rows) == 8
    for row in rows:
        i = next(k for k, cell in enumerate(row) if re.fullmatch(r"[\d,]+\.\d+", cell))
        name, ms, usd, gap, speed = " ".join(row[:i]), row[i], row[i + 1], row[i + 2], row[i + 3]
        got = printed_rows[name]
        assert (got[1], got[2], got[4], got[5]) == (ms, usd, gap, speed), name


def test_the_h100_405b_breakdown_quoted_in_validation():
    """The H100 405B row's time split that docs/validation.md quotes (Megatron-Bridge FP8 rows):
    evaluate's figures, and the InfiniBand part split by hand from the collectives' bytes at 50 GB/s
    per GPU (ring: (n - 1) / n of a reduce-scatter's input, n - 1 shards of an all-gather's)."""
    from hieropt.io.runs import read_runs
    from hieropt.model.timing import evaluate
    from hieropt.studies.validate.predict import run_instance

    run = next(r for r in read_runs(REPO / "validation" / "megatron-bridge-2025.csv")
               if r.label.startswith("H100 405B"))
    bd = evaluate(run_instance(run), list(run.bw_gbps))
    phases = bd.communication_by_phase_ns
    assert f"{bd.iteration_time_ns / 1e6:,.0f}" == "11,944"
    assert f"{bd.compute_ns / 1e6:,.0f}" == "10,995"
    assert f"{bd.bubble_ns / 1e6:,.0f}" == "149"
    assert f"{bd.communication_ns / 1e6:,.0f}" == "800"
    assert f"{(phases['forward'] + phases['input_grad']) / 1e6:,.0f}" == "2,343"
    # InfiniBand by hand (bytes from hieropt workload plan's table of stage 7), ms at 50 GB/s:
    # gradient reduce-scatter 12,483,264,512 x 15/16; weight all-gather 390,102,016 x 15;
    # 15 sends of 16,777,216 per micro-batch slot and CP's 94,371,840 per slot (two K/V
    # all-gathers of 31,457,280 and half a 62,914,560 reduce-scatter), 64 + 7/8 slots
    slots = 64 + 7 / 8
    rs, ag = 12_483_264_512 * 15 / 16 / 50e6, 390_102_016 * 15 / 50e6
    p2p, cp = 15 * 16_777_216 * slots / 50e6, 94_371_840 * slots / 50e6
    assert [round(x) for x in (rs, ag, p2p, cp)] == [234, 117, 327, 122]
    assert abs(rs + ag + p2p + cp - bd.communication_ns / 1e6) < 1.0
    on_page("validation.md", "compute 10,995 ms", "bubble 149 ms",
            "exposed InfiniBand traffic 800 ms", "gradient reduce-scatter in BF16 234 ms",
            "FP8 weight all-gather 117 ms",
            "16.8 MB per micro-batch 327 ms", "CP's K/V exchange 122 ms",
            "the TP collectives on NVLink (2,343 ms;", "what the 11,944 ms are")


def test_nvidia_405b_bf16_rows_quoted_in_validation():
    """NVIDIA's 2024 Llama 3.1 405B BF16 rows of validation/dgxc-h100-2024.csv as
    docs/validation.md quotes them: the rows as the recipe ran the model (16 key/value groups, the
    GPT-2 vocabulary, BF16 gradients and 10-byte optimizer state), as Llama 3.1's 8 groups and
    128,256 tokens, and counted as before, with FP32 gradients and 12-byte state at the fit of
    then (0.6004): the 576-GPU plan then 0.38 GB under the HBM, and over it by 0.08 GB as Llama
    3.1."""
    from hieropt.io.runs import read_runs
    from hieropt.model.memory import memory
    from hieropt.studies.validate.predict import predict_ms

    rows = [r for r in read_runs(REPO / "validation" / "dgxc-h100-2024.csv")
            if r.label.startswith("405B") and not r.label.endswith("FP8")]
    llama = ("model.kv_heads=8", "model.vocab_size=128256")
    fp32 = ("gradient_bytes=4", "optimizer_bytes_per_param=12")

    def errors(sets: tuple[str, ...]) -> str:
        e = [f"{predict_ms(r, sets) / r.measured_ms - 1:+.1%}".replace("%", "") for r in rows]
        return f"{e[0]}, {e[1]} and {e[2]} %"

    assert errors(()) == "+4.5, +2.7 and +2.2 %"
    assert errors(llama) == "+5.5, +3.7 and +3.2 %"
    assert errors((*fp32, "npu.matrix_efficiency=0.6004")) == "+5.5, +3.8 and +3.3 %"
    gb = [round(memory(rows[0].with_values(sets)).peak.total_bytes / 1e9, 2)
          for sets in ((), llama, fp32, (*fp32, *llama))]
    assert gb == [68.30, 68.53, 81.22, 81.68]
    assert not memory(rows[0].with_values((*fp32, *llama))).fits
    on_page("validation.md", "576 to 2,304 GPUs: +4.5, +2.7 and", "+2.2 %, predicted slower",
            "they are +5.5, +3.7 and +3.2 %", "576-GPU plan then 68.53 GB",
            "As the recipe ran it: 68.30 of 81.60 GB", "+5.5, +3.8, +3.3 % (405B)",
            "needed 81.22 GB, 0.38 GB under the limit, and Llama 3.1's shape 81.68 GB",
            "| 405B on 576 GPUs | 17,200 | −18.1 % | +4.5 % |")


@pytest.mark.heavy
def test_nvidia_fp8_delayed_scaling_rows_quoted_in_validation():
    """NVIDIA's 2024 FP8 rows of validation/dgxc-h100-2024.csv (delayed scaling, the H100's FP8
    default) as docs/validation.md quotes them, and the same rows timed as current scaling."""
    from hieropt.io.runs import read_runs
    from hieropt.studies.validate.predict import predict_ms

    rows = [r for r in read_runs(REPO / "validation" / "dgxc-h100-2024.csv")
            if r.label.endswith(" FP8")]
    assert [r.params.npu.fp8_recipe for r in rows] == ["delayed"] * 7
    ms = [predict_ms(r, ()) for r in rows]
    errors = ", ".join(f"{m / r.measured_ms - 1:+.1%}".replace("%", "").replace("-", "−")
                       for m, r in zip(ms, rows, strict=True))
    assert errors == "−16.0, −16.7, −17.5, −18.3, −5.5, −5.9, −13.7"
    assert [round(m) for m in ms] == [9251, 9292, 9302, 9303, 10627, 10644, 10652]
    current = [predict_ms(rows[i], ("fp8_recipe=current",)) for i in (0, 4)]
    assert [round(m) for m in current] == [9500, 10795]
    on_page("validation.md", "−16.0, −16.7, −17.5,", "−18.3 % (measured 11,010 to 11,390 ms,",
            "predicted 9,251 to 9,303); 405B on 576, 1,152 and 2,304",
            "GPUs −5.5, −5.9, −13.7 % (measured 11,240, 11,310, 12,350 ms;",
            "predicted 10,627, 10,644,",
            "(405B 10,795 ms on", "576 GPUs, −4.0 %; 70B 9,500 ms on 64, −13.7 %)")


def test_the_plans_the_codesign_console_names():
    """The too big plans (and the invalid plans' reasons) the console names: as many as the
    report prints (its constant), as docs/codesign.md says."""
    from hieropt.report.codesign import REASONS_SHOWN, invalid_lines, too_big_lines

    plan = {"plan": "p", "stage": 0, "memory_gb": 2.0, "available_gb": 1.0, "over_gb": 1.0}
    assert len(too_big_lines([plan] * 20)) == REASONS_SHOWN + 1 == 9  # (+ "... 12 more")
    assert len(invalid_lines({f"r{i}": 1 for i in range(20)})) == REASONS_SHOWN + 1
    on_page("codesign.md", f"The console prints the {REASONS_SHOWN} commonest reasons",
            f"over)` on `codesign-gpt3-4096-run-cost`), {REASONS_SHOWN} in the console")
