"""RDP of one DDGauss round (model §9.2; Kairouz, Liu & Steinke 2021, arXiv:2102.06387, Thm 1 / Prop. 14).

Units: c, γ, σ in model units; Δ₂ (:attr:`privacy.events.DDGaussRound.delta2`) in grid units.
With n contributors (noise of the sum N_ℤ(0, n(σ/γ)²) per coordinate), d the padded dimension::

    τ  = 10·Σ_{k=1}^{n−1} exp(−2π²(σ/γ)²·k/(k+1))
    Δ₂' = γΔ₂,  Δ₁' = γΔ₂·min(√d, Δ₂),  l₂ = Δ₂'/(√(ρn) σ),  l₁ = Δ₁'/(√(ρn) σ)
    RDP(α) ≤ min{α l₂²/2 + τd,  (α/2)(l₂² + 2 l₁ τ + τ² d),  (α/2)(l₂ + τ√d)²}

for add/remove (remove = zero the client's vector); replace-one doubles l₁ and l₂. ρ = the event's
``noise_fraction`` (1 without dropout): under dropout after noising only the survivors' shares, total
variance ≥ ρ·n·σ², reach the sum; the bound is increasing in l₁, l₂ and τ, and the survivors' τ
(fewer terms, each share at σ·√(K/K′) ≥ σ) is at most τ above, so the bound holds for them.
β = 0 (unconditional rounding) enters only through Δ₂ = c/γ + √d.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = ["ddgauss_tau", "ddgauss_rdp"]


def ddgauss_tau(*, n: int, grid: float, local_std: float) -> float:
    """τ = 10·Σ_{k=1}^{n−1} exp(−2π²(σ/γ)²·k/(k+1)) (summed in log space; 0 for n = 1)."""
    if n <= 1:
        return 0.0
    k = np.arange(1, n, dtype=np.float64)
    s2 = (local_std / grid) ** 2
    return 10.0 * float(np.exp(logsumexp(-2.0 * math.pi**2 * s2 * k / (k + 1.0))))


def ddgauss_rdp(orders, event) -> np.ndarray:
    """The bound above at ``orders`` for a :class:`privacy.events.DDGaussRound` (nats; ∞ when σ = 0)."""
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if event.local_std == 0.0:
        return np.full_like(a, math.inf)
    n, d = int(event.n), float(event.d_pad)
    tau = ddgauss_tau(n=n, grid=event.grid, local_std=event.local_std)
    d2 = event.delta2
    scale = 2.0 if event.relation == "replace" else 1.0
    noise = math.sqrt(n * float(event.noise_fraction)) * event.local_std
    l2 = scale * event.grid * d2 / noise
    l1 = scale * event.grid * d2 * min(math.sqrt(d), d2) / noise
    b1 = a * l2 * l2 / 2.0 + tau * d
    b2 = (a / 2.0) * (l2 * l2 + 2.0 * l1 * tau + tau * tau * d)
    b3 = (a / 2.0) * (l2 + tau * math.sqrt(d)) ** 2
    return np.minimum(np.minimum(b1, b2), b3)
