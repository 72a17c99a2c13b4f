"""Analog Gaussian with a channel estimate per coherence block (model §5.1, "Imperfect CSI", per-block CSIT):
the link (phy/csit_blocks.py), the union bound over the blocks (privacy/gaussian_mixture.py) and the run's accountant
(scenarios/config/analog_csi.py). Predictions come from the model's formulas, the raw configuration and the
documented streams."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from phy.config import PhyConfig


def _phy(**kw):
    base = dict(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, L=8, coherence_symbols=100,
                inversion_csit="per-block", csi_error=0.3, g_th=0.1, **{"analog-gaussian": {"noise_multiplier": 0.8}})
    base.update(kw)
    return PhyConfig.make(**base)


def test_each_block_carries_the_clients_noise_weighted_as_their_data():
    """At 200 dB (receiver noise ≈ 0, σ_a,m = σ_T) with zero updates block m of the estimate is
    (K/K′_m)·(R/C)·σ_T·√(Σ_{A_m} w_{k,m}²/K′_m)·ν^i, w = Re(h_{k,m}/ĥ_{k,m}) from the channel's draw and the
    (seed, "csi-error", t) errors, ν the unit noise of the keyed stream "analog-gaussian-artificial-noise". Caught: the
    noise drawn as with perfect CSI (factor 1, here ≥ 10 % off in some block), the weights of another block."""
    from phy.analog_gaussian import AnalogGaussianAggregator
    from phy.blocks import fill_block_noise
    from phy.link_channel import LinkChannel
    from phy.randomness import stream

    K, d, n_c, seed, err, g, t = 8, 600, 100, 5, 0.3, 0.1, 2
    cfg = _phy(snr_db=200.0, coherence_symbols=n_c, csi_error=err, g_th=g)
    agg = AnalogGaussianAggregator(cfg, K=K, d=d, seed=seed)
    B = d // n_c
    h = LinkChannel(cfg, K=K, seed=seed).draw(t, n_blocks=B)
    z = stream(seed, "csi-error", t).standard_normal((2, K, B))
    h_hat = h + math.sqrt(err / 2) * (z[0] + 1j * z[1])
    adm = np.abs(h_hat) ** 2 >= g
    w = np.real(h / h_hat) * adm
    nu = fill_block_noise(np.empty(d), seed=seed, purpose="analog-gaussian-artificial-noise", round_index=t, start=0,
                          std=1.0)
    C = math.sqrt(d)  # clip normalization, P = 1 (model §2)
    sigma_t = 0.8 * 2 * C  # z·S, replace-one S = 2C
    res = agg.aggregate(np.zeros((K, d)), round_index=t)
    factors = []
    for m in range(B):
        k_m = int(adm[:, m].sum())
        block = slice(m * n_c, (m + 1) * n_c)
        if k_m == 0:
            assert np.all(res.sum_estimate[block] == 0.0)
            continue
        factors.append(math.sqrt(float(np.sum(w[:, m] ** 2)) / k_m))
        want = (K / k_m) * (1.0 / C) * sigma_t * factors[-1] * nu[block]
        np.testing.assert_allclose(res.sum_estimate[block], want, rtol=1e-6, atol=1e-8)
    assert max(abs(f - 1.0) for f in factors) > 0.1
    streamed = agg.aggregate_stream([(np.arange(0, 3), np.zeros((3, d))), (np.arange(3, K), np.zeros((K - 3, d)))],
                                    round_index=t)
    np.testing.assert_array_equal(streamed.sum_estimate, res.sum_estimate)


def test_perfect_csi_per_block_is_unchanged_by_the_weighting():
    """csi_error = 0: the per-block link's artificial noise has factor exactly 1 (the same arrays as before)."""
    from phy.analog_gaussian import AnalogGaussianAggregator

    K, d = 6, 400
    x = np.random.default_rng(2).standard_normal((K, d)) * 0.02
    agg = AnalogGaussianAggregator(_phy(csi_error=0.0, snr_db=10.0), K=K, d=d, seed=3)
    res = agg.aggregate(x, round_index=1)
    assert res.diagnostics["noise_std_effective"] == pytest.approx(
        math.sqrt(max((0.8 * 2 * math.sqrt(d)) ** 2, 1.0 / 8 / 10.0 / 0.1)), rel=1e-12)  # max(σ_T², σ_n²/g_th) per block


# ---------------------------------------------------------------- the union bound over the blocks
def test_the_band_law_over_blocks_is_b_times_each_clopper_pearson_limit():
    """Thresholds 0 and the panel edges below the bound: U_i the one-sided Clopper–Pearson limit of count c_i of m at
    level β/(J + 1) (scipy's beta quantile, computed here), the law's exceedance min(1, B·U_i) made non-increasing;
    B = 1 is the earlier law. Bad B: a clear error."""
    from privacy.gaussian_mixture import envelope_band_law, exceedances, panel_edges

    draws = np.random.default_rng(0).exponential(0.2, size=5000)
    upper = 3.0
    counts = exceedances(np.minimum(draws, upper), upper=upper)
    J1 = panel_edges(upper).size
    beta = 1e-6
    U = np.where(counts >= draws.size, 1.0, stats.beta.ppf(1 - beta / J1, counts + 1, np.maximum(draws.size - counts, 1)))
    for B in (1, 7, 40):
        values, weights = envelope_band_law([counts], [draws.size], upper=upper, beta=beta, blocks=B)
        want = np.minimum.accumulate(np.minimum(B * U, 1.0))
        exceed = 1.0 - np.cumsum(weights)  # P(μ > values[i])
        edges = np.concatenate([[0.0], panel_edges(upper)])
        for v, e in zip(values[:-1], exceed[:-1]):
            i = int(np.searchsorted(edges, v))
            assert e == pytest.approx(want[i], rel=1e-9, abs=1e-12)
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=r"^blocks must be an integer ≥ 1"):
            envelope_band_law([counts], [draws.size], upper=upper, beta=beta, blocks=bad)


def test_the_accountants_law_dominates_the_links_largest_block_strength(tmp_path):
    """The strengths the link produces: client k in block m has μ_{k,m} = |w_{k,m}|·S/√V_m, V_m = σ_a,m²·Σ_{A_m}w²/K′_m
    + σ_n²/ρ_m (ρ_m = g_th, σ_a,m² = σ_T² − σ_n²/g_th), recomputed from the link's admission over 400 rounds; the
    round's strength is the largest over the B = 10 blocks. The accountant's law must exceed the empirical exceedance
    of that maximum at every panel edge (minus 4 binomial standard errors); a law without the factor B (the one-block
    law) falls below it in the tail, which this checks too."""
    from phy.analog_gaussian import AnalogGaussianAggregator
    from phy.csit_blocks import block_admission
    from scenarios.config.analog_csi import csi_law
    from test_analog_t2 import _scenario

    z, d, n_c, K = 2.0, 100, 10, 10
    extra = f'csi_error = 0.1\ncoherence_symbols = {n_c}\ninversion_csit = "per-block"'
    config = _scenario(tmp_path, n_rx=1, z=z, rounds=30, M=50, K=K, snr_db=20.0, g_th=0.1, phy_extra=extra,
                       accountant="rdp")
    _, _, _, upper, event = csi_law(config, d=d, draws=100_000)
    one = _scenario(tmp_path, n_rx=1, z=z, rounds=30, M=50, K=K, snr_db=20.0, g_th=0.1, phy_extra="csi_error = 0.1",
                    accountant="rdp")
    _, _, _, _, single = csi_law(one, d=d, draws=100_000)
    agg = AnalogGaussianAggregator(config.phy, K=K, d=d, seed=9)
    C = math.sqrt(d)
    S, sigma_t = 2 * C, z * 2 * C
    rx = 10 ** (-20 / 10) / 8  # σ_n² = N0/L at 20 dB, P = 1 (model §5)
    var_a = sigma_t**2 - rx / 0.1
    top = []
    for t in range(400):
        ba = block_admission(agg.link, t, d=d)
        w = ba.weights
        k_m = ba.admitted.sum(axis=0)
        V = var_a * (w * w).sum(axis=0) / np.maximum(k_m, 1) + rx / 0.1
        mu = np.abs(w) * S / np.sqrt(V)[None, :]
        top.append(mu.max(axis=1))  # every client's largest block strength (0 where never admitted)
    top = np.concatenate(top)
    assert top.max() <= upper
    law_ex = lambda law, x: float(np.sum(np.asarray(law.weights)[np.asarray(law.strengths) > x]))  # noqa: E731
    se = lambda p: math.sqrt(max(p * (1 - p), 1.0 / top.size) / top.size)  # noqa: E731
    for x in np.quantile(top, [0.5, 0.9, 0.99, 0.999]):
        emp = float(np.mean(top > x))
        assert law_ex(event, x) >= emp - 4 * se(emp), (x, law_ex(event, x), emp)
    x99 = float(np.quantile(top, 0.99))
    assert law_ex(single, x99) < float(np.mean(top > x99)) - 4 * se(0.01)  # the one-block law does not dominate


def test_a_split_update_can_be_less_private_than_one_block_under_the_hockey_stick():
    """Why the bound is the largest block's strength, not the one-block law (model §5.1): with μ² ∈ {0, 2a} equally
    likely per block and the update split evenly over two i.i.d. blocks, μ² ∈ {0, a, 2a} w.p. ¼, ½, ¼; the revealed
    mixture's δ(ε) = E[Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)] exceeds the concentrated update's ½·δ_{√(2a)}(ε) wherever
    δ_μ is concave in μ², here at a = 8, ε = 1. (Under Rényi DP the mixture's E[e^{λμ²}] is convex in μ², and the
    concentrated update is the worse.)"""
    def delta(mu, eps):
        return 0.0 if mu == 0 else stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)

    a, eps = 8.0, 1.0
    one = 0.5 * delta(math.sqrt(2 * a), eps)
    split = 0.5 * delta(math.sqrt(a), eps) + 0.25 * delta(math.sqrt(2 * a), eps)
    assert split > 1.25 * one  # 0.607 against 0.463
    lam = 3.0  # Rényi: E e^{λμ²} concentrated ≥ split
    assert 0.5 + 0.5 * math.exp(lam * 2 * a) >= 0.25 + 0.5 * math.exp(lam * a) + 0.25 * math.exp(lam * 2 * a)


def test_the_runs_epsilon_takes_the_blocks_and_the_report_says_so(tmp_path):
    """B = ⌈d/n_c⌉ estimated blocks: ε grows with B at the same z (B = 1 is the one-block accountant's number), and the
    law line names the blocks and the union bound."""
    from test_analog_t2 import _scenario

    def eps(n_c):
        extra = "csi_error = 0.05" + ("" if n_c is None else f'\ncoherence_symbols = {n_c}\ninversion_csit = "per-block"')
        config = _scenario(tmp_path, n_rx=1, z=2.0, rounds=30, M=50, K=10, snr_db=20.0, g_th=0.1, phy_extra=extra,
                           accountant="rdp")
        acc = config.privacy_accountant(d=100, D=30)
        return acc.epsilon(rounds=30), " ".join(acc.report(rounds=30).assumptions)

    e1, _ = eps(None)
    e_one, _ = eps(100)  # one block of d = 100 entries: per_block_csit is off, the one-block accountant
    e5, text5 = eps(20)
    e50, text50 = eps(2)
    assert e_one == e1 and e1 < e5 < e50
    assert "max over the round's 5 coherence blocks" in text5 and "union bound" in text5
    assert "50 coherence blocks" in text50
