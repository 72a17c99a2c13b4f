"""PrivQuant: unbiased K_q-level quantization and its exactly ε₀-LDP privatization (model §9.3).

Pure functions; the sqSGD client/server pipeline that uses them is :mod:`phy.digital.sqsgd`.

Quantization (source §3.1). Levels B_l = −U + l·Δ, l = 0..K_q−1, Δ = 2U/(K_q − 1). An entry
y ∈ [B_l, B_{l+1}] is rounded up to B_{l+1} with probability (y − B_l)/Δ and down otherwise, so
E[B_v] = y. Levels are handled by their indices v ∈ {0..K_q−1}^n.

Privatization (reconstruction of the lost cap probability, model §9.3). With the agreement score
M(u, v) = #{j: u_j = v_j} − #{j: u_j ≠ v_j} = 2a − n (a = number of agreements),

    P(u | v) = exp(ε₀·1[M(u, v) > κ]) / Z,   Z = Σ_a C(n, a)(K_q − 1)^{n−a} e^{ε₀·1[2a − n > κ]}.

Z does not depend on v, so P(u | v)/P(u | v') ≤ e^{ε₀} for every u, v, v' and every integer κ:
the mechanism is exactly ε₀-LDP. Sampling: draw a from its exact distribution
π(a) ∝ C(n, a)(K_q − 1)^{n−a}·e^{ε₀·1[a ≥ t]}, t = ⌊(n + κ)/2⌋ + 1 (the smallest a with
2a − n > κ), then choose the a agreeing positions uniformly and give every other position one of
the K_q − 1 other levels uniformly.

Unbiasing constant (derived). By symmetry P(u_j = v_j) = E[a]/n =: q and the other levels are
uniform; the levels sum to 0, so E[B_{u_j} | v] = m·B_{v_j} with m = (K_q·q − 1)/(K_q − 1). With
b(·; n, p) the Binomial(n, p = 1/K_q) pmf, T = P(Bin(n, p) ≥ t) and the identity
E[(a − np)·1[a ≥ t]] = (1 − p)·t·b(t; n, p) this is, without cancellation,

    m = (e^{ε₀} − 1)·t·b(t; n, p) / (n·(1 + (e^{ε₀} − 1)·T)),

evaluated in log space. Reference (model §9.3): n = 15, K_q = 2, ε₀ = 1, κ = 0 gives
m = C(14, 7)(2p − 1)/2^14 = 0.09680 with p = e/(1 + e).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln, logsumexp
from scipy.stats import binom

__all__ = [
    "check_mechanism",
    "quantization_levels",
    "stochastic_quantize",
    "agreement_threshold",
    "kappa_range",
    "agreement_log_weights",
    "agreement_pmf",
    "log_unbiasing_constant",
    "unbiasing_constant",
    "best_kappa",
    "privquant",
    "privquant_log_prob",
    "level_bits",
]


def check_mechanism(*, n: int, levels: int, epsilon0: float, kappa: int | None = None) -> None:
    """Validate (n, K_q, ε₀, κ); one-line ValueError naming the parameter and its range."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (privatized coordinates) must be an integer ≥ 1 (got {n!r})")
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 2:
        raise ValueError(f"sq_levels must be an integer ≥ 2 (got {levels!r})")
    if isinstance(epsilon0, bool) or not isinstance(epsilon0, (int, float)) or not math.isfinite(epsilon0) or epsilon0 <= 0:
        raise ValueError(f"epsilon0 must be a finite number > 0 (got {epsilon0!r})")
    if kappa is not None:
        lo, hi = kappa_range(int(n))
        if isinstance(kappa, bool) or not isinstance(kappa, (int, np.integer)) or not lo <= kappa <= hi:
            raise ValueError(f"kappa must be an integer in [{lo}, {hi}] for n = {n} privatized coordinates (got {kappa!r})")


def kappa_range(n: int) -> tuple[int, int]:
    """Integers κ with a non-trivial cap: −n ≤ κ ≤ n − 1 (outside, M > κ always or never and m = 0)."""
    return -int(n), int(n) - 1


def quantization_levels(levels: int, bound: float) -> np.ndarray:
    """[K_q] float64: B_l = −U + l·2U/(K_q − 1), l = 0..K_q−1 (symmetric, Σ_l B_l = 0)."""
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 2:
        raise ValueError(f"sq_levels must be an integer ≥ 2 (got {levels!r})")
    if not (np.isfinite(bound) and bound > 0):
        raise ValueError(f"bound U must be a finite number > 0 (got {bound!r})")
    grid = -bound + np.arange(levels) * (2.0 * bound / (levels - 1))
    return (grid - grid[::-1]) / 2.0  # exactly antisymmetric, so the levels sum to 0


def stochastic_quantize(y: np.ndarray, *, levels: int, bound: float, rng: np.random.Generator) -> np.ndarray:
    """Unbiased rounding of y ∈ [−U, U] (any shape) to level indices (int64, same shape).

    Entries outside [−U, U] by floating-point rounding are clipped first.
    """
    y = np.clip(np.asarray(y, dtype=np.float64), -bound, bound)
    pos = (y + bound) * ((levels - 1) / (2.0 * bound))  # in [0, K_q − 1]
    low = np.minimum(np.floor(pos), levels - 2)
    frac = pos - low
    up = rng.random(y.shape) < frac
    return (low + up).astype(np.int64)


def agreement_threshold(n: int, kappa: int) -> int:
    """t = ⌊(n + κ)/2⌋ + 1: the smallest number of agreements a with M = 2a − n > κ."""
    return (int(n) + int(kappa)) // 2 + 1


def agreement_log_weights(n: int, *, levels: int, epsilon0: float, kappa: int) -> np.ndarray:
    """[n + 1]: ln[C(n, a)(K_q − 1)^{n−a}·e^{ε₀·1[2a − n > κ]}] for a = 0..n."""
    a = np.arange(n + 1)
    lw = gammaln(n + 1.0) - gammaln(a + 1.0) - gammaln(n - a + 1.0) + (n - a) * math.log(levels - 1)
    return lw + epsilon0 * (2 * a - n > kappa)


def agreement_pmf(n: int, *, levels: int, epsilon0: float, kappa: int) -> np.ndarray:
    """[n + 1] float64: the exact distribution π(a) of the number of agreements."""
    lw = agreement_log_weights(n, levels=levels, epsilon0=epsilon0, kappa=kappa)
    return np.exp(lw - logsumexp(lw))


def _log_m_at_threshold(t: np.ndarray, n: int, levels: int, epsilon0: float) -> np.ndarray:
    """ln m for thresholds t ∈ [1, n] (array), by the closed form of the module docstring."""
    p = 1.0 / levels
    log_em1 = epsilon0 + math.log(-math.expm1(-epsilon0))  # ln(e^{ε₀} − 1), stable for large ε₀
    log_pmf = binom.logpmf(np.arange(n + 1), n, p)
    # ln P(Bin(n, p) ≥ a) for a = 0..n by a reverse running log-sum (binom.logsf underflows to −∞
    # in the far tail, where the pmf is still representable)
    log_sf = np.logaddexp.accumulate(log_pmf[::-1])[::-1]
    log_den = np.logaddexp(0.0, log_em1 + log_sf[t])  # ln(1 + (e^{ε₀} − 1)·T)
    log_m = log_em1 + np.log(t) + log_pmf[t] - math.log(n) - log_den
    return np.minimum(log_m, 0.0)  # m ≤ 1 exactly; removes last-bit rounding above 1


@functools.lru_cache(maxsize=64)
def _agreement_cdf(n: int, levels: int, epsilon0: float, kappa: int) -> np.ndarray:
    """Cumulative sums of :func:`agreement_pmf` (cached: one mechanism per aggregator; read-only)."""
    cdf = np.cumsum(agreement_pmf(n, levels=levels, epsilon0=epsilon0, kappa=kappa))
    cdf.flags.writeable = False
    return cdf


def log_unbiasing_constant(n: int, *, levels: int, epsilon0: float, kappa: int) -> float:
    """ln m, where E[B_{u_j} | v] = m·B_{v_j} (model §9.3)."""
    check_mechanism(n=n, levels=levels, epsilon0=epsilon0, kappa=kappa)
    t = agreement_threshold(n, kappa)
    return float(_log_m_at_threshold(np.array([t]), int(n), int(levels), float(epsilon0))[0])


def unbiasing_constant(n: int, *, levels: int, epsilon0: float, kappa: int) -> float:
    """m ∈ (0, 1] (see :func:`log_unbiasing_constant`)."""
    return math.exp(log_unbiasing_constant(n, levels=levels, epsilon0=epsilon0, kappa=kappa))


def best_kappa(n: int, *, levels: int, epsilon0: float) -> tuple[int, float]:
    """(κ, m): the cap κ ∈ [−n, n − 1] that maximizes m, and that m.

    m depends on κ only through the threshold t; every t ∈ [1, n] is tried and the smallest κ
    with that threshold, κ = 2t − n − 1, is returned (κ and κ + 1 are the same mechanism).
    """
    check_mechanism(n=n, levels=levels, epsilon0=epsilon0)
    t = np.arange(1, int(n) + 1)
    log_m = _log_m_at_threshold(t, int(n), int(levels), float(epsilon0))
    i = int(np.argmax(log_m))
    return int(2 * t[i] - n - 1), float(math.exp(log_m[i]))


def privquant(v: np.ndarray, *, levels: int, epsilon0: float, kappa: int, rng: np.random.Generator) -> np.ndarray:
    """Privatize level-index vectors v ([rows, n] int) row by row; returns u of the same shape.

    Each row independently: a ~ π (inverse CDF of :func:`agreement_pmf`), a uniformly chosen
    set of a agreeing positions, and at every other position v_j + o (mod K_q) with o uniform
    on {1..K_q − 1} (uniform over the other levels).
    """
    v = np.asarray(v, dtype=np.int64)
    if v.ndim != 2:
        raise ValueError(f"v must be a [rows, n] array of level indices (got shape {v.shape})")
    rows, n = v.shape
    check_mechanism(n=n, levels=levels, epsilon0=epsilon0, kappa=kappa)
    if np.any(v < 0) or np.any(v >= levels):
        raise ValueError(f"level indices must lie in [0, {levels - 1}]")
    cdf = _agreement_cdf(int(n), int(levels), float(epsilon0), int(kappa))
    agreements = np.minimum(np.searchsorted(cdf, rng.random(rows) * cdf[-1], side="right"), n)
    u = (v + rng.integers(1, levels, size=v.shape)) % levels
    for r in range(rows):
        keep = rng.permutation(n)[: agreements[r]]
        u[r, keep] = v[r, keep]
    return u


def privquant_log_prob(u: np.ndarray, v: np.ndarray, *, levels: int, epsilon0: float, kappa: int) -> np.ndarray:
    """ln P(u | v) = ε₀·1[M(u, v) > κ] − ln Z for level-index vectors (last axis n; broadcasts)."""
    u, v = np.asarray(u), np.asarray(v)
    n = u.shape[-1]
    check_mechanism(n=n, levels=levels, epsilon0=epsilon0, kappa=kappa)
    log_z = logsumexp(agreement_log_weights(n, levels=levels, epsilon0=epsilon0, kappa=kappa))
    score = 2 * np.sum(u == v, axis=-1) - n
    return epsilon0 * (score > kappa) - log_z


def level_bits(n: int, levels: int) -> int:
    """⌈n·log2 K_q⌉: bits of n level indices sent as one base-K_q number."""
    if levels & (levels - 1) == 0:
        return int(n) * (int(levels).bit_length() - 1)
    return int(math.ceil(n * math.log2(levels)))
