"""Channel inversion and analog Gaussian with the CSIT re-acquired per coherence block (model §5.1; phy/csit_blocks.py).

In block m (entries ⌊i/n_c⌋ = m) client k is admitted iff |h_{k,m}|² ≥ g_th; ŝ^i = Σ_{k∈A_m} s_k^i + n^i/√ρ_m (+ a^i,
σ_a,m² = max(0, σ_T² − σ_n²/ρ_m)); the estimate is (K/K′_m)·(R/C·ŝ^i + Σ_{A_m} μ_k), so FedAvg's /K is block m's mean
over A_m. Predictions come from these formulas, the raw configuration and the channel's own draw.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.analog_gaussian import AnalogGaussianAggregator
from phy.channel_inversion import ChannelInversionAggregator
from phy.config import PhyConfig
from phy.link_channel import LinkChannel


def _cfg(scheme="channel-inversion", **kw):
    base = dict(scheme=scheme, snr_db=20.0, normalization="clip", clip_norm=1.0, coherence_symbols=100,
                inversion_csit="per-block")
    if scheme == "analog-gaussian":
        base["analog-gaussian"] = {"noise_multiplier": 0.5}
    base.update(kw)
    return PhyConfig.make(**base)


def _chunks(x, cuts):
    edges = [0, *cuts, x.shape[0]]
    return [(np.arange(a, b), x[a:b]) for a, b in zip(edges[:-1], edges[1:])]


def test_each_block_is_the_mean_of_its_own_admitted_clients():
    """At 90 dB and unclipped updates (‖x_k‖ < R), estimate/K in block m = mean over {k: |h_{k,m}|² ≥ g_th} of x_k.
    Bugs caught: admission on block 0 only (stale), the divisor K′ of the round instead of K′_m, a block index off."""
    K, d, n_c, seed, g = 12, 500, 100, 5, 0.3  # g_th = 0.3: P(|h|² < g) = 26 %, so the blocks' sets differ
    x = np.random.default_rng(1).standard_normal((K, d)) * 0.01  # ‖x_k‖ ≈ 0.22 < R = 1
    cfg = _cfg(snr_db=90.0, g_th=g, coherence_symbols=n_c)
    agg = ChannelInversionAggregator(cfg, K=K, d=d, seed=seed)
    channel = LinkChannel(cfg, K=K, seed=seed)
    differing = 0
    for t in range(8):
        res = agg.aggregate(x, round_index=t)
        adm = np.abs(channel.draw(t, n_blocks=d // n_c)) ** 2 >= g  # [K, B]
        differing += len({tuple(col) for col in adm.T}) > 1
        for m in range(d // n_c):
            block = slice(m * n_c, (m + 1) * n_c)
            expected = x[adm[:, m], block].mean(axis=0) if adm[:, m].any() else np.zeros(n_c)
            np.testing.assert_allclose(res.sum_estimate[block] / res.contributors, expected, rtol=0, atol=1e-6)
        assert res.diagnostics["admitted"] == pytest.approx(adm.sum(axis=0).mean())
    assert differing >= 6  # the admitted sets do change from block to block


@pytest.mark.parametrize("scheme", ["channel-inversion", "analog-gaussian"])
@pytest.mark.parametrize("cuts", [[], [1, 2, 3, 4, 5, 6, 7, 8], [4]])
def test_streaming_equals_traced_bit_for_bit(scheme, cuts):
    K, d = 9, 650
    x = np.random.default_rng(2).standard_normal((K, d)) * 0.05
    Agg = ChannelInversionAggregator if scheme == "channel-inversion" else AnalogGaussianAggregator
    agg = Agg(_cfg(scheme, fading_correlation="jakes-exact", doppler=0.001), K=K, d=d, seed=4)
    for t in range(3):
        traced = agg.aggregate(x, round_index=t)
        streamed = agg.aggregate_stream(_chunks(x, cuts), round_index=t)
        assert np.array_equal(traced.sum_estimate, streamed.sum_estimate)
        assert traced.contributors == streamed.contributors and traced.error == streamed.error


@pytest.mark.parametrize("z", [0.5, 0.001])
def test_analog_gaussian_noise_per_block_is_the_larger_of_target_and_receiver(z):
    """Zero updates: estimate^i = (K/K′_m)·(R/C)·(n^i/√ρ_m + a^i), whose variance in block m is
    (K/K′_m)²·(R/C)²·max(σ_T², σ_n²/g_th) with ρ = g_th (model §9.1 per block). z = 0.5: the target σ_T = z·2C
    dominates; z = 0.001: the receiver noise σ_n/√g_th (SNR 0 dB, L = 32: σ_n² = 1/32, σ_n/√g_th = 1.77). The sample
    variance of n = 400 entries per block has relative SE √(2/n) = 7 %: 5 SE per block, pooled 5 SE over all blocks."""
    K, d, n_c, g = 10, 4000, 400, 0.01
    cfg = _cfg("analog-gaussian", snr_db=0.0, g_th=g, coherence_symbols=n_c, **{"analog-gaussian": {"noise_multiplier": z}})
    agg = AnalogGaussianAggregator(cfg, K=K, d=d, seed=6)
    C = math.sqrt(d)  # clip normalization: C = √(d·P), P = 1 (model §2)
    sigma_t, sigma_rx = z * 2 * C, math.sqrt(1.0 / 32 / g)
    channel = LinkChannel(cfg, K=K, seed=6)
    ratios = []
    for t in range(3):
        res = agg.aggregate(np.zeros((K, d)), round_index=t)
        counts = (np.abs(channel.draw(t, n_blocks=d // n_c)) ** 2 >= g).sum(axis=0)
        for m in range(d // n_c):
            if counts[m] == 0:
                continue
            e = res.sum_estimate[m * n_c:(m + 1) * n_c] / (K / counts[m]) / (1.0 / C)
            ratios.append(np.mean(e**2) / max(sigma_t, sigma_rx) ** 2)
            assert abs(ratios[-1] - 1) < 5 * math.sqrt(2 / n_c)
    assert abs(np.mean(ratios) - 1) < 5 * math.sqrt(2 / n_c / len(ratios))


def test_one_block_is_todays_link_bit_for_bit():
    K, d = 8, 300
    x = np.random.default_rng(3).standard_normal((K, d)) * 0.05
    for scheme, Agg in (("channel-inversion", ChannelInversionAggregator), ("analog-gaussian", AnalogGaussianAggregator)):
        base = dict(scheme=scheme, normalization="clip", clip_norm=1.0)
        if scheme == "analog-gaussian":
            base["analog-gaussian"] = {"noise_multiplier": 0.5}
        a = Agg(PhyConfig.make(**base), K=K, d=d, seed=1)
        b = Agg(PhyConfig.make(**base, coherence_symbols=d, inversion_csit="per-block"), K=K, d=d, seed=1)
        for t in range(4):
            assert np.array_equal(a.aggregate(x, round_index=t).sum_estimate, b.aggregate(x, round_index=t).sum_estimate)


def test_options_are_one_line_errors_naming_the_key():
    bad = [
        (dict(inversion_csit="fresh"), "inversion_csit must be one of"),
        (dict(inversion_csit="per-subcarrier", coherence_symbols=10, fading_correlation="jakes-exact", doppler=0.01),
         r"inversion_csit: 'per-subcarrier' needs OFDM subcarriers, fading_correlation = 'tdl' \(got 'jakes-exact'\)"),
    ]
    for kw, msg in bad:
        with pytest.raises(ValueError, match="^" + msg):
            PhyConfig.make(scheme="channel-inversion", **kw).validate(K=4, d=100)
    for kw in (dict(coherence_symbols=10), dict(coherence_symbols=10, fading_correlation="tdl",
                                                 inversion_csit="per-subcarrier")):
        for scheme in ("analog-gaussian", "channel-inversion"):  # an estimate per block (tests/test_analog_csi_blocks.py)
            _cfg(scheme, csi_error=0.1, **kw).validate(K=4, d=100)
    with pytest.raises(ValueError, match=r"^inversion_csit: scheme 'analog-gaussian'.*'per-block'") as info:
        _cfg("analog-gaussian", inversion_csit="stale").validate(K=4, d=1000)
    assert "\n" not in str(info.value)
    tdl = dict(fading_correlation="tdl", inversion_csit="per-subcarrier")
    with pytest.raises(ValueError, match=r"^inversion_csit: scheme 'analog-gaussian'.*'per-block'"):
        _cfg("analog-gaussian", tdl_time_blocks=2, doppler=0.01, **tdl).validate(K=4, d=1000)
    _cfg("analog-gaussian", **tdl).validate(K=4, d=1000)  # one time block: per-block itself
    _cfg("analog-gaussian").validate(K=4, d=1000)
    for mode in ("per-block", "per-subcarrier"):  # a scheme without channel inversion: refused, not ignored
        with pytest.raises(ValueError, match=rf"^inversion_csit: '{mode}' applies to schemes 'channel-inversion' and "
                                             r"'analog-gaussian' only \(got scheme 'floras'\)"):
            _cfg("floras", inversion_csit=mode, fading_correlation="tdl").validate(K=4, d=1000)
    _cfg("analog-gaussian", inversion_csit="stale", coherence_symbols=1000).validate(K=4, d=1000)  # one block



@pytest.mark.parametrize("mode", ["per-block", "per-subcarrier"])
def test_per_block_estimates_have_an_error_per_measurement(mode):
    """csi_error with CSIT per block (channel inversion, model §5.1): block j's CSIT is its column's channel plus that
    measurement's error, the [2, K, B] normal array of (seed, "csi-error", t) at std √(σ_e²/2) (one error per block,
    shared by a subcarrier's time blocks with "per-subcarrier"); admission and ρ on it; at 200 dB the received block
    is Σ_{A_j} [Re(h_{k,j}/ĥ_{k,j})·(x_k − μ_k) + μ_k] (the clients' means μ_k, known to the server, are added back;
    FedAvg's K/K′_j rescaling undone). Caught: the error drawn once for the
    round (the same in every block), admission on the true channel, the weights left at 1."""
    from phy.csit_blocks import block_admission, csit_columns
    from phy.randomness import stream

    K, d, n_c, seed, err, g, t = 10, 400, 100, 6, 0.2, 0.2, 3
    extra = dict(fading_correlation="tdl", tdl_time_blocks=2, doppler=0.01) if mode == "per-subcarrier" else {}
    cfg = _cfg(snr_db=200.0, g_th=g, coherence_symbols=n_c, csi_error=err, inversion_csit=mode, **extra)
    agg = ChannelInversionAggregator(cfg, K=K, d=d, seed=seed)
    B = d // n_c
    h = LinkChannel(cfg, K=K, seed=seed).draw(t, n_blocks=B)
    z = stream(seed, "csi-error", t).standard_normal((2, K, B))
    cols = csit_columns(cfg, B)
    h_hat = (h + np.sqrt(err / 2) * (z[0] + 1j * z[1]))[:, cols]
    ba = block_admission(agg.link, t, d=d)
    np.testing.assert_allclose(ba.h_hat, h_hat, rtol=1e-12)
    adm = np.abs(h_hat) ** 2 >= g
    np.testing.assert_array_equal(ba.admitted, adm)
    w = np.real(h / h_hat) * adm
    np.testing.assert_allclose(ba.weights, w, rtol=1e-12)
    assert len({tuple(np.round(ba.weights[:, m], 9)) for m in range(B)}) == B  # every block its own weights
    x = np.random.default_rng(1).standard_normal((K, d)) * 0.01  # unclipped
    res = agg.aggregate(x, round_index=t)
    for m in range(B):
        block = slice(m * n_c, (m + 1) * n_c)
        k_m = adm[:, m].sum()
        got = res.sum_estimate[block] * k_m / K  # undo K/K′_m
        mu = x.mean(axis=1, keepdims=True)  # model §2: s_k = (C/R)·clip_R(x_k − μ_k·1)
        want = (w[:, m, None] * (x[:, block] - mu) + adm[:, m, None] * mu).sum(axis=0)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
