"""Several receive antennas over coherence blocks and with chip-timing offsets, for channel inversion and analog
Gaussian (model §5.2, "Antennas over coherence blocks"; phy/antennas.py, phy/link_channel.py, phy/csit_blocks.py).

Antenna 0 is the one-antenna block process, antenna r ≥ 1 the same law with its own draws; block j is combined with
the centroid combiner of its CSIT block and is then the one-antenna link on the effective channel aᴴh. The
predictions below recompute the combiner by a singular-value decomposition of the clients' unit directions (the code
takes an eigendecomposition of Σ u uᴴ), from the channel the link draws and the raw configuration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import j0

from phy.analog_gaussian import AnalogGaussianAggregator
from phy.antennas import block_leverage, client_leverage, effective_blocks
from phy.channel_inversion import ChannelInversionAggregator, ChannelInversionLink
from phy.coherence import block0_correlations
from phy.config import PhyConfig
from phy.link_channel import LinkChannel


def _cfg(scheme="channel-inversion", **kw):
    base = dict(scheme=scheme, snr_db=20.0, normalization="clip", clip_norm=1.0, coherence_symbols=100,
                inversion_csit="per-block", rx_antennas=3, fading_correlation="jakes-exact", doppler=0.001)
    if scheme == "analog-gaussian":
        base["analog-gaussian"] = {"noise_multiplier": 0.5}
    base.update(kw)
    return PhyConfig.make(**base)


def _combiner(h: np.ndarray) -> np.ndarray:
    """The principal direction of the rows' unit vectors u_k: the top right singular vector of U [K, N_r] (U's Gram
    Σ u_k u_kᴴ = Uᵀ·conj(U) has it as top eigenvector, conjugated)."""
    u = h / np.linalg.norm(h, axis=1, keepdims=True)
    return np.linalg.svd(u.conj(), full_matrices=False)[2][0].conj()


def _effective(h: np.ndarray) -> np.ndarray:
    """|aᴴh_k| and aᴴh_k up to a common phase: h [K, N_r] combined with :func:`_combiner` of its own rows."""
    return h @ _combiner(h).conj()


@pytest.mark.parametrize("law", ["jakes-exact", "tdl"])
def test_every_antenna_is_the_block_process_and_the_antennas_are_independent(law):
    """E[h_{k,m,r}·h*_{k,0,r}] is block 0's correlation of model §5.1 (J₀(x·m), or the TDL profile's) on every antenna,
    E[h_{k,m,r}·h*_{k,m',r'}] = 0 across antennas; antenna 0 is the one-antenna draw and block 0 the one-block draw bit
    for bit. n = 20 000 clients: a correlation's real and imaginary parts have SE ≤ 1/√(2n) = 0.005; 5 SE.
    Plausible bugs: every antenna the same process (one stream), antennas r ≥ 1 i.i.d. over blocks."""
    K, B = 20000, 5
    extra = dict(fading_correlation="tdl", tdl_model="A", delay_spread=300e-9, subcarrier_spacing=30e3) \
        if law == "tdl" else dict(fading_correlation="jakes-exact", doppler=0.002)
    cfg = _cfg(coherence_symbols=40, **extra)
    ch = LinkChannel(cfg, K=K, seed=3)
    H = ch.draw_antennas(0, n_blocks=B)
    assert H.shape == (K, B, 3)
    assert np.array_equal(H[:, :, 0], ch.draw(0, n_blocks=B))
    assert np.array_equal(H[:, 0, :], ch.draw_antennas(0))
    if law == "jakes-exact":
        want = j0(2 * math.pi * 0.002 * 40 * np.arange(B))
    else:
        want = block0_correlations(cfg, B)
    tol = 5 / math.sqrt(2 * K)
    for r in range(3):
        got = (H[:, :, r] * H[:, :1, r].conj()).mean(axis=0)
        np.testing.assert_allclose(got.real, np.real(want), atol=tol)
        np.testing.assert_allclose(got.imag, np.imag(want), atol=tol)
    for r, s in ((0, 1), (1, 2), (0, 2)):
        cross = (H[:, :, r] * H[:, :, s].conj()).mean(axis=0)
        assert np.abs(cross.real).max() < tol and np.abs(cross.imag).max() < tol


def test_each_block_is_the_mean_of_the_clients_its_own_combiner_admits():
    """At 90 dB and unclipped updates, estimate/K in block m = mean over {k: |a_mᴴh_{k,m}|² ≥ g_th} of x_k, a_m the
    centroid of block m's channels. Plausible bugs: block 0's combiner everywhere, antenna 0 alone, one block's
    admitted set for the round."""
    K, d, n_c, seed, g = 12, 500, 100, 5, 1.2
    x = np.random.default_rng(1).standard_normal((K, d)) * 0.01
    cfg = _cfg(snr_db=90.0, g_th=g, coherence_symbols=n_c)
    agg = ChannelInversionAggregator(cfg, K=K, d=d, seed=seed)
    channel = LinkChannel(cfg, K=K, seed=seed)
    differing = 0
    for t in range(8):
        res = agg.aggregate(x, round_index=t)
        H = channel.draw_antennas(t, n_blocks=d // n_c)
        adm = np.stack([np.abs(_effective(H[:, m])) ** 2 >= g for m in range(d // n_c)], axis=1)
        differing += len({tuple(col) for col in adm.T}) > 1
        for m in range(d // n_c):
            block = slice(m * n_c, (m + 1) * n_c)
            expected = x[adm[:, m], block].mean(axis=0) if adm[:, m].any() else np.zeros(n_c)
            np.testing.assert_allclose(res.sum_estimate[block] / res.contributors, expected, rtol=0, atol=1e-6)
    assert differing >= 4


@pytest.mark.parametrize("z", [0.5, 0.014])
def test_analog_gaussian_counts_only_the_clients_noise_in_every_block(z):
    """Zero updates, N_r = 2: block m's estimate is (K/K′_m)·(R/C)·(n/√ρ + a), variance (K/K′_m)²·(R/C)²·(σ_T² + σ_n²/g_th):
    with several antennas the clients add the whole target σ_T = z·2C (model §5.2), the receiver noise on top
    (at one antenna it would be max(σ_T², σ_n²/g_th)). z = 0.014: σ_T² ≈ σ_n²/g_th, so the sum is twice the max.
    SNR 0 dB, L = 32: σ_n² = 1/32; 400 entries per block, relative SE √(2/400) = 7 %: 5 SE per block."""
    K, d, n_c, g = 10, 4000, 400, 0.01
    cfg = _cfg("analog-gaussian", snr_db=0.0, g_th=g, coherence_symbols=n_c, rx_antennas=2,
               **{"analog-gaussian": {"noise_multiplier": z}})
    agg = AnalogGaussianAggregator(cfg, K=K, d=d, seed=6)
    C = math.sqrt(d)
    want = (z * 2 * C) ** 2 + 1.0 / 32 / g
    channel = LinkChannel(cfg, K=K, seed=6)
    ratios = []
    for t in range(3):
        res = agg.aggregate(np.zeros((K, d)), round_index=t)
        H = channel.draw_antennas(t, n_blocks=d // n_c)
        counts = [int((np.abs(_effective(H[:, m])) ** 2 >= g).sum()) for m in range(d // n_c)]
        for m in range(d // n_c):
            if counts[m] == 0:
                continue
            e = res.sum_estimate[m * n_c:(m + 1) * n_c] / (K / counts[m]) / (1.0 / C)
            ratios.append(np.mean(e**2) / want)
            assert abs(ratios[-1] - 1) < 5 * math.sqrt(2 / n_c)
    assert abs(np.mean(ratios) - 1) < 5 * math.sqrt(2 / n_c / len(ratios))


def test_csit_kept_over_the_update_keeps_block_zeros_combiner():
    """Stale CSIT (no inversion_csit): admission on |a₀ᴴh_{k,0}|² and the shares w_{k,m} = Re(a₀ᴴh_{k,m}/a₀ᴴh_{k,0}),
    a₀ the centroid of block 0 (model §5.2; §5.1's aging law on the effective channel). Plausible bug: each block
    recombined (its own a_m), which would make the shares of block m ≠ 0 follow another law."""
    K, g = 10, 0.5
    cfg = _cfg(inversion_csit="stale", g_th=g)
    link = ChannelInversionLink(cfg, K=K, seed=2)
    for t in range(3):
        h0, adm, _, h_hat, w = link.weights(t, n_blocks=6)
        H = link.channel.draw_antennas(t, n_blocks=6)
        a0 = _combiner(H[:, 0])
        eff = np.einsum("kbr,r->kb", H, a0.conj())
        np.testing.assert_array_equal(adm, np.abs(eff[:, 0]) ** 2 >= g)
        np.testing.assert_allclose(w, np.real(eff / eff[:, :1]), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(w[:, 0], 1.0, rtol=1e-12)


def test_timing_offsets_with_antennas_are_the_one_antenna_filter_on_the_effective_channel():
    """At 90 dB, ŝ^i = Σ_adm [(1 − a_k)·s_k^i + a_k·s_k^{i−1}] (s^{−1} = 0), admission on |aᴴh_k|² ≥ g_th with a the
    centroid of the K channels (model §5.2, timing offsets). Plausible bugs: the filter dropped with antennas, antenna
    0's channel for admission."""
    K, d, g = 8, 300, 1.0
    cfg = PhyConfig.make(scheme="channel-inversion", snr_db=90.0, rx_antennas=2, timing_offset=0.4, g_th=g, L=4)
    link = ChannelInversionLink(cfg, K=K, seed=9)
    s = np.random.default_rng(0).standard_normal((K, d))
    for t in range(3):
        rnd = link.run_round(s, round_index=t)
        adm = np.abs(_effective(link.channel.draw_antennas(t))) ** 2 >= g
        a = link.leakage(t)
        late = np.concatenate([np.zeros((K, 1)), s[:, :-1]], axis=1)
        want = ((1 - a)[adm, None] * s[adm] + a[adm, None] * late[adm]).sum(axis=0)
        np.testing.assert_array_equal(rnd.admitted, adm)
        np.testing.assert_allclose(rnd.s_hat, want, atol=1e-3)


def test_block_leverage_is_client_leverage_block_by_block():
    rng = np.random.default_rng(4)
    K, B, n_rx = 9, 7, 3
    H = (rng.standard_normal((K, B, n_rx)) + 1j * rng.standard_normal((K, B, n_rx))) / math.sqrt(2)
    h_eff, _ = effective_blocks(H, np.arange(B))
    adm = np.abs(h_eff) ** 2 >= 1.0
    adm[:, 3] = False  # an empty block
    lev = block_leverage(H, adm, h_eff)
    for m in range(B):
        if adm[:, m].any():
            np.testing.assert_allclose(lev[adm[:, m], m], client_leverage(H[adm[:, m], m], inverted=h_eff[adm[:, m], m]),
                                       rtol=1e-9, atol=1e-12)
        assert np.all(lev[~adm[:, m], m] == 0)


def test_effective_blocks_at_one_antenna_is_the_channel_itself():
    rng = np.random.default_rng(5)
    H = rng.standard_normal((4, 3, 1)) + 1j * rng.standard_normal((4, 3, 1))
    E = rng.standard_normal((4, 3, 1)) * 0.1
    cols = np.array([0, 0, 2])
    h, h_hat = effective_blocks(H, cols, H + E)
    np.testing.assert_array_equal(h, H[:, :, 0])
    np.testing.assert_array_equal(h_hat, (H + E)[:, cols, 0])


def test_a_scheduling_separating_base_station_takes_the_largest_block(tmp_path, monkeypatch):
    """Per-block CSIT with N_r = 2: z²μ_k² = Σ_t max_m K′_{t,m}·ℓ_{k,t,m} (model §5.2, "Antennas over coherence
    blocks"), recomputed from the sampler, the antenna-block draws, every block's own combiner and the leverage of
    its admitted clients. Plausible bugs: the sum over blocks (B times too much), block 0 only, K′ of the round."""
    from fl.sampling import sample_clients
    from scenarios.config import analog_exposure
    from scenarios.config.analog_exposure import scheduled_separating

    from test_analog_t2 import _scenario

    z, T, M, Kr, d, n_c = 2.0, 6, 30, 10, 100, 25
    extra = 'coherence_symbols = 25\ninversion_csit = "per-block"\nfading_correlation = "jakes-exact"\ndoppler = 0.002'
    config = _scenario(tmp_path, n_rx=2, z=z, rounds=T, M=M, K=Kr, phy_extra=extra)
    got = scheduled_separating(config, d=d, rounds=T)
    assert got["epsilon_sampled"] is None and "not derived" in got["sampled_text"]
    channel = LinkChannel(config.phy, K=Kr, seed=4)
    expo = np.zeros(M)
    for t in range(T):
        clients = sample_clients(seed=4, round_index=t, M=M, K=Kr)
        H = channel.draw_antennas(t, clients=clients, n_blocks=d // n_c)
        best = np.zeros(Kr)
        for m in range(d // n_c):
            eff = _effective(H[:, m])
            adm = np.abs(eff) ** 2 >= 0.3
            if adm.any():
                best[adm] = np.maximum(best[adm], adm.sum() * client_leverage(H[adm, m], inverted=eff[adm]))
        expo[clients] += best
    assert got["mu_most_exposed"] == pytest.approx(math.sqrt(expo.max()) / z, rel=1e-9)
    assert "max_m K′_{t,m}·ℓ_{k,t,m}" in got["text"]
