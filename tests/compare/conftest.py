"""LIBRA instances for the comparison tests (all applicable pairings; DLRM with an all-dimension
communicator)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hieropt import api
from tests.compare.libra import CONSTRAINTS


@pytest.fixture(scope="session")
def libra_instance(shared_data: Path, tmp_path_factory):
    """Build the instance of a LIBRA case (DLRM: communicator spanning every dimension, written to a
    temp dir)."""
    tmp = tmp_path_factory.mktemp("dlrm")

    def build(case: tuple[str, str, str], objective: str = "performance"):
        dims, wl, cset = case
        libra = shared_data / "libra"
        net = libra / "network" / f"{dims}_network.yml"
        if wl == "DLRM":
            npus = yaml.safe_load(net.read_text())["NpusCount"]
            comm = tmp / f"DLRM_{dims}.yml"
            g = "[" + ", ".join(str(n) for n in npus) + "]"
            comm.write_text(f"Forward: {g}\nInputGrad: {g}\nWeightGrad: {g}\n")
        else:
            comm = (
                libra
                / "communicator"
                / (f"{wl}_{dims.upper()}.yml" if wl == "Turing_NLG" else f"{wl}_{dims}.yml")
            )
        cost = libra / "cost_model" / f"{dims}_cost_model.yml"
        return api.load_libra(net, libra / "workload" / f"{wl}.txt", comm, cost, CONSTRAINTS[cset],
                              objective=objective)

    return build
