"""Conditional-Gaussian RDP of the sampled FLORAS round (model §9.5): a pure function.

Given V = Σ_{j inactive} 1/w_j² the FLORAS release is Gaussian of variance V, V ~ Lévy(0, γ²)
independent of the data (model §6.1); (ŝ/b, V) is the sampled Gaussian mechanism with noise
multiplier √V/S, and ŝ/b alone is its post-processing. With V = γ²/Z², Z ~ N(0, 1)::

    RDP_α ≤ (1/(α−1))·ln E_Z[exp(c_α(γ/(S|Z|)))],   c_α(z) = (α−1)·ρ_α(z),

ρ_α the tight sampled-Gaussian RDP (:mod:`privacy.sampled_gaussian`). Without sampling
c_α = α(α−1)S²Z²/(2γ²) and the expectation is the closed form of model §7.2. Fractional orders
with sampling use the convexity of c_α in α (interpolation between the neighbouring integers,
an upper bound; WBK 2019 Cor. 10), because dp_accounting's fractional-order Poisson series does
not converge for every noise multiplier the V-average visits; the caller takes the minimum with
the unsampled closed form, which is finite for every α with α(α−1)S² < γ².

Finite orders: sampling never increases the divergence, so c_α(γ/(Sz)) ≤ α(α−1)S²z²/(2γ²) and
the integrand φ(z)e^{c_α} ≤ φ(z)·exp((1−κ)z²/2), κ = 1 − α(α−1)S²/γ²: the mean is finite when
κ > 0. When κ ≤ 0 the sampled mixture still contains the unsampled term with weight ≥ q^α > 0,
whose mean diverges, so ∞ is returned: the finite orders are exactly α(α−1)S² < γ².

Numerics (log space, stable): E − 1 = 2∫₀^∞ φ(z)·expm1(c_α) dz is integrated on [0, z_max] by
composite Gauss–Legendre (panels [0, 1], [1, 2], [2, 4], … up to z_max, 12 nodes each, all orders
at once; the integrand is smooth),
the integrand formed as exp(ln φ + ln expm1(c_α)) so nothing overflows. The quadrature error is
estimated by the difference to the 6-node rule on the same panels (the coarse rule's error, far
larger than the fine rule's), and that estimate is added. z_max = 9/√κ_min and the neglected tail is
bounded in closed form by 2∫_{z_max}^∞ φ(z)e^{(1−κ)z²/2} dz = (2/√κ)·Φ̄(√κ·z_max) ≤ 2.3·10⁻¹⁹/√κ.
With several pilot blocks the integrand is the convex majorant ψ_α ≤ c·e^{α(α−1)u/2}
(:func:`privacy.sampled_gaussian_convex.growth_constant`), and the tail bound is multiplied by c.
The returned curve is ln(E + err)/(α−1) with err = quadrature error estimate + tail bound,
so the documented numerical error is added (rounded up), never subtracted; ``error`` reports the
resulting bound on |RDP − computed| in nats.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from privacy.sampled_gaussian import log_moment, log_moment_int  # noqa: F401
from privacy.sampled_gaussian_convex import growth_constant, log_psi_orders

__all__ = ["cauchy_sampled_rdp"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_TAIL_SIGMAS = 9.0
#: Orders above these are left at ∞ here (the caller's generic bound covers them): dp_accounting's
#: without-replacement bound costs O(α²) per node and order, and such orders rarely attain ε.
_WOR_MAX_ORDER, _POISSON_MAX_ORDER = 16.0, 32.0
_NODES = 12  # Gauss–Legendre nodes per panel


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """ln(e^x − 1) elementwise for x ≥ 0 (−∞ at 0)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(x > 30.0, x, np.log(np.expm1(np.clip(x, 0.0, 30.0))))


def _v_average(log_moments, kappa: np.ndarray, growth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ln E_Z[e^{c(Z)}] rounded up, its error bound) per order, c = ``log_moments(z)`` [n] (module doc)."""
    z_max = _TAIL_SIGMAS / math.sqrt(float(kappa.min()))

    def integrand(z: float) -> np.ndarray:
        return 2.0 * np.exp(-0.5 * z * z - _LOG_SQRT_2PI + _log_expm1(log_moments(z)))

    # panels [0, 1], [1, 2], [2, 4], … up to z_max: fine where the mass is, wide in the slow tails
    inner = [2.0**k for k in range(int(math.floor(math.log2(z_max))) + 1) if 2.0**k < z_max]
    edges = np.array([0.0, *inner, z_max])

    def rule(n: int) -> np.ndarray:
        x, w = np.polynomial.legendre.leggauss(n)
        total = np.zeros(kappa.size)
        for lo, hi in zip(edges[:-1], edges[1:]):
            half = 0.5 * (hi - lo)
            for xi, wi in zip(x, w):
                total += half * wi * integrand(lo + half * (1.0 + xi))
        return total

    val = rule(_NODES)
    qerr = np.abs(val - rule(_NODES // 2))  # the coarse rule's error: a conservative estimate of the fine one's
    val = np.maximum(val, 0.0)
    tail = growth * 2.0 * np.exp(log_ndtr(-np.sqrt(kappa) * z_max)) / np.sqrt(kappa)
    bound = qerr + tail + 4.0 * np.finfo(float).eps * val
    up = np.log1p(val + bound)
    return up, up - np.log1p(np.maximum(val - bound, 0.0))


def cauchy_sampled_rdp(orders, *, scheme: str, rate: float, sensitivity: float,
                       gamma: float, blocks: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(RDP curve, numerical error bound) [n] float64 of the sampled FLORAS round (model §9.5).

    Parameters
    ----------
    orders : [n] float64, α > 1
    scheme : "poisson" (add/remove, rate q) or "without-replacement" (replace-one, q = K/M)
    rate : float in (0, 1]
    sensitivity : S ≥ 0, ℓ2 sensitivity of Σ s_k/b under the scheme's relation (dimensionless)
    gamma : γ = N − K ≥ 0
    blocks : B ≥ 1 pilot blocks per round, each with its own independent V_m (model §9.5, "Several pilots").
        B > 1 averages the convex majorant ψ_α of :mod:`privacy.sampled_gaussian_convex` instead of the tight
        moment (Jensen then covers every split of the sensitivity over the blocks), at integer orders only;
        a fractional order interpolates (α−1)·RDP between its integer neighbours (convex in α for the round's
        own pair of output laws, WBK 2019 Cor. 10). The curve does not depend on B beyond B > 1.

    The quadrature is a fixed composite Gauss–Legendre rule (no tolerance to set); its error
    estimate and the tail bound are added to the curve and returned as ``error`` (module doc).
    """
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    S, g, q = float(sensitivity), float(gamma), float(rate)
    if isinstance(blocks, bool) or not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise ValueError(f"blocks must be an integer ≥ 1 (got {blocks!r})")
    out = np.full_like(a, math.inf)
    err = np.zeros_like(a)
    if S == 0.0:
        return np.zeros_like(a), err
    if g == 0.0:
        return out, err
    cap = _WOR_MAX_ORDER if scheme == "without-replacement" else _POISSON_MAX_ORDER
    if blocks > 1:
        return _blocks_rdp(a, scheme=scheme, q=q, S=S, g=g, cap=cap)
    kappa = 1.0 - a * (a - 1.0) * (S / g) ** 2
    fin = np.flatnonzero((kappa > 0.0) & (a <= cap))
    if fin.size == 0:
        return out, err
    af, kf = a[fin], kappa[fin]
    int_orders = sorted({int(x) for x in np.concatenate([np.floor(af), np.ceil(af)]) if x >= 2})

    def log_moments(z: float) -> np.ndarray:
        if z == 0.0:
            return np.zeros(af.size)
        nm = g / (S * z)
        ints = {k: log_moment_int(scheme, q, nm, k) for k in int_orders}
        ints[1] = 0.0
        res = np.empty(af.size)
        for i, al in enumerate(af):
            if al.is_integer():
                res[i] = ints[int(al)]
            elif q == 1.0:
                res[i] = log_moment(scheme, q, nm, al)
            else:
                # the cumulant generating function (α−1)D_α is convex in α (for any pair of
                # distributions), so interpolating between integers bounds it from above
                # (WBK 2019, arXiv:1808.00087, Cor. 10; dp_accounting does this for WoR)
                lo, hi = math.floor(al), math.ceil(al)
                t = al - lo
                res[i] = (1.0 - t) * ints[lo] + t * ints[hi]
        # never above the unsampled moment (sampling cannot hurt); never below 0 (rounding)
        return np.clip(res, 0.0, af * (af - 1.0) / (2.0 * nm * nm))

    up, e = _v_average(log_moments, kf, np.ones(af.size))
    out[fin], err[fin] = up / (af - 1.0), e / (af - 1.0)
    return out, err


def _blocks_rdp(a: np.ndarray, *, scheme: str, q: float, S: float, g: float, cap: float):
    """The B > 1 curve of :func:`cauchy_sampled_rdp`: V-average of ln ψ_k at integer orders k, then interpolation."""
    out, err = np.full_like(a, math.inf), np.zeros_like(a)
    need = {int(x) for x in np.concatenate([np.floor(a), np.ceil(a)]) if 2 <= x <= cap}
    ints = np.array(sorted(k for k in need if k * (k - 1) * (S / g) ** 2 < 1.0), dtype=np.int64)
    if ints.size == 0:
        return out, err
    kappa = 1.0 - ints * (ints - 1.0) * (S / g) ** 2
    growth = np.array([growth_constant(scheme, q, int(k)) for k in ints])
    up, e = _v_average(lambda z: log_psi_orders(scheme, q, (S * z / g) ** 2, ints), kappa, growth)
    L = {1: (0.0, 0.0), **{int(k): (float(u), float(x)) for k, u, x in zip(ints, up, e)}}
    for n, al in enumerate(a):
        lo, hi = math.floor(al), math.ceil(al)
        if al > cap or lo not in L or hi not in L:
            continue
        t = al - lo
        out[n] = ((1.0 - t) * L[lo][0] + t * L[hi][0]) / (al - 1.0)
        err[n] = ((1.0 - t) * L[lo][1] + t * L[hi][1]) / (al - 1.0)
    return out, err
