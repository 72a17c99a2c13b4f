"""PLD of a round sampled without replacement under replace-one neighbours (model §9.5, "Sampling without
replacement").

A round that runs a Gaussian release of sensitivity S (replace-one) and noise std σ on K of M elements drawn
uniformly without replacement, q = K/M. With P = N(S, σ²), Q = N(0, σ²) (the release's dominating pair) and
A = q·P + (1 − q)·Q:

- for α ≥ 1 either order of a neighbouring pair has H_α ≤ H_α(A‖Q) (Balle, Barthe & Gaboardi 2018, advanced joint
  convexity: H_{1+q(α₀−1)}((1 − q)μ₀ + qμ₁ ‖ (1 − q)μ₀ + qμ₁′) = q·H_{α₀}(μ₁ ‖ (1 − β)μ₀ + βμ₁′), and each of μ₀, μ₁, μ₁′
  is a mixture of releases on replace-one neighbours);
- for α < 1, H_α(μ‖μ′) = 1 − α + α·H_{1/α}(μ′‖μ), so the other order bounds it.

The round is therefore dominated, for every α, by the symmetric pair whose privacy profile is

    δ_sym(ε) = max(H_{e^ε}(A‖Q), H_{e^ε}(Q‖A))           (ε ≥ 0)
    δ_sym(ε) = 1 − e^ε + e^ε·δ_sym(−ε)                    (ε < 0),

the profile of Dong, Roth & Su's C_q(f) = min{f_q, f_q⁻¹}** (JRSS-B 2022, Thm 4.2; the convex conjugate of the hull of
a minimum is the maximum of the conjugates). Composing the directions separately and taking the larger ε, as for
Poisson sampling under add/remove, would not be valid here: C_q(f) lies below both f_q and f_q⁻¹, and one
neighbouring pair meets both directions in every round.

The two directional profiles are dp_accounting's sampled-Gaussian privacy losses (adjacency REMOVE: A against Q;
ADD: Q against A), evaluated exactly on the grid ε_i = i·h, |i| ≤ n; the PMF is built from δ_sym on that grid by the
pessimistic connect-the-dots construction of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022 (arXiv:2207.04380),
which dominates any pair with that profile; δ_sym(n·h), the tail beyond the loss range dp_accounting truncates
(mass e⁻⁵⁰), goes to the infinite loss. The optimistic end (a lower bound on the ε of the discretized pair, for
:func:`privacy.pld_bracket.epsilon_bracket`) is the same PMF with every loss moved one step down: its profile is
δ_pess(ε + h) ≤ δ_sym(ε).

For FLORAS with V revealed each round is this construction given V, and the round's PLD is the V-mixture
(:func:`privacy.pld.cauchy_mixture_pld`, ``sampling = "without-replacement"``).
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as _pld
from dp_accounting.pld import privacy_loss_mechanism as _plm

__all__ = ["symmetric_profile", "wor_gaussian_pmf", "wor_gaussian_pld", "wor_loss_bound"]


def _losses(std: float, sensitivity: float, rate: float):
    kw = dict(sensitivity=float(sensitivity), sampling_prob=float(rate))
    return (_plm.GaussianPrivacyLoss(float(std), adjacency_type=_plm.AdjacencyType.REMOVE, **kw),
            _plm.GaussianPrivacyLoss(float(std), adjacency_type=_plm.AdjacencyType.ADD, **kw))


def wor_loss_bound(std: float, sensitivity: float, rate: float) -> float:
    """The largest |loss| [nats] either direction keeps (dp_accounting's truncation): the symmetric grid's half-width."""
    bound = 0.0
    for loss in _losses(std, sensitivity, rate):
        b = loss.connect_dots_bounds()
        bound = max(bound, abs(float(b.epsilon_upper)), abs(float(b.epsilon_lower)))
    return bound


def symmetric_profile(eps, *, std: float, sensitivity: float, rate: float) -> np.ndarray:
    """δ_sym(ε) of the module docstring at the given ε (any sign), as an array."""
    eps = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    remove, add = _losses(std, sensitivity, rate)
    mag = np.abs(eps)
    pos = np.maximum(np.asarray(remove.get_delta_for_epsilon(mag), dtype=np.float64),
                     np.asarray(add.get_delta_for_epsilon(mag), dtype=np.float64))
    pos = np.clip(pos, 0.0, 1.0)
    neg = -np.expm1(-mag) + np.exp(-mag) * pos  # δ(−|ε|) = 1 − e^{−|ε|} + e^{−|ε|}·δ(|ε|)
    return np.where(eps < 0.0, neg, pos)


def wor_gaussian_pmf(std: float, *, sensitivity: float, rate: float, discretization: float,
                     pessimistic: bool = True) -> pld_pmf.DensePLDPmf:
    """The connect-the-dots PMF of δ_sym on the grid i·h, |i| ≤ ⌈bound/h⌉ (module docstring); ``pessimistic`` False
    moves every loss one step down (the optimistic end). The caller checks the grid's size first."""
    h = float(discretization)
    n = max(1, int(math.ceil(wor_loss_bound(std, sensitivity, rate) / h)))
    grid = np.arange(-n, n + 1)
    deltas = symmetric_profile(grid * h, std=std, sensitivity=sensitivity, rate=rate)
    deltas = np.minimum.accumulate(deltas)  # non-increasing in ε up to rounding at the 1e-16 level
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(h, -n, n, deltas).to_dense_pmf()
    if pessimistic:
        return pmf
    return pld_pmf.DensePLDPmf(h, pmf._lower_loss - 1, pmf._probs, pmf._infinity_mass, False)


def wor_gaussian_pld(std: float, *, sensitivity: float, rate: float, discretization: float,
                     pessimistic: bool = True) -> _pld.PrivacyLossDistribution:
    """The symmetric PLD of one Gaussian round sampled without replacement (module docstring)."""
    pmf = wor_gaussian_pmf(std, sensitivity=sensitivity, rate=rate, discretization=discretization, pessimistic=pessimistic)
    return _pld.PrivacyLossDistribution(pmf)
