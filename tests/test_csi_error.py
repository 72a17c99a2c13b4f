"""Imperfect CSI of truncated channel inversion, ``phy.csi_error`` (model §5.1, §6.2; phy/csi_error.py).

ĥ_k = h_k + e_k, e_k ~ CN(0, σ_e²·β_eff,k); admission |ĥ_k|² ≥ g_th; received real part
√ρ·Σ_adm Re(h_k/ĥ_k)·s_k + n. Predictions come from these formulas and the raw configuration.
"""

from __future__ import annotations

import numpy as np
import pytest

from phy.cell import CellChannel
from phy.channel_inversion import ChannelInversionAggregator, ChannelInversionLink, admitted_sums
from phy.config import PhyConfig
from phy.normalization import normalize
from phy.randomness import stream


def _cfg(**kw):
    base = dict(scheme="channel-inversion", snr_db=20.0, normalization="clip", clip_norm=1.0)
    base.update(kw)
    return PhyConfig.make(**base)


def _chunks(x, cuts):
    edges = [0, *cuts, x.shape[0]]
    return [(np.arange(a, b), x[a:b]) for a, b in zip(edges[:-1], edges[1:])]


def test_default_is_todays_link_bit_for_bit():
    s = np.random.default_rng(5).standard_normal((8, 300))
    absent = ChannelInversionLink(_cfg(), K=8, seed=3)
    zero = ChannelInversionLink(_cfg(csi_error=0.0), K=8, seed=3)
    for t in range(20):
        a, b = absent.run_round(s, round_index=t), zero.run_round(s, round_index=t)
        assert np.array_equal(a.s_hat, b.s_hat) and np.array_equal(a.admitted, b.admitted) and a.rho == b.rho
        assert np.array_equal(a.transmit_power, b.transmit_power)
        assert np.array_equal(a.admitted, np.abs(a.h) ** 2 >= 0.01)  # perfect CSI: admission on h


@pytest.mark.parametrize("cell", [False, True])
def test_error_variance_is_relative_to_the_large_scale_gain(cell):
    sigma_e2, K, R, seed = 0.1, 20, 400, 11
    kw = dict(pathloss="log-distance", redrop=True) if cell else {}
    cfg = _cfg(csi_error=sigma_e2, **kw)
    link = ChannelInversionLink(cfg, K=K, seed=seed)
    ratios, cross = [], []
    for t in range(R):
        h, _, _, h_hat = link.admission_estimated(t)
        beta = CellChannel(cfg, seed=seed).large_scale(None, K=K, round_index=t).gain_eff if cell else np.ones(K)
        e = h_hat - h
        ratios.append(np.abs(e) ** 2 / (sigma_e2 * beta))
        cross.append(e * np.conj(h) / (np.sqrt(sigma_e2) * beta))
    r = np.concatenate(ratios)
    # |e|²/(σ_e²β) ~ Exp(1) (χ²₂/2): mean 1, std 1, so the mean of n draws has std 1/√n; 5σ
    assert abs(r.mean() - 1.0) < 5.0 / np.sqrt(r.size)
    # e independent of h: E[e·h*]/(σ_e·β) = 0 with std of each part ≤ 1/√2 per draw; 5σ
    c = np.concatenate(cross)
    assert abs(c.mean()) < 5.0 / np.sqrt(r.size)


def test_admission_power_and_received_sum_follow_the_estimate():
    K, d, seed, g_th, sigma_e2 = 12, 50, 4, 0.5, 0.5
    cfg = _cfg(csi_error=sigma_e2, g_th=g_th, snr_db=300.0)  # receiver noise ~1e-15: ŝ is the signal
    link = ChannelInversionLink(cfg, K=K, seed=seed)
    s = np.random.default_rng(2).standard_normal((K, d))
    below_admitted = above_refused = 0
    for t in range(30):
        rnd = link.run_round(s, round_index=t)
        z = stream(seed, "csi-error", t).standard_normal((2, K))
        assert np.allclose(rnd.h_hat, rnd.h + np.sqrt(sigma_e2 / 2) * (z[0] + 1j * z[1]), rtol=0, atol=1e-12)
        g_hat, g = np.abs(rnd.h_hat) ** 2, np.abs(rnd.h) ** 2
        assert np.array_equal(rnd.admitted, g_hat >= g_th)
        below_admitted += int(np.sum(rnd.admitted & (g < g_th)))
        above_refused += int(np.sum(~rnd.admitted & (g >= g_th)))
        if not rnd.admitted.any():
            continue
        assert rnd.rho == g_th
        adm = rnd.admitted
        assert np.allclose(rnd.transmit_power[adm], g_th * np.mean(s[adm] ** 2, axis=1) / g_hat[adm], rtol=1e-12)
        w = np.real(rnd.h[adm] / rnd.h_hat[adm])
        assert np.allclose(rnd.s_hat, (w[:, None] * s[adm]).sum(axis=0), rtol=0, atol=1e-9)
    assert below_admitted > 0 and above_refused > 0  # the estimate, not h, decides


@pytest.mark.parametrize("rule", ["threshold", "min-admitted"])
def test_traced_and_streaming_paths_agree(rule):
    K, d = 10, 700
    cfg = _cfg(csi_error=0.05, pathloss="log-distance", rho_rule=rule, chunk_size=128)
    x = np.random.default_rng(9).standard_normal((K, d)) * 0.02
    agg = ChannelInversionAggregator(cfg, K=K, d=d, seed=1)
    for t in range(5):
        a = agg.aggregate(x, round_index=t)
        b = agg.aggregate_stream(iter(_chunks(x, [3, 7])), round_index=t)
        assert np.array_equal(a.sum_estimate, b.sum_estimate) and a.error == b.error
        assert a.diagnostics == b.diagnostics
        sums = admitted_sums(agg.link, _chunks(x, [5]), d=d, round_index=t)
        nz = normalize(x, rule="clip", C=cfg.norm_bound(d), clip_norm=cfg.clip_norm)
        traced = agg.link.run_round(nz.s, round_index=t, energy=nz.energy)
        assert np.array_equal(sums.rnd.s_hat, traced.s_hat) and np.array_equal(sums.rnd.h_hat, traced.h_hat)
        assert np.array_equal(sums.rnd.transmit_power, traced.transmit_power)
        # from s itself (a link-level trace without the normalization): ‖s_k‖² summed from s, equal to rounding
        from_s = agg.link.run_round(nz.s, round_index=t).transmit_power
        np.testing.assert_allclose(from_s, traced.transmit_power, rtol=1e-13, atol=0)


def test_link_nmse_matches_the_formula():
    """E‖ŝ − Σ_adm s_k‖²/d = K·E[(Re(h/ĥ) − 1)²·1{|ĥ|² ≥ g_th}] + P(K' > 0)·σ_n²/g_th for s_k entries i.i.d.
    N(0, 1) (threshold rule ρ = g_th, σ_n² = σ²/L); the expectation by Monte Carlo of the raw formula."""
    K, d, R, sigma_e2, g_th, snr_db, L = 10, 2000, 600, 0.1, 0.01, 30.0, 32
    cfg = _cfg(csi_error=sigma_e2, g_th=g_th, snr_db=snr_db, L=L)
    link = ChannelInversionLink(cfg, K=K, seed=7)
    rng = np.random.default_rng(123)
    err = np.empty(R)
    for t in range(R):
        s = rng.standard_normal((K, d))
        rnd = link.run_round(s, round_index=t)
        err[t] = np.sum((rnd.s_hat - s[rnd.admitted].sum(axis=0)) ** 2) / d
    mc = np.random.default_rng(321)
    n = 2_000_000
    cn = lambda v: np.sqrt(v / 2) * (mc.standard_normal(n) + 1j * mc.standard_normal(n))
    h = cn(1.0)
    h_hat = h + cn(sigma_e2)
    adm = np.abs(h_hat) ** 2 >= g_th
    q = (np.real(h / h_hat) - 1.0) ** 2 * adm
    p_any = 1.0 - (1.0 - adm.mean()) ** K
    noise = p_any * (10 ** (-snr_db / 10) / L) / g_th
    pred = K * q.mean() + noise
    # per round err = (A + N)·χ²_d/d, A = Σ_k q_k: Var ≈ K·Var(q) + 2·(E A² + 2N·E A + N²)/d; 5σ over R rounds
    ea, ea2 = K * q.mean(), K * q.var() + (K * q.mean()) ** 2
    var = K * q.var() + 2 * (ea2 + 2 * noise * ea + noise**2) / d
    assert abs(err.mean() - pred) < 5 * np.sqrt(var / R), (err.mean(), pred)
    assert pred > 5 * noise  # the estimation error, not the receiver noise, dominates this check


@pytest.mark.parametrize("bad", [-0.01, float("nan"), float("inf"), "0.1", True])
def test_bad_values_name_the_key_and_range(bad):
    with pytest.raises(ValueError, match=r"csi_error must be a finite number ≥ 0"):
        _cfg(csi_error=bad).validate(K=4)


@pytest.mark.parametrize("kw, what", [
    (dict(scheme="floras", normalization="paper", clip_norm=None), "FLORAS without CSIT .* uses no channel estimate"),
    (dict(scheme="floras", normalization="paper", clip_norm=None, floras={"csit": "phase", "pilots": "stale"},
          coherence_symbols=100), "modelled with a pilot \\(and an estimate\\) per coherence block"),
    (dict(scheme="central-gaussian", normalization="clip", clip_norm=1.0,
          **{"central-gaussian": {"noise_multiplier": 1.0}}), "'floras' \\(phase CSIT\\) only"),
])
def test_refusals(kw, what):
    with pytest.raises(ValueError, match=rf"csi_error: .*{what}"):
        _cfg(csi_error=0.1, **kw).validate(K=4)
    _cfg(csi_error=0.0, **kw).validate(K=4)  # perfect CSI stays allowed
