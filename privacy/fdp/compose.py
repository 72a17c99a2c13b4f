"""The tensor product ⊗ of trade-off functions: composition (model §9.4; DRS Thm 3.2, Zheng et al. 2021 Lemma 3.3).

f ⊗ g = T(P₁×P₂, Q₁×Q₂) for f = T(P₁, Q₁), g = T(P₂, Q₂); commutative and associative; a
composition of mechanisms that are f₁-, …, f_R-DP is f₁ ⊗ … ⊗ f_R-DP.

- Gaussians: G_{μ₁} ⊗ … ⊗ G_{μ_R} = G_μ with μ = √(Σ μᵢ²) (exact, DRS Cor. 3.3); Id is the unit.
- Otherwise numerically (:mod:`privacy.fdp.lossdist`): each factor becomes its loss distribution
  on the grid ``step`` (pessimistic), the distributions convolve. The result's δ(ε) is an upper
  bound with ε ≤ ε_true(δ − moved) + R·step after R factors (``moved``: the truncated mass).
"""

from __future__ import annotations

import math

import numpy as np

from privacy.fdp.lossdist import DEFAULT_STEP, DEFAULT_TAIL, LossDistribution, loss_pair
from privacy.fdp.tradeoff import Gaussian, Identity, PiecewiseLinear, TradeOff

__all__ = ["Composition", "tensor", "tensor_power"]


class Composition(TradeOff):
    """A numerically composed trade-off function: the loss of f under Q (``up``) and of f⁻¹ under P (``down``).

    ``factors``: how many trade-off functions were composed (the ε error is ≤ factors·step).
    """

    def __init__(self, up: LossDistribution, down: LossDistribution, *, factors: int, symmetric: bool = False):
        self.up, self.down, self.factors, self.symmetric = up, down, int(factors), bool(symmetric)

    @property
    def step(self) -> float:
        return self.up.step

    @property
    def moved(self) -> float:
        """Mass moved by truncation (the δ error bound besides the grid)."""
        return max(self.up.moved, self.down.moved)

    @property
    def epsilon_error(self) -> float:
        """ε computed minus ε exact lies in [0, factors·step] (at δ − moved)."""
        return self.factors * self.step

    def delta(self, eps):
        return self.up.delta(eps)

    def inverse(self):
        if self.symmetric:
            return self
        return Composition(self.down, self.up, factors=self.factors)

    def epsilon(self, delta: float, *, symmetric: bool = True) -> float:
        eps = self.up.epsilon(delta)
        if symmetric and not self.symmetric:
            eps = max(eps, self.down.epsilon(delta))
        return eps

    def __call__(self, alpha):
        return self.piecewise()(alpha)

    def piecewise(self) -> PiecewiseLinear:
        """The exact trade-off function of the discrete pair (likelihood ratios in decreasing order)."""
        q = self.up.probs[::-1]
        p = q * np.exp(-self.up.losses[::-1])
        a = np.minimum(np.concatenate([[0.0], np.cumsum(p), [1.0]]), 1.0)
        b = np.concatenate([[1.0 - self.up.inf], (1.0 - self.up.inf) - np.cumsum(q), [0.0]])
        return PiecewiseLinear(a, np.clip(b, 0.0, 1.0 - a), tol=1e-7)


def _gaussian_mu(f) -> float | None:
    if isinstance(f, Gaussian):
        return f.mu
    if isinstance(f, Identity):
        return 0.0
    return None


def _pair(f, step, tail):
    if isinstance(f, Composition):
        if f.step != step:
            raise ValueError(f"a composition built with step {f.step} cannot be composed on the grid {step}")
        return f.up, f.down, f.factors
    up, down = loss_pair(f, step=step, tail=tail)
    return up, down, 1


def tensor(*fs: TradeOff, step: float = DEFAULT_STEP, tail: float = DEFAULT_TAIL) -> TradeOff:
    """f₁ ⊗ f₂ ⊗ …: closed form for Gaussians (and Id), numerical otherwise."""
    if not fs:
        return Identity()
    mus = [_gaussian_mu(f) for f in fs]
    if all(m is not None for m in mus):
        return Gaussian(math.sqrt(sum(m * m for m in mus)))
    parts = [_pair(f, step, tail) for f in fs if not isinstance(f, Identity)]
    up, down, n = parts[0]
    for u, d, k in parts[1:]:
        up, down, n = up.compose(u, tail), down.compose(d, tail), n + k
    return Composition(up, down, factors=n, symmetric=all(f.symmetric for f in fs))


def tensor_power(f: TradeOff, count: int, *, step: float = DEFAULT_STEP, tail: float = DEFAULT_TAIL) -> TradeOff:
    """f^{⊗count} (Id for count = 0); Gaussians G_μ^{⊗R} = G_{μ√R}."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an integer ≥ 0 (got {count!r})")
    if count == 0 or isinstance(f, Identity):
        return Identity()
    mu = _gaussian_mu(f)
    if mu is not None:
        return Gaussian(mu * math.sqrt(count))
    up, down, n = _pair(f, step, tail)
    up_t = up.self_compose(count, tail)
    return Composition(up_t, up_t if f.symmetric else down.self_compose(count, tail), factors=n * count,
                       symmetric=f.symmetric)
