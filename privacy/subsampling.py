"""Generic amplification-by-subsampling bounds on Rényi DP (model §7.3): pure functions.

Each bound turns the RDP curve of a base mechanism, given at the integer orders 2…α, into the
RDP curve of the same mechanism run on a uniformly subsampled dataset; both are stated at
integer orders (fractional orders are covered through ⌈α⌉, RDP being non-decreasing in α).
They hold for any base mechanism; the tight mechanism-specific bounds (sampled Gaussian, sampled
FLORAS) live in :mod:`privacy.sampled_gaussian` and :mod:`privacy.floras_tight`. Re-exported by
:mod:`privacy.rdp`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from .orders import check_orders

__all__ = ["wor_subsampled_rdp", "poisson_subsampled_rdp"]


def _log_binom(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _log_expm1(x: float) -> float:
    """ln(e^x − 1) for x ≥ 0 without overflow: x + ln(1 − e^{−x}); −∞ at 0, ∞ at ∞."""
    if x == math.inf:
        return math.inf
    if x <= 0.0:
        return -math.inf
    return x + math.log(-math.expm1(-x))


def _integer_orders(a: np.ndarray) -> np.ndarray:
    # RDP is non-decreasing in α (van Erven & Harremoës 2014, Thm 3), so ε(α) ≤ ε(⌈α⌉): the
    # integer-order bounds below cover fractional orders through ⌈α⌉ (and 1 < α < 2 through 2).
    return np.maximum(2, np.ceil(a)).astype(np.int64)


def _check_rate(rate: float) -> float:
    rate = float(rate)
    if not (0.0 < rate <= 1.0):
        raise ValueError(f"sampling rate must be in (0, 1] (got {rate!r})")
    return rate


def _check_base(base_int: np.ndarray, j_max: int) -> np.ndarray:
    base_int = np.asarray(base_int, dtype=np.float64)
    if base_int.ndim != 1 or base_int.size < j_max - 1:
        raise ValueError(f"base_int must hold the base RDP at the integer orders 2..{j_max} (got {base_int.size} values)")
    if np.any(np.isnan(base_int)) or np.any(base_int < 0):
        raise ValueError("base_int must hold RDP values ≥ 0 (got a negative value or NaN)")
    return base_int


def wor_subsampled_rdp(orders, *, rate: float, base_int, base_orders_rdp, eps_inf: float = math.inf) -> np.ndarray:
    """RDP of a mechanism run on a uniform subsample drawn without replacement, rate m/n.

    Neighbouring relation: replace-one (datasets of equal size n differing in one element).
    Bound: Wang, Balle & Kasiviswanathan 2019 (AISTATS), arXiv:1808.00087, Theorem 9, for
    integer α ≥ 2 given the base RDP ε(j) at the integers j = 2..α and its pure-DP level ε(∞).

    Parameters
    ----------
    orders : [n] float64, α > 1; fractional orders are bounded through ⌈α⌉.
    rate : float in (0, 1]
    base_int : [J−1] float64
        ε(j) of the base mechanism at j = 2..J, J ≥ ⌈max order⌉ (∞ allowed).
    base_orders_rdp : [n] float64
        ε(α) of the base mechanism at ``orders`` itself; the result never exceeds it
        (subsampling cannot hurt: joint quasi-convexity of the Rényi divergence under the coupling
        that pairs the subsamples of neighbouring inputs).
    eps_inf : float
        ε(∞) of the base mechanism (∞ when it is not pure DP).
    """
    a = check_orders(orders)
    q = _check_rate(rate)
    base_orders_rdp = np.asarray(base_orders_rdp, dtype=np.float64)
    ints = _integer_orders(a)
    base_int = _check_base(base_int, int(ints.max()))
    if q == 1.0:
        return base_orders_rdp.copy()
    logq = math.log(q)
    log_em1_inf = _log_expm1(float(eps_inf))
    e2 = float(base_int[0])
    log4em1 = math.log(4.0) + _log_expm1(e2)
    # Theorem 9, j = 2 term: γ² C(α,2) min{4(e^{ε(2)} − 1), e^{ε(2)} min{2, (e^{ε(∞)} − 1)²}}
    log_j2 = min(log4em1, e2 + min(math.log(2.0), 2.0 * log_em1_inf))
    cache: dict[int, float] = {}
    out = np.empty_like(a)
    for i, alpha in enumerate(ints):
        alpha = int(alpha)
        if alpha not in cache:
            if not np.all(np.isfinite(base_int[: alpha - 1])):
                cache[alpha] = math.inf  # a term γ^j C(α,j) e^{(j−1)ε(j)} with ε(j) = ∞ and γ > 0
            else:
                j = np.arange(3, alpha + 1, dtype=np.float64)
                # Theorem 9, j ≥ 3 terms: γ^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)} − 1)^j}
                tail = j * logq + _log_binom(alpha, j) + (j - 1.0) * base_int[1 : alpha - 1] + np.minimum(math.log(2.0), j * log_em1_inf)
                head = 2.0 * logq + _log_binom(alpha, np.array(2.0)) + log_j2
                terms = np.concatenate([[0.0, float(head)], tail])
                cache[alpha] = float(logsumexp(terms)) / (alpha - 1.0)
        out[i] = min(cache[alpha], base_orders_rdp[i])
    return out


def poisson_subsampled_rdp(orders, *, rate: float, base_int, base_orders_rdp) -> np.ndarray:
    """RDP of a mechanism run on a Poisson subsample (each element kept independently w.p. γ).

    Neighbouring relation: add/remove one element. Bound: Zhu & Wang 2019, "Poisson subsampled
    Rényi differential privacy", ICML 2019 (PMLR 97), Theorem 6 (general upper bound), for
    integer α ≥ 2 given the base RDP ε(l) at l = 2..α::

        ε'(α) ≤ 1/(α−1) · ln[(1−γ)^{α−1}(αγ − γ + 1) + C(α,2)γ²(1−γ)^{α−2}e^{ε(2)}
                             + 3 Σ_{l=3}^{α} C(α,l)(1−γ)^{α−l}γ^l e^{(l−1)ε(l)}].

    Parameters as :func:`wor_subsampled_rdp` (no ε(∞) needed); the result never exceeds the
    base curve (same coupling argument, add/remove pairs).
    """
    a = check_orders(orders)
    q = _check_rate(rate)
    base_orders_rdp = np.asarray(base_orders_rdp, dtype=np.float64)
    ints = _integer_orders(a)
    base_int = _check_base(base_int, int(ints.max()))
    if q == 1.0:
        return base_orders_rdp.copy()
    logq, log1mq = math.log(q), math.log1p(-q)
    cache: dict[int, float] = {}
    out = np.empty_like(a)
    for i, alpha in enumerate(ints):
        alpha = int(alpha)
        if alpha not in cache:
            if not np.all(np.isfinite(base_int[: alpha - 1])):
                cache[alpha] = math.inf
            else:
                l = np.arange(3, alpha + 1, dtype=np.float64)
                first = (alpha - 1) * log1mq + math.log1p((alpha - 1) * q)  # (1−γ)^{α−1}(αγ − γ + 1)
                second = float(_log_binom(alpha, np.array(2.0))) + 2 * logq + (alpha - 2) * log1mq + base_int[0]
                tail = math.log(3.0) + _log_binom(alpha, l) + (alpha - l) * log1mq + l * logq + (l - 1.0) * base_int[1 : alpha - 1]
                cache[alpha] = float(logsumexp(np.concatenate([[first, second], tail]))) / (alpha - 1.0)
        out[i] = min(cache[alpha], base_orders_rdp[i])
    return out
