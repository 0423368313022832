"""LIBRA's cases for the comparison tests: its constraint sets, its workloads and every applicable
pairing of them with its 3-D and 4-D networks."""

from __future__ import annotations

from tests.cases import shared_data_dir

CONSTRAINTS = {
    "total_bw_500gbps": ["sum(bw) == 500"],
    "multiple_constraints": ["sum(bw) == 1000", "bw[0] == 500", "bw[0] >= bw[1]", "bw[1] >= bw[2]",
                             "bw[2] + bw[3] == 200"],
}
"""Constraint set name -> LIBRA's constraints (bandwidths in GB/s)."""
WORKLOADS = ("GPT_3", "MSFT_1T", "Turing_NLG", "ResNet_50", "DLRM")
"""LIBRA's workloads."""


def libra_cases() -> list[tuple[str, str, str]]:
    """(dims, workload, constraint set) of every applicable pairing ([] without the shared data)."""
    if shared_data_dir() is None:
        return []
    return [(dims, wl, cset) for dims in ("3d", "4d") for wl in WORKLOADS for cset in CONSTRAINTS
            if not (dims == "3d" and cset == "multiple_constraints")]


def case_id(case: tuple[str, str, str]) -> str:
    """A case's test id: its dims, workload and constraint set joined by ``-``."""
    return "-".join(case)
