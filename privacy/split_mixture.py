"""The sampled Rényi bound of a revealed Gaussian mixture whose update may be split over blocks (model §5.1,
"Per-block estimates"; :class:`privacy.gaussian_mixture.GaussianMixtureRound` with ``blocks`` > 1).

Given the channels, client k's round is the without-replacement sampled Gaussian (replace-one) of strength μ with
μ² = Y = Σ_m w_m·X_m: X_m = μ_{k,m}² the strength² of block m, each with the law of X (any dependence between the
blocks), w_m = ‖Δ_m‖²/S² ≥ 0 with Σ_m w_m ≤ 1 fixed by the neighbouring pair. At an integer order α the bound of
Wang, Balle & Kasiviswanathan (2019, Theorem 27; the one dp_accounting evaluates, :mod:`privacy.sampled_gaussian`)
bounds the round's moment E[(P/Q)^α] given Y = y by min(e^{C(α,2)·y}, A_α(y)),

    A_α(y) = 1 + Σ_{i=2}^{α} q^i·C(α, i)·min(b_i(y), c_i(y)),   c_i(y) = 2·e^{C(i,2)·y},
    b_2(y) = 4(e^y − 1),   b_i(y) = 4·√(D_{2⌊i/2⌋}(y)·D_{2⌈i/2⌉}(y))  (i ≥ 3, α ≤ 256; above, c_i only),

D_j(y) = Σ_{k=0}^{j} (−1)^{j−k}·C(j, k)·e^{C(k,2)·y} the j-th forward difference of k ↦ e^{C(k,2)·y} at 0 (dp_accounting's
``_get_forward_diffs``; C(k,2)^n is a non-negative combination of the binomials C(k, j), so D_j(y) = Σ_n (y^n/n!)·(a
non-negative coefficient): a power series with non-negative coefficients). Every function e^{ay}, e^y − 1 and D_j is
therefore convex and increasing on y ≥ 0, so for one of them g, Jensen with the identical marginals gives
E g(Y) ≤ Σ_m w_m·E g(X_m) + (1 − Σ w_m)·g(0) ≤ E g(X); for the geometric means Cauchy–Schwarz first,
E√(D_a(Y)·D_b(Y)) ≤ √(E D_a(Y)·E D_b(Y)). Taking each minimum outside its expectation,

    E[e^{(α−1)ε(α|Y)}] ≤ min(E e^{C(α,2)·X}, 1 + Σ_i q^i·C(α, i)·min(E b_i, E c_i)),

the E's over X's law with the b_i's geometric means of expectations: a bound for every split of the update, equal to
the one-block curve for a point law and above the one-block mixture of curves (a minimum of expectations against an
expectation of minima) otherwise. A fractional order interpolates the cumulant (α − 1)·ε(α) linearly between the
neighbouring integers (WBK Corollary 10: the cumulant is convex in α; (α − 1)·ε(α) = 0 at α = 1), and every order
takes the smaller of that and the unsampled mixture's cumulant ln E e^{(α−1)α·X/2} (sampling never increases the
divergence; convex in X, so it bounds every split as well).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _dpa_rdp
from scipy.special import gammaln, logsumexp

__all__ = ["MAX_EXACT_ORDER", "split_sampled_rdp"]

#: the largest order at which dp_accounting evaluates Theorem 27 with its forward differences (its ``max_alpha``)
MAX_EXACT_ORDER = 256


@functools.lru_cache(maxsize=4096)
def _log_d(x: float) -> np.ndarray:
    """[MAX_EXACT_ORDER + 3] log D_j(x) for j = 0 … MAX_EXACT_ORDER + 2 (D_0 = 1, D_1 = 0; x > 0), read-only."""
    sigma = 1.0 / math.sqrt(x)
    # D_j ≥ 0 (module docstring); where roundoff gives a high-order D_j of tiny x the wrong sign, its magnitude is
    # used, as dp_accounting's own Theorem 27 evaluation does (so a point law reproduces its curve exactly)
    deltas, _ = _dpa_rdp._get_forward_diffs(lambda k: k * (k + 1) / (2.0 * sigma**2), MAX_EXACT_ORDER)
    out = np.concatenate([[0.0], deltas])  # dp_accounting's deltas[j] is log D_{j+1} (deltas[0] = log D_1 = log 0)
    out.setflags(write=False)
    return out


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _moments(x: np.ndarray, w: np.ndarray, orders_int: np.ndarray) -> dict:
    """log E over the law (x = μ², w its weights, x = 0 allowed) of e^{C(n,2)·X} for n ≤ the largest order, of
    e^X − 1, and of every D_j."""
    lw = np.log(w)
    n_max = int(orders_int.max())
    n = np.arange(n_max + 1, dtype=np.float64)
    exp_c = logsumexp(lw[None, :] + (n * (n - 1) / 2.0)[:, None] * x[None, :], axis=1)  # [n_max + 1]
    pos = x > 0.0
    em1 = logsumexp(lw[pos] + np.log(np.expm1(x[pos]))) if pos.any() else -math.inf
    if pos.any():
        d = np.stack([_log_d(float(v)) for v in x[pos]])  # [panels, j]
        log_d = logsumexp(lw[pos][:, None] + d, axis=0)
        log_d[0] = 0.0  # D_0 = 1 at every x, 0 included
    else:
        log_d = np.full(MAX_EXACT_ORDER + 3, -math.inf)
        log_d[0] = 0.0
    return {"c": exp_c, "em1": em1, "d": log_d}


def _cumulant(alpha: int, q: float, m: dict) -> float:
    """(α − 1)·ε(α) at an integer α ≥ 2 (module docstring)."""
    i = np.arange(2, alpha + 1)
    log_c = math.log(2.0) + m["c"][i]
    log_b = np.full(i.size, math.inf)
    log_b[0] = math.log(4.0) + m["em1"]
    if alpha <= MAX_EXACT_ORDER and alpha >= 3:
        j = i[1:]
        lo, hi = m["d"][2 * (j // 2)], m["d"][2 * ((j + 1) // 2)]
        log_b[1:] = math.log(4.0) + 0.5 * (lo + hi)
    terms = i * math.log(q) + _log_comb(alpha, i.astype(np.float64)) + np.minimum(log_b, log_c)
    log_a = float(np.logaddexp(0.0, logsumexp(terms)))
    return min(float(m["c"][alpha]), log_a)


def split_sampled_rdp(strengths, weights, orders, *, rate: float) -> np.ndarray:
    """ε(α) [n] of the without-replacement sampled round (rate q = K/M < 1) whose strength² is any convex
    combination of block strengths² with the law (``strengths`` μ ≥ 0, ``weights``), at ``orders`` > 1 (module
    docstring)."""
    q = float(rate)
    if not 0.0 < q < 1.0:
        raise ValueError(f"rate must be in (0, 1) (got {rate!r})")
    mu, w = np.asarray(strengths, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    keep = w > 0.0
    x, w = mu[keep] ** 2, w[keep] / w[keep].sum()
    a = np.asarray(orders, dtype=np.float64)
    if np.any(~(a > 1.0)):
        raise ValueError("orders must be > 1")
    finite = np.isfinite(a)
    ints = np.unique(np.concatenate([np.ceil(a[finite]), np.floor(a[finite])]).astype(np.int64))
    ints = ints[ints >= 2]
    m = _moments(x, w, ints if ints.size else np.array([2]))
    cum = {1: 0.0, **{int(k): _cumulant(int(k), q, m) for k in ints}}
    out = np.empty_like(a)
    for n, alpha in enumerate(a):
        if not math.isfinite(alpha):
            out[n] = math.inf if x.max() > 0.0 else 0.0
            continue
        lo, hi = int(math.floor(alpha)), int(math.ceil(alpha))
        t = alpha - lo
        value = cum[lo] if lo == hi else (1.0 - t) * cum[lo] + t * cum[hi]
        # the unsampled mixture's cumulant ln E e^{(α−1)α·X/2} bounds every split too (e^{λx} convex), at any α
        unsampled = float(logsumexp(np.log(w) + (alpha - 1.0) * alpha * x / 2.0))
        out[n] = min(value, unsampled) / (alpha - 1.0)
    return np.maximum(out, 0.0)

