"""FLORAS's tight accountant with several pilot blocks per round (model §9.5, "Several pilots").

The round with B pilots releases block m's entries with Gaussian noise of variance V_m, the V_m independent
Lévy(0, γ²); given them, the whitened release is a sampled Gaussian at squared shift u = Σ_m a_m/V_m. The bound
averages a convex majorant ψ_α(u) of the sampled Gaussian's moment over one V (Jensen covers every split a_m).
These tests predict ψ_α from the formulas of Mironov–Talwar–Zhang and Wang–Balle–Kasiviswanathan written out
here, check convexity (the raw WBK bound fails it), and check the end-to-end curve against a Monte Carlo of a
two-block split.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as dpa

from privacy.events import CauchyRound
from privacy.floras_tight import cauchy_sampled_rdp
from privacy.sampled_gaussian_convex import growth_constant, log_psi, log_psi_orders

WOR, POI = "without-replacement", "poisson"


def _g(u: float) -> float:
    """Convex majorant of min{4(e^u − 1), 2e^u}: the first below ln 2, 2e^u + 4(u − ln 2) above (module doc)."""
    return 4.0 * math.expm1(u) if u <= math.log(2.0) else 2.0 * math.exp(u) + 4.0 * (u - math.log(2.0))


def test_order_two_and_three_follow_the_written_out_formulas():
    q = 0.2
    for u in (1e-3, 0.05, 0.3, 0.69, 0.7, 2.0):
        # α = 2: WBK's only term i = 2 with the convexified minimum; MTZ's binomial sum 1 + q²(e^u − 1)
        assert math.exp(log_psi(WOR, q, u, 2)) == pytest.approx(1.0 + q * q * _g(u), rel=1e-12)
        assert math.exp(log_psi(POI, q, u, 2)) == pytest.approx(1.0 + q * q * math.expm1(u), rel=1e-12)
    # α = 3 below the order-3 joint (A_3 < B_3): the i = 3 term is q³·2(Δ_2 + Δ_4) with
    # Δ_2 = e^u − 1 and Δ_4 = e^{6u} − 4e^{3u} + 6e^u − 3 (fourth forward difference of e^{k(k−1)u/2})
    for u in (0.01, 0.05, 0.2):
        d2, d4 = math.expm1(u), math.exp(6 * u) - 4 * math.exp(3 * u) + 6 * math.exp(u) - 3
        assert 2 * (d2 + d4) < 2 * math.exp(3 * u)
        want = 1.0 + 3 * q * q * _g(u) + q**3 * 2 * (d2 + d4)
        assert math.exp(log_psi(WOR, q, u, 3)) == pytest.approx(want, rel=1e-9)
    # far out (the quadrature's tail, u in the thousands) the top term q³·2e^{3u} dominates, computed without overflow
    assert log_psi(WOR, q, 2000.0, 3) == pytest.approx(3 * 2000.0 + math.log(2 * q**3), rel=1e-12)
    assert log_psi(WOR, q, 2000.0, 2) == pytest.approx(2000.0 + math.log(2 * q**2), rel=1e-12)
    # far above the joint the i = 3 term follows 2e^{3u} plus the linear continuation, so it is ≥ 2e^{3u}
    u = 3.0
    assert math.exp(log_psi(WOR, q, u, 3)) >= 1.0 + 3 * q * q * _g(u) + q**3 * 2 * math.exp(3 * u)


@pytest.mark.parametrize("q", [0.2, 0.01])
def test_the_majorant_bounds_wbk_from_above_and_stays_within_half_again(q):
    us = np.geomspace(1e-4, 8.0, 120)
    for alpha in (2, 3, 4, 7, 12, 16):
        ours = log_psi_orders(WOR, q, 0.5, [alpha])  # the vector form agrees with the scalar one
        assert ours[0] == log_psi(WOR, q, 0.5, alpha)
        for u in us:
            wbk = float(dpa._compute_rdp_sample_wor_gaussian_int(q, 1.0 / math.sqrt(u), alpha))
            mine = log_psi(WOR, q, float(u), alpha)
            if not math.isfinite(wbk):
                continue
            assert mine >= wbk - 1e-12 * max(1.0, abs(wbk)), (alpha, u)
            assert mine - wbk <= math.log(1.5), (alpha, u)  # measured ≤ ln 1.46 (α = 16, q = 0.2)


@pytest.mark.parametrize("scheme", [WOR, POI])
def test_the_majorant_is_convex_where_the_raw_bound_is_not(scheme):
    us = np.linspace(1e-3, 3.0, 900)

    def drops(values):
        s = np.diff(values) / np.diff(us)
        return int(np.sum(np.diff(s) < -1e-9 * np.abs(s[1:])))

    for alpha in (2, 3, 5, 8, 13):
        psi = np.exp([log_psi(scheme, 0.2, float(u), alpha) for u in us])
        assert drops(psi) == 0, alpha
    raw = np.exp([float(dpa._compute_rdp_sample_wor_gaussian_int(0.2, 1 / math.sqrt(u), 3)) for u in us])
    assert drops(raw) > 0  # the minimum of two branches kinks downwards: why the majorant exists


def test_growth_constant_bounds_the_majorant_against_the_unsampled_moment():
    for q in (0.2, 0.01):
        for alpha in (2, 3, 6, 11, 16):
            c = growth_constant(WOR, q, alpha)
            for u in np.geomspace(1e-3, 30.0, 60):
                assert log_psi(WOR, q, float(u), alpha) <= math.log(c) + alpha * (alpha - 1) * u / 2 + 1e-9
    assert growth_constant(POI, 0.2, 9) == 1.0


def _wbk_moment(q: float, u: np.ndarray, alpha: int) -> np.ndarray:
    """WBK 2019 Thm 27 for the Gaussian (replace-one, without replacement) at α = 2, 3, vectorised over u."""
    t2 = np.minimum(4.0 * np.expm1(u), 2.0 * np.exp(u))
    if alpha == 2:
        return 1.0 + q * q * t2
    d2 = np.expm1(u)
    d4 = np.maximum(np.exp(6 * u) - 4 * np.exp(3 * u) + 6 * np.exp(u) - 3, 0.0)  # ≈ 3u², rounding below 1e-8
    return 1.0 + 3 * q * q * t2 + q**3 * np.minimum(4.0 * np.sqrt(d2 * d4), 2.0 * np.exp(3 * u))


def test_two_block_split_monte_carlo_stays_below_the_block_curve():
    """E over (Z₁, Z₂) of the WBK moment at u = (S²/2)(Z₁² + Z₂²)/γ² (half the sensitivity in each block): the true
    two-block bound for that split, Monte Carlo with a fixed seed; the block curve must not lie below it by more than 5
    standard errors. Likewise the one-pilot split (u = S²Z²/γ²) under the WBK moment itself, where the majorant is
    nearly tight (a block curve below the true mean, e.g. one that dropped a term, fails)."""
    S, gamma, q = 1.0, 10.0, 0.2
    for u in (0.01, 0.3, 1.0):  # the written-out moment is dp_accounting's
        for alpha in (2, 3):
            want = float(dpa._compute_rdp_sample_wor_gaussian_int(q, 1 / math.sqrt(u), alpha))
            assert math.log(_wbk_moment(q, np.array([u]), alpha)[0]) == pytest.approx(want, rel=1e-9)
    rng = np.random.default_rng(20261204)
    z1, z2 = rng.standard_normal(1_000_000), rng.standard_normal(1_000_000)
    curve, err = cauchy_sampled_rdp([2.0, 3.0], scheme=WOR, rate=q, sensitivity=S, gamma=gamma, blocks=2)
    assert np.all(err < 1e-8)
    for alpha, bound in zip((2, 3), curve):
        for u in ((S**2 / 2) * (z1**2 + z2**2) / gamma**2, S**2 * z1**2 / gamma**2):
            m = _wbk_moment(q, u, alpha)
            mean, se = m.mean(), m.std() / math.sqrt(m.size)
            assert math.log(mean - 5 * se) / (alpha - 1) <= bound, alpha


def test_block_curve_against_the_one_pilot_curve():
    orders = np.array([1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0])
    one = cauchy_sampled_rdp(orders, scheme=POI, rate=0.05, sensitivity=1.0, gamma=12.0)[0]
    many = cauchy_sampled_rdp(orders, scheme=POI, rate=0.05, sensitivity=1.0, gamma=12.0, blocks=7)[0]
    ints = orders == np.round(orders)
    # Poisson: ψ_α is the exact moment, so the integer orders coincide; fractional ones interpolate outside the
    # V-average (Hölder: never below the one-pilot value)
    np.testing.assert_allclose(many[ints], one[ints], rtol=1e-9)
    assert np.all(many[~ints] >= one[~ints] - 1e-12)
    w1 = cauchy_sampled_rdp(orders, scheme=WOR, rate=0.2, sensitivity=1.0, gamma=12.0)[0]
    wb = cauchy_sampled_rdp(orders, scheme=WOR, rate=0.2, sensitivity=1.0, gamma=12.0, blocks=3)[0]
    assert np.all(wb >= w1 - 1e-12) and np.all(wb <= w1 + math.log(1.5))
    # the number of blocks beyond one does not matter (Jensen), orders past α(α−1)S² < γ² stay infinite
    far = cauchy_sampled_rdp([12.0, 13.0], scheme=WOR, rate=0.2, sensitivity=1.0, gamma=12.0, blocks=50)[0]
    assert math.isfinite(far[0]) and far[1] == math.inf  # 12·11 = 132 < 144 ≤ 13·12 = 156


def test_event_wiring_and_refusals():
    ev = CauchyRound(gamma=12.0, sensitivity=1.0, blocks=5)
    a = np.array([2.0, 3.0])
    np.testing.assert_array_equal(ev.sampled_rdp(a, scheme=WOR, rate=0.2),
                                  cauchy_sampled_rdp(a, scheme=WOR, rate=0.2, sensitivity=1.0, gamma=12.0, blocks=5)[0])
    np.testing.assert_array_equal(ev.rdp(a), CauchyRound(gamma=12.0, sensitivity=1.0).rdp(a))  # unsampled: same curve
    from privacy.pld import cauchy_mixture_pld  # the PLD: the mixture over V_min of the 5 blocks (model §9.5)

    got = ev.pld(rate=0.2, discretization=1e-3).get_epsilon_for_delta(1e-5)
    assert got == cauchy_mixture_pld(sensitivity=1.0, gamma=12.0, rate=0.2, blocks=5).get_epsilon_for_delta(1e-5)
    assert got > CauchyRound(gamma=12.0, sensitivity=1.0).pld(rate=0.2, discretization=1e-3).get_epsilon_for_delta(1e-5)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="blocks must be an integer ≥ 1"):
            CauchyRound(gamma=12.0, sensitivity=1.0, blocks=bad)
