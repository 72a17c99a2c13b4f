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


# ---------------------------------------------------------------- the bounds over the blocks
def test_the_largest_block_law_is_b_times_each_exceedance():
    """GaussianMixtureRound.largest: P(max_m μ_m > μ_i) = min(1, B·P(μ > μ_i)) at every strength (a union bound),
    computed here from the weights; B = 1 is the event itself; a bad B is a clear error."""
    from privacy.gaussian_mixture import GaussianMixtureRound

    mus, w = (0.0, 0.1, 0.2, 0.4, 0.8), (0.5, 0.3, 0.15, 0.049, 0.001)
    one = GaussianMixtureRound(mus, w)
    assert one.largest() is one
    for B in (2, 7, 40):
        big = GaussianMixtureRound(mus, w, blocks=B).largest()
        for x in mus:
            want = min(1.0, B * sum(p for m, p in zip(mus, w) if m > x))
            got = sum(p for m, p in zip(big.strengths, big.weights) if m > x)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (B, x)
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=r"^blocks must be an integer ≥ 1"):
            GaussianMixtureRound(mus, w, blocks=bad)


def _log_wbk_moment(x: float, alpha: int, q: float) -> float:
    """ln E_Q[(P/Q)^α] of the sampled Gaussian at strength² x as dp_accounting bounds it (Theorem 27), capped by the
    unsampled C(α,2)·x: the per-channel moment the split bound must dominate."""
    from dp_accounting.rdp import rdp_privacy_accountant as dpa

    if x == 0.0:
        return 0.0
    return min(alpha * (alpha - 1) * x / 2, float(dpa._compute_rdp_sample_wor_gaussian_int(q, 1 / math.sqrt(x), alpha)))


@pytest.mark.parametrize("split", [(1.0,), (0.5, 0.5), (0.2, 0.8), (0.3, 0.3, 0.3)])
def test_the_split_bound_dominates_every_split_of_the_update(split):
    """Blocks i.i.d. from a three-point law of μ (enumerated exactly: no sampling error), the update split with
    weights w (Σ w ≤ 1): the round's moment E[ψ_α(Σ_m w_m·μ_m²)], ψ_α dp_accounting's Theorem 27 value at that
    strength, lies below exp((α − 1)·ε(α)) of the event's split curve at every integer order (the convexity argument of
    model §5.1), which is at or above the one-block curve on the same μ grid. A point law gives dp_accounting's curve itself (a branch indexed one off, or a dropped q^i·C(α, i),
    fails it)."""
    import itertools

    from privacy.gaussian_mixture import GaussianMixtureRound
    from privacy.split_mixture import split_sampled_rdp

    mus, w, q = (0.0, 0.3, 1.2), (0.3, 0.6, 0.1), 0.2
    orders = np.arange(2, 41)
    bound = GaussianMixtureRound(mus, w, blocks=2).sampled_rdp(orders, scheme="without-replacement", rate=q)  # any B > 1
    assert np.all(bound >= split_sampled_rdp(mus, w, orders, rate=q) - 1e-12)  # the event rounds μ up onto its grid
    one_block = GaussianMixtureRound(mus, w).sampled_rdp(orders, scheme="without-replacement", rate=q)
    for k, alpha in enumerate(orders):
        log_moment = -math.inf
        for combo in itertools.product(range(3), repeat=len(split)):
            p = float(np.prod([w[i] for i in combo]))
            x = sum(s * mus[i] ** 2 for s, i in zip(split, combo))
            log_moment = np.logaddexp(log_moment, math.log(p) + _log_wbk_moment(x, int(alpha), q))
        assert log_moment <= (alpha - 1) * bound[k] * (1 + 1e-9) + 1e-12, (alpha, log_moment)
        assert bound[k] >= one_block[k] * (1 - 1e-9)  # a minimum of expectations ≥ an expectation of minima
    point = split_sampled_rdp((0.4,), (1.0,), orders, rate=q)
    for k, alpha in enumerate(orders):
        assert (alpha - 1) * point[k] == pytest.approx(_log_wbk_moment(0.16, int(alpha), q), rel=1e-9)


def test_the_per_block_strengths_have_the_law_and_their_largest_is_bounded(tmp_path):
    """The strengths the link produces: client k in block m has μ_{k,m} = |w_{k,m}|·S/√V_m, V_m = σ_a,m²·Σ_{A_m}w²/K′_m
    + σ_n²/ρ_m (ρ_m = g_th, σ_a,m² = σ_T² − σ_n²/g_th), recomputed from the link's admission over 400 rounds. Every
    block's strength has the accountant's (one-block) law: it exceeds their empirical exceedance (minus 4 binomial
    standard errors), which fails if the link's per-block noise or admission differed from the law's. The largest over
    the B = 10 blocks (what the PLD takes) has the law of ``largest()``, above its empirical exceedance too, while the
    one-block law falls below that maximum in the tail."""
    from phy.analog_gaussian import AnalogGaussianAggregator
    from phy.csit_blocks import block_admission
    from scenarios.config.analog_csi import csi_law
    from test_analog_t2 import _scenario

    z, d, n_c, K = 2.0, 100, 10, 10
    extra = f'csi_error = 0.1\ncoherence_symbols = {n_c}\ninversion_csit = "per-block"'
    config = _scenario(tmp_path, n_rx=1, z=z, rounds=30, M=50, K=K, snr_db=20.0, g_th=0.1, phy_extra=extra,
                       accountant="rdp")
    _, _, _, upper, event = csi_law(config, d=d, draws=100_000)
    assert event.blocks == d // n_c
    largest = event.largest()
    agg = AnalogGaussianAggregator(config.phy, K=K, d=d, seed=9)
    C = math.sqrt(d)
    S, sigma_t = 2 * C, z * 2 * C
    rx = 10 ** (-20 / 10) / 8  # σ_n² = N0/L at 20 dB, P = 1 (model §5)
    var_a = sigma_t**2 - rx / 0.1
    top, every = [], []
    for t in range(400):
        ba = block_admission(agg.link, t, d=d)
        w = ba.weights
        k_m = ba.admitted.sum(axis=0)
        V = var_a * (w * w).sum(axis=0) / np.maximum(k_m, 1) + rx / 0.1
        mu = np.abs(w) * S / np.sqrt(V)[None, :]
        top.append(mu.max(axis=1))  # every client's largest block strength (0 where never admitted)
        every.append(mu.ravel())
    top, every = np.concatenate(top), np.concatenate(every)
    assert top.max() <= upper
    law_ex = lambda law, x: float(np.sum(np.asarray(law.weights)[np.asarray(law.strengths) > x]))  # noqa: E731
    se = lambda p: math.sqrt(max(p * (1 - p), 1.0 / top.size) / top.size)  # noqa: E731
    se_all = lambda p: math.sqrt(max(p * (1 - p), 1.0 / every.size) / every.size)  # noqa: E731
    for x in np.quantile(every, [0.5, 0.9, 0.99, 0.999]):
        emp = float(np.mean(every > x))
        assert law_ex(event, x) >= emp - 4 * se_all(emp), (x, law_ex(event, x), emp)
    for x in np.quantile(top, [0.5, 0.9, 0.99, 0.999]):
        emp = float(np.mean(top > x))
        assert law_ex(largest, x) >= emp - 4 * se(emp), (x, law_ex(largest, x), emp)
    x99 = float(np.quantile(top, 0.99))
    assert law_ex(event, x99) < float(np.mean(top > x99)) - 4 * se(0.01)  # the one-block law does not bound the max


@pytest.mark.parametrize("model", ["A", "D"])
def test_tdl_subcarriers_each_have_the_one_block_law(tmp_path, model):
    """Analog Gaussian over TR 38.901 TDL subcarriers with a per-subcarrier estimate (B_t = 1: every block measures
    itself): client 0's strength on subcarrier t mod B in round t, μ = |Re(h/ĥ)|·S/√V (V from the block's admission,
    as in the test above), against the one-block law's own draws (phy.csi_law with the configuration's κ: 0 for the
    NLoS TDL-A, phy.los_k for TDL-D, whose specular phase the law does not read), two-sample Kolmogorov–Smirnov over 800
    rounds. Caught: a subcarrier marginal other than CN(0, 1) or the Rician law, errors shared across subcarriers."""
    from phy.analog_gaussian import AnalogGaussianAggregator
    from phy.csi_law import csi_rounds, strengths
    from phy.csit_blocks import block_admission
    from test_analog_t2 import _scenario

    z, d, n_c, K, g, err = 2.0, 160, 10, 10, 0.1, 0.1
    extra = (f'csi_error = {err}\ncoherence_symbols = {n_c}\nfading_correlation = "tdl"\ntdl_model = "{model}"\n'
             'delay_spread = 3e-7\ninversion_csit = "per-subcarrier"')
    config = _scenario(tmp_path, n_rx=1, z=z, rounds=30, M=50, K=K, snr_db=20.0, g_th=g, phy_extra=extra,
                       accountant="rdp")
    config.privacy_accountant(d=d, D=30)  # accepted: no refusal for TDL with a per-block estimate
    kappa = float(config.phy.los_k)
    assert (kappa > 0) == (model == "D")
    agg = AnalogGaussianAggregator(config.phy, K=K, d=d, seed=3)
    C = math.sqrt(d)
    S, sigma_t = 2 * C, z * 2 * C
    rx = 10 ** (-20 / 10) / 8
    var_a = sigma_t**2 - rx / g
    B = d // n_c
    link = []
    for t in range(800):
        ba = block_admission(agg.link, t, d=d)
        m = t % B
        w = ba.weights[:, m]
        k_m = int(ba.admitted[:, m].sum())
        V = var_a * float(w @ w) / max(k_m, 1) + rx / g
        link.append(abs(w[0]) * S / math.sqrt(V))
    law = strengths(csi_rounds(K=K, g_th=g, csi_error=err, rho_rule="threshold", draws=40_000, seed=1, rician_k=kappa),
                    target_std=sigma_t, sensitivity=S, receiver_variance=rx)
    assert stats.ks_2samp(np.asarray(link), law).pvalue > 1e-3


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
    """B = ⌈d/n_c⌉ estimated blocks (d = 100). Under rdp the split bound does not depend on B (it bounds every split),
    lies at or above the one-block accountant's ε (a minimum of expectations against an expectation of minima) and
    within 10 % of it here; under the PLD the largest block's law grows with B. The law line names the blocks, the
    convexity argument and the union bound."""
    from test_analog_t2 import _scenario

    def eps(n_c, accountant):
        extra = "csi_error = 0.05" + ("" if n_c is None else f'\ncoherence_symbols = {n_c}\ninversion_csit = "per-block"')
        config = _scenario(tmp_path, n_rx=1, z=2.0, rounds=30, M=50, K=10, snr_db=20.0, g_th=0.1, phy_extra=extra,
                           accountant=accountant)
        acc = config.privacy_accountant(d=100, D=30)
        return acc.epsilon(rounds=30), " ".join(acc.report(rounds=30).assumptions)

    e1, _ = eps(None, "rdp")
    e_one, _ = eps(100, "rdp")  # one block of d = 100 entries: per_block_csit is off, the one-block accountant
    e5, text5 = eps(20, "rdp")
    e50, _ = eps(2, "rdp")
    assert e_one == e1 and e5 == e50 and e1 <= e5 <= 1.1 * e1, (e1, e5)  # 6.52 and 7.08
    assert "over the round's 5 coherence blocks" in text5 and "convexity in μ²" in text5 and "union bound" in text5
    p1, p5, p50 = eps(None, "pld")[0], eps(20, "pld")[0], eps(2, "pld")[0]
    assert p1 < p5 < p50


def test_a_point_law_is_the_sampled_gaussians_curve_at_every_default_order():
    """split_sampled_rdp of a one-point law equals dp_accounting's without-replacement sampled Gaussian curve at every
    order of privacy.rdp.DEFAULT_ORDERS: the fractional ones (WBK Corollary 10's interpolation, from α = 1 up), the
    integers to 64 and the large ones (128, 256 with the forward differences; 512, 1024 with dp_accounting's Stirling
    branch, the c_i only). Caught: an order above 256 given the D_j branch, a fractional order interpolated from the
    wrong neighbours."""
    from privacy.rdp import DEFAULT_ORDERS
    from privacy.sampled_gaussian import sampled_gaussian_rdp
    from privacy.split_mixture import split_sampled_rdp

    for q, mu in ((0.2, 0.27), (0.01, 1.5), (0.5, 0.05)):
        got = split_sampled_rdp((mu,), (1.0,), DEFAULT_ORDERS, rate=q)
        want = sampled_gaussian_rdp(DEFAULT_ORDERS, scheme="without-replacement", rate=q, noise_multiplier=1 / mu)
        unsampled = np.asarray(DEFAULT_ORDERS) * mu * mu / 2
        np.testing.assert_allclose(got, np.minimum(want, unsampled), rtol=1e-9, atol=1e-12)
