"""RDP of binary randomized response with parameter ε₀, the worst case of every pure ε₀-DP pair (model §9.3).

With p = e^{ε₀}/(1 + e^{ε₀}) the pair is (Bern(p), Bern(1 − p)) and::

    D_α = ln(p^α(1−p)^{1−α} + (1−p)^α p^{1−α}) / (α − 1)

Every ε₀-DP pair is a post-processing of this pair (Kairouz, Oh & Viswanath 2015,
arXiv:1311.0776, Thm 2.1), so by the data-processing inequality its Rényi divergence bounds that
of any ε₀-DP mechanism at every order. Computed in log space; D_∞ = ε₀.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = ["randomized_response_rdp"]


def randomized_response_rdp(orders, *, epsilon0: float) -> np.ndarray:
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    e = float(epsilon0)
    if e == 0.0:
        return np.zeros_like(a)
    lp = -math.log1p(math.exp(-e))  # ln p
    lq = -(e + math.log1p(math.exp(-e)))  # ln(1 − p) = −ln(1 + e^{ε₀}), without overflow for ε₀ > 709
    terms = np.stack([a * lp + (1.0 - a) * lq, a * lq + (1.0 - a) * lp])
    out = logsumexp(terms, axis=0) / (a - 1.0)
    return np.minimum(np.maximum(out, 0.0), e)
