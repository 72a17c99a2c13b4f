"""Privacy-loss distributions of trade-off functions on a loss grid, and their composition (model §9.4).

For f = T(P, Q) the privacy loss L = ln(dQ/dP) under Q gives δ(ε) = E_Q[(1 − e^{ε − L})₊] (L = +∞
with the mass 1 − f(0)); f⁻¹ = T(Q, P) has the loss ln(dP/dQ) under P. Composition f ⊗ g
= T(P₁×P₂, Q₁×Q₂) adds independent losses: the distributions convolve (FFT).

Discretisation (``step`` h nats, pessimistic):

- a trade-off function with a δ-curve is replaced by the envelope of its tangent lines at slopes
  −e^{kh} (:meth:`privacy.fdp.tradeoff.TradeOff.envelope`): a discrete pair whose losses lie on the
  grid, δ(ε) ≤ δ_env(ε) ≤ δ(ε − h); a piecewise-linear f has its segment losses rounded up;
- then, for T rounds composed, ε_true(δ) ≤ ε(δ) ≤ ε_true(δ − τ) + T·h: the envelope is dominated by
  the pair whose loss is L + h (it is f(e^h α)), whose T-fold composition has loss ΣL + Th; τ is the
  mass moved by truncation (tails of mass ≤ ``tail`` each, per round and per composition step: the
  low tail is moved up to the lowest kept bin, the high tail to +∞, both pessimistic; the
  integrand of δ lies in [0, 1], so moving mass m changes δ by at most m), reported as ``moved``;
  each round's loss range is cut at ln(tail₀) below (Q-mass ≤ tail₀ there) and where δ ≤ tail₀
  above (tail₀ = 10⁻¹²), adding at most 2·tail₀ per round to δ in that upper bound. The lower bound
  ε_true ≤ ε holds unconditionally: the envelope lies below f, hence its inverse below f⁻¹.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.signal import fftconvolve

__all__ = ["DEFAULT_STEP", "DEFAULT_TAIL", "LossDistribution", "grid_range", "tangent_pair", "loss_pair"]

#: Loss grid step h (nats) of the fdp accountant: ε is at most T·h above the exact value after T rounds.
DEFAULT_STEP = 1e-4
#: Mass each truncation may move (per round and per composition step).
DEFAULT_TAIL = 1e-13


def grid_range(delta, step: float, tail: float) -> tuple[int, int]:
    """Integer grid indices (lo, hi): lo·h ≈ ln(tail) (Q-mass below is ≤ e^{lo·h} ≤ tail), hi·h the first grid
    point with δ(hi·h) ≤ tail (or 64 nats)."""
    lo = int(math.floor(math.log(tail) / step))
    e = 1.0
    while float(delta(np.array([e]))[0]) > tail and e < 64.0:
        e *= 2.0
    k_lo, k_hi = 0, int(math.ceil(e / step))
    while k_hi - k_lo > 1:
        mid = (k_lo + k_hi) // 2
        if float(delta(np.array([mid * step]))[0]) > tail:
            k_lo = mid
        else:
            k_hi = mid
    return lo, max(k_hi, lo + 1)


def tangent_pair(f, step: float, tail: float):
    """The discrete pair of the tangent envelope: (lo, p, q, q_inf, p_inf) with P-mass p_k and Q-mass q_k
    = e^{(lo+k)h} p_k at loss (lo + k)·h, q_inf = δ(hi·h) (Q-mass at loss +∞), p_inf the P-mass at −∞."""
    lo, hi = grid_range(f.delta, step, tail)
    eps = np.arange(lo, hi + 1) * step
    c = np.asarray(f.cdelta(eps), dtype=np.float64)
    e = np.exp(eps)
    # line k (slope −e^{ε_k}, ascending ε) meets line k + 1 (steeper, to its left) at x_k
    x = (c[1:] - c[:-1]) / (e[1:] - e[:-1])
    zero = float(min(1.0, max(c[0], 0.0) / e[0]))  # the flattest line meets 0 here
    x = np.clip(np.minimum.accumulate(x), 0.0, zero)  # non-increasing in k (removes rounding noise)
    seg_right = np.concatenate([[zero], x])  # line k is on top on [x_k, x_{k−1}]
    seg_left = np.append(x, 0.0)
    p = np.maximum(seg_right - seg_left, 0.0)
    return lo, p, e * p, float(1.0 - c[-1]), float(max(0.0, 1.0 - zero))


class LossDistribution:
    """The distribution of a privacy loss on the grid h·ℤ: ``probs[i]`` at loss (lo + i)·h, ``inf`` at +∞."""

    def __init__(self, step: float, lo: int, probs, inf: float, moved: float = 0.0):
        self.step, self.lo = float(step), int(lo)
        self.probs = np.maximum(np.asarray(probs, dtype=np.float64), 0.0)
        self.inf, self.moved = float(min(max(inf, 0.0), 1.0)), float(moved)

    @property
    def losses(self) -> np.ndarray:
        return (self.lo + np.arange(self.probs.size)) * self.step

    def delta(self, eps) -> np.ndarray:
        """δ(ε) = Σ_i probs_i (1 − e^{ε − L_i})₊ + inf."""
        e = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        L = self.losses
        if e.size <= 4:
            out = np.array([float(np.dot(self.probs[L > x], -np.expm1(x - L[L > x]))) for x in e])
        else:  # suffix sums: Σ_{L_i > ε} q_i − e^ε Σ_{L_i > ε} q_i e^{−L_i}
            s1 = np.append(np.cumsum(self.probs[::-1])[::-1], 0.0)
            s2 = np.append(np.cumsum((self.probs * np.exp(np.minimum(-L, 700.0)))[::-1])[::-1], 0.0)
            i = np.searchsorted(L, e, side="right")
            out = np.maximum(s1[i] - np.exp(e) * s2[i], 0.0)
        return np.minimum(out + self.inf, 1.0).reshape(np.shape(eps))

    def epsilon(self, delta: float) -> float:
        """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (∞ when the mass at +∞ alone exceeds it)."""
        if self.inf >= delta:
            return math.inf
        g = lambda x: float(self.delta(np.array([x]))[0]) - delta
        if g(0.0) <= 0:
            return 0.0
        hi = max(self.losses[-1], 0.0) + self.step
        return float(brentq(g, 0.0, hi, xtol=1e-10, rtol=1e-12))

    def truncate(self, tail: float) -> "LossDistribution":
        """Move the low tail of mass ≤ ``tail`` up into the lowest kept bin and the high tail of mass ≤ ``tail`` to +∞."""
        p = self.probs
        c = np.cumsum(p)
        i0 = int(np.searchsorted(c, tail, side="right"))
        r = np.cumsum(p[::-1])
        i1 = p.size - int(np.searchsorted(r, tail, side="right"))
        if i1 <= i0:
            return self
        low, high = float(c[i0 - 1]) if i0 > 0 else 0.0, float(r[p.size - i1 - 1]) if i1 < p.size else 0.0
        kept = p[i0:i1].copy()
        kept[0] += low
        return LossDistribution(self.step, self.lo + i0, kept, self.inf + high, self.moved + low + high)

    def compose(self, other: "LossDistribution", tail: float = DEFAULT_TAIL) -> "LossDistribution":
        if other.step != self.step:
            raise ValueError(f"loss grids differ (step {self.step} vs {other.step}); build both with the same step")
        probs = fftconvolve(self.probs, other.probs) if min(self.probs.size, other.probs.size) > 64 \
            else np.convolve(self.probs, other.probs)
        inf = self.inf + other.inf - self.inf * other.inf
        return LossDistribution(self.step, self.lo + other.lo, probs, inf, self.moved + other.moved).truncate(tail)

    def self_compose(self, count: int, tail: float = DEFAULT_TAIL) -> "LossDistribution":
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an integer ≥ 0 (got {count!r})")
        out, base = LossDistribution(self.step, 0, [1.0], 0.0), self
        while count:
            if count & 1:
                out = out.compose(base, tail)
            count >>= 1
            if count:
                base = base.compose(base, tail)
        return out


def _from_masses(step, losses_mass, tail, inf) -> LossDistribution:
    """A LossDistribution from (loss, mass) pairs, each loss rounded up to the grid."""
    loss, mass = losses_mass
    if loss.size == 0:
        return LossDistribution(step, 0, [0.0], inf)
    idx = np.ceil(loss / step - 1e-9).astype(np.int64)
    lo = int(idx.min())
    probs = np.bincount(idx - lo, weights=mass)
    return LossDistribution(step, lo, probs, inf).truncate(tail)


def loss_pair(f, *, step: float = DEFAULT_STEP, tail: float = DEFAULT_TAIL) -> tuple[LossDistribution, LossDistribution]:
    """(loss of f under Q, loss of f⁻¹ under P) on the grid ``step``: the PLD of f (both directions)."""
    from privacy.fdp.tradeoff import PiecewiseLinear

    if isinstance(f, PiecewiseLinear):
        dp, dq = np.diff(f.alpha), -np.diff(f.beta)
        both = (dp > 0) & (dq > 0)
        lq = np.log(dq[both] / dp[both])
        up = _from_masses(step, (lq, dq[both]), tail, 1.0 - f.beta[0])
        down = _from_masses(step, (-lq, dp[both]), tail, float(dp[(dp > 0) & (dq <= 0)].sum()))
        return up, down
    lo, p, q, q_inf, p_inf = tangent_pair(f, step, tail)
    up = LossDistribution(step, lo, q, q_inf).truncate(tail)
    down = LossDistribution(step, -(lo + p.size - 1), p[::-1], p_inf).truncate(tail)
    return up, down
