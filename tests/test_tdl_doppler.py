"""Doppler within the update over TDL subcarriers (``phy.tdl_time_blocks``, model §5.1, phy/channels/tdl.py).

Block j lies on subcarrier ⌊j/B_t⌋ in time block j mod B_t; every tap is a Clarke process in time, so
E[h_j·h_j'*] = J₀(x·(b − b'))·Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l), x = 2π·doppler·n_c (derived). The predictions here
take the taps from tdl_profile (the standard's table, checked in tests/test_tdl.py) and J₀ from scipy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import exp1, j0

from phy.channels.tdl import tdl_profile
from phy.coherence import draw_blocks
from phy.config import PhyConfig
from phy.fading import draw_rayleigh

from stale_probe import stale_weights  # tests/stale_probe.py


def _predicted(model, ds, df, B, B_t, x) -> np.ndarray:
    """R [B, B] = J₀(x·|b − b'|)·Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l), block j = (m, b) = (⌊j/B_t⌋, j mod B_t)."""
    tau, p = tdl_profile(model, ds)
    m, b = np.arange(B) // B_t, np.arange(B) % B_t
    freq = np.exp(-2j * math.pi * df * (m[:, None] - m[None, :])[..., None] * tau) @ p
    return j0(x * np.abs(b[:, None] - b[None, :])) * freq


def test_doppler_blocks_have_the_separable_clarke_and_profile_correlation():
    """Plausible bugs caught: the AR(1) law ρ^Δ for J₀ (J₀(2)² = 0.05 against J₀(4) = −0.40 at two blocks), time
    and frequency indices swapped, innovations not scaled by the tap powers (non-unit power)."""
    model, ds, df, B_t, B, x = "A", 100e-9, 1e6, 3, 6, 2.0
    K, rounds = 5000, 8
    h = np.concatenate([draw_blocks(4, t, K=K, n_blocks=B, correlation="tdl", tdl=(model, ds, df, B_t, x))
                        for t in range(rounds)])
    n = h.shape[0]
    R = _predicted(model, ds, df, B, B_t, x)
    assert abs(R[2, 0] - j0(4.0)) < 1e-12 and abs(R[3, 0] - _predicted(model, ds, df, 2, 1, 0)[1, 0]) < 1e-12  # (1, 0)
    for i in range(B):
        for k in range(i + 1):
            got = np.mean(h[:, i] * np.conj(h[:, k]))
            # E|h_i h_k*|² = 1 + |R|² ≤ 2 (unit-power circular Gaussians): the mean's error has std ≤ √(2/n)
            assert abs(got - R[i, k]) < 5 * math.sqrt(2.0 / n), (i, k, got, R[i, k])


def test_one_time_block_is_the_static_draw_and_block_zero_the_flat_one():
    static = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3))
    assert np.array_equal(static, draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3, 1, 0.7)))
    moving = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3, 4, 0.7))
    assert np.array_equal(moving[:, 0], draw_rayleigh(9, 4, K=30))
    # zero Doppler: every time block of a subcarrier is its static gain (subcarrier m at column 4m there, m here)
    frozen = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3, 4, 0.0))
    np.testing.assert_allclose(frozen, np.repeat(static[:, :4], 4, axis=1), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("bad, match", [
    ({"tdl_time_blocks": 0}, r"tdl_time_blocks must be"),
    ({"tdl_time_blocks": 2, "fading_correlation": "jakes-exact"}, r"tdl_time_blocks = 2: .* need fading_correlation = 'tdl'"),
    ({"tdl_time_blocks": 5000}, r"tdl_time_blocks must be ≤ 4096"),
])
def test_tdl_time_blocks_out_of_range_are_refused_by_name(bad, match):
    kw = {"coherence_symbols": 11, "fading_correlation": "tdl", "doppler": 0.01, **bad}
    with pytest.raises(ValueError, match=match) as info:
        PhyConfig.make(scheme="channel-inversion", **kw).validate(K=4, d=100)
    assert "\n" not in str(info.value)


def test_stale_csit_weights_age_in_time_and_across_the_band():
    """Channel inversion with block 0's CSIT over a doubly selective update: w_{k,j} = Re(h_{k,j}/h_{k,0}) has mean
    Re r_j and variance (1 − |r_j|²)·e^g·E₁(g)/2 over the admitted clients, r_j = J₀(x·b)·R_f(m) (the aging law of
    model §5.1 with the separable correlation). As tests/test_tdl.py: client k sends 1 on entry k of every block,
    90 dB. Through the configuration (doppler, coherence_symbols, tdl_time_blocks), so a wrong lag x = 2π·doppler·n_c
    (or the time blocks ignored) fails."""
    from phy.channel_inversion import ChannelInversionLink

    K, n_c, B_t, B, T, g, df, ds, doppler = 10, 10, 3, 6, 1500, 0.1, 1e6, 100e-9, 0.02
    x = 2 * math.pi * doppler * n_c
    r = _predicted("A", ds, df, B, B_t, x)[:, 0]
    cfg = PhyConfig.make(scheme="channel-inversion", snr_db=90.0, g_th=g, normalization="clip", clip_norm=1.0,
                         coherence_symbols=n_c, fading_correlation="tdl", tdl_model="A", delay_spread=ds,
                         subcarrier_spacing=df, tdl_time_blocks=B_t, doppler=doppler)
    link = ChannelInversionLink(cfg, K=K, seed=12)
    assert link.channel.describe()["fading"]["time_block_correlation"] == pytest.approx(j0(x), rel=1e-12)
    w = stale_weights(link, K=K, n_c=n_c, B=B, T=T)  # [Σ K′, B] (tests/stale_probe.py)
    n = w.shape[0]
    inv_h2 = math.exp(g) * float(exp1(g))  # E[1/|h_0|² | |h_0|² ≥ g]
    for j in range(B):
        var = (1.0 - abs(r[j]) ** 2) * inv_h2 / 2.0
        assert abs(w[:, j].mean() - r[j].real) < 5.0 * math.sqrt(var / n) + 1e-3, (j, w[:, j].mean(), r[j])
    assert r[1].real == pytest.approx(j0(x)) and abs(r[1].real - 1.0) > 0.1  # time block 1 has aged visibly


def _per_subcarrier(**kw) -> PhyConfig:
    base = dict(scheme="channel-inversion", snr_db=90.0, normalization="clip", clip_norm=100.0, fading_correlation="tdl",
                tdl_model="A", delay_spread=300e-9, subcarrier_spacing=30e3, inversion_csit="per-subcarrier")
    return PhyConfig.make(**{**base, **kw})


def _probe(K: int, n_c: int, B: int) -> np.ndarray:
    """x [K, n_c·B]: client k sends +1 on entry k and −1 on entry K + k of every block (zero mean, so μ_k = 0 and,
    unclipped, the estimate's entry (j, k) is (K/K′_j)·w_{k,j}·1[k ∈ A_j])."""
    x = np.zeros((K, n_c * B))
    for k in range(K):
        x[k, k::n_c], x[k, K + k::n_c] = 1.0, -1.0
    return x


def test_per_subcarrier_csit_inverts_each_subcarrier_at_its_first_time_block():
    """inversion_csit = "per-subcarrier" (model §5.1): block j = (subcarrier ⌊j/B_t⌋, time block j mod B_t) takes the
    CSIT h_{k,c(j)}, c(j) = B_t·⌊j/B_t⌋; admission |h_{k,c(j)}|² ≥ g_th; the estimate's entry (j, k) is
    (K/K′_j)·Re(h_{k,j}/h_{k,c(j)}) for admitted k, 0 otherwise. Predicted from the channel's own draw and c(j) written
    here. Bugs caught: block 0's CSIT for the whole update ("stale"), re-acquisition per block (every weight 1), time
    and frequency swapped in c(j), admission on h_{k,j} instead of the CSIT, the divisor K′ of another block."""
    from phy.channel_inversion import ChannelInversionAggregator
    from phy.link_channel import LinkChannel

    K, n_c, B_t, n_sub, g = 6, 12, 3, 4, 0.3
    B = B_t * n_sub
    cfg = _per_subcarrier(g_th=g, coherence_symbols=n_c, tdl_time_blocks=B_t, doppler=0.02)
    x = _probe(K, n_c, B)
    agg = ChannelInversionAggregator(cfg, K=K, d=x.shape[1], seed=3)
    channel = LinkChannel(cfg, K=K, seed=3)
    c = (np.arange(B) // B_t) * B_t
    seen_weight_not_one = seen_admission_change = False
    for t in range(6):
        h = channel.draw(t, n_blocks=B)
        csit = h[:, c]
        adm = np.abs(csit) ** 2 >= g
        w = np.where(adm, np.real(h / csit), 0.0)
        res = agg.aggregate(x, round_index=t)
        est = res.sum_estimate.reshape(B, n_c)
        f = np.where(adm.any(axis=0), K / np.maximum(adm.sum(axis=0), 1), 0.0)  # K/K′_j
        for j in range(B):
            expected = f[j] * w[:, j]
            np.testing.assert_allclose(est[j, :K], expected, rtol=0, atol=1e-3)
            np.testing.assert_allclose(est[j, K:2 * K], -expected, rtol=0, atol=1e-3)
        # the clipped error is against what the clients asked the channel to deliver, (K/K′_j)·Σ_{A_j} x_k: entry
        # (j, k) is off by f_j·(w_{k,j} − 1), so clipped NMSE = Σ f_j²(w − 1)² / Σ f_j² over admitted (k, j)
        predicted = np.sum((f * (w - 1.0)) ** 2 * adm) / np.sum(f**2 * adm)
        assert res.diagnostics["clipped_nmse"] == pytest.approx(predicted, rel=1e-3, abs=1e-6)
        seen_weight_not_one |= bool(np.any(np.abs(w[adm] - 1.0) > 0.1))
        seen_admission_change |= bool(np.any(adm[:, ::B_t] != adm[:, :1]))
    assert seen_weight_not_one and seen_admission_change  # the probe can tell the three CSIT modes apart


def test_per_subcarrier_csit_weights_follow_the_clarke_law_in_time_only():
    """Over the admitted clients, w_{k,j} = Re(h_{k,j}/h_{k,c(j)}) has mean J₀(x·b) and variance
    (1 − J₀(x·b)²)·e^g·E₁(g)/2, b = j mod B_t, x = 2π·doppler·n_c (model §5.1: the stale law per subcarrier, with no
    frequency term). Read off the aggregator's estimate (entry (j, k)·K′_j/K) with K′_j from the channel's draw;
    5σ tolerances from that variance. A frequency term (block 0 of subcarrier 0 as the reference) would give the
    TDL-A correlation at 300 ns over 30 kHz subcarriers, |R_f(1)| = 0.74, at b = 0 on later subcarriers."""
    from phy.channel_inversion import ChannelInversionAggregator
    from phy.link_channel import LinkChannel

    K, n_c, B_t, n_sub, g, doppler, T = 6, 12, 3, 4, 0.1, 0.02, 300
    B, x_lag = B_t * n_sub, 2 * math.pi * doppler * n_c
    cfg = _per_subcarrier(g_th=g, coherence_symbols=n_c, tdl_time_blocks=B_t, doppler=doppler, subcarrier_spacing=1e6)
    x = _probe(K, n_c, B)
    agg = ChannelInversionAggregator(cfg, K=K, d=x.shape[1], seed=8)
    channel = LinkChannel(cfg, K=K, seed=8)
    c = (np.arange(B) // B_t) * B_t
    samples = [[] for _ in range(B_t)]
    for t in range(T):
        adm = np.abs(channel.draw(t, n_blocks=B)[:, c]) ** 2 >= g
        est = agg.aggregate(x, round_index=t).sum_estimate.reshape(B, n_c)[:, :K]
        for j in range(B):
            if adm[:, j].any():
                samples[j % B_t].append(est[j, adm[:, j]] * adm[:, j].sum() / K)
    inv_h2 = math.exp(g) * float(exp1(g))
    for b in range(B_t):
        w = np.concatenate(samples[b])
        r = j0(x_lag * b)
        var = (1.0 - r**2) * inv_h2 / 2.0
        assert abs(w.mean() - r) < 5.0 * math.sqrt(var / w.size) + 1e-6, (b, w.mean(), r)
    assert abs(j0(x_lag) - 1.0) > 0.4  # time block 1 has aged visibly (J₀(1.51) = 0.50)


def test_per_subcarrier_with_one_time_block_is_per_block_bit_for_bit():
    from phy.channel_inversion import ChannelInversionAggregator

    K, d = 8, 400
    x = np.random.default_rng(3).standard_normal((K, d)) * 0.05
    a = ChannelInversionAggregator(_per_subcarrier(coherence_symbols=20, inversion_csit="per-block", snr_db=20.0),
                                   K=K, d=d, seed=1)
    b = ChannelInversionAggregator(_per_subcarrier(coherence_symbols=20, snr_db=20.0), K=K, d=d, seed=1)
    for t in range(3):
        assert np.array_equal(a.aggregate(x, round_index=t).sum_estimate, b.aggregate(x, round_index=t).sum_estimate)
