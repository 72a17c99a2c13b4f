"""The law of FLORAS's inactive-sequence noise variance with N_r receive antennas (model §5.2; §9.5, "Several
antennas"): a pure computation, cached per (γ, N_r).

With the maximum-ratio combiner of model §5.2 the release ŝ/b carries, given the pilots, Gaussian noise of variance

    V = Σ_{j=1}^{γ} Y_j,   Y_j = 1/X_j,   X_j ~ χ²_{N_r} i.i.d.   (ŝ/b units, γ = N − K inactive sequences),

independent of the data; N_r = 1 is the Lévy(0, γ²) law of model §7.2 (V = γ²/Z²). The accountant writes the
mixture in z = γ/√V (the |Z| of one antenna). Nothing closed-form is known for N_r > 1, so the law is computed on
a grid, pessimistically (every value of V rounded down, i.e. less noise):

- Ỹ_j = min(h·⌊Y_j/h⌋, V_cap) ≤ Y_j, with P(Ỹ = ih) = F_Y((i+1)h) − F_Y(ih), F_Y(y) = P(X ≥ 1/y) = Q(N_r/2, 1/(2y))
  (regularised upper incomplete gamma) and the mass above V_cap lumped at V_cap;
- Ṽ = Σ_j Ỹ_j ≤ V: its pmf is the γ-fold convolution (FFT, by binary powers), each partial sum truncated at V_cap
  with the mass beyond lumped there (a sum that reaches V_cap stays there: still ≤ V);
- given the X's, the release with V is the release with Ṽ plus independent N(0, V − Ṽ): a post-processing, so the
  mixture over Ṽ dominates the round (model §9.5).

Grid: the tail edge v_tail = γ²/z_max² has P(V ≤ v_tail) ≤ :data:`TAIL` by the Chernoff bound
P(V ≤ v) ≤ inf_s e^{sv}·L(s)^γ, L(s) = E e^{−sY} = 2(s/2)^{a/2}·K_a(√(2s))/Γ(a), a = N_r/2 (the Laplace transform of
the inverse-gamma law; a = ½ gives e^{−√(2s)}, the Lévy one); the step h = :data:`REL_STEP`·v_tail/γ, so the rounding
lowers V by at most REL_STEP·v_tail (0.4 %: z at most 0.2 % too large at the tail edge, less elsewhere); V_cap =
:data:`CAP_RATIO`²·v_tail (z below z_max/CAP_RATIO counted at z_max/CAP_RATIO: little mass for N_r ≥ 2, 0.7 % at N_r = 2,
γ = 12). A grid above :data:`MAX_POINTS` points (γ above about 80) raises :class:`privacy.pld.PldTooLarge`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.signal import fftconvolve
from scipy.special import gammaincc, gammaln, kve, ndtr

__all__ = ["CAP_RATIO", "MAX_POINTS", "REL_STEP", "TAIL", "NoiseLaw", "chernoff_lower_tail", "log_kve", "log_laplace",
           "noise_law"]

#: Mass of the loss sent to infinity per round: 2Φ̄(6.7), the one-antenna mixture's tail (model §9.5).
TAIL = 2.0 * float(ndtr(-6.7))
#: Grid step relative to v_tail/γ: Ṽ ≥ V − γh = V − REL_STEP·v_tail.
REL_STEP = 4e-3
#: z range of the grid: z from z_max/CAP_RATIO (V_cap = CAP_RATIO²·v_tail) to z_max.
CAP_RATIO = 20.0
#: Most grid points (V_cap/h = CAP_RATIO²·γ/REL_STEP = 10⁵·γ): about 64 MiB per FFT array.
MAX_POINTS = 2**23


#: Bessel arguments above this times (1 + 4ν²) take the Hankel expansion (the library's routine gives up near 10⁹).
ASYMPTOTIC = 1e6


def log_kve(nu: float, x) -> np.ndarray:
    """ln(e^x·K_ν(x)) elementwise for x > 0; above :data:`ASYMPTOTIC`·(1 + 4ν²) the first three terms of the Hankel
    expansion √(π/(2x))·(1 + (μ−1)/(8x) + (μ−1)(μ−9)/(2(8x)²)), μ = 4ν² (the next term is below 10⁻¹⁶ there)."""
    x = np.asarray(x, dtype=np.float64)
    mu = 4.0 * nu * nu
    big = x > ASYMPTOTIC * (1.0 + mu)
    xb = np.where(big, x, 1.0)
    series = 1.0 + (mu - 1.0) / (8.0 * xb) + (mu - 1.0) * (mu - 9.0) / (2.0 * (8.0 * xb) ** 2)
    return np.where(big, 0.5 * np.log(math.pi / (2.0 * xb)) + np.log(series), np.log(kve(nu, np.where(big, 1.0, x))))


def log_laplace(s, a: float) -> np.ndarray:
    """ln L(s) = ln E e^{−sY} for Y = 1/X, X ~ Gamma(shape a, rate ½) (χ² with 2a degrees of freedom), elementwise for
    s > 0: ln[2(s/2)^{a/2}·K_a(√(2s))/Γ(a)] (a = ½: −√(2s))."""
    s = np.asarray(s, dtype=np.float64)
    x = np.sqrt(2.0 * s)
    return math.log(2.0) + 0.5 * a * np.log(s / 2.0) + log_kve(a, x) - x - gammaln(a)


def chernoff_lower_tail(v: float, *, gamma: int, antennas: int) -> float:
    """An upper bound on P(V ≤ v): inf_s exp(s·v + γ·ln L(s)) (Chernoff; exact exponent, no prefactor)."""
    a, g = antennas / 2.0, int(gamma)

    def log_bound(log_s: float) -> float:
        s = math.exp(log_s)
        return s * v + g * float(log_laplace(s, a))

    # the exponent is convex in s; its minimum lies near s = (γ/(2v))² for large γ²/v (a = ½ exactly)
    guess = math.log(max((g / (2.0 * v)) ** 2, 1e-12))
    res = optimize.minimize_scalar(log_bound, bracket=(guess - 2.0, guess + 2.0))
    return float(min(1.0, math.exp(min(0.0, res.fun))))


def _tail_edge(gamma: int, antennas: int, blocks: int = 1) -> float:
    """v_tail: the largest v (to 0.1 %) with blocks·chernoff_lower_tail(v) ≤ TAIL (a union bound over the B blocks'
    independent V_m for the smallest of them; B = 1: the round's one V)."""
    bound = lambda v: blocks * chernoff_lower_tail(v, gamma=gamma, antennas=antennas)  # noqa: E731
    hi = float(gamma) / max(antennas - 2.0, 0.5)  # about the median of V or below it: its bound is far above TAIL
    while bound(hi) <= TAIL:
        hi *= 2.0
    lo = hi / 2.0
    while bound(lo) > TAIL:
        lo /= 2.0
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if bound(mid) <= TAIL else (lo, mid)
    return lo


def _truncated(c: np.ndarray, n: int) -> np.ndarray:
    """The pmf ``c`` on 0..len−1 cut to 0..n with the mass beyond n lumped at n (negatives of the FFT set to 0)."""
    c = np.clip(c, 0.0, None)
    out = c[: n + 1].copy()
    out[n] += c[n + 1:].sum()
    return out


@dataclass(frozen=True)
class NoiseLaw:
    """The pessimistic law of V on the grid {0, h, …, n·h} (n·h = V_cap), as its cumulative sums.

    Attributes: ``gamma``, ``antennas``; ``step`` h; ``z_max`` = γ/√v_tail; ``cumulative[i]`` = P(Ṽ ≤ i·h);
    ``blocks`` B: the law of the smallest of B independent V_m (B = 1: V itself).
    """

    gamma: int
    antennas: int
    step: float
    z_max: float
    cumulative: np.ndarray
    blocks: int = 1

    def cdf_z(self, z) -> np.ndarray:
        """P(Z̃ ≤ z), Z̃ = γ/√Ṽ ≥ γ/√V: a lower bound on the CDF of z (0 at z = 0)."""
        z = np.asarray(z, dtype=np.float64)
        with np.errstate(divide="ignore"):
            v = np.where(z > 0.0, float(self.gamma) ** 2 / np.maximum(z, 1e-300) ** 2, np.inf)
        # P(Ṽ ≥ v) = 1 − P(Ṽ ≤ ⌈v/h⌉·h − h); v beyond the grid: Ṽ ≤ V_cap < v always
        k = np.ceil(v / self.step) - 1.0
        below = np.where(k >= len(self.cumulative) - 1, 1.0,
                         np.where(k < 0, 0.0, self.cumulative[np.clip(k, 0, len(self.cumulative) - 1).astype(np.int64)]))
        return np.clip(1.0 - below, 0.0, 1.0)

    @property
    def tail(self) -> float:
        """P(Z̃ > z_max), the mass the mixture sends to the infinite loss."""
        return float(1.0 - self.cdf_z(self.z_max))


@functools.lru_cache(maxsize=8)
def noise_law(gamma: int, antennas: int, blocks: int = 1) -> NoiseLaw:
    """The pessimistic :class:`NoiseLaw` of V for γ inactive sequences and N_r = ``antennas`` (see the module doc).

    ``blocks`` B > 1 pilot blocks (model §5.2, "Antennas over coherence blocks"): the law of V_min = min_m V_m over
    B independent V_m of this law, P(Ṽ_min ≤ v) = 1 − (1 − P(Ṽ ≤ v))^B (min_m Ṽ_m ≤ min_m V_m: still pessimistic),
    the tail edge moved down so that B·P(V ≤ v_tail) ≤ TAIL (the same tail mass per round as B = 1)."""
    from privacy.pld import PldTooLarge

    if isinstance(gamma, bool) or not float(gamma).is_integer() or gamma < 1:
        raise ValueError(f"gamma must be a whole number ≥ 1 with several antennas (got {gamma!r})")
    if isinstance(antennas, bool) or not float(antennas).is_integer() or antennas < 1:
        raise ValueError(f"antennas must be a whole number ≥ 1 (got {antennas!r})")
    if isinstance(blocks, bool) or not float(blocks).is_integer() or blocks < 1:
        raise ValueError(f"blocks must be a whole number ≥ 1 (got {blocks!r})")
    g, nr, nb = int(gamma), int(antennas), int(blocks)
    v_tail = _tail_edge(g, nr, nb)
    h = REL_STEP * v_tail / g
    n = int(math.ceil(CAP_RATIO**2 * v_tail / h))
    if n > MAX_POINTS:
        raise PldTooLarge(f"the noise law of FLORAS with {nr} receive antennas and γ = {g} inactive sequences needs "
                          f"{n:.3g} grid points, above {MAX_POINTS}: use fewer inactive sequences (floras.N − K ≤ "
                          f"{int(MAX_POINTS * REL_STEP / CAP_RATIO**2)}) or one receive antenna")
    edges = h * np.arange(n + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        F = np.where(edges > 0.0, gammaincc(nr / 2.0, 0.5 / np.maximum(edges, 1e-300)), 0.0)  # F_Y(i·h)
    p = np.empty(n + 1)
    p[:n] = np.diff(F)
    p[n] = 1.0 - F[n]
    out, base, e = None, p, g
    while e:  # binary powers of the truncated convolution
        if e & 1:
            out = base if out is None else _truncated(fftconvolve(out, base), n)
        e >>= 1
        if e:
            base = _truncated(fftconvolve(base, base), n)
    cumulative = np.minimum(np.cumsum(out), 1.0)
    if nb > 1:  # the smallest of B independent copies: 1 − (1 − F)^B
        with np.errstate(divide="ignore"):
            cumulative = np.minimum(-np.expm1(nb * np.log1p(-cumulative)), 1.0)
    return NoiseLaw(gamma=g, antennas=nr, step=h, z_max=float(g / math.sqrt(v_tail)), cumulative=cumulative, blocks=nb)
