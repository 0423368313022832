"""Fat-tree counts, optics and power by hand (hieropt.model.fabric).

Notation: radix k; a tier below the top splits its ports into d down and u up (d / u <= its ratio);
leaves = ceil(E / d_1); at tier l a block of n children gets c switches per plane, c = the smallest
divisor of u_(l-1) with c >= ceil(n u_(l-1) / d_l) (d_L = k at the top). Links from tier l are
(switches of tier l) x u_l.
"""

from __future__ import annotations

import math

import pytest

from hieropt.model.fabric import design_fat_tree, fat_tree, port_splits, switch_fabric
from hieropt.model.optics import Optic, fabric_lines, link_levels


def counts(tree):
    return [t.switches for t in tree.tiers]


# --- 1,024 endpoints, radix 64 --------------------------------------------------------------------

def test_1024_radix64_non_blocking_two_tiers():
    # 1 tier holds 64 < 1,024; 2 tiers hold 64 * 32 = 2,048 >= 1,024 -> L = 2 with (d, u) = (32,
    # 32). leaves = 1024 / 32 = 32; spines: n = 32 leaves, c | 32 with c >= ceil(32 * 32 / 64) = 16
    # ->
    # 16. links: 1,024 NIC-leaf, 32 * 32 = 1,024 leaf-spine. 48 switches: NVIDIA DGX SuperPOD B200
    #     RA, 4
    # SU / 1,024 GPUs (32 leaf, 16 spine, 1,024 + 1,024 cables).
    tree = design_fat_tree(1024, 64)
    assert tree.n_tiers == 2 and tree.splits == ((32, 32),)
    assert counts(tree) == [32, 16] and tree.switches == 48
    assert tree.links == (1024, 1024)
    assert tree.bandwidth_factor() == 1.0


def test_1024_radix64_two_to_one():
    # Leaf tier 2:1. Splits with d / u <= 2 (most down ports first): (42,21), (40,20), (38,19),
    # (36,18), (32,16), ...
    #   (42,21): leaves ceil(1024/42) = 25; c | 21, c >= ceil(25*21/64) = ceil(8.20) = 9 -> 21
    # spines: 46 switches
    #   (40,20): leaves ceil(1024/40) = 26; c | 20, c >= ceil(26*20/64) = ceil(8.13) = 9 -> 10
    # spines: 36 switches
    #   (38,19): 27 leaves, c | 19 >= 9 -> 19: 46;  (36,18): 29 leaves, c | 18 >= 9 -> 9: 38;
    # (32,16): 32 + 8 = 40;
    #   d <= 28 needs >= 37 leaves alone. Fewest: (40,20) with 26 + 10 = 36 switches (vs 48 at 1:1).
    # links: 1,024 NIC-leaf and 26 * 20 = 520 leaf-spine (half of 1:1's); each GPU keeps 20/40 = 1/2
    # of its NIC.
    assert fat_tree(1024, 64, [(42, 21)]).switches == 46
    assert counts(fat_tree(1024, 64, [(36, 18)])) == [29, 9]
    tree = design_fat_tree(1024, 64, (2,))
    assert tree.splits == ((40, 20),) and counts(tree) == [26, 10] and tree.switches == 36
    assert tree.links == (1024, 520)
    assert tree.bandwidth_factor() == pytest.approx(0.5)
    # each spine: 2 links (20 / 10) from each of 26 leaves, <= 64
    assert tree.tiers[1].down_used == 26 * 2


# --- 16,384 endpoints, radix 64 -------------------------------------------------------------------

def test_16384_radix64_non_blocking_three_tiers():
    # 2 tiers hold 2,048 < 16,384; 3 tiers hold 64 * 32 * 32 = 65,536 -> L = 3, (32,32) on tiers 1
    # and 2. leaves 16384/32 = 512; tier 2: 512/32 = 16 pods of n = 32 leaves, c | 32 >=
    # ceil(32*32/32) = 32 -> 32 per pod: 512 spines; top: n = 16 pods, c | 32 >= ceil(16*32/64) = 8
    # -> 8 per plane, 32 * 8 = 256 core. links: 16,384 on each level. 1,280 switches: NVIDIA DGX
    # SuperPOD B200 RA, 64 SU / 16,384 GPUs (512 leaf, 512 spine, 256 core). Lower bound too: at 1:1
    # a switch has <= 32 down ports, so tiers 1 and 2 need >= 512 each.
    tree = design_fat_tree(16384, 64)
    assert tree.splits == ((32, 32), (32, 32))
    assert counts(tree) == [512, 512, 256] and tree.switches == 1280
    assert tree.links == (16384, 16384, 16384)
    assert tree.bandwidth_factor() == 1.0


def test_16384_radix64_two_to_one_at_the_leaves():
    # Leaves 2:1, tiers 2 and 3 non-blocking (3 tiers: 2 tiers hold at most 64 * 42 = 2,688).
    #   (40,20),(32,32): leaves ceil(16384/40) = 410; tier 2: ceil(410/32) = 13 pods of n =
    # ceil(410/13) = 32,
    #     c | 20 >= ceil(32*20/32) = 20 -> 20 per pod: 260; top: n = 13, c | 32 >= ceil(13*32/64) =
    # 7 -> 8,
    #     20 * 8 = 160 core: 830 switches; links 16,384, 410 * 20 = 8,200, 260 * 32 = 8,320.
    #   (42,21),(32,32): 391 leaves, 13 pods of n = 31, c | 21 >= ceil(31*21/32) = 21 -> 273; top 21
    # * 8 = 168: 832.
    assert counts(fat_tree(16384, 64, [(42, 21), (32, 32)])) == [391, 273, 168]
    tree = design_fat_tree(16384, 64, (2,))
    assert tree.splits == ((40, 20), (32, 32))
    assert counts(tree) == [410, 260, 160] and tree.switches == 830
    assert tree.links == (16384, 8200, 8320)
    assert tree.bandwidth_factor() == pytest.approx(0.5)


def test_reference_architecture_tables():
    # NVIDIA DGX SuperPOD RAs (docs.nvidia.com/dgx-superpod): B200 (64-port NDR) and B300 XDR
    # (144-port) tables.
    assert counts(design_fat_tree(512, 64)) == [16, 8]
    assert counts(design_fat_tree(4096, 64)) == [128, 128, 64]
    assert counts(design_fat_tree(8192, 64)) == [256, 256, 128]
    assert counts(design_fat_tree(576, 144)) == [8, 4]
    # 18 | 72: 4 links from every leaf to every spine
    assert counts(design_fat_tree(2304, 144)) == [32, 18]
    assert counts(design_fat_tree(4608, 144)) == [64, 36]
    assert counts(design_fat_tree(10368, 144)) == [144, 72]
    # Al-Fares et al. 2008: k-ary 3-tier fat tree, k^3/4 hosts, 5k^2/4 switches
    assert design_fat_tree(64**3 // 4, 64).switches == 5 * 64**2 // 4


# --- placements -----------------------------------------------------------------------------------

def test_multi_plane_nvl72():
    # 72 GPUs x 18 NVLink ports on radix-72 switch chips: one plane per port, 72 ports each -> 18
    # chips (9 trays of 2), one tier. As one fabric of 1,296 ports it would need 36 leaves + 18
    # spines (c | 36 >= ceil(36*36/72)).
    mp = switch_fabric(1, 72, 1296, 72, placement="multi_plane")
    assert mp.switches == 18 and mp.tiers == 1 and mp.bandwidth_factor == 1.0
    assert switch_fabric(1, 72, 1296, 72).switches == 54


def test_rail_optimized():
    # 1,024 GPUs in 8 rails of 128 (SuperPOD 4 SU): leaves 8 * ceil(128/32) = 32, spines 16 (as one
    # fabric); a rail spans 4 leaves, so its traffic crosses the spines.
    f = switch_fabric(8, 128, 1024, 64, placement="rail_optimized")
    assert f.switches == 48 and f.bandwidth_factor == 1.0
    # 2:1: per rail ceil(128/40) = ceil(128/32) = 4 leaves either way, so (32,16) wins: 32 leaves, c
    # | 16 >= ceil(32*16/64) = 8 -> 8 spines (40 switches; (40,20) would need c | 20 >= 10 -> 42);
    # the rail keeps 1/2.
    f2 = switch_fabric(8, 128, 1024, 64, (2,), placement="rail_optimized")
    assert (
        f2.trees[0][0].splits == ((32, 16),)
        and f2.switches == 40
        and f2.bandwidth_factor == pytest.approx(0.5)
    )
    # rails of 16 ports fit one leaf: no oversubscribed link on the group's path
    f3 = switch_fabric(32, 16, 512, 64, (2,), placement="rail_optimized")
    assert f3.bandwidth_factor == 1.0
    # per group (LIBRA's counting): 32 separate switches of 16 ports
    assert switch_fabric(32, 16, 512, 64).switches == 32


# --- optics, cost and power -----------------------------------------------------------------------

NIC_SIDE = Optic("400G OSFP DR4 (NIC)", reach_m=100, usd=700, watts=9, ports=1, fits="nic")
TWIN_100 = Optic("2x400G OSFP DR4", reach_m=100, usd=1250, watts=17, ports=2, fits="switch")
TWIN_500 = Optic("2x400G OSFP DR8 500 m", reach_m=500, usd=1400, watts=17, ports=2, fits="switch")
DAC = Optic("DAC 2 m", reach_m=2, usd=200, watts=0, ports=1, kind="cable")
OPTICS = (NIC_SIDE, TWIN_100, TWIN_500, DAC)


def totals(lines):
    return sum(x.usd for x in lines), sum(x.watts for x in lines)


def test_power_and_cost_1024_non_blocking():
    # 1,024 NICs of 25 W / $2,000; 48 switches of 750 W / $35,000.
    # level 0 (30 m): per link NIC module + half a twin module: 700 + 625 = $1,325 (DAC does not
    # reach):
    #   1,024 NIC modules (9 W) and 512 twin modules (17 W);
    # level 1 (100 m): 1,024 links, two twin ends: 512 + 512 = 1,024 twin modules (the 100 m twin,
    # cheaper). power: 1,024 * 25 + 48 * 750 + 1,024 * 9 + 1,536 * 17 = 25,600 + 36,000 + 9,216 +
    # 26,112 = 96,928 W cost: 1,024 * 2,000 + 48 * 35,000 + 1,024 * 700 + 1,536 * 1,250 = 2,048,000
    # + 1,680,000 + 716,800 + 1,920,000
    #       = 6,364,800 $
    f = switch_fabric(1, 1024, 1024, 64)
    levels = link_levels(f, [30, 100], OPTICS)
    assert [dict((o.name, q) for o, q in lv.parts) for lv in levels] == [
        {NIC_SIDE.name: 1024, TWIN_100.name: 512}, {TWIN_100.name: 1024}]
    lines = fabric_lines(f, ("QM9700", 35000, 750), levels, nics=("CX-7", 1024, 2000, 25))
    usd, watts = totals(lines)
    assert watts == 96928
    assert usd == 6_364_800


def test_power_16384_two_to_one():
    # 830 switches * 750 W = 622,500; 16,384 NICs * 25 W = 409,600;
    # level 0 (30 m): 16,384 NIC modules * 9 W = 147,456 and 8,192 twin; level 1 (100 m): 8,200
    # links -> 4,100 + 4,100 twin; twin 100 m total 8,192 + 8,200 = 16,392 * 17 = 278,664; level 2
    # (500 m): 8,320 links -> 8,320 twin 500 m modules * 17 = 141,440. Total 622,500 + 409,600 +
    # 147,456 + 278,664 + 141,440 = 1,599,660 W.
    f = switch_fabric(1, 16384, 16384, 64, (2,))
    levels = link_levels(f, [30, 100, 500], OPTICS)
    assert levels[2].parts == ((TWIN_500, 8320),)
    _, watts = totals(fabric_lines(f, ("sw", 35000, 750), levels, nics=("nic", 16384, 2000, 25)))
    assert watts == 1_599_660


def test_cable_when_it_reaches():
    # NIC-leaf links of 2 m take one DAC each ($200 < $1,325 of two transceivers), 0 W.
    f = switch_fabric(1, 1024, 1024, 64)
    assert link_levels(f, [2, 100], OPTICS)[0].parts == ((DAC, 1024),)


# --- bad input: one clear error, never a hang -----------------------------------------------------

@pytest.mark.parametrize("radix", [0, 1, 2, 3])
def test_radix_below_four_raises(radix):
    with pytest.raises(ValueError, match="radix .* below 4"):
        design_fat_tree(100, radix)


@pytest.mark.parametrize("ratio", [0.5, 0.0, -1.0, math.inf, math.nan])
def test_oversubscription_below_one_raises(ratio):
    with pytest.raises(ValueError, match="oversubscription"):
        design_fat_tree(1000, 64, (ratio,))


def test_max_tiers_and_missing_reach():
    with pytest.raises(ValueError, match="need 3 tiers.*max_tiers = 2"):
        design_fat_tree(16384, 64, max_tiers=2)
    f = switch_fabric(1, 16384, 16384, 64)
    with pytest.raises(ValueError, match="link level 2 .* 2000 m"):
        link_levels(f, [30, 100, 2000], OPTICS)
    with pytest.raises(ValueError, match="3 link levels"):
        link_levels(f, [30, 100], OPTICS)


def test_huge_fabrics_terminate():
    # radix 4 at 1:1 doubles the capacity per tier: 10^18 endpoints need 59 tiers (4 * 2^58 >= 1e18
    # > 4 * 2^57)
    assert design_fat_tree(10**18, 4).n_tiers == 59
    assert port_splits(4, 1) == ((2, 2),)
    assert port_splits(64, 2)[0] == (42, 21) and port_splits(64, 1)[0] == (32, 32)


def test_cost_per_endpoint_near_deepseek_v3():
    # Two-tier 64-port 400G fat tree at its full 2,048 endpoints: 64 leaves + 32 spines at $35,000;
    # optics at the catalog estimates ($700 NIC module, $1,250 twin-port switch module): 2,048 NIC
    # modules and 1,024 + 2 x 1,024 twin modules. (96 x 35,000 + 2,048 x 700 + 3,072 x 1,250) /
    # 2,048 = 8,633,600 / 2,048 = $4,215.6 per endpoint without NICs; DeepSeek-V3 (arXiv 2505.09343,
    # Table 3) reports $4.39k per endpoint for FT2 on 64-port 400G IB.
    f = switch_fabric(1, 2048, 2048, 64)
    levels = link_levels(f, [30, 100], OPTICS)
    usd, _ = totals(fabric_lines(f, ("QM9700", 35000, 750), levels))
    assert f.switches == 96 and usd / 2048 == pytest.approx(4215.625)
