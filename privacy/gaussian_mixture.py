"""A sampled Gaussian round whose strength μ is random and revealed, with its law known only from a Monte Carlo
sample (model §5.2, "A sampled T2 bound"; the analog Gaussian uplink seen by a base station that keeps every antenna).

Round t releases client k's update through a Gaussian mechanism of strength μ_t (sensitivity over noise std) that
depends on data-independent randomness the observer sees (the channels), and client k takes part with probability
q (sampling without replacement, replace-one). Given μ_t the round is the sampled Gaussian's symmetric pair
(:mod:`privacy.pld_wor`); μ_t is independent of the data, so the round's PLD is the mixture over its law, and the
rounds, independent and alike, compose it T times.

The law of μ is not known in closed form; it is estimated from m independent draws μ_1 … μ_m. By the
Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant (one-sided), with probability ≥ 1 − β over the draws
the true CDF is ≥ F̂ − η everywhere, η = √(ln(1/β)/(2m)); the law that moves mass η from the smallest draws to a
known upper bound μ_max is then stochastically larger than the true one (:func:`dominating_law`). A larger μ is a
worse Gaussian and the sampled pair is monotone in μ, so coupling μ ≤ μ⁺ and degrading shows that the mixture over
the dominating law dominates the round: the ε computed from it holds with confidence 1 − β over the simulation.
Panels: the draws are rounded up onto a geometric grid of ratio :data:`PANEL_RATIO` in μ down to
:data:`PANEL_FLOOR`·μ_max (pessimistic), μ = 0 is loss 0.
"""

from __future__ import annotations

import math

import numpy as np

from privacy.pld import DEFAULT_DISCRETIZATION, _check_grid as check_grid, mixture_pmf, self_compose

__all__ = ["PANEL_RATIO", "dkw_margin", "dominating_law", "sampled_gaussian_mixture_epsilon"]

#: the ratio of consecutive μ panels (every draw is rounded up to its panel's upper edge)
PANEL_RATIO = 1.01
#: the lowest panel, relative to the largest μ (smaller positive draws are rounded up to it)
PANEL_FLOOR = 1e-3


def dkw_margin(draws: int, beta: float) -> float:
    """η = √(ln(1/β)/(2m)): P(sup_x (F̂(x) − F(x)) > η) ≤ β for m i.i.d. draws (DKW with Massart's constant,
    one-sided; Massart 1990 proves it for β ≤ 1/2)."""
    m, b = int(draws), float(beta)
    if m < 1 or not 0.0 < b <= 0.5:
        raise ValueError(f"draws must be ≥ 1 and beta in (0, 1/2] (got {draws!r}, {beta!r})")
    return math.sqrt(math.log(1.0 / b) / (2.0 * m))


def dominating_law(draws, *, upper: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights) of a law stochastically larger than the draws' true law with probability ≥ 1 − ``beta``:
    the empirical law with mass η (:func:`dkw_margin`) taken from its smallest draws and put on ``upper`` (an upper
    bound on every value). Values ascending; weights sum to 1."""
    x = np.sort(np.asarray(draws, dtype=np.float64).ravel())
    if x.size == 0 or not np.all(np.isfinite(x)) or x[0] < 0.0:
        raise ValueError("draws must be a non-empty array of finite values ≥ 0")
    if not upper >= x[-1]:
        raise ValueError(f"upper = {upper!r} must bound every draw (largest {x[-1]:.6g})")
    eta = dkw_margin(x.size, beta)
    w = np.full(x.size, 1.0 / x.size)
    removed = np.minimum(np.cumsum(w), eta) - np.concatenate([[0.0], np.minimum(np.cumsum(w), eta)[:-1]])
    w = w - removed
    keep = w > 0.0
    values = np.concatenate([x[keep], [float(upper)]])
    weights = np.concatenate([w[keep], [min(eta, 1.0)]])
    return values, weights / weights.sum()


def _panels(values: np.ndarray, weights: np.ndarray, mu_max: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(panel μ's, their weights, weight at μ = 0): each positive value rounded up to the grid μ_max·r^{−j}."""
    zero = float(weights[values <= 0.0].sum())
    pos = values > 0.0
    j_max = int(math.floor(math.log(1.0 / PANEL_FLOOR) / math.log(PANEL_RATIO)))
    j = np.floor(np.log(mu_max / values[pos]) / math.log(PANEL_RATIO) + 1e-12).astype(np.int64)  # μ ≤ μ_max·r^{−j}
    j = np.minimum(j, j_max)
    mus = mu_max * PANEL_RATIO ** (-j.astype(np.float64))
    uniq, inv = np.unique(mus, return_inverse=True)
    return uniq, np.bincount(inv, weights=weights[pos], minlength=uniq.size), zero


def sampled_gaussian_mixture_epsilon(values, weights, *, rate: float, rounds: int, delta: float,
                                     discretization: float = DEFAULT_DISCRETIZATION) -> float:
    """ε at ``delta`` after ``rounds`` rounds of the without-replacement sampled Gaussian (rate K/M = ``rate``,
    replace-one) whose strength μ follows the law (``values`` ≥ 0, ``weights``), revealed to the observer each round;
    the PLD mixture of :mod:`privacy.pld_wor`'s pairs on a μ grid rounded up (module docstring)."""
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution as _pld

    from privacy.pld_wor import wor_gaussian_pmf

    v, w = np.asarray(values, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    if v.shape != w.shape or v.size == 0 or np.any(v < 0.0) or not np.all(np.isfinite(v)) or np.any(w < 0.0):
        raise ValueError("values (finite, ≥ 0) and weights (≥ 0) must be non-empty arrays of one shape")
    q, T, h = float(rate), int(rounds), float(discretization)
    if not 0.0 < q < 1.0 or T < 1 or not 0.0 < float(delta) < 1.0:
        raise ValueError(f"rate in (0, 1), rounds ≥ 1 and delta in (0, 1) (got {rate!r}, {rounds!r}, {delta!r})")
    w = w / w.sum()
    mu_max = float(v.max())
    if mu_max == 0.0:
        return 0.0
    check_grid(1.0 / mu_max, 1.0, q, h, symmetric=True)  # the strongest panel has the widest grid: PldTooLarge
    mus, pw, zero = _panels(v, w, mu_max)
    zero_loss = pld_pmf.DensePLDPmf(h, 0, np.ones(1), 0.0, True)  # μ = 0: the round does not depend on the client
    parts = [(zero, zero_loss)] + [(wt, wor_gaussian_pmf(1.0 / mu, sensitivity=1.0, rate=q, discretization=h))
                                   for wt, mu in zip(pw, mus)]
    pld = _pld.PrivacyLossDistribution(mixture_pmf(parts, discretization=h, pessimistic=True))
    return max(float(self_compose(pld, T).get_epsilon_for_delta(float(delta))), 0.0)
