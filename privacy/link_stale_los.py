"""The stale-pilot factor of FLORAS with Rician blocks and no CSIT (model §5.1, §7.2 "Link level").

Without CSIT client k sends with g = Re(h); with a line of sight h_m = A·e^{j(φ + θ_m)} + σ·h̃_m, A² = κ/(κ+1),
σ² = 1/(κ+1), φ ~ U(0, 2π) the line of sight's phase, θ_m = ψ·b_m its rotation from block 0 to block m
(:func:`phy.coherence.los_block_phases`) and h̃ the scattered part, E[h̃_m·h̃*_0] = r_m. Block m's factor is
c = X/Y, X = a·Re h_m, Y = a·Re h_0 + n (a = √(L·SNR·β_eff), n ~ N(0, 1) the pilot noise). Given φ, (X, Y) is jointly
Gaussian (the real parts of a circular pair correlate as Re r_m; derived):

    E X = a·A·cos(φ + θ_m),  E Y = a·A·cos φ,  Var X = q,  Var Y = q + 1,  Cov(X, Y) = q·ρ_m,
    q = a²σ²/2,  ρ_m = Re r_m,

so X = β·Y + Z with β = qρ_m/(q + 1) and Z independent of Y, and {|X| > c|Y|} is, on Y > 0, {Z > (c − β)Y} ∪
{Z < −(c + β)Y} and, on Y < 0, their mirror images: four orthants of bivariate normals, computed exactly by Owen's T
function (:func:`ratio_exceed_probability`), in a form whose arguments do not cancel as the orthants' correlation
tends to −1 (large c) or as the blocks become alike (ρ → 1, θ → 0).
The probability is π-periodic in φ ((X, Y) → (−X, −Y)) and analytic, so the midpoint rule over one period
converges geometrically; the node count grows with κ as for the one-block law (:func:`privacy.gain_laws.los_phase_cosines`),
max(64, 8κ) over the period.
κ = 0 gives the Rayleigh closed form of :mod:`privacy.link_stale`, ρ = 1 and θ = 0 the one-block Rician law
(tests/test_floras_stale_los.py). The population's mean is exact over at most ``EXACT_SCALES`` distinct β_eff; above,
the grid bound of :mod:`privacy.link` holds with a weight per block (:func:`pair_exponent`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, owens_t

__all__ = ["bivariate_normal_cdf", "ratio_exceed_probability", "los_stale_exceed_probability",
           "mean_los_stale_exceed_probability", "pair_exponent"]


def bivariate_normal_cdf(h, k, r, s) -> np.ndarray:
    """Φ₂(h, k; r) = P(Z₁ < h, Z₂ < k) for standard normals of correlation r, s = √(1 − r²) (Owen 1956; for tests and
    reference: :func:`ratio_exceed_probability` uses :func:`_orthant`, the same formula without cancellation):

        Φ₂ = ½Φ(h) + ½Φ(k) − T(h, (k − rh)/(hs)) − T(k, (h − rk)/(ks)) − ½·[hk < 0],

    h = 0 or k = 0 taken as the limit from above (Φ₂ is continuous)."""
    h, k = _nonzero(h), _nonzero(k)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return _owen(h, k, (k - r * h) / (h * s), (h - r * k) / (k * s))


def _nonzero(x) -> np.ndarray:
    """x with exact zeros (either sign) replaced by +10⁻³⁰⁰: a limit from above, taken alike in every argument."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x == 0.0, 1e-300, x)


def _owen(h, k, ah, ak) -> np.ndarray:
    """½Φ(h) + ½Φ(k) − T(h, a_h) − T(k, a_k) − ½·[h, k of opposite signs] for nonzero h, k (the sign test does not
    underflow as h·k would)."""
    return (0.5 * ndtr(h) + 0.5 * ndtr(k) - owens_t(h, ah) - owens_t(k, ak)
            - np.where(np.signbit(h) != np.signbit(k), 0.5, 0.0))


def _orthant(my, sy, mz, sz, lam) -> np.ndarray:
    """P(Y > 0, Z + λY > 0) for independent Y ~ N(m_Y, s_Y²), Z ~ N(m_Z, s_Z²): Φ₂(h, k; r) with h = m_Y/s_Y,
    k = m_V/s_V, m_V = m_Z + λm_Y, r = λs_Y/s_V, s_V² = s_Z² + λ²s_Y², whose Owen arguments reduce to (derived)

        a_h = m_Z/(h·s_Z),   a_k = (m_Y·s_Z² − λ·s_Y²·m_Z)/(s_Y·s_Z·m_V),

    free of the cancellation k − rh and h − rk suffer as r → −1 (a large factor level c). A zero m_Y or m_V is taken
    as the limit from above (with m_Z fixed), so that h, k and the a's describe the same point."""
    my = _nonzero(my)
    mv = _nonzero(mz + lam * my)
    sv = np.sqrt(sz * sz + lam * lam * sy * sy)
    h, k = my / sy, mv / sv
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ah = mz / (h * sz)
        ak = (my * sz * sz - lam * sy * sy * mz) / (sy * sz * mv)
    return _owen(h, k, ah, ak)


def ratio_exceed_probability(c: float, mz, sz, my, sy, beta) -> np.ndarray:
    """P(|X| > c·|Y|) for X = β·Y + Z, Y ~ N(m_Y, s_Y²) and Z ~ N(m_Z, s_Z²) independent (broadcast; s_Z > 0): on
    Y > 0 the event is Z − (c − β)Y > 0 or Z + (c + β)Y < 0, on Y < 0 the mirror images, four orthants of
    :func:`_orthant` (module doc)."""
    c = float(c)
    p = (_orthant(my, sy, mz, sz, -(c - beta)) + _orthant(my, sy, -mz, sz, -(c + beta))
         + _orthant(-my, sy, mz, sz, -(c + beta)) + _orthant(-my, sy, -mz, sz, -(c - beta)))
    return np.clip(p, 0.0, 1.0)


def _phases(kappa: float, factor: int = 1) -> np.ndarray:
    """Midpoint nodes over one period [0, π) of the line of sight's phase, as many as the one-block rule's,
    max(64, 8κ), times ``factor`` (measured: within 10⁻¹¹ of eight times as many for κ from 0.5 to 40, a from 3 to
    2 000 and c from 1.5 to 10⁵; half as many are as good: the integrand's width in φ is about 1/√κ)."""
    from privacy.gain_laws import los_phase_cosines

    n = los_phase_cosines(kappa).size * int(factor)
    return (np.arange(n) + 0.5) * math.pi / n


def los_stale_exceed_probability(c_max: float, a, rho: float, theta: float, kappa: float, *,
                                 phase_factor: int = 1) -> np.ndarray:
    """P(|c_m| > c_max) of block m (ρ_m = Re r_m, θ_m) at pilot amplitudes ``a`` [n], averaged over the line of sight's
    phase (module doc; ``phase_factor`` multiplies its nodes, for checking the rule's convergence)."""
    a = np.asarray(a, dtype=np.float64)[:, None]
    phi = _phases(kappa, phase_factor)[None, :]
    amp, q = a * math.sqrt(kappa / (kappa + 1.0)), 0.5 * np.square(a) / (kappa + 1.0)
    rho = float(rho)
    beta = q * rho / (q + 1.0)  # X = β·Y + Z given φ
    # E Z = a·A·[cos(φ + θ) − β·cos φ], written so that ρ → 1, θ → 0 keeps its digits; Var Z = q(1 + q(1 − ρ²))/(q + 1)
    one_minus_beta = (1.0 + q * (1.0 - rho)) / (q + 1.0)
    mz = amp * (-2.0 * np.sin(phi + 0.5 * theta) * math.sin(0.5 * theta) + one_minus_beta * np.cos(phi))
    sz = np.sqrt(q * (1.0 + q * (1.0 - rho) * (1.0 + rho)) / (q + 1.0))
    p = ratio_exceed_probability(c_max, mz, sz, amp * np.cos(phi), np.sqrt(q + 1.0), beta)
    return p.mean(axis=1)


def mean_los_stale_exceed_probability(c_max: float, a: np.ndarray, weights: np.ndarray,
                                      blocks: tuple[np.ndarray, np.ndarray], kappa: float) -> float:
    """Σ_v share_v·Σ_n weights_n·P(|c| > c_max; a_n, (ρ, θ) = v): the mean over the B blocks (``blocks``: distinct
    (ρ_m, θ_m) rows and their shares, :func:`privacy.link_stale.distinct_blocks`) of the population's weighted
    probability."""
    vals, shares = blocks
    a, weights = np.asarray(a, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    total = 0.0
    for v, ((rho, theta), share) in enumerate(zip(np.asarray(vals, dtype=np.float64), np.asarray(shares, dtype=np.float64))):
        w = weights[v] if weights.ndim == 2 else weights  # per-block weights of the cell grid (:func:`pair_exponent`)
        total += float(share) * float(w @ los_stale_exceed_probability(c_max, a, rho, theta, kappa))
    return total


def pair_exponent(rho, theta, kappa: float) -> np.ndarray:
    """κ'_m of the cell grid's weight (a_up/a)²·exp(κ'_m·(a_up − a)/(a_up + a)) for block m (derived; model §5.1): the
    pair u = a·(Re h_m, Re h_0) given φ has mean a·A·(cos(φ + θ), cos φ) and covariance a²(σ²/2)[[1, ρ], [ρ, 1]], so for
    a ≤ a_up, t = a_up/a, the ratio of its densities at a and a_up is at most t²·exp(½·((t − 1)/(t + 1))·mᵀΣ⁻¹m) (the
    quadratic in v = u/a_up is least at v = m/(t + 1)), and max_φ ½mᵀΣ⁻¹m = κ·λ_max(B)/(1 − ρ²), B = [[1 − 2ρc + c²,
    s(ρ − c)], [s(ρ − c), s²]], c = cos θ, s = sin θ: λ_max = (1 − ρc) + √((1 − ρc)² − s²(1 − ρ²)). θ = 0 gives
    2κ/(1 + ρ), κ at ρ = 1 (the one-block factor of privacy/link.py, whose power t ≤ t²); ρ = 1 with θ ≠ 0 (a pair on a
    line off its mean) has no density ratio: ∞."""
    rho, theta = np.asarray(rho, dtype=np.float64), np.asarray(theta, dtype=np.float64)
    one_minus = (1.0 - rho) + 2.0 * rho * np.square(np.sin(0.5 * theta))  # 1 − ρ·cos θ without cancellation
    s2, q = np.square(np.sin(theta)), (1.0 - rho) * (1.0 + rho)
    lam = one_minus + np.sqrt(np.maximum(np.square(one_minus) - s2 * q, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = float(kappa) * lam / q
    return np.where(q > 0.0, out, np.where(theta == 0.0, float(kappa), np.inf))
