"""Imperfect CSI with N_r > 1 receive antennas (model §5.1 "Imperfect CSI", §5.2): the link's combiner of the
estimates (phy/channel_inversion.py), the strength laws with and without a cell (phy/csi_law.py,
phy/csi_cell_law.py), analog Gaussian's accountant (scenarios/config/analog_csi.py) and its T2 figures
(scenarios/config/analog_exposure.py, phy/leverage_law.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from phy.antennas import centroid_combiner, client_leverage
from phy.csi_cell_law import cell_pool, client_strengths
from phy.csi_law import csi_rounds, estimated_gains, strengths
from phy.randomness import stream

LINK = dict(target_std=3.0, sensitivity=1.0, receiver_variance=0.0)


def _cfg(**kw):
    from phy.config import PhyConfig

    base = dict(scheme="channel-inversion", snr_db=20.0, normalization="clip", clip_norm=1.0, rx_antennas=3,
                csi_error=0.1, g_th=0.05)
    base.update(kw)
    return PhyConfig.make(**base)


# ---------------------------------------------------------------- the link
def test_the_link_inverts_the_combiner_of_the_estimates():
    """Round t of the link, recomputed from the documented draws: H from the antennas' fading, E from (seed,
    "csi-error", t) as a [2, K, N_r] normal array of std √(σ_e²/2), a the centroid combiner of Ĥ = H + E, the
    effective channels aᴴh_k and aᴴĥ_k, admission |aᴴĥ_k|² ≥ g_th and ρ = min over the admitted (min-admitted).
    Then a round at 200 dB carries √ρ·Σ_adm Re(aᴴh_k/aᴴĥ_k)·s_k (to 10⁻⁸). Bugs caught: the combiner of the true
    channels, one error per client shared by its antennas, admission on the true channel."""
    from phy.channel_inversion import ChannelInversionLink
    from phy.fading import draw_rayleigh_antennas

    K, n_rx, err, seed, t = 6, 3, 0.1, 3, 2
    cfg = _cfg(rho_rule="min-admitted", g_th=0.2, csi_error=err, rx_antennas=n_rx, snr_db=200.0)
    link = ChannelInversionLink(cfg, K=K, seed=seed)
    H = draw_rayleigh_antennas(seed, t, K=K, n_rx=n_rx)
    z = stream(seed, "csi-error", t).standard_normal((2, K, n_rx))
    H_hat = H + math.sqrt(err / 2) * (z[0] + 1j * z[1])
    a = centroid_combiner(H_hat)
    h, h_hat = H @ a.conj(), H_hat @ a.conj()
    adm = np.abs(h_hat) ** 2 >= 0.2
    got_h, got_adm, got_rho, got_hat = link.admission_estimated(t)
    np.testing.assert_allclose(got_h, h, rtol=1e-12)
    np.testing.assert_allclose(got_hat, h_hat, rtol=1e-12)
    np.testing.assert_array_equal(got_adm, adm)
    assert adm.any()
    assert got_rho == pytest.approx(float(np.min(np.abs(h_hat[adm]) ** 2)), rel=1e-12)
    s = np.random.default_rng(0).standard_normal((K, 40))
    rnd = link.run_round(s, round_index=t)
    w = np.real(h / h_hat)
    np.testing.assert_allclose(rnd.s_hat, (w[adm, None] * s[adm]).sum(axis=0), atol=1e-8)
    assert not np.allclose(w[adm], 1.0, atol=1e-3)  # the estimation error shows


def test_refusals_and_what_stays_allowed():
    # FLORAS: phase CSIT (what csi_error perturbs) is one pre-rotation, which cannot align several antennas
    with pytest.raises(ValueError, match=r"floras.csit must be 'none' with rx_antennas = 2"):
        _cfg(scheme="floras", normalization="paper", clip_norm=None, floras={"csit": "phase"}, rx_antennas=2).validate(K=4)
    for scheme in ("channel-inversion", "analog-gaussian"):
        _cfg(scheme=scheme, **{"analog-gaussian": {"noise_multiplier": 1.0}}).validate(K=4)
    with pytest.raises(ValueError, match=r"n_rx must be ≥ 1"):
        csi_rounds(K=4, g_th=0.1, csi_error=0.1, rho_rule="threshold", draws=10, seed=0, n_rx=0)
    from phy.csi_cell_law import cell_pool

    with pytest.raises(ValueError, match=r"rician_k = 3.0 with n_rx = 2: a fixed drop"):
        cell_pool(np.ones(8), K=4, g_th=0.1, csi_error=0.1, draws=10, seed=0, rician_k=3.0, n_rx=2)


# ---------------------------------------------------------------- the strength law
@pytest.mark.parametrize("n_rx, err, g_th", [(2, 0.2, 0.3), (4, 0.05, 1.0)])
def test_one_client_has_the_mmse_law_of_its_own_combiner(n_rx, err, g_th):
    """K = 1: the combiner is ĥ/‖ĥ‖, so aᴴĥ = ‖ĥ‖, c = Re(ĥᴴh)/‖ĥ‖² and admission ‖ĥ‖² ≥ g_th with ‖ĥ‖² ~ λ·Γ(N_r, 1),
    λ = 1 + σ_e²: P(admitted) = Q(N_r, g/λ); given ĥ, h = ĥ/λ + w, w ~ CN(0, σ_e²/λ·I), so E[c | adm] = 1/λ and
    E[(c − 1/λ)² | adm] = σ_e²/(2λ)·E[1/‖ĥ‖² | adm], E[1/‖ĥ‖²; adm] = Q(N_r − 1, g/λ)/(λ(N_r − 1)). 5 standard errors.
    Bugs caught: the combiner of the true channel (c ≡ Re-part of a different ratio, E[c] ≠ 1/λ), the error on one
    antenna only (λ wrong), admission on |aᴴh|²."""
    m = 200_000
    r = csi_rounds(K=1, g_th=g_th, csi_error=err, rho_rule="threshold", draws=m, seed=7, n_rx=n_rx)
    lam = 1.0 + err
    p = special.gammaincc(n_rx, g_th / lam)
    on = r.admitted > 0
    assert abs(on.mean() - p) <= 5 * math.sqrt(p * (1 - p) / m)
    c = r.c0[on]
    assert abs(c.mean() - 1 / lam) <= 5 * c.std() / math.sqrt(c.size)
    inv = special.gammaincc(n_rx - 1, g_th / lam) / (lam * (n_rx - 1)) / p
    dev = (c - 1 / lam) ** 2
    assert abs(dev.mean() - err / (2 * lam) * inv) <= 5 * dev.std() / math.sqrt(dev.size)


def test_the_law_is_the_links_own_gains():
    """K = 8 at N_r = 2: the law's admitted gains against the link's Re(aᴴh/aᴴĥ) over 800 rounds of its own
    streams (two-sample Kolmogorov–Smirnov, p > 10⁻³), and the admitted fraction within 5 binomial standard errors
    (a cross-check of the batched combiner against the link's per-round one)."""
    from phy.channel_inversion import ChannelInversionLink

    K, n_rx, err, g = 8, 2, 0.1, 0.3
    link = ChannelInversionLink(_cfg(csi_error=err, rx_antennas=n_rx, g_th=g), K=K, seed=5)
    link_c, link_adm = [], []
    for t in range(800):
        h, adm, _, h_hat = link.admission_estimated(t)
        link_c.append(np.real(h[adm] / h_hat[adm]))
        link_adm.append(adm.mean())
    law = csi_rounds(K=K, g_th=g, csi_error=err, rho_rule="threshold", draws=40_000, seed=0, n_rx=n_rx)
    assert stats.ks_2samp(np.concatenate(link_c), law.c0[law.c0 != 0.0]).pvalue > 1e-3
    p = (law.admitted / K).mean()
    assert abs(np.mean(link_adm) - p) <= 5 * math.sqrt(p * (1 - p) / (800 * K)) * math.sqrt(K)  # rows correlated


def test_with_a_steered_line_of_sight_the_law_is_the_links_own_gains():
    """κ = 3 at N_r = 2 without a cell (model §5.2, "Rician fading with several antennas"): the law's admitted gains
    against the link's Re(aᴴh/aᴴĥ) over 800 rounds (KS, p > 10⁻³), and they differ from the Rayleigh law's (KS,
    p < 10⁻⁶). Plausible bugs: the line of sight unsteered (every antenna in phase), the law left Rayleigh."""
    from phy.channel_inversion import ChannelInversionLink

    K, n_rx, err, g, kappa = 8, 2, 0.1, 0.3, 3.0
    link = ChannelInversionLink(_cfg(csi_error=err, rx_antennas=n_rx, g_th=g, rician_k=kappa), K=K, seed=5)
    link_c = []
    for t in range(800):
        h, adm, _, h_hat = link.admission_estimated(t)
        link_c.append(np.real(h[adm] / h_hat[adm]))
    link_c = np.concatenate(link_c)
    law = csi_rounds(K=K, g_th=g, csi_error=err, rho_rule="threshold", draws=40_000, seed=0, n_rx=n_rx, rician_k=kappa)
    assert stats.ks_2samp(link_c, law.c0[law.c0 != 0.0]).pvalue > 1e-3
    flat = csi_rounds(K=K, g_th=g, csi_error=err, rho_rule="threshold", draws=40_000, seed=0, n_rx=n_rx)
    assert stats.ks_2samp(link_c, flat.c0[flat.c0 != 0.0]).pvalue < 1e-6
    z = np.random.default_rng(1).standard_normal((4, 5000, K, n_rx))
    c, gain = estimated_gains(z, err, kappa, los=np.ones((5000, K, n_rx)))  # every antenna in phase
    assert stats.ks_2samp(link_c, c[gain >= g]).pvalue < 1e-6


def test_a_batch_is_the_documented_stream_and_combiner():
    """Batch b holds batch_rounds(K·N_r) rounds drawn as a [4, rounds, K, N_r] normal array; each round's gains
    recomputed here with the link's own centroid combiner, round by round."""
    from phy.csi_law import batch_rounds

    K, n_rx, err, g = 300, 4, 0.2, 0.5
    rows = batch_rounds(K * n_rx)
    assert rows == 2**20 // (K * n_rx)
    got = csi_rounds(K=K, g_th=g, csi_error=err, rho_rule="min-admitted", draws=rows + 3, seed=2, n_rx=n_rx)
    z = stream(2, "csi-strength-law", 1).standard_normal((4, 3, K, n_rx))
    for i in range(3):
        H = (z[0, i] + 1j * z[1, i]) / math.sqrt(2)
        H_hat = H + math.sqrt(err / 2) * (z[2, i] + 1j * z[3, i])
        a = centroid_combiner(H_hat)
        h, hh = H @ a.conj(), H_hat @ a.conj()
        adm = np.abs(hh) ** 2 >= g
        c = np.where(adm, np.real(h / hh), 0.0)
        assert got.c0[rows + i] == pytest.approx(c[0], rel=1e-9, abs=1e-12)
        assert got.sum_sq[rows + i] == pytest.approx((c * c).sum(), rel=1e-9)
        assert got.admitted[rows + i] == adm.sum()
        assert got.rho[rows + i] == pytest.approx(np.min(np.abs(hh[adm]) ** 2), rel=1e-9)


def test_a_cell_of_equal_gains_gives_the_cell_free_law():
    """β ≡ 1 in a fixed-drop pool with N_r = 2 (the K slots drawn jointly, the own slot last): a client's law is
    the cell-free law (two-sample KS at α = 10⁻³, both ρ rules). Caught: the own slot drawn apart from the others'
    combiner, the client among its own others."""
    pool = cell_pool(np.ones(30), K=6, g_th=0.2, csi_error=0.05, draws=50_000, seed=1, n_rx=2)
    for rule in ("threshold", "min-admitted"):
        cell = client_strengths(pool, 4, rho_rule=rule, **LINK)
        free = strengths(csi_rounds(K=6, g_th=0.2, csi_error=0.05, rho_rule=rule, draws=50_000, seed=2, n_rx=2), **LINK)
        n1, n2 = cell.size, free.size
        crit = math.sqrt(-math.log(1e-3 / 2) / 2 * (n1 + n2) / (n1 * n2))
        assert stats.ks_2samp(cell, free).statistic < crit


def test_a_cell_client_is_admitted_by_its_own_gain():
    """K = 1 in a cell with N_r = 3: client k is admitted when β_k·‖ĥ̃‖² ≥ g_th, ‖ĥ̃‖² ~ λ·Γ(N_r, 1): its fraction of
    admitted draws is Q(N_r, g_th/(β_k·λ)) within 5 binomial standard errors. Caught: β of another client,
    a per-antenna admission."""
    gains = np.array([0.05, 0.3, 1.0, 4.0])
    pool = cell_pool(gains, K=1, g_th=0.5, csi_error=0.2, draws=80_000, seed=4, n_rx=3)
    for k, beta in enumerate(gains):
        mu = client_strengths(pool, k, rho_rule="threshold", **LINK)
        p = special.gammaincc(3, 0.5 / (beta * 1.2))
        assert abs((mu > 0).mean() - p) <= 5 * math.sqrt(p * (1 - p) / mu.size) + 1e-12


# ---------------------------------------------------------------- the run's accountant
def _config(tmp_path, *, err: float, n_rx: int = 2, snr_db: float = 20.0, g_th: float = 1e-6):
    from test_analog_t2 import _scenario  # noqa: E402

    return _scenario(tmp_path, n_rx=n_rx, z=2.0, rounds=30, M=50, K=10, snr_db=snr_db, g_th=g_th,
                     phy_extra=f"csi_error = {err}", accountant="pld")


def test_the_accountant_counts_only_the_clients_noise_and_tends_to_perfect_csi(tmp_path):
    """N_r = 2: the receiver noise is not counted, so the law does not read the SNR (the same panels and weights at
    −30 and 20 dB, where at N_r = 1 the −30 dB receiver noise, σ_n²/g_th = 1 250 of σ_T² = 1 600, is counted and moves
    the law and its bound √K·S/σ_a,min); g_th = 10⁻⁶ admits every client, so as σ_e² → 0 every row has μ = S/σ_T =
    1/z and the ε tends to the perfect-CSI accountant's at N_r = 2 (a Gaussian of std z·S): within 5 % above it at
    σ_e² = 10⁻⁶ (panels and the band's margin at 10⁶ rounds); a larger error costs more."""
    from scenarios.config.analog_csi import csi_law

    laws = {snr: csi_law(_config(tmp_path, err=0.1, snr_db=snr), d=100) for snr in (-30.0, 20.0)}
    assert laws[-30.0][3] == laws[20.0][3] == math.sqrt(10) / 2.0  # √K·S/σ_T = √K/z
    np.testing.assert_array_equal(laws[-30.0][4].strengths, laws[20.0][4].strengths)
    np.testing.assert_array_equal(laws[-30.0][4].weights, laws[20.0][4].weights)
    one = {snr: csi_law(_config(tmp_path, err=0.1, n_rx=1, snr_db=snr, g_th=0.1), d=100) for snr in (-30.0, 20.0)}
    assert one[-30.0][3] == pytest.approx(math.sqrt(10) * 20 / math.sqrt(1600 - 1250), rel=1e-9)
    assert one[-30.0][0] != one[20.0][0]  # the plug-in means
    T = 30
    base = _config(tmp_path, err=0.0).privacy_accountant(d=100, D=30).epsilon(rounds=T)
    small = _config(tmp_path, err=1e-6).privacy_accountant(d=100, D=30).epsilon(rounds=T)
    acc = _config(tmp_path, err=0.1).privacy_accountant(d=100, D=30)
    assert base <= small <= 1.05 * base < acc.epsilon(rounds=T)
    assert "aᴴh_k/aᴴĥ_k" in " ".join(acc.report(rounds=T).assumptions)


# ---------------------------------------------------------------- T2: a base station that keeps every antenna
def test_the_leverage_rank_grows_by_one_with_estimated_channels():
    """Perfect CSI: every g_k = h_k/aᴴh_k has aᴴg_k = 1, so the rows lie in a hyperplane and Σ_k ℓ_k = 2N_r − 1;
    inverting aᴴĥ_k leaves aᴴg_k = aᴴh_k/aᴴĥ_k complex, and Σ_k ℓ_k = min(K′, 2N_r) (generic channels). The sampled
    law's mean with every client admitted is E[K·ℓ_0] = E[Σ_k ℓ_k], the same numbers."""
    from phy.leverage_law import exposure_draws

    rng = np.random.default_rng(3)
    K, n_rx = 9, 3
    H = (rng.standard_normal((K, n_rx)) + 1j * rng.standard_normal((K, n_rx))) / math.sqrt(2)
    H_hat = H + 0.3 * (rng.standard_normal((K, n_rx)) + 1j * rng.standard_normal((K, n_rx)))
    a = centroid_combiner(H_hat)
    assert client_leverage(H, combiner=centroid_combiner(H)).sum() == pytest.approx(2 * n_rx - 1, rel=1e-9)
    assert client_leverage(H, inverted=H_hat @ a.conj()).sum() == pytest.approx(2 * n_rx, rel=1e-9)
    for err, rank in ((0.0, 2 * n_rx - 1), (0.1, 2 * n_rx)):
        x = exposure_draws(K=K, n_rx=n_rx, g_th=0.0, draws=4096, seed=1, csi_error=err)
        assert x.mean() == pytest.approx(rank, rel=0.03)  # K·ℓ_0 averages to Σ ℓ = rank
    np.testing.assert_array_equal(exposure_draws(K=K, n_rx=n_rx, g_th=0.1, draws=300, seed=1),
                                  exposure_draws(K=K, n_rx=n_rx, g_th=0.1, draws=300, seed=1, csi_error=0.0))


def test_the_scheduled_replay_uses_the_estimated_inversion(tmp_path):
    """The run's replayed exposure Σ_t K′_t·ℓ_{k,t} summed over the clients is Σ_t K′_t·min(K′_t, 2N_r) with
    estimated channels (each round's leverages sum to the rank) and Σ_t K′_t·min(K′_t, 2N_r − 1) with perfect
    CSI, K′_t the replay's admitted counts. Caught: the perfect-CSI leverage under imperfect CSI."""
    from scenarios.config.analog_exposure import replay_exposure

    for err, extra in ((0.1, 0), (0.0, -1)):
        config = _config(tmp_path, err=err, n_rx=2, g_th=0.3)
        exposure, admitted = replay_exposure(config, rounds=12)
        assert admitted.sum() > 0
        assert exposure.sum() == pytest.approx(float(np.sum(admitted * np.minimum(admitted, 4 + extra))), rel=1e-9)


def test_a_calibration_records_the_runs_own_threat_model(tmp_path):
    """The calibration record carries the threat model of the accountant it calibrated: T1 only with two antennas
    (the receiver noise not counted, model §5.2), the scheme's single-antenna line with one. Caught: the scheme's
    default line for every configuration (what `floras calibrate` printed for N_r > 1 before)."""
    from scenarios.config.calibration import calibrate_config
    from scenarios.config.schemes import wiring

    two = calibrate_config(_config(tmp_path, err=0.0, n_rx=2), 8.0, d=100)
    one = calibrate_config(_config(tmp_path, err=0.0, n_rx=1, g_th=0.1), 8.0, d=100)
    assert two.threat_model.startswith("T1 only") and "2 receive antennas" in two.threat_model
    assert one.threat_model == wiring("analog-gaussian").threat_model


def test_the_sampled_t2_figure_takes_the_estimated_inversion(tmp_path):
    """Without a cell the sampled T2 figure draws its exposure law with the estimation error: each admitted client's
    exposure K′·ℓ averages to 2N_r instead of 2N_r − 1 (4/3 more at N_r = 2), so the figure lies above the
    perfect-CSI one of the same run (8.3 against 10.0 at z = 2, K = 10 of 50, T = 30), and its text names σ_e²."""
    from scenarios.config.analog_exposure import sampled_separating

    out = sampled_separating(_config(tmp_path, err=0.1, n_rx=2, g_th=0.1), rounds=30)
    exact = sampled_separating(_config(tmp_path, err=0.0, n_rx=2, g_th=0.1), rounds=30)
    assert 1.1 * exact["epsilon_sampled"] < out["epsilon_sampled"] < math.inf
    assert "estimated with relative error σ_e² = 0.1 per antenna" in out["sampled_text"]
    assert "the aggregate with perfect CSI under the same accounting" in out["sampled_text"]
