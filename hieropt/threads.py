"""The BLAS threads of hieropt's calls: one.

The solvers factor small dense systems (a handful to a few hundred unknowns: the Newton polish of
:mod:`hieropt.solvers.kkt`) tens of thousands of times in one search. OpenBLAS, numpy's BLAS,
splits a system of about a hundred unknowns or more over all its threads; on a machine whose cores
are busy (other jobs, or a process pool's workers, each with its own BLAS threads) its threads wait
for one another, and one solve of 110 unknowns took 7.9 ms instead of 0.13 ms on one thread
(2 cores, load 4): a co-design search spent 45 % of its time there. Each top-level call therefore
runs with one BLAS thread (:func:`one_blas_thread`, entered by :func:`hieropt.cache.scoped`) and
gives the caller's setting back when it returns. Through threadpoolctl, which knows OpenBLAS, MKL
and BLIS by their libraries' own calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_CONTROLLER: list = []
"""The process's threadpoolctl controller (one, made at the first call: finding the loaded BLAS
libraries takes about 0.5 ms, setting their thread count about 8 us)."""


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with one BLAS thread, then restore the thread counts it found (nested blocks
    are cheap: about 8 us each)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield


__all__ = ["one_blas_thread"]
