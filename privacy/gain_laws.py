"""The laws of FLORAS's effective gain that the link-level bound averages over (model §5, §5.1; privacy/link.py).

Without CSIT g = Re h, with phase CSIT g = |h|; Rayleigh h ~ CN(0, 1), or Rician h = A·e^{jφ} + h̃/√(κ+1),
A = √(κ/(κ+1)), φ ~ U(0, 2π) the line of sight's phase. :func:`gain_density` is the density of |g|;
:func:`los_phase_cosines` the nodes of the average over φ that the Rician laws without CSIT take.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import i0e

__all__ = ["PHASE_NODES", "los_phase_cosines", "gain_density", "estimated_phase_density"]

PHASE_NODES = 64  # midpoint nodes of the line-of-sight phase average (no CSIT, κ > 0); more for large κ


def los_phase_cosines(kappa: float) -> np.ndarray:
    """cos φ at the midpoint nodes of [0, π] for averaging over the line of sight's phase φ ~ U(0, 2π) (an even,
    π-periodic integrand after folding ±: the midpoint rule converges geometrically); max(:data:`PHASE_NODES`, 8κ)
    nodes, since the integrand's bandwidth in φ grows like κ."""
    n = max(PHASE_NODES, int(math.ceil(8.0 * float(kappa))))
    return np.cos((np.arange(n) + 0.5) * math.pi / n)


def gain_density(csit: str, kappa: float = 0.0, csi_error: float = 0.0):
    """The density of |g| (g the effective gain at unit mean power, model §5, §5.1) as a function of r ≥ 0.

    κ = 0: |g| with g ~ N(0, ½) without CSIT, Rayleigh (E g² = 1) with phase CSIT. κ > 0 (Rician): the Rice density
    with phase CSIT; without CSIT the average over the line of sight's phase of the two folded normals (module doc).
    (With N_r > 1 antennas the gain is averaged in closed form: :func:`antenna_exceed_probability`.)
    ``csi_error`` σ_e² > 0 (phase CSIT from an estimate, Rayleigh): :func:`estimated_phase_density`.
    """
    kappa = float(kappa)
    if csi_error:
        if csit != "phase" or kappa != 0.0:
            raise ValueError(f"csi_error > 0 is derived for phase CSIT over Rayleigh gains (got csit = {csit!r}, "
                             f"rician_k = {kappa:g})")
        return estimated_phase_density(float(csi_error))
    if kappa == 0.0:
        if csit == "none":
            return lambda r: 2.0 * math.exp(-r * r) / math.sqrt(math.pi)  # |g|, g ~ N(0, 1/2)
        return lambda r: 2.0 * r * math.exp(-r * r)  # Rayleigh, E g² = 1
    if csit == "phase":
        b, k1 = 2.0 * math.sqrt(kappa * (kappa + 1.0)), kappa + 1.0

        def rice(r: float) -> float:  # I₀(x) = i0e(x)·eˣ: the exponent −(√(κ+1)r − √κ)² ≤ 0
            return 2.0 * k1 * r * float(i0e(b * r)) * math.exp(-(math.sqrt(k1) * r - math.sqrt(kappa)) ** 2)
        return rice
    A, var = math.sqrt(kappa / (kappa + 1.0)), 0.5 / (kappa + 1.0)
    m = A * los_phase_cosines(kappa)
    norm = 1.0 / (m.size * math.sqrt(2.0 * math.pi * var))

    def folded(r: float) -> float:
        return norm * float(np.sum(np.exp(-(r - m) ** 2 / (2.0 * var)) + np.exp(-(r + m) ** 2 / (2.0 * var))))
    return folded


def estimated_phase_density(csi_error: float):
    """The density of |g|, g = |h|·cos(∠h − ∠ĥ), for phase CSIT from an estimate ĥ = h + e, h ~ CN(0, 1),
    e ~ CN(0, σ_e²) (model §5.1, "Imperfect CSI"), as a function of r ≥ 0.

    Derived: with λ = 1 + σ_e², h = ĥ/λ + w, w ~ CN(0, σ_e²/λ) independent of ĥ (MMSE), so g = Re(h·ĥ*)/|ĥ| = A + B
    with A = |ĥ|/λ (density 2λa·e^{−λa²}, a ≥ 0) and B = Re(w·ĥ*/|ĥ|) ~ N(0, τ²), τ² = σ_e²/(2λ), independent. The
    convolution has the closed form (p = λ + 1/(2τ²), m = x/(2τ²p), and −λx²/(1 + 2τ²λ) = −x² in the exponent)

        f_g(x) = 2λ/(√(2π)·τ)·[e^{−x²/(2τ²)}/(2p) + m·√(π/p)·e^{−x²}·Φ(m·√(2p))],

    and |g| has f_g(r) + f_g(−r). σ_e² → 0 gives the Rayleigh density 2r·e^{−r²}; σ_e² → ∞ the no-CSIT |N(0, ½)|.
    """
    from scipy.special import ndtr

    e = float(csi_error)
    if not (e > 0.0 and math.isfinite(e)):
        raise ValueError(f"csi_error must be a finite number > 0 (got {csi_error!r})")
    lam = 1.0 + e
    tau2 = e / (2.0 * lam)
    p = lam + 1.0 / (2.0 * tau2)
    front = 2.0 * lam / math.sqrt(2.0 * math.pi * tau2)
    root_p, root_2p = math.sqrt(math.pi / p), math.sqrt(2.0 * p)

    def f_g(x):
        m = x / (2.0 * tau2 * p)
        return front * (np.exp(-x * x / (2.0 * tau2)) / (2.0 * p) + m * root_p * np.exp(-x * x) * ndtr(m * root_2p))

    def density(r):
        return f_g(r) + f_g(-r)
    return density
