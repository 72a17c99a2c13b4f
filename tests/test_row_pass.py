"""phy/row_pass.py: a chunk's clipped rows added to the running sums on several threads give the one-thread numbers
bit for bit (the factors row by row, the sums column range by column range in client order)."""

from __future__ import annotations

import numpy as np
import pytest

import phy.row_pass as row_pass
from phy.normalization import clipped_rows, normalize
from phy.row_pass import add_clipped_rows, clipped_and_raw, column_ranges, row_threads
from phy.schemes import make_aggregator
from test_streaming import CASES, KEY, _chunks, _config, _same

STREAMING = [c for c in CASES if c[0] in {"ideal", "central-gaussian", "channel-inversion", "analog-gaussian", "floras"}
             and "normalization" not in c[1] and "path" not in c[1].get("floras", {}) and "rx_antennas" not in c[1]]


def _threads(monkeypatch, n: int, min_d: int = 0) -> None:
    monkeypatch.setattr(row_pass, "row_threads", lambda: n)
    monkeypatch.setattr(row_pass, "MIN_PARALLEL_D", min_d)


def _updates(K: int, d: int, seed: int) -> np.ndarray:
    """Norms 0.2–5 around the clip norm 1 (clipped and unclipped rows) and an offset (μ_k matters)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((K, d)) * rng.uniform(0.2, 5.0, (K, 1)) + rng.normal(0, 0.5, (K, 1))) / np.sqrt(d)


@pytest.mark.parametrize("scheme, extra", STREAMING, ids=[f"{s}-{i}" for i, (s, _) in enumerate(STREAMING)])
@pytest.mark.parametrize("threads", [2, 3, 5])
def test_every_clip_receiver_gives_the_concatenations_numbers_on_any_thread_count(monkeypatch, scheme, extra, threads):
    """d = 40 split into 2, 3 or 5 column ranges (forced: MIN_PARALLEL_D = 0), chunks of 1, 3 and 7: the stream
    equals ``aggregate`` on the concatenation (normalize, no threads), every bit and diagnostic. Summing a
    thread's rows apart and then adding the partial sums, or a row's factor from part of the row, fails."""
    K, d = 7, 40
    _threads(monkeypatch, threads)
    cfg = _config(scheme, extra)
    for t in range(3):
        x, ids = _updates(K, d, 20 + t), np.arange(100, 100 + K)
        want = make_aggregator(cfg, K=K, d=d, seed=4, key=KEY).aggregate(x, round_index=t, clients=ids)
        for c in (1, 3, K):
            agg = make_aggregator(cfg, K=K, d=d, seed=4, key=KEY)
            assert _same(agg.aggregate_stream(_chunks(x, c), round_index=t, clients=ids), want), (scheme, c, t)


@pytest.mark.parametrize("scheme, extra", [("ideal", {}), ("floras", {"floras": {"N": 10}})])
def test_two_threads_at_the_mlp_dimension(monkeypatch, scheme, extra):
    """d = 159 010 (≥ MIN_PARALLEL_D, so the default threshold takes the threaded path): two threads give the
    one-thread stream and ``aggregate``'s numbers bit for bit."""
    K, d = 5, 159_010
    x, ids = _updates(K, d, 3), np.arange(K)
    cfg = _config(scheme, extra)
    want = make_aggregator(cfg, K=K, d=d, seed=4, key=KEY).aggregate(x, round_index=0, clients=ids)
    for n in (1, 2):
        _threads(monkeypatch, n, min_d=row_pass.MIN_PARALLEL_D)
        assert d >= row_pass.MIN_PARALLEL_D
        got = make_aggregator(cfg, K=K, d=d, seed=4, key=KEY).aggregate_stream(_chunks(x, 3), round_index=0, clients=ids)
        assert _same(got, want), n


def test_the_threaded_pass_fills_mu_factor_and_energy_as_normalize(monkeypatch):
    """The selected rows' μ, f and ‖s‖² (and the others' μ) after a threaded pass; the sums against normalize's s."""
    _threads(monkeypatch, 3)
    x = _updates(9, 64, 8)
    rows = np.array([0, 2, 3, 7])
    nz = normalize(x, rule="clip", C=8.0, clip_norm=1.0)
    cr = clipped_rows(x, C=8.0, clip_norm=1.0, rows=rows)
    s_sum, raw = np.zeros(64), np.zeros(64)
    add_clipped_rows(cr, clipped_and_raw(x, cr, s_sum, raw))
    assert np.array_equal(cr.mu, nz.mu) and np.array_equal(cr.energy, nz.energy[rows])
    want_s, want_raw = np.zeros(64), np.zeros(64)
    for j in rows:  # client after client, as the one-thread stream adds them
        want_s += nz.s[j]
        want_raw += x[j]
    assert np.array_equal(s_sum, want_s) and np.array_equal(raw, want_raw)


def test_a_non_finite_row_is_refused_from_a_thread(monkeypatch):
    _threads(monkeypatch, 2)
    x = _updates(6, 48, 9)
    x[4, 17] = np.nan
    cr = clipped_rows(x, C=7.0, clip_norm=1.0)
    with pytest.raises(ValueError, match="updates must be finite"):
        add_clipped_rows(cr, clipped_and_raw(x, cr, np.zeros(48), np.zeros(48)))


@pytest.mark.parametrize("d, n", [(1, 2), (7, 3), (8, 2), (40, 5), (159_010, 2), (159_010, 3), (1_000_003, 8)])
def test_column_ranges_cover_every_column_once_cut_at_whole_cache_lines(d, n):
    ranges = column_ranges(d, n)
    assert ranges[0][0] == 0 and ranges[-1][1] == d and len(ranges) <= n
    assert all(a < b for a, b in ranges) and all(b == a2 for (_, b), (a2, _) in zip(ranges, ranges[1:]))
    assert all(a % 8 == 0 for a, _ in ranges)
    if d >= 8 * n:
        assert len(ranges) == n and max(b - a for a, b in ranges) - min(b - a for a, b in ranges) <= 16  # two cuts rounded down by < 8 each


def test_threads_follow_omp_num_threads(monkeypatch):
    import os

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert row_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert row_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "64")
    assert row_threads() == row_pass.MAX_THREADS
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert row_threads() == min(len(os.sched_getaffinity(0)), row_pass.MAX_THREADS)


def test_a_forked_child_does_not_reuse_its_parents_pool(monkeypatch):
    """A process forked after the pool started inherits a pool without threads; the child makes its own (a reused
    one would wait forever on its queue)."""
    import multiprocessing as mp

    _threads(monkeypatch, 2)
    x = _updates(4, 64, 1)
    cr = clipped_rows(x, C=8.0, clip_norm=1.0)
    want_s, want_raw = np.zeros(64), np.zeros(64)
    add_clipped_rows(cr, clipped_and_raw(x, cr, want_s, want_raw))  # the parent's pool now exists

    def child(q):
        cr2 = clipped_rows(x, C=8.0, clip_norm=1.0)
        s_sum, raw = np.zeros(64), np.zeros(64)
        add_clipped_rows(cr2, clipped_and_raw(x, cr2, s_sum, raw))
        q.put((s_sum, raw))

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=child, args=(q,))
    proc.start()
    s_sum, raw = q.get(timeout=60)
    proc.join(timeout=60)
    assert proc.exitcode == 0 and np.array_equal(s_sum, want_s) and np.array_equal(raw, want_raw)
