"""The laws of FLORAS's effective gain that the link-level bound averages over (model §5, §5.1; privacy/link.py).

Without CSIT g = Re h, with phase CSIT g = |h|; Rayleigh h ~ CN(0, 1), or Rician h = A·e^{jφ} + h̃/√(κ+1),
A = √(κ/(κ+1)), φ ~ U(0, 2π) the line of sight's phase. :func:`gain_density` is the density of |g|;
:func:`los_phase_cosines` the nodes of the average over φ that the Rician laws without CSIT take.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import i0e

__all__ = ["PHASE_NODES", "los_phase_cosines", "gain_density"]

PHASE_NODES = 64  # midpoint nodes of the line-of-sight phase average (no CSIT, κ > 0); more for large κ


def los_phase_cosines(kappa: float) -> np.ndarray:
    """cos φ at the midpoint nodes of [0, π] for averaging over the line of sight's phase φ ~ U(0, 2π) (an even,
    π-periodic integrand after folding ±: the midpoint rule converges geometrically); max(:data:`PHASE_NODES`, 8κ)
    nodes, since the integrand's bandwidth in φ grows like κ."""
    n = max(PHASE_NODES, int(math.ceil(8.0 * float(kappa))))
    return np.cos((np.arange(n) + 0.5) * math.pi / n)


def gain_density(csit: str, kappa: float = 0.0):
    """The density of |g| (g the effective gain at unit mean power, model §5, §5.1) as a function of r ≥ 0.

    κ = 0: |g| with g ~ N(0, ½) without CSIT, Rayleigh (E g² = 1) with phase CSIT. κ > 0 (Rician): the Rice density
    with phase CSIT; without CSIT the average over the line of sight's phase of the two folded normals (module doc).
    (With N_r > 1 antennas the gain is averaged in closed form: :func:`antenna_exceed_probability`.)
    """
    kappa = float(kappa)
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
