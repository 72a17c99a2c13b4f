"""Noise-aware receiver rules of FLORAS (model §6.4): the weight w of a round's aggregate.

The base station knows b, d, N, K (public) and the pilot outputs r^s, hence the round's conditional
noise variance per entry of ŝ/b; or it estimates that variance from the release alone. It then
releases w·x̂ instead of x̂ (a function of what it already holds: post-processing under T1, ε unchanged).

- ``plain``: w = 1 (the source's estimator).
- ``inverse-variance``: w = γ²/V̂, γ = N − K. For orthonormal sets V ~ Lévy(0, γ²) = γ²/Z², so γ²/V = Z²
  with Z ~ N(0, 1): E[w] = 1, Var[w] = 2 (tests/test_receiver.py checks it by simulation).
- ``capped``: w = min(w_max, γ²/V̂).

With N_r > 1 receive antennas (maximum-ratio combiner, model §5.2) V = Σ_{j∈I} 1/χ²_{N_r,j} is no longer Lévy, and
γ² is replaced by the reference variance V_ref = 1/E[1/V] (:func:`reference_variance`), which keeps E[V_ref/V] = 1;
V_ref = γ² for N_r = 1 (model §6.4, "Several antennas").

Noise estimates V̂ (in (ŝ/b)² units):

- ``pilots``: V_p = (σ²/L)·Σ_{j,l=1}^{N} G_jl/(r_j^s r_l^s), G = AᵀA, over all N sequences (the receiver
  does not know which are active): the exact conditional variance of the noise of ŝ/b given r^s, equal to
  V (inactive sequences) plus active-sequence terms of order K/(L·SNR).
- ``energy``: V̂ = ‖ŝ‖²/(b²·d); its bias is ‖Σ_k s_k‖²/(b²d) ≤ K², negligible when γ² ≫ K².

With γ = 0 (no inactive sequences, no privacy noise) every rule gives w = 1.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate
from scipy.special import gammaln, kve

from .floras_params import NOISE_ESTIMATES, RECEIVERS

__all__ = ["RECEIVERS", "NOISE_ESTIMATES", "energy_variance", "receiver_weight", "reference_variance"]


def energy_variance(s_hat: np.ndarray, *, b: float) -> float:
    """V̂ = ‖ŝ‖²/(b²·d) [(ŝ/b)² units, dimensionless]: the energy estimate of the round's noise variance."""
    s_hat = np.asarray(s_hat, dtype=np.float64)
    # numpy's pairwise sum, not BLAS's dot: its order (and V̂'s last bits, and so the weight) would follow the
    # BLAS thread count
    return float(np.add.reduce(s_hat * s_hat)) / (float(b) ** 2 * s_hat.size)


def _log_laplace_inverse_chi2(s: float, a: float) -> float:
    """ln E e^{−s/X}, X ~ χ² with 2a degrees of freedom: ln[2(s/2)^{a/2}K_a(√(2s))/Γ(a)] (a = ½: −√(2s))."""
    x = math.sqrt(2.0 * s)
    return math.log(2.0) + 0.5 * a * math.log(s / 2.0) + math.log(kve(a, x)) - x - gammaln(a)


@functools.lru_cache(maxsize=64)
def reference_variance(gamma: int, antennas: int) -> float:
    """V_ref = 1/E[1/V] for V = Σ_{j=1}^{γ} 1/χ²_{N_r,j} (model §6.4, "Several antennas"), dimensionless ((ŝ/b)² units
    over σ²/L).

    E[1/V] = ∫₀^∞ E e^{−sV} ds = ∫₀^∞ L(s)^γ ds, L the Laplace transform of 1/χ²_{N_r}, integrated in u = ln s by
    adaptive quadrature (relative error ~1e-11). N_r = 1 gives γ² exactly (returned without quadrature); γ = 1, N_r = 3
    gives 1/E[χ²₃] = 1/3; for γ ≫ 1 and N_r > 2 it tends to E[V] = γ/(N_r − 2).
    """
    if isinstance(gamma, bool) or not float(gamma).is_integer() or gamma < 1:
        raise ValueError(f"gamma must be a whole number ≥ 1 (got {gamma!r})")
    if isinstance(antennas, bool) or not float(antennas).is_integer() or antennas < 1:
        raise ValueError(f"antennas must be a whole number ≥ 1 (got {antennas!r})")
    g, a = int(gamma), float(antennas) / 2.0
    if antennas == 1:
        return float(g * g)

    def log_integrand(u: float) -> float:
        return u + g * _log_laplace_inverse_chi2(math.exp(u), a)

    hi = 0.0
    while log_integrand(hi) > -700.0:  # L(s)^γ decays like e^{−γ√(2s)}: a few steps
        hi += 1.0
    lo = -2.0 * math.log(g * antennas) - 40.0  # below it the integrand is ≤ e^u: a relative 1e-17 or less
    val, _ = integrate.quad(lambda u: math.exp(log_integrand(u)), lo, hi, limit=400, epsabs=0.0, epsrel=1e-11)
    return 1.0 / val


def receiver_weight(rule: str, *, gamma: int, V_hat: float, cap: float, antennas: int = 1) -> float:
    """w of the rule ∈ :data:`RECEIVERS` for noise estimate ``V_hat``, γ = N − K inactive sequences and N_r =
    ``antennas`` receive antennas: w = V_ref/V̂ (capped at ``cap``), V_ref = :func:`reference_variance` (γ² for N_r = 1).

    γ = 0 → 1. V̂ = 0 (nothing received) → ``cap`` for "capped", 1 for "inverse-variance".
    """
    if rule == "plain" or gamma == 0:
        return 1.0
    if rule not in RECEIVERS:
        raise ValueError(f"floras.receiver must be one of {{{', '.join(RECEIVERS)}}} (got {rule!r})")
    V_hat = float(V_hat)
    if not V_hat > 0.0 or not math.isfinite(V_hat):
        return float(cap) if rule == "capped" else 1.0
    w = (float(gamma) ** 2 if antennas == 1 else reference_variance(gamma, antennas)) / V_hat
    return min(float(cap), w) if rule == "capped" else w
