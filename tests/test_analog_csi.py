"""Analog Gaussian with imperfect CSI (model §5.1, "Imperfect CSI"): the strength law's rounds (phy/csi_law.py), the
received artificial noise (phy/analog_gaussian.py), the revealed Gaussian mixture and its band law
(privacy/gaussian_mixture.py), and the run's accountant (scenarios/config/analog_csi.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from phy.csi_law import CsiRounds, csi_rounds, strength_bound, strengths
from privacy.gaussian_mixture import GaussianMixtureRound, band_law


# ---------------------------------------------------------------- the law's rounds against the estimation model
@pytest.mark.parametrize("err, g_th", [(0.1, 0.3), (0.01, 0.05)])
def test_the_rounds_have_the_mmse_gain_law(err, g_th):
    """ĥ = h + e with h ~ CN(0, 1), e ~ CN(0, σ_e²): given ĥ, h/ĥ ~ CN(1/(1 + σ_e²), σ_e²/((1 + σ_e²)|ĥ|²)), so over
    the admitted rows (|ĥ|² ~ Exp(mean λ = 1 + σ_e²) above g_th) E[c] = 1/λ, E[(c − 1/λ)²] = σ_e²/(2λ)·E[1/|ĥ|²] with
    E[1/X | X ≥ g] = e^{g/λ}·E₁(g/λ)/λ, and P(admitted) = e^{−g/λ}. Plausible bugs: σ_e² per component instead of
    per complex error (λ = 1 + σ_e²/2), the imaginary part of h/ĥ kept, admission on h rather than ĥ."""
    K, m = 8, 60_000
    r = csi_rounds(K=K, g_th=g_th, csi_error=err, rho_rule="threshold", draws=m, seed=2)
    lam = 1.0 + err
    on = r.c0 != 0.0
    c = r.c0[on]
    assert abs(c.mean() - 1.0 / lam) <= 5 * c.std() / math.sqrt(c.size)
    inv = math.exp(g_th / lam) * special.exp1(g_th / lam) / lam
    dev = (c - 1.0 / lam) ** 2
    assert abs(dev.mean() - err / (2 * lam) * inv) <= 5 * dev.std() / math.sqrt(dev.size), (dev.mean(), err / (2 * lam) * inv)
    p_adm = math.exp(-g_th / lam)
    frac = r.admitted / K
    assert abs(frac.mean() - p_adm) <= 5 * frac.std() / math.sqrt(m)
    assert abs(on.mean() - p_adm) <= 5 * math.sqrt(p_adm * (1 - p_adm) / m)
    assert np.all(r.rho[r.admitted > 0] == g_th) and np.all(r.rho[r.admitted == 0] == 0.0)
    assert np.all(r.sum_sq >= r.c0 ** 2 - 1e-12)


def test_the_rounds_are_the_links_own_gains():
    """The law simulates the link the aggregator runs: the admitted gains Re(h/ĥ) of ChannelInversionLink's rounds
    (its own streams) and the law's rows agree in distribution (two-sample Kolmogorov–Smirnov), and ρ under
    min-admitted is the smallest admitted |ĥ|² (≥ g_th)."""
    from phy.channel_inversion import ChannelInversionLink
    from phy.config import PhyConfig

    cfg = PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, L=8, snr_db=10.0, g_th=0.1,
                    csi_error=0.05, rho_rule="min-admitted", **{"analog-gaussian": {"noise_multiplier": 1.0}})
    K = 10
    link = ChannelInversionLink(cfg, K=K, seed=4)
    link_c, rhos = [], []
    for t in range(600):
        h, adm, rho, h_hat = link.admission_estimated(t)
        link_c.append(np.real(h[adm] / h_hat[adm]))
        if adm.any():
            assert rho == pytest.approx(float(np.min(np.abs(h_hat[adm]) ** 2)), rel=1e-12) and rho >= 0.1
    law = csi_rounds(K=K, g_th=0.1, csi_error=0.05, rho_rule="min-admitted", draws=20_000, seed=0)
    assert stats.ks_2samp(np.concatenate(link_c), law.c0[law.c0 != 0.0]).pvalue > 1e-3
    assert np.all(law.rho[law.admitted > 0] >= 0.1)


def test_strengths_follow_the_formula():
    """μ = |c_0|·S/√(σ_a²·Σc²/K′ + σ_n²/ρ), σ_a² = max(0, σ_T² − σ_n²/ρ), worked by hand for three rounds; perfect
    CSI gives the guaranteed-noise Gaussian S/max(σ_T, σ_n/√ρ); the bound √K·S/σ_a,min holds."""
    r = CsiRounds(c0=np.array([1.0, 2.0, 0.0, 0.5]), sum_sq=np.array([4.0, 5.0, 3.0, 0.25]),
                  admitted=np.array([4, 2, 3, 1]), rho=np.array([0.5, 0.5, 0.5, 2.0]))
    got = strengths(r, target_std=3.0, sensitivity=2.0, receiver_variance=0.5)  # σ_n²/ρ = 1, 1, 1, 0.25
    want = [1.0 * 2 / math.sqrt(8 * 4 / 4 + 1), 2.0 * 2 / math.sqrt(8 * 5 / 2 + 1), 0.0,
            0.5 * 2 / math.sqrt(8.75 * 0.25 + 0.25)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    perfect = CsiRounds(c0=np.ones(2), sum_sq=np.array([3.0, 3.0]), admitted=np.array([3, 3]), rho=np.array([1.0, 0.01]))
    np.testing.assert_allclose(strengths(perfect, target_std=3.0, sensitivity=2.0, receiver_variance=0.5),
                               [2.0 / 3.0, 2.0 / math.sqrt(50.0)], rtol=1e-12)
    law = csi_rounds(K=6, g_th=0.05, csi_error=0.3, rho_rule="min-admitted", draws=20_000, seed=1)
    bound = strength_bound(K=6, target_std=1.0, sensitivity=1.0, receiver_variance=0.01, g_th=0.05)
    assert bound == pytest.approx(math.sqrt(6) / math.sqrt(1.0 - 0.2))
    mu = strengths(law, target_std=1.0, sensitivity=1.0, receiver_variance=0.01)
    assert mu.max() <= bound and mu.max() > 1.5  # the bound holds, and the law reaches well above 1/z
    assert strength_bound(K=6, target_std=1.0, sensitivity=1.0, receiver_variance=0.05, g_th=0.05) == math.inf


# ---------------------------------------------------------------- the band law
def test_the_band_law_dominates_the_true_law_and_costs_little_in_an_empty_tail():
    """Draws of a known law (|N(0, 1)|·0.2 + 1, true survival known): at every panel edge the band law's exceedance is
    at least the true one in each of 20 trials (β = 10⁻³ each, so all hold with probability ≥ 0.98; fixed seeds;
    caught: the lower Clopper–Pearson limit for the upper, draws counted below a threshold instead of above), and
    the mass at the bound is ≈ ln((J + 1)/β)/m, not the DKW margin √(ln(1/β)/2m)."""
    from privacy.gaussian_mixture import PANEL_FLOOR, PANEL_RATIO

    m, beta, upper = 4000, 1e-3, 5.0
    j_max = int(math.floor(math.log(1 / PANEL_FLOOR) / math.log(PANEL_RATIO)))
    edges = upper * PANEL_RATIO ** (-np.arange(j_max, -1, -1.0))
    true_exceed = 2 * stats.norm.sf((edges - 1.0) / 0.2) * (edges >= 1.0) + (edges < 1.0)
    for seed in range(20):
        x = np.abs(np.random.default_rng(seed).standard_normal(m)) * 0.2 + 1.0
        values, weights = band_law(x, upper=upper, beta=beta)
        assert weights.sum() == pytest.approx(1.0, rel=1e-12) and values[-1] == upper
        # P(X⁺ ≥ next edge) ≥ P(μ > edge): mass above an edge rounds up to the next one
        law_exceed = np.array([weights[values > e * (1 + 1e-12)].sum() for e in edges[:-1]])
        assert np.all(law_exceed >= true_exceed[:-1] - 1e-12)
        top = weights[-1]
        assert math.log((j_max + 2) / beta) / m * 0.5 < top < 2 * math.log((j_max + 2) / beta) / m
        assert top < 0.2 * math.sqrt(math.log(1 / beta) / (2 * m))  # the DKW margin would put 0.029 there
    with pytest.raises(ValueError, match="bound every draw"):
        band_law(x, upper=1.0, beta=beta)


# ---------------------------------------------------------------- the revealed Gaussian mixture
def _gaussian_delta(eps: float, mu: float) -> float:
    """δ(ε) of N(0, 1) against N(μ, 1) (Balle & Wang 2018): Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)."""
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def test_the_unsampled_mixture_is_the_weighted_hockey_stick_and_its_renyi_curve_integrates():
    """μ revealed: δ(ε) = Σ w_i·δ_G(ε; μ_i) (hockey stick of the joint), and e^{(α−1)ε(α)} = Σ w_i·∫ φ^{1−α}·φ_μi^α
    (numerical quadrature), for a two-point law and one client per round (K = M)."""
    from privacy import RunAccountant

    mus, ws = (0.5, 1.5), (0.7, 0.3)
    acc = RunAccountant("gaussian-mixture", K=5, M=5, clip_norm=1.0, strengths=mus, weights=ws, accountant="pld")
    for eps in (0.1, 0.5, 1.0, 2.0):
        want = sum(w * _gaussian_delta(eps, m) for w, m in zip(ws, mus))
        got = acc.delta_at(rounds=1, epsilon=eps)
        assert want <= got <= want * 1.002 + 1e-9, (eps, got, want)
    event = GaussianMixtureRound(mus, ws)
    orders = np.array([1.5, 2.0, 4.0, 9.0])
    for a, got in zip(orders, event.rdp(orders)):
        moment = sum(w * integrate.quad(lambda x: math.exp((1 - a) * stats.norm.logpdf(x) + a * stats.norm.logpdf(x - m)),
                                        -30, 30)[0] for w, m in zip(ws, mus))
        assert got == pytest.approx(math.log(moment) / (a - 1), rel=1e-7)


def test_a_point_law_is_the_gaussian_mechanism_under_every_accountant_it_supports():
    """One strength μ = S/σ: the same ε as the Gaussian mechanism (PLD exactly; the sampled Rényi curve through the
    2 % strength grid, so between the Gaussian's ε and its ε at 1.02·μ)."""
    from privacy import RunAccountant

    z = 3.0
    common = dict(K=20, M=100, clip_norm=1.0)
    mix = lambda acc: RunAccountant("gaussian-mixture", **common, strengths=(1 / z,), weights=(1.0,), accountant=acc)
    gauss = lambda acc, s=2 * z: RunAccountant("gaussian", **common, noise_std=s, accountant=acc)
    assert mix("pld").epsilon(rounds=100) == pytest.approx(gauss("pld").epsilon(rounds=100), rel=1e-12)
    lo, hi = gauss("rdp").epsilon(rounds=100), gauss("rdp", 2 * z / 1.02).epsilon(rounds=100)
    assert lo <= mix("rdp").epsilon(rounds=100) <= hi
    for acc in ("fdp", "gdp"):
        with pytest.raises(ValueError, match="use --accountant"):
            mix(acc).epsilon(rounds=3)
    with pytest.raises(ValueError, match="sampling must be 'without-replacement'"):
        RunAccountant("gaussian-mixture", **common, strengths=(1 / z,), weights=(1.0,), relation="add-remove",
                      sampling="poisson")


# ---------------------------------------------------------------- the link: the received artificial noise
def test_the_received_artificial_noise_is_scaled_by_the_gains():
    """ŝ − Σ_adm c_k·s_k has per-entry variance σ_a²·Σ_adm c_k²/K′ + σ_n²/ρ (c_k = Re(h_k/ĥ_k) recomputed here from
    the link's estimates, σ_a² = σ_T² − σ_n²/ρ). The bug this catches: the noise drawn as if every gain were 1
    (σ_a² + σ_n²/ρ), off by the factor Σc²/K′, here more than 10 % from 1. The streaming path gives the same ŝ."""
    from phy.analog_gaussian import AnalogGaussianAggregator
    from phy.config import PhyConfig

    cfg = PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, L=8, snr_db=10.0, g_th=0.1,
                    csi_error=0.3, **{"analog-gaussian": {"noise_multiplier": 0.8}})
    K, d, t = 6, 120_000, 3
    x = np.random.default_rng(0).standard_normal((K, d)) * 0.001  # inside the clip ball R = 1: s_k = (C/R)·x_k
    x -= x.mean(axis=1, keepdims=True)  # zero row means (μ_k = 0, model §2)
    agg = AnalogGaussianAggregator(cfg, K=K, d=d, seed=7)
    h, adm, rho, h_hat = agg.link.admission_estimated(t)
    c = np.real(h[adm] / h_hat[adm])
    scale = float(np.sum(c * c) / adm.sum())
    assert abs(scale - 1.0) > 0.1 and adm.sum() >= 3
    res = agg.aggregate(x, round_index=t)
    resid = (res.sum_estimate - (c[:, None] * x[adm]).sum(axis=0)) * agg.C  # ŝ units (R = 1)
    S = 2.0 * agg.C  # replace-one sensitivity in ŝ units
    rx = cfg.noise_variance / cfg.L / rho
    want = max(0.0, (0.8 * S) ** 2 - rx) * scale + rx
    assert abs(resid.var() / want - 1.0) <= 5 * math.sqrt(2.0 / d), (resid.var(), want)
    stream_res = agg.aggregate_stream([(np.arange(K), x)], round_index=t)
    np.testing.assert_array_equal(stream_res.sum_estimate, res.sum_estimate)


# ---------------------------------------------------------------- the run's accountant
def _config(tmp_path, *, err: float, z: float = 2.0, snr_db: float = 20.0):
    """K = 10 of M = 50 on digits, 30 rounds, g_th = 0.1, ρ = g_th, pld (tests/test_analog_t2.py's scenario)."""
    from test_analog_t2 import _scenario  # noqa: E402

    return _scenario(tmp_path, n_rx=1, z=z, rounds=30, M=50, K=10, snr_db=snr_db, g_th=0.1,
                     phy_extra=f"csi_error = {err}", accountant="pld")


def test_the_runs_epsilon_grows_with_the_estimation_error_from_the_truncated_point_law(tmp_path):
    """σ_e² → 0: every admitted row has μ = 1/z and a row is admitted with probability e^{−g_th} (|h|² ~ Exp(1)),
    so the law tends to the two-point law {0: 1 − p, 1/z: p}; the run's ε lies within 5 % above that law's (panels
    and the band's margin at 10⁶ rounds) and below the perfect-CSI accountant's (which counts every sampled client
    as admitted). A larger error costs more; the report names the law and its assumptions."""
    from privacy import RunAccountant

    z, T = 2.0, 30
    base = _config(tmp_path, err=0.0, z=z).privacy_accountant(d=100, D=30).epsilon(rounds=T)
    eps = {e: _config(tmp_path, err=e, z=z).privacy_accountant(d=100, D=30).epsilon(rounds=T) for e in (1e-6, 0.01, 0.1)}
    p = math.exp(-0.1 / (1 + 1e-6))
    two_point = RunAccountant("gaussian-mixture", K=10, M=50, clip_norm=1.0, strengths=(0.0, 1 / z), weights=(1 - p, p),
                              accountant="pld").epsilon(rounds=T)
    assert two_point <= eps[1e-6] <= 1.05 * two_point and eps[1e-6] < base
    assert eps[1e-6] < eps[0.01] < eps[0.1]
    rep = _config(tmp_path, err=0.1, z=z).privacy_accountant(d=100, D=30).report(rounds=T)
    text = " ".join(rep.assumptions)
    assert "imperfect CSI, σ_e² = 0.1" in text and "Clopper–Pearson" in text and "revealed" in text


def test_no_certain_noise_is_epsilon_infinity_and_the_refusals_name_the_key(tmp_path):
    from scenarios.config import analog_csi

    # 0 dB at L = 8, P = 1: σ_n²/g_th = 1.25 ≥ σ_T² = (z·2C)² = 1 (C = √(d·P) = 10): the clients may add nothing
    acc = _config(tmp_path, err=0.1, z=0.05, snr_db=0.0).privacy_accountant(d=100, D=30)
    assert acc.epsilon(rounds=30) == math.inf
    assert _config(tmp_path, err=0.1, z=0.0).privacy_accountant(d=100, D=30).epsilon(rounds=30) == math.inf
    config = _config(tmp_path, err=0.1)
    big = dataclasses.replace(config, phy=dataclasses.replace(config.phy, pathloss="log-distance"),
                              partition=dataclasses.replace(config.partition, clients=analog_csi.CELL_CLIENTS + 1))
    with pytest.raises(ValueError, match=r"^partition.clients: .*per client"):  # tests/test_analog_csi_cell.py
        analog_csi.csi_accountant(big, d=100, common={}, threat="")
    poisson = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, relation="add-remove"),
                                  training=dataclasses.replace(config.training, sampling="poisson"))
    with pytest.raises(ValueError, match=r"^privacy: privacy.relation: .*replace-one"):
        poisson.privacy_accountant(d=100, D=30)


def test_the_rounds_are_the_documented_stream_and_batches_bound_memory():
    """Batch b of (seed, "csi-strength-law", b) holds min(4096, 2²⁰ // K) rounds (fewer in the last), drawn as a
    [4, rounds, K] normal array (h real, h imaginary, e real, e imaginary): recomputed here for a K whose batches are
    1 024 rounds. Bugs: the batch size not bounded (the second batch would start at round 4096), σ_e² per component."""
    from phy.csi_law import batch_rounds
    from phy.randomness import stream

    K, err, g = 1024, 0.2, 0.05
    assert batch_rounds(20) == 4096 and batch_rounds(K) == 1024 and batch_rounds(10**7) == 1
    got = csi_rounds(K=K, g_th=g, csi_error=err, rho_rule="threshold", draws=1030, seed=5)
    z = stream(5, "csi-strength-law", 1).standard_normal((4, 6, K))  # the last batch: its 6 rounds
    h = (z[0] + 1j * z[1]) / math.sqrt(2)
    hh = h + math.sqrt(err / 2) * (z[2] + 1j * z[3])
    adm = np.abs(hh) ** 2 >= g
    c = np.where(adm, np.real(h / np.where(adm, hh, 1)), 0.0)
    np.testing.assert_allclose(got.c0[1024:], c[:, 0], rtol=1e-12)
    np.testing.assert_allclose(got.sum_sq[1024:], (c * c).sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(got.admitted[1024:], adm.sum(axis=1))


def test_validation_makes_the_checks_without_building_the_law(tmp_path, monkeypatch):
    """Loading a scenario validates it with placeholder d and D; the law (10⁶ rounds, one per client in a cell:
    minutes) is built only for the run's accountant, while a refusal still stops the load. Caught: validation that
    builds the discarded law (the planning of a fixed-drop sweep took about a minute per point)."""
    from scenarios.config import analog_csi

    def no_law(*args, **kwargs):
        raise AssertionError("the law was built")

    monkeypatch.setattr(analog_csi, "csi_law", no_law)
    config = _config(tmp_path, err=0.1)  # load_scenario validates
    config.validate()
    with pytest.raises(AssertionError, match="the law was built"):
        config.privacy_accountant(d=100, D=30)
    poisson = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, relation="add-remove"),
                                  training=dataclasses.replace(config.training, sampling="poisson"))
    with pytest.raises(ValueError, match=r"^privacy: privacy.relation: .*replace-one"):
        poisson.validate()
