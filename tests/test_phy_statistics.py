"""Statistics helpers for the inactive-sequence noise (model §6.1)."""

import numpy as np
from scipy import stats

from phy.statistics import cauchy_scale_mle, excess_kurtosis, levy_quantiles


def test_cauchy_scale_mle_recovers_the_scale():
    rng = np.random.default_rng(0)
    for gamma in (0.5, 10.0):
        n = 20000
        x = stats.cauchy(scale=gamma).rvs(size=n, random_state=rng)
        # the MLE of the scale with known location has asymptotic variance 2γ²/n
        assert abs(cauchy_scale_mle(x) - gamma) < 4 * gamma * np.sqrt(2 / n)
    assert cauchy_scale_mle(np.zeros(5)) == 0.0


def test_levy_quantiles_match_sum_of_inverse_squared_normals():
    gamma, n = 10, 20000
    w = np.random.default_rng(1).standard_normal((n, gamma))
    V = np.sum(1 / w**2, axis=1)
    q = levy_quantiles(gamma)
    for level, value in q.items():
        p = float(level) / 100
        # empirical CDF at the theoretical quantile: binomial standard error √(p(1−p)/n)
        assert abs(np.mean(V <= value) - p) < 4 * np.sqrt(p * (1 - p) / n)


def test_excess_kurtosis_of_gaussian_is_near_zero():
    n = 50000
    x = np.random.default_rng(2).standard_normal(n)
    assert abs(excess_kurtosis(x)) < 4 * np.sqrt(24 / n)
