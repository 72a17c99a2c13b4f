"""Trade-off functions as objects (model §9.4; Dong, Roth & Su 2019, arXiv:1905.02383; Zheng et al. 2021).

A trade-off function f = T(P, Q): [0, 1] → [0, 1] gives, at type I error α, the smallest type II
error of a test of P against Q; it is convex, continuous, non-increasing and f(α) ≤ 1 − α.
Every object here knows two things exactly:

- ``f(alpha)``: its value (closed form where one exists, otherwise the envelope of its tangent
  lines on a loss grid, a lower bound: :meth:`TradeOff.envelope`);
- ``delta(eps)``: its (ε, δ) curve for every real ε, δ(ε) = 1 + f*(−e^ε) = sup_α (1 − f(α) − e^ε α)
  (DRS Prop. 2.12), the dual description used for inversion, symmetrisation and composition.

Closed forms: Gaussian G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2);
f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}; Id(α) = 1 − α. Operators on the δ-curve
(exact identities, all ε ∈ ℝ):

- mixture f_p = p f + (1 − p) Id: δ_{f_p}(ε) = p·δ_f(ln((e^ε − 1 + p)/p)) for e^ε > 1 − p, else 1 − e^ε;
- inverse f⁻¹(α) = inf{t : f(t) ≤ α}, i.e. T(Q, P): δ_{f⁻¹}(ε) = 1 − e^ε + e^ε δ_f(−ε);
- min{f, g}** (double conjugate = lower convex envelope): δ = max{δ_f, δ_g};
- the subsampling operator C_p(f) = min{f_p, f_p⁻¹}** (DRS Thm 4.2; Zheng et al. 2021): the two above.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr, ndtri

__all__ = ["TradeOff", "Identity", "Gaussian", "EpsDelta", "PiecewiseLinear", "Mixture", "Inverse", "Symmetrised",
           "mixture", "subsample", "lower_hull"]

#: Loss-grid step (nats) of the default tangent envelope used where no closed form of f(α) exists.
ENVELOPE_STEP = 1e-3


def _probability(name: str, p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not (0.0 <= p <= 1.0):
        raise ValueError(f"{name} must be a number in [0, 1] (got {p!r})")
    return float(p)


class TradeOff:
    """Base class; a subclass gives :meth:`delta` and, where it has one, a closed-form :meth:`__call__`."""

    symmetric = False  #: True when f = f⁻¹ (then T(P, Q) and T(Q, P) coincide)

    def delta(self, eps) -> np.ndarray:
        """δ(ε) = sup_α (1 − f(α) − e^ε α) at every ε of ``eps`` (any real ε)."""
        raise NotImplementedError

    def cdelta(self, eps) -> np.ndarray:
        """1 − δ(ε) = inf_α (f(α) + e^ε α), accurate also where it is tiny (ε ≪ 0): the tangent lines' intercepts."""
        return 1.0 - self.delta(eps)

    def __call__(self, alpha) -> np.ndarray:
        return self.envelope()(alpha)

    # -------------------------------------------------------------------- derived operations
    def inverse(self) -> "TradeOff":
        return self if self.symmetric else Inverse(self)

    def symmetric_delta(self, eps) -> np.ndarray:
        """δ of min{f, f⁻¹}**: the curve a mechanism with T(P, Q) ≥ f for both orders of the pair satisfies."""
        d = self.delta(eps)
        return d if self.symmetric else np.maximum(d, self.inverse().delta(eps))

    def epsilon(self, delta: float, *, symmetric: bool = True) -> float:
        """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (δ(ε) non-increasing); ∞ when none below 700 nats."""
        if not (0.0 < float(delta) < 1.0):
            raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
        fn = self.symmetric_delta if symmetric else self.delta
        g = lambda e: float(fn(np.array([e]))[0]) - delta
        if g(0.0) <= 0:
            return 0.0
        hi = 1.0
        while g(hi) > 0:
            hi *= 2.0
            if hi > 700:
                return math.inf
        return float(brentq(g, 0.0, hi, xtol=1e-12, rtol=1e-12))

    def envelope(self, step: float = ENVELOPE_STEP, tail: float = 1e-12) -> "PiecewiseLinear":
        """The envelope of the tangent lines 1 − δ(ε_k) − e^{ε_k} α, ε_k on the grid ``step``·ℤ: a
        piecewise-linear lower bound of f whose (ε, δ) curve satisfies δ(ε) ≤ δ_env(ε) ≤ δ(ε − step);
        ε_k from ln(tail) to the first grid point with δ ≤ tail (the rest of δ goes to f(0) < 1)."""
        from privacy.fdp.lossdist import tangent_pair

        _, p, q, q_inf, _ = tangent_pair(self, step, tail)
        a = np.concatenate([[0.0], np.cumsum(p[::-1]), [1.0]])
        b = np.concatenate([[1.0 - q_inf], (1.0 - q_inf) - np.cumsum(q[::-1]), [0.0]])
        a = np.minimum(a, 1.0)
        return PiecewiseLinear(a, np.clip(b, 0.0, 1.0 - a), tol=1e-7)


class Identity(TradeOff):
    """Id(α) = 1 − α = T(P, P): perfect privacy."""

    symmetric = True

    def __call__(self, alpha):
        return 1.0 - np.asarray(alpha, dtype=np.float64)

    def delta(self, eps):
        return np.maximum(0.0, -np.expm1(np.asarray(eps, dtype=np.float64)))

    def cdelta(self, eps):
        return np.minimum(1.0, np.exp(np.asarray(eps, dtype=np.float64)))

    def __repr__(self):
        return "Identity()"


class Gaussian(TradeOff):
    """G_μ = T(N(0, 1), N(μ, 1)) (DRS Def. 2.7); μ ≥ 0, ∞ allowed (f = 0 for α > 0)."""

    symmetric = True

    def __init__(self, mu: float):
        if isinstance(mu, bool) or not isinstance(mu, (int, float, np.floating)) or math.isnan(mu) or mu < 0:
            raise ValueError(f"mu must be a number ≥ 0 (got {mu!r})")
        self.mu = float(mu)

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=np.float64)
        if self.mu == math.inf:
            return np.where(a > 0, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            return ndtr(-ndtri(a) - self.mu)

    def delta(self, eps):
        e = np.asarray(eps, dtype=np.float64)
        if self.mu == 0:
            return Identity().delta(e)
        if self.mu == math.inf:
            return np.ones_like(e)
        a = log_ndtr(-e / self.mu + self.mu / 2.0)
        b = e + log_ndtr(-e / self.mu - self.mu / 2.0)
        return np.where(b >= a, 0.0, np.exp(a) * -np.expm1(np.minimum(b - a, 0.0)))

    def cdelta(self, eps):  # symmetric: 1 − δ(ε) = e^ε (1 − δ(−ε)), accurate for ε < 0
        e = np.asarray(eps, dtype=np.float64)
        return np.where(e >= 0, 1.0 - self.delta(np.abs(e)), np.exp(np.minimum(e, 0.0)) * (1.0 - self.delta(np.abs(e))))

    def __repr__(self):
        return f"Gaussian(mu={self.mu:.6g})"


class PiecewiseLinear(TradeOff):
    """A trade-off function given by its knots (α_k, β_k), linear in between; exact δ from the knots.

    Knots: α_0 = 0 < … < α_n = 1 (ties allowed), β non-increasing, convex (slopes non-decreasing
    within ``tol``: no knot above the chord of its neighbours), 0 ≤ β_k ≤ 1 − α_k. ``error``: a bound on sup(f_true − f) when this is a
    lower bound of a true f (0 when exact).
    """

    def __init__(self, alpha, beta, *, error: float = 0.0, tol: float = 1e-9):
        a, b = np.asarray(alpha, dtype=np.float64), np.asarray(beta, dtype=np.float64)
        if a.ndim != 1 or a.shape != b.shape or a.size < 2:
            raise ValueError("alpha and beta must be 1-d arrays of the same length ≥ 2")
        if a[0] != 0.0 or a[-1] != 1.0 or np.any(np.diff(a) < 0):
            raise ValueError("alpha must rise from 0 to 1")
        if np.any(b < -tol) or np.any(b > 1.0 - a + tol) or np.any(np.diff(b) > tol):
            raise ValueError("beta must be non-increasing with 0 ≤ β ≤ 1 − α (a trade-off function)")
        keep = np.concatenate([[True], np.diff(a) > 0])
        a, b = a[keep], np.clip(b[keep], 0.0, 1.0 - a[keep])
        if a.size > 2:  # every knot on or below the chord of its neighbours (within tol)
            chord = b[:-2] + (b[2:] - b[:-2]) * (a[1:-1] - a[:-2]) / (a[2:] - a[:-2])
            if np.any(b[1:-1] > chord + tol):
                raise ValueError("beta must be convex in alpha (a trade-off function)")
        self.alpha, self.beta, self.error = a, b, float(error)

    def __call__(self, alpha):
        return np.interp(np.asarray(alpha, dtype=np.float64), self.alpha, self.beta)

    def delta(self, eps):
        e = np.exp(np.atleast_1d(np.asarray(eps, dtype=np.float64)))
        out = np.max(1.0 - self.beta[None, :] - e[:, None] * self.alpha[None, :], axis=1) if e.size * self.alpha.size < 4e7 \
            else np.array([np.max(1.0 - self.beta - x * self.alpha) for x in e])
        return np.maximum(out, 0.0).reshape(np.shape(eps))

    def cdelta(self, eps):
        e = np.exp(np.atleast_1d(np.asarray(eps, dtype=np.float64)))
        out = np.array([np.min(self.beta + x * self.alpha) for x in e]) if e.size * self.alpha.size >= 4e7 \
            else np.min(self.beta[None, :] + e[:, None] * self.alpha[None, :], axis=1)
        return np.minimum(out, 1.0).reshape(np.shape(eps))

    def envelope(self, step=ENVELOPE_STEP, tail=1e-12):
        return self

    @classmethod
    def from_lines(cls, slopes, intercepts) -> "PiecewiseLinear":
        """max{0, ℓ_k(α) = c_k + s_k α} on [0, 1] for lines of slopes s_k < 0 (the upper envelope)."""
        s, c = np.asarray(slopes, dtype=np.float64), np.asarray(intercepts, dtype=np.float64)
        order = np.lexsort((-c, s))  # slope ascending; the highest line first among equal slopes
        s, c = s[order], c[order]
        hs, hc = [], []
        for si, ci in zip(np.append(s, 0.0), np.append(c, 0.0)):
            if hs and si == hs[-1]:
                continue
            while len(hs) >= 2:
                # drop the last line when the new one overtakes it before it overtakes the previous
                x_prev = (hc[-2] - hc[-1]) / (hs[-1] - hs[-2])
                x_new = (hc[-1] - ci) / (si - hs[-1])
                if x_new <= x_prev:
                    hs.pop(), hc.pop()
                else:
                    break
            hs.append(si), hc.append(ci)
        hs, hc = np.array(hs), np.array(hc)
        xs = (hc[:-1] - hc[1:]) / (hs[1:] - hs[:-1])
        first = int(np.sum(xs <= 0.0))  # lines on top only at α ≤ 0
        last = hs.size - 1 - int(np.sum(xs >= 1.0))  # lines on top only at α ≥ 1
        hs, hc, xs = hs[first:last + 1], hc[first:last + 1], xs[first:last]
        a = np.concatenate([[0.0], xs, [1.0]])
        b = np.concatenate([[hc[0]], hc[:-1] + hs[:-1] * xs, [hc[-1] + hs[-1]]])
        b = np.maximum(b, 0.0)
        return cls(a, np.minimum(b, 1.0 - a), tol=1e-7)

    @classmethod
    def from_eps_delta(cls, eps, delta) -> "PiecewiseLinear":
        """The trade-off function of a mechanism that is (ε_k, δ_k)-DP for every k (both orders of the pair):
        max_k f_{ε_k,δ_k} = max{0, 1 − δ_k − e^{ε_k}α, e^{−ε_k}(1 − δ_k − α)} (DRS Prop. 2.5), exact."""
        e, d = np.asarray(eps, dtype=np.float64), np.asarray(delta, dtype=np.float64)
        if e.shape != d.shape or np.any(e < 0) or np.any((d < 0) | (d > 1)):
            raise ValueError("eps must be ≥ 0 and delta in [0, 1], arrays of one shape")
        return cls.from_lines(np.concatenate([-np.exp(e), -np.exp(-e)]),
                              np.concatenate([1.0 - d, np.exp(-e) * (1.0 - d)]))

    @classmethod
    def from_samples(cls, alpha, values) -> "PiecewiseLinear":
        """A lower bound of a convex trade-off function known only at the grid ``alpha`` (0 = α_0 < … < α_n = 1).

        On [α_k, α_{k+1}] a convex f lies above the extensions of the neighbouring chords (k − 1 to the
        right, k + 1 to the left); the bound is the convex hull of their maximum (and of 0). ``error``
        = the largest gap between the chord interpolation (an upper bound) and this lower bound.
        """
        a, v = np.asarray(alpha, dtype=np.float64), np.asarray(values, dtype=np.float64)
        if a[0] != 0.0 or a[-1] != 1.0 or np.any(np.diff(a) <= 0):
            raise ValueError("alpha must rise strictly from 0 to 1")
        s = np.diff(v) / np.diff(a)
        n = a.size - 1
        knot = np.full(n + 1, np.inf)  # at each knot the smaller of the two one-sided bounds
        xs, ys = [], []
        for k in range(n):
            lines = []
            if k >= 1:
                lines.append((s[k - 1], v[k] - s[k - 1] * a[k]))
            if k + 1 < n:
                lines.append((s[k + 1], v[k + 1] - s[k + 1] * a[k + 1]))
            if not lines:
                lines.append((s[k], v[k] - s[k] * a[k]))
            at = lambda x: max(0.0, max(m * x + q for m, q in lines))
            knot[k], knot[k + 1] = min(knot[k], at(a[k])), min(knot[k + 1], at(a[k + 1]))
            kinks = [-q / m for m, q in lines if m != 0]  # where a line meets 0
            if len(lines) == 2 and lines[0][0] != lines[1][0]:
                kinks.append((lines[1][1] - lines[0][1]) / (lines[0][0] - lines[1][0]))
            for x in kinks:
                if a[k] < x < a[k + 1]:
                    xs.append(x), ys.append(at(x))
        xs, ys = np.concatenate([a, xs]), np.concatenate([np.minimum(knot, v), ys])
        order = np.argsort(xs, kind="stable")
        xs, ys = xs[order], ys[order]
        hx, hy = lower_hull(xs, np.minimum(ys, 1.0 - xs))
        upper = np.interp(hx, a, v)
        return cls(hx, hy, error=float(np.max(upper - hy)), tol=1e-7)


def lower_hull(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The lower convex hull of the points (x_i, y_i), x sorted ascending: the double conjugate f**."""
    hx, hy = [], []
    for xi, yi in zip(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)):
        while len(hx) >= 2 and (hy[-1] - hy[-2]) * (xi - hx[-2]) >= (yi - hy[-2]) * (hx[-1] - hx[-2]):
            hx.pop(), hy.pop()
        hx.append(xi), hy.append(yi)
    return np.array(hx), np.array(hy)


class EpsDelta(PiecewiseLinear):
    """f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}: (ε, δ)-DP (DRS Prop. 2.5); ε₀-LDP
    randomized response is exactly f_{ε₀,0}."""

    symmetric = True

    def __init__(self, epsilon: float, delta: float = 0.0):
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating)) or not (0 <= epsilon < math.inf):
            raise ValueError(f"epsilon must be a finite number ≥ 0 (got {epsilon!r})")
        d = _probability("delta", delta)
        self.eps, self.dlt = float(epsilon), d
        k = (1.0 - d) / (1.0 + math.exp(epsilon))
        super().__init__([0.0, k, 1.0 - d, 1.0], [1.0 - d, (1.0 - d) - math.exp(epsilon) * k, 0.0, 0.0], tol=1e-12)

    def __repr__(self):
        return f"EpsDelta({self.eps:.6g}, {self.dlt:.6g})"


class Mixture(TradeOff):
    """f_p = p f + (1 − p) Id (DRS §4; Zheng et al. 2021): T(P, (1 − p)P + pQ) when f = T(P, Q)."""

    def __init__(self, f: TradeOff, p: float):
        self.f, self.p = f, _probability("p", p)

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=np.float64)
        return self.p * self.f(a) + (1.0 - self.p) * (1.0 - a)

    def delta(self, eps):
        e = np.asarray(eps, dtype=np.float64)
        if self.p == 0.0:
            return Identity().delta(e)
        x = np.expm1(e) + self.p  # e^ε − 1 + p
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.where(x > 0, np.log(np.where(x > 0, x, 1.0) / self.p), 0.0)
            out = np.where(x > 0, self.p * self.f.delta(inner), -np.expm1(e))
        return np.maximum(out, 0.0)

    def cdelta(self, eps):  # (1 − p) + p·c_f(ε′), or e^ε when e^ε ≤ 1 − p
        e = np.asarray(eps, dtype=np.float64)
        if self.p == 0.0:
            return Identity().cdelta(e)
        x = np.expm1(e) + self.p
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.where(x > 0, np.log(np.where(x > 0, x, 1.0) / self.p), 0.0)
            return np.where(x > 0, (1.0 - self.p) + self.p * self.f.cdelta(inner), np.exp(e))


class Inverse(TradeOff):
    """f⁻¹(α) = inf{t ∈ [0, 1] : f(t) ≤ α} = T(Q, P) (DRS Prop. 2.4)."""

    def __init__(self, f: TradeOff):
        self.f = f

    def inverse(self):
        return self.f

    def delta(self, eps):
        return np.clip(1.0 - self.cdelta(eps), 0.0, 1.0)

    def cdelta(self, eps):  # 1 − δ_{f⁻¹}(ε) = e^ε (1 − δ_f(−ε))
        e = np.asarray(eps, dtype=np.float64)
        return np.exp(e) * self.f.cdelta(-e)


class Symmetrised(TradeOff):
    """min{f, g}** (the lower convex envelope of the pointwise minimum): δ = max{δ_f, δ_g};
    ``symmetric`` when g = f⁻¹ (then min{f, f⁻¹}** is its own inverse)."""

    def __init__(self, f: TradeOff, g: TradeOff, *, symmetric: bool = False):
        self.f, self.g, self.symmetric = f, g, bool(symmetric)

    def delta(self, eps):
        return np.maximum(self.f.delta(eps), self.g.delta(eps))

    def cdelta(self, eps):
        return np.minimum(self.f.cdelta(eps), self.g.cdelta(eps))


def mixture(f: TradeOff, p: float) -> TradeOff:
    """f_p = p f + (1 − p) Id (f itself at p = 1: no mass on the identity, whose loss distribution is degenerate)."""
    return f if _probability("p", p) == 1.0 else Mixture(f, p)


def subsample(f: TradeOff, p: float) -> TradeOff:
    """C_p(f) = min{f_p, f_p⁻¹}** (DRS Thm 4.2: a mechanism f-DP under replace-one, run on m of n records
    drawn without replacement, is C_{m/n}(f)-DP; Zheng et al. 2021). At p = 1, C_1(f) = min{f, f⁻¹}**."""
    fp = mixture(f, p)
    return Symmetrised(fp, Inverse(fp), symmetric=True)
