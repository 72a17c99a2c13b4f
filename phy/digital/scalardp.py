"""ScalarDP: an unbiased, exactly ε-LDP report of one bounded scalar (model §9.3; the sqSGD text's adaptive
norm bound, its reference [6]: Bhowmick et al., "Protection against reconstruction", Algorithm ScalarDP; the sqSGD
text does not restate it, so this form is a reconstruction whose unbiasedness and ε-LDP are derived below).

Input x ∈ [0, r_max] (clipped there first), k ≥ 1 steps, budget ε > 0:

1. stochastic rounding to the grid {0, r_max/k, …, r_max}: J = ⌊kx/r_max⌋ + Bernoulli(frac), E[J] = kx/r_max;
2. (k + 1)-ary randomized response: Ĵ = J with probability e^ε/(e^ε + k), otherwise uniform on the other k
   values — P(Ĵ | J)/P(Ĵ | J') ≤ e^ε, so the report is exactly ε-LDP (and, as a mixture over the rounding,
   so is P(Ĵ | x));
3. debiasing Z = (r_max/k)·(a·Ĵ − b), a = (e^ε + k)/(e^ε − 1), b = k(k + 1)/(2(e^ε − 1)).

Moments. E[Ĵ | J] = (J(e^ε − 1) + k(k + 1)/2)/(e^ε + k), hence E[Z | J] = (r_max/k)·J and E[Z] = x (unbiased);
E[Ĵ² | J] = (J²(e^ε − 1) + k(k + 1)(2k + 1)/6)/(e^ε + k), and Var[Z] = (r_max/k)²·a²·Var[Ĵ] with
Var[Ĵ] = E[E[Ĵ² | J]] − E[Ĵ]². As ε → ∞: a → 1, b → 0 and only the rounding variance
(r_max/k)²·frac·(1 − frac) is left. Units: those of x.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_scalardp", "scalardp_constants", "scalardp"]


def check_scalardp(*, epsilon: float, levels: int, r_max: float) -> None:
    """One-line ValueError naming the parameter and its range."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon_s must be a finite number > 0 (got {epsilon!r})")
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 1:
        raise ValueError(f"norm_levels must be an integer ≥ 1 (got {levels!r})")
    if not (isinstance(r_max, (int, float)) and math.isfinite(r_max) and r_max > 0):
        raise ValueError(f"r_max must be a finite number > 0 (got {r_max!r})")


def scalardp_constants(epsilon: float, levels: int) -> tuple[float, float, float]:
    """(p_keep, a, b): p_keep = e^ε/(e^ε + k) = 1/(1 + k·e^{−ε}), a = (e^ε + k)/(e^ε − 1), b = k(k + 1)/(2(e^ε − 1))."""
    k = int(levels)
    em1 = math.expm1(epsilon)  # e^ε − 1, exact for small ε, inf-safe for large
    p_keep = 1.0 / (1.0 + k * math.exp(-epsilon))
    a = 1.0 + (k + 1) / em1
    b = k * (k + 1) / (2.0 * em1)
    return p_keep, a, b


def scalardp(x, *, epsilon: float, levels: int, r_max: float, rng: np.random.Generator) -> np.ndarray:
    """Z (float64, the shape of x): independent ScalarDP reports of the entries of x (module docstring)."""
    check_scalardp(epsilon=epsilon, levels=levels, r_max=r_max)
    k = int(levels)
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, r_max)
    pos = x * (k / r_max)
    low = np.minimum(np.floor(pos), k - 1)
    j = (low + (rng.random(x.shape) < pos - low)).astype(np.int64)
    p_keep, a, b = scalardp_constants(epsilon, k)
    other = rng.integers(0, k, size=x.shape)  # uniform on {0..k} \ {J}: skip J
    other = other + (other >= j)
    j_hat = np.where(rng.random(x.shape) < p_keep, j, other)
    return (r_max / k) * (a * j_hat - b)
