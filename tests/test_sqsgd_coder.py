"""sqSGD's round coder against the reference functions of phy.digital.sqsgd, bit for bit (model §9.3).

The aggregator encodes and decodes every admitted client with :class:`phy.digital.sqsgd_coder.SqsgdCoder` (reused
buffers, in-place decoding, no coordinate draw at r = 1, the modulo by subtraction). These tests rebuild the same
round from the module's reference functions (normalize, client_coordinates, client_signs, sqsgd_rotated,
sqsgd_privatize, sqsgd_decode), written as model §9.3 states them, and require equal arrays: a coder that drew the
coordinates at r < 1 from the wrong stream, skipped the ℓ2 projection, took (v + o) mod K_q wrongly for a K_q that is
not a power of two, or scattered the decoded values onto the wrong coordinates would differ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.digital.privquant import best_kappa, quantization_levels
from phy.digital.sqsgd import (client_coordinates, client_signs, sqsgd_decode, sqsgd_privatize, sqsgd_rotated,
                               subsampled_dimension)
from phy.digital.sqsgd_coder import SqsgdCoder
from phy.normalization import normalize
from phy.randomness import stream
from phy.schemes import make_aggregator


def _coder(*, d, ratio, levels, eps, t=2, seed=7, bound=1.0):
    d_tilde, n = subsampled_dimension(d, ratio)
    kappa, m = best_kappa(n, levels=levels, epsilon0=eps)
    grid = quantization_levels(levels, bound)
    return SqsgdCoder(seed=seed, round_index=t, d=d, d_tilde=d_tilde, n=n, levels=levels, epsilon0=eps, kappa=kappa,
                      m=m, grid=grid), (d_tilde, n, kappa, m, grid)


@pytest.mark.parametrize("d, ratio, levels", [(300, 0.3, 2), (300, 1.0, 3), (5000, 1.0, 5), (5000, 0.9, 4),
                                              (1000, 0.5, 8)])
def test_the_coder_is_the_reference_encoder_and_decoder_bit_for_bit(d, ratio, levels):
    seed, t, bound, eps = 7, 2, 1.0, 2.5
    coder, (d_tilde, n, kappa, m, grid) = _coder(d=d, ratio=ratio, levels=levels, eps=eps)
    rng = np.random.default_rng(d + levels)
    s_hat, ref = np.zeros(d), np.zeros(d)
    for k, norm in enumerate((0.3, 2.0, 1.0, 5.0)):  # norms above the bound make the ℓ2 projection act
        s = rng.standard_normal(d)
        s *= norm / np.linalg.norm(s)
        coords_ref = client_coordinates(seed, t, k, d=d, d_tilde=d_tilde)
        signs_ref = client_signs(seed, t, k, n=n)
        y_ref = sqsgd_rotated(s, coords=coords_ref, signs=signs_ref, radius=bound)
        u_ref = sqsgd_privatize(y_ref, levels=levels, bound=bound, epsilon0=eps, kappa=kappa,
                                rng_quantize=stream(seed, "sqsgd-quantize", t, k),
                                rng_privatize=stream(seed, "sqsgd-privquant", t, k))
        ref += sqsgd_decode(u_ref, coords=coords_ref, signs=signs_ref, grid=grid, m=m, d=d)

        coords, signs = coder.coordinates(k), coder.signs(k)
        np.testing.assert_array_equal(np.arange(d)[coords], coords_ref)
        np.testing.assert_array_equal(signs, signs_ref)
        y = coder.rotated(s, coords, signs, bound)
        np.testing.assert_array_equal(y, y_ref)
        u = coder.privatize(y, bound, k=k)
        np.testing.assert_array_equal(u, u_ref)
        assert u.min() >= 0 and u.max() <= levels - 1
        coder.add_decoded(s_hat, u, coords, signs, grid)
        np.testing.assert_array_equal(s_hat, ref)


@pytest.mark.parametrize("sq", [dict(levels=2, ratio=0.1, epsilon0=4.0), dict(levels=3, ratio=1.0, epsilon0=2.0),
                                dict(levels=4, ratio=0.5, epsilon0=3.0, estimator="sparse")])
def test_a_streamed_round_is_the_reference_round_bit_for_bit(sq):
    d, K, seed, t = 4100, 9, 3, 1  # d̃ = d → n = 8 192 (the factored transform); r = 0.1 → n = 512 (butterflies)
    cfg = PhyConfig.make(scheme="sqsgd", normalization="clip", clip_norm=0.5, snr_db=10.0, sqsgd=sq)
    agg = make_aggregator(cfg, K=K, d=d, seed=seed, key=None)
    x = np.random.default_rng(11).standard_normal((K, d)) * np.linspace(0.2, 2.0, K)[:, None] / math.sqrt(d)
    result = agg.aggregate_stream([(np.arange(0, 4), x[:4]), (np.arange(4, K), x[4:])], round_index=t)
    _, trace = make_aggregator(cfg, K=K, d=d, seed=seed, key=None).aggregate_traced(x, round_index=t)

    # the reference: model §9.3's steps for every admitted client, from the module's functions
    bound = cfg.norm_bound(d)
    nz = normalize(x, rule="clip", C=bound, clip_norm=0.5)
    d_tilde, n = subsampled_dimension(d, sq["ratio"])
    kappa, m = best_kappa(n, levels=sq["levels"], epsilon0=sq["epsilon0"])
    grid = quantization_levels(sq["levels"], bound)
    s_ref = np.zeros(d)
    assert trace.admitted.any()
    for k in np.flatnonzero(trace.admitted):
        coords = client_coordinates(seed, t, int(k), d=d, d_tilde=d_tilde)
        signs = client_signs(seed, t, int(k), n=n)
        y = sqsgd_rotated(nz.s[k], coords=coords, signs=signs, radius=bound)
        u = sqsgd_privatize(y, levels=sq["levels"], bound=bound, epsilon0=sq["epsilon0"], kappa=kappa,
                            rng_quantize=stream(seed, "sqsgd-quantize", t, int(k)),
                            rng_privatize=stream(seed, "sqsgd-privquant", t, int(k)))
        s_ref += sqsgd_decode(u, coords=coords, signs=signs, grid=grid, m=m, d=d)
    np.testing.assert_array_equal(trace.s_hat_sparse, s_ref)
    factor = d / d_tilde if sq.get("estimator", "unbiased") == "unbiased" else 1.0
    expected = nz.scale * (s_ref * factor) + float(nz.mu[trace.admitted].sum())
    np.testing.assert_array_equal(result.sum_estimate, expected)
    assert result.contributors == int(trace.admitted.sum())
    raw = x[trace.admitted].sum(axis=0)
    assert result.error == pytest.approx(float(np.sum((expected - raw) ** 2) / np.sum(raw**2)), rel=1e-12)


def test_with_accumulation_the_error_is_measured_against_the_raw_updates():
    """The clip acts on the accumulated v_k, the reported error on Σ_adm x_k (the round's raw updates): a row pass that
    summed v_k instead would report another error from the second round on (v_k carries the unsent coordinates)."""
    d, K, seed = 300, 6, 2
    cfg = PhyConfig.make(scheme="sqsgd", normalization="clip", clip_norm=0.5, snr_db=10.0,
                         sqsgd=dict(levels=2, ratio=0.5, epsilon0=3.0, accumulation=True, momentum=0.5,
                                    estimator="sparse"))
    agg = make_aggregator(cfg, K=K, d=d, seed=seed, key=None)
    rng = np.random.default_rng(8)
    ids = np.arange(10, 10 + K)
    for t in range(3):
        x = rng.standard_normal((K, d)) * 0.6 / math.sqrt(d) + 0.01
        result, trace = agg.aggregate_traced(x, round_index=t, clients=ids)
        raw = x[trace.admitted].sum(axis=0)
        expected = float(np.sum((result.sum_estimate - raw) ** 2) / np.sum(raw**2))
        assert result.error == pytest.approx(expected, rel=1e-9)
        assert trace.admitted.any()
