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
at sensitivity c_max·S, with T·K·B truncation events (:mod:`privacy.link`). Rician gains and phase CSIT are not
derived (the pair is then not zero-mean jointly Gaussian), nor several antennas.
"""

from __future__ import annotations

import numpy as np
from scipy.special import stdtr

__all__ = ["stale_exceed_probability", "distinct_blocks", "mean_stale_exceed_probability"]

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


def distinct_blocks(rho) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct ρ_m, the share of the B blocks holding each): what :func:`mean_stale_exceed_probability` averages
    over, computed once per link (:meth:`privacy.link.LinkModel.stale_blocks`)."""
    vals, counts = np.unique(np.asarray(rho, dtype=np.float64), return_counts=True)
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
