"""The Rényi bound of FLORAS's release with N_r receive antennas (model §9.5, "Several antennas"): pure functions.

Given the pilots the release ŝ/b is Gaussian of variance V = Σ_{j=1}^{γ} Y_j, Y_j = 1/X_j, X_j ~ χ²_{N_r} i.i.d.,
independent of the data (:mod:`privacy.antenna_noise`). Revealing V and averaging the Gaussian divergence over it,
as model §7.2 does for one antenna::

    ε(α) = ln M(α(α−1)S²/2) / (α − 1),        M(c) = E[e^{c/V}].

M is the moment generating function of 1/V. With e^{c/v} − 1 = ∫₀^∞ e^{−sv}·√(c/s)·I₁(2√(cs)) ds (the series
Σ_n cⁿ/(n!·vⁿ) with 1/vⁿ = ∫ s^{n−1}e^{−sv} ds/(n−1)!) and E e^{−sV} = L(s)^γ (Tonelli: every term is positive)::

    M(c) = 1 + 2√c·∫₀^∞ L(u²)^γ·I₁(2√c·u) du,      L(s) = E e^{−sY} = 2(s/2)^{a/2}·K_a(√(2s))/Γ(a),  a = N_r/2,

exact for every N_r. L(u²)^γ decays as e^{−γ√2·u} times a power of u and I₁(2√c·u) grows as e^{2√c·u}, so M(c) is
finite exactly when c < γ²/2: the orders with α(α−1)S² < γ², the one-antenna ceiling for every N_r. N_r = 1 gives
L(s) = e^{−√(2s)} and M(c) = (1 − 2c/γ²)^{−1/2}, model §7.2's closed form; γ = 1 gives V = 1/χ²_{N_r} and
M(c) = (1 − 2c)^{−N_r/2} (both are tests).

Poisson sampling at rate q (add/remove): given V the round is the sampled Gaussian mechanism with noise multiplier
√V/S, whose integer-order moment is Σ_{l=0}^{α} C(α, l)(1 − q)^{α−l} q^l e^{l(l−1)S²/(2V)} (Mironov, Talwar & Zhang
2019); its V-average is the same sum over M(l(l−1)S²/2). Fractional orders interpolate the cumulant (α − 1)ε(α)
between the neighbouring integers (convex in α; WBK 2019 Cor. 10). Sampling without replacement needs no curve of its
own: the generic bound (WBK 2019 Thm 9) applied to the curve above is already the V-average of that bound, because it
is a positive combination of the base moments e^{(j−1)ε(j)} = M(j(j−1)S²/2) (the minimum in its j = 2 term taken
outside the average, which only raises it).

Numerics: the integral in t = ln u by composite Gauss–Legendre (panels of width ½ in t, 16 nodes; the 8-node rule's
difference added as the error, and a bound on the integrand's floating-point error: its logarithm cancels terms of
size γ√2·u down to κu), from u_lo = 10⁻⁹/(γ·√N_r) (below it the integrand is ≤ 2c·u·e^{2√c·u}: at most
c·u_lo²·e^{2√c·u_lo} is left out, added) to the first panel edge whose tail bound is below 10⁻¹⁷ of the value. The
tail bound uses two monotonicities: √x·e^x·K_a(x) does not increase for a ≥ ½, so L(u²) ≤ L(u₀²)·(u/u₀)^{a−½}·
e^{−√2(u−u₀)} for u ≥ u₀; and I₁ ≤ I_{½}, so I₁(y) ≤ e^y/√(2πy). Their product integrates to an upper incomplete
gamma function. Every numerical error is added to M (rounded up), never subtracted.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaincc, gammaln, ive, logsumexp

from privacy.antenna_noise import ASYMPTOTIC, log_laplace
from privacy.orders import check_orders

__all__ = ["log_mgf_inverse_variance", "antenna_rdp", "antenna_poisson_sampled_rdp"]

_NODES = 16
_PANEL = 0.5  # panel width in t = ln u
_REL_TAIL = 1e-17
_MAX_PANELS = 1200  # t up to ln u_lo + 600 (u ~ 10²⁵⁰): far beyond any order's tail (u ~ (p + 60)/κ)
_BATCH = 24  # panels evaluated at once


def _check_whole(name: str, value, least: int) -> int:
    if isinstance(value, bool) or not float(value).is_integer() or value < least:
        raise ValueError(f"{name} must be a whole number ≥ {least} (got {value!r})")
    return int(value)


def _log_ive1(y: np.ndarray) -> np.ndarray:
    """ln(e^{−y}·I₁(y)) elementwise for y > 0; above :data:`privacy.antenna_noise.ASYMPTOTIC`·5 the first three terms
    of the Hankel expansion (1/√(2πy))·(1 − 3/(8y) − 15/(2(8y)²)) (the library's routine gives up near 10⁹)."""
    y = np.asarray(y, dtype=np.float64)
    big = y > ASYMPTOTIC * 5.0
    yb = np.where(big, y, 1.0)
    series = 1.0 - 3.0 / (8.0 * yb) - 15.0 / (2.0 * (8.0 * yb) ** 2)
    return np.where(big, -0.5 * np.log(2.0 * math.pi * yb) + np.log(series), np.log(ive(1, np.where(big, 1.0, y))))


def _log_laplace(u: np.ndarray, a: float) -> np.ndarray:
    """ln L(u²) (:func:`privacy.antenna_noise.log_laplace` at s = u²)."""
    return log_laplace(np.asarray(u, dtype=np.float64) ** 2, a)


@functools.lru_cache(maxsize=4096)
def log_mgf_inverse_variance(c: float, gamma: int, antennas: int) -> tuple[float, float]:
    """(ln M(c) rounded up, its error bound in nats) for M(c) = E[e^{c/V}] (module doc); (∞, 0) when c ≥ γ²/2.

    ``c`` ≥ 0 in (ŝ/b)² units (V is, so c/V is a number), ``gamma`` = γ ≥ 1 inactive sequences, ``antennas`` = N_r ≥ 1.
    """
    g = _check_whole("gamma", gamma, 1)
    nr = _check_whole("antennas", antennas, 1)
    c = float(c)
    if not (c >= 0.0 and math.isfinite(c)):
        raise ValueError(f"c must be a finite number ≥ 0 (got {c!r})")
    if c == 0.0:
        return 0.0, 0.0
    kappa = g * math.sqrt(2.0) - 2.0 * math.sqrt(c)
    if 2.0 * c >= g * g or kappa <= 0.0:
        return math.inf, 0.0
    a, rc = nr / 2.0, math.sqrt(c)
    p = g * (a - 0.5)  # the power of u in the bound on L(u²)^γ
    u_lo = 1e-9 / (g * math.sqrt(nr))
    head = c * u_lo * u_lo * math.exp(2.0 * rc * u_lo)

    def log_integrand(t: np.ndarray) -> np.ndarray:  # in t = ln u: 2√c·u·L(u²)^γ·I₁(2√c·u)
        u = np.exp(t)
        y = 2.0 * rc * u
        return math.log(2.0 * rc) + t + g * _log_laplace(u, a) + _log_ive1(y) + y

    def log_rounding(t: np.ndarray) -> np.ndarray:
        """ln of a bound on the floating-point error of the integrand: its logarithm sums terms of size γ√2·u and
        2√c·u that cancel down to κu, each carrying a relative rounding error of a few ε."""
        u = np.exp(t)
        return np.log(16.0 * np.finfo(float).eps * (g * (math.sqrt(2.0) * u + abs(a * t) + 2.0) + 2.0 * rc * u + abs(t) + 8.0))

    def log_tail(u0: np.ndarray) -> np.ndarray:  # ln of the bound on ∫_{u0}^∞ (module doc), elementwise
        m = p + 0.5  # u^{p − ½} from I₁'s bound, times the du
        upper = np.maximum(gammaincc(m, kappa * u0), 1e-300)  # regularised upper incomplete gamma Q(m, κu₀)
        return (math.log(2.0 * rc) - 0.5 * math.log(4.0 * math.pi * rc) + g * _log_laplace(u0, a) - p * np.log(u0)
                + g * math.sqrt(2.0) * u0 + np.log(upper) + gammaln(m) - m * math.log(kappa))

    x16, w16 = np.polynomial.legendre.leggauss(_NODES)
    x8, w8 = np.polynomial.legendre.leggauss(_NODES // 2)
    half = 0.5 * _PANEL
    t0 = math.log(u_lo)
    fine, coarse, rounding = [np.empty(0)], [np.empty(0)], [np.empty(0)]
    for first in range(0, _MAX_PANELS, _BATCH):
        mids = t0 + (np.arange(first, first + _BATCH) + 0.5) * _PANEL  # [P] panel centres
        nodes = mids[:, None] + half * x16  # [P, 16]
        values = log_integrand(nodes)
        fine.append(logsumexp(values, b=half * w16, axis=1))
        rounding.append(logsumexp(values + log_rounding(nodes), b=half * w16, axis=1))
        coarse.append(logsumexp(log_integrand(mids[:, None] + half * x8), b=half * w8, axis=1))
        so_far = np.logaddexp.accumulate(np.concatenate(fine))[first:]  # ln ∫ up to each of these panels' ends
        done = np.flatnonzero(log_tail(np.exp(mids + half)) < so_far + math.log(_REL_TAIL))
        if done.size:
            n = first + int(done[0]) + 1  # panels used
            break
    else:  # pragma: no cover - the tail bound falls below any level once u passes (p + 60)/κ
        raise RuntimeError(f"the quadrature of E[e^(c/V)] did not converge (c = {c}, γ = {g}, N_r = {nr})")
    # in logarithms throughout: ln M reaches hundreds of nats near the ceiling
    lf, lc = np.concatenate(fine)[:n], np.concatenate(coarse)[:n]
    log_val = float(logsumexp(lf))
    rel = (float(np.sum(np.exp(lf - log_val) * np.abs(np.expm1(lc - lf))))  # the coarse rule's difference
           + float(np.exp(logsumexp(np.concatenate(rounding)[:n]) - log_val))
           + float(np.exp(log_tail(np.array([math.exp(t0 + n * _PANEL)]))[0] - log_val))
           + head * math.exp(-log_val) + 8.0 * np.finfo(float).eps * n)
    up = float(np.logaddexp(0.0, log_val + math.log1p(rel)))
    low = float(np.logaddexp(0.0, log_val + math.log1p(-rel))) if rel < 1.0 else 0.0
    return up, up - low


def antenna_rdp(orders, *, sensitivity: float, gamma: int, antennas: int) -> np.ndarray:
    """ε(α) = ln M(α(α−1)S²/2)/(α − 1) [nats] per order (module doc), ∞ where α(α−1)S² ≥ γ²."""
    a = check_orders(orders)
    S = float(sensitivity)
    if not (S >= 0.0 and math.isfinite(S)):
        raise ValueError(f"sensitivity must be a finite number ≥ 0 (got {sensitivity!r})")
    if S == 0.0:
        return np.zeros_like(a)
    return np.array([log_mgf_inverse_variance(float(al * (al - 1.0) * S * S / 2.0), gamma, antennas)[0] / (al - 1.0)
                     for al in a])


def _poisson_log_moment(k: int, q: float, S: float, gamma: int, antennas: int) -> float:
    """ln Σ_{l=0}^{k} C(k, l)(1−q)^{k−l} q^l M(l(l−1)S²/2), rounded up (module doc)."""
    terms = []
    for l in range(k + 1):
        if l >= 2 and q == 0.0:
            break
        log_w = (gammaln(k + 1.0) - gammaln(l + 1.0) - gammaln(k - l + 1.0)
                 + (k - l) * (math.log1p(-q) if q < 1.0 else (0.0 if k == l else -math.inf))
                 + (l * math.log(q) if l else 0.0))
        if log_w == -math.inf:
            continue
        m = log_mgf_inverse_variance(l * (l - 1.0) * S * S / 2.0, gamma, antennas)[0] if l >= 2 else 0.0
        terms.append(log_w + m)
    return float(logsumexp(terms))


def antenna_poisson_sampled_rdp(orders, *, rate: float, sensitivity: float, gamma: int, antennas: int) -> np.ndarray:
    """The Poisson-sampled (add/remove, rate q) curve [nats] per order (module doc); ∞ where an integer order needed
    has k(k−1)S² ≥ γ². Fractional orders interpolate the cumulant between ⌊α⌋ and ⌈α⌉ (⌊α⌋ = 1 contributes 0)."""
    a = check_orders(orders)
    q, S = float(rate), float(sensitivity)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"rate must be in (0, 1] (got {rate!r})")
    if S == 0.0:
        return np.zeros_like(a)
    g = _check_whole("gamma", gamma, 1)
    cache: dict[int, float] = {1: 0.0}

    def cumulant(k: int) -> float:
        if k not in cache:
            cache[k] = math.inf if k * (k - 1.0) * S * S >= g * g else _poisson_log_moment(k, q, S, g, antennas)
        return cache[k]

    out = np.full_like(a, math.inf)
    for i, al in enumerate(a):
        lo, hi = math.floor(al), math.ceil(al)
        if lo == hi:
            out[i] = cumulant(lo) / (al - 1.0)
        else:
            t = al - lo
            out[i] = ((1.0 - t) * cumulant(lo) + t * cumulant(hi)) / (al - 1.0)
    return out
