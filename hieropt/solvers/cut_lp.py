"""Kelley's cutting planes (Kelley 1960) on an LP with reciprocal links t_j >= 1/B_j: the one loop
every convex objective shares. A round: the LP (:class:`hieropt.solvers.dense_lp.DenseLP` or HiGHS),
the Newton polish (:mod:`hieropt.solvers.kkt`), exact candidates, the Lagrangian bound
(:mod:`hieropt.solvers.dual_bound`), new tangent cuts; the re-centring and stall rules.
docs/explanation/solving.md and decision record 0001 give the reasons."""

from __future__ import annotations

import numpy as np

from ..errors import SolverError, limit_reached
from ..formulation.arrays import LPArrays, tangent_cut
from ..result import Status
from .dense_lp import MAX_COLS, MAX_ROWS, SEEN, DenseLP
from .dual_bound import lagrangian_bound
from .highs import TIGHT_TOLERANCE, HighsLP, LPBackend, LPResult
from .kkt import polish
from .linalg import INF
from .outcome import Loop, LoopState, Multipliers, OAResult

SEED_POINTS = np.array([0.1, 0.5, 2.0])
"""Initial tangent cuts per link, at these multiples of its unit."""
CUT_RANGE = (1e-6, 1e6)
"""Cuts only at scaled points in this range (coefficients well inside HiGHS's matrix range)."""
CENTRE = (1e-2, 1e2)
"""The scale is re-centred when a link's incumbent leaves this range of its unit."""
ROUNDING = 1e-12
"""Relative margin taken off every Lagrangian bound, far above the rounding error of evaluating
it."""
TRUST = 0.5
"""A link outside its cuts' span whose LP t is below this fraction of 1/B is cut before the polish
(:meth:`CutLP.trusted`)."""
MAX_RESCALES = 6


class CutLP:
    """An LP with reciprocal links, its tangent cuts (native units: they survive a re-scale) and the
    loop. Subclasses set ``scale`` (None: never re-centred), implement ``_compile(scale)``,
    ``_unit()`` (each link's B unit, native per scaled), ``_rescaled(design)`` and optionally
    :meth:`_col_upper`, then call :meth:`_start`."""

    scale: object
    arr: LPArrays
    max_lps: int = 500
    """LPs one loop solves before it stops with LIMIT and the gap proved."""
    solver: LPBackend
    unit_cost: np.ndarray
    """(D,) the network's prices, $ per GB/s."""

    def _col_upper(self) -> np.ndarray | None:
        return None

    def _start(self, time_limit_s: float) -> None:
        self.certificate: Multipliers | None = None  # (of the last loop's best bound)
        self.lps = 0
        self.rescales = 0
        self.arr = self._compile(self.scale)
        self._bounds()
        seeds = self._seeds()
        # (the LP with its seed cuts, kept on the shared compiled arrays)
        saved = self.arr.cache.get("seeded")  # (kept from the second use of the arrays on: SEEN)
        if (saved is not None and saved is not SEEN and saved[0] == seeds
                and (solver := saved[1].copy(time_limit_s)) is not None):
            self.solver, self._cuts = solver, list(saved[2])
            return
        self._cuts: list[tuple[int, float]] = []  # (link, B in native units) of every cut
        big = self.arr.n_cols > MAX_COLS or self.arr.n_rows > MAX_ROWS  # (DAQP while small)
        self.solver = (HighsLP if big else DenseLP)(self.arr, time_limit_s)
        self._add_cuts(seeds)
        if not isinstance(self.solver, DenseLP):
            return
        if saved is None:
            self.arr.cache["seeded"] = SEEN
        elif (kept := self.solver.copy()) is not None:
            self.arr.cache["seeded"] = (seeds, kept, list(self._cuts))

    def _seeds(self) -> list[tuple[int, float]]:
        """The initial cuts (link, B in native units): :data:`SEED_POINTS` times each link's
        unit."""
        seeds = SEED_POINTS.tolist()
        return [(j, u * f) for j, u in enumerate(self._unit().tolist()) for f in seeds]

    @property
    def cuts(self) -> int:
        """Tangent cuts in the LP."""
        return len(self._cuts)

    def close(self) -> None:
        """Release the LP's solver object (for re-use by this thread)."""
        self.solver.close()

    def _bounds(self) -> None:
        self._row_lower = self.arr.row_lower.copy()
        self._row_upper = self.arr.row_upper.copy()

    @property
    def loaded(self) -> tuple[int, ...]:
        """Dimensions that carry traffic."""
        return self.arr.loaded

    def network_cost(self, bw: np.ndarray) -> float:
        """cost(B) in $ of ``bw`` ((D,) GB/s)."""
        return float(np.dot(self.unit_cost, bw))

    def _set_row(self, row: int, lo: float, hi: float) -> None:
        self.solver.change_row_bounds(row, lo, hi)
        self._row_lower[row], self._row_upper[row] = lo, hi

    def _reload(self, seeds: bool = False) -> None:
        """Re-compile the LP at the current scale with every cut so far (and the seeds)."""
        self.arr = self._compile(self.scale)
        self.solver.load(self.arr)
        self._bounds()
        cuts, self._cuts = self._cuts, []
        self._add_cuts(cuts + self._seeds() if seeds else cuts)

    def _solve(self, costs: np.ndarray, maximize: bool = False) -> LPResult:
        self.solver.set_costs(costs, maximize)
        self.lps += 1
        return self.solver.solve()

    def _add_cuts(self, points: list[tuple[int, float]]) -> None:
        """Tangent cuts at (link, B in native units), skipping points outside :data:`CUT_RANGE`."""
        if not points:
            return
        unit = self._unit().tolist()
        pair_t, pair_b = self._pairs()
        low, high = CUT_RANGE
        new, index, value = [], [], []
        for j, b in points:
            j, b = int(j), float(b)
            beta = b / unit[j]
            if not low <= beta <= high:  # (a NaN is skipped too)
                continue
            new.append((j, b))
            index += (pair_t[j], pair_b[j])
            value += tangent_cut(beta)
        n = len(new)
        if not n:
            return
        self._cuts += new
        self.solver.add_rows(np.full(n, 2.0), np.full(n, INF),
                             np.arange(0, 2 * n, 2, dtype=np.int32),
                             np.array(index, dtype=np.int32), np.array(value))

    def _pairs(self) -> tuple[list[int], list[int]]:
        """The links' t and B columns, as lists (cached on the arrays)."""
        if (out := self.arr.cache.get("pair_lists")) is None:
            out = self.arr.cache["pair_lists"] = (self.arr.pair_t.tolist(),
                                                  self.arr.pair_b.tolist())
        return out

    def trusted(self, x: np.ndarray) -> bool:
        """False when a link's B at the LP point ``x`` lies outside the span of its cuts and its t
        there is below :data:`TRUST` / B: t then comes from one tangent's extrapolation, and the
        LP's active set, where the polish starts, is a guess."""
        pair_t, pair_b = self._pairs()
        if not pair_b:
            return True
        xl, unit = x.tolist(), self._unit().tolist()
        for j, (cb, ct) in enumerate(zip(pair_b, pair_t, strict=True)):
            if not xl[cb] * xl[ct] < TRUST:  # (the cheap test first: the span only when it fails)
                continue
            b = xl[cb] * unit[j]
            slack = 1e-9 * abs(b)
            span = [c for i, c in self._cuts if i == j]
            if b < min(span, default=INF) - slack or b > max(span, default=-INF) + slack:
                return False
        return True

    def _cut_points(self, x: np.ndarray, point: np.ndarray) -> list[tuple[int, float]]:
        """Where to cut next (native units): the LP's B where t undercuts 1/B, 1/t, and ``point``
        (scaled columns) at each link's B."""
        out = []
        unit = self._unit()
        for j, (cb, ct) in enumerate(zip(self.arr.pair_b, self.arr.pair_t, strict=True)):
            bh, th = x[cb], x[ct]
            if bh * th < 1.0 - 1e-9:
                out.append((j, max(bh, CUT_RANGE[0]) * unit[j]))
                if th > 0:
                    out.append((j, unit[j] / th))
            bl = point[cb]
            if np.isfinite(bl) and bl > 0 and abs(bl - bh) > 1e-12 * bh:
                out.append((j, bl * unit[j]))
        return out

    def _centre(self, design: np.ndarray | None, force: bool = False) -> bool:
        """Re-build the LP at a scale centred on ``design`` ((D,) GB/s; cold, every cut and the
        seeds) when a link's value leaves :data:`CENTRE` of its unit, or ``force``; True when it
        did."""
        if (design is None or self.scale is None or self.rescales >= MAX_RESCALES
                or not self.arr.pair_b.size):
            return False
        if not force:  # (before the new scale, which evaluates T once: most rounds keep theirs)
            ratio = design[self.arr.pair_b] / self._unit()
            ratio = ratio[ratio > 0]
            if ratio.size == 0 or (ratio.min() >= CENTRE[0] and ratio.max() <= CENTRE[1]):
                return False
        self.scale = self._rescaled(design)
        self._reload(seeds=True)
        self.rescales += 1
        return True

    def _loop(self, spec: Loop, rel_gap: float) -> OAResult:
        """Solve, polish, bound, cut (module docstring) until the gap target, a stall or
        :attr:`max_lps` LPs."""
        run = LoopState(spec, rel_gap, spec.start)
        self.certificate = None
        if run.best is not None:
            run.upper = spec.score(run.best)
        it = 0
        for it in range(1, self.max_lps + 1):
            if self._round(run, it):
                break
        return run.result(it, self.max_lps)

    def _round(self, run: LoopState, it: int) -> bool:
        """LP number ``it``; True when the loop stops (gap met, a failed LP with an incumbent, a
        stall)."""
        spec = run.spec
        costs = spec.costs()
        res = self._solve(costs)
        if (res.status is Status.INFEASIBLE and run.best is None and it <= 2
                and spec.on_empty is not None and spec.on_empty(res.x)):
            return False  # (the objective asked for another solve)
        if res.status is not Status.OPTIMAL:
            return self._lp_failed(run, res, it)
        duals = self.solver.row_duals()
        # the Newton polish, skipped on a first point that is not trusted (Loop.cut_first)
        pol = None if spec.cut_first and it == 1 and not self.trusted(res.x) else polish(
            self.arr, costs, res.x, duals, self._row_lower, self._row_upper)
        points: list[tuple[int, float]] = []
        improved = False
        if pol is not None:  # usually the exact optimum: its bound alone may close the gap
            improved = run.offer(pol.x)
            improved = self._bound(run, pol.duals)[0] or improved
            if run.done():
                return True
            unit = self._unit()
            points = [(j, pol.x[cb] * unit[j]) for j, cb in enumerate(self.arr.pair_b)
                      if pol.x[cb] > 0]
        # (the LP's own point, when the polished one did not settle it)
        improved = run.offer(res.x) or improved
        better, point = self._bound(run, duals)
        improved = improved or better
        if run.done():
            return True
        points += self._cut_points(res.x, point)  # (before refine, which may re-compile the LP)
        if spec.on_empty is not None and (run.best is None or not np.isfinite(run.upper)
                                          or it == 1):
            spec.on_empty(res.x)  # (shown the LP's point while no candidate is finite)
        if spec.refine is not None:
            spec.refine(res.x, None if pol is None else pol.x)
        self._add_cuts(points)
        if self._centre(run.best if run.best is not None else self._starved(res.x)):
            return False
        action = run.stall(improved)  # (the stall rule: tighten, re-scale, then stop)
        if action == "tighten":
            self.solver.set_tolerance(TIGHT_TOLERANCE)
        elif action == "rescale":
            self._centre(run.best, force=True)
        return action == "stop"

    def _lp_failed(self, run: LoopState, res: LPResult, it: int) -> bool:
        """LP ``it`` failed on every retry: re-centre and go on (False), else stop with the
        incumbent (True).

        Raises:
            SolverError: no incumbent (:class:`hieropt.errors.LimitReached` at the LP's time
                limit)."""
        if self._centre(run.best if run.best is not None else self._centre_default(), force=True):
            return False
        if run.best is None and res.status is Status.LIMIT:
            raise limit_reached(f"cutting-plane LP {it}", self.solver.time_limit_s)
        if run.best is None:
            raise SolverError(f"HiGHS stopped on cutting-plane LP {it} with '{res.termination}' "
                              "on every retry")
        return True

    def _bound(self, run: LoopState, duals: np.ndarray) -> tuple[bool, np.ndarray]:
        """Raise ``run``'s lower bound to the Lagrangian bound of ``duals`` less :data:`ROUNDING`,
        keeping its certificate and budget slope: (True when it rose beyond round-off, the
        Lagrangian's minimiser as LP columns)."""
        spec = run.spec
        costs = spec.costs()
        db = lagrangian_bound(self.arr, costs, duals, self._row_lower, self._row_upper,
                              self._col_upper())
        lb = spec.native(db.value)
        lb -= ROUNDING * abs(lb)
        better = lb > run.lower + 1e-13 * abs(run.lower)
        if lb > run.lower:
            run.lower = lb
            run.budget_slope = min(spec.slope(db.budget_multiplier), 0.0) if spec.slope else 0.0
            self.certificate = Multipliers(self.arr, self.scale, costs, duals)
        return better, db.point

    def _centre_default(self) -> np.ndarray | None:
        """A design to re-centre on when an LP failed before any candidate (None: do not)."""
        return None

    def _starved(self, x: np.ndarray) -> np.ndarray | None:
        """A design to re-centre on from ``x`` while no candidate is finite (None: do not)."""
        return None
