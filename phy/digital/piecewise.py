"""The piecewise mechanism (PM), the first baseline of the sqSGD text (model §9.3; its reference [38]: Wang et
al., "Collecting and analyzing multidimensional data with local differential privacy", Algorithms 2 and 4).

One coordinate t ∈ [−1, 1], budget ε: with C = (e^{ε/2} + 1)/(e^{ε/2} − 1), ℓ(t) = (C + 1)/2·t − (C − 1)/2 and
r(t) = ℓ(t) + C − 1, the output t* ∈ [−C, C] has density p = (e^ε − e^{ε/2})/(2e^{ε/2} + 2) on [ℓ(t), r(t)] and
p/e^ε elsewhere: the two pieces carry the masses e^{ε/2}/(e^{ε/2} + 1) and 1/(e^{ε/2} + 1). The ratio of
densities for any two inputs is at most e^ε (exactly ε-LDP); E[t*] = t and

    Var[t* | t] = t²/(e^{ε/2} − 1) + (e^{ε/2} + 3)/(3(e^{ε/2} − 1)²).

Vectors t ∈ [−1, 1]^d (Algorithm 4): k = max(1, min(d, ⌊ε/2.5⌋)) coordinates J, uniform without replacement
and data-independent (here from a public keyed stream), each privatized by PM with ε/k (basic composition:
ε in total), scaled by d/k, zero elsewhere: E[t*_j] = t_j and Var[t*_j] = (d/k)(Var_{ε/k}[PM | t_j] + t_j²) − t_j².
The source text sends each of the k values as a real number.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pm_constant", "piecewise", "pm_dimensions", "piecewise_vector"]


def pm_constant(epsilon: float) -> float:
    """C = (e^{ε/2} + 1)/(e^{ε/2} − 1) = 1 + 2/(e^{ε/2} − 1), the output range [−C, C]."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon0 must be a finite number > 0 (got {epsilon!r})")
    return 1.0 + 2.0 / math.expm1(epsilon / 2.0)


def piecewise(t, *, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """t* (float64, the shape of t): independent PM reports of entries t ∈ [−1, 1] (clipped there first)."""
    c = pm_constant(epsilon)
    t = np.clip(np.asarray(t, dtype=np.float64), -1.0, 1.0)
    left = (c + 1.0) / 2.0 * t - (c - 1.0) / 2.0
    right = left + c - 1.0
    p_centre = 1.0 / (1.0 + math.exp(-epsilon / 2.0))  # e^{ε/2}/(e^{ε/2} + 1)
    centre = rng.random(t.shape) < p_centre
    w = rng.random(t.shape)
    inside = left + w * (c - 1.0)
    # outside: a uniform point of [−C, ℓ) ∪ (r, C], total length C + 1, laid end to end
    o = w * (c + 1.0)
    width_left = left + c
    outside = np.where(o < width_left, -c + o, right + (o - width_left))
    return np.where(centre, inside, outside)


def pm_dimensions(epsilon: float, d: int) -> int:
    """k = max(1, min(d, ⌊ε/2.5⌋)): the number of coordinates Algorithm 4 privatizes."""
    return max(1, min(int(d), int(math.floor(epsilon / 2.5))))


def piecewise_vector(t: np.ndarray, *, epsilon: float, coords: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """[d] float64: (d/k)·PM_{ε/k}(t_j) on the k coordinates ``coords``, 0 elsewhere (unbiased for t)."""
    t = np.asarray(t, dtype=np.float64)
    d, k = t.size, int(np.asarray(coords).size)
    out = np.zeros(d)
    out[coords] = (d / k) * piecewise(t[coords], epsilon=epsilon / k, rng=rng)
    return out
