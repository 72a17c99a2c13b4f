"""The active factor of FLORAS with a stale pilot over coherence blocks (model §5.1, §7.2 "Link level").

With ``pilots = "stale"`` the update's B coherence blocks are all equalised with the one reference slot of block 0,
so active client k's term in block m is c_{k,m}·s_k/b with

    c_{k,m} = g_{k,m}·b/(g_{k,0}·b + w_k),

g_{k,m} = Re(h_{k,m}) (csit "none") and w_k ~ N(0, σ²/L) the pilot noise on its sequence. In normalised units
(a = √(L·SNR·β_eff), n = w_k√L/σ ~ N(0, 1)) c = X/Y with X = a·g_m, Y = a·g_0 + n: zero-mean and jointly Gaussian
for Rayleigh blocks, Var X = q, Var Y = q + 1, Cov(X, Y) = q·ρ_m with q = a²/2 and ρ_m = Re r_m, r_m =
E[h̃_m·h̃*_0] the block's correlation with block 0 (:func:`phy.coherence.block0_correlations`; the real parts of a
circular pair correlate as Re r). The ratio of two zero-mean jointly Gaussian variables is a shifted, scaled Cauchy
variable (derived: X = (Cov/Var Y)·Y + Z with Z independent of Y, and Z/Y is Cauchy with scale sd(Z)/sd(Y)):

    c = μ + s·C,  μ = q·ρ/(1 + q),  s = √(q(1 + q) − q²ρ²)/(1 + q),  C standard Cauchy,

so P(|c| > c_max) = P(C > (c_max − μ)/s) + P(C > (c_max + μ)/s), P(C > t) = ½ − arctan(t)/π. ρ = 1 (block 0, or no
aging) gives the one-pilot law of :func:`privacy.link.antenna_exceed_probability` at N_r = 1. The inactive sequences'
noise uses the same pilot in every block, so the release given the pilots and the factors is the one-pilot Gaussian
mixture with shift Σ_m ‖c_{k,m}Δ_m‖² ≤ c_max²S² on the event that every factor is below c_max: the one-block curve
at sensitivity c_max·S, with T·K·B truncation events (:mod:`privacy.link`).

Phase CSIT (g = |h|, the client pre-rotating each block by its own phase; model §5.1): c = a|h_m|/(a|h₀| + n) is a
ratio of correlated Rayleigh envelopes plus pilot noise, not of jointly Gaussian variables; it is bounded rather than
computed. With ρ = |r_m|, h_m = r_m·h₀ + √(1 − ρ²)·w (w ~ CN(0, 1) independent of h₀ and n), the triangle
inequality a|h_m| ≤ ρ·a|h₀| + √(1 − ρ²)·a|w| gives

    P(|c| > c_max) ≤ P(ρ·a|h₀| + √(1 − ρ²)·a|w| > c_max·|a|h₀| + n|),

whose right side is computed exactly: given |h₀| a closed form in Φ (:func:`phase_event_probability`: the event
holds where c_max|Y| ≤ ρa|h₀|, and elsewhere with probability e^{−t²} of the exponential |w|², a Gaussian in Y on each
half-line), then one quadrature over the Rayleigh |h₀|. It is exact at ρ = 0 (independent blocks) and at ρ = 1 (the
one-block law); between, the triangle inequality costs a factor 1.03–1.5 in P at the levels measured
(tests/test_floras_stale_privacy.py).

With a line of sight (Rician blocks, phase CSIT): h = A·e^{j(φ + ψb_m)} + σ·h̃, A² = κ/(κ+1), σ² = 1/(κ+1), so
h_m = r·h₀ + A·e^{jφ}(e^{jψb_m} − r) + √(1 − ρ²)·σ·w and |h_m| ≤ ρ|h₀| + A·D_m + √(1 − ρ²)·σ|w|, D_m = |e^{jψb_m} − r_m|:
the same computation with the offset a·A·D_m, the scattered power σ² and the Rice law of |h₀|. Without CSIT the real
parts of Rician blocks have their own exact computation (:mod:`privacy.link_stale_los`); with several antennas
nothing is derived.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate
from scipy.special import ndtr, stdtr

__all__ = ["stale_exceed_probability", "distinct_blocks", "mean_stale_exceed_probability", "phase_event_probability",
           "mean_stale_phase_bound"]

CHUNK = 1 << 20  # (block correlation, scale) pairs evaluated at once


def stale_exceed_probability(c_max: float, a, rho) -> np.ndarray:
    """P(|c| > c_max) of the stale-pilot factor at pilot amplitudes ``a`` and block correlations ``rho`` = Re r_m
    (broadcast together; the module's closed form)."""
    q = 0.5 * np.square(np.asarray(a, dtype=np.float64))
    rho = np.asarray(rho, dtype=np.float64)
    mu = q * rho / (1.0 + q)
    s = np.sqrt(np.maximum(q * (1.0 + q) - np.square(q * rho), 0.0)) / (1.0 + q)
    c = float(c_max)
    return stdtr(1, -(c - mu) / s) + stdtr(1, -(c + mu) / s)


def distinct_blocks(rho, los=None) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct ρ_m — or (ρ_m, D_m) rows with a line of sight's distances ``los`` —, the share of the B blocks
    holding each): what the means over the blocks average over, computed once per link
    (:meth:`privacy.link.LinkModel.stale_blocks`)."""
    rho = np.asarray(rho, dtype=np.float64)
    if los is not None:
        vals, counts = np.unique(np.stack([rho, np.asarray(los, dtype=np.float64)], axis=1), axis=0, return_counts=True)
    else:
        vals, counts = np.unique(rho, return_counts=True)
    return vals, counts / float(counts.sum())


def mean_stale_exceed_probability(c_max: float, a: np.ndarray, weights: np.ndarray,
                                  blocks: tuple[np.ndarray, np.ndarray]) -> float:
    """Σ_v share_v·Σ_n weights_n·P(|c| > c_max; a_n, ρ = v): the mean over the B blocks (``blocks`` from
    :func:`distinct_blocks`, each distinct ρ_m evaluated once) of the population's weighted probability
    (:meth:`privacy.link.LinkModel.scale_weights`)."""
    vals, shares = blocks
    a, weights = np.asarray(a, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    step = max(1, CHUNK // max(1, a.size))
    total = 0.0
    for i in range(0, vals.size, step):
        p = stale_exceed_probability(c_max, a[None, :], vals[i:i + step, None])
        total += float(shares[i:i + step] @ (p @ weights))
    return total


# --- phase CSIT: a bound (model §7.2 "Link level", "A stale pilot with phase CSIT") ---------------------------------


def scale_breakpoints(a: np.ndarray) -> set[float]:
    """Breakpoints in |h| ∈ (0, 8) for a quadrature over the gain of a population with pilot amplitudes ``a``: the
    conditional probability changes on the scale |h| ~ 1/a, so 0.1, 1 and 10 times 1/a over the spread of a (two
    points per decade)."""
    lo, hi = 1.0 / float(np.max(a)), 1.0 / float(np.min(a))
    n = max(1, int(math.ceil(2.0 * math.log10(hi / lo))) + 1)
    base = np.geomspace(lo, hi, n) if n > 1 else np.array([lo])
    return {float(x * f) for x in base for f in (0.1, 1.0, 10.0) if 0.0 < x * f < 8.0}


def phase_event_probability(c: float, u: np.ndarray, rho: np.ndarray, lam: np.ndarray, offset=0.0) -> np.ndarray:
    """P(ρ·u + D′ + √(1 − ρ²)·σ·a|w| > c·|u + n| given u = a|h₀|) (broadcast over u ≥ 0, ρ = |r| ∈ [0, 1], λ and the
    offset D′ = a·A·D ≥ 0 of a line of sight), n ~ N(0, 1), |w|² ~ Exp(1), σ² the scattered power (1 for Rayleigh,
    1/(κ + 1) with a line of sight): with λ = 2c²/((1 − ρ²)σ²a²) (∞ where ρ = 1; given, since it does not depend on
    u and a quadrature over u computes it once), y₀ = (ρu + D′)/c and Y = u + n,

        P = [Φ(y₀ − u) − Φ(−y₀ − u)] + e^{−λ(u − y₀)²/(2(1+λ))}·Φ̄((y₀ − m₊)√(1+λ))/√(1+λ)
                                     + e^{−λ(u + y₀)²/(2(1+λ))}·Φ((−y₀ − m₋)√(1+λ))/√(1+λ),

    m± = (u ± λy₀)/(1 + λ): where c|Y| ≤ ρu + D′ the event holds whatever w; elsewhere P(|w| > t) = e^{−t²}, t =
    (c|Y| − ρu − D′)/(√(1 − ρ²)σa), whose product with the normal density of Y is a Gaussian in Y on each half-line.
    ρ = 1 (λ = ∞) leaves the first term (the one-block law at c when D′ = 0); ρ = 0, D′ = 0 gives P(a|w| > c|Y|)."""
    y0 = (rho * u + offset) / c
    inside = ndtr(y0 - u) - ndtr(-y0 - u)
    root = np.sqrt(1.0 + lam)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        up = np.exp(-lam * np.square(u - y0) / (2.0 * (1.0 + lam))) * ndtr(-(y0 - (u + lam * y0) / (1.0 + lam)) * root)
        down = np.exp(-lam * np.square(u + y0) / (2.0 * (1.0 + lam))) * ndtr((-y0 - (u - lam * y0) / (1.0 + lam)) * root)
        tails = (up + down) / root
    return inside + np.where(np.isinf(lam), 0.0, np.nan_to_num(tails, nan=0.0))


def mean_stale_phase_bound(c_max: float, a: np.ndarray, weights: np.ndarray, blocks: tuple[np.ndarray, np.ndarray],
                           *, kappa: float = 0.0) -> float:
    """An upper bound on the mean over the blocks (``blocks``: distinct ρ_m, or (ρ_m, D_m) rows with a line of sight,
    and their shares) and the population (scales ``a``, ``weights``) of P(|c| > c_max) for the phase-CSIT stale factor
    c = a|h_m|/(a|h₀| + n) (module text): the exact probability of the larger event ρ·a|h₀| + a·A·D + √(1 − ρ²)·σ·a|w| >
    c_max·|a|h₀| + n| (triangle inequality on h_m = r·h₀ + A·e^{jφ}(e^{jψb_m} − r) + √(1 − ρ²)·σ·w, A = √(κ/(κ+1)),
    σ² = 1/(κ+1)), by one quadrature over |h₀| (Rayleigh, or Rice with κ > 0) of :func:`phase_event_probability`.
    Exact for Rayleigh blocks with ρ = 0 and ρ = 1."""
    from privacy.gain_laws import gain_density

    vals, shares = blocks
    vals = np.asarray(vals, dtype=np.float64)
    rho, dist = (vals[:, :1], vals[:, 1:]) if vals.ndim == 2 else (vals[:, None], np.zeros((vals.size, 1)))
    a = np.asarray(a, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    c, kappa = float(c_max), float(kappa)
    amp, scatter = math.sqrt(kappa / (kappa + 1.0)), 1.0 / (kappa + 1.0)
    with np.errstate(divide="ignore"):
        lam = (2.0 * c * c / (np.square(a) * scatter))[None, :] / (1.0 - np.square(rho))
    lam = np.where(rho >= 1.0, np.inf, lam)
    offset = amp * dist * a[None, :]
    coef = np.asarray(shares, dtype=np.float64)[:, None] * weights[None, :]
    dens = gain_density("phase", kappa)

    def integrand(r: float) -> float:
        return dens(r) * float(np.sum(coef * phase_event_probability(c, a[None, :] * r, rho, lam, offset)))

    return gain_quadrature(integrand, a, kappa)


def gain_quadrature(integrand, a: np.ndarray, kappa: float = 0.0) -> float:
    """∫₀⁸ integrand(|h|) d|h| (relative tolerance 10⁻¹⁰) with breakpoints at every client's scale |h| ~ 1/a
    (:func:`scale_breakpoints`) and, with a line of sight, around the Rice law's peak |h| = A (width 1/√(2(κ+1))).
    Roundoff flags when the probability is far below the integrand's peak are silenced; the tests check the values
    against Monte Carlo and closed forms."""
    pts = scale_breakpoints(a)
    if kappa:
        A, sd = math.sqrt(kappa / (kappa + 1.0)), math.sqrt(0.5 / (kappa + 1.0))
        pts |= {A + j * sd for j in (-3, -1, 0, 1, 3) if 0.0 < A + j * sd < 8.0}
    pts = sorted(pts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, _ = integrate.quad(integrand, 0.0, 8.0, points=pts or None, epsabs=0.0, epsrel=1e-10,
                                limit=max(400, 4 * len(pts)))
    return val
