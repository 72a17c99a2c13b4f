"""FLORAS's ε_link with one stale pilot over Rician blocks without CSIT (model §5.1, §7.2; privacy/link_stale_los.py):
the bivariate normal CDF against scipy's, the factor law against Monte Carlo of the link's channel written out here, its
Rayleigh limit (κ = 0) against the closed form of privacy/link_stale.py, its one-block limit against privacy/link.py's
quadrature of the one-block Rician law, the deep tail against a direct integral, and the scenario's wiring."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import j0, ndtr
from scipy.stats import multivariate_normal

from privacy.link import LinkModel, exceed_probability
from privacy.link_epsilon import floras_link_epsilon
from privacy.link_stale import stale_exceed_probability
from privacy.link_stale_los import bivariate_normal_cdf, los_stale_exceed_probability, ratio_exceed_probability
from test_floras_cell_privacy import _accountant  # K = 4 of 10, T = 3, d = 40, L = 8, N = 8; snr_db and C in phy


def test_the_bivariate_normal_cdf_is_scipys_including_zeros_and_strong_correlation():
    for h, k in [(0.3, -1.2), (-0.7, -0.4), (1.5, 2.0), (0.0, 0.0), (0.0, 1.0), (-2.0, 0.0), (-2.0, 3.0), (4.0, -3.5)]:
        for r in (-0.999, -0.6, 0.0, 0.5, 0.99):
            want = multivariate_normal(mean=[0.0, 0.0], cov=[[1.0, r], [r, 1.0]]).cdf([h, k])
            got = float(bivariate_normal_cdf(np.float64(h), np.float64(k), r, math.sqrt(1.0 - r * r)))
            assert got == pytest.approx(want, abs=2e-7), (h, k, r)


@pytest.mark.parametrize("a, r, theta, kappa, c_max", [(4.0, 0.8 * np.exp(0.5j), 0.9, 3.0, 1.5),
                                                       (10.0, 0.95, 0.2, 8.0, 1.2), (2.0, 0.3, 2.5, 1.0, 3.0),
                                                       (6.0, -0.4 + 0.2j, 0.0, 0.5, 2.0)])
def test_the_factor_law_matches_monte_carlo_of_the_rician_blocks(a, r, theta, kappa, c_max):
    """c = a·Re(h_m)/(a·Re(h_0) + n), h_m = A·e^{j(φ+θ)} + σ(r·h̃_0 + √(1 − |r|²)·w), h_0 = A·e^{jφ} + σ·h̃_0, φ ~ U(0, 2π):
    P(|c| > c_max) within 5 binomial standard deviations of 2·10⁶ draws (a complex r enters through Re r)."""
    n = 2_000_000
    rng = np.random.default_rng(31)
    A, sig = math.sqrt(kappa / (kappa + 1.0)), math.sqrt(1.0 / (kappa + 1.0))
    phi = rng.uniform(0.0, 2.0 * math.pi, n)
    h0 = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    w = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    hm = A * np.exp(1j * (phi + theta)) + sig * (r * h0 + math.sqrt(1.0 - abs(r) ** 2) * w)
    y = a * (A * np.exp(1j * phi) + sig * h0).real + rng.standard_normal(n)
    mc = np.mean(np.abs(a * hm.real) > c_max * np.abs(y))
    p = float(los_stale_exceed_probability(c_max, [a], float(np.real(r)), theta, kappa)[0])
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n), (p, mc)


def test_the_phase_average_has_converged():
    """The midpoint rule over the line of sight's phase (max(64, 8κ) nodes) against eight times as many nodes, from weak
    to strong lines of sight, low to high SNR and the bulk to the deep tail."""
    for kappa in (0.5, 2.0, 10.0, 40.0):
        for a in (3.0, 57.0, 2000.0):
            for c, rho, theta in ((1.5, 0.9, 0.3), (100.0, 0.999, 0.05), (1e5, 0.5, 2.0)):
                got = los_stale_exceed_probability(c, [a], rho, theta, kappa)[0]
                fine = los_stale_exceed_probability(c, [a], rho, theta, kappa, phase_factor=8)[0]
                assert got == pytest.approx(fine, rel=1e-9), (kappa, a, c)


def test_without_a_line_of_sight_it_is_the_rayleigh_closed_form():
    a = np.array([0.5, 3.0, 30.0, 300.0])
    for c in (0.7, 2.0, 50.0, 1e5):
        for rho in (0.9, 0.3, -0.4):
            got = los_stale_exceed_probability(c, a, rho, 0.7, 0.0)
            np.testing.assert_allclose(got, stale_exceed_probability(c, a, rho), rtol=1e-9)


@pytest.mark.parametrize("c_max", [0.7, 3.0, 1e3])
def test_block_0_is_the_one_block_rician_law(c_max):
    """ρ = 1, θ = 0: X = a·Re h_0 and the probability is privacy/link.py's quadrature of c = u/(u + n) over the Rician
    real part (an independent computation), with a cell's three scales."""
    scales, kappa = (1.0, 0.05, 3.0), 2.5
    one = exceed_probability(c_max, LinkModel(12.0, L=16, rician_k=kappa, gain_scales=scales))
    stale = exceed_probability(c_max, LinkModel(12.0, L=16, rician_k=kappa, gain_scales=scales, stale=((1.0, 0.0),)))
    assert stale == pytest.approx(one, rel=1e-6)


def test_the_deep_tail_given_the_phase_is_the_direct_integral():
    """Given φ, P(|X| > c|Y|) = ∫ f_Y(y)·P(|X| > c|y| | y) dy by adaptive quadrature (X | Y Gaussian), at factor levels
    up to 10⁴, where the orthants' correlation tends to −1, and for blocks nearly alike (ρ → 1, θ → 0), where
    E[X | Y = 0] is a small difference of large means."""
    for a, kappa, rho, theta in ((20.0, 4.0, 0.97, 0.3), (300.0, 2.0, 1.0 - 1e-8, 1e-4)):
        A, q = a * math.sqrt(kappa / (kappa + 1.0)), 0.5 * a * a / (kappa + 1.0)
        for phi in (0.1, 1.4, 2.9):
            mx, my, vy, cxy = A * math.cos(phi + theta), A * math.cos(phi), q + 1.0, q * rho
            beta, sz = cxy / vy, math.sqrt(q - cxy * cxy / vy)
            mz = mx - beta * my
            for c in (1.5, 30.0, 1e4):
                def f(y):
                    m = mz + beta * y
                    dens = math.exp(-0.5 * (y - my) ** 2 / vy) / math.sqrt(2.0 * math.pi * vy)
                    return dens * (ndtr((-c * abs(y) - m) / sz) + ndtr((m - c * abs(y)) / sz))
                width = (abs(mz) + 10.0 * sz) / (c - beta)  # beyond |y| > width the event needs Z 10 s.d. out
                pts = sorted({0.0, my, *(sgn * width * f_ for sgn in (-1, 1) for f_ in (0.01, 0.1, 1.0))})
                lo, hi = min(pts + [my - 12.0 * math.sqrt(vy)]), max(pts + [my + 12.0 * math.sqrt(vy)])
                want = integrate.quad(f, lo, hi, points=pts, epsabs=0.0, epsrel=1e-11, limit=800)[0]
                got = float(ratio_exceed_probability(c, np.float64(mz), sz, np.float64(my), math.sqrt(vy), beta))
                assert got == pytest.approx(want, rel=1e-6), (a, phi, c)
        # the module's own parametrisation of E Z and Var Z gives the same probability
        p = los_stale_exceed_probability(3.0, [a], rho, theta, kappa)[0]
        phis = (np.arange(max(64, int(math.ceil(8 * kappa)))) + 0.5) * math.pi / max(64, int(math.ceil(8 * kappa)))
        q_ = 0.5 * a * a / (kappa + 1.0)
        b_ = q_ * rho / (q_ + 1.0)
        direct = np.mean([ratio_exceed_probability(3.0, A * math.cos(x + theta) - b_ * A * math.cos(x),
                                                   math.sqrt(q_ - (q_ * rho) ** 2 / (q_ + 1.0)), A * math.cos(x),
                                                   math.sqrt(q_ + 1.0), b_) for x in phis])
        assert p == pytest.approx(direct, rel=1e-6, abs=1e-15)


def test_a_rician_stale_scenario_without_csit_takes_the_line_of_sights_turn():
    """rician_k = 2 with Clarke blocks and one stale pilot, no CSIT: the link holds (J₀(x·m), 0.7·x·m) for every block
    (TR 38.901's f_S = 0.7·f_D, written out here), ε is the Rayleigh scenario's one-pilot ε, ε_link is finite, the
    reported truncation δ is T·K·B times the probability, and the turn counts (the same blocks with θ = 0 differ)."""
    phy = {"coherence_symbols": 11, "fading_correlation": "jakes-exact", "doppler": 1e-6, "snr_db": 80.0}
    los = _accountant({**phy, "rician_k": 2.0, "floras": {"N": 8, "pilots": "stale"}})
    ray = _accountant({**phy, "floras": {"N": 8, "pilots": "stale"}})
    x = 2 * math.pi * 1e-6 * 11
    m = np.arange(4)
    assert los.link.stale == pytest.approx(tuple(j0(x * m)), abs=1e-15)
    assert los.link._los == pytest.approx(tuple(0.7 * x * m), abs=1e-12)
    rep = los.report(rounds=3)
    assert rep.epsilon == ray.report(rounds=3).epsilon and math.isfinite(rep.epsilon_link)
    assert "the line of sight turning by θ_m" in next(s for s in rep.assumptions if s.startswith("link level"))
    # P(|c| > x) is non-increasing in x, also where the orthants' correlation is −1 to 16 digits (a ≈ 2.8·10⁴ here)
    xs = np.geomspace(1e-3, 1e12, 46)
    ps = np.array([exceed_probability(x, los.link) for x in xs])
    assert np.all(np.diff(ps) <= 1e-15) and ps[-1] < 1e-14, ps
    eps, info = floras_link_epsilon(los, rounds=3)
    assert info["delta_truncation"] == pytest.approx(3 * 4 * 4 * exceed_probability(info["c_max"], los.link), rel=1e-4)
    still = LinkModel(los.link.snr_db, L=los.link.L, rician_k=2.0, blocks=4, stale=tuple((r, 0.0) for r in los.link.stale))
    assert exceed_probability(info["c_max"], still) != pytest.approx(exceed_probability(info["c_max"], los.link), rel=1e-3)


def test_bad_pairs_are_refused():
    with pytest.raises(ValueError, match=r"θ_0 = 0"):
        LinkModel(20.0, blocks=2, rician_k=2.0, stale=((1.0, 0.3), (0.5, 0.3)))
    with pytest.raises(ValueError, match=r"pairs without CSIT describe Rician blocks"):
        LinkModel(20.0, blocks=2, stale=((1.0, 0.0), (0.5, 0.3)))


@pytest.mark.parametrize("snr_db, c, kappa, stale", [
    (60.0, 300.0, 2.0, ((1.0, 0.0), (0.999, 0.02), (0.99, 0.05))),
    (30.0, 5.0, 8.0, ((1.0, 0.0), (0.9, 0.3))),
    (20.0, 2.0, 10.0, ((1.0, 0.0), (0.5, 1.0))),
])
def test_the_cell_grid_bound_holds_above_the_exact_scales(snr_db, c, kappa, stale):
    """600 distinct β_eff: the mean is bounded on the 0.05 dB grid with block m's weight (β_up/β)·exp(κ'_m·(a_up −
    a)/(a_up + a)), κ'_m = max_φ ½mᵀΣ⁻¹m of the pair (Re h_m, Re h_0) (model §5.1). Checked: κ'_m against a brute-force
    maximum over φ of that quadratic form (written out here), the bound against the grid sum built here from it, and
    the bound at least the exact mean over the 600 clients and within 5 % of it."""
    from privacy.link_stale_los import pair_exponent

    rng = np.random.default_rng(5)
    beta = 10.0 ** rng.uniform(-1.0, 0.0, 600)
    link = LinkModel(snr_db, L=16, rician_k=kappa, blocks=len(stale), stale=stale, gain_scales=tuple(beta))
    bound = exceed_probability(c, link)
    a0 = math.sqrt(16 * 10 ** (snr_db / 10))
    exact = np.mean([np.mean(los_stale_exceed_probability(c, a0 * np.sqrt(beta), r, th, kappa)) for r, th in stale])
    assert exact <= bound <= 1.05 * exact
    A2, s2 = kappa / (kappa + 1.0), 1.0 / (kappa + 1.0)
    phi = np.linspace(0.0, 2.0 * math.pi, 200_001)
    grid = np.ceil(10.0 * np.log10(beta) / 0.05)
    hi = 10.0 ** (grid * 0.05 / 10.0)
    t = np.sqrt(hi / beta)
    want = 0.0
    for r, th in stale:
        m = math.sqrt(A2) * np.stack([np.cos(phi + th), np.cos(phi)])
        if r < 1.0:
            inv = np.linalg.inv(0.5 * s2 * np.array([[1.0, r], [r, 1.0]]))
            brute = 0.5 * float(np.max(np.einsum("in,ij,jn->n", m, inv, m)))
        else:
            brute = kappa  # block 0: the one-dimensional law's exponent
        assert float(pair_exponent(r, th, kappa)) == pytest.approx(brute, rel=1e-6)
        w = t**2 * np.exp(brute * (t - 1.0) / (t + 1.0)) / beta.size
        for g in np.unique(grid):
            sel = grid == g
            a_up = a0 * math.sqrt(10.0 ** (g * 0.05 / 10.0))
            want += float(np.sum(w[sel])) * float(los_stale_exceed_probability(c, [a_up], r, th, kappa)[0]) / len(stale)
    assert bound == pytest.approx(want, rel=1e-6)
