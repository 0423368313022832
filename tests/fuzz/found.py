"""Instances found by the fuzz suites (tests/fuzz/strategies.py draws), kept as regression data for
tests/fuzz/test_solver_at_extreme_magnitudes.py. Each comment gives the call and what an earlier
solver did on it."""

# ruff: noqa: E501
from tests.fuzz.strategies import Row, Spec, WorkloadSpec

__all__ = ["Row", "Spec", "WorkloadSpec"]

# inst = spec.instance(bw_scale=1.0, price_scale=1.0); hieropt.pareto(inst, points=5)
PARETO_INFEASIBLE = Spec(
    dims=(
        ("FullyConnected", 32, "C", 0.0, "ring"),
        ("FullyConnected", 16, "B", 0.0, "direct"),
        ("Switch", 5, "A", 0.0, None),
    ),
    prices={
        "A": (129.569, 0.562341, 0.112202),
        "B": (649.382, None, None),
        "C": (0.0595662, None, None),
    },
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (0.0, "NONE", 0.0),
                    (0.0, "ALLGATHER", 166917.0),
                    (668344.0, "REDUCESCATTER", 76.0),
                ),
            ),
            groups=((8, 16, 5), (8, 4, 5), (4, 4, 5)),
            weight=1.0,
        ),
    ),
    loop="pipeline",
    mode="concurrent",
    rows=(Row(coef=(1.0, 1.0, 1.0), sense=">=", rhs=299.069208999, text="sum(bw) >= f"),),
    bounds=(
        (240.03870938, 1055.6120460000002),
        (7.584790158, 9.019121400000001),
        (1.22490684, 164.43649200000002),
    ),
    x0=(982.879, 8.08165, 111.558),
    pipeline=(7, 7, 69984200.0, 0),
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=1e-06, price_scale=1e-05,
# max_network_cost_usd=1.8359988798156474e-05)
BEATEN_AT_1E6 = Spec(
    dims=(
        ("Switch", 4, "C", 0.0, "ring"),
        ("FullyConnected", 4, "A", 363.078, "ring"),
        ("Ring", 8, "A", 0.0, "ring"),
        ("FullyConnected", 16, "A", 3890.45, "ring"),
    ),
    prices={"A": (0.01, None, None), "C": (44.6684, 0.149624, 794.328)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (100.0, "NONE", 1041.12),
                    (0.0, "REDUCESCATTER", 1437.14),
                    (0.0, "ALLTOALL", 3427680.0),
                ),
            ),
            groups=((1, 4, 1, 1), (1, 4, 4, 1), (1, 1, 1, 1)),
            weight=0.01,
        ),
    ),
    loop="no_overlap",
    mode="concurrent",
    rows=(Row(coef=(0.5, 1.0, 0.5, 0.5), sense="<=", rhs=2.5174199999999995, text="a.bw <= S"),),
    bounds=None,
    x0=(1.01742, 1.0, 1.0, 1.01742),
    pipeline=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=1e-06, price_scale=1e-06)
RESCALE_1E6 = Spec(
    dims=(
        ("Switch", 64, "B", 0.0, "ring"),
        ("FullyConnected", 5, "C", 0.0, "halving_doubling"),
        ("Switch", 8, "C", 0.0, "ring"),
    ),
    prices={"B": (0.0122321, 3.07256, 153.993), "C": (0.917276, 0.0105925, 0.01)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (45185600.0, "NONE", 3715350.0),
                    (0.0, "ALLTOALL", 30199500.0),
                    (602560.0, "ALLTOALL", 2.0),
                ),
                (
                    (0.0, "ALLTOALL", 21195800000.0),
                    (6095370.0, "REDUCESCATTER", 239883.0),
                    (114.815, "NONE", 0.0),
                ),
            ),
            groups=((1, 1, 1), (1, 1, 4), (4, 1, 4)),
            weight=5.49541,
        ),
    ),
    loop="no_overlap",
    mode="concurrent",
    rows=(
        Row(coef=(1.0, 1.0, 1.0), sense="==", rhs=3.07028, text="sum(bw) == S"),
        Row(coef=(1.0, 1.0, 1.0), sense=">=", rhs=1.0972873692, text="sum(bw) >= f"),
    ),
    bounds=None,
    x0=(1.03514, 1.03514, 1.0),
    pipeline=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=0.01, price_scale=1000000.0)
NOT_SET = Spec(
    dims=(
        ("Ring", 8, "B", 602.56, None),
        ("FullyConnected", 8, "B", 5.01187, None),
        ("FullyConnected", 4, "A", 8.51138, None),
        ("FullyConnected", 8, "C", 0.0, "ring"),
    ),
    prices={"A": (0.010292, None, None), "B": (0.0354813, None, None), "C": (1000.0, None, None)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (0.0, "ALLTOALL", 1949840.0),
                    (16595900.0, "ALLREDUCE", 84139.5),
                    (398.107, "NONE", 48977900.0),
                ),
                ((0.0, "NONE", 2344230000.0), (0.0, "ALLREDUCE", 1.0), (100.0, "NONE", 1.0)),
                (
                    (127.35, "NONE", 1.0),
                    (0.0, "NONE", 10531700000.0),
                    (100.0, "ALLREDUCE", 10174200000.0),
                ),
            ),
            groups=((4, 1, 2, 8), (1, 8, 1, 8), (1, 1, 1, 1)),
            weight=1.0,
        ),
    ),
    loop="recompute",
    mode="sequential",
    rows=(Row(coef=(1.0, 1.0, 1.0, 1.0), sense="<=", rhs=6.850730320000001, text="sum(bw) <= S"),),
    bounds=((0.0, None), (0.0, None), (0.0, None), (0.271568979, None)),
    x0=(1.0, 1.03514, 1.14815, 1.03514),
    pipeline=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=1e-06, price_scale=1e-06); hieropt.solve(inst,
# objective='performance_per_cost')
PPC_UNBOUNDED = Spec(
    dims=(("Ring", 2, "A", 0.0, None),),
    prices={"A": (0.01, None, None)},
    workloads=(
        WorkloadSpec(
            layers=(((100.0, "NONE", 1.0), (100.0, "NONE", 1.0), (100.0, "NONE", 1.0)),),
            groups=((1,), (1,), (1,)),
            weight=0.01,
        ),
    ),
    loop="no_overlap",
    mode="concurrent",
    rows=(Row(coef=(1.0,), sense="==", rhs=1.0, text="sum(bw) == S"),),
    bounds=((0.01, None),),
    x0=(1.0,),
    pipeline=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=10.0, price_scale=1e-06); hieropt.solve(inst,
# objective='performance_per_cost')
PPC_HANG = Spec(
    dims=(
        ("FullyConnected", 8, "B", 2398.83, "direct"),
        ("FullyConnected", 8, "C", 0.0, None),
        ("Switch", 3, "A", 0.0, None),
    ),
    prices={
        "A": (0.172783, 1000.0, 5.01187),
        "B": (0.0707946, None, None),
        "C": (0.0258523, None, None),
    },
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (13031700.0, "ALLGATHER", 39129.1),
                    (0.0, "ALLREDUCE", 515822.0),
                    (13489600.0, "ALLGATHER", 6645.08),
                ),
                (
                    (12589.3, "REDUCESCATTER", 822243000.0),
                    (48417200.0, "ALLTOALL", 241964000000.0),
                    (0.0, "NONE", 3.0),
                ),
                ((63826300.0, "NONE", 1.0), (0.0, "NONE", 1437.14), (107.152, "NONE", 1000.0)),
            ),
            groups=((8, 2, 3), (2, 1, 1), (1, 1, 3)),
            weight=1.0,
        ),
    ),
    loop="tp_dp_overlap_cross",
    mode="concurrent",
    rows=(Row(coef=(1.0, 1.0, 1.0), sense="==", rhs=45.146100000000004, text="sum(bw) == S"),),
    bounds=((0.150487, None), (0.622414232, None), (0.194730178, None)),
    x0=(15.0487, 15.0487, 15.0487),
    pipeline=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=0.0001, price_scale=0.0001); hieropt.solve(inst,
# objective='min_cost', max_iteration_time_ns=5406191514.160625)
MIN_COST_RESCALE = Spec(
    dims=(("FullyConnected", 4, "B", 275.423, "ring"),),
    prices={"B": (77.1792, None, None)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (192752.0, "REDUCESCATTER", 527837000.0),
                    (1428.89, "ALLGATHER", 43401000.0),
                    (691831.0, "ALLTOALL", 293427.0),
                ),
                (
                    (8035260.0, "ALLTOALL", 80.0),
                    (0.0, "REDUCESCATTER", 94951.1),
                    (221309.0, "REDUCESCATTER", 153993.0),
                ),
            ),
            groups=((2,), (2,), (1,)),
            weight=41.6869,
        ),
    ),
    loop="no_overlap",
    mode="sequential",
    rows=(
        Row(coef=(1.0,), sense="<=", rhs=195.72284199999999, text="sum(bw) <= S"),
        Row(coef=(1.0,), sense=">=", rhs=32.758934669999995, text="sum(bw) >= f"),
        Row(coef=(1.0,), sense="<=", rhs=116.166435, text="sum(bw[0:1]) <= c"),
    ),
    bounds=((14.63697081, None),),
    x0=(100.577,),
    pipeline=None,
    objective="performance",
    extra={},
)


# inst = spec.instance(); hieropt.solve(inst)  -> SolverError: HiGHS stopped on cutting-plane LP 10
# with 'Solve error'
SOLVE_ERROR = Spec(
    dims=(
        ("Ring", 2, "B", 0.0, "direct"),
        ("Switch", 4, "C", 257.04, "ring"),
        ("Ring", 64, "B", 4.0738, "halving_doubling"),
    ),
    prices={"B": (223.872, None, None), "C": (42.1697, 105.925, 0.205353)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (0.0, "ALLTOALL", 200678000.0),
                    (162.181, "ALLGATHER", 16500600.0),
                    (3758.37, "REDUCESCATTER", 93.0),
                ),
                (
                    (0.0, "ALLREDUCE", 4027170.0),
                    (0.0, "NONE", 0.0),
                    (7244.36, "REDUCESCATTER", 414477000.0),
                ),
            ),
            groups=((1, 4, 64), (2, 4, 4), (2, 4, 16)),
            weight=0.011749,
        ),
        WorkloadSpec(
            layers=(
                ((0.0, "ALLGATHER", 1251700.0), (0.0, "ALLREDUCE", 41686900.0), (0.0, "NONE", 0.0)),
            ),
            groups=((2, 1, 4), (2, 4, 8), (1, 4, 8)),
            weight=0.107152,
        ),
    ),
    loop="recompute",
    mode="concurrent",
    rows=(Row(coef=(1.0, 1.0, 1.0), sense="<=", rhs=1209.7442207000001, text="sum(bw) <= S"),),
    bounds=None,
    x0=(8.81049, 1000.0, 3.52777),
    pipeline=None,
    step=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(bw_scale=0.01); hieropt.solve(inst)  -> LIMIT at gap 0.00986 after 16 LPs
# ("no further progress at the LP tolerance floor") at every magnitude: a 1-byte reduce-scatter and
# a 62 MB all-gather share one term, stored at 1 byte, so its epigraph coefficients fell below
# HiGHS's 1e-9 and were dropped (long run, seed 7)
TINY_FIRST_TERM = Spec(
    dims=(("FullyConnected", 128, "A", 0.0, None), ("Switch", 128, "A", 0.0, None)),
    prices={"A": (86.5964, 13.3352, 0.917276)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (8317.64, "ALLREDUCE", 33787000000.0),
                    (8035.26, "P2P", 2238.72),
                    (0.0, "REDUCESCATTER", 10777.1),
                ),
                (
                    (0.0, "ALLTOALL", 70388200.0),
                    (100000000.0, "REDUCESCATTER", 1.0),
                    (8035.26, "ALLREDUCE", 9.0),
                ),
                (
                    (2238.72, "ALLREDUCE", 1905.46),
                    (0.0, "ALLGATHER", 62373500.0),
                    (441570.0, "P2P", 26760900.0),
                ),
            ),
            groups=((4, 4), (8, 2), (1, 8)),
            weight=1.0,
        ),
    ),
    loop="tp_dp_overlap",
    mode="concurrent",
    rows=(
        Row(coef=(2.5, 0.5), sense="<=", rhs=16.432416, text="a.bw <= S"),
        Row(coef=(1.0, 1.0), sense=">=", rhs=0.994999104, text="sum(bw) >= f"),
        Row(coef=(1.0, 1.0), sense=">=", rhs=0.300377088, text="sum(bw) >= f"),
    ),
    bounds=None,
    x0=(2.1752, 16.788),
    pipeline=None,
    step=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(); hieropt.solve(inst, objective='min_cost',
# max_iteration_time_ns=124854471916.48625) -> LIMIT at gap 2.34e-06 after 16 LPs (long run,
# procurement seed 1): two bandwidths at their bounds made the KKT polish give up, and the 1e-12
# margin below the target moved the exact optimum 1e-6 of the way to the fastest design (the target
# is within ~1e-6 of the fastest time)
MIN_COST_AT_BOUNDS = Spec(
    dims=(
        ("Ring", 4, "A", 100.0, "ring"),
        ("Switch", 2, "A", 4897.79, "direct"),
        ("Switch", 8, "A", 295.121, None),
    ),
    prices={"A": (0.010292, 0.01, 0.398107)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (0.0, "ALLGATHER", 21940700000.0),
                    (0.0, "REDUCESCATTER", 183548000000.0),
                    (17179.1, "NONE", 0.0),
                ),
            ),
            groups=((1, 1, 4), (2, 1, 4), (2, 1, 1)),
            weight=1.0,
        ),
        WorkloadSpec(
            layers=(
                (
                    (822243.0, "REDUCESCATTER", 5655.88),
                    (0.0, "NONE", 0.0),
                    (0.0, "NONE", 7673610.0),
                ),
            ),
            groups=((1, 2, 1), (4, 2, 4), (4, 1, 4)),
            weight=0.151356,
        ),
    ),
    loop="tp_dp_overlap_cross",
    mode="sequential",
    rows=(),
    bounds=(
        (1.3458942569999999, 1.9839521500000001),
        (0.451991226, 2.5267969999999997),
        (0.292803015, 1.7132239),
    ),
    x0=(1.38835, 1.38835, 1.38835),
    pipeline=None,
    step=None,
    objective="performance",
    extra={},
)

# inst = spec.instance(); hieropt.solve(inst)  -> LIMIT at an honest gap of 1.5e-08 (target 1e-8)
# after 23 LPs, at every magnitude (long run, random instances seed 3)
NEAR_TARGET_LIMIT = Spec(
    dims=(
        ("FullyConnected", 4, "B", 0.0, "ring"),
        ("Switch", 2, "A", 724.436, "halving_doubling"),
        ("Switch", 64, "A", 0.0, "ring"),
        ("Ring", 6, "A", 1.0, "ring"),
    ),
    prices={"A": (334.965, 205.353, 1000.0), "B": (0.0501187, None, None)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (1584.89, "NONE", 0.0),
                    (6309570.0, "REDUCESCATTER", 67.0),
                    (0.0, "ALLREDUCE", 8128.31),
                ),
            ),
            groups=((2, 1, 16, 1), (4, 1, 8, 1), (2, 2, 4, 1)),
            weight=1.0,
        ),
        WorkloadSpec(
            layers=(
                (
                    (100000000.0, "NONE", 0.0),
                    (0.0, "ALLREDUCE", 4265.8),
                    (179.887, "REDUCESCATTER", 595662000.0),
                ),
                (
                    (114815.0, "ALLGATHER", 1000.0),
                    (3388.44, "ALLGATHER", 29682500000.0),
                    (0.0, "REDUCESCATTER", 260016.0),
                ),
            ),
            groups=((1, 1, 1, 6), (4, 2, 4, 2), (4, 2, 1, 2)),
            weight=1.58489,
        ),
    ),
    loop="step",
    mode="sequential",
    rows=(Row(coef=(3.0, 3.0, 1.5, 3.5), sense="<=", rhs=272.46283402499995, text="a.bw <= S"),),
    bounds=None,
    x0=(80.3526, 1.65006, 9.12011, 1.01742),
    pipeline=None,
    step=(10, 6, 2, True),
    objective="performance",
    extra={},
)


# inst = spec.instance(bw_scale=1.0, price_scale=1.0); hieropt.solve(inst, objective="min_max_regret")
# every own optimum starves a dimension another workload loads: the regret loop once stopped at
# such a start as "optimal" with value inf (tests/solve/test_portfolio.py)
STARVED_REGRET = Spec(
    dims=(
        ("Ring", 4, "C", 0.0, "halving_doubling"),
        ("Switch", 2, "A", 0.0, "direct"),
        ("Ring", 8, "A", 114.815, "ring"),
    ),
    prices={"A": (298.538, 0.0771792, 1.53993), "C": (0.0129569, None, None)},
    workloads=(
        WorkloadSpec(
            layers=(
                (
                    (100000000.0, "ALLGATHER", 13883500000.0),
                    (2660730.0, "NONE", 1.0),
                    (118.85, "REDUCESCATTER", 1.0),
                ),
            ),
            groups=((2, 1, 1), (2, 1, 2), (2, 2, 1)),
            weight=1.0,
        ),
        WorkloadSpec(
            layers=(
                (
                    (100.0, "ALLREDUCE", 63.0),
                    (107.152, "ALLGATHER", 1174.9),
                    (110.917, "ALLGATHER", 2.0),
                ),
            ),
            groups=((1, 1, 4), (4, 1, 1), (4, 1, 8)),
            weight=0.0114815,
        ),
        WorkloadSpec(
            layers=(
                (
                    (114.815, "ALLGATHER", 1.0),
                    (114.815, "ALLGATHER", 10000000000.0),
                    (100.0, "ALLREDUCE", 83.0),
                ),
                (
                    (123027.0, "NONE", 10000000000.0),
                    (100.0, "NONE", 39129.1),
                    (3162280.0, "ALLREDUCE", 5432.5),
                ),
            ),
            groups=((1, 1, 1), (1, 1, 1), (1, 1, 1)),
            weight=0.0104713,
        ),
    ),
    loop="pipeline",
    mode="sequential",
    rows=(Row(coef=(1.0, 1.0, 1.0), sense="==", rhs=3.15951, text="sum(bw) == S"),),
    bounds=None,
    x0=(1.05317, 1.05317, 1.05317),
    pipeline=(2, 1, 234423.0, 0),
    step=None,
    objective="performance",
    extra={},
)
