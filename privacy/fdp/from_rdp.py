"""The trade-off function implied by a Rényi-DP curve (model §9.4; Balle, Barthe, Gaboardi, Hsu & Sato 2020,
arXiv:1905.09982, the Rényi divergence of a test's two Bernoulli outcomes).

A test of type I error α and power b = 1 − β post-processes (P, Q) into (Bern(α), Bern(b)); if
D_λ(P‖Q) ≤ ρ_λ and D_λ(Q‖P) ≤ ρ_λ (an RDP bound of order λ > 1, neighbouring relation symmetric),
data processing gives, with D_λ(Bern(a)‖Bern(c)) = ln(a^λ c^{1−λ} + (1−a)^λ (1−c)^{1−λ})/(λ − 1),

    D_λ(Bern(α)‖Bern(b)) ≤ ρ_λ  and  D_λ(Bern(b)‖Bern(α)) ≤ ρ_λ,

both increasing in b ≥ α. f_λ(α) = 1 − (largest such b), and f = max_λ f_λ (every order holds at
once). Each f_λ is convex (the feasible set is convex: D_λ is jointly quasi-convex), so f is;
it is computed on an α-grid by bisection (the larger end kept: f is never overstated) and made a
piecewise-linear lower bound with :meth:`privacy.fdp.tradeoff.PiecewiseLinear.from_samples`.
"""

from __future__ import annotations

import numpy as np

from privacy.fdp.tradeoff import PiecewiseLinear

__all__ = ["rdp_tradeoff", "alpha_grid"]


def alpha_grid(points: int = 1200, smallest: float = 1e-40) -> np.ndarray:
    """0, a geometric grid from ``smallest`` to 1/2 (ratio ≈ 1.08; small α matter at large ε, where δ ≈ e^ε α),
    1 − a geometric grid from 1e-16 to 1/2, and 1."""
    return np.unique(np.concatenate([[0.0], np.geomspace(smallest, 0.5, points),
                                     1.0 - np.geomspace(1e-16, 0.5, points // 4), [1.0]]))


def _renyi_bern(a, c, lam):
    """D_λ(Bern(a) ‖ Bern(c)), a and c arrays broadcast with the order ``lam`` (∞ where c ∈ {0, 1} forbids)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(a > 0, lam * np.log(np.where(a > 0, a, 1.0)) + (1 - lam) * np.log(c), -np.inf)
        t2 = np.where(a < 1, lam * np.log1p(-np.where(a < 1, a, 0.0)) + (1 - lam) * np.log1p(-c), -np.inf)
        return np.logaddexp(t1, t2) / (lam - 1.0)


def rdp_tradeoff(orders, rdp, *, alpha=None, iterations: int = 48) -> PiecewiseLinear:
    """The piecewise-linear lower bound of max_λ f_λ for the RDP curve ``rdp`` at ``orders`` (λ > 1; nats)."""
    lam = np.asarray(orders, dtype=np.float64)
    rho = np.asarray(rdp, dtype=np.float64)
    keep = (lam > 1.0) & np.isfinite(rho)
    if not np.any(keep):
        return PiecewiseLinear([0.0, 1.0], [0.0, 0.0])  # no finite order: nothing is implied
    lam, rho = lam[keep][None, :], rho[keep][None, :]
    a = (alpha_grid() if alpha is None else np.asarray(alpha, dtype=np.float64))[:, None]
    lo, hi = np.broadcast_to(a, (a.shape[0], lam.shape[1])).copy(), np.ones((a.shape[0], lam.shape[1]))
    for _ in range(iterations):  # largest power b with both divergences ≤ ρ_λ
        mid = 0.5 * (lo + hi)
        ok = (_renyi_bern(a, mid, lam) <= rho) & (_renyi_bern(mid, a, lam) <= rho)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    f = np.max(1.0 - hi, axis=1)  # hi ≥ the largest feasible b: f never overstated
    a = a[:, 0]
    out = PiecewiseLinear.from_samples(a, np.clip(f, 0.0, 1.0 - a))
    # the bound holds for both orders of the pair (the RDP curve bounds both divergences), so its δ-curve is the
    # run's for either order; the grid's lower bound is not exactly symmetric near α = 1 and is not inverted
    out.symmetric = True
    return out
