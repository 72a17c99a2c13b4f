"""Channel aging of truncated channel inversion: block 0's CSIT kept over the update (model §5.1; phy/csit_aging.py).

Entry i lies in block m(i) = ⌊i/n_c⌋; admission and ρ come from ĥ_{k,0}; the real part received is
√ρ·Σ_adm Re(h_{k,m(i)}/ĥ_{k,0})·s_k^i + n^i. With AR(1) blocks (ρ_b = J₀(2π·f_D·T_s·n_c)) and perfect CSI,
E[w_m | h_0] = ρ_b^m and Var[w_m | h_0] = (1 − ρ_b^{2m})/(2|h_0|²), E[1/|h_0|² | |h_0|² ≥ g] = e^g·E₁(g).
Predictions come from these formulas (scipy's J₀ and E₁) and the raw configuration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import exp1, j0

from phy.channel_inversion import ChannelInversionAggregator, ChannelInversionLink
from phy.config import PhyConfig
from phy.csit_aging import analog_block_lengths

from stale_probe import stale_weights  # tests/stale_probe.py


def _cfg(**kw):
    base = dict(scheme="channel-inversion", snr_db=20.0, normalization="clip", clip_norm=1.0)
    base.update(kw)
    return PhyConfig.make(**base)


def _chunks(x, cuts):
    edges = [0, *cuts, x.shape[0]]
    return [(np.arange(a, b), x[a:b]) for a, b in zip(edges[:-1], edges[1:])]


def test_block_lengths_cover_the_update():
    assert analog_block_lengths(1000, None).tolist() == [1000]
    assert analog_block_lengths(1000, 1000).tolist() == [1000]
    assert analog_block_lengths(1000, 300).tolist() == [300, 300, 300, 100]
    assert analog_block_lengths(7, 1).tolist() == [1] * 7


@pytest.mark.parametrize("csi_error", [0.0, 0.05])
def test_one_block_is_todays_link_bit_for_bit(csi_error):
    s = np.random.default_rng(5).standard_normal((8, 300))
    today = ChannelInversionLink(_cfg(csi_error=csi_error), K=8, seed=3)
    long_block = ChannelInversionLink(_cfg(csi_error=csi_error, coherence_symbols=300), K=8, seed=3)
    for t in range(10):
        a, b = today.run_round(s, round_index=t), long_block.run_round(s, round_index=t)
        assert np.array_equal(a.s_hat, b.s_hat) and np.array_equal(a.admitted, b.admitted) and a.rho == b.rho


@pytest.mark.parametrize("correlation", ["iid", "jakes"])
def test_admission_and_power_are_decided_on_block_0(correlation):
    """Aging changes what arrives, not who transmits nor with what power (the CSIT is block 0's)."""
    s = np.random.default_rng(6).standard_normal((10, 400)) * 0.1
    today = ChannelInversionLink(_cfg(), K=10, seed=4)
    aged = ChannelInversionLink(_cfg(coherence_symbols=50, fading_correlation=correlation, doppler=0.01), K=10, seed=4)
    changed = 0
    for t in range(10):
        a, b = today.run_round(s, round_index=t), aged.run_round(s, round_index=t)
        assert np.array_equal(a.admitted, b.admitted) and a.rho == b.rho
        assert np.array_equal(a.transmit_power, b.transmit_power) and np.array_equal(a.h, b.h)
        assert np.allclose(a.s_hat[:50], b.s_hat[:50], rtol=0, atol=1e-12)  # block 0: w = Re(h/h) = 1 up to rounding
        changed += not np.allclose(a.s_hat[50:], b.s_hat[50:])
    assert changed == 10


@pytest.mark.parametrize("csi_error", [0.0, 0.1])
@pytest.mark.parametrize("cuts", [[], [1, 2, 3, 4, 5, 6], [3, 7]])
def test_streaming_equals_traced_bit_for_bit(csi_error, cuts):
    K, d = 9, 700
    x = np.random.default_rng(7).standard_normal((K, d)) * 0.05
    cfg = _cfg(csi_error=csi_error, coherence_symbols=64, fading_correlation="jakes", doppler=0.002)
    agg = ChannelInversionAggregator(cfg, K=K, d=d, seed=2)
    for t in range(4):
        traced = agg.aggregate(x, round_index=t)
        streamed = agg.aggregate_stream(_chunks(x, cuts), round_index=t)
        assert np.array_equal(traced.sum_estimate, streamed.sum_estimate)
        assert traced.contributors == streamed.contributors


def test_aged_weights_follow_the_ar1_law():
    """Mean ρ_b^m and variance (1 − ρ_b^{2m})·e^g·E₁(g)/2 of w_{k,m} = Re(h_{k,m}/h_{k,0}) over the admitted clients.

    Client k sends 1 on entry k of every block of n_c = 10 entries (0 elsewhere), so at 90 dB entry (m, k) of ŝ is
    w_{k,m} up to a noise of std ≈ 1e-4. Plausible bugs caught: weights against the current block's own CSIT
    (mean 1, variance 0), a lag counted twice (ρ_b^{2m}), a missing 1/2 in the variance, a block index off by one.
    """
    K, n_c, B, T, g = 10, 10, 6, 1500, 0.1
    doppler = 0.01
    rho_b = float(j0(2.0 * math.pi * doppler * n_c))  # ≈ 0.90
    cfg = _cfg(snr_db=90.0, g_th=g, coherence_symbols=n_c, fading_correlation="jakes", doppler=doppler)
    link = ChannelInversionLink(cfg, K=K, seed=12)
    w = stale_weights(link, K=K, n_c=n_c, B=B, T=T)  # [Σ K′, B] (tests/stale_probe.py)
    n = w.shape[0]
    inv_h2 = math.exp(g) * float(exp1(g))  # E[1/|h_0|² | |h_0|² ≥ g]
    inv_h4 = math.exp(g) * (math.exp(-g) / g - float(exp1(g)))  # E[1/|h_0|⁴ | |h_0|² ≥ g]
    for m in range(B):
        mean = rho_b**m
        var = (1.0 - rho_b ** (2 * m)) * inv_h2 / 2.0
        # E[(w − ρ^m)⁴] = 3·((1 − ρ^{2m})/2)²·E[1/|h|⁴] (conditionally Gaussian): the std of the sample variance
        fourth = 3.0 * ((1.0 - rho_b ** (2 * m)) / 2.0) ** 2 * inv_h4
        assert abs(w[:, m].mean() - mean) < 5.0 * math.sqrt(var / n) + 1e-3
        assert abs(np.mean((w[:, m] - mean) ** 2) - var) < 5.0 * math.sqrt(max(fourth - var**2, 0.0) / n) + 1e-3


def test_iid_blocks_carry_no_signal_past_block_0():
    """i.i.d. blocks: E[w_m] = 0 for m ≥ 1 (h_m independent of the CSIT): block 0 delivers the sum, the others
    deliver zero-mean noise around 0 (a bug that re-inverted each block would deliver the sum everywhere)."""
    K, n_c, T = 10, 100, 300
    s = np.full((K, 3 * n_c), 0.01)  # Σ_k s_k = 0.1 on every entry
    link = ChannelInversionLink(_cfg(snr_db=90.0, coherence_symbols=n_c), K=K, seed=3)
    rounds = [link.run_round(s, round_index=t) for t in range(T)]
    ratio = np.array([r.s_hat.reshape(3, n_c).mean(axis=1) / 0.1 for r in rounds])
    assert np.allclose(ratio[:, 0], [r.admitted.mean() for r in rounds], rtol=0, atol=1e-3)  # K'/K; noise std 6e-5
    # later blocks: mean over rounds of (1/K)·Σ_adm w_{k,m}; per round std ≤ √(e^g·E₁(g)/(2K)) ≈ 0.7 at g = 0.01; 5σ
    assert np.all(np.abs(ratio[:, 1:].mean(axis=0)) < 5.0 * math.sqrt(math.exp(0.01) * float(exp1(0.01)) / 2 / K / T))


def test_options_are_one_line_errors():
    with pytest.raises(ValueError, match="coherence_symbols must be"):
        _cfg(coherence_symbols=0).validate(K=4, d=100)
    with pytest.raises(ValueError, match=r"^inversion_csit: scheme 'analog-gaussian'.*sensitivity"):
        PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, coherence_symbols=50,
                       **{"analog-gaussian": {"noise_multiplier": 1.0}}).validate(K=4, d=100)
    _cfg(coherence_symbols=50, rx_antennas=2).validate(K=4, d=100)  # channel inversion models blocks with antennas
    _cfg(coherence_symbols=50, csi_error=0.1, pathloss="umi").validate(K=4, d=100)  # combines with a cell and ĥ
