"""Pure statistics of the FLORAS inactive-sequence noise (model §6.1).

- Per entry across rounds: e^i ~ Cauchy(0, γ), γ = N − K (source Lemma 1).
- Within a round, conditionally on the shared denominators: e ~ N(0, V·I_d), so the sample
  excess kurtosis of the d entries is ≈ 0 with standard error √(24/d).
- V = Σ_{j inactive} 1/w_j² ~ Lévy(0, γ²): P(V ≤ v) = erfc(√(γ²/(2v))).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

__all__ = ["cauchy_scale_mle", "excess_kurtosis", "levy_quantiles", "QUANTILE_LEVELS"]

QUANTILE_LEVELS = (5, 25, 50, 75, 95)


def cauchy_scale_mle(x: np.ndarray) -> float:
    """Maximum-likelihood scale γ̂ of Cauchy(0, γ) (location fixed at 0).

    Solves the score equation mean(γ²/(x² + γ²)) = 1/2, whose left side increases in γ; the
    root lies between min|x| and max|x|. Returns 0 when every sample is 0.
    """
    a = np.abs(np.asarray(x, dtype=np.float64).ravel())
    if a.size == 0:
        raise ValueError("x must contain at least one sample")
    if not np.all(np.isfinite(a)):
        raise ValueError("x must be finite")
    if np.max(a) == 0.0:
        return 0.0
    a2 = a**2

    def score(log_g: float) -> float:
        g2 = np.exp(2.0 * log_g)
        return float(np.mean(g2 / (a2 + g2)) - 0.5)

    lo = np.log(max(np.min(a[a > 0]), np.max(a) * 1e-300)) - 1.0
    hi = np.log(np.max(a)) + 1.0
    return float(np.exp(optimize.brentq(score, lo, hi, xtol=1e-12)))


def excess_kurtosis(x: np.ndarray) -> float:
    """Sample excess kurtosis m4/m2² − 3 of the entries of x (0 for a Gaussian; SE ≈ √(24/n))."""
    return float(stats.kurtosis(np.asarray(x, dtype=np.float64).ravel(), fisher=True, bias=True))


def levy_quantiles(gamma: float, levels=QUANTILE_LEVELS) -> dict[str, float]:
    """Quantiles of V ~ Lévy(0, γ²) at ``levels`` percent: v_q = γ²/(2·erfcinv(q)²)."""
    return {str(q): float(stats.levy(scale=float(gamma) ** 2).ppf(q / 100.0)) for q in levels}
