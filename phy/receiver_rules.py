"""Noise-aware receiver rules of FLORAS (model §6.4): the weight w of a round's aggregate.

The base station knows b, d, N, K (public) and the pilot outputs r^s, hence the round's conditional
noise variance per entry of ŝ/b; or it estimates that variance from the release alone. It then
releases w·x̂ instead of x̂ (a function of what it already holds: post-processing under T1, ε unchanged).

- ``plain``: w = 1 (the source's estimator).
- ``inverse-variance``: w = γ²/V̂, γ = N − K. For orthonormal sets V ~ Lévy(0, γ²) = γ²/Z², so γ²/V = Z²
  with Z ~ N(0, 1): E[w] = 1, Var[w] = 2 (tests/test_receiver.py checks it by simulation).
- ``capped``: w = min(w_max, γ²/V̂).

Noise estimates V̂ (in (ŝ/b)² units):

- ``pilots``: V_p = (σ²/L)·Σ_{j,l=1}^{N} G_jl/(r_j^s r_l^s), G = AᵀA, over all N sequences (the receiver
  does not know which are active): the exact conditional variance of the noise of ŝ/b given r^s, equal to
  V (inactive sequences) plus active-sequence terms of order K/(L·SNR).
- ``energy``: V̂ = ‖ŝ‖²/(b²·d); its bias is ‖Σ_k s_k‖²/(b²d) ≤ K², negligible when γ² ≫ K².

With γ = 0 (no inactive sequences, no privacy noise) every rule gives w = 1.
"""

from __future__ import annotations

import math

import numpy as np

from .floras_params import NOISE_ESTIMATES, RECEIVERS

__all__ = ["RECEIVERS", "NOISE_ESTIMATES", "energy_variance", "receiver_weight"]



def energy_variance(s_hat: np.ndarray, *, b: float) -> float:
    """V̂ = ‖ŝ‖²/(b²·d) [(ŝ/b)² units, dimensionless]: the energy estimate of the round's noise variance."""
    s_hat = np.asarray(s_hat, dtype=np.float64)
    # numpy's pairwise sum, not BLAS's dot: its order (and V̂'s last bits, and so the weight) would follow the
    # BLAS thread count
    return float(np.add.reduce(s_hat * s_hat)) / (float(b) ** 2 * s_hat.size)


def receiver_weight(rule: str, *, gamma: int, V_hat: float, cap: float) -> float:
    """w of the rule ∈ :data:`RECEIVERS` for noise estimate ``V_hat`` and γ = N − K inactive sequences.

    γ = 0 → 1. V̂ = 0 (nothing received) → ``cap`` for "capped", 1 for "inverse-variance".
    """
    if rule == "plain" or gamma == 0:
        return 1.0
    if rule not in RECEIVERS:
        raise ValueError(f"floras.receiver must be one of {{{', '.join(RECEIVERS)}}} (got {rule!r})")
    V_hat = float(V_hat)
    if not V_hat > 0.0 or not math.isfinite(V_hat):
        return float(cap) if rule == "capped" else 1.0
    w = float(gamma) ** 2 / V_hat
    return min(float(cap), w) if rule == "capped" else w
