"""Exact binomial confidence intervals and the (ε, δ) hypothesis-testing bound (model §7.5).

Pure functions, vectorized over arrays of counts.

Clopper–Pearson (Clopper & Pearson 1934, Biometrika 26(4):404–413). For k successes in n
Bernoulli(p) trials the exact one-sided bounds at level 1 − a are the beta quantiles

    p_lo(k) = Beta⁻¹(a;     k,     n − k + 1)      (p_lo(0) = 0)
    p_hi(k) = Beta⁻¹(1 − a; k + 1, n − k)          (p_hi(n) = 1)

equivalently the p at which the binomial tail through the observation equals a:
P_{p_hi}(X ≤ k) = a and P_{p_lo}(X ≥ k) = a. The two-sided interval at confidence 1 − α uses
a = α/2 on each side. The coverage is ≥ the nominal level for every p and n (conservative).

Hypothesis-testing view of differential privacy (Wasserman & Zhou 2010; Kairouz, Oh &
Viswanath 2015, Thm. 2.1): if M is (ε, δ)-DP then for neighbours D, D' and every rejection
region S, with FPR = P[M(D) ∈ S] and FNR = P[M(D') ∉ S],

    FPR + e^ε · FNR ≥ 1 − δ      and      FNR + e^ε · FPR ≥ 1 − δ,

so ε ≥ max{ ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR) }. With upper confidence bounds on
both rates in place of the rates this gives a lower confidence bound on ε (Jagielski, Ullman &
Oprea 2020, arXiv:2006.07709, §3; Nasr et al. 2021, arXiv:2101.04535, Eq. 1).
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

__all__ = [
    "check_confidence",
    "clopper_pearson",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_from_rates",
]


def check_confidence(confidence: float, *, name: str = "confidence") -> float:
    """Validate a confidence level in (0, 1)."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1) (got {confidence!r})")
    return float(confidence)


def _counts(k, n) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k)
    n = np.asarray(n)
    if not (np.issubdtype(k.dtype, np.integer) and np.issubdtype(n.dtype, np.integer)):
        kf, nf = k.astype(float), n.astype(float)
        if np.any(kf != np.round(kf)) or np.any(nf != np.round(nf)):
            raise ValueError("successes and trials must be integers")
    k = k.astype(np.int64)
    n = n.astype(np.int64)
    if np.any(n < 1):
        raise ValueError(f"trials must be ≥ 1 (got {n.min()})")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must lie in [0, trials]")
    return k, n


def clopper_pearson_upper(successes, trials, *, level: float) -> np.ndarray | float:
    """One-sided exact upper bound p_hi with P(p ≤ p_hi) ≥ ``level``.

    Parameters
    ----------
    successes, trials : int or integer arrays (broadcast)
    level : float in (0, 1)
        One-sided confidence level 1 − a.

    Returns
    -------
    float64 array (or float) in (0, 1]: Beta⁻¹(level; k + 1, n − k), and 1 where k = n.
    """
    level = check_confidence(level, name="level")
    k, n = _counts(successes, trials)
    with np.errstate(invalid="ignore"):
        hi = _st.beta.ppf(level, k + 1, np.maximum(n - k, 1))
    hi = np.where(k >= n, 1.0, hi)
    return float(hi) if hi.ndim == 0 else hi


def clopper_pearson_lower(successes, trials, *, level: float) -> np.ndarray | float:
    """One-sided exact lower bound p_lo with P(p ≥ p_lo) ≥ ``level``: Beta⁻¹(1 − level; k, n − k + 1), 0 at k = 0."""
    level = check_confidence(level, name="level")
    k, n = _counts(successes, trials)
    with np.errstate(invalid="ignore"):
        lo = _st.beta.ppf(1.0 - level, np.maximum(k, 1), n - k + 1)
    lo = np.where(k <= 0, 0.0, lo)
    return float(lo) if lo.ndim == 0 else lo


def clopper_pearson(successes, trials, *, confidence: float = 0.95):
    """Two-sided exact interval (p_lo, p_hi) at ``confidence`` (α/2 in each tail)."""
    confidence = check_confidence(confidence)
    one_sided = 1.0 - (1.0 - confidence) / 2.0
    return (
        clopper_pearson_lower(successes, trials, level=one_sided),
        clopper_pearson_upper(successes, trials, level=one_sided),
    )


def epsilon_from_rates(fpr, fnr, *, delta: float) -> np.ndarray | float:
    """ε implied by a test's error rates: max{ln((1−δ−FNR)/FPR), ln((1−δ−FPR)/FNR), 0}.

    Kairouz, Oh & Viswanath 2015 (arXiv:1311.0776), Thm. 2.1: every (ε, δ)-DP mechanism has
    FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ. Rates of 0 with a positive numerator give
    +inf (only possible for point estimates; Clopper–Pearson upper bounds are always > 0).
    """
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1) (got {delta!r})")
    fpr = np.asarray(fpr, dtype=np.float64)
    fnr = np.asarray(fnr, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(1.0 - delta - fnr, 0.0)) - np.log(fpr)
        b = np.log(np.maximum(1.0 - delta - fpr, 0.0)) - np.log(fnr)
    a = np.where(np.isnan(a), -np.inf, a)
    b = np.where(np.isnan(b), -np.inf, b)
    eps = np.maximum(np.maximum(a, b), 0.0)
    return float(eps) if eps.ndim == 0 else eps
