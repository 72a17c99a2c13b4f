"""Upper bounds on the sampled Gaussian's moment that are convex in u = 1/z² (model §9.5, "Several pilots").

With B pilot blocks per FLORAS round, block m's entries carry Gaussian noise of variance V_m, the V_m independent
Lévy(0, γ²) (one per pilot). Given the V's, the whitened release is a sampled Gaussian mechanism whose squared
shift is u = Σ_m a_m/V_m (a_m ≥ 0 the neighbours' squared difference on block m, Σ_m a_m ≤ S²). If ψ_α(u) ≥
e^{(α−1)·ε_α(u)} is convex and increasing in u, Jensen's inequality over the weights a_m/S² gives
E[ψ_α(Σ_m a_m/V_m)] ≤ E[ψ_α(S²/V)]: the round is bounded by the one-pilot V-average of ψ_α, whatever the split.
This module gives such ψ_α at integer orders α ≥ 2 (``log_psi``, ln ψ_α):

- Poisson sampling (add/remove): the exact moment of Mironov, Talwar & Zhang 2019 (arXiv:1908.10530, §3.3),
  ψ_α(u) = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k}q^k e^{k(k−1)u/2}, a positive sum of exponentials in u (convex).
- Sampling without replacement (replace-one): Wang, Balle & Kasiviswanathan 2019 (arXiv:1808.00087, Thm 27)
  bound ψ_α by 1 + Σ_{i=2}^{α} q^i C(α,i)·t_i(u) with t_2 = min{4(e^u − 1), 2e^u} and, for i ≥ 3,
  t_i = min{4·√(Δ_{2⌊i/2⌋}Δ_{2⌈i/2⌉}), 2e^{i(i−1)u/2}}, Δ_j(u) = Σ_k (−1)^{j−k}C(j,k)e^{k(k−1)u/2} = E[(L − 1)^j]
  (L the Gaussian likelihood ratio). A minimum of two convex functions is not convex, so each t_i is replaced by
  a convex majorant: A_i = 4Δ_i (i even) or 2(Δ_{i−1} + Δ_{i+1}) ≥ 4√(Δ_{i−1}Δ_{i+1}) (i odd, AM–GM) up to the
  first u*_i where A_i ≥ 2e^{i(i−1)u/2} =: B_i, then B_i(u) + (A_i − B_i)(u*_i) + s_i·(u − u*_i) with
  s_i ≥ max{0, A_i'(u*_i) − B_i'(u*_i)} (the slopes match at the joint, both pieces are convex); t_2 likewise
  (u*_2 = ln 2, s_2 = 4). Δ_j is convex: its Taylor coefficients are the j-th forward differences at 0 of
  k ↦ C(k,2)^n, which count n-tuples of pairs covering a j-set, so they are ≥ 0 (absolutely monotone).

The majorant is at least dp_accounting's WBK value and at most 1.5 times it (tested: at most 1.46 for α ≤ 16 at
q = 0.2, 1.007 at q = 0.01); the price is the AM–GM step of the odd terms and the linear continuation past u*_i.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _dpa_rdp

__all__ = ["log_psi", "log_psi_orders", "growth_constant"]

_LN2, _LN4 = math.log(2.0), math.log(4.0)


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _log_deltas(u: float, n: int) -> np.ndarray:
    """ln Δ_j(u), j = 1 … n+1 (index j−1; −∞ at u = 0), stably in log space (dp_accounting's forward differences)."""
    if u == 0.0:
        return np.full(n + 2, -math.inf)
    logs, signs = _dpa_rdp._get_forward_diffs(lambda x: x * (x + 1.0) * u / 2.0, n)
    # Δ_j ≥ 0 for every j ≥ 2 (module doc); Δ_1 = E[L − 1] = 0 up to rounding
    return np.where(signs, logs, -math.inf)


def _log_a(i: int, u: float) -> float:
    """ln A_i(u): 4Δ_i (i even) or 2(Δ_{i−1} + Δ_{i+1}) (i odd)."""
    d = _log_deltas(u, i + 1)
    return _LN4 + float(d[i - 1]) if i % 2 == 0 else _LN2 + float(np.logaddexp(d[i - 2], d[i]))


def _log_b(i: int, u: float) -> float:
    return _LN2 + i * (i - 1) * u / 2.0


def _delta_slope(j: int, u: float) -> float:
    """Δ_j'(u) = Σ_k (−1)^{j−k}C(j,k)·c_k·e^{c_k u}, c_k = k(k−1)/2 (math.fsum; used near u*, where it is O(1))."""
    return math.fsum((-1) ** (j - k) * math.comb(j, k) * (k * (k - 1) / 2.0) * math.exp(k * (k - 1) * u / 2.0)
                     for k in range(j + 1))


def _a_slope(i: int, u: float) -> float:
    """A_i'(u) (module doc)."""
    if i % 2 == 0:
        return 4.0 * _delta_slope(i, u)
    return 2.0 * (_delta_slope(i - 1, u) + _delta_slope(i + 1, u))


@lru_cache(maxsize=None)
def _joint(i: int) -> tuple[float, float, float]:
    """(u*_i, (A_i − B_i)(u*_i) ≥ 0, s_i) of the convex majorant of t_i (module doc), i ≥ 3."""
    grid = np.geomspace(1e-8, 64.0, 400)
    diff = [_log_a(i, float(u)) - _log_b(i, float(u)) for u in grid]
    first = next((n for n, v in enumerate(diff) if v >= 0.0), None)
    if first is None:  # cannot happen (A_i outgrows B_i: Δ_j ~ e^{j(j−1)u/2}); refuse rather than guess
        raise ArithmeticError(f"no crossing of the order-{i} branches found on u ∈ [1e-8, 64]")
    lo, hi = (0.0 if first == 0 else float(grid[first - 1])), float(grid[first])
    for _ in range(200):  # bisection to the first crossing; hi keeps A_i ≥ B_i
        mid = 0.5 * (lo + hi)
        if _log_a(i, mid) - _log_b(i, mid) >= 0.0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-13 * hi:
            break
    gap = math.exp(_log_a(i, hi)) - math.exp(_log_b(i, hi))
    slope = _a_slope(i, hi) - i * (i - 1) / 2.0 * math.exp(_log_b(i, hi))
    # a relative margin on s keeps the joint convex despite the rounding of the slopes
    return hi, max(gap, 0.0), max(0.0, slope) * (1.0 + 1e-6) + 1e-12


def _log_t_all(u: float, i_max: int) -> np.ndarray:
    """ln of the convex majorants of t_i(u), i = 2 … i_max (index i − 2; module doc), from one set of Δ_j(u)."""
    out = np.empty(i_max - 1)
    if u <= _LN2:
        out[0] = _LN4 + math.log(math.expm1(u)) if u > 0.0 else -math.inf
    else:
        out[0] = u + _LN2 + math.log1p(2.0 * (u - _LN2) * math.exp(-u))  # ln(2e^u + 4(u − ln 2)), no overflow
    d = _log_deltas(u, i_max + 1)  # ln Δ_j at index j − 1, j ≤ i_max + 1
    for i in range(3, i_max + 1):
        u_star, gap, s = _joint(i)
        if u <= u_star:
            out[i - 2] = _LN4 + d[i - 1] if i % 2 == 0 else _LN2 + np.logaddexp(d[i - 2], d[i])
        else:
            lb = _log_b(i, u)
            out[i - 2] = lb + math.log1p((gap + s * (u - u_star)) * math.exp(-lb))
    return out


def log_psi_orders(scheme: str, rate: float, u: float, orders) -> np.ndarray:
    """ln ψ_α(u) ≥ (α−1)·ε_α of the sampled Gaussian at noise multiplier 1/√u, convex in u (module doc), for every
    integer order α ≥ 2 of ``orders`` at once.

    Parameters: ``scheme`` "poisson" or "without-replacement", ``rate`` q ∈ (0, 1], ``u`` = 1/z² ≥ 0 (finite).
    Returns ``[n] float64`` nats (0 at u = 0).
    """
    q, u = float(rate), float(u)
    a = [int(x) for x in orders]
    if u == 0.0:
        return np.zeros(len(a))
    if q == 1.0:
        return np.array([k * (k - 1) * u / 2.0 for k in a])
    if scheme == "poisson":
        sigma = 1.0 / math.sqrt(u)
        return np.array([float(_dpa_rdp._compute_log_a_int(q, sigma, k)) for k in a])
    lt = _log_t_all(u, max(a))
    i = np.arange(2, max(a) + 1)
    out = np.empty(len(a))
    for n, k in enumerate(a):
        out[n] = np.logaddexp.reduce(np.concatenate([[0.0], i[: k - 1] * math.log(q) + _log_combs(k) + lt[: k - 1]]))
    return out


@lru_cache(maxsize=None)
def _log_combs(k: int) -> np.ndarray:
    """ln C(k, j), j = 2 … k (the same for every quadrature node, so computed once per order)."""
    out = np.array([_log_comb(k, j) for j in range(2, k + 1)])
    out.setflags(write=False)
    return out


def log_psi(scheme: str, rate: float, u: float, alpha: int) -> float:
    """ln ψ_α(u) at one integer order α ≥ 2 (:func:`log_psi_orders`)."""
    return float(log_psi_orders(scheme, rate, u, [alpha])[0])


def growth_constant(scheme: str, rate: float, alpha: int) -> float:
    """c with ψ_α(u) ≤ c·e^{α(α−1)u/2} for every u ≥ 0 (the quadrature's tail bound in :mod:`privacy.floras_tight`).

    Poisson: c = 1 (ψ_α is the exact moment, never above the unsampled one). Without replacement: the term bounds
    t_2 ≤ 6e^u and, for i ≥ 3, t_i ≤ max{A_i(u*_i), 2 + gap_i + 2s_i/(i(i−1))}·e^{i(i−1)u/2} (u − u* ≤ e^{…}/…)."""
    q, alpha = float(rate), int(alpha)
    if scheme == "poisson" or q == 1.0:
        return 1.0
    c = 1.0 + q * q * math.comb(alpha, 2) * 6.0
    for i in range(3, alpha + 1):
        u_star, gap, s = _joint(i)
        c += q**i * math.comb(alpha, i) * max(math.exp(_log_a(i, u_star)), 2.0 + gap + 2.0 * s / (i * (i - 1)))
    return c
