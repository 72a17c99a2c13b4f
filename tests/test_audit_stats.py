"""Clopper–Pearson intervals and the empirical ε lower bound (model §7.5) on cases with known answers."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from phy.randomness import stream
from scenarios.audit.bound import empirical_epsilon_lower, max_reportable_epsilon
from scenarios.audit.stats import (
    clopper_pearson,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_from_rates,
)


@pytest.mark.parametrize("n", [1, 7, 50, 1000])
def test_clopper_pearson_matches_binomial_tails(n):
    """p_hi solves P_p(X ≤ k) = a and p_lo solves P_p(X ≥ k) = a (scipy.stats.binom)."""
    a = 0.025
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        lo, hi = clopper_pearson(k, n, confidence=0.95)
        if k < n:
            assert stats.binom.cdf(k, n, hi) == pytest.approx(a, rel=1e-7)
        else:
            assert hi == 1.0
        if k > 0:
            assert stats.binom.sf(k - 1, n, lo) == pytest.approx(a, rel=1e-7)
        else:
            assert lo == 0.0
        assert lo <= k / n <= hi


def test_clopper_pearson_zero_successes_closed_form():
    """k = 0: p_hi = 1 − a^(1/n) (the 'rule of three' family)."""
    for n in (10, 500):
        assert clopper_pearson_upper(0, n, level=0.975) == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-10)
        assert clopper_pearson_lower(n, n, level=0.975) == pytest.approx(0.025 ** (1 / n), rel=1e-10)


def test_clopper_pearson_exact_coverage_is_at_least_nominal():
    """Coverage Σ_k pmf(k; n, p)·1[p ∈ CI(k)] ≥ 0.95 for every p on a grid (exact, no sampling)."""
    n = 40
    k = np.arange(n + 1)
    lo, hi = clopper_pearson(k, np.full_like(k, n), confidence=0.95)
    for p in np.linspace(0.001, 0.999, 499):
        coverage = stats.binom.pmf(k, n, p)[(lo <= p) & (p <= hi)].sum()
        assert coverage >= 0.95 - 1e-12


def test_clopper_pearson_rejects_bad_counts():
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson(5, 4)
    with pytest.raises(ValueError, match="trials"):
        clopper_pearson(0, 0)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 4, confidence=1.0)


def test_epsilon_from_rates_known_values():
    assert epsilon_from_rates(0.5, 0.5, delta=0.0) == 0.0
    assert epsilon_from_rates(0.1, 0.2, delta=0.0) == pytest.approx(math.log(0.8 / 0.1))
    assert epsilon_from_rates(0.1, 0.2, delta=0.05) == pytest.approx(math.log(0.75 / 0.1))
    assert epsilon_from_rates(0.9, 0.9, delta=0.0) == 0.0


def test_perfect_attack_reaches_the_saturation_level():
    """A noise-free mechanism: scores separate perfectly → ε_lower = ln((1−δ−p)/p), p = 1 − (α/2)^(1/n)."""
    n = 400
    res = empirical_epsilon_lower(np.zeros(n), np.ones(n), delta=1e-5, confidence=0.95)
    p = 1 - 0.025 ** (1 / (n // 2))
    assert res.saturated
    assert res.epsilon == pytest.approx(math.log((1 - 1e-5 - p) / p), rel=1e-9)
    assert res.epsilon == pytest.approx(res.max_reportable)
    assert res.epsilon == pytest.approx(max_reportable_epsilon(n // 2, n // 2, delta=1e-5, confidence=0.95))
    # the direction is found either way round
    assert empirical_epsilon_lower(np.ones(n), np.zeros(n), delta=1e-5).epsilon == pytest.approx(res.epsilon)


def test_identical_worlds_are_not_significantly_distinguishable():
    """Same distribution in both worlds: P[ε_lower > 0] ≤ α per repetition (the bound's guarantee).

    Over R independent repetitions the count of ε_lower > 0 is stochastically below
    Binomial(R, α); the test allows the 0.999 quantile of that binomial.
    """
    R, n, alpha = 300, 120, 0.05
    positives = 0
    for r in range(R):
        g = stream(11, "audit-test-identical", r)
        res = empirical_epsilon_lower(g.standard_cauchy(n), g.standard_cauchy(n), delta=1e-5, confidence=1 - alpha)
        positives += res.epsilon > 0
    assert positives <= stats.binom.ppf(0.999, R, alpha)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact ε(δ) of the Gaussian mechanism with Δ/σ = mu.

    Balle & Wang 2018 (arXiv:1805.06530), Thm. 8:
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ); solved for ε by bracketing.
    """
    def excess(eps):
        return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu) - delta

    return optimize.brentq(excess, 0.0, 200.0, xtol=1e-12)


@pytest.mark.parametrize("mu, delta", [(0.5, 1e-2), (1.0, 1e-2), (2.0, 1e-5)])
def test_gaussian_mechanism_lower_bound_never_exceeds_exact_epsilon(mu, delta):
    """On M(D) = f(D) + N(0, 1) with sensitivity μ the audit stays below the exact ε(δ), over 10 seeds.

    The configurations are chosen so that the bound comes close (μ = 1, δ = 10⁻²: exact ε = 2.32,
    audited up to ≈ 2.0 with 3000 held-out trials per world), so a bound that forgot the
    confidence interval or δ would exceed it. For μ ≥ 1 the attack has power: ε_lower > 0 always.
    """
    n = 6000
    eps_true = gaussian_epsilon(mu, delta)
    for r in range(10):
        g = stream(5, "audit-test-gauss", r)
        res = empirical_epsilon_lower(g.normal(0.0, 1.0, n), g.normal(mu, 1.0, n), delta=delta, confidence=0.95)
        assert res.epsilon <= eps_true
        if mu >= 1.0:
            assert res.epsilon > 0.0


def test_bound_rejects_bad_input():
    with pytest.raises(ValueError, match="delta"):
        empirical_epsilon_lower([0, 1], [0, 1], delta=1.5)
    with pytest.raises(ValueError, match="scores_world0"):
        empirical_epsilon_lower([0.0], [0, 1], delta=0.0)
    with pytest.raises(ValueError, match="select_fraction"):
        empirical_epsilon_lower([0, 1, 2], [0, 1, 2], delta=0.0, select_fraction=1.0)
