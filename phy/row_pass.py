"""A chunk's clipped rows added to running sums on several threads, bit for bit the one-thread result (model §2, §6).

A streaming receiver (:mod:`phy.aggregation`) reads each client's update x_k once: its mean μ_k, its centred
norm, its clip factor f_k (:class:`phy.normalization.ClippedRows`), then adds f_k·(x_k − μ_k·1) (or another
per-row multiple of x_k) to running d-vectors in client order. :func:`add_clipped_rows` spreads that work over
threads without changing a bit of the result:

1. the factors: each row's μ_k, f_k and ‖s_k‖² depend on that row alone, so the rows are shared among the threads;
2. the sums: every target vector is cut into contiguous column ranges, one per thread, and each thread adds every
   row, in client order, to its own range. Each element receives the same additions in the same order as on one
   thread, and elementwise IEEE operations do not depend on where a slice starts.

NumPy releases the GIL inside these kernels, so the threads run at once. Threads: ``OMP_NUM_THREADS`` when set (a
sweep's worker process gets its share of the cores there), else the CPUs this process may use; one thread (the
rows fused, each read while in cache) below :data:`MIN_PARALLEL_D` or with a single thread.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

__all__ = ["MIN_PARALLEL_D", "row_threads", "column_ranges", "add_clipped_rows", "clipped_and_raw"]

MIN_PARALLEL_D = 65_536  # shorter updates: one thread (a thread's hand-off costs more than half a row)
MAX_THREADS = 8  # the sums are bound by memory bandwidth beyond a few cores

_LOCK = threading.Lock()
_POOL: dict[tuple[int, int], ThreadPoolExecutor] = {}  # (process id, threads): a forked child makes its own


def row_threads() -> int:
    """Threads for a chunk's rows: OMP_NUM_THREADS if it is a positive integer, else the CPUs available to this
    process; at most :data:`MAX_THREADS`."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    n = int(env) if env.isdigit() and int(env) > 0 else len(os.sched_getaffinity(0))
    return max(1, min(n, MAX_THREADS))


def _pool(n: int) -> ThreadPoolExecutor:
    """The process's pool of ``n`` threads (a pool inherited through fork has no threads: not reused)."""
    key = (os.getpid(), n)
    with _LOCK:
        if key not in _POOL:
            _POOL[key] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="floras-rows")
        return _POOL[key]


def column_ranges(d: int, n: int) -> list[tuple[int, int]]:
    """``n`` contiguous ranges covering 0..d, cut at multiples of 8 elements (64-byte lines of float64), so that
    two threads never write the same cache line; fewer when d is short."""
    cuts = sorted({0, d, *(min(d, (d * t // n) // 8 * 8) for t in range(1, n))})
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def add_clipped_rows(cr, add: Callable[[int, float, slice, np.ndarray], None]) -> None:
    """Compute ``cr``'s factors (a :class:`phy.normalization.ClippedRows`) and call ``add(j, f_j, cols, buf)`` for
    each selected row j in order, for column ranges ``cols`` that together cover 0..d; ``buf`` is a float64
    scratch of length ``cols.stop − cols.start``. ``add`` must only do elementwise work on ``cols`` of row j and of
    its targets. On return ``cr.mu``, ``cr.factor`` and ``cr.energy`` are complete. Threads: :func:`row_threads`,
    one below :data:`MIN_PARALLEL_D`.
    """
    d = cr.x.shape[1]
    n_rows = cr.rows.size
    n = row_threads()
    ranges = column_ranges(d, n)
    if n <= 1 or d < MIN_PARALLEL_D or n_rows == 0 or len(ranges) < 2:
        leaf, buf, cols = cr.leaf_buffer(), np.empty(d), slice(0, d)
        for i in range(n_rows):  # one thread: each row's factor and sums while the row is in cache
            f = cr.compute(i, leaf)
            add(int(cr.rows[i]), f, cols, buf)
        return
    pool = _pool(n)
    blocks = [(n_rows * t // n, n_rows * (t + 1) // n) for t in range(n)]

    def factors(lo: int, hi: int) -> None:
        leaf = cr.leaf_buffer()
        for i in range(lo, hi):
            cr.compute(i, leaf)

    for fut in [pool.submit(factors, lo, hi) for lo, hi in blocks if hi > lo]:
        fut.result()  # a non-finite row's ValueError is raised here
    rows, factor = cr.rows.tolist(), cr.factor.tolist()

    def sums(a: int, b: int) -> None:
        buf, cols = np.empty(b - a), slice(a, b)
        for j, f in zip(rows, factor):
            add(j, f, cols, buf)

    for fut in [pool.submit(sums, a, b) for a, b in ranges]:
        fut.result()


def clipped_and_raw(x: np.ndarray, cr, s_sum: np.ndarray, raw: np.ndarray, raw_x: np.ndarray | None = None):
    """The ``add`` of :func:`add_clipped_rows` for Σ s_k and Σ x_k: s_j = (x_j − μ_j·1)·f_j formed in ``buf`` (the
    operations of ``ClippedRows.__iter__``), added to ``s_sum``, and x_j to ``raw``, on the columns ``cols``.
    ``raw_x``: the rows added to ``raw`` when they are not the clipped ones (sqSGD's accumulators clip v_k and
    report the error against x_k)."""
    mu = cr.mu
    src = x if raw_x is None else raw_x

    def add(j: int, f: float, cols: slice, buf: np.ndarray) -> None:
        row = x[j, cols]
        np.subtract(row, mu[j], out=buf)
        buf *= f
        s_sum[cols] += buf
        raw[cols] += src[j, cols]

    return add
