"""Truncated channel inversion (model §6.2)."""

import numpy as np
import pytest

from phy.schemes import make_aggregator
from phy.channel_inversion import ChannelInversionAggregator, ChannelInversionLink, admitted_mask, inversion_factor
from phy.config import PhyConfig
from phy.fading import draw_rayleigh
from phy.normalization import normalize
from phy.randomness import stream


def _x(K, d, t=0):
    return stream(0, "test-ci", t).standard_normal((K, d))


@pytest.mark.parametrize("rule", ["threshold", "min-admitted"])
def test_every_admitted_client_within_its_power_constraint(rule):
    K, d = 20, 200
    agg = make_aggregator(PhyConfig(scheme="channel-inversion", rho_rule=rule, g_th=0.05), K=K, d=d, seed=3)
    worst = 0.0
    for t in range(100):
        res, rnd = agg.aggregate_traced(_x(K, d, t), round_index=t)
        s = normalize(_x(K, d, t), rule="paper", C=np.sqrt(d), clip_norm=None).s
        # direct recomputation: ρ·(‖s_k‖²/d)/|h_k|² ≤ P = 1 for every admitted k
        power = rnd.rho * np.mean(s**2, axis=1) / np.abs(rnd.h) ** 2
        assert np.all(power[rnd.admitted] <= 1 + 1e-12)
        np.testing.assert_allclose(rnd.transmit_power[rnd.admitted], power[rnd.admitted], rtol=1e-12)
        assert np.all(rnd.transmit_power[~rnd.admitted] == 0)
        worst = max(worst, res.diagnostics["max_power_ratio"])
        if rule == "min-admitted":  # the weakest admitted client inverts with ρ = |h_k|²: power ‖s_k‖²/d
            k = np.flatnonzero(rnd.admitted)[np.argmin(np.abs(rnd.h[rnd.admitted]))]
            assert power[k] == pytest.approx(np.mean(s[k] ** 2), rel=1e-12)
    assert worst <= 1 + 1e-12


@pytest.mark.parametrize("scheme", ["channel-inversion", "analog-gaussian"])
def test_streamed_transmit_power_is_rho_times_mean_square_of_s_over_the_gain(scheme):
    """The streaming clip receivers take ‖s_k‖² from the clip factor and the centred norm (f_k²·‖x_k − μ_k·1‖²,
    model §2) rather than from s: the power each admitted client reports is ρ·mean(s_k²)/|h_k|² with s_k from
    normalize, to rounding, whatever the chunks; 0 for the others; max_power_ratio its maximum over P (channel
    inversion: data only; analog Gaussian adds its artificial noise, so it is at least that)."""
    from phy.channel_inversion import admitted_sums

    K, d = 12, 300
    cfg = PhyConfig.make(scheme=scheme, normalization="clip", clip_norm=1.0, g_th=0.05, snr_db=20.0,
                         **({"analog-gaussian": {"noise_multiplier": 0.5}} if scheme == "analog-gaussian" else {}))
    agg = make_aggregator(cfg, K=K, d=d, seed=3)
    checked = 0
    for t in range(20):
        x = _x(K, d, t) * np.linspace(0.02, 0.2, K)[:, None]  # norms ≈ 0.3–3.5: some clipped, some not
        s = normalize(x, rule="clip", C=cfg.norm_bound(d), clip_norm=1.0).s
        for sizes in ([K], [5, 7], [1] * K):
            chunks, start = [], 0
            for n in sizes:
                chunks.append((np.arange(start, start + n), x[start:start + n]))
                start += n
            rnd = admitted_sums(agg.link, chunks, d=d, round_index=t).rnd
            want = rnd.rho * np.mean(s**2, axis=1) / np.abs(rnd.h) ** 2
            np.testing.assert_allclose(rnd.transmit_power[rnd.admitted], want[rnd.admitted], rtol=1e-13, atol=0)
            assert np.all(rnd.transmit_power[~rnd.admitted] == 0)
            checked += int(rnd.admitted.sum())
        ratio = agg.aggregate_stream(iter(chunks), round_index=t).diagnostics["max_power_ratio"]
        top = float(want[rnd.admitted].max()) / cfg.power if rnd.admitted.any() else 0.0
        if scheme == "channel-inversion":
            assert ratio == pytest.approx(top, rel=1e-13)
        else:
            assert ratio >= top * (1 - 1e-13)
    assert checked > 100


def test_truncates_below_the_threshold():
    K, d, g_th = 20, 50, 1.0  # P(|h|² < 1) = 1 − e^{−1}
    agg = ChannelInversionAggregator(PhyConfig(scheme="channel-inversion", g_th=g_th), K=K, d=d, seed=4)
    for t in range(20):
        res, rnd = agg.aggregate_traced(_x(K, d, t), round_index=t)
        h = draw_rayleigh(4, t, K=K)
        np.testing.assert_array_equal(rnd.admitted, np.abs(h) ** 2 >= g_th)
        assert res.contributors == rnd.admitted.sum() == res.diagnostics["admitted"]
    h = np.array([0.05, 0.2j, 1.0])
    np.testing.assert_array_equal(admitted_mask(h, g_th=0.01), [False, True, True])
    assert inversion_factor(h, admitted_mask(h, g_th=0.01), g_th=0.01, rule="min-admitted") == pytest.approx(0.04)
    assert inversion_factor(h, admitted_mask(h, g_th=0.01), g_th=0.01, rule="threshold") == 0.01


def test_no_admitted_client_leaves_the_model_unchanged():
    agg = ChannelInversionAggregator(PhyConfig(scheme="channel-inversion", g_th=1e6), K=3, d=10, seed=0)
    res = agg.aggregate(_x(3, 10), round_index=0)
    assert res.contributors == 0 and res.diagnostics["skipped"] == 1.0
    np.testing.assert_array_equal(res.sum_estimate, 0.0)
    np.testing.assert_array_equal(res.mean_estimate, 0.0)


@pytest.mark.parametrize("resource, factor", [("equal", 1 / 32), ("source-literal", 1.0)])
def test_unbiased_with_the_resource_noise_variance(resource, factor):
    """ŝ − Σ_adm s_k = n/√ρ with n ~ N(0, σ²/L) (equal) or N(0, σ²) (source-literal)."""
    K, d, rounds = 20, 2000, 10
    cfg = PhyConfig(scheme="channel-inversion", snr_db=10.0, L=32, resource=resource)
    link = ChannelInversionLink(cfg, K=K, seed=6)
    errs, rho = [], []
    for t in range(rounds):
        s = normalize(_x(K, d, t), rule="paper", C=np.sqrt(d), clip_norm=None).s
        rnd = link.run_round(s, round_index=t)
        errs.append(rnd.s_hat - s[rnd.admitted].sum(axis=0))
        rho.append(rnd.rho)
    err = np.concatenate(errs)
    var = cfg.noise_variance * factor / rho[0]  # ρ = g_th every round
    n = err.size
    assert abs(err.mean()) < 4 * np.sqrt(var / n)
    assert abs(err.var() / var - 1) < 4 * np.sqrt(2 / n)


def test_high_snr_estimate_recovers_admitted_sum():
    K, d = 20, 500
    agg = make_aggregator(PhyConfig(scheme="channel-inversion", snr_db=100.0), K=K, d=d, seed=7)
    for t in range(5):
        x = _x(K, d, t) + 0.5
        res, rnd = agg.aggregate_traced(x, round_index=t)
        target = x[rnd.admitted].sum(axis=0)
        assert np.sum((res.sum_estimate - target) ** 2) / np.sum(target**2) < 1e-8


def test_chunk_size_does_not_change_results():
    K, d = 5, 9000
    s = normalize(_x(K, d), rule="paper", C=np.sqrt(d), clip_norm=None).s
    outs = [ChannelInversionLink(PhyConfig(scheme="channel-inversion", chunk_size=c), K=K, seed=1).run_round(s, round_index=0)
            for c in (100, 4096, 65536)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o.s_hat, outs[0].s_hat)
