"""Closed forms and bounds of privacy.rdp against independent numerics (model §7.2–§7.3)."""

import math

import dp_accounting as dpa
import mpmath as mp
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
from scipy import integrate

from phy.randomness import stream
from privacy import rdp


# ----------------------------------------------------------------------------- Cauchy bound
def _bound_by_quadrature(alpha, S, gamma):
    """E_V[exp((α−1)αS²/(2V))] with 1/V ~ Gamma(½, rate γ²/2), integrated numerically (mpmath)."""
    mp.mp.dps = 30
    rate = mp.mpf(gamma) ** 2 / 2
    c = (alpha - 1) * alpha * mp.mpf(S) ** 2 / 2
    dens = lambda u: rate ** mp.mpf(0.5) / mp.gamma(0.5) * u ** (-0.5) * mp.e ** (-rate * u)
    val = mp.quad(lambda u: dens(u) * mp.e ** (c * u), [0, 1, mp.inf])
    return float(mp.log(val) / (alpha - 1))


@pytest.mark.parametrize("alpha,S,gamma", [(1.5, 0.3, 1.0), (2.0, 1.0, 5.0), (7.0, 2.0, 30.0), (1.01, 60.0, 20.0)])
def test_cauchy_bound_equals_gamma_mixture_integral(alpha, S, gamma):
    got = rdp.cauchy_rdp_bound([alpha], sensitivity=S, gamma=gamma)[0]
    assert got == pytest.approx(_bound_by_quadrature(alpha, S, gamma), rel=1e-9)


def test_cauchy_bound_diverges_exactly_where_stated():
    S, gamma = 2.0, 10.0
    alpha_max = 0.5 * (1 + math.sqrt(1 + 4 * gamma**2 / S**2))  # α(α−1)S² = γ²
    a = np.array([alpha_max * (1 - 1e-9), alpha_max, alpha_max * (1 + 1e-9)])
    out = rdp.cauchy_rdp_bound(a, sensitivity=S, gamma=gamma)
    assert math.isfinite(out[0]) and out[1] == math.inf and out[2] == math.inf
    assert np.all(rdp.cauchy_rdp_bound([1.5, 2, 100], sensitivity=1.0, gamma=0.0) == math.inf)  # γ = 0: ε = ∞
    assert np.all(rdp.cauchy_rdp_bound([1.5, 2, 100], sensitivity=0.0, gamma=0.0) == 0.0)


def test_full_power_paper_normalization_is_infinite_for_realistic_d():
    # S = 2√d at C = √(dP), b = √P: finite only when α(α−1)·4d < γ²; d = 1e5, γ = 10 → α < 1.00025.
    out = rdp.cauchy_rdp_bound(rdp.DEFAULT_ORDERS, sensitivity=2 * math.sqrt(1e5), gamma=10.0)
    assert np.all(out == math.inf)


# ------------------------------------------------------------------------- exact scalar Cauchy
@pytest.mark.parametrize("S,gamma", [(1e-4, 1.0), (0.2, 1.0), (1.0, 1.0), (50.0, 1.0), (2.0, 30.0)])
def test_scalar_cauchy_matches_legendre_function_in_mpmath(S, gamma):
    orders = np.array([1.001, 1.3, 2.0, 2.5, 3.0, 10.0, 64.0, 200.5, 1024.0])
    got = rdp.cauchy_scalar_rdp(orders, sensitivity=S, gamma=gamma)
    mp.mp.dps = 50
    z = 1 + mp.mpf(S / gamma) ** 2 / 2
    ref = np.array([float(mp.log(mp.legenp(a - 1, 0, z, type=3)) / (a - 1)) for a in orders])
    np.testing.assert_allclose(got, ref, rtol=1e-9)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 4.0])
def test_scalar_cauchy_matches_direct_density_integral(alpha):
    # Independent of the Legendre form: ∫ p^α q^{1−α} dx over the real line (scipy quad).
    S, g = 0.7, 1.3
    p = lambda x: g / (math.pi * (g * g + x * x))
    q = lambda x: g / (math.pi * (g * g + (x - S) ** 2))
    val, _ = integrate.quad(lambda x: p(x) ** alpha * q(x) ** (1 - alpha), -np.inf, np.inf, epsabs=0, epsrel=1e-12)
    assert rdp.cauchy_scalar_rdp([alpha], sensitivity=S, gamma=g)[0] == pytest.approx(math.log(val) / (alpha - 1), rel=1e-8)


def test_scalar_cauchy_known_values_and_ordering():
    d = 0.4  # δ = S/γ
    # α = 2: ln(1 + χ²) with χ² = δ²/2; α → 1: KL = ln(1 + δ²/4).
    assert rdp.cauchy_scalar_rdp([2.0], sensitivity=d, gamma=1.0)[0] == pytest.approx(math.log1p(d * d / 2), rel=1e-13)
    assert rdp.cauchy_scalar_rdp([1.000001], sensitivity=d, gamma=1.0)[0] == pytest.approx(math.log1p(d * d / 4), rel=1e-5)
    a = rdp.DEFAULT_ORDERS
    exact = rdp.cauchy_scalar_rdp(a, sensitivity=d, gamma=1.0)
    bound = rdp.cauchy_rdp_bound(a, sensitivity=d, gamma=1.0)
    assert np.all(exact <= bound)  # the d = 1 divergence is below the all-d bound
    assert np.all(np.diff(exact) >= 0)  # RDP is non-decreasing in α
    assert np.all(exact <= rdp.cauchy_scalar_eps_inf(sensitivity=d, gamma=1.0) + 1e-15)


# -------------------------------------------------------------- multivariate Cauchy, Monte Carlo
def test_multivariate_cauchy_monte_carlo_below_bound_and_approaching_it():
    alpha, S, g, n = 2.0, 0.2, 1.0, 200_000
    bound = rdp.cauchy_rdp_bound([alpha], sensitivity=S, gamma=g)[0]
    scalar = rdp.cauchy_scalar_rdp([alpha], sensitivity=S, gamma=g)[0]
    est = {}
    for d in (1, 5, 50, 100_000):
        e, se = rdp.cauchy_divergence_monte_carlo(alpha, sensitivity=S, gamma=g, d=d, n_samples=n, rng=stream(7, "privacy-mc", d))
        est[d] = (e, se)
        assert e <= bound + 3 * se, (d, e, se, bound)  # one-sided, 3 standard errors
    # d = 1: the Monte Carlo agrees with the exact scalar divergence (two-sided, 4 SE).
    assert abs(est[1][0] - scalar) <= 4 * est[1][1]
    # The estimate grows with d, each step significant at 3 combined standard errors ...
    for a, b in ((1, 5), (5, 50)):
        assert est[b][0] - est[a][0] > 3 * math.hypot(est[a][1], est[b][1])
    # ... and at d = 1e5 it is statistically indistinguishable from the bound (tight as d → ∞),
    # while at d = 1 it sits far below it.
    assert abs(bound - est[100_000][0]) <= 3 * est[100_000][1]
    assert bound - est[1][0] > 20 * est[1][1]


# ------------------------------------------------------------------------------- Gaussian
def test_gaussian_rdp_agrees_with_dp_accounting():
    orders = dpa_rdp.DEFAULT_RDP_ORDERS
    theirs = dpa.rdp.RdpAccountant(orders)
    theirs.compose(dpa.GaussianDpEvent(1.7), count=13)
    ours = 13 * rdp.gaussian_rdp(orders, noise_std=1.7)
    np.testing.assert_allclose(ours, theirs._rdp, rtol=1e-12)


# ------------------------------------------------------------------------- sampling bounds
def _wbk_reference(alpha, q, eps, eps_inf):
    """Theorem 9 of arXiv:1808.00087 evaluated directly in mpmath (no logs), integer α."""
    mp.mp.dps = 40
    e = lambda j: mp.e ** mp.mpf(eps(j))
    em1inf = mp.e ** mp.mpf(eps_inf) - 1
    total = 1 + mp.mpf(q) ** 2 * mp.binomial(alpha, 2) * min(4 * (e(2) - 1), e(2) * min(2, em1inf**2))
    for j in range(3, alpha + 1):
        total += mp.mpf(q) ** j * mp.binomial(alpha, j) * mp.e ** ((j - 1) * mp.mpf(eps(j))) * min(2, em1inf**j)
    return float(mp.log(total) / (alpha - 1))


def _zw_reference(alpha, q, eps):
    """Theorem 6 of Zhu & Wang 2019 evaluated directly in mpmath, integer α."""
    mp.mp.dps = 40
    q = mp.mpf(q)
    total = (1 - q) ** (alpha - 1) * (alpha * q - q + 1) + mp.binomial(alpha, 2) * q**2 * (1 - q) ** (alpha - 2) * mp.e ** mp.mpf(eps(2))
    for l in range(3, alpha + 1):
        total += 3 * mp.binomial(alpha, l) * (1 - q) ** (alpha - l) * q**l * mp.e ** ((l - 1) * mp.mpf(eps(l)))
    return float(mp.log(total) / (alpha - 1))


def _scalar_base(S, g):
    return lambda j: float(rdp.cauchy_scalar_rdp([j], sensitivity=S, gamma=g)[0])


@pytest.mark.parametrize("q", [0.01, 0.2, 0.7])
def test_sampling_bounds_transcribe_the_theorems(q):
    S, g = 1.0, 2.0
    orders = np.arange(2.0, 41.0)
    base_int = rdp.cauchy_scalar_rdp(orders, sensitivity=S, gamma=g)
    eps_inf = rdp.cauchy_scalar_eps_inf(sensitivity=S, gamma=g)
    big = np.full_like(orders, np.inf)  # disable the min with the base curve to see the theorem itself
    wor = rdp.wor_subsampled_rdp(orders, rate=q, base_int=base_int, base_orders_rdp=big, eps_inf=eps_inf)
    poi = rdp.poisson_subsampled_rdp(orders, rate=q, base_int=base_int, base_orders_rdp=big)
    f = _scalar_base(S, g)
    for i, a in enumerate(orders.astype(int)):
        assert wor[i] == pytest.approx(_wbk_reference(int(a), q, f, eps_inf), rel=1e-10)
        assert poi[i] == pytest.approx(_zw_reference(int(a), q, f), rel=1e-10)


def _mixture_divergence(alpha, q, S, g):
    """max of D_α((1−q)P₀ + qP_S ‖ P₀) and the reverse, scalar Cauchy, by quadrature (mpmath)."""
    mp.mp.dps = 30
    p0 = lambda x: g / (mp.pi * (g * g + x * x))
    p1 = lambda x: g / (mp.pi * (g * g + (x - S) ** 2))
    mix = lambda x: (1 - q) * p0(x) + q * p1(x)
    fwd = mp.quad(lambda x: mix(x) ** alpha * p0(x) ** (1 - alpha), [-mp.inf, 0, S, mp.inf])
    rev = mp.quad(lambda x: p0(x) ** alpha * mix(x) ** (1 - alpha), [-mp.inf, 0, S, mp.inf])
    return float(max(mp.log(fwd), mp.log(rev)) / (alpha - 1))


@pytest.mark.parametrize("alpha", [2, 3, 6])
def test_sampling_bounds_dominate_a_realisable_neighbouring_pair(alpha):
    # A sum query where the differing element contributes S and all others 0: with probability q
    # it is sampled. Its exact divergence is a lower bound on the true RDP, so it must not exceed
    # either amplification bound (replace-one for WoR, add/remove for Poisson give this pair).
    S, g, q = 1.5, 1.0, 0.1
    orders = np.array([float(alpha)])
    base_int = rdp.cauchy_scalar_rdp(np.arange(2.0, alpha + 1.0), sensitivity=S, gamma=g)
    base = rdp.cauchy_scalar_rdp(orders, sensitivity=S, gamma=g)
    eps_inf = rdp.cauchy_scalar_eps_inf(sensitivity=S, gamma=g)
    exact = _mixture_divergence(alpha, q, S, g)
    assert exact <= rdp.poisson_subsampled_rdp(orders, rate=q, base_int=base_int, base_orders_rdp=base)[0] + 1e-12
    assert exact <= rdp.wor_subsampled_rdp(orders, rate=q, base_int=base_int, base_orders_rdp=base, eps_inf=eps_inf)[0] + 1e-12
    assert exact < base[0]  # and amplification is real


def test_sampling_bounds_against_dp_accounting_for_the_gaussian():
    # dp_accounting evaluates the sampled Gaussian with mechanism-specific (tighter or exact)
    # formulas; the general bounds must never be below them.
    orders = np.arange(2.0, 65.0)
    wor_theirs = dpa.rdp.RdpAccountant(orders, dpa.NeighboringRelation.REPLACE_ONE)
    wor_theirs.compose(dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0)))
    poi_theirs = dpa.rdp.RdpAccountant(orders)
    poi_theirs.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)))
    base_int = rdp.gaussian_rdp(orders, noise_std=1.0)
    wor = rdp.wor_subsampled_rdp(orders, rate=0.01, base_int=base_int, base_orders_rdp=base_int)
    poi = rdp.poisson_subsampled_rdp(orders, rate=0.01, base_int=base_int, base_orders_rdp=base_int)
    assert np.all(wor >= wor_theirs._rdp * (1 - 1e-10))
    assert np.all(poi >= poi_theirs._rdp * (1 - 1e-10))
    assert np.all(poi < base_int)


def test_sampling_infinite_terms_propagate():
    # Multivariate bound: finite only for α(α−1) < γ²/S² = 11.56 (α < 3.92) → 2, 3 finite, ≥ 4 infinite.
    orders = np.array([1.5, 2.0, 3.0, 3.5, 4.0, 10.0])
    base_int = rdp.cauchy_rdp_bound(np.arange(2.0, 11.0), sensitivity=1.0, gamma=3.4)
    base = rdp.cauchy_rdp_bound(orders, sensitivity=1.0, gamma=3.4)
    for out in (
        rdp.wor_subsampled_rdp(orders, rate=0.2, base_int=base_int, base_orders_rdp=base),
        rdp.poisson_subsampled_rdp(orders, rate=0.2, base_int=base_int, base_orders_rdp=base),
    ):
        assert np.all(np.isfinite(out[:3])) and np.all(out[4:] == math.inf)
        # 3.5 is bounded through ⌈3.5⌉ = 4 where the theorem gives ∞: the base value is kept.
        assert math.isfinite(base[3]) and out[3] == base[3]
        assert np.all(out[:3] < base[:3])


# ------------------------------------------------------------------------------ conversions
def test_conversions_agree_with_dp_accounting_and_round_trip():
    orders = np.array(dpa_rdp.DEFAULT_RDP_ORDERS, dtype=float)
    curve = 40 * rdp.gaussian_rdp(orders, noise_std=3.0)
    for delta in (1e-3, 1e-5, 1e-9):
        eps, idx = rdp.epsilon_from_rdp(orders, curve, delta=delta)
        ref_eps, ref_order = dpa_rdp.compute_epsilon(orders, curve, delta)
        assert eps == pytest.approx(ref_eps, rel=1e-12) and orders[idx] == ref_order
        d2, _ = rdp.delta_from_rdp(orders, curve, epsilon=eps)
        assert d2 == pytest.approx(delta, rel=1e-9)  # ε → δ → ε round trip (exact at the optimum)
        std, _ = rdp.epsilon_from_rdp(orders, curve, delta=delta, conversion="standard")
        assert std == pytest.approx(float(np.min(curve + math.log(1 / delta) / (orders - 1))), rel=1e-12)
        assert eps < std  # the tight conversion is tighter
    for e in (0.5, 2.0, 8.0):
        dl, _ = rdp.delta_from_rdp(orders, curve, epsilon=e)
        assert dl == pytest.approx(dpa_rdp.compute_delta(orders, curve, e)[0], rel=1e-10)
        assert rdp.epsilon_from_rdp(orders, curve, delta=dl)[0] == pytest.approx(e, rel=1e-9)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="orders"):
        rdp.cauchy_rdp_bound([1.0, 2.0], sensitivity=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="orders"):
        rdp.gaussian_rdp([0.5], noise_std=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        rdp.cauchy_rdp_bound([2.0], sensitivity=-1.0, gamma=1.0)
    for bad in (0.0, 1.0, -1e-5, 2.0):
        with pytest.raises(ValueError, match="delta"):
            rdp.epsilon_from_rdp([2.0], [1.0], delta=bad)
    with pytest.raises(ValueError, match="conversion"):
        rdp.epsilon_from_rdp([2.0], [1.0], delta=1e-5, conversion="exact")
    with pytest.raises(ValueError, match="rate"):
        rdp.poisson_subsampled_rdp([2.0], rate=0.0, base_int=[1.0], base_orders_rdp=[1.0])


def test_sampling_bounds_do_not_overflow_for_large_base_values():
    orders = np.array([1.5, 2.0, 5.0, 64.0])
    base_int = rdp.gaussian_rdp(np.arange(2.0, 65.0), noise_std=0.01)  # ε(2) = 2·10⁴ nats
    base = rdp.gaussian_rdp(orders, noise_std=0.01)
    for eps_inf in (math.inf, 1e4):
        out = rdp.wor_subsampled_rdp(orders, rate=0.1, base_int=base_int, base_orders_rdp=base, eps_inf=eps_inf)
        assert np.all(np.isfinite(out)) and np.all(out <= base)
    out = rdp.poisson_subsampled_rdp(orders, rate=0.1, base_int=base_int, base_orders_rdp=base)
    assert np.all(np.isfinite(out)) and np.all(out <= base)
