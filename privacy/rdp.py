"""Rényi-DP curves of the mechanisms the simulator accounts for (model §7.2–§7.3): pure functions.

Every curve function takes ``orders``, a 1-D float64 array of Rényi orders α > 1, and returns a
float64 array of the same shape holding ε(α) in nats; ``math.inf`` where the bound diverges.
Neighbouring relation: the curves of a base mechanism hold for any two inputs whose releases
differ by at most ``sensitivity`` in ℓ2 norm (the relation is fixed by whoever derives the
sensitivity, see :mod:`privacy.sensitivity`); each sampling bound states the relation its source
assumes.

The generic sampling bounds are in :mod:`privacy.subsampling` (re-exported here).
Conversions to (ε, δ) and the Monte Carlo check of the multivariate Cauchy divergence live here
too. Nothing here holds state.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate

from .orders import check_orders
from .subsampling import poisson_subsampled_rdp, wor_subsampled_rdp  # re-exported: the generic sampling bounds

__all__ = [
    "DEFAULT_ORDERS",
    "INTEGER_ORDERS",
    "CONVERSIONS",
    "check_orders",
    "cauchy_rdp_bound",
    "cauchy_scalar_rdp",
    "cauchy_scalar_eps_inf",
    "gaussian_rdp",
    "wor_subsampled_rdp",
    "poisson_subsampled_rdp",
    "epsilon_from_rdp",
    "delta_from_rdp",
    "cauchy_divergence_monte_carlo",
]

#: The integer orders of :data:`DEFAULT_ORDERS`: the generic sampling bounds are stated there.
INTEGER_ORDERS = np.arange(2.0, 65.0)

#: 189 orders: 30 just above 1 (the Cauchy bound is finite only for α(α−1) < γ²/S²), the
#: tenths 1.1…10.9 (dp_accounting's default grid there: the Gaussian and sampled-Gaussian optimum
#: often falls between two integers below 11, where integer orders alone inflate ε by up to 11 %),
#: the integers 2…64 and 7 large ones. The grid contains dp_accounting's ``DEFAULT_RDP_ORDERS``
#: (1.1…10.9, 11…63, 128, 256, 512, 1024), so on curves computed by the same functions (sampled
#: Gaussian) ε is never above dp_accounting's ``RdpAccountant`` (model §7.3). Every curve is a
#: valid upper bound at a fractional order: bounds stated only at integer orders are never
#: evaluated there but taken at ⌈α⌉ (generic sampling bounds, :mod:`privacy.subsampling`) or by
#: convex interpolation of the cumulant (α−1)ε(α) between the neighbouring integers (sampled
#: Gaussian without replacement, sampled FLORAS; WBK 2019 Cor. 10), so adding orders only lowers ε.
DEFAULT_ORDERS = np.unique(np.concatenate([
    1.0 + np.geomspace(1e-3, 0.9, 30),
    1.0 + np.arange(1, 100) / 10.0,  # the very floats of dp_accounting's 1 + x/10
    INTEGER_ORDERS,
    np.array([80.0, 96.0, 128.0, 192.0, 256.0, 512.0, 1024.0]),
]))

#: Conversions from RDP to (ε, δ).
CONVERSIONS = ("standard", "tight")


def _check_nonneg(name: str, value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number ≥ 0 (got {value!r})")
    return value


# --------------------------------------------------------------------------------------------
# Base mechanisms
# --------------------------------------------------------------------------------------------


def cauchy_rdp_bound(orders, *, sensitivity: float, gamma: float) -> np.ndarray:
    """Per-round RDP upper bound of the FLORAS release under T1 (model §7.2, derived).

    The release is ŝ/b = Σ_k s_k/b + e, e isotropic multivariate Cauchy of scale γ. Revealing
    V (e | V ~ N(0, V·I_d), 1/V ~ Gamma(½, rate γ²/2)) and averaging the Gaussian divergence
    exp((α−1)·αS²/(2V)) over V gives, for every dimension d::

        ε(α) = −ln(1 − α(α−1)S²/γ²) / (2(α−1))     if α(α−1)S² < γ²,  else ∞.

    Parameters
    ----------
    orders : [n] float64, α > 1
    sensitivity : float ≥ 0
        S, ℓ2 sensitivity of Σ_k s_k/b (dimensionless: transmit units divided by b = √P).
    gamma : float ≥ 0
        γ = N − K, the scale of the Cauchy noise. γ = 0 gives ε = ∞ (no noise).
    """
    a = check_orders(orders)
    S = _check_nonneg("sensitivity", sensitivity)
    g = _check_nonneg("gamma", gamma)
    if S == 0.0:
        return np.zeros_like(a)
    out = np.full_like(a, math.inf)
    if g == 0.0:
        return out
    x = a * (a - 1.0) * (S / g) ** 2
    ok = x < 1.0
    out[ok] = -np.log1p(-x[ok]) / (2.0 * (a[ok] - 1.0))
    return out


def cauchy_scalar_eps_inf(*, sensitivity: float, gamma: float) -> float:
    """Pure-DP level of the 1-D Cauchy mechanism: sup ln p/q = arccosh(1 + S²/(2γ²)) [nats]."""
    S = _check_nonneg("sensitivity", sensitivity)
    g = _check_nonneg("gamma", gamma)
    if S == 0.0:
        return 0.0
    if g == 0.0:
        return math.inf
    w = 0.5 * (S / g) ** 2
    return math.log1p(w + math.sqrt(w * (2.0 + w)))


def _legendre_log_int(n_max: int, w: float) -> np.ndarray:
    """ln P_n(1 + w) for n = 0..n_max by Bonnet's recurrence on the ratios u_n = P_n/P_{n−1} − 1.

    (n+1)P_{n+1} = (2n+1)zP_n − nP_{n−1} with z = 1 + w becomes
    u_{n+1} = ((2n+1)w + n·u_n/(1+u_n)) / (n+1), u_1 = w: no cancellation for small w, no
    overflow for large n (the dominant solution for z > 1, so the forward recurrence is stable).
    """
    out = np.zeros(n_max + 1)
    u = w
    acc = 0.0
    for n in range(1, n_max + 1):
        if n > 1:
            m = n - 1
            u = ((2 * m + 1) * w + m * u / (1.0 + u)) / (m + 1)
        acc += math.log1p(u)
        out[n] = acc
    return out


def _legendre_log_quad(nu: float, w: float) -> float:
    """ln P_ν(1 + w) for real ν > 0 by Laplace's integral P_ν(z) = (1/π)∫₀^π (z + √(z²−1)cos φ)^ν dφ."""
    B = math.sqrt(w * (2.0 + w))
    t = math.log1p(w + B)  # ln(A + B), A = 1 + w: the integrand's peak at φ = 0
    if nu * t <= 1.0:
        # E − 1 = (1/π)∫ expm1(ν ln(1 + w + B cos φ)) dφ: keeps full relative precision when ε ≪ 1.
        f = lambda phi: math.expm1(nu * math.log1p(w + B * math.cos(phi)))
        with warnings.catch_warnings():
            # quad flags round-off when the integral is far below the integrand's magnitude
            # (δ ≪ 1); the result is checked against mpmath's Legendre function in the tests.
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            val, _ = integrate.quad(f, 0.0, math.pi, epsabs=0.0, epsrel=1e-12, limit=200)
        return math.log1p(val / math.pi)
    # ln E = ν t + ln((1/π)∫ exp(ν(ln(1 + w + B cos φ) − t)) dφ); the integrand ≤ 1, width ~ 1/√(ν).
    width = min(math.pi, 8.0 / math.sqrt(nu * B / (1.0 + w + B)))
    f = lambda phi: math.exp(nu * (math.log1p(w + B * math.cos(phi)) - t))
    pts = [p for p in (width / 8.0, width / 2.0, width) if p < math.pi]
    val, _ = integrate.quad(f, 0.0, math.pi, epsabs=0.0, epsrel=1e-12, limit=400, points=pts or None)
    return nu * t + math.log(val / math.pi)


def cauchy_scalar_rdp(orders, *, sensitivity: float, gamma: float) -> np.ndarray:
    """Exact RDP of the one-dimensional Cauchy mechanism (scalar release), model §7.2.

    D_α(Cauchy(0, γ) ‖ Cauchy(S, γ)) = ln E/(α−1), E = (1/2π)∫(A + B cos φ)^{α−1} dφ
    = P_{α−1}(1 + δ²/2), δ = S/γ, A = 1 + δ²/2, B = √(A² − 1) (derived: x = γ tan(φ/2) maps the
    real line onto (−π, π) with p(x)dx = dφ/2π; P_ν is the Legendre function, Laplace's integral).
    Integer orders use Bonnet's recurrence (exact to rounding); others use adaptive quadrature
    in log space. Checks: α = 2 gives ln(1 + δ²/2) = ln(1 + χ²); α → 1 gives ln(1 + δ²/4).
    """
    a = check_orders(orders)
    S = _check_nonneg("sensitivity", sensitivity)
    g = _check_nonneg("gamma", gamma)
    if S == 0.0:
        return np.zeros_like(a)
    if g == 0.0:
        return np.full_like(a, math.inf)
    w = 0.5 * (S / g) ** 2
    out = np.empty_like(a)
    is_int = a == np.round(a)
    if np.any(is_int):
        n = (a[is_int] - 1.0).astype(np.int64)
        logp = _legendre_log_int(int(n.max()), w)
        out[is_int] = logp[n] / n
    for i in np.flatnonzero(~is_int):
        nu = a[i] - 1.0
        out[i] = _legendre_log_quad(nu, w) / nu
    return out


def gaussian_rdp(orders, *, noise_std: float, sensitivity: float = 1.0) -> np.ndarray:
    """RDP of the Gaussian mechanism N(0, σ²I): ε(α) = αS²/(2σ²) (Mironov 2017, arXiv:1702.07476, Prop. 7)."""
    a = check_orders(orders)
    S = _check_nonneg("sensitivity", sensitivity)
    sigma = _check_nonneg("noise_std", noise_std)
    if S == 0.0:
        return np.zeros_like(a)
    if sigma == 0.0:
        return np.full_like(a, math.inf)
    return a * S * S / (2.0 * sigma * sigma)


# --------------------------------------------------------------------------------------------
# Conversion to (ε, δ)
# --------------------------------------------------------------------------------------------


def _check_conversion(method: str) -> None:
    if method not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {{{', '.join(CONVERSIONS)}}} (got {method!r})")


def _check_delta(delta: float) -> float:
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    return delta


def epsilon_from_rdp(orders, rdp, *, delta: float, conversion: str = "tight") -> tuple[float, int]:
    """Smallest ε over the orders such that the RDP curve implies (ε, δ)-DP.

    ``standard``: ε = min_α RDP(α) + ln(1/δ)/(α − 1) (Mironov 2017, arXiv:1702.07476, Prop. 3).
    ``tight``: ε = min_α RDP(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1) (Canonne, Kamath & Steinke
    2020, arXiv:2004.00010, Prop. 12; Balle et al. 2020, arXiv:1905.09982, Thm 21), and ε = 0
    where δ ≥ √(1 − e^{−RDP(α)}) (total variation ≤ √(1 − e^{−KL}), Bretagnolle & Huber 1979,
    with KL ≤ RDP(α)).

    Returns (ε ≥ 0 or ∞, index of the order that attains it).
    """
    a = check_orders(orders)
    r = np.asarray(rdp, dtype=np.float64)
    if r.shape != a.shape:
        raise ValueError(f"rdp must have the shape of orders {a.shape} (got {r.shape})")
    if np.any(np.isnan(r)):
        raise ValueError("rdp must not contain NaN")
    delta = _check_delta(delta)
    _check_conversion(conversion)
    with np.errstate(invalid="ignore", over="ignore"):
        if conversion == "standard":
            eps = r + math.log(1.0 / delta) / (a - 1.0)  # Mironov 2017, Prop. 3
        else:
            eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)  # CKS 2020, Prop. 12
            tv = np.sqrt(-np.expm1(-r))  # Bretagnolle–Huber: TV ≤ √(1 − e^{−KL}) ≤ √(1 − e^{−RDP(α)})
            eps = np.where(delta >= tv, 0.0, eps)
    eps = np.where(np.isinf(r), math.inf, eps)
    idx = int(np.argmin(eps))
    return max(0.0, float(eps[idx])), idx


def delta_from_rdp(orders, rdp, *, epsilon: float, conversion: str = "tight") -> tuple[float, int]:
    """Smallest δ over the orders such that the RDP curve implies (ε, δ)-DP (inverse of the above).

    ``standard``: δ = min_α exp((α−1)(RDP(α) − ε)) (Mironov 2017, Prop. 3).
    ``tight``: δ = min_α exp((α−1)(RDP(α) − ε + ln(1 − 1/α)) − ln α) (CKS 2020, Prop. 12), and
    δ ≤ √(1 − e^{−RDP(α)}) (Bretagnolle & Huber 1979). Returns (δ ∈ [0, 1], order index).
    """
    a = check_orders(orders)
    r = np.asarray(rdp, dtype=np.float64)
    if r.shape != a.shape:
        raise ValueError(f"rdp must have the shape of orders {a.shape} (got {r.shape})")
    epsilon = float(epsilon)
    if not (epsilon >= 0.0) or math.isnan(epsilon):
        raise ValueError(f"epsilon must be a number ≥ 0 (got {epsilon!r})")
    _check_conversion(conversion)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if conversion == "standard":
            logd = (a - 1.0) * (r - epsilon)  # Mironov 2017, Prop. 3
        else:
            logd = (a - 1.0) * (r - epsilon + np.log1p(-1.0 / a)) - np.log(a)  # CKS 2020, Prop. 12
            logd = np.minimum(logd, 0.5 * np.log(-np.expm1(-r)))  # Bretagnolle–Huber
    logd = np.where(np.isinf(r), math.inf, logd)
    idx = int(np.argmin(logd))
    return float(min(1.0, math.exp(min(logd[idx], 0.0)))), idx


# --------------------------------------------------------------------------------------------
# Monte Carlo of the multivariate Cauchy divergence (verification of cauchy_rdp_bound)
# --------------------------------------------------------------------------------------------


def cauchy_divergence_monte_carlo(
    order: float, *, sensitivity: float, gamma: float, d: int, n_samples: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Monte Carlo estimate of D_α(Cauchy_d(0, γ) ‖ Cauchy_d(Δ, γ)), ‖Δ‖ = S, and its standard error.

    Draws x ~ Cauchy_d(0, γ) as γ·z/|w| (z ~ N(0, I_d), w ~ N(0, 1)); only the coordinate along
    Δ and ‖x_⊥‖² matter, so each draw uses z₁ and χ²_{d−1}. With p ∝ (1 + ‖x‖²/γ²)^{−(d+1)/2},
    E_p[(p/q)^{α−1}] = exp((α−1)D_α). Returns (D̂_α, standard error by the delta method), nats.
    """
    if not (isinstance(d, (int, np.integer)) and d >= 1):
        raise ValueError(f"d must be an integer ≥ 1 (got {d!r})")
    if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 2):
        raise ValueError(f"n_samples must be an integer ≥ 2 (got {n_samples!r})")
    alpha = float(check_orders([order])[0])
    S = _check_nonneg("sensitivity", sensitivity)
    g = _check_nonneg("gamma", gamma)
    if g == 0.0:
        raise ValueError("gamma must be > 0 for the Monte Carlo check (got 0)")
    delta = S / g
    w = rng.standard_normal(n_samples)
    u = rng.standard_normal(n_samples) / np.abs(w)
    rho = (rng.chisquare(d - 1, n_samples) if d > 1 else np.zeros(n_samples)) / (w * w)
    log_ratio = 0.5 * (d + 1) * (np.log1p((u - delta) ** 2 + rho) - np.log1p(u * u + rho))
    x = (alpha - 1.0) * log_ratio
    top = float(x.max())
    v = np.exp(x - top)
    m = float(v.mean())
    se_m = float(v.std(ddof=1)) / math.sqrt(n_samples)
    return (top + math.log(m)) / (alpha - 1.0), (se_m / m) / (alpha - 1.0)
