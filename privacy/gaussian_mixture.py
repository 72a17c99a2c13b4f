"""A sampled Gaussian round whose strength μ is random and revealed, with its law known only from a Monte Carlo
sample: the analog Gaussian uplink seen by a base station that keeps every antenna (model §5.2, "A sampled T2
bound") and analog Gaussian with imperfect CSI (model §5.1, "Imperfect CSI"; the event :class:`GaussianMixtureRound`).

Round t releases client k's update through a Gaussian mechanism of strength μ_t (sensitivity over noise std) that
depends on data-independent randomness the observer sees (the channels), and client k takes part with probability
q (sampling without replacement, replace-one). Given μ_t the round is the sampled Gaussian's symmetric pair
(:mod:`privacy.pld_wor`); μ_t is independent of the data, so the round's PLD is the mixture over its law, and the
rounds, independent and alike, compose it T times.

The law of μ is not known in closed form; it is estimated from m independent draws μ_1 … μ_m and made an upper bound
by :func:`band_law`: every draw is rounded up onto a geometric grid of panels of ratio :data:`PANEL_RATIO` down to
:data:`PANEL_FLOOR`·μ_max (pessimistic; μ = 0 is loss 0), and at each panel edge the exceedance probability is
bounded by a one-sided Clopper–Pearson limit, a union bound over the edges, so that with probability ≥ 1 − β over
the draws the band law is stochastically larger than the true one. A larger μ is a worse Gaussian and the sampled pair
is monotone in μ, so coupling μ ≤ μ⁺ and degrading shows that the mixture over the band law dominates the round: the
ε computed from it holds with confidence 1 − β over the simulation. (A DKW band, used until 7 December, moves its
margin η = √(ln(1/β)/2m) to μ_max whatever the tail; the Clopper–Pearson band costs ≈ ln((J + 1)/β)/m where the
tail is empty.)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from privacy.events import PrivacyEvent
from privacy.pld import DEFAULT_DISCRETIZATION, _check_grid as check_grid, mixture_pmf, self_compose

__all__ = ["PANEL_RATIO", "band_law", "envelope_band_law", "exceedances", "panel_edges", "tail_band_law",
           "tail_thresholds", "sampled_gaussian_mixture_epsilon", "GaussianMixtureRound"]

#: the ratio of consecutive μ panels (every draw is rounded up to its panel's upper edge)
PANEL_RATIO = 1.01
#: the lowest panel, relative to the largest μ (smaller positive draws are rounded up to it)
PANEL_FLOOR = 1e-3
#: J: the lowest panel is PANEL_RATIO^{−J} of the largest, the largest power of the ratio above PANEL_FLOOR
J_MAX = int(math.floor(math.log(1.0 / PANEL_FLOOR) / math.log(PANEL_RATIO)))
#: the absolute μ grid ratio and the floor (relative to the largest μ) of the sampled Rényi curve's panels
RDP_RATIO, RDP_FLOOR = 1.02, 0.05


@functools.lru_cache(maxsize=4096)
def _wor_curve(j: int, rate: float, orders: tuple) -> np.ndarray:
    """The without-replacement sampled Gaussian's Rényi curve at μ = RDP_RATIO^j (sensitivity 1, σ = 1/μ)."""
    from privacy.events import GaussianRound
    from privacy.sampled_gaussian import gaussian_round_sampled_rdp

    curve = gaussian_round_sampled_rdp(np.asarray(orders), GaussianRound(noise_std=RDP_RATIO ** (-j), sensitivity=1.0),
                                       scheme="without-replacement", rate=rate)
    curve.setflags(write=False)
    return curve


def panel_edges(upper: float) -> np.ndarray:
    """The panel edges upper·r^{−j}, j = J … 0, ascending (r = :data:`PANEL_RATIO`, down to :data:`PANEL_FLOOR`)."""
    return float(upper) * PANEL_RATIO ** (-np.arange(J_MAX, -1, -1, dtype=np.float64))


def exceedances(draws, *, upper: float) -> np.ndarray:
    """#draws > t_i [J + 1] at the thresholds of :func:`band_law` (0 and every panel edge below ``upper``), after
    checking that the draws are finite, ≥ 0 and bounded by ``upper``."""
    x = np.sort(np.asarray(draws, dtype=np.float64).ravel())
    if x.size == 0 or not np.all(np.isfinite(x)) or x[0] < 0.0:
        raise ValueError("draws must be a non-empty array of finite values ≥ 0")
    if not (math.isfinite(upper) and upper > 0.0 and upper >= x[-1]):
        raise ValueError(f"upper = {upper!r} must be finite, > 0 and bound every draw (largest {x[-1]:.6g})")
    thresholds = np.concatenate([[0.0], panel_edges(upper)[:-1]])  # mass above t_i rounds up to panel i or higher
    return x.size - np.searchsorted(x, thresholds, side="right")


def band_law(draws, *, upper: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights) on the μ panels (module docstring) of a law stochastically larger than the draws' true law
    rounded up onto the panels, with probability ≥ 1 − ``beta`` over the draws: at each of the J + 1 thresholds t_i
    (0 and every panel edge below ``upper``) the exceedance probability p_i = P(μ > t_i) is bounded by the one-sided
    Clopper–Pearson upper limit U_i of its count at level β/(J + 1) (a union bound over the thresholds), made
    non-increasing (p_i ≤ p_{i−1} ≤ U_{i−1}); the law puts mass U_i − U_{i+1} on panel i. An empty tail costs
    ≈ ln((J+1)/β)/m of mass at ``upper``, which must bound every value (not only every draw)."""
    x = np.asarray(draws, dtype=np.float64)
    return envelope_band_law([exceedances(x, upper=upper)], [x.size], upper=upper, beta=beta)


def envelope_band_law(counts, sizes, *, upper: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights) of one law stochastically larger than each of n laws rounded up onto the panels, with
    probability ≥ 1 − ``beta`` over all their draws: law l has ``sizes[l]`` draws and exceedance counts ``counts[l]``
    (:func:`exceedances`); at each threshold the bound is the largest of the n Clopper–Pearson limits, each at level
    β/(n·(J + 1)) (a union bound over laws and thresholds), then as :func:`band_law` (which is the case n = 1). Its
    exceedance function bounds every law's, so it dominates each (model §5.1, "In a cell")."""
    from scipy.stats import beta as beta_law

    counts = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    m = np.asarray(sizes, dtype=np.int64).reshape(-1, 1)
    edges = panel_edges(upper)
    if counts.shape != (m.shape[0], edges.size) or m.shape[0] < 1 or np.any(m < 1) or np.any(counts < 0) \
            or np.any(counts > m):
        raise ValueError(f"counts must be [n, {edges.size}] exceedance counts of n ≥ 1 laws with ≥ 1 draw each")
    if not 0.0 < float(beta) < 1.0:
        raise ValueError(f"beta must be in (0, 1) (got {beta!r})")
    level = float(beta) / counts.size
    ucb = np.where(counts >= m, 1.0, beta_law.ppf(1.0 - level, counts + 1, np.maximum(m - counts, 1))).max(axis=0)
    ucb = np.minimum.accumulate(np.minimum(ucb, 1.0))
    mass = ucb - np.concatenate([ucb[1:], [0.0]])  # on edges[i]; 1 − U_0 on μ = 0
    values = np.concatenate([[0.0], edges])
    weights = np.concatenate([[1.0 - ucb[0]], mass])
    keep = weights > 0.0
    return values[keep], weights[keep] / weights[keep].sum()


def tail_thresholds(upper: float, *, span: float = 1e6) -> np.ndarray:
    """Thresholds for :func:`tail_band_law`: 0 and the geometric edges ``upper``·r^{−j} (r = :data:`PANEL_RATIO`) from
    ``upper``/``span`` up to ``upper``, ascending."""
    J = int(math.ceil(math.log(float(span)) / math.log(PANEL_RATIO)))
    return np.concatenate([[0.0], float(upper) * PANEL_RATIO ** (-np.arange(J, -1, -1, dtype=np.float64))])


def tail_band_law(counts, size: int, *, thresholds, beta: float, bound=None) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights) of a law stochastically larger than an *unbounded* law rounded up onto the panels
    ``thresholds``[1:], with probability ≥ 1 − ``beta`` over its ``size`` i.i.d. draws, from the draws' exceedance
    counts at ``thresholds`` (ascending, from 0, fixed before the draws): at each threshold P(μ > t) is bounded by the
    one-sided Clopper–Pearson limit at level β/(number of thresholds) (a union bound), or by ``bound`` [same length]
    (an exceedance bound that holds with certainty, e.g. from a dominating variable) where that is smaller; made
    non-increasing; mass between consecutive thresholds on the upper one, the mass above the last at μ = ∞ (the
    last value). A Gaussian of infinite strength releases the update itself, which dominates every other
    (model §5.1, "FLORAS's ε with offsets")."""
    from scipy.stats import beta as beta_law

    t = np.asarray(thresholds, dtype=np.float64).ravel()
    c = np.asarray(counts, dtype=np.int64).ravel()
    m = int(size)
    if t.size < 2 or t[0] != 0.0 or np.any(np.diff(t) <= 0.0) or not np.isfinite(t[-1]):
        raise ValueError("thresholds must be ascending finite values starting at 0")
    if c.shape != t.shape or m < 1 or np.any(c < 0) or np.any(c > m) or np.any(np.diff(c) > 0):
        raise ValueError(f"counts must be {t.size} non-increasing exceedance counts of size ≥ 1 draws")
    if not 0.0 < float(beta) < 1.0:
        raise ValueError(f"beta must be in (0, 1) (got {beta!r})")
    level = float(beta) / t.size
    ucb = np.where(c >= m, 1.0, beta_law.ppf(1.0 - level, c + 1, np.maximum(m - c, 1)))
    if bound is not None:
        b = np.asarray(bound, dtype=np.float64).ravel()
        if b.shape != t.shape or np.any(~(b >= 0.0)):
            raise ValueError(f"bound must hold {t.size} exceedance probabilities ≥ 0")
        ucb = np.minimum(ucb, b)
    ucb = np.minimum.accumulate(np.minimum(ucb, 1.0))
    mass = ucb - np.concatenate([ucb[1:], [0.0]])  # above t_i up to t_{i+1}: on t_{i+1}; above the last: ∞
    values = np.concatenate([t[1:], [math.inf]])
    values, weights = np.concatenate([[0.0], values]), np.concatenate([[1.0 - ucb[0]], mass])
    keep = weights > 0.0
    return values[keep], weights[keep] / weights[keep].sum()


def _panels(values: np.ndarray, weights: np.ndarray, mu_max: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(panel μ's, their weights, weight at μ = 0): each positive value rounded up to the grid μ_max·r^{−j}."""
    zero = float(weights[values <= 0.0].sum())
    pos = values > 0.0
    j = np.floor(np.log(mu_max / values[pos]) / math.log(PANEL_RATIO) + 1e-12).astype(np.int64)  # μ ≤ μ_max·r^{−j}
    j = np.minimum(j, J_MAX)
    mus = mu_max * PANEL_RATIO ** (-j.astype(np.float64))
    uniq, inv = np.unique(mus, return_inverse=True)
    return uniq, np.bincount(inv, weights=weights[pos], minlength=uniq.size), zero


def sampled_gaussian_mixture_epsilon(values, weights, *, rate: float, rounds: int, delta: float,
                                     discretization: float = DEFAULT_DISCRETIZATION) -> float:
    """ε at ``delta`` after ``rounds`` rounds of the without-replacement sampled Gaussian (rate K/M = ``rate``,
    replace-one) whose strength μ follows the law (``values`` ≥ 0, ``weights``), revealed to the observer each round;
    the PLD mixture of :mod:`privacy.pld_wor`'s pairs on a μ grid rounded up (module docstring)."""
    from dp_accounting.pld import privacy_loss_distribution as _pld

    q, T = float(rate), int(rounds)
    if not 0.0 < q < 1.0 or T < 1 or not 0.0 < float(delta) < 1.0:
        raise ValueError(f"rate in (0, 1), rounds ≥ 1 and delta in (0, 1) (got {rate!r}, {rounds!r}, {delta!r})")
    event = GaussianMixtureRound.panelled(values, weights)
    if event.strengths[-1] == 0.0:
        return 0.0
    pld = _pld.PrivacyLossDistribution(event.wor_pmf(rate=q, discretization=float(discretization)))
    return max(float(self_compose(pld, T).get_epsilon_for_delta(float(delta))), 0.0)


@dataclass(frozen=True)
class GaussianMixtureRound(PrivacyEvent):
    """A Gaussian release whose strength μ = S/σ (sensitivity over noise std) is random, independent of the data and
    revealed to the observer: μ = ``strengths[i]`` with probability ``weights[i]`` (ascending strengths, weights
    summing to 1; 0 is a round that does not depend on the client). Used for analog Gaussian with imperfect CSI
    (model §5.1, "Imperfect CSI"; the law from :mod:`phy.csi_law`) and for the sampled T2 figure of model §5.2.

    With μ revealed the joint release (μ, output) has, for every neighbouring pair,

        ε(α) = ln Σ_i w_i·e^{(α−1)·α·μ_i²/2} / (α − 1)      (Rényi; exact for the revealed mixture)

    and the PLD Σ_i w_i·PLD(μ_i) (unsampled: the Gaussian pair; without replacement at rate q: the symmetric pair of
    :mod:`privacy.pld_wor` given μ, valid when the observer's μ does not tell whether the client was sampled, model
    §5.2 "A sampled T2 bound"). Poisson sampling has no construction here.

    ``blocks`` = B > 1 (model §5.1, "Per-block estimates"): the update is spread over B blocks by the neighbouring
    pair, each block's strength with this law (any dependence), so the round's strength² is Σ_m w_m·μ_m², Σ w_m ≤ 1.
    The unsampled Rényi curve above still bounds it (e^{λμ²} is convex: Jensen); sampled without replacement, the
    curve of :func:`privacy.split_mixture.split_sampled_rdp` (Theorem 27's branches, each convex in μ²); the PLD, whose
    hockey-stick is not convex in μ², takes the largest block's strength, :meth:`largest` (a union bound).
    """

    strengths: tuple
    weights: tuple
    blocks: int = 1

    def __post_init__(self):
        v, w = np.asarray(self.strengths, dtype=np.float64), np.asarray(self.weights, dtype=np.float64)
        if v.ndim != 1 or v.shape != w.shape or v.size == 0 or not np.all(np.isfinite(v[:-1])) or np.isnan(v[-1]) \
                or np.any(v < 0.0) or np.any(np.diff(v) <= 0.0) or np.any(w < 0.0) or abs(float(w.sum()) - 1.0) > 1e-9:
            raise ValueError("strengths (≥ 0, strictly ascending, finite but for a last +∞) and weights (≥ 0, summing "
                             "to 1) must be non-empty sequences of one length")
        if isinstance(self.blocks, bool) or not isinstance(self.blocks, (int, np.integer)) or self.blocks < 1:
            raise ValueError(f"blocks must be an integer ≥ 1 (got {self.blocks!r})")

    def largest(self) -> "GaussianMixtureRound":
        """The law of max_m μ_m over the B blocks, whatever their dependence: P(max > t) ≤ min(1, B·P(μ > t)) at every
        strength (a union bound; the event itself when B = 1)."""
        if self.blocks == 1:
            return self
        w = np.asarray(self.weights)
        above = np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]])  # P(μ > strengths[i])
        exceed = np.minimum(1.0, self.blocks * above)
        mass = np.concatenate([[1.0 - exceed[0]], exceed[:-1] - exceed[1:]])
        keep = mass > 0.0
        return GaussianMixtureRound(tuple(np.asarray(self.strengths)[keep].tolist()),
                                    tuple((mass[keep] / mass[keep].sum()).tolist()))

    @classmethod
    def panelled(cls, values, weights) -> "GaussianMixtureRound":
        """The event of a law (``values`` ≥ 0, ``weights`` ≥ 0) rounded up onto the μ panels of the module docstring
        (ratio :data:`PANEL_RATIO` down to :data:`PANEL_FLOOR` of the largest; μ = 0 kept): it dominates the law."""
        v, w = np.asarray(values, dtype=np.float64).ravel(), np.asarray(weights, dtype=np.float64).ravel()
        if v.shape != w.shape or v.size == 0 or np.any(v < 0.0) or not np.all(np.isfinite(v)) or np.any(w < 0.0) \
                or not w.sum() > 0.0:
            raise ValueError("values (finite, ≥ 0) and weights (≥ 0, not all 0) must be non-empty arrays of one shape")
        w = w / w.sum()
        mu_max = float(v.max())
        if mu_max == 0.0:
            return cls((0.0,), (1.0,))
        mus, pw, zero = _panels(v, w, mu_max)
        keep = pw > 0.0
        strengths, panel_w = ([0.0] if zero > 0.0 else []) + list(mus[keep]), ([zero] if zero > 0.0 else []) + list(pw[keep])
        total = float(np.sum(panel_w))
        return cls(tuple(float(x) for x in strengths), tuple(float(x) / total for x in panel_w))

    @property
    def upper(self) -> float:
        """The largest strength (every round is at most this Gaussian; ∞ where the law has an infinite tail)."""
        return float(self.strengths[-1])

    @property
    def infinite_mass(self) -> float:
        """P(μ = ∞): the rounds that release the update without noise (:func:`tail_band_law`)."""
        return float(self.weights[-1]) if math.isinf(self.strengths[-1]) else 0.0

    @property
    def finite_upper(self) -> float:
        """The largest finite strength (0 when there is none)."""
        finite = [s for s in self.strengths if math.isfinite(s)]
        return float(finite[-1]) if finite else 0.0

    def rdp(self, orders):
        from privacy.rdp import check_orders

        a = check_orders(orders)
        if self.infinite_mass > 0.0:  # E[e^{(α−1)αμ²/2}] = ∞ for every α > 1
            return np.full_like(a, math.inf)
        mu, w = np.asarray(self.strengths), np.asarray(self.weights)
        mu, w = mu[w > 0.0], w[w > 0.0]
        out = np.empty_like(a)
        finite = np.isfinite(a)
        x = np.log(w)[None, :] + ((a[finite] - 1.0) * a[finite])[:, None] * (mu * mu / 2.0)[None, :]
        top = x.max(axis=1)
        out[finite] = (top + np.log(np.exp(x - top[:, None]).sum(axis=1))) / (a[finite] - 1.0)
        out[~finite] = math.inf if mu.max() > 0.0 else 0.0
        return np.maximum(out, 0.0)

    def eps_inf(self):
        return 0.0 if self.upper == 0.0 else math.inf

    def sampled_rdp(self, orders, *, scheme, rate):
        """Without replacement: ln Σ_j w_j·e^{(α−1)·ε_j(α)}/(α − 1) with ε_j the sampled Gaussian's curve
        (:func:`privacy.sampled_gaussian.gaussian_round_sampled_rdp`) at μ rounded up onto the absolute grid
        :data:`RDP_RATIO`^j, strengths below :data:`RDP_FLOOR`·μ_max raised to it (pessimistic; the curves are cached
        across laws, so a calibration's bisection reuses them). None under Poisson (the generic bound alone)."""
        if scheme != "without-replacement" or self.upper == 0.0:
            return None
        a = np.asarray(orders, dtype=np.float64)
        if self.infinite_mass > 0.0:  # the sampled round's curve is ∞ too (its (1 − q)·… + q·∞ term)
            return np.full_like(a, math.inf)
        mu, w = np.asarray(self.strengths), np.asarray(self.weights)
        pos = (mu > 0.0) & (w > 0.0)
        zero = float(w[~pos].sum())
        lifted = np.maximum(mu[pos], RDP_FLOOR * self.upper)
        j = np.ceil(np.log(lifted) / math.log(RDP_RATIO) - 1e-12).astype(np.int64)
        grid, inv = np.unique(j, return_inverse=True)
        gw = np.bincount(inv, weights=w[pos], minlength=grid.size)
        if self.blocks > 1:  # the update split over blocks: the branches' expectations (privacy.split_mixture)
            from privacy.split_mixture import split_sampled_rdp

            return split_sampled_rdp(np.concatenate([[0.0], RDP_RATIO ** grid.astype(np.float64)]),
                                     np.concatenate([[zero], gw]), a, rate=float(rate))
        curves = np.stack([_wor_curve(int(k), float(rate), tuple(a.tolist())) for k in grid])  # [panels, orders]
        out = np.empty_like(a)
        for i, alpha in enumerate(a):
            if not math.isfinite(alpha) or np.any(~np.isfinite(curves[:, i])):
                out[i] = math.inf
                continue
            x = np.concatenate([[math.log(zero)] if zero > 0.0 else [], np.log(gw) + (alpha - 1.0) * curves[:, i]])
            top = float(x.max())
            out[i] = (top + math.log(float(np.exp(x - top).sum()))) / (alpha - 1.0)
        return np.maximum(out, 0.0)

    def pld(self, *, rate, discretization):
        from dp_accounting.pld import privacy_loss_distribution as _pld

        from privacy.pld import NO_PLD, _unsupported

        if rate != 1.0:
            raise _unsupported(self, NO_PLD + " (Poisson sampling of a revealed Gaussian mixture is not derived)")
        return _pld.PrivacyLossDistribution(self.largest()._pmf(float(discretization), None))

    def wor_pld(self, *, rate, discretization):
        """The PLD sampled without replacement at K/M = ``rate`` < 1 (replace-one; class docstring)."""
        from dp_accounting.pld import privacy_loss_distribution as _pld

        return _pld.PrivacyLossDistribution(self.wor_pmf(rate=float(rate), discretization=float(discretization)))

    def wor_pmf(self, *, rate: float, discretization: float):
        return self.largest()._pmf(float(discretization), float(rate))

    def _pmf(self, h: float, rate: float | None):
        """Σ_i w_i·PMF(μ_i) on one grid: the Gaussian pair (``rate`` None) or :mod:`privacy.pld_wor`'s sampled pair."""
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution as _pld

        from privacy.pld import _PESSIMISTIC
        from privacy.pld_wor import wor_gaussian_pmf

        pess = _PESSIMISTIC.get()
        if self.upper == 0.0:
            return pld_pmf.DensePLDPmf(h, 0, np.ones(1), 0.0, pess)
        if self.finite_upper > 0.0:
            check_grid(1.0 / self.finite_upper, 1.0, 1.0 if rate is None else rate, h, symmetric=rate is not None)
        parts = []
        for w, mu in zip(self.weights, self.strengths):
            if w == 0.0:
                continue
            if math.isinf(mu):  # the update itself: infinite loss when the client is sampled, else 0
                q = 1.0 if rate is None else rate
                parts.append((w, pld_pmf.DensePLDPmf(h, 0, np.array([1.0 - q]), q, pess)))
            elif mu == 0.0:  # the round does not depend on the client: loss 0
                parts.append((w, pld_pmf.DensePLDPmf(h, 0, np.ones(1), 0.0, pess)))
            elif rate is None:
                g = _pld.from_gaussian_mechanism(1.0 / mu, sensitivity=1.0, pessimistic_estimate=pess,
                                                 use_connect_dots=pess, value_discretization_interval=h)
                pmf = g._pmf_remove
                parts.append((w, pmf if isinstance(pmf, pld_pmf.DensePLDPmf) else pmf.to_dense_pmf()))
            else:
                parts.append((w, wor_gaussian_pmf(1.0 / mu, sensitivity=1.0, rate=rate, discretization=h,
                                                  pessimistic=pess)))
        return mixture_pmf(parts, discretization=h, pessimistic=pess)
