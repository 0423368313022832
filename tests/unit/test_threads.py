"""One BLAS thread inside hieropt's calls, the caller's thread count outside them."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from hieropt.cache import Cache, scoped, use


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_a_top_level_call_and_a_cache_block_run_with_one_blas_thread():
    @scoped
    def call() -> list[int]:
        return _blas_threads()

    np.linalg.solve(np.eye(2), np.ones(2))  # (numpy's BLAS loaded, as the solvers load it)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        assert before and set(before) == {2}  # (numpy's OpenBLAS is loaded)
        assert set(call()) == {1}
        with use(Cache()):
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before  # (the caller's count is given back)
