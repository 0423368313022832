"""Fidelity tests against the prebuilt ASTRA-sim 2.0 analytical binary (../shared/tools/astra-sim,
or $ASTRA_SIM).

They skip when the binary is absent or cannot start (it needs libprotobuf.so.32: ``apt-get install
-y libprotobuf32`` on Debian 12; ``.ci/run`` installs it when it can).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hieropt.spec import (
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    Mapping,
    Network,
    Phase,
    Workload,
)

REPO = Path(__file__).resolve().parents[2]
BINARY_NAME = "AstraSim_Analytical_Congestion_Unaware"


def binary_path() -> Path | None:
    """$ASTRA_SIM, else ../shared/tools/astra-sim/<binary> beside the repository; None when neither
    exists."""
    env = os.environ.get("ASTRA_SIM")
    cand = Path(env) if env else REPO.parent / "shared" / "tools" / "astra-sim" / BINARY_NAME
    return cand if cand.is_file() else None


@pytest.fixture(scope="session")
def astra_sim() -> Path:
    """The simulator binary; skips the test when it is absent or its shared libraries are
    missing."""
    b = binary_path()
    if b is None:
        pytest.skip("ASTRA-sim binary not found (set ASTRA_SIM)")
    r = subprocess.run([str(b)], capture_output=True, text=True, timeout=60)
    if "error while loading shared libraries" in r.stderr:
        pytest.skip(
            f"ASTRA-sim cannot start: {r.stderr.strip()} (apt-get install -y libprotobuf32)"
        )
    return b


def ph(compute_ns: float = 0.0, collective: str = "NONE", size_bytes: float = 0.0) -> Phase:
    """A phase (compute ns, collective name, bytes)."""
    return Phase(compute_ns=compute_ns, collective=collective, size_bytes=size_bytes)


def make_instance(
    dims: list[tuple],
    layers: list[Layer],
    forward,
    input_grad,
    weight_grad,
    training_loop: str = "no_overlap",
    dimension_mode: str = "sequential",
    **extra,
) -> Instance:
    """An instance from (block, npus[, algorithm[, latency_ns]]) tuples, layers and a mapping; one
    cost class."""
    dd = []
    for t in dims:
        block, npus = t[0], t[1]
        kw = {}
        if len(t) > 2 and t[2]:
            kw["algorithm"] = t[2]
        if len(t) > 3:
            kw["latency_ns"] = t[3]
        dd.append(Dimension(block=block, npus=npus, cost_class="C", **kw))
    return Instance(
        name="fidelity",
        network=Network(dims=tuple(dd)),
        workload=Workload(name="w", layers=tuple(layers)),
        mapping=Mapping(
            forward=tuple(forward), input_grad=tuple(input_grad), weight_grad=tuple(weight_grad)
        ),
        cost=CostModel(
            classes={
                "C": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)
            }
        ),
        objective="performance",
        training_loop=training_loop,
        dimension_mode=dimension_mode,
        **extra,
    )
