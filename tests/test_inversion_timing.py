"""Chip-timing offsets of truncated channel inversion (model §5.1, §6.2; phy/chip_timing.py).

Each symbol is repeated over L chips; client k's chips arrive τ_k ~ U(0, τ_max) chips late (keyed stream
(seed, "timing-offset", t)), and the base station integrates and dumps chip-synchronously. The prediction is built
at chip level here: the delayed chip stream (1 − τ_k)·x_k[n] + τ_k·x_k[n − 1], integrated over each symbol's L chips.
"""

from __future__ import annotations

import numpy as np
import pytest

from phy.channel_inversion import ChannelInversionAggregator, ChannelInversionLink
from phy.config import PhyConfig
from phy.randomness import stream


def _cfg(**kw):
    base = dict(scheme="channel-inversion", snr_db=20.0, normalization="clip", clip_norm=1.0, L=8)
    base.update(kw)
    return PhyConfig.make(**base)


def _chip_level(s, tau, L):
    """Σ_k over the admitted rows s [K', d]: chips x_k = each symbol L times, delayed by τ_k, integrated per symbol / L."""
    out = np.zeros(s.shape[1])
    for sk, tk in zip(s, tau):
        x = np.repeat(sk, L)
        prev = np.concatenate([[0.0], x[:-1]])  # silence before the update
        out += ((1 - tk) * x + tk * prev).reshape(-1, L).mean(axis=1)
    return out


@pytest.mark.parametrize("resource,L_eff", [("equal", 8), ("source-literal", 1)])
def test_received_sum_is_the_delayed_chip_stream_integrated(resource, L_eff):
    K, d, tau_max, seed = 6, 50, 0.7, 3
    cfg = _cfg(snr_db=120.0, timing_offset=tau_max, resource=resource, g_th=0.05)
    link = ChannelInversionLink(cfg, K=K, seed=seed)
    s = np.random.default_rng(4).standard_normal((K, d))
    for t in range(5):
        rnd = link.run_round(s, round_index=t)
        tau = tau_max * stream(seed, "timing-offset", t).random(K)  # model §5.1's draw, from the raw configuration
        expected = _chip_level(s[rnd.admitted], tau[rnd.admitted], L_eff)
        np.testing.assert_allclose(rnd.s_hat, expected, rtol=0, atol=2e-5)  # noise std ≈ 1.6e-6 at 120 dB
        assert not np.allclose(rnd.s_hat, s[rnd.admitted].sum(axis=0), atol=1e-3)  # the offsets do act


def test_zero_offset_is_todays_link_and_power_is_unchanged():
    K, d = 8, 200
    s = np.random.default_rng(5).standard_normal((K, d)) * 0.1
    today, late = ChannelInversionLink(_cfg(), K=K, seed=2), ChannelInversionLink(_cfg(timing_offset=0.5), K=K, seed=2)
    for t in range(4):
        a, b = today.run_round(s, round_index=t), late.run_round(s, round_index=t)
        assert np.array_equal(a.admitted, b.admitted) and a.rho == b.rho
        assert np.array_equal(a.transmit_power, b.transmit_power)  # the delay changes nothing at the transmitter
    zero = ChannelInversionLink(_cfg(timing_offset=0.0), K=K, seed=2)
    assert np.array_equal(zero.run_round(s, round_index=1).s_hat, today.run_round(s, round_index=1).s_hat)


@pytest.mark.parametrize("cuts", [[], [1, 2, 3, 4, 5, 6], [3]])
def test_streaming_equals_traced_bit_for_bit(cuts):
    K, d = 8, 300
    x = np.random.default_rng(6).standard_normal((K, d)) * 0.05
    agg = ChannelInversionAggregator(_cfg(timing_offset=0.9), K=K, d=d, seed=7)
    edges = [0, *cuts, K]
    for t in range(3):
        traced = agg.aggregate(x, round_index=t)
        streamed = agg.aggregate_stream([(np.arange(a, b), x[a:b]) for a, b in zip(edges[:-1], edges[1:])], round_index=t)
        assert np.array_equal(traced.sum_estimate, streamed.sum_estimate)


def test_refusals_name_the_key():
    for kw in (dict(coherence_symbols=10), dict(csi_error=0.1)):
        with pytest.raises(ValueError, match="^timing_offset: channel inversion's chip-timing offsets"):
            _cfg(timing_offset=0.3, **kw).validate(K=4, d=100)
    with pytest.raises(ValueError, match="^timing_offset: scheme 'ddgauss' has no chip-timing model"):
        PhyConfig.make(scheme="ddgauss", normalization="clip", clip_norm=1.0, timing_offset=0.3,
                       ddgauss={"local_std": 0.01}).validate(K=4, d=100)
    # analog Gaussian models the offsets (tests/test_analog_timing.py) up to τ_max/L_eff < 1/2
    with pytest.raises(ValueError, match="^timing_offset: scheme 'analog-gaussian' needs τ_max/L_eff < 1/2"):
        PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, timing_offset=0.6,
                       resource="source-literal", **{"analog-gaussian": {"noise_multiplier": 1.0}}).validate(K=4, d=100)
